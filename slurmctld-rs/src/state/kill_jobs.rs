//! REQUEST_KILL_JOBS (`scancel --ctld`, 23.11+ clients): the controller
//! picks the jobs by the filters, on the state as it is, and signals each
//! as [`super::Command::Signal`] would. Default scancel filters itself and
//! sends one REQUEST_KILL_JOB per job; this is the other path.

use super::array::parse_job_id_str;
use super::command::{Effect, Reply, Time};
use super::controller::Controller;
use super::error::{errno_of, StateError};
use super::job::Job;
use slurm_wire::errno::*;
use slurm_wire::msg::job::{KillJobsMsg, KillJobsRespJob, SelectedStep};
use slurm_wire::pack::NO_VAL;
use slurm_wire::types::StepId;
use std::collections::BTreeSet;

/// `JOB_END`: no state filter.
const JOB_END: u32 = 12;
/// `KILL_JOBS_VERBOSE`: answer for every job, not only failures.
const KILL_JOBS_VERBOSE: u16 = 1 << 11;

fn selected(job_id: u32) -> SelectedStep {
    SelectedStep {
        step_id: StepId {
            sluid: 0,
            job_id,
            step_id: NO_VAL,
            step_het_comp: NO_VAL,
        },
        array_task_id: NO_VAL,
        het_job_offset: NO_VAL,
        array_bitmap: None,
    }
}

/// The text scancel prints for a failed job (stock sends `slurm_strerror`
/// when it has no more specific message).
fn error_text(rc: i32) -> Option<&'static str> {
    Some(match rc {
        SLURM_SUCCESS => return None,
        ESLURM_ACCESS_DENIED => "Access/permission denied",
        ESLURM_INVALID_JOB_ID => "Invalid job id specified",
        ESLURM_ALREADY_DONE => "Job/step already completing or completed",
        ESLURM_TRANSITION_STATE_NO_UPDATE => "Job can not be altered now, try again later",
        ESLURM_JOB_SCRIPT_MISSING => "Job script not specified",
        ESLURM_JOB_SIGNAL_FAILED => "Cannot signal job",
        _ => "Unspecified error",
    })
}

/// Array tasks one REQUEST_KILL_JOBS may name in all: each gets an
/// answer of its own, so a list of ranges may not grow without end.
pub const MAX_TASKS_PER_REQUEST: usize = 100_000;

fn resp(job_id: u32, rc: i32, msg: Option<String>) -> KillJobsRespJob {
    KillJobsRespJob {
        error_code: rc as u32,
        error_msg: msg.or_else(|| error_text(rc).map(str::to_string)),
        id: selected(job_id),
        real_job_id: job_id,
        sibling_name: None,
    }
}

/// Whether the request names any filter (scancel --ctld needs one).
pub fn has_filter(m: &KillJobsMsg) -> bool {
    m.account.is_some()
        || m.job_name.is_some()
        || !m.jobs_array.is_empty()
        || m.partition.is_some()
        || m.qos.is_some()
        || m.reservation.is_some()
        || (m.state & 0xff) != JOB_END
        || m.user_name.is_some()
        || m.wckey.is_some()
        || m.nodelist.is_some()
}

/// Stock's `job_state_string` of a base state.
fn state_name(base: u32) -> &'static str {
    match base {
        0 => "PENDING",
        1 => "RUNNING",
        2 => "SUSPENDED",
        3 => "COMPLETED",
        4 => "CANCELLED",
        5 => "FAILED",
        6 => "TIMEOUT",
        7 => "NODE_FAIL",
        8 => "PREEMPTED",
        9 => "BOOT_FAIL",
        10 => "DEADLINE",
        11 => "OUT_OF_MEMORY",
        _ => "?",
    }
}

/// A C string as stock's `%s` prints it.
fn or_null(s: Option<&str>) -> &str {
    s.unwrap_or("(null)")
}

