//! DBD_JOB_START, DBD_JOB_HEAVY, DBD_JOB_COMPLETE and DBD_JOB_SUSPEND,
//! stored as stock's `as_mysql_job.c` stores them (26.05's statements; a
//! 22.05 controller's jobs, which come without a `db_index`, get the
//! table's auto-increment index as 22.05's dbd gave them).

use super::common::{
    job_state, table, Cols, Done, JOB_FLAG_START_R, JOB_SEND_ENV, JOB_SEND_SCRIPT, NO_VAL,
    NO_VAL64, SIG_OOM,
};
use crate::db::tables::{JOB_ENV_TABLE, JOB_SCRIPT_TABLE, JOB_TABLE, STEP_TABLE, SUSPEND_TABLE};
use crate::db::{Db, DbError};
use mysql_async::prelude::Queryable;
use mysql_async::Transaction;
use slurm_wire::dbd::{
    DbdIdRcMsg, DbdJobCompMsg, DbdJobHeavyMsg, DbdJobStartMsg, DbdJobSuspendMsg,
};
use slurm_wire::errno::SLURM_ERROR;
use slurm_wire::ProtocolVersion;

/// The cluster's job tables, named once per message.
#[derive(Debug, Clone)]
pub struct JobTables {
    pub job: String,
    pub env: String,
    pub script: String,
    pub step: String,
    pub suspend: String,
}

impl JobTables {
    pub fn of(cluster: &str) -> Result<Self, DbError> {
        Ok(JobTables {
            job: table(cluster, &JOB_TABLE)?,
            env: table(cluster, &JOB_ENV_TABLE)?,
            script: table(cluster, &JOB_SCRIPT_TABLE)?,
            step: table(cluster, &STEP_TABLE)?,
            suspend: table(cluster, &SUSPEND_TABLE)?,
        })
    }
}

/// A `db_index` as the message carries it: NO_VAL64 (and 0) is none.
pub fn sent_index(i: u64) -> u64 {
    if i == NO_VAL64 {
        0
    } else {
        i
    }
}

/// `job_exclusive_display_string`: JOB_EXCLUSIVE_* as stored.
fn exclusive_text(v: u8) -> &'static str {
    match v {
        1 => "NODE",
        2 => "USER",
        3 => "MCS",
        4 => "TOPO",
        _ => "NO",
    }
}

/// `job_oversubscribe_string`.
fn oversubscribe_text(v: u8) -> &'static str {
    match v {
        1 => "YES",
        2 => "OK",
        _ => "NO",
    }
}

/// DBD_JOB_START: the job's row, inserted or brought up to date; the
/// answer gives its `db_index` and asks for the environment and script
/// when their hashes are new.
pub async fn job_start(
    db: &Db,
    v: ProtocolVersion,
    t: &JobTables,
    m: &DbdJobStartMsg,
) -> DbdIdRcMsg {
    let r = db
        .txn("job_start", &(t, m), |tx, &(t, m)| {
            Box::pin(async move { start_in(tx, v, t, m).await })
        })
        .await;
    match r {
        Ok((db_index, flags)) => DbdIdRcMsg {
            job_id: m.job_id,
            db_index,
            flags,
            return_code: 0,
        },
        Err(e) => {
            tracing::warn!(job = m.job_id, "DBD_JOB_START: {e}");
            DbdIdRcMsg {
                job_id: m.job_id,
                db_index: sent_index(m.db_index),
                flags: 0,
                return_code: SLURM_ERROR as u32,
            }
        }
    }
}

/// A hash's row in the env or script table; its index, and whether it is
/// new (the controller then sends the text).
async fn hash_inx(
    tx: &mut Transaction<'static>,
    table: &str,
    col: &'static str,
    hash: &str,
) -> Result<(u64, bool), DbError> {
    tx.exec_drop(
        format!(
            "insert into {table} ({col}) values (?) on duplicate key update \
             last_used = values(last_used), hash_inx = last_insert_id(hash_inx)"
        ),
        (hash,),
    )
    .await?;
    let new = tx.affected_rows() == 1;
    Ok((tx.last_insert_id().unwrap_or(0), new))
}

