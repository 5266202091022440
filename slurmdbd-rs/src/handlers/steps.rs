//! DBD_STEP_START and DBD_STEP_COMPLETE, stored as stock's
//! `as_mysql_step_start` / `as_mysql_step_complete` store them; the
//! usage columns come from the step's jobacctinfo.

use super::common::{job_state, signalled, Cols, Done, INFINITE64, SIG_OOM};
use super::jobs::{derived_ec_term, job_row, sent_index, JobTables};
use crate::db::{Db, DbError};
use mysql_async::prelude::Queryable;
use slurm_wire::dbd::{DbdJobStartMsg, DbdStepCompMsg, DbdStepStartMsg};
use slurm_wire::msg::jobacct::JobAcctInfoData;
use slurm_wire::types::StepId;
use slurm_wire::ProtocolVersion;

/// DBD_STEP_START: the step's row (started again if it was).
pub async fn step_start(
    db: &Db,
    v: ProtocolVersion,
    t: &JobTables,
    m: &DbdStepStartMsg,
) -> Result<Done, DbError> {
    let implied = DbdJobStartMsg {
        job_id: m.step_id.job_id,
        assoc_id: m.assoc_id,
        nodes: m.nodes.clone(),
        node_inx: m.node_inx.clone(),
        // The job's start, or usage would be rolled up from its submission.
        start_time: m.start_time,
        submit_time: m.job_submit_time,
        array_task_id: super::common::NO_VAL,
        db_index: m.db_index,
        ..Default::default()
    };
    // A release that does not send it: the reader takes JOB_RUNNING.
    let state = if v >= ProtocolVersion::V26_05 {
        m.state
    } else {
        job_state::RUNNING
    };
    db.txn("step_start", &(t, m, &implied), |tx, &(t, m, implied)| {
        Box::pin(async move {
            let db_index = job_row(tx, v, t, sent_index(m.db_index), implied).await?;
            let mut c = Cols::default();
            c.set("job_db_inx", db_index)
                .set("id_step", m.step_id.step_id as i32)
                .set("step_het_comp", m.step_id.step_het_comp)
                .set("time_start", m.start_time)
                .set("timelimit", m.time_limit)
                .set("step_name", m.name.as_deref().unwrap_or(""))
                .set("state", state)
                .set("tres_alloc", m.tres_alloc_str.as_deref().unwrap_or(""))
                .set("nodes_alloc", m.node_cnt)
                .set("task_cnt", m.total_tasks)
                .set("nodelist", m.nodes.as_deref().unwrap_or(""))
                .set("node_inx", m.node_inx.as_deref())
                .set("task_dist", m.task_dist)
                .set("req_cpufreq", m.req_cpufreq_max)
                .set("req_cpufreq_min", m.req_cpufreq_min)
                .set("req_cpufreq_gov", m.req_cpufreq_gov)
                .some("cwd", &m.cwd)
                .some("std_err", &m.std_err)
                .some("std_in", &m.std_in)
                .some("std_out", &m.std_out)
                .some("submit_line", &m.submit_line)
                .some("container", &m.container);
            let (sql, vals) = c.upsert(
                &t.step,
                &[
                    "job_db_inx",
                    "id_step",
                    "step_het_comp",
                    "time_start",
                    "step_name",
                ],
                &[],
                &["time_end = 0"],
            );
            tx.exec_drop(sql, vals).await?;
            Ok(Done::OK)
        })
    })
    .await
}

/// `_average_tres_usage`: `id=count/tasks` for each TRES with a count.
pub fn tres_usage(ids: &[u32], counts: &[u64], tasks: u64) -> String {
    if tasks == 0 {
        return String::new();
    }
    ids.iter()
        .zip(counts)
        .filter(|(_, &c)| c != INFINITE64)
        .map(|(id, c)| format!("{id}={}", c / tasks))
        .collect::<Vec<_>>()
        .join(",")
}

/// The step's end state when the controller sent one still running:
/// from its exit status, as stock derives it.
pub fn end_state(state: u16, exit_code: u32) -> (u32, bool) {
    let s = u32::from(state) & job_state::BASE;
    if s >= job_state::COMPLETE {
        return (s, false);
    }
    if exit_code == SIG_OOM {
        (job_state::OOM, false)
    } else if signalled(exit_code) {
        (job_state::CANCELLED, false)
    } else if exit_code != 0 {
        (job_state::FAILED, false)
    } else {
        // A clean end: nobody killed it.
        (job_state::COMPLETE, true)
    }
}

