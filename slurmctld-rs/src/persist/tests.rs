//! Crash-and-reload tests: commands go through the log as in the daemon,
//! the controller is dropped without shutdown, and a new one loads.

use super::*;
use crate::state::error::StateError;
use crate::state::job::{JobState, UserInfo};
use crate::state::testkit::{
    allocate_cmd, complete_cmd, controller, epilog_cmd, kill_cmd, kill_tasks_cmd, ping_done,
    reg_bare, signal_cmd, step_req, submit_cmd, unset, update_job_cmd, user,
};
use crate::state::{Purpose, Reply, RpcOutcome, SignalTarget};
use slurm_wire::msg::job::KillJobsMsg;
use slurm_wire::msg::job_desc::JobDescMsg;
use slurm_wire::msg::node::UpdateNodeMsg;
use slurm_wire::pack::{Writer, NO_VAL};
use slurm_wire::ProtocolVersion;
use std::collections::BTreeSet;

const CONF: &str = "\
ClusterName=t
SlurmctldHost=ctl
SlurmUser=root
NodeName=n[1-2] CPUs=4 RealMemory=1000 Gres=gpu:2
PartitionName=debug Nodes=n[1-2] Default=YES State=UP
";

fn fresh() -> Controller {
    controller(CONF)
}

/// A new state directory, its store, and the controller that runs on it.
fn new_store() -> (tempfile::TempDir, Store, Controller) {
    let dir = tempfile::tempdir().unwrap();
    let (s, _) = Store::open(dir.path(), fresh(), false).unwrap();
    (dir, s, fresh())
}

/// What a restarted daemon finds in `dir`.
fn reopen(dir: &Path) -> (Store, Loaded) {
    Store::open(dir, fresh(), false).unwrap()
}

/// What the daemon does per command: log (synced when it must be), apply.
fn step(s: &mut Store, c: &mut Controller, now: Time, cmd: Command) -> Reply {
    s.log(now, &cmd).unwrap();
    c.apply(now, cmd).0
}

fn reg(name: &str) -> Command {
    reg_bare(name, 4, 1000, ProtocolVersion::V24_11)
}

fn submit(cpus: u32, gres: Option<&str>, version: ProtocolVersion) -> Command {
    submit_cmd(
        UserInfo {
            uid: 2001,
            gid: 100,
            name: Some("alice".into()),
            gids: vec![100, 27],
            ..Default::default()
        },
        JobDescMsg {
            num_tasks: cpus,
            min_cpus: cpus,
            name: Some("job".into()),
            script: Some("#!/bin/sh\nsleep 100\n".into()),
            work_dir: Some("/home/alice".into()),
            environment: vec![Some("A=1".into())],
            tres_per_node: gres.map(str::to_string),
            ..JobDescMsg::unset()
        },
        version,
    )
}

/// Everything about jobs and nodes that must survive a crash.
fn fingerprint(c: &Controller) -> String {
    let mut s = format!("next={}\n", c.next_job_id());
    for j in c.jobs().values() {
        s += &format!(
            "job {} {:?} word={} reason={} part={} alloc={:?} batch={:?} times={:?} user={:?} desc={:?} ver={:?}\n",
            j.job_id,
            j.state,
            j.state_word(),
            j.state_reason,
            j.part,
            j.alloc,
            j.batch_host,
            (j.submit_time, j.start_time, j.end_time),
            j.user,
            j.req.to_desc().map(|d| (d.script, d.environment, d.argv, d.tres_per_node)),
            j.submit_version,
        );
    }
    for n in c.nodes().iter() {
        s += &format!(
            "node {} word={} cpus={} cores={:?} jobs={:?} completing={:?} gres={:?} reason={:?} drain={}\n",
            n.name(),
            n.state_word(),
            n.alloc_cpus,
            n.core_use,
            n.jobs,
            n.completing,
            n.gres_used,
            n.reason,
            n.drain
        );
    }
    s
}

fn run_some(s: &mut Store, c: &mut Controller) {
    step(s, c, 1001, reg("n1"));
    step(s, c, 1001, reg("n2"));
    // runs on n1 with a GPU, submitted by a 22.05 client
    assert!(matches!(
        step(
            s,
            c,
            1002,
            submit(4, Some("gres:gpu:1"), ProtocolVersion::V22_05)
        ),
        Reply::Submitted { .. }
    ));
    // runs on n2
    step(s, c, 1003, submit(4, None, ProtocolVersion::V26_05));
    // waits: the cluster is full
    step(s, c, 1004, submit(2, None, ProtocolVersion::V24_11));
    // another waits, then is cancelled
    step(s, c, 1005, submit(1, None, ProtocolVersion::V24_11));
    step(s, c, 1006, kill_cmd(2001, 4));
    step(s, c, 1007, Command::Tick);
}

#[test]
fn crash_then_reload_keeps_pending_and_running_jobs() {
    let (dir, mut s, mut c) = new_store();
    run_some(&mut s, &mut c);
    assert_eq!(c.jobs()[&1].state, JobState::Running);
    assert_eq!(c.jobs()[&3].state, JobState::Pending);
    let before = fingerprint(&c);
    // crash: no snapshot, no shutdown
    drop(s);
    drop(c);

    let (mut s, loaded) = reopen(dir.path());
    assert_eq!(loaded.replayed, 8);
    let mut c = loaded.controller;
    assert_eq!(fingerprint(&c), before);
    // Every node registered before the crash is asked to register again.
    let asked = c.ask_nodes_to_register();
    let registered = c
        .nodes()
        .iter()
        .filter(|n| n.protocol_version.is_some())
        .count();
    assert!(registered > 0);
    assert_eq!(asked.len(), registered);

    // The reloaded usage is real: when job 1 ends, the pending job 3 starts.
    let r = step(&mut s, &mut c, 1010, complete_cmd(1, 0, Some("n1".into())));
    assert_eq!(r, Reply::Ok);
    let r = step(&mut s, &mut c, 1010, epilog_cmd(1, Some("n1".into())));
    assert_eq!(r, Reply::Ok);
    assert_eq!(c.jobs()[&3].state, JobState::Running);
    // New jobs continue the id sequence.
    let r = step(
        &mut s,
        &mut c,
        1011,
        submit(1, None, ProtocolVersion::V24_11),
    );
    assert_eq!(r, Reply::Submitted { job_id: 5 });
}