/// `as_mysql_job_start` inside a transaction: the job's `db_index` and the
/// ID_RC flags.
pub async fn start_in(
    tx: &mut Transaction<'static>,
    v: ProtocolVersion,
    t: &JobTables,
    m: &DbdJobStartMsg,
) -> Result<(u64, u64), DbError> {
    let resizing = m.job_state & job_state::RESIZING != 0;
    let (begin, submit, start) = if resizing {
        (m.eligible_time, m.eligible_time, m.eligible_time)
    } else {
        (m.eligible_time, m.submit_time, m.start_time)
    };
    if submit == 0 {
        return Err(DbError::Schema(format!(
            "job {} has no submit time: not recorded",
            m.job_id
        )));
    }
    let state = m.job_state & !job_state::RESIZING & job_state::BASE;
    let name = m
        .name
        .as_deref()
        .filter(|n| !n.is_empty())
        .unwrap_or("allocation");
    let nodes = m
        .nodes
        .as_deref()
        .filter(|n| !n.is_empty())
        .unwrap_or("None assigned");
    let array_task = if m.array_job_id != 0 {
        m.array_task_id
    } else {
        NO_VAL
    };
    let het_offset = if m.het_job_id != 0 {
        m.het_job_offset
    } else {
        NO_VAL
    };
    let db_index = sent_index(m.db_index);
    // 24.11 on, the controller marks jobs whose start we have; before, a
    // job with a db_index is one.
    let in_db = if v >= ProtocolVersion::V24_11 {
        m.db_flags & JOB_FLAG_START_R != 0
    } else {
        db_index != 0
    };
    let exclusive = exclusive_text(m.exclusive);
    let oversubscribe = oversubscribe_text(m.oversubscribe);
    // Columns both statements set when the message has them.
    let optional = |c: &mut Cols| {
        c.some("mcs_label", &m.mcs_label)
            .some("account", &m.account)
            .some("partition", &m.partition)
            .some("wckey", &m.wckey)
            .some("node_inx", &m.node_inx)
            .some("qos_req", &m.qos_req);
        match &m.array_task_str {
            Some(s) => {
                c.set("array_task_str", s.as_str())
                    .set("array_max_tasks", m.array_max_tasks)
                    .set("array_task_pending", m.array_task_pending);
            }
            None => {
                c.set("array_task_str", mysql_async::Value::NULL)
                    .set("array_task_pending", 0u32);
            }
        }
        c.some("tres_alloc", &m.tres_alloc_str)
            .some("tres_req", &m.tres_req_str)
            .some("work_dir", &m.work_dir)
            .some("constraints", &m.constraints)
            .some("std_err", &m.std_err)
            .some("std_in", &m.std_in)
            .some("std_out", &m.std_out)
            .some("submit_line", &m.submit_line)
            .some("container", &m.container)
            .some("licenses", &m.licenses);
        if m.segment_size != 0 {
            c.set("segment_size", m.segment_size);
        }
        c.some("resv_req", &m.resv_req);
    };
    if in_db {
        let mut c = Cols::default();
        c.set("nodelist", nodes);
        optional(&mut c);
        c.set("time_start", start)
            .set("job_name", name)
            .set("state", state)
            .set("nodes_alloc", m.alloc_nodes)
            .set("id_qos", m.qos_id)
            .set("id_assoc", m.assoc_id)
            .set("id_resv", m.resv_id)
            .set("timelimit", m.timelimit)
            .set("mem_req", m.req_mem)
            .set("id_array_job", m.array_job_id)
            .set("id_array_task", array_task)
            .set("het_job_id", m.het_job_id)
            .set("het_job_offset", het_offset)
            .set("flags", m.db_flags)
            .set("state_reason_prev", m.state_reason_prev)
            .set("time_eligible", begin)
            .set("restart_cnt", m.restart_cnt)
            .set("exclusive", exclusive)
            .set("oversubscribe", oversubscribe);
        let (sql, vals) = c.update(
            &t.job,
            &["state", "restart_cnt"],
            &["mod_time = unix_timestamp()"],
            "job_db_inx = ?",
            vec![db_index.into()],
        );
        tx.exec_drop(sql, vals).await?;
        return Ok((db_index, 0));
    }
    let mut bit_flags = 0u64;
    let mut env_inx = 0;
    if let Some(h) = &m.env_hash {
        let (i, new) = hash_inx(tx, &t.env, "env_hash", h).await?;
        env_inx = i;
        if new {
            bit_flags |= JOB_SEND_ENV;
        }
    }
    let mut script_inx = 0;
    if let Some(h) = &m.script_hash {
        let (i, new) = hash_inx(tx, &t.script, "script_hash", h).await?;
        script_inx = i;
        if new {
            bit_flags |= JOB_SEND_SCRIPT;
        }
    }
    let mut c = Cols::default();
    c.set("job_db_inx", db_index)
        .set("id_job", m.job_id)
        .set("sluid", m.sluid)
        .set("id_array_job", m.array_job_id)
        .set("id_array_task", array_task)
        .set("het_job_id", m.het_job_id)
        .set("het_job_offset", het_offset)
        .set("id_assoc", m.assoc_id)
        .set("id_qos", m.qos_id)
        .set("id_user", m.uid)
        .set("id_group", m.gid)
        .set("nodelist", nodes)
        .set("id_resv", m.resv_id)
        .set("timelimit", m.timelimit)
        .set("time_eligible", begin)
        .set("time_submit", submit)
        .set("time_start", start)
        .set("job_name", name)
        .set("state", state)
        .set("priority", m.priority)
        .set("cpus_req", m.req_cpus)
        .set("nodes_alloc", m.alloc_nodes)
        .set("mem_req", m.req_mem)
        .set("flags", m.db_flags | JOB_FLAG_START_R)
        .set("state_reason_prev", m.state_reason_prev)
        .set("env_hash_inx", env_inx)
        .set("script_hash_inx", script_inx)
        .set("restart_cnt", m.restart_cnt)
        .set("exclusive", exclusive)
        .set("oversubscribe", oversubscribe);
    optional(&mut c);
    // With no index of its own the row takes the next one, and a known
    // (id_job, time_submit) keeps its own.
    let index_term = if db_index == 0 {
        "job_db_inx = last_insert_id(job_db_inx)"
    } else {
        "job_db_inx = values(job_db_inx)"
    };
    let (sql, vals) = c.upsert(
        &t.job,
        &["job_db_inx", "id_job", "sluid"],
        &["state", "restart_cnt"],
        &[index_term, "mod_time = unix_timestamp()"],
    );
    tx.exec_drop(sql, vals).await?;
    let db_index = if db_index == 0 {
        tx.last_insert_id().unwrap_or(0)
    } else {
        db_index
    };
    Ok((db_index, bit_flags))
}