/// The usage columns of a step (tres_usage_* and CPU times).
fn usage(c: &mut Cols, a: &JobAcctInfoData, tasks: u32) {
    let ids = &a.tres_ids;
    let one = |v: &[u64]| tres_usage(ids, v, 1);
    let tasks = u64::from(tasks);
    c.set("user_sec", a.user_cpu_sec)
        .set("user_usec", a.user_cpu_usec)
        .set("sys_sec", a.sys_cpu_sec)
        .set("sys_usec", a.sys_cpu_usec)
        .set("act_cpufreq", f64::from(a.act_cpufreq))
        .set("consumed_energy", a.consumed_energy)
        .set(
            "tres_usage_in_ave",
            tres_usage(ids, &a.tres_usage_in_tot, tasks),
        )
        .set(
            "tres_usage_out_ave",
            tres_usage(ids, &a.tres_usage_out_tot, tasks),
        )
        .set("tres_usage_in_max", one(&a.tres_usage_in_max))
        .set("tres_usage_in_max_taskid", one(&a.tres_usage_in_max_taskid))
        .set("tres_usage_in_max_nodeid", one(&a.tres_usage_in_max_nodeid))
        .set("tres_usage_in_min", one(&a.tres_usage_in_min))
        .set("tres_usage_in_min_taskid", one(&a.tres_usage_in_min_taskid))
        .set("tres_usage_in_min_nodeid", one(&a.tres_usage_in_min_nodeid))
        .set("tres_usage_in_tot", one(&a.tres_usage_in_tot))
        .set("tres_usage_out_max", one(&a.tres_usage_out_max))
        .set(
            "tres_usage_out_max_taskid",
            one(&a.tres_usage_out_max_taskid),
        )
        .set(
            "tres_usage_out_max_nodeid",
            one(&a.tres_usage_out_max_nodeid),
        )
        .set("tres_usage_out_min", one(&a.tres_usage_out_min))
        .set(
            "tres_usage_out_min_taskid",
            one(&a.tres_usage_out_min_taskid),
        )
        .set(
            "tres_usage_out_min_nodeid",
            one(&a.tres_usage_out_min_nodeid),
        )
        .set("tres_usage_out_tot", one(&a.tres_usage_out_tot));
}

/// DBD_STEP_COMPLETE: the step's end, state, exit code and usage; the
/// job's TRES and derived exit code with it.
pub async fn step_complete(
    db: &Db,
    v: ProtocolVersion,
    t: &JobTables,
    m: &DbdStepCompMsg,
) -> Result<Done, DbError> {
    let implied = DbdJobStartMsg {
        job_id: m.step_id.job_id,
        assoc_id: m.assoc_id,
        start_time: m.start_time,
        submit_time: m.job_submit_time,
        tres_alloc_str: m.job_tres_alloc_str.clone(),
        array_task_id: super::common::NO_VAL,
        db_index: m.db_index,
        ..Default::default()
    };
    db.txn(
        "step_complete",
        &(t, m, &implied),
        |tx, &(t, m, implied)| {
            Box::pin(async move {
                let db_index = job_row(tx, v, t, sent_index(m.db_index), implied).await?;
                let (state, clean) = end_state(m.state, m.exit_code);
                let mut c = Cols::default();
                c.set("time_end", m.end_time)
                    .set("state", state)
                    .set("exit_code", m.exit_code as i32);
                let requid = (!clean && m.req_uid != u32::MAX).then_some(m.req_uid);
                c.set("kill_requid", requid);
                if let Some(a) = &m.jobacct.0 {
                    usage(&mut c, a, m.total_tasks);
                }
                // A controller that sends the job's sluid names the row by it.
                let row = if m.step_id.sluid != 0 {
                    m.step_id.sluid
                } else {
                    db_index
                };
                let (sql, vals) = c.update(
                    &t.step,
                    &[],
                    &[],
                    "job_db_inx = ? and id_step = ? and step_het_comp = ?",
                    vec![
                        row.into(),
                        (m.step_id.step_id as i32).into(),
                        m.step_id.step_het_comp.into(),
                    ],
                );
                tx.exec_drop(sql, vals).await?;
                let mut j = Cols::default();
                if let Some(tres) = &m.job_tres_alloc_str {
                    j.set("tres_alloc", tres.as_str())
                        .term(derived_ec_term(m.exit_code), m.exit_code);
                } else if m.exit_code != 0
                    && m.step_id.step_id != StepId::BATCH_SCRIPT
                    && m.step_id.step_id != StepId::EXTERN_CONT
                {
                    j.term(derived_ec_term(m.exit_code), m.exit_code);
                } else {
                    return Ok(Done::OK);
                }
                let (sql, vals) =
                    j.update(&t.job, &[], &[], "job_db_inx = ?", vec![db_index.into()]);
                tx.exec_drop(sql, vals).await?;
                Ok(Done::OK)
            })
        },
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_strings_skip_unset_counts_and_divide_by_tasks() {
        assert_eq!(tres_usage(&[1, 2, 6], &[10, INFINITE64, 7], 1), "1=10,6=7");
        assert_eq!(tres_usage(&[1, 2], &[10, 5], 2), "1=5,2=2");
        assert_eq!(tres_usage(&[1], &[10], 0), "");
        // More ids than counts (a hostile sender): only the pairs.
        assert_eq!(tres_usage(&[1, 2, 3], &[4], 1), "1=4");
    }

    #[test]
    fn a_running_step_ends_by_its_exit_status() {
        assert_eq!(end_state(1, 0), (job_state::COMPLETE, true));
        assert_eq!(end_state(1, 1 << 8), (job_state::FAILED, false));
        assert_eq!(end_state(1, 9), (job_state::CANCELLED, false));
        assert_eq!(end_state(1, SIG_OOM), (job_state::OOM, false));
        // An end state the controller decided stays.
        assert_eq!(end_state(6, 0), (6, false));
    }
}
