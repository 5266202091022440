//! State machine tests with a virtual clock.

use super::*;
use crate::state::error::StateError;
use job::UserInfo;
use slurm_wire::msg::job_desc::JobDescMsg;
use slurm_wire::msg::kill::KillJobMsg;
use slurm_wire::msg::launch::BatchJobLaunchMsg;
use slurm_wire::pack::NO_VAL16;
use testkit::{
    complete, controller, epilog, node_msg, reg, reg_msg, sends, submit_as, SMALL_CLUSTER,
};

fn ctrl(extra: &str) -> Controller {
    controller(&format!("{SMALL_CLUSTER}{extra}"))
}

/// These tests submit from a 22.05 client.
fn submit(c: &mut Controller, now: Time, f: impl FnOnce(&mut JobDescMsg)) -> (Reply, Vec<Effect>) {
    submit_as(c, now, ProtocolVersion::V22_05, f)
}

/// [`submit`], and the id of the job it accepted.
fn submitted(c: &mut Controller, now: Time, f: impl FnOnce(&mut JobDescMsg)) -> u32 {
    testkit::job_id(submit(c, now, f).0)
}

fn state(c: &Controller, node: &str) -> u32 {
    c.nodes[c.node_index(node).unwrap()].state_word()
}

#[test]
fn job_lifecycle_submit_launch_complete_epilog() {
    let mut c = ctrl("");
    assert_eq!(state(&c, "n1"), node::bits::UNKNOWN);
    c.apply(1001, reg("n1", 4, 1000));
    c.apply(1001, reg("n2", 4, 1000));
    assert_eq!(state(&c, "n1"), node::bits::IDLE);

    let (r, fx) = submit(&mut c, 1002, |_| {});
    let job_id = testkit::job_id(r);
    let out = sends(&fx);
    assert_eq!(out.len(), 1);
    let Message::RequestBatchJobLaunch(BatchJobLaunchMsg {
        job_id: lj,
        uid,
        nodes,
        cred,
        ..
    }) = &out[0].msg
    else {
        panic!("{:?}", out[0].msg)
    };
    assert_eq!((*lj, *uid, nodes.as_deref()), (job_id, 1000, Some("n1")));
    // Sent in the version the node registered with; cred packed in it too.
    assert_eq!(out[0].version, ProtocolVersion::V24_11);
    assert_eq!(cred.cred_version, ProtocolVersion::V24_11.to_wire());
    assert_eq!(cred.cred.arg.id.pw_name.as_deref(), Some("alice"));
    assert_eq!(c.jobs[&job_id].state, JobState::Running);
    assert_eq!(state(&c, "n1"), node::bits::MIXED);

    // Only SlurmUser/root may report completion.
    let (r, _) = c.apply(
        1010,
        Command::BatchComplete {
            uid: 1000,
            job_id,
            job_rc: 0,
            slurm_rc: 0,
            node: Some("n1".into()),
        },
    );
    assert_eq!(r, Reply::Err(StateError::InvalidUserId));
    let (r, fx) = complete(&mut c, 1010, job_id, 0, Some("n1".into()));
    assert_eq!(r, Reply::Ok);
    let out = sends(&fx);
    assert_eq!(out.len(), 1);
    let Message::RequestTerminateJob(KillJobMsg { job_state, .. }) = &out[0].msg else {
        panic!()
    };
    assert_eq!(*job_state, job::bits::COMPLETE | job::bits::COMPLETING);
    assert_eq!(state(&c, "n1"), node::bits::IDLE | node::bits::COMPLETING);

    epilog(&mut c, 1011, job_id, "n1");
    assert_eq!(state(&c, "n1"), node::bits::IDLE);
    assert_eq!(c.jobs[&job_id].state_word(), job::bits::COMPLETE);
    // Purged after MinJobAge (300 s by default).
    // (ended at 1010, when the script completed)
    c.apply(1010 + 299, Command::Tick);
    assert!(c.jobs.contains_key(&job_id));
    c.apply(1010 + 300, Command::Tick);
    assert!(!c.jobs.contains_key(&job_id));
}

#[test]
fn nonzero_exit_fails_the_job() {
    let mut c = ctrl("");
    c.apply(1001, reg("n1", 4, 1000));
    let job_id = submitted(&mut c, 1002, |_| {});
    complete(&mut c, 1003, job_id, 256, Some("n1".into()));
    assert_eq!(c.jobs[&job_id].state, JobState::Failed);
    assert_eq!(c.jobs[&job_id].exit_code, 256);
}

#[test]
fn sig_oom_ends_the_job_out_of_memory() {
    let mut c = ctrl("");
    c.apply(1001, reg("n1", 4, 1000));
    let job_id = submitted(&mut c, 1002, |_| {});
    complete(&mut c, 1003, job_id, job::SIG_OOM, Some("n1".into()));
    let j = &c.jobs[&job_id];
    assert_eq!(j.state, JobState::OutOfMemory);
    assert_eq!(j.state_word() & 0xff, job::bits::OOM);
    assert_eq!(j.state_reason, job::reason::FAIL_OOM);
    assert_eq!(j.exit_code, 253);
    // the node is released like for any other ending
    assert_eq!(c.nodes[0].alloc_cpus, 0);
}

