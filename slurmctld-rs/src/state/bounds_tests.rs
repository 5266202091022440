//! Client-sized work: ranges, lists and counts refused before they are
//! expanded, and request arithmetic that cannot wrap or panic.

use super::*;
use crate::state::error::StateError;
use crate::state::testkit::{controller_up, job_id as id, submit, update_job};
use std::time::{Duration, Instant};

const CONF: &str = crate::state::testkit::TWO_NODES;

const U32_WIDE: &str = "0-4294967294";

fn ctrl() -> Controller {
    controller_up(CONF, &["n1", "n2"], 4, 1000)
}

/// Generous: what used to run for hours.
fn quick<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let r = f();
    assert!(
        t.elapsed() < Duration::from_secs(1),
        "{what} took {:?}",
        t.elapsed()
    );
    r
}

fn array_job(c: &mut Controller) -> u32 {
    id(submit(c, 1000, |d| d.array_inx = Some("0-3".into())).0)
}

#[test]
fn dependency_with_a_u32_wide_task_range_is_refused_quickly() {
    let mut c = ctrl();
    let a = array_job(&mut c);
    for spec in [
        format!("afterok:{a}_{U32_WIDE}"),
        format!("afterok:{a}_[{U32_WIDE}]"),
        format!("afterany:{a}_[0-3,{U32_WIDE}]"),
        format!("{a}_[{U32_WIDE}]"),
    ] {
        let (r, _) = quick(&spec, || {
            submit(&mut c, 1000, |d| d.dependency = Some(spec.clone()))
        });
        assert_eq!(r, Reply::Err(StateError::Dependency), "{spec}");
    }
    let n = c.jobs.len();
    // Through scontrol update too, on a pending job.
    let j = id(submit(&mut c, 1000, |d| {
        d.dependency = Some(format!("afterok:{a}_[1-2]"))
    })
    .0);
    let spec = format!("afterok:{a}_[{U32_WIDE}]");
    let (r, _) = quick("update", || {
        update_job(&mut c, 1000, 0, j, |d| d.dependency = Some(spec.clone()))
    });
    assert_eq!(r, Reply::Err(StateError::Dependency));
    assert_eq!(c.jobs.len(), n + 1);
}

#[test]
fn scancel_update_hold_requeue_ranges_are_refused_quickly() {
    // What handlers.rs and kill_jobs.rs parse for scancel, scontrol
    // update/hold/release and requeue.
    for s in [
        format!("5_[{U32_WIDE}]"),
        format!("5_{U32_WIDE}"),
        "5_[0-1001]".to_string(),
    ] {
        let r = quick(&s, || array::parse_job_id_str(&s, ctrl().max_array_size()));
        assert!(r.is_err(), "{s}: {r:?}");
    }
}

#[test]
fn replayed_log_with_a_u32_wide_dependency_is_refused_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, _) = crate::persist::Store::open(dir.path(), ctrl(), false).unwrap();
    let spec = format!("afterok:1_[{U32_WIDE}]");
    let cmd = crate::state::testkit::submit_cmd(
        crate::state::testkit::alice(),
        crate::state::testkit::wrap(|d| d.dependency = Some(spec)),
        ProtocolVersion::V24_11,
    );
    assert!(store.log(1000, &cmd).unwrap());
    drop(store);
    let (_, loaded) = quick("replay", || {
        crate::persist::Store::open(dir.path(), ctrl(), false).unwrap()
    });
    assert_eq!(loaded.replayed, 1);
    assert!(loaded.controller.jobs.is_empty());
}

type Edit = Box<dyn Fn(&mut slurm_wire::msg::job_desc::JobDescMsg)>;

#[test]
fn overflowing_counts_at_submit_are_refused_without_a_panic() {
    // (what, refused by every release, the request)
    let cases: Vec<(&str, bool, Edit)> = vec![
        (
            "num_tasks * cpus_per_task",
            true,
            Box::new(|d| {
                d.num_tasks = u32::MAX - 2;
                d.cpus_per_task = u16::MAX;
            }),
        ),
        (
            "ntasks_per_node * min_nodes",
            true,
            Box::new(|d| {
                d.min_nodes = u32::MAX - 2;
                d.ntasks_per_node = u16::MAX;
            }),
        ),
        (
            "mem per cpu * cpus",
            true,
            Box::new(|d| {
                d.pn_min_memory = (u64::MAX >> 2) | MEM_PER_CPU;
                d.num_tasks = 1000;
                d.cpus_per_task = 4;
            }),
        ),
        (
            "mem per cpu * cpus_per_task",
            true,
            Box::new(|d| {
                d.pn_min_memory = (u64::MAX >> 2) | MEM_PER_CPU;
                d.cpus_per_task = u16::MAX - 1;
            }),
        ),
        (
            "pn_min_memory huge",
            true,
            Box::new(|d| d.pn_min_memory = u64::MAX - 2),
        ),
        // 22.05 and 26.05 queue what the partition cannot hold yet.
        (
            "min_nodes huge",
            false,
            Box::new(|d| {
                d.min_nodes = u32::MAX - 2;
                d.max_nodes = u32::MAX - 2;
            }),
        ),
        (
            "num_tasks huge",
            false,
            Box::new(|d| d.num_tasks = u32::MAX - 2),
        ),
        (
            "min_cpus huge",
            false,
            Box::new(|d| d.min_cpus = u32::MAX - 2),
        ),
    ];
    for v in [
        ProtocolVersion::V22_05,
        ProtocolVersion::V24_11,
        ProtocolVersion::V26_05,
    ] {
        for (what, refused, f) in &cases {
            let mut c = ctrl();
            let (r, _) = crate::state::testkit::submit_as(&mut c, 1000, v, |d| f(d));
            if *refused {
                assert!(matches!(r, Reply::Err(_)), "{v} {what}: {r:?}");
            }
            // Scheduling it (or around it) does not panic either.
            c.apply(1001, Command::Tick);
            c.apply(1100, Command::Tick);
            id(crate::state::testkit::submit_as(&mut c, 1200, v, |_| {}).0);
            c.apply(1201, Command::Tick);
        }
    }
}

