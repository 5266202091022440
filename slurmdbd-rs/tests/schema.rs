//! Stock 26.05's schema made on the private MariaDB: every table and
//! column of the list, the same `SHOW CREATE TABLE` as the database stock
//! 26.05 made (fixtures/26.05/schema.sql), idempotent, and transactions
//! replayed on ER_CHECKREAD.

mod common;

use common::db::{fresh, show_create};
use mysql_async::prelude::Queryable;
use mysql_async::IsolationLevel;
use slurm_testkit::mariadb::MariaDb;
use slurmdbd::db::pool::ER_CHECKREAD;
use slurmdbd::db::schema::{self, create_cluster_tables};
use slurmdbd::db::tables::{
    Table, CLUSTER_TABLES, CONVERT_VERSION, GLOBAL_AFTER_CLUSTERS, GLOBAL_BEFORE_CLUSTERS,
};
use slurmdbd::db::Db;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};

/// The cluster stock's capture ran as.
const CLUSTER: &str = "acc26";

fn all_tables() -> Vec<(Table, Option<&'static str>)> {
    GLOBAL_BEFORE_CLUSTERS
        .iter()
        .chain(GLOBAL_AFTER_CLUSTERS)
        .map(|t| (*t, None))
        .chain(CLUSTER_TABLES.iter().map(|t| (*t, Some(CLUSTER))))
        .collect()
}

/// `CREATE TABLE` statements of a mysqldump, by table name.
fn dump_tables(dump: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut cur: Option<(String, String)> = None;
    for line in dump.lines() {
        if let Some(rest) = line.strip_prefix("CREATE TABLE `") {
            let name = rest.split('`').next().unwrap().to_string();
            cur = Some((name, String::new()));
        }
        if let Some((_, text)) = cur.as_mut() {
            text.push_str(line);
            text.push('\n');
            if line.starts_with(')') {
                let (n, t) = cur.take().unwrap();
                out.insert(n, t);
            }
        }
    }
    out
}

/// What may differ between two servers' rendering of the same table: the
/// next auto-increment value and the server's default character set
/// (neither stock nor we name one), and the trailing `;` of a dump.
fn normalise(create: &str) -> String {
    let last = create.trim_end().trim_end_matches(';');
    let (body, tail) = last.rsplit_once('\n').unwrap();
    let engine: Vec<&str> = tail
        .split(' ')
        .filter(|w| {
            !w.starts_with("AUTO_INCREMENT=")
                && !w.starts_with("CHARSET=")
                && !w.starts_with("COLLATE=")
                && *w != "DEFAULT"
        })
        .collect();
    format!("{body}\n{}", engine.join(" "))
}

#[tokio::test]
async fn a_fresh_database_has_every_table_and_column_of_the_list() {
    let server = MariaDb::start();
    let db = fresh(&server, "acct").await;
    let mut c = db.conn().await.unwrap();
    create_cluster_tables(&mut c, CLUSTER).await.unwrap();
    for (t, cluster) in all_tables() {
        let cols: Vec<String> = c
            .exec(
                "select column_name from information_schema.columns \
                 where table_schema = database() and table_name = ? order by ordinal_position",
                (t.plain_name(cluster),),
            )
            .await
            .unwrap();
        let want: Vec<&str> = t.cols.iter().map(|c| c.name).collect();
        assert_eq!(cols, want, "{}", t.plain_name(cluster));
        // Its definition is recorded under the name stock uses.
        let d: Option<String> = c
            .exec_first(
                "select definition from table_defs_table where table_name = ?",
                (t.sql_name(cluster),),
            )
            .await
            .unwrap();
        assert_eq!(d, Some(t.definition(cluster)), "{}", t.sql_name(cluster));
    }
    let v: Vec<(u64, i32)> = c
        .query("select mod_time, version from convert_version_table")
        .await
        .unwrap();
    assert_eq!(
        v,
        [(0, CONVERT_VERSION)],
        "as stock writes a new database's"
    );
    let tres: Vec<(u32, String, String, u8)> = c
        .query("select id, type, name, deleted from tres_table order by id")
        .await
        .unwrap();
    let ids: Vec<u32> = tres.iter().map(|t| t.0).collect();
    assert_eq!(ids, [1, 2, 3, 4, 5, 6, 7, 8, 1000]);
    assert_eq!(tres[5], (6, "fs".into(), "disk".into(), 0));
    assert_eq!(tres[8].3, 1, "dynamic_offset is deleted");
    let qos: Vec<(u32, String)> = c.query("select id, name from qos_table").await.unwrap();
    assert_eq!(qos, [(1, "normal".into())]);
    let root: Option<u16> = c
        .query_first("select admin_level from user_table where name = 'root'")
        .await
        .unwrap();
    assert_eq!(root, Some(3));
}

#[tokio::test]
async fn the_schema_is_the_one_stock_26_05_made() {
    let dump = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/26.05/schema.sql"
    ))
    .unwrap();
    let stock = dump_tables(&dump);
    let server = MariaDb::start();
    let db = fresh(&server, "acct").await;
    let mut c = db.conn().await.unwrap();
    create_cluster_tables(&mut c, CLUSTER).await.unwrap();
    let mut ours = BTreeMap::new();
    for (t, cluster) in all_tables() {
        let name = t.plain_name(cluster);
        ours.insert(name.clone(), show_create(&mut c, &name).await);
    }
    ours.insert(
        "table_defs_table".into(),
        show_create(&mut c, "table_defs_table").await,
    );
    assert_eq!(
        stock.keys().collect::<Vec<_>>(),
        ours.keys().collect::<Vec<_>>(),
        "the same tables"
    );
    for (name, s) in &stock {
        assert_eq!(normalise(&ours[name]), normalise(s), "{name}");
    }
}

