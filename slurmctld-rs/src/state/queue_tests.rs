//! Priority order, Resources/Priority reasons and backfill, with a virtual clock.

use super::super::job::{reason, JobState};
use super::super::{Command, Controller, Time};
use crate::state::testkit::{
    self, apply_all, controller, job_id, reg_bare, submit_desc, true_job, user,
};
use slurm_wire::msg::job_desc::JobDescMsg;
use slurm_wire::pack::NO_VAL;
use slurm_wire::ProtocolVersion;

const CONF: &str = "\
ClusterName=t
SlurmctldHost=ctl
SlurmUser=root
SlurmdTimeout=3000
NodeName=n[1-2] CPUs=4 RealMemory=1000
PartitionName=low Nodes=n[1-2] Default=YES MaxTime=60 State=UP PriorityTier=1
PartitionName=high Nodes=n[1-2] MaxTime=60 State=UP PriorityTier=2
";

fn cluster() -> Controller {
    let mut c = controller(CONF);
    let regs = ["n1", "n2"].map(|n| reg_bare(n, 4, 1000, ProtocolVersion::V24_11));
    apply_all(&mut c, 1000, regs);
    c
}

/// Submits `tasks` tasks (one CPU each) on `nodes` nodes (0: any) for
/// `minutes` in `part`.
fn job(c: &mut Controller, now: Time, part: &str, tasks: u32, nodes: u32, minutes: u32) -> u32 {
    let d = JobDescMsg {
        partition: Some(part.into()),
        time_limit: minutes,
        min_nodes: if nodes == 0 { NO_VAL } else { nodes },
        max_nodes: if nodes == 0 { NO_VAL } else { nodes },
        num_tasks: tasks,
        ..true_job()
    };
    job_id(submit_desc(c, now, user(1000, 1000), ProtocolVersion::V24_11, d).0)
}

/// The job's script ends and its epilog reports: its node is free again.
fn finish(c: &mut Controller, now: Time, job_id: u32) {
    testkit::finish(c, now, job_id, 0);
}

fn st(c: &Controller, id: u32) -> (JobState, u32) {
    (c.jobs[&id].state, c.jobs[&id].state_reason)
}

#[test]
fn first_blocked_job_waits_for_resources_the_rest_for_priority() {
    let mut c = cluster();
    let a = job(&mut c, 1001, "low", 8, 0, 10);
    assert_eq!(c.jobs[&a].state, JobState::Running);
    let b = job(&mut c, 1002, "low", 2, 0, 10);
    let d = job(&mut c, 1003, "low", 2, 0, 10);
    let e = job(&mut c, 1004, "low", 1, 0, 10);
    assert_eq!(st(&c, b), (JobState::Pending, reason::WAIT_RESOURCES));
    assert_eq!(st(&c, d), (JobState::Pending, reason::WAIT_PRIORITY));
    assert_eq!(st(&c, e), (JobState::Pending, reason::WAIT_PRIORITY));
    // When A ends, all three fit and start in order.
    finish(&mut c, 1100, a);
    for id in [b, d, e] {
        assert_eq!(c.jobs[&id].state, JobState::Running, "job {id}");
    }
}

#[test]
fn higher_priority_tier_partition_goes_first() {
    let mut c = cluster();
    let a = job(&mut c, 1001, "low", 8, 0, 10);
    let b = job(&mut c, 1002, "low", 8, 0, 10);
    let h = job(&mut c, 1003, "high", 8, 0, 10);
    assert_eq!(st(&c, b).0, JobState::Pending);
    assert_eq!(st(&c, h).0, JobState::Pending);
    assert_eq!(c.queue_order(1100, 10), vec![h, b], "tier before age");
    finish(&mut c, 1100, a);
    // The younger job of the higher tier got the nodes.
    assert_eq!(st(&c, h).0, JobState::Running);
    assert_eq!(st(&c, b), (JobState::Pending, reason::WAIT_RESOURCES));
}

#[test]
fn backfill_fills_holes_without_delaying_the_big_job() {
    let mut c = cluster();
    // A holds n1 for 10 minutes; B wants both nodes whole.
    let a = job(&mut c, 1001, "low", 4, 1, 10);
    let b = job(&mut c, 1002, "low", 8, 2, 10);
    let short = job(&mut c, 1003, "low", 1, 1, 5);
    let long = job(&mut c, 1004, "low", 1, 1, 20);
    assert_eq!(c.jobs[&a].state, JobState::Running);
    assert_eq!(st(&c, b), (JobState::Pending, reason::WAIT_RESOURCES));
    assert_eq!(st(&c, short), (JobState::Pending, reason::WAIT_PRIORITY));
    let a_end = c.jobs[&a].end_time;
    assert_eq!(a_end, 1001 + 600);

    // The first tick runs the backfill pass.
    c.apply(1010, Command::Tick);
    // The 5-minute job ends before A does: it runs now, on n2.
    assert_eq!(c.jobs[&short].state, JobState::Running);
    assert_eq!(c.jobs[&short].alloc[0].node, 1);
    // The 20-minute one would hold n2 past B's start: it waits.
    assert_eq!(c.jobs[&long].state, JobState::Pending);
    assert_eq!(c.jobs[&b].state, JobState::Pending);
    let pb = c.planned(b).expect("B has a planned start");
    assert_eq!((pb.start, pb.nodes.clone()), (a_end, vec![0, 1]));
    // The long job starts when B's time limit is over.
    let pl = c.planned(long).expect("planned");
    assert_eq!(pl.start, a_end + 600);

    // A ends early: B starts at once (the short job is still on n2? no:
    // it ends first), and the plan is dropped for it.
    finish(&mut c, 1200, short);
    finish(&mut c, 1300, a);
    assert_eq!(c.jobs[&b].state, JobState::Running);
    assert!(c.planned(b).is_none());
    assert_eq!(st(&c, long), (JobState::Pending, reason::WAIT_RESOURCES));
}

