//! The connection pool to MariaDB from slurmdbd.conf's Storage* keys, the
//! session settings every connection gets, and the retry wrapper every
//! transaction runs in.

use mysql_async::prelude::Queryable;
use mysql_async::{IsolationLevel, OptsBuilder, Pool, Transaction, TxOpts};
use slurm_conf::SlurmdbdConf;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::Duration;

/// ER_CHECKREAD: with `innodb_snapshot_isolation` (on by default from
/// MariaDB 11.6.2) a row changed since the transaction's snapshot.
pub const ER_CHECKREAD: u16 = 1020;
/// ER_LOCK_WAIT_TIMEOUT.
pub const ER_LOCK_WAIT_TIMEOUT: u16 = 1205;
/// ER_LOCK_DEADLOCK.
pub const ER_LOCK_DEADLOCK: u16 = 1213;
/// ER_NO_SUCH_TABLE: a cluster's tables are not there.
pub const ER_NO_SUCH_TABLE: u16 = 1146;

/// Where libmysqlclient looks when StorageHost is `localhost` (Debian's
/// MariaDB builds).
pub const DEFAULT_SOCKET: &str = "/run/mysqld/mysqld.sock";

/// Stock's identifiers are double-quoted: every session says so.
const SQL_MODE: &str = "SET SESSION sql_mode='ANSI_QUOTES,NO_ENGINE_SUBSTITUTION'";

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("{0}")]
    Mysql(#[from] mysql_async::Error),
    #[error("{0}")]
    Schema(String),
    #[error("cluster name {0:?} cannot name tables")]
    BadClusterName(String),
}

impl DbError {
    /// The server's error number, if the server refused a statement.
    pub fn code(&self) -> Option<u16> {
        match self {
            DbError::Mysql(mysql_async::Error::Server(e)) => Some(e.code),
            _ => None,
        }
    }

    /// A transaction that failed so can be replayed as a whole: InnoDB
    /// rolled it back (deadlock, snapshot conflict) or it waited too long
    /// for a lock.
    pub fn retryable(&self) -> bool {
        matches!(
            self.code(),
            Some(ER_CHECKREAD | ER_LOCK_DEADLOCK | ER_LOCK_WAIT_TIMEOUT)
        )
    }
}

/// How to reach the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    Socket(PathBuf),
    Tcp(String, u16),
}

/// What the pool is made from.
#[derive(Debug, Clone, PartialEq)]
pub struct DbOpts {
    pub endpoint: Endpoint,
    pub user: String,
    pub pass: Option<String>,
    /// StorageLoc: the database.
    pub name: String,
    /// READ COMMITTED: each statement reads the latest committed rows, so
    /// snapshot isolation has nothing to refuse.
    pub isolation: IsolationLevel,
    /// Statements run on each new session after ours (tests).
    pub extra_setup: Vec<String>,
    /// Attempts of one transaction before its error is returned.
    pub attempts: u32,
}

impl DbOpts {
    /// From slurmdbd.conf, as stock reads it: StorageHost `unix:/path` is
    /// that socket (26.05), `localhost` the local socket (as
    /// libmysqlclient takes it), anything else TCP on StoragePort;
    /// StorageUser defaults to whoever runs the daemon.
    pub fn from_conf(conf: &SlurmdbdConf, login: &str) -> Self {
        let host = conf.storage_host.as_str();
        let endpoint = match host.get(..5) {
            Some(p) if p.eq_ignore_ascii_case("unix:") => Endpoint::Socket(host[5..].into()),
            _ if host == "localhost" => Endpoint::Socket(DEFAULT_SOCKET.into()),
            _ => Endpoint::Tcp(host.to_string(), conf.storage_port),
        };
        DbOpts {
            endpoint,
            user: conf.storage_user.clone().unwrap_or_else(|| login.into()),
            pass: conf.storage_pass.clone(),
            name: conf.storage_loc.clone(),
            isolation: IsolationLevel::ReadCommitted,
            extra_setup: Vec::new(),
            attempts: 10,
        }
    }

    fn builder(&self, db: Option<&str>) -> OptsBuilder {
        let b = OptsBuilder::default()
            .user(Some(self.user.clone()))
            .pass(self.pass.clone())
            .db_name(db)
            .prefer_socket(false);
        let b = match &self.endpoint {
            Endpoint::Socket(p) => b.socket(Some(p.display().to_string())),
            Endpoint::Tcp(h, port) => b.ip_or_hostname(h.clone()).tcp_port(*port),
        };
        let level = match self.isolation {
            IsolationLevel::ReadUncommitted => "READ UNCOMMITTED",
            IsolationLevel::ReadCommitted => "READ COMMITTED",
            IsolationLevel::RepeatableRead => "REPEATABLE READ",
            IsolationLevel::Serializable => "SERIALIZABLE",
        };
        let mut setup = vec![
            SQL_MODE.to_string(),
            format!("SET SESSION TRANSACTION ISOLATION LEVEL {level}"),
        ];
        setup.extend(self.extra_setup.iter().cloned());
        // The session settings are ours alone and nothing changes them: a
        // connection back in the pool is not reset (that would cost a
        // round trip, and `setup` again, per message).
        b.setup(setup)
            .pool_opts(mysql_async::PoolOpts::default().with_reset_connection(false))
    }
}