#[test]
fn ntasks_per_node_gives_each_node_its_tasks() {
    let mut c = ctrl("");
    c.apply(1001, reg("n1", 4, 1000));
    c.apply(1001, reg("n2", 4, 1000));
    let job_id = submitted(&mut c, 1002, |d| {
        d.min_nodes = 2;
        d.max_nodes = 2;
        d.ntasks_per_node = 2;
    });
    let j = &c.jobs[&job_id];
    assert_eq!(j.state, JobState::Running);
    assert_eq!(j.num_tasks, 4);
    let cpus: Vec<(usize, u16)> = j.alloc.iter().map(|a| (a.node, a.cpus)).collect();
    assert_eq!(cpus, vec![(0, 2), (1, 2)]);
    // without it, the same 4 CPUs on 2 nodes fill the first node first
    let job_id = submitted(&mut c, 1003, |d| {
        d.min_nodes = 2;
        d.max_nodes = 2;
        d.num_tasks = 4;
    });
    let cpus: Vec<u16> = c.jobs[&job_id].alloc.iter().map(|a| a.cpus).collect();
    assert_eq!(cpus.iter().sum::<u16>(), 4);
}

#[test]
fn exclusive_jobs_take_whole_nodes_and_share_none() {
    let mut c = ctrl("PartitionName=excl Nodes=n[1-2] OverSubscribe=EXCLUSIVE State=UP\n");
    c.apply(1001, reg("n1", 4, 1000));
    c.apply(1001, reg("n2", 4, 1000));
    // a 1-CPU job on n1, then an --exclusive one: it takes all of n2
    let small = submitted(&mut c, 1002, |_| {});
    assert_eq!(c.jobs[&small].alloc[0].node, 0);
    let excl = submitted(&mut c, 1003, |d| {
        d.shared = crate::sched::JOB_SHARED_NONE;
    });
    let a: Vec<(usize, u16)> = c.jobs[&excl]
        .alloc
        .iter()
        .map(|a| (a.node, a.cpus))
        .collect();
    assert_eq!(a, vec![(1, 4)]);
    // reported as OverSubscribe=NO; the other job leaves it unset
    let shared = |c: &Controller, id: u32| {
        let info = crate::views::job_info(c, &c.jobs[&id], ProtocolVersion::V24_11, 0);
        info.details.map(|d| d.shared)
    };
    assert_eq!(shared(&c, excl), Some(0));
    assert_eq!(shared(&c, small), Some(NO_VAL16));
    // another exclusive job finds no empty node and waits
    let waits = submitted(&mut c, 1004, |d| {
        d.shared = crate::sched::JOB_SHARED_NONE;
    });
    assert_eq!(c.jobs[&waits].state, JobState::Pending);
    // in an OverSubscribe=EXCLUSIVE partition every job is exclusive
    let mut c = ctrl("PartitionName=excl Nodes=n[1-2] OverSubscribe=EXCLUSIVE State=UP\n");
    c.apply(1001, reg("n1", 4, 1000));
    c.apply(1001, reg("n2", 4, 1000));
    let job_id = submitted(&mut c, 1002, |d| {
        d.partition = Some("excl".into());
    });
    assert_eq!(c.jobs[&job_id].alloc[0].cpus, 4);
    let info = crate::views::job_info(&c, &c.jobs[&job_id], ProtocolVersion::V24_11, 0);
    assert_eq!(info.details.map(|d| d.shared), Some(0));
}

#[test]
fn max_mem_per_cpu_raises_cpus_per_task() {
    let mut c = ctrl("PartitionName=m Nodes=n[1-2] MaxMemPerCPU=100 State=UP\n");
    c.apply(1001, reg("n1", 4, 1000));
    let job_id = submitted(&mut c, 1002, |d| {
        d.partition = Some("m".into());
        d.num_tasks = 1;
        d.pn_min_memory = 250 | MEM_PER_CPU;
    });
    let j = &c.jobs[&job_id];
    // 250 MB per CPU over a 100 MB limit: 3 CPUs of 84 MB
    assert_eq!(
        (j.cpus_per_task, j.min_cpus, j.mem, j.mem_per_cpu),
        (3, 3, 84, true)
    );
    assert_eq!(j.alloc_cpus(), 3);
}

#[test]
fn exclusive_user_keeps_other_users_off_the_nodes() {
    let mut c = ctrl("PartitionName=eu Nodes=n[1-2] ExclusiveUser=YES State=UP\n");
    c.apply(1001, reg("n1", 4, 1000));
    c.apply(1001, reg("n2", 4, 1000));
    let submit_by = |c: &mut Controller, uid: u32, part: &str| {
        let mut d = JobDescMsg {
            requeue: NO_VAL16,
            script: Some("#!/bin/sh\n".into()),
            ..testkit::sparse_desc()
        };
        d.partition = Some(part.into());
        let user = testkit::user(uid, uid);
        let (r, _) = testkit::submit_desc(c, 1002, user, ProtocolVersion::V24_11, d);
        testkit::job_id(r)
    };
    let node_of = |c: &Controller, id: u32| c.jobs[&id].alloc.first().map(|a| a.node);
    let a1 = submit_by(&mut c, 1000, "eu");
    assert_eq!(node_of(&c, a1), Some(0));
    // another user's job goes to the other node, though n1 has room
    let b1 = submit_by(&mut c, 1001, "eu");
    assert_eq!(node_of(&c, b1), Some(1));
    // the owner shares her node with herself
    let a2 = submit_by(&mut c, 1000, "eu");
    assert_eq!(node_of(&c, a2), Some(0));
    // a third user finds no node, even from a partition without the flag
    let x = submit_by(&mut c, 1002, "debug");
    assert_eq!(c.jobs[&x].state, JobState::Pending);
}