#[test]
fn snapshot_then_log_then_crash() {
    let (dir, mut s, mut c) = new_store();
    run_some(&mut s, &mut c);
    s.snapshot(&c).unwrap();
    step(
        &mut s,
        &mut c,
        1020,
        complete_cmd(2, 256, Some("n2".into())),
    );
    let before = fingerprint(&c);
    drop(s);
    let (_, loaded) = reopen(dir.path());
    assert_eq!(loaded.replayed, 1);
    assert_eq!(fingerprint(&loaded.controller), before);
    assert_eq!(loaded.controller.jobs()[&2].state, JobState::Failed);
}

#[test]
fn a_log_already_in_the_snapshot_is_not_replayed_twice() {
    let (dir, mut s, mut c) = new_store();
    run_some(&mut s, &mut c);
    let wal = fs::read(dir.path().join(WAL_FILE)).unwrap();
    s.snapshot(&c).unwrap();
    drop(s);
    // As if the crash came between the snapshot's rename and the log's truncation.
    fs::write(dir.path().join(WAL_FILE), wal).unwrap();
    let (_, loaded) = reopen(dir.path());
    assert_eq!(loaded.replayed, 0);
    assert_eq!(fingerprint(&loaded.controller), fingerprint(&c));
}

#[test]
fn torn_tail_is_dropped_and_corruption_inside_is_an_error() {
    let (dir, mut s, mut c) = new_store();
    run_some(&mut s, &mut c);
    drop(s);
    let path = dir.path().join(WAL_FILE);
    let full = fs::read(&path).unwrap();
    // half of a last record
    fs::write(&path, &full[..full.len() - 3]).unwrap();
    let (s, loaded) = reopen(dir.path());
    assert_eq!(loaded.replayed, 7);
    drop(s);

    let (mut s, _) = Store::open(dir.path(), fresh(), true).unwrap();
    let mut c = fresh();
    run_some(&mut s, &mut c);
    drop(s);
    let mut bad = fs::read(&path).unwrap();
    bad[40] ^= 0xff;
    fs::write(&path, &bad).unwrap();
    match Store::open(dir.path(), fresh(), false) {
        Err(PersistError::MidLog { offset, .. }) => assert_eq!(offset, 12),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("corruption not detected"),
    }
}

#[test]
fn newer_formats_are_refused_and_clear_starts_fresh() {
    let (dir, mut s, mut c) = new_store();
    run_some(&mut s, &mut c);
    s.snapshot(&c).unwrap();
    drop(s);
    let snap = dir.path().join(SNAP_FILE);
    let mut b = fs::read(&snap).unwrap();
    b[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_be_bytes());
    fs::write(&snap, &b).unwrap();
    let err = Store::open(dir.path(), fresh(), false).err().unwrap();
    assert!(matches!(err, PersistError::Newer { found, .. } if found == FORMAT_VERSION + 1));
    assert!(err
        .to_string()
        .contains("newer than this slurmctld-rs supports"));
    let (_, loaded) = Store::open(dir.path(), fresh(), true).unwrap();
    assert!(loaded.controller.jobs().is_empty());
    assert_eq!(loaded.controller.next_job_id(), 1);
}