#[test]
fn held_jobs_are_not_scheduled() {
    let mut c = cluster();
    let a = job(&mut c, 1001, "low", 8, 0, 10);
    let b = job(&mut c, 1002, "low", 1, 0, 10);
    c.jobs.get_mut(&b).unwrap().priority = 0;
    finish(&mut c, 1100, a);
    assert_eq!(c.jobs[&b].state, JobState::Pending);
    c.apply(1101, Command::Tick);
    assert_eq!(c.jobs[&b].state, JobState::Pending);
    assert!(c.planned(b).is_none());
}

#[test]
fn snapshots_do_not_see_later_changes() {
    let mut c = cluster();
    let a = job(&mut c, 1001, "low", 1, 0, 10);
    let snap = c.clone();
    finish(&mut c, 1100, a);
    assert_eq!(snap.jobs[&a].state, JobState::Running);
    assert_eq!(snap.nodes[0].alloc_cpus, 1);
    assert_eq!(c.jobs[&a].state, JobState::Complete);
    assert_eq!(c.nodes[0].alloc_cpus, 0);
    let _ = NO_VAL;
}

#[test]
fn a_planned_start_keeps_to_the_nodes_the_job_names() {
    let mut c = cluster();
    let a = job(&mut c, 1001, "low", 4, 1, 10);
    assert_eq!(c.jobs[&a].alloc[0].node, 0);
    let d = JobDescMsg {
        time_limit: 10,
        num_tasks: 1,
        req_nodes: Some("n1".into()),
        ..true_job()
    };
    let (r, _) = submit_desc(&mut c, 1002, user(1000, 1000), ProtocolVersion::V24_11, d);
    let w = job_id(r);
    // n2 is free, but the job named n1: it waits for A, and is planned there.
    assert_eq!(st(&c, w), (JobState::Pending, reason::WAIT_RESOURCES));
    c.apply(1010, Command::Tick);
    assert_eq!(c.jobs[&w].state, JobState::Pending);
    let p = c.planned(w).expect("planned");
    assert_eq!((p.start, p.nodes.clone()), (c.jobs[&a].end_time, vec![0]));
}

#[test]
fn a_matching_or_job_is_planned_on_one_alternative() {
    let conf = "ClusterName=t\nSlurmctldHost=ctl\nSlurmUser=root\nSlurmdTimeout=3000\n\
        NodeName=n[1-2] CPUs=4 RealMemory=1000 Feature=r1\n\
        NodeName=n[3-4] CPUs=4 RealMemory=1000 Feature=r2\n\
        PartitionName=low Nodes=n[1-4] Default=YES MaxTime=60 State=UP\n";
    let mut c = controller(conf);
    let regs = ["n1", "n2", "n3", "n4"].map(|n| reg_bare(n, 4, 1000, ProtocolVersion::V24_11));
    apply_all(&mut c, 1000, regs);
    let on = |c: &mut Controller, now: Time, node: &str, minutes: u32| {
        let d = JobDescMsg {
            time_limit: minutes,
            num_tasks: 4,
            req_nodes: Some(node.into()),
            ..true_job()
        };
        job_id(submit_desc(c, now, user(1000, 1000), ProtocolVersion::V24_11, d).0)
    };
    let a = on(&mut c, 1001, "n1", 10);
    let b = on(&mut c, 1001, "n3", 20);
    // n2 (r1) and n4 (r2) are free, but not one rack's pair.
    let d = JobDescMsg {
        time_limit: 10,
        num_tasks: 8,
        min_nodes: 2,
        max_nodes: 2,
        features: Some("[r1|r2]".into()),
        ..true_job()
    };
    let rack = job_id(submit_desc(&mut c, 1002, user(1000, 1000), ProtocolVersion::V24_11, d).0);
    assert_eq!(st(&c, rack), (JobState::Pending, reason::WAIT_RESOURCES));
    c.apply(1010, Command::Tick);
    // r1 frees first (A's 10 minutes): planned there, both r1 nodes.
    let plan = c.planned(rack).expect("a planned start");
    assert_eq!(
        (plan.start, plan.nodes.clone()),
        (c.jobs[&a].end_time, vec![0, 1])
    );
    assert!(c.jobs[&b].end_time > plan.start);
    finish(&mut c, 1100, a);
    assert_eq!(c.jobs[&rack].state, JobState::Running);
    let mut got: Vec<usize> = c.jobs[&rack].alloc.iter().map(|x| x.node).collect();
    got.sort_unstable();
    assert_eq!(got, [0, 1]);
}

#[test]
fn every_priority_type_is_served_by_basic_for_now() {
    for asked in ["priority/basic", "priority/multifactor"] {
        let conf = format!("{CONF}PriorityType={asked}\n");
        let mut c = controller(&conf);
        let regs = ["n1", "n2"].map(|n| reg_bare(n, 4, 1000, ProtocolVersion::V24_11));
        apply_all(&mut c, 1000, regs);
        assert_eq!(c.conf.raw.priority_type, asked);
        assert_eq!(c.priority_policy().name(), "priority/basic", "{asked}");
        let a = job(&mut c, 1001, "low", 8, 0, 10);
        let b = job(&mut c, 1002, "low", 8, 0, 10);
        let h = job(&mut c, 1003, "high", 8, 0, 10);
        assert_eq!(c.jobs[&a].state, JobState::Running);
        assert_eq!(c.queue_order(1100, 10), vec![h, b], "{asked}");
    }
}