#[test]
fn fifo_cpu_accounting_and_queueing() {
    let mut c = ctrl("");
    c.apply(1001, reg("n1", 4, 1000));
    c.apply(1001, reg("n2", 4, 1000));
    // 3 CPUs each: one per node, the third waits for resources.
    let ids: Vec<u32> = (0..3)
        .map(
            |i| match submit(&mut c, 1002 + i, |d| d.cpus_per_task = 3).0 {
                Reply::Submitted { job_id } => job_id,
                r => panic!("{r:?}"),
            },
        )
        .collect();
    assert_eq!(c.jobs[&ids[0]].alloc[0].node, 0);
    assert_eq!(c.jobs[&ids[1]].alloc[0].node, 1);
    assert_eq!(c.jobs[&ids[2]].state, JobState::Pending);
    assert_eq!(c.jobs[&ids[2]].state_reason, job::reason::WAIT_RESOURCES);
    // A small later job must not overtake it (FIFO, no backfill yet).
    let small = submitted(&mut c, 1010, |_| {});
    assert_eq!(c.jobs[&small].state, JobState::Pending);
    assert_eq!(c.jobs[&small].state_reason, job::reason::WAIT_PRIORITY);
    let (_, fx) = testkit::kill(&mut c, 1020, 1000, ids[0]);
    // Terminate for the cancelled job; its node takes nothing new until
    // its epilog is done, then launches for the two waiting ones.
    let kinds: Vec<_> = sends(&fx).iter().map(|o| o.purpose.clone()).collect();
    assert!(kinds.contains(&Purpose::Terminate { job_id: ids[0] }));
    assert!(!kinds.contains(&Purpose::Launch { job_id: ids[2] }));
    assert_eq!(c.jobs[&ids[2]].state, JobState::Pending);
    let fx = testkit::epilogs(&mut c, 1020, ids[0]);
    let kinds: Vec<_> = sends(&fx).iter().map(|o| o.purpose.clone()).collect();
    assert!(kinds.contains(&Purpose::Launch { job_id: ids[2] }));
    assert!(kinds.contains(&Purpose::Launch { job_id: small }));
    assert_eq!(c.nodes[0].alloc_cpus, 4);
}

#[test]
fn submit_errors_match_stock() {
    let mut c = ctrl("");
    c.apply(1001, reg("n1", 4, 1000));
    let r = submit(&mut c, 1002, |d| d.partition = Some("nosuch".into())).0;
    assert_eq!(r, Reply::Err(StateError::InvalidPartitionName));
    // More nodes or CPUs than the partition has: 24.x refuses, 22.05
    // and 26.05 queue with a partition reason.
    let r = submit_as(&mut c, 1002, ProtocolVersion::V24_11, |d| d.min_nodes = 3).0;
    assert_eq!(r, Reply::Err(StateError::NodeConfigUnavailable));
    for (v, f, want) in [
        (ProtocolVersion::V22_05, 3, job::reason::WAIT_PART_CONFIG),
        (
            ProtocolVersion::V26_05,
            3,
            job::reason::WAIT_PART_NODE_LIMIT,
        ),
        (ProtocolVersion::V26_05, 0, job::reason::WAIT_PART_CONFIG),
    ] {
        let (Reply::Submitted { job_id }, fx) = submit_as(&mut c, 1002, v, |d| {
            if f > 0 {
                d.min_nodes = f;
            } else {
                d.min_cpus = 64;
                d.num_tasks = 64;
            }
        }) else {
            panic!("{v}")
        };
        assert!(fx.is_empty());
        assert_eq!(c.jobs[&job_id].state_reason, want, "{v}");
    }
    // A bigger node than any there is: refused by every release.
    let r = submit(&mut c, 1002, |d| d.pn_min_memory = 2000).0;
    assert_eq!(r, Reply::Err(StateError::NodeConfigUnavailable));
    // Over MaxTime: pending with PartitionTimeLimit by default ...
    let job_id = submitted(&mut c, 1002, |d| d.time_limit = 61);
    assert_eq!(
        c.jobs[&job_id].state_reason,
        job::reason::WAIT_PART_TIME_LIMIT
    );
    // ... refused with EnforcePartLimits.
    let mut c = ctrl("EnforcePartLimits=ALL\n");
    assert_eq!(
        submit(&mut c, 1002, |d| d.time_limit = 61).0,
        Reply::Err(StateError::InvalidTimeLimit)
    );
}

