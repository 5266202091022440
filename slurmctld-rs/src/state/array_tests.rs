//! Arrays and dependencies through the state machine, with a virtual clock.

use super::super::depend::{WAIT_DEPENDENCY, WAIT_DEP_INVALID};
use super::super::*;
use super::*;
use crate::state::error::StateError;
use crate::state::testkit::{
    self as testkit, controller_up, finish, job_id as id, launches, submit, submit_desc, user, wrap,
};

const CONF: &str = "\
ClusterName=t
SlurmctldHost=ctl
SlurmUser=root
NodeName=n[1-2] CPUs=4 RealMemory=1000
PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=60 State=UP
";

fn ctrl() -> Controller {
    controller_up(CONF, &["n1", "n2"], 4, 1000)
}

fn info(c: &Controller, job_id: u32) -> JobInfo {
    crate::views::job_info(c, &c.jobs[&job_id], ProtocolVersion::V24_11, 0)
}

#[test]
fn array_specs_parse_like_stock() {
    let s = parse_spec("0-3%2", 1001).unwrap();
    assert_eq!(
        s.tasks.iter().copied().collect::<Vec<_>>(),
        vec![0, 1, 2, 3]
    );
    assert_eq!((s.max_run, s.step), (2, 1));
    let s = parse_spec("1-9:2", 1001).unwrap();
    assert_eq!(
        s.tasks.iter().copied().collect::<Vec<_>>(),
        vec![1, 3, 5, 7, 9]
    );
    assert_eq!(s.step, 2);
    let s = parse_spec("1,3,5", 1001).unwrap();
    assert_eq!(s.tasks.len(), 3);
    assert!(parse_spec("5-1", 1001).is_err());
    assert!(parse_spec("0-1001", 1001).is_err());
    assert!(parse_spec("a", 1001).is_err());
    assert!(parse_spec("1-4:0", 1001).is_err());
    assert_eq!(hexmask(&[0, 1, 2, 3].into(), 4), "0xF");
    assert_eq!(hexmask(&[1, 3, 5].into(), 6), "0x2A");
    assert_eq!(hexmask(&[4].into(), 5), "0x10");
    assert_eq!(
        parse_job_id_str("12_[1-2]", 1001).unwrap(),
        (12, Some([1, 2].into()))
    );
    assert_eq!(parse_job_id_str("12", 1001).unwrap(), (12, None));
    assert_eq!(parse_job_id_str("12_*", 1001).unwrap(), (12, None));
    assert!(parse_job_id_str("x_1", 1001).is_err());
    // A throttle from a job's array_task_str is ignored, as stock does.
    let tasks = |v: &[u32]| Some(v.iter().copied().collect());
    assert_eq!(
        parse_job_id_str("9_[3-4%2]", 1001).unwrap(),
        (9, tasks(&[3, 4]))
    );
    assert_eq!(
        parse_job_id_str("9_[1,3-4%2]", 1001).unwrap(),
        (9, tasks(&[1, 3, 4]))
    );
    assert_eq!(parse_job_id_str("9_5%1", 1001).unwrap(), (9, tasks(&[5])));
    assert!(parse_job_id_str("9_[3%-4]", 1001).is_err());
    assert!(parse_job_id_str("9_[3-4%]", 1001).is_err());
}

#[test]
fn bad_array_is_refused() {
    let mut c = ctrl();
    let (r, _) = submit(&mut c, 1001, |d| d.array_inx = Some("3-1".into()));
    assert_eq!(r, Reply::Err(StateError::InvalidArray));
    assert!(c.jobs.is_empty());
}