/// The job's row for a message that names it by `db_index` (0: none) or
/// by (id_job, time_submit); a job not heard of yet is started from what
/// the message says, as stock does.
pub async fn job_row(
    tx: &mut Transaction<'static>,
    v: ProtocolVersion,
    t: &JobTables,
    db_index: u64,
    implied: &DbdJobStartMsg,
) -> Result<u64, DbError> {
    if db_index != 0 {
        return Ok(db_index);
    }
    let found: Option<u64> = tx
        .exec_first(
            format!(
                "select job_db_inx from {} where time_submit = ? and id_job = ?",
                t.job
            ),
            (implied.submit_time, implied.job_id),
        )
        .await?;
    match found {
        Some(i) => Ok(i),
        None => Ok(start_in(tx, v, t, implied).await?.0),
    }
}

/// DBD_JOB_HEAVY: the environment and script texts, stored under their
/// hashes (which a job start made).
pub async fn job_heavy(db: &Db, t: &JobTables, m: &DbdJobHeavyMsg) -> Result<Done, DbError> {
    db.txn("job_heavy", &(t, m), |tx, &(t, m)| {
        Box::pin(async move {
            if let (Some(h), Some(env)) = (&m.env_hash, m.env.as_deref().filter(|e| !e.is_empty()))
            {
                tx.exec_drop(
                    format!("update {} set env_vars = ? where env_hash = ?", t.env),
                    (env, h),
                )
                .await?;
            }
            if let (Some(h), Some(script)) = (&m.script_hash, &m.script) {
                tx.exec_drop(
                    format!(
                        "update {} set batch_script = ? where script_hash = ?",
                        t.script
                    ),
                    (script, h),
                )
                .await?;
            }
            Ok(Done::OK)
        })
    })
    .await
}

