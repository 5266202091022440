//! Job control of array tasks through the state machine.

use super::super::*;
use super::*;
use crate::state::testkit::{alice, controller_up, job_id, submit_desc, unset, update_job, ALICE};
use slurm_wire::pack::INFINITE;

const CONF: &str = "\
ClusterName=t
SlurmctldHost=ctl
SlurmUser=root
NodeName=n[1-2] CPUs=2 RealMemory=1000
PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=60 State=UP
";

fn ctrl() -> Controller {
    controller_up(CONF, &["n1", "n2"], 2, 1000)
}

/// `sbatch --array=SPEC` as alice, held when `hold`.
fn submit_array(c: &mut Controller, now: Time, spec: &str, hold: bool) -> u32 {
    let d = JobDescMsg {
        min_cpus: 1,
        name: Some("arr".into()),
        script: Some("#!/bin/sh\nsleep 100\n".into()),
        array_inx: Some(spec.into()),
        priority: if hold { 0 } else { NO_VAL },
        ..JobDescMsg::unset()
    };
    job_id(submit_desc(c, now, alice(), ProtocolVersion::V24_11, d).0)
}

fn upd(f: impl FnOnce(&mut JobDescMsg)) -> Box<JobDescMsg> {
    Box::new(unset(f))
}

fn groups(r: Reply) -> Vec<(Result<(), StateError>, String)> {
    match r {
        Reply::ArrayErrors(g) => g.iter().map(|g| (g.rc, task_ranges(&g.tasks))).collect(),
        r => panic!("expected per-task codes, got {r:?}"),
    }
}

fn update_tasks(c: &mut Controller, id: u32, tasks: &[u32], d: Box<JobDescMsg>) -> Reply {
    c.apply(
        1010,
        Command::UpdateArray {
            uid: ALICE,
            array_job_id: id,
            tasks: Some(tasks.to_vec()),
            desc: d,
            version: ProtocolVersion::V24_11,
        },
    )
    .0
}

/// The record of task `t` and whether it is the meta record.
fn rec(c: &Controller, id: u32, t: u32) -> &Job {
    let rid = c.arrays.find_task(id, t).expect("task exists");
    &c.jobs[&rid]
}

#[test]
fn ranges_as_stock_formats_them() {
    let set = |v: &[u32]| v.iter().copied().collect::<BTreeSet<u32>>();
    assert_eq!(task_ranges(&set(&[1, 2, 3, 5, 7, 8])), "1-3,5,7-8");
    assert_eq!(task_ranges(&set(&[4])), "4");
    assert_eq!(task_ranges(&set(&[])), "");
}

#[test]
fn release_of_one_pending_task_splits_it_off() {
    let mut c = ctrl();
    let id = submit_array(&mut c, 1000, "1-4", true);
    let r = update_tasks(&mut c, id, &[2], upd(|d| d.priority = INFINITE));
    assert_eq!(groups(r), vec![(Ok(()), "2".to_string())]);
    // Task 2 has a record of its own and was released (it runs); the
    // others stay held in the meta record.
    let t2 = rec(&c, id, 2);
    assert_ne!(t2.job_id, id);
    assert_eq!(t2.state, JobState::Running);
    let meta = &c.jobs[&id];
    assert_eq!((meta.state, meta.priority), (JobState::Pending, 0));
    assert_eq!(
        c.arrays.metas[&id].pending,
        [1, 3, 4].into_iter().collect::<BTreeSet<u32>>()
    );

    // 12_[3-4]: both split off; the meta record is left with task 1.
    let r = update_tasks(&mut c, id, &[3, 4], upd(|d| d.time_limit = 7));
    assert_eq!(groups(r), vec![(Ok(()), "3-4".to_string())]);
    assert_eq!(
        (rec(&c, id, 3).time_limit, rec(&c, id, 4).time_limit),
        (7, 7)
    );
    assert_eq!(rec(&c, id, 1).job_id, id);
    assert_ne!(rec(&c, id, 1).time_limit, 7);

    // A task that does not exist.
    let r = update_tasks(&mut c, id, &[1, 9], upd(|d| d.time_limit = 8));
    assert_eq!(
        groups(r),
        vec![
            (Ok(()), "1".to_string()),
            (Err(StateError::InvalidJobId), "9".to_string())
        ]
    );
}