/// One command of each variant (and a few of some).
fn one_of_each() -> Vec<Command> {
    vec![
        Command::Tick,
        reg("n1"),
        ping_done("n2", None),
        ping_done("n1", Some((150, 900))),
        // A ping answered without a load.
        Command::RpcDone {
            node: "n1".into(),
            purpose: Purpose::Ping,
            outcome: RpcOutcome::Other,
        },
        Command::UpdateNode {
            uid: 0,
            msg: Box::new(UpdateNodeMsg {
                node_names: Some("n[1-2]".into()),
                node_state: 0x200,
                reason: Some("disk".into()),
                reason_uid: 7,
                ..Default::default()
            }),
        },
        submit(3, Some("gres/gpu:1"), ProtocolVersion::V26_05),
        kill_cmd(1, 2),
        complete_cmd(3, 1, None),
        epilog_cmd(3, Some("n1".into())),
        Command::RpcDone {
            node: "n1".into(),
            purpose: Purpose::Terminate { job_id: 3 },
            outcome: RpcOutcome::Rc(slurm_wire::errno::ESLURMD_KILL_JOB_ALREADY_COMPLETE),
        },
        Command::RpcDone {
            node: "n1".into(),
            purpose: Purpose::Launch { job_id: 3 },
            outcome: RpcOutcome::Failed,
        },
        Command::RpcDone {
            node: "n2".into(),
            purpose: Purpose::Launch { job_id: 4 },
            outcome: RpcOutcome::Rc(4005),
        },
        match submit(2, None, ProtocolVersion::V26_05) {
            Command::Submit {
                user,
                desc,
                version,
            } => Command::Allocate {
                user,
                desc,
                version,
                resp_host: "10.0.0.7".into(),
            },
            _ => unreachable!(),
        },
        Command::StepCreate {
            uid: 2001,
            req: Box::new(slurm_wire::msg::step::JobStepCreateRequestMsg {
                min_nodes: 2,
                num_tasks: 4,
                node_list: Some("n[1-2]".into()),
                ..Default::default()
            }),
            version: ProtocolVersion::V24_11,
        },
        Command::StepComplete {
            uid: 0,
            msg: Box::new(slurm_wire::msg::step::StepCompleteMsg {
                range_first: 0,
                range_last: 1,
                step_rc: 3,
                ..Default::default()
            }),
        },
        Command::CompleteAllocation {
            uid: 2001,
            job_id: 4,
            job_rc: 0,
        },
        Command::UpdatePartition {
            uid: 0,
            msg: Box::new(slurm_wire::msg::update_part::UpdatePartMsg {
                name: Some("debug".into()),
                state_up: slurm_wire::msg::update_part::state::DRAIN,
                max_time: NO_VAL,
                ..Default::default()
            }),
        },
        Command::DeletePartition {
            uid: 0,
            name: "debug".into(),
        },
        update_job_cmd(2001, 3, |d| d.priority = 0),
        Command::Requeue {
            uid: 0,
            job_id: 3,
            flags: 0,
        },
        kill_tasks_cmd(2001, 5, &[1, 3]),
        // scancel -b: SIGKILL to the batch script (logged: a pending job
        // is cancelled by it).
        signal_cmd(
            2001,
            SignalTarget::Job(3),
            9,
            crate::state::control::KILL_JOB_BATCH,
        ),
        Command::KillJobs {
            uid: 2001,
            filter: Box::new(KillJobsMsg {
                signal: 9,
                state: 12,
                user_name: Some("alice".into()),
                user_id: 2001,
                jobs_array: vec![Some("5_[1-2]".into())],
                ..Default::default()
            }),
        },
        Command::UpdateArray {
            uid: 2001,
            array_job_id: 5,
            tasks: Some(vec![2]),
            desc: Box::new(unset(|d| d.priority = 0)),
            version: ProtocolVersion::V24_11,
        },
        Command::RequeueArray {
            uid: 0,
            array_job_id: 5,
            tasks: None,
            flags: 0,
        },
        signal_cmd(2001, SignalTarget::Job(3), 10, 0),
        signal_cmd(
            2001,
            SignalTarget::Step {
                job_id: 3,
                step_id: 0,
            },
            9,
            0,
        ),
        Command::KillJobs {
            uid: 2001,
            filter: Box::new(KillJobsMsg {
                signal: 10,
                job_name: Some("a".into()),
                ..Default::default()
            }),
        },
        // A ping's outcome that changes nothing (the agent does not send
        // it; not logged if it came).
        Command::RpcDone {
            node: "n1".into(),
            purpose: Purpose::Signal { job_id: 3 },
            outcome: RpcOutcome::Failed,
        },
        Command::Reconfigure(Box::new((**fresh().conf()).clone())),
    ]
}

/// Which variant `cmd` is. No catch-all arm: a new variant fails to build
/// here until it is added to [`one_of_each`].
fn variant(cmd: &Command) -> usize {
    match cmd {
        Command::Tick => 0,
        Command::Register { .. } => 1,
        Command::RpcDone { .. } => 2,
        Command::UpdateNode { .. } => 3,
        Command::Submit { .. } => 4,
        Command::Signal { .. } => 5,
        Command::KillJobs { .. } => 6,
        Command::BatchComplete { .. } => 7,
        Command::EpilogComplete { .. } => 8,
        Command::Reconfigure(_) => 9,
        Command::Allocate { .. } => 10,
        Command::StepCreate { .. } => 11,
        Command::StepComplete { .. } => 12,
        Command::CompleteAllocation { .. } => 13,
        Command::UpdateJob { .. } => 14,
        Command::Requeue { .. } => 15,
        Command::UpdateArray { .. } => 16,
        Command::RequeueArray { .. } => 17,
        Command::UpdatePartition { .. } => 18,
        Command::DeletePartition { .. } => 19,
    }
}
const VARIANTS: usize = 20;

#[test]
fn every_logged_command_round_trips() {
    let cmds = one_of_each();
    let seen: BTreeSet<usize> = cmds.iter().map(variant).collect();
    assert_eq!(
        seen,
        (0..VARIANTS).collect(),
        "one_of_each misses a variant"
    );
    for cmd in cmds.into_iter().filter(|c| c.meta().logged) {
        let b = encode_command(&cmd).unwrap_or_else(|| panic!("{cmd:?} has no record"));
        let back = decode_command(&b).unwrap();
        assert_eq!(format!("{back:?}"), format!("{cmd:?}"));
    }
}

