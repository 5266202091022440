//! Job control with a virtual clock.

use super::*;
use crate::state::error::StateError;
use crate::state::job::reason;
use crate::state::testkit::{
    self, controller, epilog, job_id, msgs, node_msg, reg_msg, set_node, signal_cmd, update_job,
    ALICE, SMALL_CLUSTER,
};
use crate::state::{Command, Controller, SignalTarget, Time};
use slurm_wire::errno::ESLURMD_PROLOG_FAILED;
use slurm_wire::msg::node::{SlurmNodeRegistrationStatusMsg, UpdateNodeMsg};
use slurm_wire::ProtocolVersion;

const BOB: u32 = 1001;

/// The small cluster plus a partition on n2 only.
const OTHER: &str = "PartitionName=other Nodes=n2 MaxTime=30 State=UP\n";

fn ctrl() -> Controller {
    controller(&format!("{SMALL_CLUSTER}{OTHER}"))
}

fn reg(c: &mut Controller, now: Time, name: &str) {
    c.apply(now, testkit::reg(name, 4, 1000));
}

/// A controller with both nodes up.
fn up() -> Controller {
    let mut c = ctrl();
    reg(&mut c, 1000, "n1");
    reg(&mut c, 1000, "n2");
    c
}

fn submit(c: &mut Controller, now: Time, f: impl FnOnce(&mut JobDescMsg)) -> u32 {
    job_id(testkit::submit(c, now, f).0)
}

fn update(
    c: &mut Controller,
    now: Time,
    uid: u32,
    job_id: u32,
    f: impl FnOnce(&mut JobDescMsg),
) -> Reply {
    update_job(c, now, uid, job_id, f).0
}

fn hold(c: &mut Controller, now: Time, uid: u32, job_id: u32) -> Reply {
    update(c, now, uid, job_id, |d| {
        d.priority = 0;
        d.alloc_sid = 0;
    })
}

fn uhold(c: &mut Controller, now: Time, uid: u32, job_id: u32) -> Reply {
    update(c, now, uid, job_id, |d| {
        d.priority = 0;
        d.alloc_sid = ALLOC_SID_USER_HOLD;
    })
}

fn release(c: &mut Controller, now: Time, uid: u32, job_id: u32) -> Reply {
    update(c, now, uid, job_id, |d| d.priority = INFINITE)
}

fn ok() -> Reply {
    Reply::Ok
}

#[test]
fn submit_hold_is_a_user_hold_until_released() {
    let mut c = up();
    let id = submit(&mut c, 1001, |d| d.priority = 0);
    let j = &c.jobs[&id];
    assert_eq!(j.state, JobState::Pending);
    assert_eq!((j.priority, j.state_reason), (0, reason::WAIT_HELD_USER));
    assert_eq!(j.eligible_time, 0, "a held job has no begin time yet");
    c.apply(1100, Command::Tick);
    assert_eq!(
        c.jobs[&id].state,
        JobState::Pending,
        "held jobs never start"
    );

    // Its owner may release a user hold; it then starts at once.
    assert_eq!(release(&mut c, 1200, ALICE, id), ok());
    let j = &c.jobs[&id];
    assert_eq!(j.state, JobState::Running);
    assert_eq!(j.eligible_time, 1200);
    assert_ne!(j.priority, 0);
}

#[test]
fn admin_hold_needs_an_operator_to_release() {
    let mut c = ctrl(); // no nodes: jobs stay pending
    let id = submit(&mut c, 1001, |_| {});
    assert_eq!(hold(&mut c, 1002, 0, id), ok());
    assert_eq!(c.jobs[&id].state_reason, reason::WAIT_HELD);
    assert_eq!(
        release(&mut c, 1003, ALICE, id),
        Reply::Err(StateError::AccessDenied)
    );
    assert_eq!(c.jobs[&id].priority, 0);
    // Another priority than a release on a held job is refused.
    assert_eq!(
        update(&mut c, 1003, 0, id, |d| d.priority = 5),
        Reply::Err(StateError::JobHeld)
    );
    // root turns it into a user hold, which the owner may release.
    assert_eq!(uhold(&mut c, 1004, 0, id), ok());
    assert_eq!(c.jobs[&id].state_reason, reason::WAIT_HELD_USER);
    assert_eq!(release(&mut c, 1005, ALICE, id), ok());
    // Released, it waits for nodes like any job.
    assert_eq!(c.jobs[&id].state_reason, reason::WAIT_RESOURCES);
}

