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

/// One row as text (NULL as "NULL"), by column name.
pub async fn row(db: &Db, sql: &str) -> std::collections::BTreeMap<String, String> {
    let mut c = db.conn().await.unwrap();
    let r: Option<mysql_async::Row> = c.query_first(sql).await.unwrap();
    let r = r.unwrap_or_else(|| panic!("no row: {sql}"));
    let mut out = std::collections::BTreeMap::new();
    for (i, col) in r.columns_ref().iter().enumerate() {
        let v: mysql_async::Value = r.as_ref(i).unwrap().clone();
        let text = match v {
            mysql_async::Value::NULL => "NULL".to_string(),
            mysql_async::Value::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
            other => other.as_sql(true).trim_matches('\'').to_string(),
        };
        out.insert(col.name_str().into_owned(), text);
    }
    out
}

pub async fn count(db: &Db, sql: &str) -> i64 {
    let mut c = db.conn().await.unwrap();
    c.query_first::<i64, _>(sql).await.unwrap().unwrap()
}

/// Asserts the named columns of `r`.
pub fn expect(r: &std::collections::BTreeMap<String, String>, want: &[(&str, &str)], what: &str) {
    for (col, v) in want {
        assert_eq!(
            r.get(*col).map(String::as_str),
            Some(*v),
            "{what}: column {col}"
        );
    }
}