#[test]
fn array_tasks_split_off_with_new_ids_and_last_keeps_the_array_id() {
    let mut c = ctrl();
    // Fill n1 so that only 4 CPUs remain for the array.
    let big = id(submit(&mut c, 1001, |d| d.min_cpus = 4).0);
    let (r, fx) = submit(&mut c, 1002, |d| d.array_inx = Some("0-5".into()));
    let a = id(r);
    let l = launches(&fx);
    // Tasks 0-3 start (4 free CPUs); ids after the array's own.
    let got: Vec<(u32, u32, u32)> = l
        .iter()
        .map(|m| (m.job_id, m.array_job_id, m.array_task_id))
        .collect();
    assert_eq!(
        got,
        vec![(a + 1, a, 0), (a + 2, a, 1), (a + 3, a, 2), (a + 4, a, 3)]
    );
    let env = &l[0].environment;
    for e in [
        "SLURM_ARRAY_TASK_COUNT=6",
        "SLURM_ARRAY_TASK_MIN=0",
        "SLURM_ARRAY_TASK_MAX=5",
        "SLURM_ARRAY_TASK_STEP=1",
    ] {
        assert!(env.iter().flatten().any(|x| x == e), "{e} missing: {env:?}");
    }
    // The meta record: pending, tasks 4-5, reason Resources.
    let m = info(&c, a);
    assert_eq!(m.array_task_id, NO_VAL);
    assert_eq!(m.array_job_id, a);
    assert_eq!(m.array_task_str.as_deref(), Some("0x30"));
    assert_eq!(m.state_reason, job::reason::WAIT_RESOURCES);
    let t = info(&c, a + 2);
    assert_eq!(
        (t.array_job_id, t.array_task_id, t.array_task_str),
        (a, 1, None)
    );
    // scontrol show job <array id>: every record, head first.
    assert_eq!(single_job_ids(&c, a), vec![a, a + 4, a + 3, a + 2, a + 1]);
    let msg = crate::views::single_job_info(&c, a, 0, ProtocolVersion::V24_11).unwrap();
    let got: Vec<u32> = msg.job_array.iter().map(|j| j.array_task_id).collect();
    assert_eq!(got, vec![NO_VAL, 3, 2, 1, 0]);
    assert!(crate::views::single_job_info(&c, 9999, 0, ProtocolVersion::V24_11).is_none());
    assert_eq!(single_job_ids(&c, a + 2), vec![a + 2]);

    // One task ends: task 4 splits off; task 5 is left alone in the meta
    // record, which becomes task 5.
    let fx = finish(&mut c, 1010, a + 1, 0);
    let l = launches(&fx);
    assert_eq!(
        l.iter()
            .map(|m| (m.job_id, m.array_task_id))
            .collect::<Vec<_>>(),
        vec![(a + 5, 4)]
    );
    assert_eq!(c.arrays.task_of(a).unwrap().task_id, 5);
    assert_eq!(info(&c, a).array_task_str, None);
    let fx = finish(&mut c, 1011, big, 0);
    let l = launches(&fx);
    assert_eq!(
        l.iter()
            .map(|m| (m.job_id, m.array_task_id))
            .collect::<Vec<_>>(),
        vec![(a, 5)]
    );
    // The next plain job gets the next free id.
    let next = id(submit(&mut c, 1012, |_| {}).0);
    assert_eq!(next, a + 6);
}

#[test]
fn throttle_holds_tasks_with_array_task_limit() {
    let mut c = ctrl();
    let (r, fx) = submit(&mut c, 1001, |d| d.array_inx = Some("1-9:2%2".into()));
    let a = id(r);
    let l = launches(&fx);
    assert_eq!(
        l.iter().map(|m| m.array_task_id).collect::<Vec<_>>(),
        vec![1, 3]
    );
    let m = info(&c, a);
    assert_eq!(m.state_reason, WAIT_ARRAY_TASK_LIMIT);
    assert_eq!(m.array_max_tasks, 2);
    assert_eq!(info(&c, a + 1).array_max_tasks, 2);
    // SLURM_ARRAY_TASK_STEP comes from the spec.
    assert!(l[0]
        .environment
        .iter()
        .flatten()
        .any(|x| x == "SLURM_ARRAY_TASK_STEP=2"));
    let fx = finish(&mut c, 1005, a + 1, 0);
    assert_eq!(
        launches(&fx)
            .iter()
            .map(|m| m.array_task_id)
            .collect::<Vec<_>>(),
        vec![5]
    );
}

