//! The in-process cluster end to end: launches reach the node, scripts end
//! by the virtual clock, terminates bring back epilogs, a silent node goes
//! down, and two runs are the same.

use slurm_testkit::builders::batch_job;
use slurm_testkit::cluster::Cluster;
use slurm_wire::MsgType;
use slurmctld::state::job::{JobState, UserInfo};
use slurmctld::state::node::{Base, DownCause};
use slurmctld::state::Time;

const T0: Time = 1_000_000;

fn conf(extra: &str) -> String {
    format!(
        "ClusterName=kit\nSlurmctldHost=ctl\nSlurmUser=root\nSelectTypeParameters=CR_Core\n{extra}\
         NodeName=n[1-2] CPUs=4 RealMemory=1000\n\
         PartitionName=p Nodes=n[1-2] Default=YES MaxTime=10 State=UP\n"
    )
}

fn alice() -> UserInfo {
    UserInfo {
        uid: 1000,
        gid: 1000,
        name: Some("alice".into()),
        ..Default::default()
    }
}

fn state(c: &Cluster, id: u32) -> JobState {
    c.ctld.jobs().get(&id).map(|j| j.state).expect("job known")
}

fn sent(c: &Cluster, ty: MsgType, node: &str) -> usize {
    c.delivered
        .iter()
        .filter(|d| d.msg_type == ty && d.node == node)
        .count()
}

#[test]
fn a_batch_job_is_launched_runs_its_time_and_its_node_is_freed() {
    let mut c = Cluster::new(&conf("SlurmdTimeout=0\n"), T0).unwrap();
    let mut job = batch_job(4, 5);
    job.script = Some("#!/bin/sh\nsleep 30\nsleep 60\n".into());
    let id = c.submit(&alice(), job).unwrap();
    c.tick();
    assert_eq!(state(&c, id), JobState::Running);
    let host = c.ctld.nodes()[c.ctld.jobs()[&id].batch_host.unwrap()]
        .name()
        .to_string();
    assert_eq!(sent(&c, MsgType::RequestBatchJobLaunch, &host), 1);
    assert_eq!(c.running_on(&host), vec![id]);

    c.advance_to(T0 + 89);
    assert_eq!(state(&c, id), JobState::Running, "not before its runtime");
    c.advance_to(T0 + 90);
    assert_eq!(state(&c, id), JobState::Complete);
    assert_eq!(
        c.ctld.jobs()[&id].end_time,
        T0 + 90,
        "ended at its own time"
    );
    // The controller terminated it on its node, the node ran its epilog,
    // and nothing is left allocated.
    assert_eq!(sent(&c, MsgType::RequestTerminateJob, &host), 1);
    assert!(c.running_on(&host).is_empty());
    assert!(c.ctld.jobs()[&id].completing.is_empty(), "epilog reported");
    assert!(c.ctld.nodes().iter().all(|n| n.alloc_cpus == 0));
}

#[test]
fn a_script_that_outlives_its_limit_is_killed_at_the_limit() {
    let mut c = Cluster::new(&conf("SlurmdTimeout=0\n"), T0).unwrap();
    c.set_runtime(Box::new(|_, _| 3600));
    let id = c.submit(&alice(), batch_job(1, 1)).unwrap();
    c.tick();
    assert_eq!(state(&c, id), JobState::Running);
    let host = c.ctld.nodes()[c.ctld.jobs()[&id].batch_host.unwrap()]
        .name()
        .to_string();
    for t in (T0 + 30..=T0 + 300).step_by(30) {
        c.advance_to(t);
        c.tick();
    }
    assert_eq!(state(&c, id), JobState::Timeout);
    assert_eq!(sent(&c, MsgType::RequestKillTimelimit, &host), 1);
    assert!(
        c.running_on(&host).is_empty(),
        "the node stopped the script"
    );
    assert!(c.ctld.jobs()[&id].completing.is_empty());
}

#[test]
fn a_node_that_stops_answering_pings_goes_down_not_responding() {
    let mut c = Cluster::new(&conf("SlurmdTimeout=30\n"), T0).unwrap();
    c.power_off("n2");
    for t in (T0 + 10..=T0 + 120).step_by(10) {
        c.advance_to(t);
        c.tick();
    }
    let n = |name: &str| {
        let i = c.ctld.node_index(name).unwrap();
        (c.ctld.nodes()[i].base, c.ctld.nodes()[i].down_cause)
    };
    assert_eq!(n("n1"), (Base::Up, None), "n1 answers its pings");
    assert_eq!(n("n2"), (Base::Down, Some(DownCause::NotResponding)));
    assert!(sent(&c, MsgType::RequestPing, "n1") >= 3);
}

#[test]
fn two_runs_of_the_same_workload_are_the_same() {
    let run = || {
        // Records kept to the end (MinJobAge), to compare them.
        let mut c = Cluster::new(&conf("SlurmdTimeout=0\nMinJobAge=86400\n"), T0).unwrap();
        c.set_runtime(Box::new(|id, _| Time::from(id % 7) * 40 + 20));
        let ids: Vec<u32> = (0..40)
            .map(|i| c.submit(&alice(), batch_job(1 + i % 4, 5)).unwrap())
            .collect();
        for t in (T0..T0 + 3600).step_by(15) {
            c.advance_to(t);
            c.tick();
        }
        let out: Vec<(u32, JobState, Time, Time)> = ids
            .iter()
            .map(|id| {
                let j = &c.ctld.jobs()[id];
                (*id, j.state, j.start_time, j.end_time)
            })
            .collect();
        (out, c.delivered.len())
    };
    let (a, b) = (run(), run());
    assert!(a.0.iter().all(|j| j.1 == JobState::Complete), "{:?}", a.0);
    assert_eq!(a, b);
}