#[tokio::test]
async fn creating_it_again_changes_nothing() {
    let server = MariaDb::start();
    let db = fresh(&server, "acct").await;
    let mut c = db.conn().await.unwrap();
    create_cluster_tables(&mut c, "c1").await.unwrap();
    c.exec_drop(
        "insert into cluster_table (creation_time, name, federation, fed_state) \
         values (1, 'c1', '', 0)",
        (),
    )
    .await
    .unwrap();
    let snapshot = |db: Db| async move {
        let mut c = db.conn().await.unwrap();
        let defs: Vec<(String, String, u32)> = c
            .query(
                "select table_name, definition, mod_time from table_defs_table \
                 order by table_name",
            )
            .await
            .unwrap();
        let mut creates = Vec::new();
        for (t, cl) in all_tables() {
            let cl = cl.map(|_| "c1");
            // An upsert that finds its row still takes an auto-increment
            // value (stock's seeds do the same on every start).
            creates.push(normalise(&show_create(&mut c, &t.plain_name(cl)).await));
        }
        let rows: Vec<(i64, i64, i64, i64)> = c
            .query(
                "select (select count(*) from tres_table), (select count(*) from qos_table), \
                 (select count(*) from user_table), (select count(*) from acct_table)",
            )
            .await
            .unwrap();
        (defs, creates, rows)
    };
    let before = snapshot(db.clone()).await;
    // A second start, as the daemon's: it finds c1 in cluster_table.
    schema::create(&db).await.unwrap();
    let after = snapshot(db.clone()).await;
    assert_eq!(before.0, after.0, "table_defs_table");
    for (b, a) in before.1.iter().zip(&after.1) {
        assert_eq!(b, a);
    }
    assert_eq!(before.2, after.2);
    assert_eq!(before.2, [(9, 1, 1, 1)]);
}

#[tokio::test]
async fn a_table_another_release_defined_is_refused_not_altered() {
    let server = MariaDb::start();
    let db = fresh(&server, "acct").await;
    let mut c = db.conn().await.unwrap();
    c.query_drop(
        "update table_defs_table set definition = 'alter table acct_table modify x;' \
         where table_name = 'acct_table'",
    )
    .await
    .unwrap();
    let e = schema::create(&db).await.unwrap_err();
    assert!(e.to_string().contains("acct_table"), "{e}");
    // And a database at an older conversion version.
    c.query_drop("update convert_version_table set version = 13")
        .await
        .unwrap();
    let e = schema::create(&db).await.unwrap_err();
    assert!(e.to_string().contains("version 13"), "{e}");
}

/// A transaction conflicts under snapshot isolation with a commit made
/// after it read: ER_CHECKREAD the first time, and the wrapper replays it.
async fn conflict_once(db: &Db, server: &MariaDb) -> (Result<i64, String>, u32) {
    let mut setup = db.conn().await.unwrap();
    setup
        .query_drop("create table if not exists c (id int primary key, v int not null)")
        .await
        .unwrap();
    setup
        .query_drop("replace into c values (1, 0)")
        .await
        .unwrap();
    let attempts = AtomicU32::new(0);
    let sock = server.socket.clone();
    let r = db
        .txn("conflict", &(), |tx, _| {
            let n = attempts.fetch_add(1, Ordering::SeqCst);
            let sock = sock.clone();
            Box::pin(async move {
                let v: Option<i64> = tx.query_first("select v from c where id = 1").await?;
                assert!(v.is_some());
                if n == 0 {
                    // Another session commits a change to the row we read.
                    let o = mysql_async::OptsBuilder::default()
                        .user(Some("root"))
                        .db_name(Some("acct"))
                        .socket(Some(sock.display().to_string()));
                    let mut other = mysql_async::Conn::new(o).await?;
                    other
                        .query_drop("update c set v = v + 1 where id = 1")
                        .await?;
                    other.disconnect().await?;
                }
                tx.query_drop("update c set v = v + 10 where id = 1")
                    .await?;
                let v: Option<i64> = tx.query_first("select v from c where id = 1").await?;
                Ok(v.unwrap_or(-1))
            })
        })
        .await
        .map_err(|e| format!("{e} ({:?})", e.code()));
    (r, attempts.load(Ordering::SeqCst))
}

#[tokio::test]
async fn a_transaction_refused_with_er_checkread_is_replayed() {
    let server = MariaDb::start();
    // Snapshot isolation on and REPEATABLE READ: the conflict is real.
    let db = common::db::open(&server, "acct", |o| {
        o.isolation = IsolationLevel::RepeatableRead;
        o.extra_setup = vec!["SET SESSION innodb_snapshot_isolation = ON".into()];
    })
    .await;
    let (r, attempts) = conflict_once(&db, &server).await;
    assert_eq!(
        (r, attempts),
        (Ok(11), 2),
        "the first attempt failed with {ER_CHECKREAD}, the replay saw the other commit"
    );
    // With one attempt allowed, the error itself comes back.
    let db1 = common::db::open(&server, "acct", |o| {
        o.isolation = IsolationLevel::RepeatableRead;
        o.extra_setup = vec!["SET SESSION innodb_snapshot_isolation = ON".into()];
        o.attempts = 1;
    })
    .await;
    let (r, attempts) = conflict_once(&db1, &server).await;
    assert!(
        matches!(&r, Err(e) if e.contains(&format!("Some({ER_CHECKREAD})"))),
        "{r:?}"
    );
    assert_eq!(attempts, 1);
    // Our default, READ COMMITTED, does not conflict at all.
    let rc = common::db::open(&server, "acct", |o| {
        o.extra_setup = vec!["SET SESSION innodb_snapshot_isolation = ON".into()];
    })
    .await;
    assert_eq!(conflict_once(&rc, &server).await, (Ok(11), 1));
}