#[test]
fn cancel_is_owner_or_admin_only() {
    let mut c = ctrl("");
    let job_id = submitted(&mut c, 1002, |_| {});
    let (r, _) = testkit::kill(&mut c, 1003, 2000, job_id);
    assert_eq!(r, Reply::Err(StateError::AccessDenied));
    let (r, fx) = testkit::kill(&mut c, 1003, 1000, job_id);
    assert_eq!(r, Reply::Ok);
    assert!(fx.is_empty(), "a pending job has no nodes to clean");
    assert_eq!(c.jobs[&job_id].state, JobState::Cancelled);
    let (r, _) = testkit::kill(&mut c, 1004, 0, job_id);
    assert_eq!(r, Reply::Err(StateError::AlreadyDone));
    let (r, _) = testkit::kill(&mut c, 1004, 0, 999);
    assert_eq!(r, Reply::Err(StateError::InvalidJobId));
}

#[test]
fn node_timeout_downs_node_fails_jobs_and_returns_on_registration() {
    let mut c = ctrl("");
    c.apply(1000, reg("n1", 4, 1000));
    let job_id = submitted(&mut c, 1001, |_| {});
    // Pings go out every SlurmdTimeout/3.
    let (_, fx) = c.apply(1100, Command::Tick);
    assert!(sends(&fx)
        .iter()
        .any(|o| o.purpose == Purpose::Ping && o.node == "n1"));
    c.apply(1300, Command::Tick);
    assert_eq!(state(&c, "n1") & node::bits::BASE, node::bits::MIXED);
    c.apply(1301, Command::Tick);
    assert_eq!(state(&c, "n1") & node::bits::BASE, node::bits::DOWN);
    assert_ne!(state(&c, "n1") & node::bits::NO_RESPOND, 0);
    // Requeue is allowed by default: the job waits to run again.
    assert_eq!(c.jobs[&job_id].state, JobState::Pending);
    assert_eq!(c.jobs[&job_id].ctl.restart_cnt, 1);
    // ReturnToService=1: a valid registration brings it back.
    c.apply(1400, reg("n1", 4, 1000));
    assert_eq!(state(&c, "n1"), node::bits::IDLE);
}

/// Cores set in each launch's credential.
fn launched_cores(fx: &[Effect]) -> Vec<Vec<u32>> {
    testkit::launches(fx)
        .iter()
        .map(|m| {
            m.cred
                .cred
                .arg
                .job_core_bitmap
                .as_ref()
                .map(|b| b.iter_ones().collect())
                .unwrap_or_default()
        })
        .collect()
}

#[test]
fn jobs_sharing_a_node_get_distinct_cores_and_freed_ones_are_reused() {
    let mut c = ctrl("");
    c.apply(1000, reg("n1", 4, 1000));
    let (r1, fx) = submit(&mut c, 1001, |d| d.min_cpus = 2);
    let j1 = testkit::job_id(r1);
    assert_eq!(launched_cores(&fx), vec![vec![0, 1]]);
    let (r2, fx) = submit(&mut c, 1002, |_| {});
    let j2 = testkit::job_id(r2);
    assert_eq!(launched_cores(&fx), vec![vec![2]]);
    assert_eq!(c.nodes[0].core_use, vec![1, 1, 1, 0]);
    // The first ends: its cores are free again, and the next job gets
    // the lowest of them.
    testkit::finish(&mut c, 1010, j1, 0);
    assert_eq!(c.nodes[0].core_use, vec![0, 0, 1, 0]);
    let (_, fx) = submit(&mut c, 1011, |_| {});
    assert_eq!(launched_cores(&fx), vec![vec![0]]);
    assert_eq!(c.jobs[&j2].alloc[0].cores, vec![2]);
}

/// n1 registering, listing the batch steps of `jobs`.
fn reg_with(jobs: &[u32]) -> Command {
    let step_id = jobs
        .iter()
        .map(|&job_id| slurm_wire::types::StepId {
            sluid: 0,
            job_id,
            step_id: slurm_wire::types::StepId::BATCH_SCRIPT,
            step_het_comp: NO_VAL,
        })
        .collect();
    reg_msg(
        SlurmNodeRegistrationStatusMsg {
            step_id,
            ..node_msg("n1", 4, 1000)
        },
        ProtocolVersion::V24_11,
    )
}

#[test]
fn batch_job_missing_from_its_node_is_requeued_after_batch_start_timeout() {
    let mut c = ctrl("");
    c.apply(1000, reg("n1", 4, 1000));
    let job_id = submitted(&mut c, 1001, |_| {});
    assert_eq!(c.jobs[&job_id].state, JobState::Running);
    // Too young to be lost (BatchStartTimeout 10 + 10): looked for again.
    c.apply(1010, reg_with(&[]));
    assert_eq!(c.jobs[&job_id].state, JobState::Running);
    let reregisters = |fx: &[Effect]| {
        sends(fx)
            .iter()
            .filter(|o| o.purpose == Purpose::Reregister && o.node == "n1")
            .count()
    };
    assert_eq!(reregisters(&c.apply(1025, Command::Tick).1), 0);
    assert_eq!(reregisters(&c.apply(1031, Command::Tick).1), 1);
    assert_eq!(reregisters(&c.apply(1032, Command::Tick).1), 0);
    // Listed: running, nothing more to check.
    c.apply(1031, reg_with(&[job_id]));
    assert_eq!(c.jobs[&job_id].state, JobState::Running);
    assert_eq!(c.nodes[0].recheck_at, None);
    // Later missing: lost, and requeued as the job allows by default.
    c.apply(1100, reg_with(&[]));
    assert_eq!(c.jobs[&job_id].state, JobState::Pending);
    assert_eq!(c.jobs[&job_id].ctl.restart_cnt, 1);
}

