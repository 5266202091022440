//! Why the daemon cannot start.

use slurm_conf::ConfError;

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("{0}")]
    Conf(#[from] ConfError),
    #[error("SlurmUser {0} does not exist")]
    NoSuchUser(String),
    #[error("{path} is owned by uid {owner}, not by SlurmUser (uid {slurm_user}) or root")]
    ConfOwner {
        path: String,
        owner: u32,
        slurm_user: u32,
    },
    #[error("{key}={value} is not supported by slurmdbd-rs (only {supported})")]
    Unsupported {
        key: &'static str,
        value: String,
        supported: &'static str,
    },
    #[error("this host ({short}, {long}) is not DbdHost {dbd_host}")]
    NotThisHost {
        short: String,
        long: String,
        dbd_host: String,
    },
    #[error("this host is DbdBackupHost {0}: a backup slurmdbd-rs is not implemented")]
    BackupHost(String),
    #[error("cannot listen on port {port}: {err}")]
    Bind { port: u16, err: std::io::Error },
    #[error("cannot become SlurmUser {user}: {err}")]
    Privileges { user: String, err: nix::Error },
    #[error("{0}")]
    Io(#[from] std::io::Error),
}
