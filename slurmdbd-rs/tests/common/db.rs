//! A database on the private MariaDB, made as the daemon makes it.

use mysql_async::prelude::Queryable;
use slurm_testkit::mariadb::MariaDb;
use slurmdbd::db::{schema, Db, DbOpts, Endpoint};

/// The pool the daemon would open on `server`'s socket, database `name`,
/// with `tweak` applied to its options.
pub async fn open(server: &MariaDb, name: &str, tweak: impl FnOnce(&mut DbOpts)) -> Db {
    let mut o = DbOpts {
        endpoint: Endpoint::Socket(server.socket.clone()),
        user: server.user().into(),
        pass: None,
        name: name.into(),
        isolation: mysql_async::IsolationLevel::ReadCommitted,
        extra_setup: Vec::new(),
        attempts: 10,
    };
    tweak(&mut o);
    Db::open(o).await.unwrap()
}

/// A new database `name` with stock 26.05's global tables.
pub async fn fresh(server: &MariaDb, name: &str) -> Db {
    let db = open(server, name, |_| {}).await;
    schema::create(&db).await.unwrap();
    db
}

/// `SHOW CREATE TABLE` as mysqldump shows it (backquotes, not the
/// session's ANSI quotes).
pub async fn show_create(c: &mut mysql_async::Conn, table: &str) -> String {
    c.query_drop("SET SESSION sql_mode = ''").await.unwrap();
    let row: Option<(String, String)> = c
        .query_first(format!("show create table `{table}`"))
        .await
        .unwrap();
    c.query_drop("SET SESSION sql_mode = 'ANSI_QUOTES,NO_ENGINE_SUBSTITUTION'")
        .await
        .unwrap();
    row.unwrap().1
}