/// The decisions [`Command::meta`] makes, stated once more as expected
/// behaviour: reconfiguration, signals that cannot cancel (another signal,
/// or a step's) and RPC outcomes that change nothing have no record; node
/// reports are held while the log is down, liveness per node; only what
/// creates work or just schedules frees nothing; only Reconfigure
/// reconfigures.
#[test]
fn every_command_has_the_meta_its_handling_needs() {
    use crate::state::WhenLogDown;
    for cmd in one_of_each() {
        let m = cmd.meta();
        let v = variant(&cmd);
        let not_logged = match &cmd {
            Command::Reconfigure(_) => true,
            Command::Signal { target, signal, .. } => {
                *signal != 9 || matches!(target, SignalTarget::Step { .. })
            }
            Command::KillJobs { filter, .. } => filter.signal != 9,
            Command::RpcDone { purpose, .. } => matches!(purpose, Purpose::Signal { .. }),
            _ => false,
        };
        assert_eq!(m.logged, !not_logged, "{cmd:?}");
        assert_eq!(encode_command(&cmd).is_some(), m.logged, "{cmd:?}");
        let liveness = matches!(
            &cmd,
            Command::RpcDone {
                purpose: Purpose::Ping,
                ..
            }
        );
        let held = matches!(v, 1 | 7 | 8 | 12 | 13) || (v == 2 && !liveness && m.logged);
        assert_eq!(m.when_log_down == WhenLogDown::Held, held, "{cmd:?}");
        match (&cmd, m.when_log_down) {
            (Command::RpcDone { node, .. }, WhenLogDown::NewestOf(n)) if liveness => {
                assert_eq!(node, n)
            }
            (_, w) if liveness => panic!("liveness {cmd:?} is {w:?}"),
            (_, w) => assert!(!matches!(w, WhenLogDown::NewestOf(_)), "{cmd:?}"),
        }
        let frees_nothing = matches!(v, 0 | 4 | 10 | 11) || (v == 2 && !m.logged);
        assert_eq!(m.may_free, !frees_nothing, "{cmd:?}");
        assert_eq!(m.reconfigures, v == 9, "{cmd:?}");
    }
}

/// An interactive allocation with a running srun step, as `srun -N2`
/// leaves it.
fn alloc_with_step(s: &mut Store, c: &mut Controller) -> u32 {
    use slurm_wire::msg::step::JobStepCreateRequestMsg;
    step(s, c, 1001, reg("n1"));
    step(s, c, 1001, reg("n2"));
    let desc = JobDescMsg {
        min_nodes: 2,
        max_nodes: 2,
        min_cpus: 1,
        alloc_resp_port: 4000,
        other_port: 4001,
        ..JobDescMsg::unset()
    };
    let cmd = allocate_cmd(user(2001, 100), desc);
    let Reply::Submitted { job_id } = step(s, c, 1002, cmd) else {
        panic!("allocation refused")
    };
    let req = JobStepCreateRequestMsg {
        name: Some("hostname".into()),
        ..step_req(job_id, 2, 2)
    };
    let cmd = Command::StepCreate {
        uid: 2001,
        req: Box::new(req),
        version: ProtocolVersion::V26_05,
    };
    let r = step(s, c, 1003, cmd);
    assert!(matches!(r, Reply::Step { .. }), "{r:?}");
    job_id
}

#[test]
fn running_steps_survive_a_snapshot_and_a_crash() {
    let (dir, mut s, mut c) = new_store();
    let job_id = alloc_with_step(&mut s, &mut c);
    assert_eq!(c.steps()[&job_id].steps.len(), 1);
    assert!(c.steps()[&job_id].srun.is_some());
    // Everything is now in the snapshot only; the log is empty.
    s.snapshot(&c).unwrap();
    drop(s);
    let (_, loaded) = reopen(dir.path());
    assert_eq!(loaded.replayed, 0);
    assert!(loaded.controller.steps().iter().eq(c.steps().iter()));
    assert_eq!(fingerprint(&loaded.controller), fingerprint(&c));
}

/// Which cores each job holds comes back exactly, from the log alone and
/// from a snapshot: they are in the credentials the nodes bound.
#[test]
fn held_cores_survive_a_snapshot_and_a_crash() {
    let (dir, mut s, mut c) = new_store();
    step(&mut s, &mut c, 1001, reg("n1"));
    for (t, cpus) in [(1002, 2), (1003, 1), (1004, 1)] {
        step(
            &mut s,
            &mut c,
            t,
            submit(cpus, None, ProtocolVersion::V24_11),
        );
    }
    // The 2-CPU job ends: the next one takes its first core, leaving a gap.
    step(&mut s, &mut c, 1005, complete_cmd(1, 0, Some("n1".into())));
    step(&mut s, &mut c, 1006, epilog_cmd(1, Some("n1".into())));
    step(
        &mut s,
        &mut c,
        1007,
        submit(1, None, ProtocolVersion::V24_11),
    );
    let cores: Vec<Vec<u16>> = (2..=4)
        .map(|id| c.jobs()[&id].alloc[0].cores.clone())
        .collect();
    assert_eq!(cores, vec![vec![2], vec![3], vec![0]]);
    let (_, loaded) = reopen(dir.path());
    assert_eq!(fingerprint(&loaded.controller), fingerprint(&c));
    drop(loaded);
    let (mut s, loaded) = reopen(dir.path());
    s.snapshot(&loaded.controller).unwrap();
    drop(s);
    let (_, again) = reopen(dir.path());
    assert_eq!(fingerprint(&again.controller), fingerprint(&c));
}

/// A node that only answers pings after its registration is not found
/// "not responding" when the log is replayed past SlurmdTimeout: the
/// restarted controller keeps its jobs running, as the live one did.
#[test]
fn ping_answers_are_replayed_so_a_live_node_stays_up() {
    let (dir, mut s, mut c) = new_store();
    step(&mut s, &mut c, 1001, reg("n1"));
    step(
        &mut s,
        &mut c,
        1002,
        submit(1, None, ProtocolVersion::V24_11),
    );
    // SlurmdTimeout is 300: answers every 100 s keep n1 up for 1,000 s.
    for t in (1100..=2000).step_by(100) {
        step(&mut s, &mut c, t, ping_done("n1", Some((0, 1000))));
        step(&mut s, &mut c, t + 1, Command::Tick);
    }
    assert_eq!(c.jobs()[&1].state, JobState::Running);
    let (_, loaded) = reopen(dir.path());
    assert_eq!(loaded.controller.jobs()[&1].state, JobState::Running);
    assert_eq!(fingerprint(&loaded.controller), fingerprint(&c));
}

