//! slurmctld-rs: the controller daemon, with the stock slurmctld's command line.

use clap::{ArgAction, Parser};
use slurm_rpc::daemon;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "slurmctld-rs",
    version,
    about = "Slurm controller daemon (Rust)"
)]
struct Args {
    /// Clear all job, step and reservation state; start fresh.
    #[arg(short = 'c')]
    clear_state: bool,
    /// Run in the foreground, logging to stderr.
    #[arg(short = 'D')]
    foreground: bool,
    /// Read this slurm.conf instead of SLURM_CONF or the default.
    #[arg(short = 'f', value_name = "file")]
    conf: Option<PathBuf>,
    /// Ignore errors found while reading saved state.
    #[arg(short = 'i')]
    ignore_errors: bool,
    /// Write the log here instead of SlurmctldLogFile.
    #[arg(short = 'L', value_name = "file")]
    logfile: Option<PathBuf>,
    /// Scheduling priority (nice value) of the daemon.
    #[arg(short = 'n', value_name = "value")]
    nice: Option<i32>,
    /// Run as a backup controller.
    #[arg(short = 'r')]
    backup: bool,
    /// Recover full state (the default; kept for compatibility).
    #[arg(short = 'R')]
    recover: bool,
    /// Change working directory to SlurmctldLogFile's directory.
    #[arg(short = 's')]
    chdir: bool,
    /// Notify systemd when ready.
    #[arg(long)]
    systemd: bool,
    /// More verbose logging; repeat for more.
    #[arg(short = 'v', action = ArgAction::Count)]
    verbose: u8,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let path = slurm_conf::locate_config(args.conf.as_deref());
    let conf = match slurm_conf::SlurmConf::from_file(&path) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("slurmctld-rs: {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    };
    if !args.foreground {
        // Before any thread exists: fork is only safe here.
        if let Err(e) = nix::unistd::daemon(args.chdir, false) {
            eprintln!("slurmctld-rs: cannot daemonize: {e}");
            return ExitCode::FAILURE;
        }
    }
    let logfile = args
        .logfile
        .clone()
        .or_else(|| conf.slurmctld_log_file.as_ref().map(PathBuf::from));
    let level = daemon::log_level(conf.slurmctld_debug, args.verbose);
    if let Err(e) = daemon::init_logging(
        logfile.as_deref(),
        level,
        args.foreground,
        "SLURMCTLD_RS_LOG",
    ) {
        eprintln!("slurmctld-rs: {e}");
        return ExitCode::FAILURE;
    }
    if let Some(n) = args.nice {
        // SAFETY: plain libc call with no pointers.
        unsafe { libc::nice(n) };
    }
    let _pid = match daemon::PidFile::create(&conf.slurmctld_pid_file) {
        Ok(p) => Some(p),
        Err(e) => {
            tracing::warn!("cannot write pid file {}: {e}", conf.slurmctld_pid_file);
            None
        }
    };
    // Every thread that allocates gets a glibc arena of its own (up to 8 per
    // CPU), and large listings are built on blocking-pool threads: memory
    // freed there stays in those arenas. Two arenas bound that.
    #[cfg(target_env = "gnu")]
    // SAFETY: plain libc call with no pointers, before any thread starts.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!("cannot start runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let opts = slurmctld::daemon::RunOptions {
        clear_state: args.clear_state,
        ignore_errors: args.ignore_errors,
        ..Default::default()
    };
    match rt.block_on(slurmctld::daemon::run_loaded(path, conf, None, opts)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("fatal: {e}");
            eprintln!("slurmctld-rs: {e}");
            ExitCode::FAILURE
        }
    }
}
