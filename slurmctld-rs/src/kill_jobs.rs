//! REQUEST_KILL_JOBS (`scancel --ctld`, 23.11+ clients): the controller
//! picks the jobs by the filters and signals each. Default scancel filters
//! itself and sends one REQUEST_KILL_JOB per job; this is the other path.
//! Each job is cancelled or signalled through the ordinary commands, so
//! the write-ahead log sees per-job cancels.

use crate::daemon::Shared;
use crate::state::control::KILL_JOB_BATCH;
use crate::state::job::Job;
use crate::state::{Command, Controller, Reply, SIGKILL};
use slurm_rpc::rc_message;
use slurm_wire::errno::*;
use slurm_wire::msg::job::{KillJobsMsg, KillJobsRespJob, KillJobsRespMsg, SelectedStep};
use slurm_wire::pack::NO_VAL;
use slurm_wire::types::StepId;
use slurm_wire::Message;
use std::sync::Arc;

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

fn resp(job_id: u32, rc: i32, msg: Option<String>) -> KillJobsRespJob {
    KillJobsRespJob {
        error_code: rc as u32,
        error_msg: msg.or_else(|| error_text(rc).map(str::to_string)),
        id: selected(job_id),
        real_job_id: job_id,
        sibling_name: None,
    }
}

fn has_filter(m: &KillJobsMsg) -> bool {
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

/// Why `j` does not match the filters (None: it matches).
fn mismatch(c: &Controller, j: &Job, m: &KillJobsMsg) -> Option<String> {
    if let Some(n) = m.job_name.as_deref() {
        if j.name() != Some(n) {
            return Some(format!(
                "Job name {} != filter name {n}",
                j.name().unwrap_or("(null)")
            ));
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
    if let Some(a) = m.account.as_deref() {
        if j.desc.account.as_deref() != Some(a) {
            return Some(format!("Job account != filter account {a}"));
        }
    }
    if (m.state & 0xff) != JOB_END && j.state.base_bits() != (m.state & 0xff) {
        return Some("Job state != filter state".to_string());
    }
    if m.user_name.is_some() && j.user.uid != m.user_id {
        return Some(format!(
            "Job user id {} != filter user id {}",
            j.user.uid, m.user_id
        ));
    }
    if let Some(nl) = m.nodelist.as_deref() {
        let want = slurm_conf::expand(nl).unwrap_or_default();
        let on = j
            .alloc
            .iter()
            .any(|a| want.iter().any(|w| w == c.nodes[a.node].name()));
        if !on {
            return Some(format!("Job nodes do not intersect with filter nodes {nl}"));
        }
    }
    // No QOS, reservations or wckeys here: such a filter matches nothing.
    if m.qos.is_some() || m.reservation.is_some() || m.wckey.is_some() {
        return Some("filter not supported".to_string());
    }
    None
}

pub async fn handle(sh: &Arc<Shared>, uid: u32, m: KillJobsMsg) -> Message {
    if !has_filter(&m) {
        return rc_message(ESLURM_SIGNAL_JOBS_INVALID);
    }
    let snap = sh.snapshot();
    let admin = snap.conf.is_admin(uid);
    let mut out = Vec::new();
    // Jobs that passed the filters, to act on.
    let mut targets: Vec<u32> = Vec::new();
    let explicit = !m.jobs_array.is_empty();
    if explicit {
        for s in m.jobs_array.iter().flatten() {
            let Ok(id) = s.trim().parse::<u32>() else {
                // Array and het job expressions are not modelled here.
                out.push(resp(0, ESLURM_INVALID_JOB_ID, Some(s.clone())));
                continue;
            };
            match snap.jobs.get(&id) {
                None => out.push(resp(id, ESLURM_INVALID_JOB_ID, None)),
                Some(j) if j.state.is_finished() => out.push(resp(id, ESLURM_ALREADY_DONE, None)),
                Some(j) => match mismatch(&snap, j, &m) {
                    Some(why) => out.push(resp(id, ESLURM_JOB_SIGNAL_FAILED, Some(why))),
                    None => targets.push(id),
                },
            }
        }
    } else {
        targets = snap
            .jobs
            .values()
            .filter(|j| !j.state.is_finished() && mismatch(&snap, j, &m).is_none())
            .map(|j| j.job_id)
            .collect();
    }
    let verbose = m.flags & KILL_JOBS_VERBOSE != 0;
    let flags = m.flags & !KILL_JOBS_VERBOSE;
    for job_id in targets {
        let owner = snap.jobs.get(&job_id).map(|j| j.user.uid);
        if owner != Some(uid) && !admin {
            out.push(resp(job_id, ESLURM_ACCESS_DENIED, None));
            continue;
        }
        let cmd = if m.signal == SIGKILL && flags & KILL_JOB_BATCH == 0 {
            Command::Kill {
                uid,
                job_id,
                signal: m.signal,
            }
        } else {
            Command::Signal {
                uid,
                job_id,
                signal: m.signal,
                flags,
            }
        };
        let rc = match sh.exec(cmd).await {
            Reply::Rc(rc) => rc,
            _ => SLURM_SUCCESS,
        };
        if rc != SLURM_SUCCESS || verbose {
            out.push(resp(job_id, rc, None));
        }
    }
    Message::ResponseKillJobs(KillJobsRespMsg(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::job::UserInfo;
    use slurm_wire::msg::job_desc::JobDescMsg;
    use slurm_wire::pack::{NO_VAL16, NO_VAL64};
    use slurm_wire::ProtocolVersion;

    fn ctrl_with_job(name: &str, uid: u32) -> (Controller, u32) {
        let conf = slurm_conf::SlurmConf::parse_str(
            "ClusterName=t\nSlurmctldHost=ctl\nNodeName=n1 CPUs=4 RealMemory=1000\n\
             PartitionName=debug Nodes=n1 Default=YES\nPartitionName=other Nodes=n1\n",
            "/etc/slurm/slurm.conf",
        )
        .unwrap();
        let mut c = Controller::new(crate::state::config::ClusterConf::new(conf, 0).unwrap(), 1);
        let d = JobDescMsg {
            // as clients send it (0 would be --exclusive)
            shared: slurm_wire::pack::NO_VAL16,
            time_limit: NO_VAL,
            min_nodes: NO_VAL,
            max_nodes: NO_VAL,
            num_tasks: NO_VAL,
            min_cpus: 1,
            cpus_per_task: NO_VAL16,
            ntasks_per_node: NO_VAL16,
            pn_min_memory: NO_VAL64,
            priority: NO_VAL,
            name: Some(name.into()),
            script: Some("#!/bin/sh\n".into()),
            ..Default::default()
        };
        let (r, _) = c.apply(
            2,
            Command::Submit {
                user: UserInfo {
                    uid,
                    gid: uid,
                    ..Default::default()
                },
                desc: Box::new(d),
                version: ProtocolVersion::V24_11,
            },
        );
        let Reply::Submitted { job_id } = r else {
            panic!("{r:?}")
        };
        (c, job_id)
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
}