#[test]
fn a_format_1_snapshot_without_steps_still_loads() {
    let (dir, mut s, mut c) = new_store();
    run_some(&mut s, &mut c);
    s.snapshot(&c).unwrap();
    drop(s);
    // Rewrite it as format 1 wrote it: version 1, no steps section.
    let path = dir.path().join(SNAP_FILE);
    let b = fs::read(&path).unwrap();
    // magic(8) version(4) seq(8) ... state checksum(4)
    let state = super::encode_format(&c, 1);
    let mut old = b[..20].to_vec();
    old[8..12].copy_from_slice(&1u32.to_be_bytes());
    old.extend_from_slice(&state);
    old.extend_from_slice(&fnv1a(&state).to_be_bytes());
    fs::write(&path, old).unwrap();
    let (_, loaded) = reopen(dir.path());
    assert_eq!(fingerprint(&loaded.controller), fingerprint(&c));
}

/// Arrays (split task records, pending tasks, throttle) and dependencies
/// come back from the log alone, and from a snapshot plus the log.
#[test]
fn arrays_and_dependencies_survive_a_crash() {
    let with = |f: fn(&mut JobDescMsg)| {
        let mut cmd = submit(1, None, ProtocolVersion::V24_11);
        if let Command::Submit { desc, .. } = &mut cmd {
            f(desc);
        }
        cmd
    };
    for snapshot_midway in [false, true] {
        let (dir, mut s, mut c) = new_store();
        step(&mut s, &mut c, 1001, reg("n1"));
        step(&mut s, &mut c, 1001, reg("n2"));
        // Job 1: tasks 0-9, two at a time.
        step(
            &mut s,
            &mut c,
            1002,
            with(|d| d.array_inx = Some("0-9%2".into())),
        );
        if snapshot_midway {
            s.snapshot(&c).unwrap();
        }
        // Job 4 waits for the whole array.
        step(
            &mut s,
            &mut c,
            1003,
            with(|d| d.dependency = Some("afterok:1".into())),
        );
        step(&mut s, &mut c, 1004, kill_tasks_cmd(2001, 1, &[5, 6]));
        step(
            &mut s,
            &mut c,
            1005,
            update_job_cmd(2001, 4, |d| {
                d.dependency = Some("afterany:1?afterok:2".into())
            }),
        );
        assert_eq!(
            c.arrays().task_of(2).map(|r| (r.array_job_id, r.task_id)),
            Some((1, 0))
        );
        assert_eq!(c.jobs()[&4].state, JobState::Pending);
        let before = (fingerprint(&c), c.arrays().clone(), c.deps().clone());
        drop(s);
        drop(c);
        let (mut s, loaded) = reopen(dir.path());
        let mut c = loaded.controller;
        assert_eq!(
            (fingerprint(&c), c.arrays().clone(), c.deps().clone()),
            before
        );
        assert_eq!(
            c.dependency_text(4).as_deref(),
            Some("afterany:1_*(unfulfilled)?afterok:2(unfulfilled)")
        );
        // The throttle still holds after the reload: when task 0 ends,
        // exactly one more task starts (task 2), and ids go on.
        step(&mut s, &mut c, 1010, complete_cmd(2, 0, Some("n1".into())));
        assert_eq!(c.arrays().find_task(1, 2), Some(5));
        step(&mut s, &mut c, 1011, epilog_cmd(2, Some("n1".into())));
        // afterok:2 is met, and `?` needs only one.
        assert_eq!(c.jobs()[&4].state, JobState::Running);
    }
}

#[test]
fn a_deleted_partition_stays_deleted_when_the_log_is_replayed() {
    let conf = format!("{CONF}PartitionName=extra Nodes=n1 OverSubscribe=FORCE:2\n");
    let fresh2 = || controller(&conf);
    let dir = tempfile::tempdir().unwrap();
    let (mut s, _) = Store::open(dir.path(), fresh2(), false).unwrap();
    let mut c = fresh2();
    step(&mut s, &mut c, 1001, reg("n1"));
    let del = |uid| Command::DeletePartition {
        uid,
        name: "extra".into(),
    };
    assert_eq!(
        step(&mut s, &mut c, 1002, del(1000)),
        Reply::Err(StateError::InvalidUserId)
    );
    assert_eq!(step(&mut s, &mut c, 1003, del(0)), Reply::Ok);
    let mut to_extra = submit(1, None, ProtocolVersion::V24_11);
    if let Command::Submit { desc, .. } = &mut to_extra {
        desc.partition = Some("extra".into());
    }
    assert_eq!(
        step(&mut s, &mut c, 1004, to_extra),
        Reply::Err(StateError::InvalidPartitionName)
    );
    let before = fingerprint(&c);
    drop(s);
    drop(c);

    let (_s, loaded) = Store::open(dir.path(), fresh2(), false).unwrap();
    let c = loaded.controller;
    assert_eq!(loaded.replayed, 4);
    let names: Vec<&str> = c.conf().partitions.iter().map(|p| p.name()).collect();
    assert_eq!(names, ["debug"]);
    assert_eq!(fingerprint(&c), before);
}

/// A request with what only its launch reads, from a `version` client.
fn submit_launch_only(version: ProtocolVersion, tag: &str) -> Command {
    let Command::Submit { user, mut desc, .. } = submit(1, None, version) else {
        unreachable!()
    };
    desc.script = Some(format!("#!/bin/sh\necho {tag}\n"));
    desc.environment = vec![Some(format!("TAG={tag}")), Some("B=".into())];
    desc.argv = vec![Some("a.sh".into()), Some(tag.into())];
    desc.spank_job_env = vec![Some(format!("SPANK_TAG={tag}"))];
    desc.acctg_freq = Some("task=5".into());
    submit_cmd(user, *desc, version)
}

