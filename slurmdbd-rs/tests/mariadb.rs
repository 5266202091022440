//! The private MariaDB fixture, and how InnoDB's snapshot isolation makes
//! a conflicting update fail (the reproducer the storage's retry needs).

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, OptsBuilder};
use slurm_testkit::mariadb::MariaDb;

/// ER_CHECKREAD: "record has changed since last read".
const ER_CHECKREAD: u16 = 1020;

fn opts(db: &MariaDb, name: Option<&str>) -> OptsBuilder {
    OptsBuilder::default()
        .user(Some(db.user()))
        .db_name(name)
        .socket(Some(db.socket.display().to_string()))
}

async fn conn(db: &MariaDb, name: &str) -> Conn {
    Conn::new(opts(db, Some(name))).await.unwrap()
}

/// Two servers started at once: their own directories and sockets, a
/// database of the same name in each, what is written to one absent from
/// the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_at_once_keep_apart() {
    let (a, b) = std::thread::scope(|t| {
        let a = t.spawn(MariaDb::start);
        let b = t.spawn(MariaDb::start_tcp);
        (a.join().unwrap(), b.join().unwrap())
    });
    assert_ne!(a.socket, b.socket);
    assert!(a.port.is_none() && b.port.is_some());
    for (db, value) in [(&a, 1), (&b, 2)] {
        db.create_database("acct");
        let mut c = conn(db, "acct").await;
        c.query_drop("CREATE TABLE t (v INT NOT NULL) ENGINE=InnoDB")
            .await
            .unwrap();
        c.exec_drop("INSERT INTO t VALUES (?)", (value,))
            .await
            .unwrap();
        c.disconnect().await.unwrap();
    }
    for (db, value) in [(&a, 1), (&b, 2)] {
        let mut c = conn(db, "acct").await;
        let got: Vec<i64> = c.query("SELECT v FROM t").await.unwrap();
        assert_eq!(got, [value]);
    }
    // The CLI sees the same database.
    assert_eq!(a.sql("SELECT COUNT(*) FROM acct.t").trim(), "1");
}

/// The TCP server answers on 127.0.0.1 itself, not only on its socket.
#[tokio::test]
async fn tcp_connections_reach_the_tcp_server() {
    let db = MariaDb::start_tcp();
    let port = db.port.unwrap();
    let o = OptsBuilder::default()
        .ip_or_hostname("127.0.0.1")
        .tcp_port(port)
        .user(Some(db.user()))
        // Else the client moves to the server's socket once connected.
        .prefer_socket(false);
    let mut c = Conn::new(o).await.unwrap();
    let host: String = c
        .query_first("SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()")
        .await
        .unwrap()
        .unwrap();
    assert!(host.starts_with("127.0.0.1:"), "{host}");
    // And the socket-only one has no port at all.
    let plain = MariaDb::start();
    let skip: String = plain.sql("SELECT @@skip_networking").trim().into();
    assert_eq!(skip, "1");
}

/// One transaction reads a row under `level`, another commits a change to
/// it, then the first updates it. The update's result and the row after.
async fn conflicting_update(
    db: &MariaDb,
    snapshot: &str,
    level: &str,
) -> (Result<(), mysql_async::Error>, i64) {
    let mut setup = conn(db, "iso").await;
    for q in [
        "DROP TABLE IF EXISTS c",
        "CREATE TABLE c (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB",
        "INSERT INTO c VALUES (1, 0)",
    ] {
        setup.query_drop(q).await.unwrap();
    }
    let mut a = conn(db, "iso").await;
    if let Err(e) = a
        .query_drop(format!(
            "SET SESSION innodb_snapshot_isolation = {snapshot}"
        ))
        .await
    {
        let v = db.sql("SELECT VERSION()");
        panic!(
            "MariaDB {} lacks innodb_snapshot_isolation ({e}): the ER_CHECKREAD reproducer needs \
             10.6.18, 10.11.8, 11.4.2 or later",
            v.trim()
        );
    }
    a.query_drop(format!("SET SESSION TRANSACTION ISOLATION LEVEL {level}"))
        .await
        .unwrap();
    a.query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        .await
        .unwrap();
    let before: Option<i64> = a.query_first("SELECT v FROM c WHERE id = 1").await.unwrap();
    assert_eq!(before, Some(0));
    let mut b = conn(db, "iso").await;
    b.query_drop("UPDATE c SET v = 1 WHERE id = 1")
        .await
        .unwrap();
    let r = match a.query_drop("UPDATE c SET v = v + 10 WHERE id = 1").await {
        Ok(()) => a.query_drop("COMMIT").await,
        Err(e) => Err(e),
    };
    let _ = a.query_drop("ROLLBACK").await;
    let after: i64 = b
        .query_first("SELECT v FROM c WHERE id = 1")
        .await
        .unwrap()
        .unwrap();
    (r, after)
}

/// MariaDB 11.6.2 turns `innodb_snapshot_isolation` on by default; 10.11
/// has it off. With it on, REPEATABLE READ fails the update with
/// ER_CHECKREAD and rolls back; READ COMMITTED (a read view per
/// statement) does not conflict.
#[tokio::test]
async fn snapshot_isolation_fails_a_conflicting_update_under_repeatable_read() {
    let db = MariaDb::start();
    db.create_database("iso");
    let (r, after) = conflicting_update(&db, "ON", "REPEATABLE READ").await;
    match r {
        Err(mysql_async::Error::Server(e)) if e.code == ER_CHECKREAD => {}
        other => panic!("expected ER_CHECKREAD (1020), got {other:?}"),
    }
    assert_eq!(after, 1, "the failed transaction changed nothing");
    // Off, the same transaction updates the latest row.
    let (r, after) = conflicting_update(&db, "OFF", "REPEATABLE READ").await;
    r.unwrap();
    assert_eq!(after, 11);
    // On, under READ COMMITTED: no conflict either.
    let (r, after) = conflicting_update(&db, "ON", "READ COMMITTED").await;
    r.unwrap();
    assert_eq!(after, 11);
}