#[test]
fn users_hold_only_their_own_jobs_and_get_user_holds() {
    let mut c = ctrl();
    let id = submit(&mut c, 1001, |_| {});
    assert_eq!(
        hold(&mut c, 1002, BOB, id),
        Reply::Err(StateError::InvalidUserId)
    );
    assert_eq!(c.jobs[&id].priority, BASIC_PRIORITY);
    // `scontrol hold` by a user is still a user hold.
    assert_eq!(hold(&mut c, 1002, ALICE, id), ok());
    assert_eq!(c.jobs[&id].state_reason, reason::WAIT_HELD_USER);
    assert_eq!(
        update(&mut c, 1002, ALICE, 999, |d| d.priority = 0),
        Reply::Err(StateError::InvalidJobId)
    );
}

#[test]
fn time_limit_rules() {
    let mut c = ctrl();
    let id = submit(&mut c, 1001, |d| d.time_limit = 10);
    // Lowering is always allowed; raising a pending job up to MaxTime too.
    assert_eq!(update(&mut c, 1002, ALICE, id, |d| d.time_limit = 5), ok());
    assert_eq!(c.jobs[&id].time_limit, 5);
    assert_eq!(update(&mut c, 1002, ALICE, id, |d| d.time_limit = 60), ok());
    assert_eq!(c.jobs[&id].time_limit, 60);
    assert_eq!(
        update(&mut c, 1002, ALICE, id, |d| d.time_limit = 61),
        Reply::Err(StateError::AccessDenied)
    );
    assert_eq!(c.jobs[&id].time_limit, 60);
    // root may go past MaxTime; the job then waits on the partition limit.
    assert_eq!(update(&mut c, 1002, 0, id, |d| d.time_limit = 90), ok());
    assert_eq!(c.jobs[&id].state_reason, reason::WAIT_PART_TIME_LIMIT);
    assert_eq!(update(&mut c, 1002, 0, id, |d| d.time_limit = 20), ok());
    assert_ne!(c.jobs[&id].state_reason, reason::WAIT_PART_TIME_LIMIT);

    // A running job: users may only lower, root anything (end moves too).
    reg(&mut c, 1003, "n1");
    assert_eq!(c.jobs[&id].state, JobState::Running);
    let end = c.jobs[&id].end_time;
    assert_eq!(end, 1003 + 20 * 60);
    assert_eq!(
        update(&mut c, 1004, ALICE, id, |d| d.time_limit = 30),
        Reply::Err(StateError::AccessDenied)
    );
    assert_eq!(update(&mut c, 1004, 0, id, |d| d.time_limit = 30), ok());
    assert_eq!(c.jobs[&id].end_time, end + 10 * 60);
    assert_eq!(update(&mut c, 1004, ALICE, id, |d| d.time_limit = 25), ok());
    assert_eq!(c.jobs[&id].end_time, end + 5 * 60);
}

