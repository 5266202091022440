//! slurmdbd-rs: the accounting daemon, with stock slurmdbd's command line.

use clap::{ArgAction, Parser};
use slurm_rpc::daemon;
use slurmdbd::daemon as start;
use std::path::Path;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "slurmdbd-rs",
    version,
    about = "Slurm accounting daemon (Rust)"
)]
struct Args {
    /// Run in the foreground, logging to stderr.
    #[arg(short = 'D')]
    foreground: bool,
    /// Scheduling priority (nice value) of the daemon.
    #[arg(short = 'n', value_name = "value")]
    nice: Option<i32>,
    /// Reset the lft/rgt association values, for these clusters if given.
    #[arg(short = 'R', value_name = "cluster list", num_args = 0..=1)]
    reset_lft_rgt: Option<Option<String>>,
    /// Change working directory to LogFile's directory.
    #[arg(short = 's')]
    chdir: bool,
    /// Only report whether the database schema needs an upgrade.
    #[arg(short = 'u')]
    check_db_version: bool,
    /// More verbose logging; repeat for more.
    #[arg(short = 'v', action = ArgAction::Count)]
    verbose: u8,
}

fn fail(e: impl std::fmt::Display) -> ExitCode {
    eprintln!("slurmdbd-rs: {e}");
    tracing::error!("{e}");
    ExitCode::FAILURE
}

fn main() -> ExitCode {
    let args = Args::parse();
    // Stock reads slurmdbd.conf beside slurm.conf.
    let path = slurm_conf::extra_conf_path(&slurm_conf::locate_config(None), "slurmdbd.conf");
    let (conf, user) = match start::load(&path) {
        Ok(x) => x,
        Err(e) => return fail(format_args!("{}: {e}", path.display())),
    };
    if args.check_db_version {
        return fail("-u: no database schema is kept yet");
    }
    let (short, long) = start::host_names();
    if let Err(e) = start::check_host(&conf, &short, &long) {
        return fail(e);
    }
    if !args.foreground {
        // Before any thread exists: fork is only safe here.
        if let Err(e) = nix::unistd::daemon(true, false) {
            return fail(format_args!("cannot daemonize: {e}"));
        }
    }
    let level = daemon::log_level(conf.debug_level, args.verbose);
    let log_file = conf.log_file.as_deref().map(Path::new);
    if let Err(e) = daemon::init_logging(log_file, level, args.foreground, "SLURMDBD_RS_LOG") {
        return fail(e);
    }
    for w in &conf.warnings {
        tracing::warn!("{w}");
    }
    if conf.purge.any() {
        tracing::warn!("Purge*/Archive* are set but purging is not implemented: nothing is purged");
    }
    if args.reset_lft_rgt.is_some() {
        tracing::warn!("-R: there are no associations to reset yet");
    }
    if let Some(n) = args.nice {
        // SAFETY: plain libc call with no pointers.
        unsafe { nix::libc::nice(n) };
    }
    if !args.foreground || args.chdir {
        set_work_dir(log_file);
    }
    let _pid = match daemon::PidFile::create(&conf.pid_file) {
        Ok(p) => Some(p),
        Err(e) => {
            tracing::warn!("cannot write pid file {}: {e}", conf.pid_file);
            None
        }
    };
    let listener = match start::bind(conf.dbd_port) {
        Ok(l) => l,
        Err(e) => return fail(e),
    };
    if let Err(e) = start::drop_privileges(&user) {
        return fail(e);
    }
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => return fail(format_args!("cannot start runtime: {e}")),
    };
    let ctx = start::auth_ctx(&conf, &user);
    let conn = start::conn_conf(&conf);
    // StorageUser defaults to whoever runs the daemon: SlurmUser by now.
    let login = nix::unistd::User::from_uid(nix::unistd::geteuid())
        .ok()
        .flatten()
        .map_or_else(|| user.name.clone(), |u| u.name);
    let opts = slurmdbd::db::DbOpts::from_conf(&conf, &login);
    let db = match rt.block_on(async {
        let db = slurmdbd::db::Db::open(opts).await?;
        slurmdbd::db::schema::create(&db).await?;
        Ok::<_, slurmdbd::db::DbError>(db)
    }) {
        Ok(db) => db,
        Err(e) => return fail(format_args!("database {}: {e}", conf.storage_loc)),
    };
    tracing::info!("slurmdbd-rs listening on port {}", conf.dbd_port);
    let served = rt.block_on(async move {
        use tokio::signal::unix::{signal, SignalKind};
        let l = tokio::net::TcpListener::from_std(listener)?;
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        tokio::select! {
            r = slurmdbd::server::serve(l, ctx, conn, Some(db)) => r,
            _ = term.recv() => Ok(()),
            _ = int.recv() => Ok(()),
        }
    });
    tracing::info!("slurmdbd-rs stopping");
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(e),
    }
}

/// LogFile's directory, else /var/tmp, as stock's working directory.
fn set_work_dir(log_file: Option<&Path>) {
    let dir = log_file
        .and_then(Path::parent)
        .filter(|d| d.is_dir())
        .unwrap_or(Path::new("/var/tmp"));
    if let Err(e) = std::env::set_current_dir(dir) {
        tracing::warn!("cannot change to {}: {e}", dir.display());
    }
}