#[test]
fn time_limit_near_u32_max_does_not_wrap() {
    let mut c = ctrl();
    let j = id(submit(&mut c, 1000, |d| d.time_limit = u32::MAX - 2).0);
    c.apply(1001, Command::Tick);
    c.apply(1_000_000, Command::Tick);
    assert!(c.jobs[&j].end_time == 0 || c.jobs[&j].end_time > 1000);
}

#[test]
fn dependency_lists_are_bounded_in_elements() {
    let mut c = ctrl();
    let a = array_job(&mut c);
    // Within MaxArraySize, but the same range over and over.
    let spec = format!("afterany:{}", vec![format!("{a}_[0-1000]"); 200].join(":"));
    let (r, _) = quick("repeated ranges", || {
        submit(&mut c, 1000, |d| d.dependency = Some(spec.clone()))
    });
    assert!(
        matches!(r, Reply::Submitted { .. }),
        "duplicates fold: {r:?}"
    );
    let spec = format!(
        "afterany:{}",
        (1..=MAX_DEP + 1)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(":")
    );
    let (r, _) = quick("many jobs", || {
        submit(&mut c, 1000, |d| d.dependency = Some(spec.clone()))
    });
    assert_eq!(r, Reply::Err(StateError::Dependency));
}

const MAX_DEP: usize = depend::MAX_DEPENDENCIES;

#[test]
fn task_lists_are_bounded_in_the_work_they_span() {
    let s = vec!["0-1000"; 100_000].join(",");
    let r = quick("repeated range", || array::parse_tasks(&s, 1001));
    assert!(matches!(r, Err(array::ArrayError::TooMuch(_))), "{r:?}");
    assert_eq!(
        array::parse_tasks("0-1000,0-1000", 1001).map(|t| t.len()),
        Ok(1001)
    );
}

#[test]
fn logged_task_lists_past_max_array_size_are_refused() {
    let mut c = ctrl();
    let a = array_job(&mut c);
    let tasks: Vec<u32> = (0..2_000_000).collect();
    let cmd = crate::state::testkit::kill_tasks_cmd(0, a, &tasks);
    let (r, _) = quick("kill tasks", || c.apply(1000, cmd));
    assert_eq!(r, Reply::Err(StateError::InvalidJobId));
    assert!(!c.jobs[&a].state.is_finished());
}

#[test]
fn client_hostlists_are_counted_before_they_are_expanded() {
    let mut c = ctrl();
    for list in ["n[0-999999]", "a[0-999]b[0-999]"] {
        let (r, _) = quick(list, || {
            submit(&mut c, 1000, |d| d.req_nodes = Some(list.into()))
        });
        assert_eq!(r, Reply::Err(StateError::InvalidNodeName), "{list}");
        let (r, _) = quick(list, || {
            submit(&mut c, 1000, |d| d.exc_nodes = Some(list.into()))
        });
        assert_eq!(r, Reply::Err(StateError::InvalidNodeName), "{list}");
        let msg = UpdateNodeMsg {
            node_names: Some(list.into()),
            ..Default::default()
        };
        let (r, _) = c.apply(
            1000,
            Command::UpdateNode {
                uid: 0,
                msg: Box::new(msg),
            },
        );
        assert_eq!(r, Reply::Err(StateError::InvalidNodeName), "{list}");
    }
    // A real list still works, repeats and all.
    id(submit(&mut c, 1000, |d| d.req_nodes = Some("n1,n1".into())).0);
}

#[test]
fn constraints_are_bounded() {
    let mut c = ctrl();
    let long = vec!["f"; 3000].join("&");
    let (r, _) = submit(&mut c, 1000, |d| d.features = Some(long.clone()));
    assert_eq!(r, Reply::Err(StateError::InvalidFeature));
    assert_eq!(
        crate::constraint::Constraint::parse(&long),
        Err(crate::constraint::ParseError::TooLong)
    );
    let many = vec!["f"; 300].join("|");
    assert_eq!(
        crate::constraint::Constraint::parse(&many),
        Err(crate::constraint::ParseError::TooManyFeatures)
    );
}

#[test]
fn a_long_list_of_repeated_dependencies_parses_in_linear_time() {
    let mut c = ctrl();
    let j = id(submit(&mut c, 1000, |_| {}).0);
    // Duplicates are dropped, so no element bound stops these; the hand
    // parser re-read the rest of the list for every element (13 s for the
    // first in a debug build, 0.1 s now).
    for spec in [
        format!("{j},").repeat(1 << 16) + &j.to_string(),
        "singleton,".repeat(1 << 14) + "singleton",
        format!("afterok:{j},").repeat(1 << 14) + &j.to_string(),
    ] {
        let (r, _) = quick("repeated dependencies", || {
            submit(&mut c, 1000, |d| d.dependency = Some(spec.clone()))
        });
        assert!(matches!(r, Reply::Submitted { .. }), "{r:?}");
    }
}