#[test]
fn partition_and_node_count_change_only_while_pending() {
    let mut c = ctrl();
    let id = submit(&mut c, 1001, |d| d.time_limit = 20);
    assert_eq!(
        update(&mut c, 1002, ALICE, id, |d| d.partition =
            Some("nope".into())),
        Reply::Err(StateError::InvalidPartitionName)
    );
    assert_eq!(
        update(&mut c, 1002, ALICE, id, |d| d.partition =
            Some("other".into())),
        ok()
    );
    assert_eq!(c.conf.partitions[c.jobs[&id].part].name(), "other");
    assert_eq!(
        update(&mut c, 1002, ALICE, id, |d| d.partition =
            Some("debug".into())),
        ok()
    );
    assert_eq!(
        update(&mut c, 1002, ALICE, id, |d| {
            d.min_nodes = 2;
            d.max_nodes = 2;
        }),
        ok()
    );
    let j = &c.jobs[&id];
    assert_eq!((j.min_nodes, j.max_nodes, j.num_tasks), (2, 2, 2));
    reg(&mut c, 1003, "n1");
    assert_eq!(c.jobs[&id].state, JobState::Pending, "needs both nodes");
    reg(&mut c, 1003, "n2");
    let j = &c.jobs[&id];
    assert_eq!((j.state, j.alloc.len()), (JobState::Running, 2));
    assert_eq!(
        update(&mut c, 1004, ALICE, id, |d| d.partition =
            Some("other".into())),
        Reply::Err(StateError::JobNotPending)
    );
    assert_eq!(
        update(&mut c, 1004, ALICE, id, |d| d.min_nodes = 1),
        Reply::Err(StateError::JobNotPending)
    );
}

#[test]
fn begin_time_delays_the_start() {
    let mut c = up();
    let id = submit(&mut c, 1001, |d| d.begin_time = 1100);
    let j = &c.jobs[&id];
    assert_eq!(
        (j.state, j.state_reason, j.eligible_time),
        (JobState::Pending, reason::WAIT_TIME, 1100)
    );
    c.apply(1099, Command::Tick);
    assert_eq!(c.jobs[&id].state, JobState::Pending);
    c.apply(1100, Command::Tick);
    let j = &c.jobs[&id];
    assert_eq!((j.state, j.start_time), (JobState::Running, 1100));
    // A begin time in the past is no delay.
    let id = submit(&mut c, 1200, |d| d.begin_time = 1000);
    assert_eq!(c.jobs[&id].state, JobState::Running);
}

#[test]
fn time_limit_sends_kill_timelimit() {
    let mut c = up();
    let id = submit(&mut c, 1000, |d| d.time_limit = 1);
    c.apply(1059, Command::Tick);
    assert_eq!(c.jobs[&id].state, JobState::Running);
    let (_, fx) = c.apply(1060, Command::Tick);
    let j = &c.jobs[&id];
    assert_eq!(
        (j.state, j.state_reason),
        (JobState::Timeout, reason::FAIL_TIMEOUT)
    );
    let m = msgs(&fx);
    assert!(
        m.iter()
            .any(|m| matches!(m, Message::RequestKillTimelimit(k) if k.step_id.job_id == id)),
        "{m:?}"
    );
    assert!(!m
        .iter()
        .any(|m| matches!(m, Message::RequestTerminateJob(_))));
}

#[test]
fn over_time_limit_adds_grace() {
    let mut c = controller(&format!("{SMALL_CLUSTER}{OTHER}OverTimeLimit=2\n"));
    reg(&mut c, 1000, "n1");
    let id = submit(&mut c, 1000, |d| d.time_limit = 1);
    c.apply(1060 + 119, Command::Tick);
    assert_eq!(c.jobs[&id].state, JobState::Running);
    c.apply(1060 + 120, Command::Tick);
    assert_eq!(c.jobs[&id].state, JobState::Timeout);
}