#[test]
fn launch_contents_survive_a_snapshot_and_the_log() {
    // No node yet: both jobs wait, one saved in the snapshot, one only
    // in the log; their launches after the restart carry what was sent.
    let (dir, mut s, mut c) = new_store();
    let versions = [ProtocolVersion::V22_05, ProtocolVersion::V26_05];
    assert_eq!(
        step(&mut s, &mut c, 1000, submit_launch_only(versions[0], "one")),
        Reply::Submitted { job_id: 1 }
    );
    s.snapshot(&c).unwrap();
    assert_eq!(
        step(&mut s, &mut c, 1001, submit_launch_only(versions[1], "two")),
        Reply::Submitted { job_id: 2 }
    );
    let before: Vec<JobDescMsg> = [1, 2].map(|id| c.jobs()[&id].req.to_desc().unwrap()).into();
    drop(s);
    let (_, loaded) = reopen(dir.path());
    let mut c = loaded.controller;
    assert_eq!(loaded.replayed, 1);
    for (id, b) in [1, 2].into_iter().zip(&before) {
        let back = c.jobs()[&id].req.to_desc().unwrap();
        assert_eq!(
            (
                &back.script,
                &back.environment,
                &back.argv,
                &back.spank_job_env
            ),
            (&b.script, &b.environment, &b.argv, &b.spank_job_env)
        );
    }
    let mut launched = Vec::new();
    for n in ["n1", "n2"] {
        let (_, fx) = c.apply(1010, reg(n));
        launched.extend(crate::state::testkit::launches(&fx));
    }
    launched.sort_by_key(|m| m.job_id);
    assert_eq!(launched.len(), 2);
    for (m, tag) in launched.iter().zip(["one", "two"]) {
        assert_eq!(
            m.script.as_deref(),
            Some(format!("#!/bin/sh\necho {tag}\n").as_str())
        );
        assert_eq!(m.argv, vec![Some("a.sh".into()), Some(tag.to_string())]);
        assert_eq!(m.spank_job_env, vec![Some(format!("SPANK_TAG={tag}"))]);
        assert_eq!(m.acctg_freq.as_deref(), Some("task=5"));
        assert_eq!(
            m.environment[..2],
            [Some(format!("TAG={tag}")), Some("B=".into())]
        );
    }
}

#[test]
fn a_format_4_snapshot_with_wire_requests_still_loads() {
    let (dir, mut s, mut c) = new_store();
    run_some(&mut s, &mut c);
    step(
        &mut s,
        &mut c,
        1030,
        submit_launch_only(ProtocolVersion::V24_11, "four"),
    );
    s.snapshot(&c).unwrap();
    drop(s);
    let path = dir.path().join(SNAP_FILE);
    let b = fs::read(&path).unwrap();
    let state = super::encode_format(&c, 4);
    assert_ne!(
        state,
        super::encode_state(&c),
        "format 5 saves requests otherwise"
    );
    let mut old = b[..20].to_vec();
    old[8..12].copy_from_slice(&4u32.to_be_bytes());
    old.extend_from_slice(&state);
    old.extend_from_slice(&fnv1a(&state).to_be_bytes());
    fs::write(&path, old).unwrap();
    let (_, loaded) = reopen(dir.path());
    assert_eq!(fingerprint(&loaded.controller), fingerprint(&c));
    for (id, j) in c.jobs().iter() {
        assert_eq!(
            loaded.controller.jobs()[id].req.to_desc().unwrap().argv,
            j.req.to_desc().unwrap().argv
        );
    }
}

/// A live state with something in each section a format added: a running
/// step (2), an array and a dependency on it (3), a job in special exit
/// (4), and held cores with a gap that choosing them again would fill (5).
fn every_section() -> (tempfile::TempDir, Store, Controller) {
    let (dir, mut s, mut c) = new_store();
    let alloc = alloc_with_step(&mut s, &mut c);
    let mut t = 1010;
    let mut next = |s: &mut Store, c: &mut Controller, cmd| {
        t += 1;
        step(s, c, t, cmd)
    };
    for cpus in [2, 1] {
        next(&mut s, &mut c, submit(cpus, None, ProtocolVersion::V24_11));
    }
    next(
        &mut s,
        &mut c,
        complete_cmd(alloc + 1, 0, Some("n1".into())),
    );
    next(&mut s, &mut c, epilog_cmd(alloc + 1, Some("n1".into())));
    next(&mut s, &mut c, submit(1, None, ProtocolVersion::V24_11));
    let mut array = submit(1, None, ProtocolVersion::V26_05);
    if let Command::Submit { desc, .. } = &mut array {
        desc.array_inx = Some("0-3%1".into());
        desc.begin_time = 5000;
    }
    let Reply::Submitted { job_id: array } = next(&mut s, &mut c, array) else {
        panic!("array refused")
    };
    let mut dep = submit(1, None, ProtocolVersion::V22_05);
    if let Command::Submit { desc, .. } = &mut dep {
        desc.dependency = Some(format!("afterok:{array}"));
    }
    let Reply::Submitted { job_id: dep } = next(&mut s, &mut c, dep) else {
        panic!("dependent job refused")
    };
    // Held in special exit (as a requeue with JOB_SPECIAL_EXIT leaves it).
    c.jobs_mut().get_mut(&dep).unwrap().ctl.special_exit = true;
    assert!(!c.steps().is_empty() && !c.arrays().metas.is_empty() && !c.deps().is_empty());
    (dir, s, c)
}

fn held_cores(c: &Controller) -> Vec<(u32, Vec<Vec<u16>>)> {
    c.jobs()
        .values()
        .map(|j| (j.job_id, j.alloc.iter().map(|a| a.cores.clone()).collect()))
        .collect()
}