/// Why `j` does not match the filters (None: it matches), worded and
/// ordered as stock's `_signal_job_matches_filter`.
fn mismatch(c: &Controller, j: &Job, m: &KillJobsMsg) -> Option<String> {
    if let Some(a) = m.account.as_deref() {
        if j.req.account() != Some(a) {
            return Some(format!(
                "Job account {} != filter account {a}",
                or_null(j.req.account())
            ));
        }
    }
    if let Some(n) = m.job_name.as_deref() {
        if j.name() != Some(n) {
            return Some(format!("Job name {} != filter name {n}", or_null(j.name())));
        }
    }
    if let Some(p) = m.partition.as_deref() {
        let jp = c.conf.partitions[j.part].name();
        if jp != p {
            return Some(format!(
                "Job partition {jp} does not include filter partition {p}"
            ));
        }
    }
    // Without accounting no job has a QOS record, and reservations are
    // not modelled: such filters match no job, as on a stock controller
    // without accounting or reservations.
    if let Some(q) = m.qos.as_deref() {
        return Some(format!("Job qos NULL != filter qos {q}"));
    }
    if let Some(r) = m.reservation.as_deref() {
        if j.req.reservation() != Some(r) {
            return Some(format!(
                "Job reservation {} does not include filter reservation {r}",
                or_null(j.req.reservation())
            ));
        }
    }
    let base = j.state.base_bits();
    if (m.state & 0xff) != JOB_END && base != (m.state & 0xff) {
        return Some(format!(
            "Job state {} != filter state {}",
            state_name(base),
            state_name(m.state & 0xff)
        ));
    }
    if m.user_name.is_some() && j.user.uid != m.user_id {
        return Some(format!(
            "Job user id {} != filter user id {}",
            j.user.uid, m.user_id
        ));
    }
    if let Some(nl) = m.nodelist.as_deref() {
        if j.alloc.is_empty() {
            return Some(format!("Job does not have nodes but filter has nodes {nl}"));
        }
        let want = crate::sched::client_hosts(&c.conf, nl).unwrap_or_default();
        let names: Vec<&str> = j.alloc.iter().map(|a| c.nodes[a.node].name()).collect();
        if !names.iter().any(|n| want.iter().any(|w| w == n)) {
            let nodes = slurm_conf::compress(&names).unwrap_or_else(|_| names.join(","));
            return Some(format!(
                "Job nodes {nodes} does not intersect with filter nodes {nl}"
            ));
        }
    }
    if let Some(w) = m.wckey.as_deref() {
        // `*key` is a default wckey; a filter without `*` matches both.
        let key = j.req.wckey();
        let cmp = match key {
            Some(k) if !w.starts_with('*') => k.strip_prefix('*').unwrap_or(k),
            k => or_null(k),
        };
        if key.is_none() || cmp != w {
            return Some(format!("Job wckey {} != filter wckey {w}", or_null(key)));
        }
    }
    None
}

/// The answer for a job that did not pass the filters (stock appends the
/// error's text to the filter's).
fn filtered_out(job_id: u32, why: String) -> KillJobsRespJob {
    let text = format!(
        "{why}: {}",
        error_text(ESLURM_JOB_SIGNAL_FAILED).unwrap_or_default()
    );
    resp(job_id, ESLURM_JOB_SIGNAL_FAILED, Some(text))
}

/// The id stock reports for task `task` of array `array_job_id`.
fn selected_task(array_job_id: u32, task: u32) -> SelectedStep {
    SelectedStep {
        array_task_id: task,
        ..selected(array_job_id)
    }
}

/// What to act on after the filters.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    /// A job outside any array.
    Job(u32),
    /// Tasks of an array: pending in its meta record or started.
    Tasks { array_job_id: u32, tasks: Vec<u32> },
}

/// `scancel --ctld A` for a whole array: every record of it is judged
/// by the filters, as stock's foreach_job_by_id walks them; the meta
/// record once for all the tasks it still holds (one answer, under the
/// array's id, when it fails), each task record for its task.
fn whole_array(
    snap: &Controller,
    m: &KillJobsMsg,
    array_job_id: u32,
    out: &mut Vec<KillJobsRespJob>,
) -> Option<Target> {
    let mut tasks: Vec<u32> = Vec::new();
    let meta_tasks = snap
        .meta_tasks(array_job_id)
        .map(|p| p.iter().copied().collect::<Vec<u32>>())
        .filter(|p| !p.is_empty());
    if let (Some(held), Some(j)) = (meta_tasks, snap.jobs.get(&array_job_id)) {
        if j.state.is_finished() {
            out.push(resp(array_job_id, ESLURM_ALREADY_DONE, None));
        } else {
            match mismatch(snap, j, m) {
                Some(why) => out.push(filtered_out(array_job_id, why)),
                None => tasks.extend(held),
            }
        }
    }
    let split: BTreeSet<u32> = snap
        .arrays
        .members(array_job_id)
        .into_iter()
        .filter_map(|id| snap.arrays.task_of(id))
        .map(|r| r.task_id)
        .filter(|&t| t != NO_VAL)
        .collect();
    if let Some(Target::Tasks { tasks: t, .. }) = array_tasks(snap, m, array_job_id, &split, out) {
        tasks.extend(t);
    }
    tasks.sort_unstable();
    (!tasks.is_empty()).then_some(Target::Tasks {
        array_job_id,
        tasks,
    })
}