#[test]
fn scancel_of_tasks_pending_running_and_whole_array() {
    let mut c = ctrl();
    let (r, _) = submit(&mut c, 1001, |d| d.array_inx = Some("0-5%1".into()));
    let a = id(r);
    // Task 0 runs (id a+1); 1-5 pending in the meta record.
    let kill = |c: &mut Controller, uid: u32, tasks: Vec<u32>| {
        c.apply(1002, testkit::kill_tasks_cmd(uid, a, &tasks)).0
    };
    assert_eq!(
        kill(&mut c, 2000, vec![2]),
        Reply::Err(StateError::AccessDenied)
    );
    assert_eq!(kill(&mut c, 1000, vec![2, 3]), Reply::Ok);
    assert_eq!(
        c.arrays.metas[&a]
            .pending
            .iter()
            .copied()
            .collect::<Vec<_>>(),
        vec![1, 4, 5]
    );
    assert_eq!(kill(&mut c, 1000, vec![0]), Reply::Ok);
    assert_eq!(c.jobs[&(a + 1)].state, JobState::Cancelled);
    assert_eq!(
        kill(&mut c, 1000, vec![42]),
        Reply::Err(StateError::InvalidJobId)
    );
    // Task 1 started when 0 ended.
    assert_eq!(c.arrays.find_task(a, 1), Some(a + 2));
    // The whole array: meta record and running task.
    let (r, _) = testkit::kill(&mut c, 1003, 1000, a);
    assert_eq!(r, Reply::Ok);
    for id in [a, a + 2] {
        assert_eq!(c.jobs[&id].state, JobState::Cancelled, "job {id}");
    }
    let (r, _) = testkit::kill(&mut c, 1004, 1000, a);
    assert_eq!(r, Reply::Err(StateError::AlreadyDone));
    // Purged with the jobs.
    c.apply(1004 + 301, Command::Tick);
    assert!(!c.jobs.contains_key(&a));
    assert!(!c.arrays.metas.contains_key(&a));
    assert!(c.arrays.recs().keys().all(|id| c.jobs.contains_key(id)));
}

/// The by-array index answers as a scan of every record would, through
/// splits, a meta record taking its last task, and purges.
#[test]
fn array_index_agrees_with_a_scan() {
    let mut c = ctrl();
    let a = id(submit(&mut c, 1000, |d| d.array_inx = Some("0-3".into())).0);
    let b = id(submit(&mut c, 1000, |d| d.array_inx = Some("5".into())).0);
    for t in 1001..1006 {
        c.apply(t, Command::Tick);
    }
    let check = |c: &Controller| {
        for arr in [a, b, 999] {
            let scan: Vec<u32> = c
                .arrays
                .recs()
                .iter()
                .filter(|(_, r)| r.array_job_id == arr)
                .map(|(&id, _)| id)
                .collect();
            assert_eq!(c.arrays.members(arr), scan, "members of {arr}");
            assert_eq!(
                c.arrays.is_array_id(arr),
                !scan.is_empty() || c.arrays.metas.contains_key(&arr)
            );
            for id in scan {
                let r = c.arrays.task_of(id).unwrap();
                assert_eq!(c.arrays.find_task(arr, r.task_id), Some(id));
            }
        }
    };
    check(&c);
    assert!(c.arrays.members(a).len() > 1, "the array was split");
    assert_eq!(c.arrays.members(b), vec![b]);
    // Run every task to its end: each start splits a task off the meta
    // record, and the last one re-records the meta record itself.
    for now in 1010..1030 {
        let running: Vec<u32> = c
            .jobs
            .iter()
            .filter(|(_, j)| j.state == JobState::Running)
            .map(|(&id, _)| id)
            .collect();
        for id in running {
            testkit::finish(&mut c, now, id, 0);
        }
        c.apply(now, Command::Tick);
        check(&c);
    }
    assert!(c.jobs.iter().all(|(_, j)| j.state.is_finished()));
    c.apply(1030 + 301, Command::Tick);
    check(&c);
    assert!(c.arrays.members(a).is_empty(), "purged with its jobs");
}