/// Each migration step: a snapshot of every older format loads what that
/// format held, and what it did not hold comes back as the lift to the
/// next format says (no steps, no arrays, no special exit, cores chosen
/// again).
#[test]
fn each_older_snapshot_format_loads_what_it_held() {
    let (dir, mut s, c) = every_section();
    s.snapshot(&c).unwrap();
    drop(s);
    let path = dir.path().join(SNAP_FILE);
    let head = fs::read(&path).unwrap()[..20].to_vec();
    let special: Vec<u32> = c
        .jobs()
        .values()
        .filter(|j| j.ctl.special_exit)
        .map(|j| j.job_id)
        .collect();
    assert_eq!(special.len(), 1);
    for format in 1..=FORMAT_VERSION {
        let state = super::encode_format(&c, format);
        let mut old = head.clone();
        old[8..12].copy_from_slice(&format.to_be_bytes());
        old.extend_from_slice(&state);
        old.extend_from_slice(&fnv1a(&state).to_be_bytes());
        fs::write(&path, old).unwrap();
        let (_, loaded) = reopen(dir.path());
        let l = loaded.controller;
        let jobs = |c: &Controller| {
            c.jobs()
                .values()
                .map(|j| {
                    (
                        j.job_id,
                        j.state,
                        j.req.to_desc().ok().map(|d| d.environment),
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(jobs(&l), jobs(&c), "format {format}");
        assert_eq!(l.next_job_id(), c.next_job_id(), "format {format}");
        if format >= 2 {
            assert!(l.steps().iter().eq(c.steps().iter()), "format {format}");
        } else {
            assert!(l.steps().is_empty(), "format {format}");
        }
        if format >= 3 {
            assert_eq!(
                (&l.arrays(), &l.deps()),
                (&c.arrays(), &c.deps()),
                "format {format}"
            );
        } else {
            assert!(
                l.arrays().metas.is_empty() && l.deps().is_empty(),
                "format {format}"
            );
        }
        let l_special: Vec<u32> = l
            .jobs()
            .values()
            .filter(|j| j.ctl.special_exit)
            .map(|j| j.job_id)
            .collect();
        let want: &[u32] = if format >= 4 { &special } else { &[] };
        assert_eq!(l_special, want, "format {format}");
        if format >= 5 {
            assert_eq!(held_cores(&l), held_cores(&c), "format {format}");
        } else {
            assert_ne!(held_cores(&l), held_cores(&c), "format {format}");
        }
    }
}

/// A log of formats 1-5 (records without the marker and header checksum)
/// replays, and a torn last record of it is cut.
#[test]
fn a_format_5_log_replays_and_its_torn_tail_is_cut() {
    let (dir, mut s, mut c) = new_store();
    let cmds = [
        (1001, reg("n1")),
        (1001, reg("n2")),
        (1002, submit(4, Some("gres:gpu:1"), ProtocolVersion::V22_05)),
        (1003, submit(2, None, ProtocolVersion::V24_11)),
        (1004, kill_cmd(2001, 2)),
    ];
    let mut log = fs::read(dir.path().join(WAL_FILE)).unwrap()[..12].to_vec();
    log[8..12].copy_from_slice(&5u32.to_be_bytes());
    let mut after = Vec::new();
    for (seq, (t, cmd)) in (1..).zip(cmds) {
        let old = match cmd {
            Command::Signal { .. } => old_record(Old::Kill {
                uid: 2001,
                job_id: 2,
            }),
            _ => encode_command(&cmd).unwrap(),
        };
        log.extend(wal::encode_unframed(seq, t, &old));
        step(&mut s, &mut c, t, cmd);
        after.push(fingerprint(&c));
    }
    drop(s);
    let path = dir.path().join(WAL_FILE);
    assert_ne!(
        fs::read(&path).unwrap(),
        log,
        "format 6 frames records otherwise"
    );
    fs::write(&path, &log).unwrap();
    // The start compacts into a new snapshot: keep the empty one to go back to.
    let snap = dir.path().join(SNAP_FILE);
    let empty = fs::read(&snap).unwrap();
    let (_, loaded) = reopen(dir.path());
    assert_eq!(loaded.replayed, 5);
    assert_eq!(fingerprint(&loaded.controller), fingerprint(&c));
    log.truncate(log.len() - 3);
    fs::write(&path, &log).unwrap();
    fs::write(&snap, &empty).unwrap();
    let (_, loaded) = reopen(dir.path());
    assert_eq!(loaded.replayed, 4);
    assert_eq!(fingerprint(&loaded.controller), after[3]);
    assert_ne!(after[3], after[4]);
}

/// The records formats 1-6 wrote for commands that are now others: the
/// encoder of the release before intents, kept as the fixtures' source.
enum Old<'a> {
    Kill {
        uid: u32,
        job_id: u32,
    },
    KillTasks {
        uid: u32,
        array_job_id: u32,
        tasks: &'a [u32],
    },
    NodeUnreachable(&'a str),
    NodeResponded(&'a str, u32, u64),
    TerminateDone(u32, &'a str),
    LaunchFailed(u32, &'a str, i32),
}

fn old_record(o: Old<'_>) -> Vec<u8> {
    let mut w = Writer::new();
    match o {
        Old::Kill { uid, job_id } => {
            w.u8(6);
            w.u32(uid);
            w.u32(job_id);
            w.u16(9);
        }
        Old::KillTasks {
            uid,
            array_job_id,
            tasks,
        } => {
            w.u8(40);
            w.u32(uid);
            w.u32(array_job_id);
            w.u16(9);
            w.count(tasks.len());
            for t in tasks {
                w.u32(*t);
            }
        }
        Old::NodeUnreachable(node) => {
            w.u8(3);
            w.str(Some(node));
        }
        Old::NodeResponded(node, cpu_load, free_mem) => {
            w.u8(70);
            w.str(Some(node));
            w.u32(cpu_load);
            w.u64(free_mem);
        }
        Old::TerminateDone(job_id, node) => {
            w.u8(9);
            w.u32(job_id);
            w.str(Some(node));
        }
        Old::LaunchFailed(job_id, node, rc) => {
            w.u8(10);
            w.u32(job_id);
            w.str(Some(node));
            w.u32(rc as u32);
        }
    }
    w.into_vec()
}

/// A log the release before wrote (format 6: cancels decided by the
/// daemon, the commands it made of slurmd's answers) replays to the state
/// the new commands give; each old record is read only in the old formats.
#[test]
fn a_format_6_log_of_cancels_and_rpc_outcomes_replays_as_intents() {
    use slurm_wire::errno::ESLURMD_KILL_JOB_ALREADY_COMPLETE;
    let (dir, mut s, mut c) = new_store();
    let array = JobDescMsg {
        array_inx: Some("1-3".into()),
        ..match submit(1, None, ProtocolVersion::V24_11) {
            Command::Submit { desc, .. } => *desc,
            _ => unreachable!(),
        }
    };
    let same = |cmd: Command| {
        let b = encode_command(&cmd).unwrap();
        (cmd, b)
    };
    let mut log = fs::read(dir.path().join(WAL_FILE)).unwrap()[..12].to_vec();
    log[8..12].copy_from_slice(&6u32.to_be_bytes());
    let mut seq = 0;
    let mut run = |c: &mut Controller, s: &mut Store, t: Time, (cmd, old): (Command, Vec<u8>)| {
        seq += 1;
        log.extend(wal::encode(seq, t, &old));
        step(s, c, t, cmd)
    };
    run(&mut c, &mut s, 1001, same(reg("n1")));
    run(&mut c, &mut s, 1001, same(reg("n2")));
    run(
        &mut c,
        &mut s,
        1002,
        same(submit(1, None, ProtocolVersion::V24_11)),
    );
    let a = submit_cmd(user(2001, 100), array, ProtocolVersion::V24_11);
    run(&mut c, &mut s, 1003, same(a));
    let on = |c: &Controller, id: u32| {
        c.nodes()[c.jobs()[&id].batch_host.unwrap()]
            .name()
            .to_string()
    };
    let n1 = on(&c, 1);
    let old = old_record(Old::Kill {
        uid: 2001,
        job_id: 1,
    });
    assert_eq!(
        run(&mut c, &mut s, 1004, (kill_cmd(2001, 1), old)),
        Reply::Ok
    );
    let done = Command::RpcDone {
        node: n1.clone(),
        purpose: Purpose::Terminate { job_id: 1 },
        outcome: RpcOutcome::Rc(ESLURMD_KILL_JOB_ALREADY_COMPLETE),
    };
    run(
        &mut c,
        &mut s,
        1005,
        (done, old_record(Old::TerminateDone(1, &n1))),
    );
    let old = old_record(Old::KillTasks {
        uid: 2001,
        array_job_id: 2,
        tasks: &[1, 3],
    });
    run(
        &mut c,
        &mut s,
        1006,
        (kill_tasks_cmd(2001, 2, &[1, 3]), old),
    );
    let old = old_record(Old::NodeResponded("n1", 7, 800));
    run(&mut c, &mut s, 1007, (ping_done("n1", Some((7, 800))), old));
    run(
        &mut c,
        &mut s,
        1008,
        same(submit(1, None, ProtocolVersion::V24_11)),
    );
    let x = c.next_job_id() - 1;
    let nx = on(&c, x);
    let failed = Command::RpcDone {
        node: nx.clone(),
        purpose: Purpose::Launch { job_id: x },
        outcome: RpcOutcome::Rc(4005),
    };
    let old = old_record(Old::LaunchFailed(x, &nx, 4005));
    run(&mut c, &mut s, 1010, (failed, old));
    let old = old_record(Old::NodeUnreachable("n2"));
    run(&mut c, &mut s, 1011, (ping_done("n2", None), old));
    drop(s);
    // What the new commands did.
    assert_eq!(c.jobs()[&1].state, JobState::Cancelled);
    assert_eq!(c.jobs()[&x].state, JobState::NodeFail);
    let n = |c: &Controller, name: &str| c.nodes()[c.node_index(name).unwrap()].clone();
    assert_eq!((n(&c, "n1").cpu_load, n(&c, "n1").free_mem), (7, 800));
    assert!(n(&c, "n2").no_respond);
    // The old log gives the same.
    let path = dir.path().join(WAL_FILE);
    fs::write(&path, &log).unwrap();
    let (_, loaded) = reopen(dir.path());
    let l = loaded.controller;
    assert_eq!(loaded.replayed, 11);
    assert_eq!(fingerprint(&l), fingerprint(&c));
    assert_eq!(l.arrays(), c.arrays());
    assert_eq!((n(&l, "n1").cpu_load, n(&l, "n1").free_mem), (7, 800));
    assert!(n(&l, "n2").no_respond);
    // Old records are read only as old formats, new ones only as new.
    let kill = old_record(Old::Kill {
        uid: 2001,
        job_id: 1,
    });
    assert!(decode_record(6, &kill).is_ok());
    assert!(decode_record(FORMAT_VERSION, &kill).is_err());
    let new = encode_command(&kill_cmd(2001, 1)).unwrap();
    assert!(decode_record(6, &new).is_err());
    assert!(decode_record(FORMAT_VERSION, &new).is_ok());
}
