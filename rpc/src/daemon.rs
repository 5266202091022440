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
    pub fn create(path: impl Into<PathBuf>) -> std::io::Result<Self> {
        let path = path.into();
        std::fs::write(&path, format!("{}\n", std::process::id()))?;
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
