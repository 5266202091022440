//! Plumbing every daemon shares: log set-up, the PID file, and the
//! authentication context built from slurm.conf.

use crate::{AuthCtx, ConnLimits};
use slurm_conf::{LogLevel, Params, SlurmConf};
use slurm_wire::auth::munge::MungeAuth;
use slurm_wire::auth::VerifyPolicy;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Tracing level for a Slurm debug level raised by each `-v` (stock's rule).
pub fn log_level(conf: LogLevel, verbose: u8) -> tracing::Level {
    match (conf as u8).saturating_add(verbose) {
        0..=2 => tracing::Level::ERROR,
        3 => tracing::Level::INFO,
        4 | 5 => tracing::Level::DEBUG,
        _ => tracing::Level::TRACE,
    }
}

/// Logs to `file` (appending) and, in the foreground or without a file, to
/// stderr. `env_override` names a variable that replaces the filter.
pub fn init_logging(
    file: Option<&Path>,
    level: tracing::Level,
    foreground: bool,
    env_override: &str,
) -> Result<(), String> {
    use tracing_subscriber::prelude::*;
    let filter = tracing_subscriber::EnvFilter::try_from_env(env_override)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level.as_str()));
    let file_layer = match file {
        Some(p) => {
            if let Some(d) = p.parent() {
                let _ = std::fs::create_dir_all(d);
            }
            let f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map_err(|e| format!("cannot open log file {}: {e}", p.display()))?;
            Some(
                tracing_subscriber::fmt::layer()
                    .with_ansi(false)
                    .with_writer(std::sync::Mutex::new(f)),
            )
        }
        None => None,
    };
    let stderr_layer = (foreground || file_layer.is_none()).then(|| {
        tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .with_writer(std::io::stderr)
    });
    tracing_subscriber::registry()
        .with(filter)
        .with(file_layer)
        .with(stderr_layer)
        .try_init()
        .map_err(|e| e.to_string())
}

/// Writes our PID and removes the file when dropped.
pub struct PidFile(PathBuf);

impl PidFile {
    /// Never through a link, and only into a plain file of ours: a daemon
    /// running as root must not truncate what a user's link points to
    /// when the file's directory is one a user can write.
    pub fn create(path: impl Into<PathBuf>) -> std::io::Result<Self> {
        use std::io::Write;
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
        let path = path.into();
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&path)?;
        let st = f.metadata()?;
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if !st.file_type().is_file() || st.uid() != me || st.nlink() != 1 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "{} is not a plain file of ours (uid {}, {} links)",
                    path.display(),
                    st.uid(),
                    st.nlink()
                ),
            ));
        }
        f.set_len(0)?;
        f.write_all(format!("{}\n", std::process::id()).as_bytes())?;
        Ok(PidFile(path))
    }
}

impl Drop for PidFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// auth/munge with `AuthInfo=socket=...,ttl=...`.
pub fn munge_from_auth_info(auth_info: Option<&str>) -> MungeAuth {
    let mut m = MungeAuth::default();
    for kv in auth_info.unwrap_or("").split(',') {
        match kv.trim().split_once('=') {
            Some(("socket", s)) => m.socket = Some(PathBuf::from(s)),
            Some(("ttl", t)) => m.ttl = t.parse().ok(),
            _ => {}
        }
    }
    m
}

/// The authentication context a daemon of this cluster uses.
pub fn auth_ctx(conf: &SlurmConf, slurm_user_uid: u32) -> AuthCtx {
    AuthCtx {
        plugin: Arc::new(munge_from_auth_info(conf.auth_info.as_deref())),
        slurm_user_uid,
        policy: VerifyPolicy {
            block_null_hash: conf.communication_parameters.has("block_null_hash"),
            block_zero_hash: conf.communication_parameters.has("block_zero_hash"),
        },
    }
}

/// Connection limits from `SlurmctldParameters` or `SlurmdParameters`:
/// stock's `conmgr_max_connections` and `conmgr_read_timeout` (seconds).
pub fn conn_limits(params: &Params) -> ConnLimits {
    let mut l = ConnLimits::default();
    let num = |k: &str| params.get(k).and_then(|v| v.trim().parse::<u64>().ok());
    if let Some(n) = num("conmgr_max_connections").filter(|&n| n > 0) {
        l.max_connections = usize::try_from(n).unwrap_or(usize::MAX);
    }
    if let Some(s) = num("conmgr_read_timeout").filter(|&s| s > 0) {
        l.header_timeout = Some(std::time::Duration::from_secs(s));
    }
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pid_file_is_never_written_through_a_link() {
        let d = tempfile::tempdir().unwrap();
        let canary = d.path().join("canary");
        std::fs::write(&canary, "root's").unwrap();
        let sym = d.path().join("sym.pid");
        std::os::unix::fs::symlink(&canary, &sym).unwrap();
        assert!(PidFile::create(&sym).is_err());
        let hard = d.path().join("hard.pid");
        std::fs::hard_link(&canary, &hard).unwrap();
        assert!(PidFile::create(&hard).is_err());
        assert_eq!(std::fs::read_to_string(&canary).unwrap(), "root's");
        // A fresh path, and a leftover of ours, get our pid.
        let pid = format!("{}\n", std::process::id());
        let p = d.path().join("slurmd.pid");
        std::fs::write(&p, "a much longer leftover line\n").unwrap();
        let f = PidFile::create(&p).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), pid);
        drop(f);
        assert!(!p.exists());
        let _f = PidFile::create(&p).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), pid);
    }

    #[test]
    fn verbosity_raises_the_configured_level() {
        assert_eq!(log_level(LogLevel::Info, 0), tracing::Level::INFO);
        assert_eq!(log_level(LogLevel::Info, 1), tracing::Level::DEBUG);
        assert_eq!(log_level(LogLevel::Error, 0), tracing::Level::ERROR);
        assert_eq!(log_level(LogLevel::Debug3, 0), tracing::Level::TRACE);
    }

    #[test]
    fn conn_limits_from_parameters() {
        let text = "ClusterName=c\nSlurmctldHost=ctl\nNodeName=n1 CPUs=1\n\
                    PartitionName=p Nodes=ALL\n\
                    SlurmctldParameters=conmgr_max_connections=64,conmgr_read_timeout=3\n";
        let conf = SlurmConf::parse_str(text, "slurm.conf").unwrap();
        let l = conn_limits(&conf.slurmctld_parameters);
        assert_eq!(l.max_connections, 64);
        assert_eq!(l.header_timeout, Some(std::time::Duration::from_secs(3)));
        let d = conn_limits(&conf.slurmd_parameters);
        assert_eq!(d.max_connections, ConnLimits::default().max_connections);
        assert_eq!(d.header_timeout, None);
    }

    #[test]
    fn auth_info_options() {
        let m = munge_from_auth_info(Some("socket=/run/m.sock, ttl=60"));
        assert_eq!(m.socket.as_deref(), Some(Path::new("/run/m.sock")));
        assert_eq!(m.ttl, Some(60));
        assert_eq!(munge_from_auth_info(None).socket, None);
    }
}