#[test]
fn missing_batch_job_that_may_not_requeue_ends_node_fail() {
    let mut c = ctrl("");
    c.apply(1000, reg("n1", 4, 1000));
    let job_id = submitted(&mut c, 1001, |d| d.requeue = 0);
    c.apply(1100, reg_with(&[]));
    let j = &c.jobs[&job_id];
    assert_eq!(j.state, JobState::NodeFail);
    assert_eq!(j.exit_code, 1);
    assert_eq!(j.state_reason, job::reason::FAIL_DOWN_NODE);
    // A job that is there is left alone.
    epilog(&mut c, 1101, job_id, "n1");
    let other = submitted(&mut c, 1200, |_| {});
    assert_eq!(c.jobs[&other].state, JobState::Running);
    c.apply(1300, reg_with(&[other]));
    assert_eq!(c.jobs[&other].state, JobState::Running);
}

#[test]
fn low_hardware_drains_unless_config_overrides() {
    let mut c = ctrl("");
    c.apply(1000, reg("n1", 2, 1000));
    assert_ne!(state(&c, "n1") & node::bits::DRAIN, 0);
    assert!(c.nodes[0]
        .reason
        .as_deref()
        .unwrap()
        .starts_with("Low CPUs"));
    let mut c = ctrl("SlurmdParameters=config_overrides\n");
    c.apply(1000, reg("n1", 2, 1000));
    assert_eq!(state(&c, "n1"), node::bits::IDLE);
}

#[test]
fn drain_and_resume_are_admin_only() {
    let mut c = ctrl("");
    c.apply(1000, reg("n1", 4, 1000));
    let upd = |uid, state, reason: Option<&str>| Command::UpdateNode {
        uid,
        msg: Box::new(UpdateNodeMsg {
            node_names: Some("n1".into()),
            node_state: state,
            reason: reason.map(str::to_string),
            reason_uid: NO_VAL,
            ..Default::default()
        }),
    };
    let (r, _) = c.apply(1001, upd(1000, node::bits::DRAIN, Some("x")));
    assert_eq!(r, Reply::Err(StateError::InvalidUserId));
    c.apply(1001, upd(0, node::bits::DRAIN, Some("maint")));
    assert_eq!(state(&c, "n1"), node::bits::IDLE | node::bits::DRAIN);
    // A drained node gets no new work.
    let (Reply::Submitted { job_id }, fx) =
        submit(&mut c, 1002, |d| d.partition = Some("debug".into()))
    else {
        panic!()
    };
    assert!(fx.is_empty());
    assert_eq!(c.jobs[&job_id].state, JobState::Pending);
    let (_, fx) = c.apply(1003, upd(0, node::bits::RESUME, None));
    assert_eq!(sends(&fx).len(), 1, "the waiting job starts on resume");
    assert_eq!(c.nodes[0].reason, None);
}

const GPU_NODES: &str = "NodeName=g[1-2] CPUs=8 RealMemory=1000 Gres=gpu:a100:4,gpu:v100:2\n\
PartitionName=gpu Nodes=g[1-2] State=UP\n";

fn launch_gres(fx: &[Effect]) -> Vec<(u64, String)> {
    sends(fx)
        .iter()
        .filter_map(|o| match &o.msg {
            Message::RequestBatchJobLaunch(m) => Some(m),
            _ => None,
        })
        .flat_map(|m| m.cred.cred.arg.job_gres_list.0.clone())
        .map(|g| {
            let bits = g.gres_bit_alloc.unwrap()[0].clone().unwrap();
            (g.total_gres, bits.to_hex())
        })
        .collect()
}

#[test]
fn gres_devices_are_allocated_per_node_and_freed() {
    let mut c = ctrl(GPU_NODES);
    c.apply(1001, reg("g1", 8, 1000));
    let gpu = |g: &'static str| {
        move |d: &mut JobDescMsg| {
            d.partition = Some("gpu".into());
            d.tres_per_node = Some(g.into());
        }
    };
    let (r1, fx) = submit(&mut c, 1002, gpu("gres/gpu:a100:3"));
    assert_eq!(launch_gres(&fx), vec![(3, "0x07".to_string())]);
    // Any type: the last a100 and both v100s (indexes 3, 4, 5 of 6).
    let (_, fx) = submit(&mut c, 1003, gpu("gres:gpu:3"));
    assert_eq!(launch_gres(&fx), vec![(3, "0x38".to_string())]);
    // No a100 is left: the next one waits for resources.
    let (r2, fx) = submit(&mut c, 1004, gpu("gres/gpu:a100:3"));
    assert!(launch_gres(&fx).is_empty());
    let j2 = testkit::job_id(r2);
    assert_eq!(c.jobs[&j2].state_reason, job::reason::WAIT_RESOURCES);
    // The first job ends: its devices go to the waiting one.
    let j1 = testkit::job_id(r1);
    let (_, fx) = complete(&mut c, 1010, j1, 0, Some("g1".into()));
    assert!(launch_gres(&fx).is_empty(), "not before g1's epilog");
    let fx = testkit::epilogs(&mut c, 1010, j1);
    assert_eq!(launch_gres(&fx), vec![(3, "0x07".to_string())]);
    assert_eq!(c.jobs[&j2].state, JobState::Running);
}