#[test]
fn requeue_of_a_running_job() {
    let mut c = up();
    let id = submit(&mut c, 1000, |_| {});
    let (r, fx) = c.apply(
        1010,
        Command::Requeue {
            uid: ALICE,
            job_id: id,
            flags: 0,
        },
    );
    assert_eq!(r, ok());
    assert!(msgs(&fx)
        .iter()
        .any(|m| matches!(m, Message::RequestTerminateJob(k) if k.step_id.job_id == id)));
    let j = &c.jobs[&id];
    assert_eq!(j.state, JobState::Pending);
    assert_eq!(j.ctl.restart_cnt, 1);
    assert!(j.alloc.is_empty() && j.batch_host.is_none());
    // Pending and completing until the epilog is done (stock's flags):
    // clients show COMPLETING with the reason of the run (None), and the
    // job keeps its start time meanwhile.
    assert_eq!(j.state_word(), crate::state::job::bits::COMPLETING);
    assert_eq!(j.state_reason, reason::WAIT_NO_REASON);
    assert_eq!((j.start_time, j.submit_time), (1000, 1000));
    // A scheduling pass meanwhile changes neither.
    c.apply(1011, Command::Tick);
    assert_eq!(c.jobs[&id].state_reason, reason::WAIT_NO_REASON);
    assert_eq!(
        c.apply(
            1011,
            Command::Requeue {
                uid: ALICE,
                job_id: id,
                flags: 0
            }
        )
        .0,
        Reply::Err(StateError::JobPending)
    );
    epilog(&mut c, 1012, id, "n1");
    // The epilog done: a new submission, waiting for its begin time
    // counted from now (stock's batch_requeue_fini).
    let j = &c.jobs[&id];
    assert_eq!(j.state_word(), crate::state::job::bits::PENDING);
    assert_eq!(j.state_reason, reason::WAIT_TIME);
    assert_eq!(j.eligible_time, 1012 + REQUEUE_DELAY);
    assert_eq!((j.start_time, j.end_time, j.submit_time), (0, 0, 1012));
    c.apply(1100, Command::Tick);
    assert_eq!(
        c.jobs[&id].state,
        JobState::Pending,
        "waits out the credential"
    );
    c.apply(1011 + REQUEUE_DELAY, Command::Tick);
    assert_eq!(c.jobs[&id].state, JobState::Pending);
    c.apply(1012 + REQUEUE_DELAY, Command::Tick);
    let j = &c.jobs[&id];
    assert_eq!((j.state, j.ctl.restart_cnt), (JobState::Running, 1));
}

#[test]
fn requeue_in_special_exit_state_until_released() {
    use crate::state::job::bits;
    let mut c = up();
    let id = submit(&mut c, 1000, |_| {});
    // scontrol requeuehold State=SpecialExit sends both flags.
    let (r, _) = c.apply(
        1010,
        Command::Requeue {
            uid: ALICE,
            job_id: id,
            flags: JOB_REQUEUE_HOLD | JOB_SPECIAL_EXIT,
        },
    );
    assert_eq!(r, ok());
    epilog(&mut c, 1011, id, "n1");
    let j = &c.jobs[&id];
    assert_eq!(j.state_word(), bits::SPECIAL_EXIT);
    assert_eq!((j.priority, j.state_reason), (0, reason::WAIT_HELD_USER));
    // The requeue hold's text is the one left, as stock words it.
    assert_eq!(j.state_desc.as_deref(), Some("job requeued in held state"));
    // It survives a restart.
    let snap = crate::persist::encode_state(&c);
    let mut back = ctrl();
    crate::persist::restore_state(&mut back, &snap, crate::persist::FORMAT_VERSION).unwrap();
    assert_eq!(back.jobs[&id].state_word(), bits::SPECIAL_EXIT);
    // A format 3 snapshot (no such section) still loads.
    let mut old = ctrl();
    let snap3 = crate::persist::encode_format(&c, 3);
    crate::persist::restore_state(&mut old, &snap3, 3).unwrap();
    assert_eq!(old.jobs[&id].state_word(), bits::PENDING);
    // Released: an ordinary pending job again.
    assert_eq!(release(&mut c, 1020, ALICE, id), ok());
    assert_eq!(c.jobs[&id].state_word(), bits::PENDING);

    // The special exit flag alone words its own hold.
    let id = submit(&mut c, 1030, |_| {});
    c.apply(1031, Command::Tick);
    let (r, _) = c.apply(
        1040,
        Command::Requeue {
            uid: 0,
            job_id: id,
            flags: JOB_SPECIAL_EXIT,
        },
    );
    assert_eq!(r, ok());
    let j = &c.jobs[&id];
    assert_eq!(
        j.state_desc.as_deref(),
        Some("job requeued in special exit state")
    );
    // Cancelled, it is just CANCELLED.
    testkit::kill(&mut c, 1050, 0, id);
    assert_eq!(
        c.jobs[&id].state_word() & !bits::COMPLETING,
        bits::CANCELLED
    );
}