/// `derived_ec` after a step or job ended with `exit_code`: an OOM is
/// recorded as is, else the worst so far.
pub fn derived_ec_term(exit_code: u32) -> &'static str {
    if exit_code == SIG_OOM {
        "derived_ec = ?"
    } else {
        "derived_ec = greatest(?, derived_ec)"
    }
}

/// DBD_JOB_COMPLETE: the job's end, state and exit codes.
pub async fn job_complete(
    db: &Db,
    v: ProtocolVersion,
    t: &JobTables,
    m: &DbdJobCompMsg,
) -> Result<Done, DbError> {
    let resizing = m.job_state & job_state::RESIZING != 0;
    let (end, state) = if resizing {
        (m.end_time, job_state::RESIZING)
    } else {
        let end = match (m.end_time, m.start_time) {
            (0, 0) => {
                tracing::warn!(job = m.job_id, "DBD_JOB_COMPLETE: the job never started");
                return Ok(Done::OK);
            }
            (0, s) => s,
            (e, _) => e,
        };
        let state = if m.job_state & job_state::REQUEUE != 0 {
            job_state::REQUEUE
        } else if m.job_state & job_state::REVOKED != 0 {
            job_state::REVOKED
        } else {
            m.job_state & job_state::BASE
        };
        (end, state)
    };
    let implied = DbdJobStartMsg {
        job_id: m.job_id,
        assoc_id: m.assoc_id,
        job_state: m.job_state,
        nodes: m.nodes.clone(),
        start_time: m.start_time,
        submit_time: m.submit_time,
        eligible_time: if resizing { m.end_time } else { 0 },
        tres_alloc_str: m.tres_alloc_str.clone(),
        array_task_id: NO_VAL,
        db_index: m.db_index,
        ..Default::default()
    };
    db.txn("job_complete", &(t, m, &implied), |tx, &(t, m, implied)| {
        Box::pin(async move {
            let mut db_index = sent_index(m.db_index);
            if db_index != 0 {
                let there: Option<u64> = tx
                    .exec_first(
                        format!("select job_db_inx from {} where job_db_inx = ?", t.job),
                        (db_index,),
                    )
                    .await?;
                if there.is_none() {
                    db_index = 0;
                }
            }
            let db_index = job_row(tx, v, t, db_index, implied).await?;
            let mut c = Cols::default();
            c.set("time_end", end).set("state", state);
            if m.derived_ec != NO_VAL {
                c.term(derived_ec_term(m.derived_ec), m.derived_ec);
            }
            c.some("tres_alloc", &m.tres_alloc_str)
                .some("derived_es", &m.comment)
                .some("admin_comment", &m.admin_comment)
                .some("system_comment", &m.system_comment)
                .some("extra", &m.extra)
                .some("failed_node", &m.failed_node);
            // 1 is Slurm's own failure, not a signal.
            let exit = if m.exit_code == 1 { 256 } else { m.exit_code };
            let requid = (m.req_uid != u32::MAX).then_some(m.req_uid);
            c.set("exit_code", exit).set("kill_requid", requid);
            let (sql, vals) = c.update(
                &t.job,
                &[],
                &["mod_time = unix_timestamp()"],
                "job_db_inx = ?",
                vec![db_index.into()],
            );
            tx.exec_drop(sql, vals).await?;
            Ok(Done::OK)
        })
    })
    .await
}

/// DBD_JOB_SUSPEND: the job's and its running steps' suspended time, and
/// a row per suspension.
pub async fn job_suspend(
    db: &Db,
    v: ProtocolVersion,
    t: &JobTables,
    m: &DbdJobSuspendMsg,
) -> Result<Done, DbError> {
    let implied = DbdJobStartMsg {
        job_id: m.job_id,
        assoc_id: m.assoc_id,
        job_state: m.job_state,
        submit_time: m.submit_time,
        array_task_id: NO_VAL,
        db_index: m.db_index,
        ..Default::default()
    };
    db.txn("job_suspend", &(t, m, &implied), |tx, &(t, m, implied)| {
        Box::pin(async move {
            let db_index = job_row(tx, v, t, sent_index(m.db_index), implied).await?;
            let at = m.suspend_time;
            tx.exec_drop(
                format!(
                    "update {} set time_suspended = ? - time_suspended, state = ? \
                     where job_db_inx = ?",
                    t.job
                ),
                (at, m.job_state & job_state::BASE, db_index),
            )
            .await?;
            if m.job_state & job_state::BASE == job_state::SUSPENDED {
                tx.exec_drop(
                    format!(
                        "insert into {} (job_db_inx, id_assoc, time_start, time_end) \
                         values (?, ?, ?, 0)",
                        t.suspend
                    ),
                    (db_index, m.assoc_id, at),
                )
                .await?;
            } else {
                tx.exec_drop(
                    format!(
                        "update {} set time_end = ? where job_db_inx = ? and time_end = 0",
                        t.suspend
                    ),
                    (at, db_index),
                )
                .await?;
            }
            tx.exec_drop(
                format!(
                    "update {} set time_suspended = ? - time_suspended, state = ? \
                     where job_db_inx = ? and time_end = 0",
                    t.step
                ),
                (at, m.job_state, db_index),
            )
            .await?;
            Ok(Done::OK)
        })
    })
    .await
}