/// The target for record `j` that passed the filters: an array's meta
/// record stands for its pending tasks only, a task record for its task
/// (never the whole array, which a kill by the array's id would be).
fn target_of(snap: &Controller, j: &Job) -> Target {
    match snap.arrays.task_of(j.job_id) {
        Some(r) if r.task_id == NO_VAL => Target::Tasks {
            array_job_id: r.array_job_id,
            tasks: snap
                .arrays
                .metas
                .get(&r.array_job_id)
                .map(|m| m.pending.iter().copied().collect())
                .unwrap_or_default(),
        },
        Some(r) => Target::Tasks {
            array_job_id: r.array_job_id,
            tasks: vec![r.task_id],
        },
        None => Target::Job(j.job_id),
    }
}

/// Joins the task targets of one array into one, in first-seen order.
fn merge(targets: Vec<Target>) -> Vec<Target> {
    let mut out: Vec<Target> = Vec::new();
    for t in targets {
        if let Target::Tasks {
            array_job_id,
            tasks,
        } = &t
        {
            let same = out.iter_mut().find_map(|o| match o {
                Target::Tasks {
                    array_job_id: a,
                    tasks: have,
                } if a == array_job_id => Some(have),
                _ => None,
            });
            if let Some(have) = same {
                have.extend(tasks.iter().copied());
                have.sort_unstable();
                have.dedup();
                continue;
            }
        }
        out.push(t);
    }
    out
}

/// `A_T`, `A_[1-3]` in the job list: the filters apply to the record
/// holding each task (a task still pending in the meta record is judged
/// by it); the tasks that pass are signalled together.
fn array_tasks(
    snap: &Controller,
    m: &KillJobsMsg,
    array_job_id: u32,
    tasks: &std::collections::BTreeSet<u32>,
    out: &mut Vec<KillJobsRespJob>,
) -> Option<Target> {
    let mut pass = Vec::new();
    for &t in tasks {
        let rec = snap
            .arrays
            .find_task(array_job_id, t)
            .and_then(|id| snap.jobs.get(&id));
        let fail = |rc: i32, msg: Option<String>| KillJobsRespJob {
            id: selected_task(array_job_id, t),
            ..resp(array_job_id, rc, msg)
        };
        match rec {
            None => out.push(fail(ESLURM_INVALID_JOB_ID, None)),
            Some(j) if j.state.is_finished() => out.push(fail(ESLURM_ALREADY_DONE, None)),
            Some(j) => match mismatch(snap, j, m) {
                Some(why) => out.push(KillJobsRespJob {
                    id: selected_task(array_job_id, t),
                    ..filtered_out(j.job_id, why)
                }),
                None => pass.push(t),
            },
        }
    }
    (!pass.is_empty()).then_some(Target::Tasks {
        array_job_id,
        tasks: pass,
    })
}