/// A future borrowing for `'t`.
pub type BoxFut<'t, T> = Pin<Box<dyn Future<Output = T> + Send + 't>>;

/// The pool and its retry policy.
#[derive(Clone)]
pub struct Db {
    pool: Pool,
    opts: DbOpts,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").field("opts", &self.opts).finish()
    }
}

impl Db {
    /// Creates the database if it is missing (as stock does), then the
    /// pool on it.
    pub async fn open(opts: DbOpts) -> Result<Db, DbError> {
        let mut c = mysql_async::Conn::new(opts.builder(None)).await?;
        c.query_drop(format!(
            "create database if not exists {}",
            quote_ident(&opts.name)
        ))
        .await?;
        c.disconnect().await?;
        let pool = Pool::new(opts.builder(Some(&opts.name)));
        Ok(Db { pool, opts })
    }

    pub fn opts(&self) -> &DbOpts {
        &self.opts
    }

    /// A connection outside any transaction (schema changes, which
    /// commit implicitly).
    pub async fn conn(&self) -> Result<mysql_async::Conn, DbError> {
        Ok(self.pool.get_conn().await?)
    }

    /// Runs `f` in a transaction and commits it; a transaction that fails
    /// with a retryable error (see [`DbError::retryable`]) is rolled back
    /// and run again, with a growing pause, up to `attempts` times. `f` is
    /// therefore a replayable unit: it must not keep effects outside the
    /// transaction. `ctx` is what `f` reads.
    pub async fn txn<C, T, F>(&self, what: &str, ctx: &C, mut f: F) -> Result<T, DbError>
    where
        C: Sync + ?Sized,
        T: Send,
        F: for<'t> FnMut(&'t mut Transaction<'static>, &'t C) -> BoxFut<'t, Result<T, DbError>>,
    {
        let mut pause = Duration::from_millis(10);
        let mut attempt = 1;
        loop {
            let r: Result<T, DbError> = async {
                // The session's isolation level (see `builder`) applies.
                let mut tx = self.pool.start_transaction(TxOpts::default()).await?;
                let v = f(&mut tx, ctx).await?;
                tx.commit().await?;
                Ok(v)
            }
            .await;
            match r {
                Err(e) if e.retryable() && attempt < self.opts.attempts => {
                    tracing::info!(attempt, "{what}: {e}; replaying the transaction");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(1));
                    attempt += 1;
                }
                r => return r,
            }
        }
    }

    /// Closes the pool's connections.
    pub async fn close(self) -> Result<(), DbError> {
        self.pool.disconnect().await?;
        Ok(())
    }
}

/// An identifier in backquotes (StorageLoc comes from the configuration,
/// never from a client, but is quoted all the same).
pub fn quote_ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(text: &str) -> SlurmdbdConf {
        SlurmdbdConf::parse_str(text, "slurmdbd.conf").unwrap()
    }

    #[test]
    fn localhost_is_the_socket_and_anything_else_tcp() {
        let o = DbOpts::from_conf(
            &conf("StorageType=accounting_storage/mysql\nStorageHost=localhost\n"),
            "slurm",
        );
        assert_eq!(o.endpoint, Endpoint::Socket(DEFAULT_SOCKET.into()));
        assert_eq!(o.user, "slurm");
        assert_eq!(o.name, "slurm_acct_db");
        assert_eq!(o.isolation, IsolationLevel::ReadCommitted);
        let o = DbOpts::from_conf(
            &conf(
                "StorageType=accounting_storage/mysql\nStorageHost=db1\nStoragePort=3307\n\
                 StorageUser=acct\nStoragePass=pw\nStorageLoc=acc\n",
            ),
            "slurm",
        );
        assert_eq!(o.endpoint, Endpoint::Tcp("db1".into(), 3307));
        assert_eq!(
            (o.user.as_str(), o.pass.as_deref(), o.name.as_str()),
            ("acct", Some("pw"), "acc")
        );
        let o = DbOpts::from_conf(
            &conf("StorageType=accounting_storage/mysql\nStorageHost=UNIX:/run/db.sock\n"),
            "x",
        );
        assert_eq!(o.endpoint, Endpoint::Socket("/run/db.sock".into()));
        // Without StorageHost, stock's default: localhost.
        let o = DbOpts::from_conf(&conf("StorageType=accounting_storage/mysql\n"), "x");
        assert_eq!(o.endpoint, Endpoint::Socket(DEFAULT_SOCKET.into()));
    }

    #[test]
    fn identifiers_are_quoted() {
        assert_eq!(quote_ident("slurm_acct_db"), "`slurm_acct_db`");
        assert_eq!(quote_ident("a`b"), "`a``b`");
    }
}