#[test]
fn job_info_carries_per_node_gres_detail() {
    let mut c = ctrl(GPU_NODES);
    c.apply(1001, reg("g1", 8, 1000));
    let gpu = |g: &'static str| {
        move |d: &mut JobDescMsg| {
            d.partition = Some("gpu".into());
            d.tres_per_node = Some(g.into());
            d.min_cpus = 2;
        }
    };
    let (_, _) = submit(&mut c, 1002, gpu("gres/gpu:a100:1"));
    // untyped: takes a100 indexes 1-2, shown with the node's type
    let job_id = submitted(&mut c, 1003, gpu("gres:gpu:2"));
    use crate::views::SHOW_DETAIL;
    // Without SHOW_DETAIL (plain `scontrol show job`) stock sends neither.
    let plain_info = crate::views::job_info(&c, &c.jobs[&job_id], ProtocolVersion::V24_11, 0);
    assert!(plain_info.job_resrcs.is_none() && plain_info.gres_detail_str.is_empty());
    let info = crate::views::job_info(&c, &c.jobs[&job_id], ProtocolVersion::V24_11, SHOW_DETAIL);
    assert_eq!(
        info.gres_detail_str,
        vec![Some("gpu:a100:2(IDX:1-2)".to_string())]
    );
    assert_eq!(info.gres_total.as_deref(), Some("gpu:a100:2"));
    let jr = info.job_resrcs.expect("job_resources of a running job");
    assert_eq!(jr.nodes.as_deref(), Some("g1"));
    assert_eq!(jr.cpus, vec![2]);
    assert_eq!(jr.ncpus, 2);
    let bits = jr.core_bitmap.expect("core bitmap");
    assert_eq!(bits.count_ones(), 2);
    // the whole message still round-trips for every client version
    for v in [
        ProtocolVersion::V22_05,
        ProtocolVersion::V24_11,
        ProtocolVersion::V26_05,
    ] {
        let m = crate::views::job_info_msg(&c, Some(&[job_id]), None, SHOW_DETAIL, v);
        let b = slurm_wire::pack::encode_to_vec(&m, v);
        let back: slurm_wire::msg::job::JobInfoMsg =
            slurm_wire::pack::decode_exact(&b, v).expect("decodes");
        assert_eq!(back.job_array[0].gres_detail_str, info.gres_detail_str);
        assert_eq!(
            back.job_array[0]
                .job_resrcs
                .as_ref()
                .map(|r| r.cpus.clone()),
            Some(vec![2])
        );
    }
    // a job without GRES has no detail strings
    let plain = submitted(&mut c, 1004, |d| {
        d.partition = Some("gpu".into());
    });
    let info = crate::views::job_info(&c, &c.jobs[&plain], ProtocolVersion::V24_11, SHOW_DETAIL);
    assert!(info.gres_detail_str.is_empty());
    assert!(info.job_resrcs.is_some());
}

#[test]
fn gres_that_can_never_run_is_refused_at_submit() {
    let mut c = ctrl(GPU_NODES);
    let with = |g: &'static str| {
        move |d: &mut JobDescMsg| {
            d.partition = Some("gpu".into());
            d.tres_per_node = Some(g.into());
        }
    };
    let (r, _) = submit(&mut c, 1002, with("gres/gpu:a100:5"));
    assert_eq!(r, Reply::Err(StateError::NodeConfigUnavailable));
    // an unknown type is unsatisfiable, an unknown name invalid
    let (r, _) = submit(&mut c, 1002, with("gres/gpu:h100:1"));
    assert_eq!(r, Reply::Err(StateError::NodeConfigUnavailable));
    let (r, _) = submit(&mut c, 1002, with("gres/foo:1"));
    assert_eq!(r, Reply::Err(StateError::InvalidGres));
    let (r, _) = submit(&mut c, 1002, with("gres/gpu:6"));
    assert!(matches!(r, Reply::Submitted { .. }), "{r:?}");
    // The debug partition's nodes have no GPUs at all.
    let (r, _) = submit(&mut c, 1002, |d| {
        d.tres_per_node = Some("gres/gpu:1".into())
    });
    assert_eq!(r, Reply::Err(StateError::NodeConfigUnavailable));
}

#[test]
fn reconfigure_without_a_partition_keeps_its_jobs_listable() {
    let extra = "PartitionName=extra Nodes=n1 State=UP\n";
    let mut c = ctrl(extra);
    c.apply(1001, reg("n1", 4, 1000));
    let (Reply::Submitted { job_id }, _) =
        submit(&mut c, 1002, |d| d.partition = Some("extra".into()))
    else {
        panic!("submit to extra refused")
    };
    testkit::kill(&mut c, 1003, 0, job_id);
    // The partition goes; the ended job stays until MinJobAge.
    let conf = testkit::cluster_conf(SMALL_CLUSTER);
    c.apply(1004, Command::Reconfigure(Box::new(conf)));
    let j = &c.jobs[&job_id];
    assert!(j.part < c.conf.partitions.len());
    let m = crate::views::job_info_msg(&c, None, None, 0, ProtocolVersion::V24_11);
    assert_eq!(m.job_array.len(), c.jobs.len());
}

