//! Start-up: the configuration checks stock makes, the listening socket,
//! and becoming SlurmUser once it is bound.

use crate::conn::ConnConf;
use crate::error::StartError;
use slurm_conf::{SlurmdbdConf, SlurmdbdFile};
use slurm_rpc::AuthCtx;
use std::net::{Ipv6Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// SlurmUser resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlurmUser {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

/// Looks SlurmUser up (a number is taken as a uid, as stock does).
pub fn slurm_user(name: &str) -> Result<SlurmUser, StartError> {
    use nix::unistd::{Uid, User};
    let found = match name.parse::<u32>() {
        Ok(n) => User::from_uid(Uid::from_raw(n)),
        Err(_) => User::from_name(name),
    };
    match found {
        Ok(Some(u)) => Ok(SlurmUser {
            name: u.name,
            uid: u.uid.as_raw(),
            gid: u.gid.as_raw(),
        }),
        _ => Err(StartError::NoSuchUser(name.to_string())),
    }
}

/// Reads slurmdbd.conf and makes stock's checks on it: mode (in the
/// parser), owner SlurmUser or root, and what this daemon supports.
pub fn load(path: &Path) -> Result<(SlurmdbdConf, SlurmUser), StartError> {
    let SlurmdbdFile { conf, owner_uid } = SlurmdbdConf::from_file(path)?;
    let user = slurm_user(&conf.slurm_user)?;
    if owner_uid != 0 && owner_uid != user.uid {
        return Err(StartError::ConfOwner {
            path: path.display().to_string(),
            owner: owner_uid,
            slurm_user: user.uid,
        });
    }
    supported(&conf)?;
    Ok((conf, user))
}

/// Refuses settings we cannot honour rather than ignore them.
pub fn supported(conf: &SlurmdbdConf) -> Result<(), StartError> {
    if conf.storage_type != "accounting_storage/mysql" {
        return Err(StartError::Unsupported {
            key: "StorageType",
            value: conf.storage_type.clone(),
            supported: "accounting_storage/mysql",
        });
    }
    if conf.auth_type != "auth/munge" {
        return Err(StartError::Unsupported {
            key: "AuthType",
            value: conf.auth_type.clone(),
            supported: "auth/munge",
        });
    }
    Ok(())
}

/// Stock runs only where DbdHost names this host (or is `localhost`).
pub fn check_host(conf: &SlurmdbdConf, short: &str, long: &str) -> Result<(), StartError> {
    let is_me = |h: &str| h == short || h == long || h == "localhost";
    if is_me(&conf.dbd_host) {
        return Ok(());
    }
    if let Some(b) = conf.dbd_backup_host.as_deref().filter(|b| is_me(b)) {
        return Err(StartError::BackupHost(b.to_string()));
    }
    Err(StartError::NotThisHost {
        short: short.to_string(),
        long: long.to_string(),
        dbd_host: conf.dbd_host.clone(),
    })
}

/// This host's names, short and long, as stock compares them.
pub fn host_names() -> (String, String) {
    let long = nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_default();
    let short = long.split('.').next().unwrap_or_default().to_string();
    (short, long)
}

/// How we authenticate connections: munge, with AuthInfo's socket.
pub fn auth_ctx(conf: &SlurmdbdConf, user: &SlurmUser) -> AuthCtx {
    AuthCtx {
        plugin: Arc::new(slurm_rpc::daemon::munge_from_auth_info(
            conf.auth_info.as_deref(),
        )),
        slurm_user_uid: user.uid,
        policy: slurm_wire::auth::VerifyPolicy::default(),
    }
}

/// Connection settings from the configuration.
pub fn conn_conf(conf: &SlurmdbdConf) -> ConnConf {
    ConnConf {
        timeout: Duration::from_secs(u64::from(conf.message_timeout.max(1))),
        ..ConnConf::default()
    }
}

/// Stock listens on DbdPort on every address (DbdAddr is how others reach
/// DbdHost, not a bind address): IPv6 and IPv4 where the host has both.
pub fn bind(port: u16) -> Result<std::net::TcpListener, StartError> {
    let any6 = SocketAddr::from((Ipv6Addr::UNSPECIFIED, port));
    let any4 = SocketAddr::from(([0, 0, 0, 0], port));
    let l = std::net::TcpListener::bind(any6)
        .or_else(|_| std::net::TcpListener::bind(any4))
        .map_err(|err| StartError::Bind { port, err })?;
    l.set_nonblocking(true)?;
    Ok(l)
}

/// Becomes SlurmUser; only root can become another user (stock fails
/// likewise).
pub fn drop_privileges(user: &SlurmUser) -> Result<(), StartError> {
    use nix::unistd::{geteuid, initgroups, setgid, setuid, Gid, Uid};
    let err = |err| StartError::Privileges {
        user: user.name.clone(),
        err,
    };
    let me = geteuid();
    if me.as_raw() == user.uid {
        return Ok(());
    }
    if !me.is_root() {
        return Err(err(nix::Error::EPERM));
    }
    let name = std::ffi::CString::new(user.name.as_str()).map_err(|_| err(nix::Error::EINVAL))?;
    initgroups(&name, Gid::from_raw(user.gid)).map_err(err)?;
    setgid(Gid::from_raw(user.gid)).map_err(err)?;
    setuid(Uid::from_raw(user.uid)).map_err(err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(text: &str) -> SlurmdbdConf {
        SlurmdbdConf::parse_str(text, "slurmdbd.conf").unwrap()
    }

    #[test]
    fn runs_only_on_dbd_host() {
        let c = conf("DbdHost=db1\nDbdBackupHost=db2\nStorageType=accounting_storage/mysql\n");
        assert!(check_host(&c, "db1", "db1.example.org").is_ok());
        assert!(check_host(&c, "x", "db1").is_ok());
        assert!(matches!(
            check_host(&c, "db2", "db2.example.org"),
            Err(StartError::BackupHost(_))
        ));
        assert!(matches!(
            check_host(&c, "other", "other.example.org"),
            Err(StartError::NotThisHost { .. })
        ));
        let local = conf("DbdHost=localhost\nStorageType=accounting_storage/mysql\n");
        assert!(check_host(&local, "any", "any.example.org").is_ok());
    }

    #[test]
    fn only_mysql_storage_and_munge() {
        assert!(supported(&conf("StorageType=accounting_storage/mysql\n")).is_ok());
        for text in [
            "StorageType=accounting_storage/none\n",
            "StorageType=accounting_storage/mysql\nAuthType=auth/slurm\n",
        ] {
            assert!(
                matches!(supported(&conf(text)), Err(StartError::Unsupported { .. })),
                "{text}"
            );
        }
    }

    #[test]
    fn slurm_user_by_name_or_number() {
        assert_eq!(slurm_user("root").unwrap().uid, 0);
        assert_eq!(slurm_user("0").unwrap().name, "root");
        assert!(matches!(
            slurm_user("no-such-user-here"),
            Err(StartError::NoSuchUser(_))
        ));
    }
}
