//! slurmd-rs: the node daemon, with the stock slurmd's command line.

use clap::{ArgAction, Parser};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use slurm_conf::{ConfError, SlurmConf};
use slurm_rpc::daemon;
use slurm_wire::ProtocolVersion;
use slurmd::ctld::Controller;
use slurmd::node::NodeError;
use slurmd::shared::{Daemon, Settings};
use slurmd::stepd::HierarchyError;
use slurmd::{hw, node};

#[derive(Parser, Debug)]
#[command(name = "slurmd-rs", version, about = "Slurm node daemon (Rust)")]
struct Args {
    /// Authentication options (overrides AuthInfo).
    #[arg(long)]
    authinfo: Option<String>,
    /// Report the daemon start time as the node boot time.
    #[arg(short = 'b')]
    boot_time: bool,
    /// Clear saved state.
    #[arg(short = 'c')]
    clear_state: bool,
    /// Print the node's hardware configuration and exit.
    #[arg(short = 'C')]
    print_config: bool,
    /// Node parameters for a dynamic node (as on a NodeName line).
    #[arg(long = "conf", value_name = "node parameters")]
    node_conf: Option<String>,
    /// Fetch the configuration from this controller (configless).
    #[arg(long = "conf-server", value_name = "host[:port]")]
    conf_server: Option<String>,
    /// Path of the step daemon binary.
    #[arg(short = 'd', value_name = "file")]
    stepd: Option<PathBuf>,
    /// Run in the foreground, logging to stderr.
    #[arg(short = 'D')]
    foreground: bool,
    /// Arbitrary string stored as the node's Extra field.
    #[arg(long)]
    extra: Option<String>,
    /// Read this slurm.conf instead of SLURM_CONF or the default.
    #[arg(short = 'f', value_name = "file")]
    conf: Option<PathBuf>,
    /// Dynamic future node, optionally with a feature.
    #[arg(short = 'F', value_name = "feature", num_args = 0..=1, require_equals = false)]
    future: Option<Option<String>>,
    /// Print the node's GRES configuration and exit.
    #[arg(short = 'G')]
    print_gres: bool,
    /// Cloud instance id.
    #[arg(long)]
    instance_id: Option<String>,
    /// Cloud instance type.
    #[arg(long)]
    instance_type: Option<String>,
    /// Write the log here instead of SlurmdLogFile.
    #[arg(short = 'L', value_name = "file")]
    logfile: Option<PathBuf>,
    /// Lock the daemon's memory pages.
    #[arg(short = 'M')]
    mlock: bool,
    /// Scheduling priority (nice value) of the daemon.
    #[arg(short = 'n', value_name = "value")]
    nice: Option<i32>,
    /// Run as this node name (several daemons per host).
    #[arg(short = 'N', value_name = "nodename")]
    node_name: Option<String>,
    /// Change working directory to SlurmdLogFile's directory.
    #[arg(short = 's')]
    chdir: bool,
    /// Notify systemd when ready.
    #[arg(long)]
    systemd: bool,
    /// More verbose logging; repeat for more.
    #[arg(short = 'v', action = ArgAction::Count)]
    verbose: u8,
    /// Register as a dynamic node.
    #[arg(short = 'Z')]
    dynamic: bool,
    /// Speak this protocol release (e.g. 24.11) to slurmctld instead of
    /// probing for the newest one it accepts.
    #[arg(long = "ctld-protocol", value_name = "release")]
    ctld_protocol: Option<String>,
    /// Top directory of the job cgroup tree (default "slurm"; another name
    /// lets several daemons share a host's cgroups, as tests do).
    #[arg(long = "cgroup-root", value_name = "name", hide = true)]
    cgroup_root: Option<String>,
    /// Internal: run as the supervisor of the batch job whose state is in
    /// this directory.
    #[arg(long = "stepd", value_name = "dir", hide = true)]
    stepd_dir: Option<PathBuf>,
}

