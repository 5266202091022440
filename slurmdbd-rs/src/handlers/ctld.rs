//! DBD_REGISTER_CTLD, DBD_CLUSTER_TRES and DBD_NODE_STATE, stored as
//! stock's `as_mysql_cluster.c` stores them.

use super::common::{
    now, table, user_name, Done, NODE_STATE_DOWN, NODE_STATE_POWERED_DOWN, NO_VAL,
};
use crate::db::schema::create_cluster_tables;
use crate::db::tables::{ASSOC_TABLE, EVENT_TABLE};
use crate::db::{Db, DbError};
use crate::session::Session;
use mysql_async::prelude::Queryable;
use slurm_wire::dbd::acct::node_state;
use slurm_wire::dbd::{DbdClusterTresMsg, DbdNodeStateMsg, DbdRegisterCtldMsg};
use slurm_wire::ProtocolVersion;

/// `ACCOUNTING_FIRST_REG`, `ACCOUNTING_TRES_CHANGE_DB`,
/// `ACCOUNTING_NODES_CHANGE_DB`: cluster TRES answers that make the
/// controller send its nodes' and jobs' state again.
pub const ACCOUNTING_FIRST_REG: i32 = 10002;
pub const ACCOUNTING_TRES_CHANGE_DB: i32 = 10004;
pub const ACCOUNTING_NODES_CHANGE_DB: i32 = 10005;
/// `RC_AS_CLUSTER_ID`: a registration answer carrying the cluster's id
/// (24.11 on).
pub const RC_AS_CLUSTER_ID: u32 = 1 << 31;
/// `DBD_ADD_CLUSTERS`, `DBD_MODIFY_CLUSTERS`, `DBD_ADD_ASSOCS`: txn actions.
const TXN_ADD_CLUSTERS: u16 = 1405;
const TXN_MODIFY_CLUSTERS: u16 = 1430;
const TXN_ADD_ASSOCS: u16 = 1404;
/// `CLUSTER_FLAG_EXT`.
const CLUSTER_FLAG_EXT: u32 = 1 << 12;
/// `ASSOC_FLAG_BLOCK_ADD`, the one flag of root's association stored.
const ASSOC_FLAG_BLOCK_ADD: u32 = 1 << 17;
/// A new association's limits as stock's txn rows list them.
const NEW_ASSOC_LIMITS: &str = "shares=1, grp_jobs=NULL, grp_jobs_accrue=NULL, \
     grp_submit_jobs=NULL, grp_wall=NULL, max_jobs=NULL, max_jobs_accrue=NULL, \
     min_prio_thresh=NULL, max_submit_jobs=NULL, max_wall_pj=NULL, priority=NULL";

/// Registers the connection's cluster: adds it (tables, root
/// associations) when it is new, then records where its controller is.
/// The answer carries the cluster id for 24.11 and later, as stock's.
pub async fn register(
    s: &Session,
    db: &Db,
    cluster: &str,
    m: &DbdRegisterCtldMsg,
) -> Result<Done, DbError> {
    let known: Option<u16> = {
        let mut c = db.conn().await?;
        let row: Option<(Option<u16>,)> = c
            .exec_first(
                "select id from cluster_table where name = ? and deleted = 0",
                (cluster,),
            )
            .await?;
        row.map(|r| r.0.unwrap_or(0))
    };
    let ext = m.flags != NO_VAL && m.flags & CLUSTER_FLAG_EXT != 0;
    if known.is_none() {
        add_cluster(s, db, cluster, m.cluster_id, ext).await?;
    }
    let id = db
        .txn("register_ctld", &(s, cluster, m), |tx, &(s, cluster, m)| {
            Box::pin(async move {
                let t = now();
                let dims = (m.dimensions != 0).then_some(m.dimensions);
                let flags = (m.flags != NO_VAL).then_some(m.flags);
                let rpc = s.version.to_wire();
                tx.exec_drop(
                    "update cluster_table set mod_time = ?, control_host = ?, control_port = ?, \
                     last_port = ?, rpc_version = ?, dimensions = coalesce(?, dimensions), \
                     flags = coalesce(?, flags) where name = ? and deleted = 0",
                    (t, &s.peer_host, m.port, m.port, rpc, dims, flags, cluster),
                )
                .await?;
                // As stock's modify_common: one txn row per change.
                let mut info = format!(
                    "control_host='{}', control_port={}, last_port={}, rpc_version={rpc}",
                    s.peer_host, m.port, m.port
                );
                if let Some(d) = dims {
                    info.push_str(&format!(", dimensions={d}"));
                }
                if let Some(f) = flags {
                    info.push_str(&format!(", flags={f}"));
                }
                tx.exec_drop(
                    "insert into txn_table (timestamp, action, name, actor, info) \
                     values (?, ?, ?, ?, ?)",
                    (
                        t,
                        TXN_MODIFY_CLUSTERS,
                        format!("name='{cluster}'"),
                        user_name(s.uid),
                        info,
                    ),
                )
                .await?;
                let id: Option<Option<u16>> = tx
                    .exec_first("select id from cluster_table where name = ?", (cluster,))
                    .await?;
                Ok(id.flatten().unwrap_or(0))
            })
        })
        .await?;
    if id != 0 && s.version >= ProtocolVersion::V24_11 {
        return Ok(Done::rc((u32::from(id) | RC_AS_CLUSTER_ID) as i32));
    }
    Ok(Done::OK)
}