/// Jobs ended per transaction by DBD_FLUSH_JOBS (stock's MAX_FLUSH_JOBS).
pub const FLUSH_BATCH: usize = 500;

/// DBD_FLUSH_JOBS: a controller that starts clean ends every job it has
/// not ended, CANCELLED at `event_time` (suspended ones with their
/// suspended time counted), in batches of [`FLUSH_BATCH`].
pub async fn flush_jobs(db: &Db, t: &JobTables, event_time: i64) -> Result<Done, DbError> {
    // A zero time would end nothing and stock would loop for ever.
    let mut at = if event_time > 0 {
        event_time
    } else {
        super::common::now()
    };
    loop {
        let (n, later) = db
            .txn("flush_jobs", t, |tx, t| {
                Box::pin(async move {
                    let open: Vec<(u64, u32, i64)> = tx
                        .query(format!(
                            "select distinct job_db_inx, state, time_suspended from {} \
                             where time_end = 0 limit {FLUSH_BATCH}",
                            t.job
                        ))
                        .await?;
                    let mut at = at;
                    let suspended: Vec<u64> = open
                        .iter()
                        .filter(|j| j.1 == job_state::SUSPENDED)
                        .map(|j| {
                            // The latest suspension, so the count never goes negative.
                            at = at.max(j.2);
                            j.0
                        })
                        .collect();
                    let all: Vec<u64> = open.iter().map(|j| j.0).collect();
                    let marks = |n: usize| vec!["?"; n].join(", ");
                    if !suspended.is_empty() {
                        let inx = marks(suspended.len());
                        for (table, cond) in [
                            (&t.job, ""),
                            (&t.step, ""),
                            (&t.suspend, " and time_end = 0"),
                        ] {
                            let set = if table == &t.suspend {
                                "time_end = ?"
                            } else {
                                "time_suspended = ? - time_suspended"
                            };
                            let mut vals: Vec<mysql_async::Value> = vec![at.into()];
                            vals.extend(suspended.iter().map(|&i| i.into()));
                            tx.exec_drop(
                                format!(
                                    "update {table} set {set} where job_db_inx in ({inx}){cond}"
                                ),
                                vals,
                            )
                            .await?;
                        }
                    }
                    if !all.is_empty() {
                        let inx = marks(all.len());
                        for table in [&t.job, &t.step] {
                            let mut vals: Vec<mysql_async::Value> =
                                vec![job_state::CANCELLED.into(), at.into()];
                            vals.extend(all.iter().map(|&i| i.into()));
                            tx.exec_drop(
                                format!(
                                    "update {table} set state = ?, time_end = ? \
                                     where job_db_inx in ({inx})"
                                ),
                                vals,
                            )
                            .await?;
                        }
                    }
                    Ok((open.len(), at))
                })
            })
            .await?;
        at = later;
        if n < FLUSH_BATCH {
            return Ok(Done::OK);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_strings_are_stocks() {
        assert_eq!(exclusive_text(0), "NO");
        assert_eq!(exclusive_text(1), "NODE");
        assert_eq!(exclusive_text(9), "NO");
        assert_eq!(oversubscribe_text(1), "YES");
        assert_eq!(oversubscribe_text(2), "OK");
        assert_eq!(oversubscribe_text(7), "NO");
        assert_eq!(sent_index(NO_VAL64), 0);
        assert_eq!(sent_index(5), 5);
    }
}