fn reg_v(name: &str, version: ProtocolVersion) -> Command {
    let msg = SlurmNodeRegistrationStatusMsg {
        version: Some("26.05.0".into()),
        ..node_msg(name, 4, 1000)
    };
    reg_msg(msg, version)
}

fn launch_of(fx: &[Effect]) -> BatchJobLaunchMsg {
    testkit::launches(fx)
        .into_iter()
        .next()
        .expect("a batch launch")
}

fn env_of<'a>(m: &'a BatchJobLaunchMsg, key: &str) -> Option<&'a str> {
    let prefix = format!("{key}=");
    m.environment
        .iter()
        .flatten()
        .find_map(|e| e.strip_prefix(prefix.as_str()))
}

#[test]
fn launch_to_26_05_carries_sluid_and_sharing_mode() {
    let mut c = ctrl("PartitionName=excl Nodes=n2 OverSubscribe=EXCLUSIVE\n");
    c.apply(1000, reg_v("n1", ProtocolVersion::V26_05));
    let (r, fx) = submit(&mut c, 1001, |_| {});
    let job_id = testkit::job_id(r);
    let m = launch_of(&fx);
    assert_eq!(env_of(&m, "SLURM_JOB_OVERSUBSCRIBE"), Some("NO"));
    assert_eq!(env_of(&m, "SLURM_JOB_EXCLUSIVE"), Some("NO"));
    // 26.05's slurmd leaves SLURM_TASKS_PER_NODE to the controller.
    assert_eq!(env_of(&m, "SLURM_TASKS_PER_NODE"), Some("1"));
    let sluid = m.cred.cred.arg.step_id.sluid;
    assert_eq!(sluid, msgs::job_sluid(&c.conf, &c.jobs[&job_id]));
    // The cluster id on top, the submit time in milliseconds below it.
    assert_eq!(sluid >> 52, u64::from(msgs::cluster_id(&c.conf)));
    assert_eq!((sluid >> 10) & ((1 << 42) - 1), 1001 * 1000);
    assert_eq!(m.cred.cred.arg.job_exclusive, 0);

    // --oversubscribe and --exclusive.
    let (_, fx) = submit(&mut c, 1002, |d| d.shared = 1);
    let m = launch_of(&fx);
    assert_eq!(env_of(&m, "SLURM_JOB_OVERSUBSCRIBE"), Some("YES"));
    assert_eq!(env_of(&m, "SLURM_JOB_EXCLUSIVE"), Some("NO"));
    c.apply(1003, reg_v("n2", ProtocolVersion::V26_05));
    let (_, fx) = submit(&mut c, 1004, |d| d.partition = Some("excl".into()));
    let m = launch_of(&fx);
    assert_eq!(env_of(&m, "SLURM_JOB_EXCLUSIVE"), Some("NODE"));
    assert_eq!(m.cred.cred.arg.job_exclusive, 1);

    // Jobs of one second differ; the sluid survives a restart.
    let (r, _) = submit(&mut c, 1004, |d| d.priority = 0);
    let other = testkit::job_id(r);
    let a = msgs::job_sluid(&c.conf, &c.jobs[&other]);
    assert_ne!(a, msgs::job_sluid(&c.conf, &c.jobs[&(other - 1)]));
    let snap = crate::persist::encode_state(&c);
    let mut back = ctrl("PartitionName=excl Nodes=n2 OverSubscribe=EXCLUSIVE\n");
    crate::persist::restore_state(&mut back, &snap, crate::persist::FORMAT_VERSION).unwrap();
    assert_eq!(msgs::job_sluid(&back.conf, &back.jobs[&other]), a);
}

#[test]
fn launch_to_older_nodes_has_no_sluid_nor_sharing_env() {
    let mut c = ctrl("");
    c.apply(1000, reg("n1", 4, 1000));
    let (_, fx) = submit(&mut c, 1001, |_| {});
    let m = launch_of(&fx);
    assert_eq!(m.cred.cred.arg.step_id.sluid, 0);
    assert_eq!(env_of(&m, "SLURM_JOB_OVERSUBSCRIBE"), None);
    assert_eq!(env_of(&m, "SLURM_JOB_EXCLUSIVE"), None);
}

#[test]
fn tasks_per_node_in_blocks() {
    let mut c = ctrl("");
    c.apply(1000, reg("n1", 4, 1000));
    c.apply(1000, reg("n2", 4, 1000));
    let mut job = |f: &dyn Fn(&mut JobDescMsg)| {
        let (r, _) = submit(&mut c, 1001, |d| f(d));
        let job_id = testkit::job_id(r);
        let s = msgs::tasks_per_node(&c.jobs[&job_id]);
        testkit::kill(&mut c, 1002, 0, job_id);
        testkit::epilogs(&mut c, 1002, job_id);
        s
    };
    // -n 2 -c 2 on one 4-CPU node.
    assert_eq!(
        job(&|d| {
            d.num_tasks = 2;
            d.cpus_per_task = 2;
            d.min_cpus = 4;
        }),
        "2"
    );
    // -N 2 --ntasks-per-node=3: three on each.
    assert_eq!(
        job(&|d| {
            d.min_nodes = 2;
            d.ntasks_per_node = 3;
            d.num_tasks = 6;
            d.min_cpus = 6;
        }),
        "3(x2)"
    );
    // -N 2 without a task count: one per CPU.
    assert_eq!(
        job(&|d| {
            d.min_nodes = 2;
            d.shared = 0;
        }),
        "4(x2)"
    );
}