/// A cluster id no other cluster has: the one asked for, else one drawn
/// from 2..4095 as stock's `generate_cluster_id`.
async fn unique_id(tx: &mut mysql_async::Transaction<'static>, asked: u32) -> Result<u16, DbError> {
    let mut want = u16::try_from(asked).ok().filter(|&i| i > 0);
    let mut seed = now() as u64 ^ u64::from(std::process::id());
    for _ in 0..4096 {
        let id = match want.take() {
            Some(i) => i,
            None => {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                2 + ((seed >> 33) % 4094) as u16
            }
        };
        let taken: Option<i64> = tx
            .exec_first("select count(*) from cluster_table where id = ?", (id,))
            .await?;
        if taken.unwrap_or(0) == 0 {
            return Ok(id);
        }
    }
    Err(DbError::Schema("no free cluster id".into()))
}

/// `as_mysql_add_clusters` for a registering cluster: its tables, its row,
/// the root account's association and root's own under it.
async fn add_cluster(
    s: &Session,
    db: &Db,
    cluster: &str,
    asked_id: u32,
    ext: bool,
) -> Result<(), DbError> {
    {
        let mut c = db.conn().await?;
        create_cluster_tables(&mut c, cluster).await?;
    }
    let assoc = table(cluster, &ASSOC_TABLE)?;
    db.txn(
        "add_cluster",
        &(s, cluster, assoc.as_str()),
        |tx, &(s, cluster, assoc)| {
            Box::pin(async move {
                let t = now();
                let existing: Option<Option<u16>> = tx
                    .exec_first("select id from cluster_table where name = ?", (cluster,))
                    .await?;
                let id = match existing.flatten().filter(|&i| i > 0) {
                    Some(i) => i,
                    None => unique_id(tx, asked_id).await?,
                };
                // CLUSTER_FED_STATE_NA is 0.
                tx.exec_drop(
                "insert into cluster_table (creation_time, mod_time, name, id, classification, \
                 federation, fed_id, fed_state, features) values (?, ?, ?, ?, 0, '', 0, 0, '') \
                 on duplicate key update deleted = 0, mod_time = values(mod_time), \
                 classification = 0, flags = 0, federation = '', fed_id = 0, fed_state = 0, \
                 features = '', id = values(id)",
                (t, t, cluster, id),
            )
            .await?;
                let actor = user_name(s.uid);
                // The txn rows' info, as stock's setup_assoc_limits writes a
                // new association's defaults.
                let mut info = format!("mod_time={t}");
                let mut user_assoc = None;
                if !ext {
                    // The default QOS list of a new root association: stock's
                    // default_qos_str, the `normal` QOS.
                    let normal: Option<u32> = tx
                        .query_first(
                            "select id from qos_table where name = 'normal' and deleted = 0",
                        )
                        .await?;
                    let qos = normal.map_or_else(String::new, |i| format!(",{i},"));
                    tx.exec_drop(
                        format!(
                            "insert into {assoc} (creation_time, mod_time, acct, shares, qos, \
                             lineage) values (?, ?, 'root', 1, ?, '/') on duplicate key update \
                             deleted = 0, id_assoc = last_insert_id(id_assoc), \
                             lineage = values(lineage), mod_time = values(mod_time)"
                        ),
                        (t, t, &qos),
                    )
                    .await?;
                    user_assoc = Some(tx.last_insert_id().unwrap_or(0));
                    info.push_str(&format!(
                        ", {NEW_ASSOC_LIMITS}, def_qos_id=NULL, qos='{qos}'"
                    ));
                }
                info.push_str(", federation='', fed_id=0, fed_state=0, features=''");
                tx.exec_drop(
                    "insert into txn_table (timestamp, action, name, actor, info) \
                     values (?, ?, ?, ?, ?)",
                    (t, TXN_ADD_CLUSTERS, cluster, &actor, info),
                )
                .await?;
                if let Some(root_id) = user_assoc {
                    // root's own association under the root account; stock
                    // keeps it from being added to (BLOCK_ADD).
                    tx.exec_drop(
                        format!(
                            "insert into {assoc} (creation_time, mod_time, is_def, flags, user, \
                             acct, shares, id_parent, lineage) values (?, ?, 1, ?, 'root', \
                             'root', 1, ?, '/0-root/') on duplicate key update deleted = 0, \
                             is_def = 1, flags = values(flags), id_parent = values(id_parent), \
                             lineage = values(lineage), mod_time = values(mod_time), \
                             id_assoc = last_insert_id(id_assoc)"
                        ),
                        (t, t, ASSOC_FLAG_BLOCK_ADD, root_id),
                    )
                    .await?;
                    let id = tx.last_insert_id().unwrap_or(0);
                    tx.exec_drop(
                        "insert into txn_table (timestamp, action, name, cluster, actor, info) \
                         values (?, ?, ?, ?, ?, ?)",
                        (
                            t,
                            TXN_ADD_ASSOCS,
                            format!("id_assoc={id}"),
                            cluster,
                            &actor,
                            format!(
                                "mod_time={t}, acct='root', user='root', `partition`='', \
                                 id_parent='{root_id}', lineage='/0-root/', shares=1, \
                                 grp_jobs=NULL, grp_jobs_accrue=NULL, grp_submit_jobs=NULL, \
                                 grp_wall=NULL, is_def=1, max_jobs=NULL, max_jobs_accrue=NULL, \
                                 min_prio_thresh=NULL, max_submit_jobs=NULL, max_wall_pj=NULL, \
                                 priority=NULL, def_qos_id=NULL, flags={ASSOC_FLAG_BLOCK_ADD}, \
                                 qos='', delta_qos=''"
                            ),
                        ),
                    )
                    .await?;
                }
                Ok(())
            })
        },
    )
    .await
}