/// Why the daemon cannot start (or stopped serving).
#[derive(Debug, thiserror::Error)]
enum FatalError {
    /// slurm.conf or gres.conf.
    #[error("{}: {source}", .path.display())]
    Conf {
        path: PathBuf,
        source: Box<ConfError>,
    },
    /// As slurm_rpc's init_logging words it.
    #[error("{0}")]
    Logging(String),
    #[error("--ctld-protocol {0}: not a supported release")]
    Protocol(String),
    #[error(transparent)]
    Node(#[from] NodeError),
    #[error("SlurmUser {0} does not exist")]
    NoSlurmUser(String),
    #[error("SlurmdSpoolDir {dir}: {source}")]
    SpoolDir { dir: String, source: std::io::Error },
    #[error(transparent)]
    Cgroups(#[from] HierarchyError),
    #[error("tokio: {0}")]
    Runtime(std::io::Error),
    #[error("cannot listen on port {port}: {source}")]
    Listen { port: u16, source: std::io::Error },
    #[error("serve: {0}")]
    Serve(std::io::Error),
}

impl FatalError {
    fn conf(path: &std::path::Path, e: ConfError) -> Self {
        FatalError::Conf {
            path: path.to_path_buf(),
            source: Box::new(e),
        }
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(dir) = &args.stepd_dir {
        return slurmd::stepd::main(dir);
    }
    if args.print_config {
        let hw = hw::detect();
        print!(
            "{}",
            hw::print_config_line(&hw::short_hostname(), &hw, hw::uptime())
        );
        return ExitCode::SUCCESS;
    }
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("slurmd-rs: fatal: {e}");
            tracing::error!("fatal: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<(), FatalError> {
    let conf_path = slurm_conf::locate_config(args.conf.as_deref());
    let conf = SlurmConf::from_file(&conf_path).map_err(|e| FatalError::conf(&conf_path, e))?;
    let pinned = match args.ctld_protocol.as_deref() {
        None => None,
        Some(r) => Some(
            ProtocolVersion::from_release(r).ok_or_else(|| FatalError::Protocol(r.to_string()))?,
        ),
    };
    let host = hw::short_hostname();
    let detected = hw::detect();
    let tmp_disk = hw::tmp_disk(&conf.tmp_fs);
    let node = node::resolve(&conf, args.node_name.as_deref(), &host, detected, tmp_disk)?;
    // The node name is known only now: SlurmdLogFile may name it (`%n`),
    // so that several slurmd-rs -N on one host log apart. -L is taken as is.
    let logfile = args.logfile.clone().or_else(|| {
        conf.slurmd_log_file
            .as_ref()
            .map(|f| PathBuf::from(node::expand_node_path(f, &node.name, &host)))
    });
    let level = daemon::log_level(conf.slurmd_debug, args.verbose);
    daemon::init_logging(logfile.as_deref(), level, args.foreground, "SLURMD_RS_LOG")
        .map_err(FatalError::Logging)?;
    for w in &conf.warnings {
        tracing::warn!("slurm.conf: {w}");
    }
    let slurm_user_uid = nix::unistd::User::from_name(&conf.slurm_user)
        .ok()
        .flatten()
        .map(|u| u.uid.as_raw())
        .or_else(|| conf.slurm_user.parse().ok())
        .ok_or_else(|| FatalError::NoSlurmUser(conf.slurm_user.clone()))?;
    let auth = daemon::auth_ctx(&conf, slurm_user_uid);
    let hosts = slurmd::ctld::hosts_from_conf(&conf);
    let timeout = Duration::from_secs(u64::from(conf.message_timeout.max(1)));
    let conn_limits = slurm_rpc::daemon::conn_limits(&conf.slurmd_parameters);
    let ctld = Controller::new(auth.clone(), hosts, pinned, timeout);
    let spool_dir = node::expand_node_path(&conf.slurmd_spool_dir, &node.name, &host);
    std::fs::create_dir_all(&spool_dir).map_err(|source| FatalError::SpoolDir {
        dir: spool_dir.clone(),
        source,
    })?;
    let pid_file = node::expand_node_path(&conf.slurmd_pid_file, &node.name, &host);
    let _pid = daemon::PidFile::create(&pid_file)
        .map_err(|e| tracing::warn!("pid file {pid_file}: {e}"))
        .ok();
    let start_time = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    tracing::info!(
        "slurmd-rs {} node {} port {}: CPUs={} Boards={} Sockets={} Cores={} Threads={} Memory={} TmpDisk={}",
        env!("CARGO_PKG_VERSION"),
        node.name,
        node.port,
        node.hw.cpus,
        node.hw.boards,
        node.hw.sockets,
        node.hw.cores_per_socket,
        node.hw.threads_per_core,
        node.hw.real_memory,
        node.tmp_disk
    );
    let gres_path = slurm_conf::extra_conf_path(&conf_path, "gres.conf");
    let gres_conf = if gres_path.exists() {
        Some(
            slurm_conf::GresConf::from_file(&gres_path)
                .map_err(|e| FatalError::conf(&gres_path, e))?,
        )
    } else {
        None
    };
    let cgroup_root = args
        .cgroup_root
        .clone()
        .unwrap_or_else(|| slurmd::cgroup::DEFAULT_ROOT.to_string());
    let (cgroups, cgroup_conf) = match slurmd::stepd::hierarchy(&conf_path, &cgroup_root)? {
        Some((h, c)) => {
            tracing::info!("jobs are contained in cgroup {:?} hierarchies", h.version());
            (Some(h), c)
        }
        None => {
            tracing::info!(
                "no cgroups (CgroupPlugin disabled or none mounted): jobs are tracked by session"
            );
            (None, slurm_conf::CgroupConf::default())
        }
    };
    let gres_files = slurmd::alloc::gres_files(gres_conf.as_ref(), &node.name);
    let gres = slurmd::gres::node_records(
        gres_conf.as_ref(),
        conf.node(&node.name),
        &node.name,
        node.hw.cpus,
    );
    let port = node.port;
    let peers = slurmd::node::peer_addrs(&conf)?;
    let tree_width = conf.tree_width;
    let settings = Settings {
        gres,
        conf_path: conf_path.display().to_string(),
        conf,
        node,
        slurm_user_uid,
        spool_dir,
        start_time,
        gres_files,
        cgroups,
        cgroup_conf,
        cgroup_root,
        log_file: logfile.as_ref().map(|p| p.display().to_string()),
        log_level: level.to_string(),
    };
    let rt = tokio::runtime::Runtime::new().map_err(FatalError::Runtime)?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("0.0.0.0", port))
            .await
            .map_err(|source| FatalError::Listen { port, source })?;
        let d = Daemon::new(settings, ctld, auth.clone());
        d.adopt();
        tokio::spawn(d.clone().register_loop(0));
        let handler = move |req| d.clone().handle(req);
        // A stock controller and srun send to TreeWidth nodes and leave
        // the rest to them.
        let node_count = peers.len();
        let peers = Arc::new(peers);
        let resolve: slurm_rpc::forward::Resolver = Arc::new(move |n| peers.get(n).cloned());
        let forwarder = slurm_rpc::forward::Forwarder::new(resolve, timeout, tree_width)
            .with_max_nodes(node_count);
        let opts = slurm_rpc::ServeOpts {
            timeout,
            forwarder: Some(Arc::new(forwarder)),
        };
        slurm_rpc::serve_limited(listener, auth, opts, conn_limits, handler)
            .await
            .map_err(FatalError::Serve)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io() -> std::io::Error {
        std::io::Error::from_raw_os_error(libc::EADDRINUSE)
    }

    #[test]
    fn fatal_texts() {
        let e = FatalError::Listen {
            port: 6818,
            source: io(),
        };
        assert_eq!(
            e.to_string(),
            format!("cannot listen on port 6818: {}", io())
        );
        let e = FatalError::SpoolDir {
            dir: "/var/spool/slurmd".into(),
            source: io(),
        };
        assert_eq!(
            e.to_string(),
            format!("SlurmdSpoolDir /var/spool/slurmd: {}", io())
        );
        assert_eq!(
            FatalError::Serve(io()).to_string(),
            format!("serve: {}", io())
        );
        assert_eq!(
            FatalError::Runtime(io()).to_string(),
            format!("tokio: {}", io())
        );
        assert_eq!(
            FatalError::Protocol("9.99".into()).to_string(),
            "--ctld-protocol 9.99: not a supported release"
        );
        assert_eq!(
            FatalError::NoSlurmUser("slurm".into()).to_string(),
            "SlurmUser slurm does not exist"
        );
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("slurm.conf");
        let source = SlurmConf::from_file(&path).unwrap_err();
        let want = format!("{}: {source}", path.display());
        assert_eq!(FatalError::conf(&path, source).to_string(), want);
    }
}