#[test]
fn dependency_kinds_and_their_outcomes() {
    let mut c = ctrl();
    let j1 = id(submit(&mut c, 1001, |_| {}).0);
    // afterok on a job that fails: never satisfied, stays pending.
    let ok = id(submit(&mut c, 1002, |d| {
        d.dependency = Some(format!("afterok:{j1}"))
    })
    .0);
    let notok = id(submit(&mut c, 1002, |d| {
        d.dependency = Some(format!("afternotok:{j1}"))
    })
    .0);
    let any = id(submit(&mut c, 1002, |d| {
        d.dependency = Some(format!("afterany:{j1}"))
    })
    .0);
    let after = id(submit(&mut c, 1002, |d| d.dependency = Some(format!("after:{j1}"))).0);
    for j in [ok, notok, any] {
        assert_eq!(c.jobs[&j].state_reason, WAIT_DEPENDENCY, "job {j}");
        assert_eq!(c.jobs[&j].state, JobState::Pending);
    }
    // `after` only needs the job to have started.
    assert_eq!(c.jobs[&after].state, JobState::Running);
    assert_eq!(
        info(&c, ok).details.unwrap().dependency.as_deref(),
        Some(format!("afterok:{j1}(unfulfilled)").as_str())
    );
    finish(&mut c, 1010, j1, 1 << 8);
    assert_eq!(c.jobs[&ok].state, JobState::Pending);
    assert_eq!(c.jobs[&ok].state_reason, WAIT_DEP_INVALID);
    assert_eq!(
        info(&c, ok).details.unwrap().dependency.as_deref(),
        Some(format!("afterok:{j1}(failed)").as_str())
    );
    for j in [notok, any] {
        assert_eq!(c.jobs[&j].state, JobState::Running, "job {j}");
        assert_eq!(info(&c, j).details.unwrap().dependency, None);
    }
    // Unknown ids: refused for afterok/afternotok, lifted for the others.
    let (r, _) = submit(&mut c, 1011, |d| d.dependency = Some("afterok:999".into()));
    assert_eq!(r, Reply::Err(StateError::Dependency));
    let (r, _) = submit(&mut c, 1011, |d| d.dependency = Some("afterany:999".into()));
    assert_eq!(c.jobs[&id(r)].state, JobState::Running);
    for bad in [
        "afterfoo:1",
        "afterok:",
        "afterok:x",
        "after:1+0",
        "singletonx",
    ] {
        let (r, _) = submit(&mut c, 1011, |d| d.dependency = Some(bad.into()));
        assert_eq!(r, Reply::Err(StateError::Dependency), "{bad}");
    }
}