/// DBD_CLUSTER_TRES: the cluster's TRES and node names as an event with
/// no node (`as_mysql_cluster_tres`). ACCOUNTING_FIRST_REG the first
/// time, and *_CHANGE_DB when they changed, so that the controller sends
/// its state again.
pub async fn cluster_tres(db: &Db, cluster: &str, m: &DbdClusterTresMsg) -> Result<Done, DbError> {
    let event = table(cluster, &EVENT_TABLE)?;
    db.txn("cluster_tres", &(event.as_str(), m), |tx, &(event, m)| {
        Box::pin(async move {
            let nodes = m.cluster_nodes.as_deref().unwrap_or("");
            let row: Option<(String, String)> = tx
                .query_first(format!(
                    "select tres, cluster_nodes from {event} where time_end = 0 and \
                     node_name = '' and state = 0 limit 1"
                ))
                .await?;
            let Some(tres) = m.tres_str.as_deref() else {
                // Nothing to record (stock would hand back what it has).
                return Ok(Done::OK);
            };
            let mut end_disconnect = true;
            let response = match &row {
                None => ACCOUNTING_FIRST_REG,
                Some((old_tres, old_nodes)) => {
                    let r = if old_tres != tres {
                        if old_nodes != nodes {
                            ACCOUNTING_NODES_CHANGE_DB
                        } else {
                            ACCOUNTING_TRES_CHANGE_DB
                        }
                    } else if old_nodes != nodes {
                        ACCOUNTING_NODES_CHANGE_DB
                    } else {
                        0
                    };
                    if r != 0 {
                        tx.exec_drop(
                            format!("update {event} set time_end = ? where time_end = 0"),
                            (m.event_time,),
                        )
                        .await?;
                        end_disconnect = false;
                    }
                    r
                }
            };
            if response != 0 {
                tx.exec_drop(
                    format!(
                        "insert into {event} (cluster_nodes, tres, time_start, reason) \
                         values (?, ?, ?, 'Cluster Registered TRES') \
                         on duplicate key update time_end = 0, tres = values(tres)"
                    ),
                    (nodes, tres, m.event_time),
                )
                .await?;
            }
            if end_disconnect {
                // Ends the "slurmctld disconnect" down event, if any.
                tx.exec_drop(
                    format!(
                        "update {event} set time_end = ? where time_end = 0 and state = ? \
                         and node_name = ''"
                    ),
                    (m.event_time, NODE_STATE_DOWN),
                )
                .await?;
            }
            Ok(Done::rc(response))
        })
    })
    .await
}