#[test]
fn requeue_refusals_and_requeuehold() {
    let mut c = up();
    let id = submit(&mut c, 1000, |d| d.requeue = 0);
    let rq = |c: &mut Controller, uid, flags| {
        c.apply(
            1001,
            Command::Requeue {
                uid,
                job_id: id,
                flags,
            },
        )
        .0
    };
    assert_eq!(rq(&mut c, ALICE, 0), Reply::Err(StateError::Disabled));
    let id2 = submit(&mut c, 1000, |_| {});
    assert_eq!(
        c.apply(
            1001,
            Command::Requeue {
                uid: BOB,
                job_id: id2,
                flags: 0
            }
        )
        .0,
        Reply::Err(StateError::AccessDenied)
    );
    assert_eq!(
        c.apply(
            1001,
            Command::Requeue {
                uid: 0,
                job_id: id2,
                flags: JOB_REQUEUE_HOLD
            }
        )
        .0,
        ok()
    );
    let j = &c.jobs[&id2];
    assert_eq!(
        (j.state, j.priority, j.state_reason),
        (JobState::Pending, 0, reason::WAIT_HELD_USER)
    );
    assert_eq!(j.state_desc.as_deref(), Some("job requeued in held state"));
}

fn node_down(c: &mut Controller, now: Time, node: &str) {
    let r = set_node(c, now, node, crate::state::node::bits::DOWN, "broken");
    assert_eq!(r, ok());
}

#[test]
fn node_failure_requeues_when_allowed() {
    let mut c = up();
    let requeue = submit(&mut c, 1000, |_| {});
    let no = submit(&mut c, 1000, |d| {
        d.requeue = 0;
        d.min_cpus = 4;
    });
    let node = |c: &Controller, id: u32| c.nodes[c.jobs[&id].alloc[0].node].name().to_string();
    let (a, b) = (node(&c, requeue), node(&c, no));
    node_down(&mut c, 1010, &a);
    if a != b {
        node_down(&mut c, 1010, &b);
    }
    let j = &c.jobs[&requeue];
    assert_eq!((j.state, j.ctl.restart_cnt), (JobState::Pending, 1));
    assert!(j.completing.is_empty(), "a down node sends no epilog");
    // Finished at once: a new submission now, waiting for its begin time.
    assert_eq!(
        (j.submit_time, j.eligible_time, j.state_reason),
        (1010, 1010 + REQUEUE_DELAY, reason::WAIT_TIME)
    );
    let j = &c.jobs[&no];
    assert_eq!(
        (j.state, j.state_reason),
        (JobState::NodeFail, reason::FAIL_DOWN_NODE)
    );
}

#[test]
fn prolog_failure_drains_and_requeues_held() {
    let mut c = up();
    let id = submit(&mut c, 1000, |_| {});
    let (r, _) = c.apply(
        1001,
        Command::BatchComplete {
            uid: 0,
            job_id: id,
            job_rc: NO_VAL,
            slurm_rc: ESLURMD_PROLOG_FAILED as u32,
            node: Some("n1".into()),
        },
    );
    assert_eq!(r, ok());
    let n = &c.nodes[c.node_index("n1").unwrap()];
    assert!(n.drain);
    assert_eq!(n.reason.as_deref(), Some("Prolog error"));
    let j = &c.jobs[&id];
    assert_eq!(
        (j.state, j.priority, j.state_reason),
        (JobState::Pending, 0, reason::WAIT_HELD_USER)
    );
    assert_eq!(j.state_desc.as_deref(), Some("launch failed requeued held"));
    assert_eq!(j.ctl.restart_cnt, 1);

    // Not requeueable: it fails instead.
    let id = submit(&mut c, 1002, |d| d.requeue = 0);
    assert_eq!(c.jobs[&id].batch_host, c.node_index("n2"));
    c.apply(
        1003,
        Command::RpcDone {
            node: "n2".into(),
            purpose: crate::state::Purpose::Launch { job_id: id },
            outcome: crate::state::RpcOutcome::Rc(ESLURMD_PROLOG_FAILED),
        },
    );
    assert_eq!(c.jobs[&id].state, JobState::Failed);
    assert!(c.nodes[c.node_index("n2").unwrap()].drain);
}