#[test]
fn or_lists_times_and_text() {
    let mut c = ctrl();
    let j1 = id(submit(&mut c, 1001, |_| {}).0);
    let j2 = id(submit(&mut c, 1001, |_| {}).0);
    let all = id(submit(&mut c, 1002, |d| {
        d.dependency = Some(format!("afterok:{j1}:{j2},after:{j1}+1"))
    })
    .0);
    let either = id(submit(&mut c, 1002, |d| {
        d.dependency = Some(format!("afterok:{j1}?afterok:{j2}"))
    })
    .0);
    // Fulfilled parts drop out of the text at once (after:j1 waits a minute).
    assert_eq!(
        c.dependency_text(all).as_deref(),
        Some(
            format!(
                "afterok:{j1}(unfulfilled),afterok:{j2}(unfulfilled),after:{j1}+1(unfulfilled)"
            )
            .as_str()
        )
    );
    assert_eq!(
        c.dependency_text(either).as_deref(),
        Some(format!("afterok:{j1}(unfulfilled)?afterok:{j2}(unfulfilled)").as_str())
    );
    finish(&mut c, 1010, j1, 0);
    assert_eq!(c.jobs[&either].state, JobState::Running);
    assert_eq!(c.jobs[&all].state, JobState::Pending);
    assert_eq!(
        c.dependency_text(all).as_deref(),
        Some(format!("afterok:{j2}(unfulfilled),after:{j1}+1(unfulfilled)").as_str())
    );
    finish(&mut c, 1020, j2, 0);
    assert_eq!(c.jobs[&all].state, JobState::Pending);
    // A minute after j1 started (at 1001).
    c.apply(1001 + 59, Command::Tick);
    assert_eq!(c.jobs[&all].state, JobState::Pending);
    c.apply(1001 + 60, Command::Tick);
    assert_eq!(
        c.jobs[&all].state,
        JobState::Running,
        "{:?} {:?}",
        c.jobs[&all].state_reason,
        c.deps.get(&all)
    );
}

#[test]
fn singleton_and_array_dependencies() {
    let mut c = ctrl();
    let first = id(submit(&mut c, 1001, |d| d.name = Some("s".into())).0);
    let second = id(submit(&mut c, 1002, |d| {
        d.name = Some("s".into());
        d.dependency = Some("singleton".into());
    })
    .0);
    assert_eq!(c.jobs[&second].state_reason, WAIT_DEPENDENCY);
    assert_eq!(
        c.dependency_text(second).as_deref(),
        Some("singleton(unfulfilled)")
    );
    // The index of a user's jobs by name follows their states.
    let s = Some("s".to_string());
    assert_eq!(c.jobs.active_named(1000, &s), vec![first, second]);
    assert!(c.jobs.active_named(1001, &s).is_empty());
    finish(&mut c, 1003, first, 0);
    assert_eq!(c.jobs[&second].state, JobState::Running);
    assert_eq!(c.jobs.active_named(1000, &s), vec![second]);
    // A snapshot taken before keeps its own view.
    let snap = c.jobs.clone();
    finish(&mut c, 1003, second, 0);
    assert!(c.jobs.active_named(1000, &s).is_empty());
    let mut snap = snap;
    assert_eq!(snap.active_named(1000, &s), vec![second]);

    // On a whole array (shown as ID_*) and on one task.
    let a = id(submit(&mut c, 1004, |d| d.array_inx = Some("0-2".into())).0);
    let whole = id(submit(&mut c, 1005, |d| {
        d.dependency = Some(format!("afterok:{a}"))
    })
    .0);
    let one = id(submit(&mut c, 1005, |d| {
        d.dependency = Some(format!("afterany:{a}_1"))
    })
    .0);
    assert_eq!(
        c.dependency_text(whole).as_deref(),
        Some(format!("afterok:{a}_*(unfulfilled)").as_str())
    );
    assert_eq!(
        c.dependency_text(one).as_deref(),
        Some(format!("afterany:{a}_1(unfulfilled)").as_str())
    );
    let t1 = c.arrays.find_task(a, 1).unwrap();
    finish(&mut c, 1006, t1, 0);
    assert_eq!(c.jobs[&one].state, JobState::Running);
    assert_eq!(c.jobs[&whole].state, JobState::Pending);
    for t in [0, 2] {
        let id = c.arrays.find_task(a, t).unwrap();
        finish(&mut c, 1007, id, 0);
    }
    assert_eq!(c.jobs[&whole].state, JobState::Running);
    let (r, _) = submit(&mut c, 1008, |d| {
        d.dependency = Some(format!("afterok:{a}_7"))
    });
    assert_eq!(r, Reply::Err(StateError::Dependency));
}

