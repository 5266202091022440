//! Creating stock 26.05's schema: the global tables, each cluster's
//! tables, their rows in `table_defs_table`, the conversion version and
//! the rows stock puts in on every start (static TRES, QOS `normal`, the
//! root user and account).
//!
//! Stock (re)creates its stored procedure `get_parent_limits` on every
//! start (and drops `get_lineage`), so a database we made needs none for
//! stock to open it, and our code calls none: we create none.

use super::pool::{Db, DbError};
use super::tables::{
    valid_cluster_name, Table, CLUSTER_TABLES, CONVERT_VERSION, GLOBAL_AFTER_CLUSTERS,
    GLOBAL_BEFORE_CLUSTERS, TABLE_DEFS, TABLE_DEFS_CREATE,
};
use mysql_async::prelude::Queryable;
use mysql_async::Conn;

/// `TRES_*` of slurmdb.h: the TRES every database has, with fixed ids.
pub const STATIC_TRES: &[(u32, &str, &str)] = &[
    (1, "cpu", ""),
    (2, "mem", ""),
    (3, "energy", ""),
    (4, "node", ""),
    (5, "billing", ""),
    (6, "fs", "disk"),
    (7, "vmem", ""),
    (8, "pages", ""),
];
/// `TRES_OFFSET`: ids of TRES a site adds start after it.
pub const TRES_OFFSET: u32 = 1000;
/// `SLURMDB_ADMIN_SUPER_USER`.
pub const ADMIN_SUPER_USER: u16 = 3;

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Whether `table` exists in the current database.
async fn exists(c: &mut Conn, table: &str) -> Result<bool, DbError> {
    let n: Option<i64> = c
        .exec_first(
            "select count(*) from information_schema.tables \
             where table_schema = database() and table_name = ?",
            (table,),
        )
        .await?;
    Ok(n.unwrap_or(0) > 0)
}

/// Refuses a database this release cannot serve as it is: one stock made
/// before it kept a conversion version, or one at another version (its
/// conversion is not implemented yet, or it is newer than 26.05's).
async fn check_version(c: &mut Conn) -> Result<(), DbError> {
    if !exists(c, "convert_version_table").await? {
        if exists(c, "cluster_table").await? {
            return Err(DbError::Schema(
                "the database predates convert_version_table: too old to convert".into(),
            ));
        }
        return Ok(());
    }
    let v: Option<i32> = c
        .query_first("select version from convert_version_table")
        .await?;
    match v {
        None => Ok(()),
        Some(v) if v == CONVERT_VERSION => Ok(()),
        Some(v) if v > CONVERT_VERSION => Err(DbError::Schema(format!(
            "the database is at conversion version {v}, newer than 26.05's {CONVERT_VERSION}"
        ))),
        Some(v) => Err(DbError::Schema(format!(
            "the database is at conversion version {v}; converting it to \
             {CONVERT_VERSION} is not implemented yet"
        ))),
    }
}

/// Creates `t` if it is missing and records its definition as stock
/// does; a table whose recorded definition differs (another release made
/// it) is refused, not altered.
async fn create_table(c: &mut Conn, t: &Table, cluster: Option<&str>) -> Result<(), DbError> {
    c.query_drop(t.create_sql(cluster)).await?;
    let name = t.sql_name(cluster);
    let ours = t.definition(cluster);
    let stored: Option<String> = c
        .exec_first(
            "select definition from table_defs_table where table_name = ?",
            (&name,),
        )
        .await?;
    match stored {
        Some(d) if d == ours => Ok(()),
        Some(_) => Err(DbError::Schema(format!(
            "{name} has another release's definition in {TABLE_DEFS}; converting it is \
             not implemented yet"
        ))),
        None => {
            let t = now();
            c.exec_drop(
                "insert into table_defs_table (creation_time, mod_time, table_name, definition) \
                 values (?, ?, ?, ?) on duplicate key update definition = values(definition), \
                 mod_time = values(mod_time)",
                (t, t, &name, &ours),
            )
            .await?;
            Ok(())
        }
    }
}

/// A cluster's tables (`create_cluster_tables`).
pub async fn create_cluster_tables(c: &mut Conn, cluster: &str) -> Result<(), DbError> {
    if !valid_cluster_name(cluster) {
        return Err(DbError::BadClusterName(cluster.into()));
    }
    for t in CLUSTER_TABLES {
        create_table(c, t, Some(cluster)).await?;
    }
    Ok(())
}

/// Brings the database to stock 26.05's schema: what stock's start-up
/// does on a database it need not convert. Running it again changes
/// nothing.
pub async fn create(db: &Db) -> Result<(), DbError> {
    let mut c = db.conn().await?;
    check_version(&mut c).await?;
    c.query_drop(TABLE_DEFS_CREATE).await?;
    for t in GLOBAL_BEFORE_CLUSTERS {
        create_table(&mut c, t, None).await?;
    }
    let v: Option<i32> = c
        .query_first("select version from convert_version_table")
        .await?;
    if v.is_none() {
        // As stock writes it on a new database: mod_time left at 0.
        c.exec_drop(
            "insert into convert_version_table (version) values (?)",
            (CONVERT_VERSION,),
        )
        .await?;
    }
    seed_tres(&mut c).await?;
    // Every cluster ever added, deleted ones too, as stock does.
    let clusters: Vec<String> = c.query("select name from cluster_table").await?;
    for name in clusters {
        if valid_cluster_name(&name) {
            create_cluster_tables(&mut c, &name).await?;
        } else {
            tracing::warn!("cluster_table has {name:?}, which cannot name tables: skipped");
        }
    }
    for t in GLOBAL_AFTER_CLUSTERS {
        create_table(&mut c, t, None).await?;
    }
    seed_rest(&mut c).await?;
    Ok(())
}

async fn seed_tres(c: &mut Conn) -> Result<(), DbError> {
    let t = now();
    for &(id, ty, name) in STATIC_TRES {
        c.exec_drop(
            "insert into tres_table (creation_time, id, deleted, type, name) \
             values (?, ?, 0, ?, ?) on duplicate key update deleted = values(deleted), \
             type = values(type), name = values(name), id = values(id)",
            (t, id, ty, name),
        )
        .await?;
    }
    // Holds the id counter above the static ones; never a real TRES.
    c.exec_drop(
        "insert into tres_table (creation_time, id, deleted, type) values (?, ?, 1, ?) \
         on duplicate key update deleted = values(deleted), type = values(type), id = values(id)",
        (t, TRES_OFFSET, "dynamic_offset"),
    )
    .await?;
    Ok(())
}

async fn seed_rest(c: &mut Conn) -> Result<(), DbError> {
    let t = now();
    c.exec_drop(
        "insert into qos_table (creation_time, mod_time, name, description) \
         values (?, ?, 'normal', 'Normal QOS default') \
         on duplicate key update id = last_insert_id(id), deleted = 0",
        (t, t),
    )
    .await?;
    c.exec_drop(
        "insert into user_table (creation_time, mod_time, name, admin_level) \
         values (?, ?, 'root', ?) on duplicate key update name = 'root'",
        (t, t, ADMIN_SUPER_USER),
    )
    .await?;
    c.exec_drop(
        "insert into acct_table (creation_time, mod_time, name, description, organization) \
         values (?, ?, 'root', 'default root account', 'root') \
         on duplicate key update name = 'root'",
        (t, t),
    )
    .await?;
    Ok(())
}