#[test]
fn stock_slurmd_prolog_failure_path() {
    // Stock slurmd asks for a requeue with JOB_LAUNCH_FAILED, then
    // registers with status ESLURMD_PROLOG_FAILED.
    let mut c = up();
    let id = submit(&mut c, 1000, |_| {});
    let (r, _) = c.apply(
        1001,
        Command::Requeue {
            uid: 0,
            job_id: id,
            flags: JOB_LAUNCH_FAILED,
        },
    );
    assert_eq!(r, ok());
    assert_eq!(c.jobs[&id].state_reason, reason::WAIT_HELD_USER);
    let msg = SlurmNodeRegistrationStatusMsg {
        status: ESLURMD_PROLOG_FAILED as u32,
        ..node_msg("n1", 4, 1000)
    };
    c.apply(1002, reg_msg(msg, ProtocolVersion::V24_11));
    let n = &c.nodes[c.node_index("n1").unwrap()];
    assert_eq!((n.drain, n.reason.as_deref()), (true, Some("Prolog error")));
}

#[test]
fn signals_go_to_the_job_processes() {
    let mut c = up();
    let id = submit(&mut c, 1000, |_| {});
    let sig = |c: &mut Controller, uid, signal, flags| {
        c.apply(1001, signal_cmd(uid, SignalTarget::Job(id), signal, flags))
    };
    let (r, fx) = sig(&mut c, ALICE, 10, KILL_JOB_BATCH);
    assert_eq!(r, ok());
    let m = msgs(&fx);
    assert_eq!(m.len(), 1);
    let Message::RequestSignalTasks(s) = m[0] else {
        panic!("{m:?}")
    };
    assert_eq!(
        (s.step_id.job_id, s.step_id.step_id, s.signal),
        (id, StepId::BATCH_SCRIPT, 10)
    );
    assert_eq!(
        c.jobs[&id].state,
        JobState::Running,
        "a signal is no cancel"
    );
    // Without -b only the steps are signalled.
    let (_, fx) = sig(&mut c, ALICE, 10, 0);
    let Message::RequestSignalTasks(s) = msgs(&fx)[0] else {
        panic!()
    };
    assert_eq!(s.flags, KILL_STEPS_ONLY);
    assert_eq!(
        sig(&mut c, BOB, 10, 0).0,
        Reply::Err(StateError::AccessDenied)
    );
    // A pending job cannot take a signal.
    let mut c2 = ctrl();
    let p = submit(&mut c2, 1000, |_| {});
    let (r, fx) = c2.apply(1001, signal_cmd(ALICE, SignalTarget::Job(p), 10, 0));
    assert_eq!(r, Reply::Err(StateError::NotAlterableNow));
    assert!(fx.is_empty());
}

#[test]
fn control_commands_survive_the_log_and_snapshot() {
    use crate::persist::{decode_command, encode_command, encode_state, restore_state};
    let mut c = up();
    let id = submit(&mut c, 1000, |_| {});
    let cmds = [
        Command::Requeue {
            uid: 0,
            job_id: id,
            flags: JOB_REQUEUE_HOLD,
        },
        Command::UpdateJob {
            uid: 0,
            job_id: id,
            desc: Box::new(JobDescMsg {
                // as clients send it (0 would be --exclusive)
                shared: slurm_wire::pack::NO_VAL16,
                time_limit: 7,
                ..JobDescMsg::unset()
            }),
            version: ProtocolVersion::V22_05,
        },
    ];
    let mut replay = up();
    submit(&mut replay, 1000, |_| {});
    for cmd in cmds {
        let b = encode_command(&cmd).expect("logged");
        let back = decode_command(&b).unwrap();
        c.apply(1001, cmd);
        replay.apply(1001, back);
    }
    let j = (&c.jobs[&id], &replay.jobs[&id]);
    assert_eq!(
        (j.0.time_limit, j.0.ctl.restart_cnt, j.0.priority),
        (7, 1, 0)
    );
    assert_eq!(
        (j.1.time_limit, j.1.ctl.restart_cnt, j.1.priority),
        (7, 1, 0)
    );
    // Signals change nothing and are not logged.
    assert!(encode_command(&signal_cmd(0, SignalTarget::Job(id), 10, 0)).is_none());

    let snap = encode_state(&c);
    let mut back = ctrl();
    restore_state(&mut back, &snap, crate::persist::FORMAT_VERSION).unwrap();
    let j = &back.jobs[&id];
    assert_eq!(
        (j.ctl.restart_cnt, j.priority, j.state_reason),
        (1, 0, reason::WAIT_HELD_USER)
    );
    assert_eq!(j.state_desc.as_deref(), Some("job requeued in held state"));
}