#[test]
fn update_dependency_while_pending() {
    let mut c = ctrl();
    let j1 = id(submit(&mut c, 1001, |_| {}).0);
    let j2 = id(submit(&mut c, 1001, |d| {
        d.dependency = Some(format!("afterok:{j1}"))
    })
    .0);
    let j3 = id(submit(&mut c, 1001, |d| {
        d.dependency = Some(format!("afterok:{j2}"))
    })
    .0);
    let upd = |c: &mut Controller, uid: u32, job_id: u32, s: &str| {
        testkit::update_job(c, 1002, uid, job_id, |d| d.dependency = Some(s.into())).0
    };
    assert_eq!(
        upd(&mut c, 1000, j2, &format!("afterok:{j3}")),
        Reply::Err(StateError::CircularDependency)
    );
    assert_eq!(
        upd(&mut c, 1000, j2, &format!("afterok:{j2}")),
        Reply::Err(StateError::Dependency)
    );
    // A stranger's Dependency= is refused as any other update (stock).
    assert_eq!(
        upd(&mut c, 2000, j2, ""),
        Reply::Err(StateError::InvalidUserId)
    );
    assert_eq!(
        upd(&mut c, 1000, j1, ""),
        Reply::Err(StateError::JobNotPending)
    );
    assert_eq!(
        upd(&mut c, 1000, 777, ""),
        Reply::Err(StateError::InvalidJobId)
    );
    assert_eq!(
        upd(&mut c, 1000, j3, &format!("afternotok:{j1}")),
        Reply::Ok
    );
    assert_eq!(
        c.dependency_text(j3).as_deref(),
        Some(format!("afternotok:{j1}(unfulfilled)").as_str())
    );
    // Clearing lets j2 run.
    assert_eq!(upd(&mut c, 1000, j2, ""), Reply::Ok);
    assert_eq!(c.jobs[&j2].state, JobState::Running);
    assert_eq!(c.jobs[&j2].state_reason, job::reason::WAIT_NO_REASON);
}

#[test]
fn arrays_and_dependencies_survive_a_snapshot() {
    let mut c = ctrl();
    let a = id(submit(&mut c, 1001, |d| {
        d.array_inx = Some("0-9%3".into());
    })
    .0);
    let dep = id(submit(&mut c, 1002, |d| {
        d.dependency = Some(format!("afterok:{a}"))
    })
    .0);
    c.apply(1003, testkit::kill_tasks_cmd(1000, a, &[7]));
    let snap = crate::persist::encode_state(&c);
    let mut r = ctrl();
    crate::persist::restore_state(&mut r, &snap, crate::persist::FORMAT_VERSION).unwrap();
    assert_eq!(r.arrays, c.arrays);
    assert_eq!(r.deps, c.deps);
    assert_eq!(r.dependency_text(dep), c.dependency_text(dep));
    assert_eq!(r.next_job_id, c.next_job_id);
    // The logged commands round-trip too.
    for cmd in [
        testkit::kill_tasks_cmd(1000, a, &[1, 2]),
        testkit::update_job_cmd(1000, dep, |d| d.dependency = Some("afterany:1".into())),
    ] {
        let b = crate::persist::encode_command(&cmd).unwrap();
        let back = crate::persist::decode_command(&b).unwrap();
        assert_eq!(format!("{back:?}"), format!("{cmd:?}"));
    }
}

#[test]
fn clients_before_23_02_may_name_an_unknown_job() {
    let mut c = ctrl();
    let (r, _) = submit_desc(
        &mut c,
        1001,
        user(1000, 1000),
        ProtocolVersion::V22_05,
        wrap(|d| d.dependency = Some("afterok:999".into())),
    );
    // Taken, and the dependency lifted since the job is gone.
    let j = id(r);
    assert_eq!(c.jobs[&j].state, JobState::Running);
}