/// DBD_NODE_STATE: a node's down (or drain) and up events.
pub async fn node_state(
    db: &Db,
    cluster: &str,
    slurm_user: u32,
    m: &DbdNodeStateMsg,
) -> Result<Done, DbError> {
    let event = table(cluster, &EVENT_TABLE)?;
    // Without TRES a node can only come up.
    let new_state = if m.tres_str.is_none() && m.new_state != node_state::UPDATE {
        node_state::UP
    } else {
        m.new_state
    };
    if !matches!(
        new_state,
        node_state::UP | node_state::DOWN | node_state::UPDATE
    ) {
        return Ok(Done::err(
            slurm_wire::errno::SLURM_ERROR,
            "DBD_NODE_STATE message has invalid new_state",
        ));
    }
    let name = m.hostlist.as_deref().unwrap_or("");
    db.txn(
        "node_state",
        &(event.as_str(), name, m),
        |tx, &(event, name, m)| {
            Box::pin(async move {
                match new_state {
                    node_state::UP => node_up(tx, event, name, m.event_time).await?,
                    node_state::DOWN => {
                        let reason = m.reason.as_deref().unwrap_or("");
                        let tres = m.tres_str.as_deref().unwrap_or("");
                        node_down(
                            tx,
                            event,
                            name,
                            m.state,
                            tres,
                            m.event_time,
                            reason,
                            m.reason_uid,
                        )
                        .await?
                    }
                    _ => {
                        let seen: Option<u64> = tx
                            .exec_first(
                                format!(
                                    "select time_start from {event} where node_name = ? and \
                                 (state & ?) limit 1"
                                ),
                                (name, NODE_STATE_POWERED_DOWN),
                            )
                            .await?;
                        if seen.is_none() {
                            // A first event for the node, ended at once.
                            let t = now();
                            let tres = m.tres_str.as_deref().unwrap_or("");
                            node_down(tx, event, name, m.state, tres, t, "node-update", slurm_user)
                                .await?;
                            node_up(tx, event, name, t).await?;
                        }
                        tx.exec_drop(
                            format!(
                                "update {event} set extra = ?, instance_id = ?, instance_type = ? \
                             where node_name = ? and (state & ?) order by time_start desc limit 1"
                            ),
                            (
                                m.extra.as_deref().unwrap_or(""),
                                m.instance_id.as_deref().unwrap_or(""),
                                m.instance_type.as_deref().unwrap_or(""),
                                name,
                                NODE_STATE_POWERED_DOWN,
                            ),
                        )
                        .await?;
                    }
                }
                Ok(Done::OK)
            })
        },
    )
    .await
}

async fn node_up(
    tx: &mut mysql_async::Transaction<'static>,
    event: &str,
    name: &str,
    time: i64,
) -> Result<(), DbError> {
    tx.exec_drop(
        format!("update {event} set time_end = ? where time_end = 0 and node_name = ?"),
        (time, name),
    )
    .await?;
    Ok(())
}

/// `as_mysql_node_down`: nothing when the open event already says the
/// same; the reason updated when it began at the same second; else the
/// open event ended and a new one begun.
#[allow(clippy::too_many_arguments)]
async fn node_down(
    tx: &mut mysql_async::Transaction<'static>,
    event: &str,
    name: &str,
    state: u32,
    tres: &str,
    time: i64,
    reason: &str,
    reason_uid: u32,
) -> Result<(), DbError> {
    let open: Option<(u32, String, i64)> = tx
        .exec_first(
            format!(
                "select state, reason, time_start from {event} where time_end = 0 and \
                 node_name = ?"
            ),
            (name,),
        )
        .await?;
    if let Some((old_state, old_reason, start)) = open {
        if old_state == state && old_reason.eq_ignore_ascii_case(reason) {
            return Ok(());
        }
        if start == time {
            tx.exec_drop(
                format!("update {event} set reason = ? where time_start = ? and node_name = ?"),
                (reason, time, name),
            )
            .await?;
            return Ok(());
        }
    }
    node_up(tx, event, name, time).await?;
    tx.exec_drop(
        format!(
            "insert into {event} (node_name, state, tres, time_start, reason, reason_uid) \
             values (?, ?, ?, ?, ?, ?) on duplicate key update time_end = 0"
        ),
        (name, state, tres, time, reason, reason_uid),
    )
    .await?;
    Ok(())
}