fn drain(c: &mut Controller, now: Time, node: &str) {
    let r = set_node(c, now, node, crate::state::node::bits::DRAIN, "maint");
    assert_eq!(r, ok());
}

#[test]
fn out_of_service_nodes_give_req_node_not_avail() {
    let mut c = up();
    drain(&mut c, 1001, "n2");
    let big = submit(&mut c, 1002, |d| {
        d.min_nodes = 2;
        d.max_nodes = 2;
    });
    let j = &c.jobs[&big];
    assert_eq!(
        (j.state, j.state_reason),
        (JobState::Pending, reason::WAIT_NODE_NOT_AVAIL)
    );
    assert_eq!(
        j.state_desc.as_deref(),
        Some("ReqNodeNotAvail, May be reserved for other job")
    );
    // Older releases' controllers name drained nodes too.
    assert_eq!(
        node_not_avail_desc(&c, j, ProtocolVersion::V22_05),
        "ReqNodeNotAvail, UnavailableNodes:n2"
    );
    let info = crate::views::job_info(&c, j, ProtocolVersion::V22_05, 0);
    assert_eq!(
        info.state_desc.as_deref(),
        Some("ReqNodeNotAvail, UnavailableNodes:n2")
    );
    // It holds back nobody: a one-node job still starts.
    let small = submit(&mut c, 1003, |d| d.min_cpus = 4);
    assert_eq!(c.jobs[&small].state, JobState::Running);
    // A down node is named.
    node_down(&mut c, 1004, "n2");
    c.apply(1005, Command::Tick);
    assert_eq!(
        c.jobs[&big].state_desc.as_deref(),
        Some("ReqNodeNotAvail, UnavailableNodes:n2")
    );
    // Back in service: plain Resources while n1 is busy, then it runs.
    c.apply(
        1006,
        Command::UpdateNode {
            uid: 0,
            msg: Box::new(UpdateNodeMsg {
                node_names: Some("n2".into()),
                node_state: crate::state::node::bits::RESUME,
                reason_uid: NO_VAL,
                ..Default::default()
            }),
        },
    );
    reg(&mut c, 1006, "n2");
    c.apply(1007, Command::Tick);
    let j = &c.jobs[&big];
    assert_eq!(
        (j.state_reason, j.state_desc.as_deref()),
        (reason::WAIT_RESOURCES, None)
    );
    testkit::kill(&mut c, 1008, ALICE, small);
    epilog(&mut c, 1009, small, "n1");
    assert_eq!(c.jobs[&big].state, JobState::Running);
}

#[test]
fn a_job_held_while_running_stays_held_after_requeue() {
    let mut c = up();
    let id = submit(&mut c, 1000, |_| {});
    assert_eq!(hold(&mut c, 1001, 0, id), ok());
    assert_eq!(
        c.jobs[&id].state,
        JobState::Running,
        "a hold does not stop a job"
    );
    let (r, _) = c.apply(
        1002,
        Command::Requeue {
            uid: 0,
            job_id: id,
            flags: 0,
        },
    );
    assert_eq!(r, ok());
    let j = &c.jobs[&id];
    assert_eq!(
        (j.state, j.priority, j.state_reason),
        (JobState::Pending, 0, reason::WAIT_HELD)
    );
    epilog(&mut c, 1003, id, "n1");
    c.apply(1002 + REQUEUE_DELAY + 10, Command::Tick);
    assert_eq!(c.jobs[&id].state, JobState::Pending);
}