#[test]
fn every_pending_task_updates_the_meta_record_whole() {
    let mut c = ctrl();
    let id = submit_array(&mut c, 1000, "1-3", true);
    let r = update_tasks(&mut c, id, &[1, 2, 3], upd(|d| d.time_limit = 9));
    assert_eq!(groups(r), vec![(Ok(()), "1-3".to_string())]);
    // Nothing was split.
    assert_eq!(c.arrays.members(id), vec![id]);
    assert_eq!(c.jobs[&id].time_limit, 9);
}

#[test]
fn a_plain_array_id_reaches_every_record() {
    let mut c = ctrl();
    let id = submit_array(&mut c, 1000, "1-6", false);
    // Four tasks run (2 nodes x 2 CPUs), two wait in the meta record.
    let running = c.arrays.members(id).len();
    assert_eq!(running, 5, "four task records and the meta record");
    let (r, _) = update_job(&mut c, 1010, 0, id, |d| d.time_limit = 5);
    assert_eq!(groups(r), vec![(Ok(()), "1-6".to_string())]);
    for t in 1..=6 {
        assert_eq!(rec(&c, id, t).time_limit, 5, "task {t}");
    }
    // A user may not raise the limit of running tasks: those refuse,
    // the pending ones (up to MaxTime) accept.
    let (r, _) = update_job(&mut c, 1011, ALICE, id, |d| d.time_limit = 30);
    assert_eq!(
        groups(r),
        vec![
            (Err(StateError::AccessDenied), "1-4".to_string()),
            (Ok(()), "5-6".to_string())
        ]
    );
    // A task's own id is that task only.
    let t1 = rec(&c, id, 1).job_id;
    let (r, _) = update_job(&mut c, 1012, 0, t1, |d| d.time_limit = 4);
    assert_eq!(r, Reply::Ok);
    assert_eq!(
        (rec(&c, id, 1).time_limit, rec(&c, id, 2).time_limit),
        (4, 5)
    );
}

#[test]
fn requeue_of_tasks() {
    let mut c = ctrl();
    let id = submit_array(&mut c, 1000, "1-6", false);
    let (r, _) = c.apply(
        1010,
        Command::RequeueArray {
            uid: ALICE,
            array_job_id: id,
            tasks: Some(vec![2, 3, 5]),
            flags: 0,
        },
    );
    // 2 and 3 ran; 5 is still pending in the meta record.
    assert_eq!(
        groups(r),
        vec![
            (Ok(()), "2-3".to_string()),
            (Err(StateError::JobPending), "5-6".to_string())
        ]
    );
    assert_eq!(rec(&c, id, 2).state, JobState::Pending);
    assert_eq!(rec(&c, id, 2).ctl.restart_cnt, 1);
    assert_eq!(rec(&c, id, 1).state, JobState::Running);
}

#[test]
fn array_commands_survive_the_log() {
    use crate::persist::{decode_command, encode_command};
    let cmds = [
        Command::UpdateArray {
            uid: ALICE,
            array_job_id: 12,
            tasks: Some(vec![1, 3]),
            desc: upd(|d| d.time_limit = 3),
            version: ProtocolVersion::V22_05,
        },
        Command::RequeueArray {
            uid: 0,
            array_job_id: 12,
            tasks: None,
            flags: control::JOB_REQUEUE_HOLD,
        },
    ];
    for cmd in cmds {
        let b = encode_command(&cmd).expect("logged");
        let back = decode_command(&b).unwrap();
        assert_eq!(format!("{back:?}"), format!("{cmd:?}"));
    }
}