/// A change that a command made without moving `last_*_update` is stamped
/// at publish time; no change leaves the stamps alone.
#[test]
fn stamp_changes_moves_last_update_only_for_changed_listings() {
    let mut c = ctrl("");
    c.apply(10, reg("n1", 4, 1000));
    c.apply(10, reg("n2", 4, 1000));
    let prev = c.clone();
    c.stamp_changes(&prev, 50);
    assert_eq!(
        (c.last_job_update, c.last_node_update, c.last_part_update),
        (
            prev.last_job_update,
            prev.last_node_update,
            prev.last_part_update
        )
    );

    // A node record changed behind the stamp's back.
    let prev = c.clone();
    c.nodes[0].cpu_load += 7;
    c.stamp_changes(&prev, 60);
    assert_eq!(c.last_node_update, 60);
    assert_eq!(c.last_job_update, prev.last_job_update);

    // A submit stamps jobs itself; the stamp it chose is kept.
    let prev = c.clone();
    submit(&mut c, 70, |_| {});
    let stamped = c.last_job_update;
    c.stamp_changes(&prev, 80);
    assert_eq!(c.last_job_update, stamped);

    // A job record changed without a stamp.
    let prev = c.clone();
    let id = *c.jobs.iter().next().unwrap().0;
    c.jobs.get_mut(&id).unwrap().priority += 1;
    c.stamp_changes(&prev, 90);
    assert_eq!(c.last_job_update, 90);
}

/// What a request carries for its launch only (kept encoded in the job).
fn launch_only(d: &mut JobDescMsg) {
    d.script = Some("#!/bin/bash\n#SBATCH -n 1\nsrun hostname\n".into());
    d.environment = vec![
        Some("PATH=/usr/bin:/bin".into()),
        Some("EMPTY=".into()),
        Some("SLURM_SUBMIT_DIR=/home/alice".into()),
    ];
    d.argv = vec![
        Some("job.sh".into()),
        Some("--fast".into()),
        Some(String::new()),
    ];
    d.spank_job_env = vec![Some("SPANK_X=1".into())];
    d.acctg_freq = Some("task=30".into());
    d.container = Some("/c/bundle".into());
    d.open_mode = 2;
    d.std_err = Some("/tmp/err-%j".into());
    d.cpu_freq_max = 2_000_000;
}

#[test]
fn launch_carries_what_the_compact_request_kept() {
    let mut c = ctrl("");
    c.apply(1001, reg("n1", 4, 1000));
    let mut asked = JobDescMsg::unset();
    launch_only(&mut asked);
    let (r, fx) = submit(&mut c, 1002, launch_only);
    let job_id = testkit::job_id(r);
    let m = launch_of(&fx);
    assert_eq!(m.job_id, job_id);
    assert_eq!(m.script, asked.script);
    assert_eq!(m.argv, asked.argv);
    assert_eq!(m.spank_job_env, asked.spank_job_env);
    // The submitted environment, in order, then what the controller adds.
    assert_eq!(m.environment[..3], asked.environment[..]);
    assert_eq!(env_of(&m, "SLURM_JOB_NAME"), Some("wrap"));
    assert_eq!(m.acctg_freq, asked.acctg_freq);
    assert_eq!(m.container, asked.container);
    assert_eq!(m.open_mode, 2);
    assert_eq!(m.std_err, asked.std_err);
    assert_eq!(m.cpu_freq_max, 2_000_000);
    // The request read back is the one submitted (ids filled in at submit).
    let back = c.jobs[&job_id].req.to_desc().unwrap();
    assert_eq!((back.user_id, back.group_id), (1000, 1000));
    let sent = testkit::wrap(launch_only);
    assert_eq!(
        back,
        JobDescMsg {
            user_id: 1000,
            group_id: 1000,
            ..sent
        }
    );
}

#[test]
fn a_users_jobs_share_one_user_record() {
    let mut c = ctrl("");
    let a = submitted(&mut c, 1001, |_| {});
    let b = submitted(&mut c, 1002, |_| {});
    assert!(Arc::ptr_eq(&c.jobs[&a].user, &c.jobs[&b].user));
    // Details changed since (passwd edited): the new job has them.
    let renamed = UserInfo {
        shell: Some("/bin/zsh".into()),
        ..testkit::alice()
    };
    let r = testkit::submit_desc(
        &mut c,
        1003,
        renamed,
        ProtocolVersion::V24_11,
        testkit::wrap(|_| {}),
    );
    let d = testkit::job_id(r.0);
    assert_eq!(c.jobs[&d].user.shell.as_deref(), Some("/bin/zsh"));
    assert_eq!(c.jobs[&a].user.shell, None);
    assert!(!Arc::ptr_eq(&c.jobs[&a].user, &c.jobs[&d].user));
}