/// The jobs and tasks that pass the filters, to act on; answers for
/// those that do not go to `out`.
fn select(snap: &Controller, m: &KillJobsMsg, out: &mut Vec<KillJobsRespJob>) -> Vec<Target> {
    // Jobs that passed the filters, to act on.
    let mut targets: Vec<Target> = Vec::new();
    let explicit = !m.jobs_array.is_empty();
    if explicit {
        // Array tasks one request may name in all (each gets an answer).
        let mut task_budget = MAX_TASKS_PER_REQUEST;
        for s in m.jobs_array.iter().flatten() {
            match parse_job_id_str(s.trim(), snap.max_array_size()) {
                Err(_) => out.push(resp(0, ESLURM_INVALID_JOB_ID, Some(s.clone()))),
                // Past the request's budget, one answer per string, not
                // one per task it names.
                Ok((array_job_id, Some(tasks))) if tasks.len() > task_budget => {
                    out.push(resp(array_job_id, ESLURM_INVALID_JOB_ID, Some(s.clone())))
                }
                Ok((array_job_id, Some(tasks))) => {
                    task_budget -= tasks.len();
                    targets.extend(array_tasks(snap, m, array_job_id, &tasks, out));
                }
                // A whole array: each task's record is judged, as stock
                // walks every record of the array.
                Ok((id, None)) if snap.arrays.is_array_id(id) => {
                    targets.extend(whole_array(snap, m, id, out));
                }
                Ok((id, None)) => match snap.jobs.get(&id) {
                    None => out.push(resp(id, ESLURM_INVALID_JOB_ID, None)),
                    Some(j) if j.state.is_finished() => {
                        out.push(resp(id, ESLURM_ALREADY_DONE, None))
                    }
                    Some(j) => match mismatch(snap, j, m) {
                        Some(why) => out.push(filtered_out(id, why)),
                        None => targets.push(Target::Job(id)),
                    },
                },
            }
        }
    } else {
        targets = merge(
            snap.jobs
                .values()
                .filter(|j| !j.state.is_finished() && mismatch(snap, j, m).is_none())
                .map(|j| target_of(snap, j))
                .filter(|t| !matches!(t, Target::Tasks { tasks, .. } if tasks.is_empty()))
                .collect(),
        );
    }
    targets
}

impl Controller {
    /// [`super::Command::KillJobs`]: the answer lists the jobs that failed
    /// (every job with `KILL_JOBS_VERBOSE`).
    pub(super) fn kill_jobs(
        &mut self,
        now: Time,
        uid: u32,
        m: &KillJobsMsg,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        if !has_filter(m) {
            return Reply::Err(StateError::SignalJobsInvalid);
        }
        let mut out = Vec::new();
        let targets = select(self, m, &mut out);
        let verbose = m.flags & KILL_JOBS_VERBOSE != 0;
        let flags = m.flags & !KILL_JOBS_VERBOSE;
        for t in targets {
            let job_id = match &t {
                Target::Job(id) => *id,
                Target::Tasks { array_job_id, .. } => *array_job_id,
            };
            let owner = self.jobs.get(&job_id).map(|j| j.user.uid).or_else(|| {
                let first = self.arrays.members(job_id).into_iter().next()?;
                self.jobs.get(&first).map(|j| j.user.uid)
            });
            // A record gone by now: operators only, as for any job not theirs.
            let allowed = match owner {
                Some(owner) => self.conf.owner_or_operator(uid, owner),
                None => self.conf.is_admin(uid),
            };
            if !allowed {
                out.push(resp(job_id, ESLURM_ACCESS_DENIED, None));
                continue;
            }
            let rc = match t {
                Target::Job(id) => self.signal_one(now, uid, id, m.signal, flags, fx).result(),
                Target::Tasks {
                    array_job_id,
                    tasks,
                } => self.signal_tasks(now, uid, array_job_id, tasks, m.signal, flags, fx),
            };
            let rc = errno_of(rc);
            if rc != SLURM_SUCCESS || verbose {
                out.push(resp(job_id, rc, None));
            }
        }
        Reply::KillJobs(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::command::{Command, SignalTarget, SIGKILL};
    use crate::state::req::HotStr;
    use crate::state::testkit::{controller_at, job_id, reg, sparse_desc, submit_desc, user};
    use slurm_wire::msg::job_desc::JobDescMsg;
    use slurm_wire::{Message, ProtocolVersion};

    fn ctrl_with_job(name: &str, uid: u32) -> (Controller, u32) {
        let mut c = controller_at(
            "ClusterName=t\nSlurmctldHost=ctl\nNodeName=n1 CPUs=4 RealMemory=1000\n\
             PartitionName=debug Nodes=n1 Default=YES\nPartitionName=other Nodes=n1\n",
            1,
        );
        let d = JobDescMsg {
            name: Some(name.into()),
            script: Some("#!/bin/sh\n".into()),
            ..sparse_desc()
        };
        let (r, _) = submit_desc(&mut c, 2, user(uid, uid), ProtocolVersion::V24_11, d);
        let job_id = job_id(r);
        (c, job_id)
    }

    /// Registers n1, so that pending jobs start.
    fn register(c: &mut Controller) {
        c.apply(4, reg("n1", 4, 1000));
    }

    fn msg() -> KillJobsMsg {
        KillJobsMsg {
            signal: SIGKILL,
            state: JOB_END,
            ..Default::default()
        }
    }

    #[test]
    fn failed_jobs_carry_stocks_error_text() {
        // scancel prints error_msg as is ("(null)" when absent).
        let r = resp(5, ESLURM_ACCESS_DENIED, None);
        assert_eq!(r.error_msg.as_deref(), Some("Access/permission denied"));
        assert_eq!((r.real_job_id, r.id.step_id.job_id), (5, 5));
        assert_eq!(resp(5, SLURM_SUCCESS, None).error_msg, None);
        let r = resp(
            5,
            ESLURM_JOB_SIGNAL_FAILED,
            Some("Job name a != filter name b".into()),
        );
        assert_eq!(r.error_msg.as_deref(), Some("Job name a != filter name b"));
    }

    #[test]
    fn filters() {
        let (c, id) = ctrl_with_job("a1", 2001);
        let j = &c.jobs[&id];
        assert!(!has_filter(&msg()), "scancel --ctld needs a filter");
        let m = KillJobsMsg {
            job_name: Some("a1".into()),
            ..msg()
        };
        assert!(has_filter(&m));
        assert_eq!(mismatch(&c, j, &m), None);
        let m = KillJobsMsg {
            job_name: Some("b".into()),
            ..msg()
        };
        assert!(mismatch(&c, j, &m).is_some());
        // -u: user_name marks the user filter, user_id holds the uid.
        let m = KillJobsMsg {
            user_name: Some("bob".into()),
            user_id: 2002,
            ..msg()
        };
        assert!(mismatch(&c, j, &m).is_some());
        let m = KillJobsMsg {
            user_name: Some("alice".into()),
            user_id: 2001,
            state: 0, // PENDING
            partition: Some("debug".into()),
            ..msg()
        };
        assert_eq!(mismatch(&c, j, &m), None);
        let m = KillJobsMsg {
            state: 1, // RUNNING
            ..msg()
        };
        assert!(mismatch(&c, j, &m).is_some());
        let m = KillJobsMsg {
            partition: Some("other".into()),
            ..msg()
        };
        assert!(mismatch(&c, j, &m).is_some());
    }

    #[test]
    fn filter_texts_are_stocks() {
        let (mut c, id) = ctrl_with_job("a1", 2001);
        register(&mut c);
        // The job runs on n1.
        assert!(!c.jobs[&id].alloc.is_empty());
        let j = c.jobs[&id].clone();
        let why = |m: KillJobsMsg| mismatch(&c, &j, &m).unwrap_or_default();
        assert_eq!(
            why(KillJobsMsg {
                qos: Some("normal".into()),
                ..msg()
            }),
            "Job qos NULL != filter qos normal"
        );
        assert_eq!(
            why(KillJobsMsg {
                reservation: Some("foo".into()),
                ..msg()
            }),
            "Job reservation (null) does not include filter reservation foo"
        );
        assert_eq!(
            why(KillJobsMsg {
                wckey: Some("zz".into()),
                ..msg()
            }),
            "Job wckey (null) != filter wckey zz"
        );
        assert_eq!(
            why(KillJobsMsg {
                account: Some("acct".into()),
                ..msg()
            }),
            "Job account (null) != filter account acct"
        );
        assert_eq!(
            why(KillJobsMsg { state: 0, ..msg() }),
            "Job state RUNNING != filter state PENDING"
        );
        assert_eq!(
            why(KillJobsMsg {
                nodelist: Some("n2".into()),
                ..msg()
            }),
            "Job nodes n1 does not intersect with filter nodes n2"
        );
        // The answer appends the error's text.
        let r = filtered_out(id, "Job qos NULL != filter qos normal".into());
        assert_eq!(
            r.error_msg.as_deref(),
            Some("Job qos NULL != filter qos normal: Cannot signal job")
        );
        // wckeys: a default key (`*wk`) matches `wk`; `*wk` only itself.
        let mut j = j.clone();
        j.req.set_str(HotStr::wckey, Some("*wk"));
        let wk = |w: &str| KillJobsMsg {
            wckey: Some(w.into()),
            ..msg()
        };
        assert_eq!(mismatch(&c, &j, &wk("wk")), None);
        assert_eq!(mismatch(&c, &j, &wk("*wk")), None);
        j.req.set_str(HotStr::wckey, Some("wk"));
        assert_eq!(mismatch(&c, &j, &wk("wk")), None);
        assert!(mismatch(&c, &j, &wk("*wk")).is_some());
    }

    #[test]
    fn array_expressions_pick_the_tasks_that_pass() {
        let (mut c, _) = ctrl_with_job("a1", 2001);
        let d = JobDescMsg {
            min_cpus: 1,
            name: Some("arr".into()),
            script: Some("#!/bin/sh\n".into()),
            array_inx: Some("1-4".into()),
            ..JobDescMsg::unset()
        };
        let (r, _) = submit_desc(&mut c, 3, user(2001, 2001), ProtocolVersion::V24_11, d);
        let a = job_id(r);
        register(&mut c);
        let tasks = |v: &[u32]| v.iter().copied().collect();
        let mut out = Vec::new();
        // Tasks 1-3 run (n1 has 4 CPUs, one taken), 4 waits; 9 is no task.
        let t = array_tasks(&c, &msg(), a, &tasks(&[2, 4, 9]), &mut out);
        let Some(Target::Tasks {
            array_job_id,
            tasks: got,
        }) = t
        else {
            panic!("tasks expected");
        };
        assert_eq!((array_job_id, got), (a, vec![2, 4]));
        assert_eq!(out.len(), 1);
        assert_eq!(
            (out[0].error_code, out[0].id.array_task_id),
            (ESLURM_INVALID_JOB_ID as u32, 9)
        );
        // A filter judges each task's record: only the running ones pass.
        let mut out = Vec::new();
        let m = KillJobsMsg { state: 1, ..msg() };
        let t = array_tasks(&c, &m, a, &tasks(&[1, 4]), &mut out);
        assert!(matches!(t, Some(Target::Tasks { ref tasks, .. }) if tasks == &vec![1]));
        assert_eq!(out.len(), 1);
        assert_eq!(
            out[0].error_msg.as_deref(),
            Some("Job state PENDING != filter state RUNNING: Cannot signal job")
        );
        assert_eq!(out[0].id.array_task_id, 4);
    }

    /// An array 1-6 of alice's (uid 2001) on a 4-CPU node beside a
    /// one-CPU job: tasks 1-3 run, 4-6 wait in the meta record.
    fn array_1_6() -> (Controller, u32, u32) {
        let (mut c, plain) = ctrl_with_job("a1", 2001);
        let d = JobDescMsg {
            min_cpus: 1,
            name: Some("arr".into()),
            script: Some("#!/bin/sh\n".into()),
            array_inx: Some("1-6".into()),
            ..JobDescMsg::unset()
        };
        let (r, _) = submit_desc(&mut c, 3, user(2001, 2001), ProtocolVersion::V24_11, d);
        let a = job_id(r);
        register(&mut c);
        (c, a, plain)
    }

    fn task_state(c: &Controller, a: u32, t: u32) -> Option<crate::state::job::JobState> {
        let id = c.arrays.find_task(a, t)?;
        let j = c.jobs.get(&id)?;
        // A task still in the meta record is pending while it is there.
        let in_meta = c
            .arrays
            .metas
            .get(&a)
            .is_some_and(|m| m.pending.contains(&t));
        (in_meta || c.arrays.task_of(id).is_some_and(|r| r.task_id == t)).then_some(j.state)
    }

    fn signals(fx: &[crate::state::Effect]) -> Vec<(u32, u32, u16, u16)> {
        crate::state::testkit::msgs(fx)
            .into_iter()
            .filter_map(|m| match m {
                Message::RequestSignalTasks(s) => {
                    Some((s.step_id.job_id, s.step_id.step_id, s.signal, s.flags))
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_whole_array_id_stands_for_every_task() {
        let (c, a, plain) = array_1_6();
        let ids = |v: &[&str]| KillJobsMsg {
            jobs_array: v.iter().map(|s| Some(s.to_string())).collect(),
            ..msg()
        };
        let mut out = Vec::new();
        let t = select(&c, &ids(&[&a.to_string(), &plain.to_string()]), &mut out);
        assert_eq!(
            t,
            [
                Target::Tasks {
                    array_job_id: a,
                    tasks: vec![1, 2, 3, 4, 5, 6]
                },
                Target::Job(plain)
            ]
        );
        assert!(out.is_empty());
        // Each record is judged by the filter: -t RUNNING keeps 1-3; the
        // meta record (4-6) fails once, under the array's id.
        let m = KillJobsMsg {
            state: 1,
            ..ids(&[&a.to_string()])
        };
        let t = select(&c, &m, &mut out);
        assert_eq!(
            t,
            [Target::Tasks {
                array_job_id: a,
                tasks: vec![1, 2, 3]
            }]
        );
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(
            (out[0].id.step_id.job_id, out[0].id.array_task_id),
            (a, NO_VAL)
        );
        assert_eq!(
            out[0].error_msg.as_deref(),
            Some("Job state PENDING != filter state RUNNING: Cannot signal job")
        );
        // -t PENDING: the meta record's tasks, not the running ones.
        let mut out = Vec::new();
        let m = KillJobsMsg {
            state: 0,
            ..ids(&[&a.to_string()])
        };
        let t = select(&c, &m, &mut out);
        assert_eq!(
            t,
            [Target::Tasks {
                array_job_id: a,
                tasks: vec![4, 5, 6]
            }]
        );
        assert_eq!(out.len(), 3, "one answer a running task: {out:?}");
    }

    #[test]
    fn a_filter_on_the_meta_record_takes_only_its_pending_tasks() {
        let (c, a, _) = array_1_6();
        // -t PENDING matches the meta record only: its pending tasks,
        // not the array's running ones (a kill by the array's id, as
        // before, took them all).
        let m = KillJobsMsg { state: 0, ..msg() };
        let t = select(&c, &m, &mut Vec::new());
        assert_eq!(
            t,
            [Target::Tasks {
                array_job_id: a,
                tasks: vec![4, 5, 6]
            }]
        );
        // -u alice: everything of hers, the array's tasks in one target.
        let m = KillJobsMsg {
            user_name: Some("alice".into()),
            user_id: 2001,
            ..msg()
        };
        let t = select(&c, &m, &mut Vec::new());
        assert!(t.contains(&Target::Tasks {
            array_job_id: a,
            tasks: vec![1, 2, 3, 4, 5, 6]
        }));
        assert_eq!(t.len(), 2, "{t:?}");
    }

    /// scancel of tasks `tasks` of `a` by `uid`, as the handler sends it.
    fn tasks_cmd(uid: u32, a: u32, tasks: &[u32], signal: u16, flags: u16) -> Command {
        Command::Signal {
            uid,
            target: SignalTarget::Tasks {
                array_job_id: a,
                tasks: tasks.to_vec(),
            },
            signal,
            flags,
            version: ProtocolVersion::V24_11,
        }
    }

    #[test]
    fn task_signals_keep_the_clients_flags() {
        use crate::state::control::{KILL_FULL_JOB, KILL_JOB_BATCH};
        use crate::state::job::JobState;
        let (mut c, a, _) = array_1_6();
        // scancel -b A_[2,4]: task 2's batch script gets SIGKILL and the
        // task stays (until the script ends); pending 4 is cancelled.
        let t2 = c.arrays.find_task(a, 2).unwrap_or_default();
        let cmd = tasks_cmd(2001, a, &[2, 4], SIGKILL, KILL_JOB_BATCH);
        assert!(cmd.meta().logged, "SIGKILL may cancel: logged");
        let (r, fx) = c.apply(10, cmd);
        assert_eq!(r, Reply::Ok);
        assert_eq!(
            signals(&fx),
            [(t2, StepId::BATCH_SCRIPT, SIGKILL, KILL_JOB_BATCH)]
        );
        assert_eq!(task_state(&c, a, 2), Some(JobState::Running));
        assert!(!c.arrays.metas[&a].pending.contains(&4), "4 cancelled");
        // --full -s USR1 A_3: all of task 3's processes, batch included.
        let t3 = c.arrays.find_task(a, 3).unwrap_or_default();
        let cmd = tasks_cmd(2001, a, &[3], 10, KILL_FULL_JOB);
        assert!(!cmd.meta().logged, "only a signal: not logged");
        let (r, fx) = c.apply(10, cmd);
        assert_eq!(r, Reply::Ok);
        let sent = signals(&fx);
        assert_eq!(sent.len(), 1);
        assert_eq!((sent[0].0, sent[0].2, sent[0].3), (t3, 10, KILL_FULL_JOB));
        assert_ne!(sent[0].1, StepId::BATCH_SCRIPT, "the whole job, not -b");
        assert_eq!(task_state(&c, a, 3), Some(JobState::Running));
        // A plain SIGKILL cancels.
        let (r, _) = c.apply(10, tasks_cmd(2001, a, &[3], SIGKILL, 0));
        assert_eq!(r, Reply::Ok);
        assert_eq!(task_state(&c, a, 3), Some(JobState::Cancelled));
    }

    #[test]
    fn other_signals_leave_pending_tasks_alone() {
        let (mut c, a, _) = array_1_6();
        let t1 = c.arrays.find_task(a, 1).unwrap_or_default();
        // -s USR1 A_[1,4-5]: task 1 is signalled; pending 4 and 5 (in the
        // meta record) cannot be, as stock's job_signal answers.
        let (r, fx) = c.apply(10, tasks_cmd(2001, a, &[1, 4, 5], 10, 0));
        assert_eq!(r, Reply::Err(StateError::NotAlterableNow));
        let ids: Vec<u32> = signals(&fx).into_iter().map(|s| s.0).collect();
        assert_eq!(ids, [t1]);
        assert_eq!(c.arrays.metas[&a].pending.len(), 3, "nothing cancelled");
        // Someone else's signal is refused before that.
        let (r, fx) = c.apply(10, tasks_cmd(2002, a, &[4], 10, 0));
        assert_eq!(r, Reply::Err(StateError::AccessDenied));
        assert!(fx.is_empty());
        // A task that does not exist.
        let (r, _) = c.apply(10, tasks_cmd(2001, a, &[9], 10, 0));
        assert_eq!(r, Reply::Err(StateError::InvalidJobId));
        // A whole array's id with a signal: every task, the pending ones
        // refusing it.
        let (r, fx) = c.apply(
            10,
            Command::Signal {
                uid: 2001,
                target: SignalTarget::Job(a),
                signal: 10,
                flags: 0,
                version: ProtocolVersion::V24_11,
            },
        );
        assert_eq!(r, Reply::Err(StateError::NotAlterableNow));
        assert_eq!(signals(&fx).len(), 3, "tasks 1-3 run");
    }

    #[test]
    fn kill_jobs_picks_and_cancels_on_the_state_it_finds() {
        use crate::state::job::JobState;
        let (mut c, a, plain) = array_1_6();
        // No filter: refused, and so before it is logged.
        let none = Command::KillJobs {
            uid: 2001,
            filter: Box::new(msg()),
        };
        let so_far = crate::state::refuse::BatchSoFar::default();
        assert_eq!(
            c.refuse_before_log(&none, &so_far),
            Some(Reply::Err(StateError::SignalJobsInvalid))
        );
        assert_eq!(
            c.apply(10, none).0,
            Reply::Err(StateError::SignalJobsInvalid)
        );
        // Someone else's -u alice: every job refused, none cancelled.
        let alice = KillJobsMsg {
            user_name: Some("alice".into()),
            user_id: 2001,
            ..msg()
        };
        let (r, _) = c.apply(
            10,
            Command::KillJobs {
                uid: 2002,
                filter: Box::new(alice.clone()),
            },
        );
        let Reply::KillJobs(out) = r else {
            panic!("{r:?}")
        };
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(out
            .iter()
            .all(|o| o.error_code == ESLURM_ACCESS_DENIED as u32));
        assert_eq!(c.jobs[&plain].state, JobState::Running);
        // Hers: all cancelled, nothing to report.
        let (r, _) = c.apply(
            11,
            Command::KillJobs {
                uid: 2001,
                filter: Box::new(alice),
            },
        );
        assert_eq!(r, Reply::KillJobs(Vec::new()));
        assert_eq!(c.jobs[&plain].state, JobState::Cancelled);
        for t in 1..=6 {
            assert_ne!(task_state(&c, a, t), Some(JobState::Running), "task {t}");
        }
    }
}
