//! Jobs in real cgroups (this host's v1 hierarchies, a tree of the test's
//! own): OOM kills reported as stock does, nothing escaping a
//! termination, a job surviving a daemon restart. Needs root, munged and
//! cgroup v1 controllers mounted under /sys/fs/cgroup.

mod common;

use common::*;
use slurm_wire::msg::cred::MemAllocRep;
use slurm_wire::msg::kill::KillJobMsg;
use slurm_wire::msg::step::CompleteBatchScriptMsg;
use slurm_wire::types::StepId;
use slurm_wire::{Message, ProtocolVersion as V};
use std::path::Path;
use std::time::Duration;

const CGROUP_CONF: &str =
    "CgroupPlugin=cgroup/v1\nCgroupMountpoint=/sys/fs/cgroup\nConstrainRAMSpace=yes\nConstrainCores=yes\n";
const TASK_CGROUP: &str = "TaskPlugin=task/cgroup\nProctrackType=proctrack/cgroup";

fn require_cgroups() {
    require_prerequisites();
    assert!(
        Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes").exists()
            && Path::new("/sys/fs/cgroup/freezer/cgroup.procs").exists(),
        "these tests need cgroup v1 memory and freezer controllers at /sys/fs/cgroup"
    );
}

async fn registered(n: &Node, v: V) -> Vec<StepId> {
    match n.receive(v).await {
        Message::MessageNodeRegistrationStatus(r) => r.step_id,
        m => panic!("expected a registration, got {m:?}"),
    }
}

async fn completion(n: &Node, v: V) -> CompleteBatchScriptMsg {
    match n.receive(v).await {
        Message::RequestCompleteBatchScript(c) => c,
        m => panic!("expected a batch completion, got {m:?}"),
    }
}

/// Terminates the job and waits for its epilog to be reported.
async fn terminate(n: &Node, v: V, job_id: u32) {
    let k = KillJobMsg {
        step_id: StepId::job(job_id),
        job_uid: NOBODY,
        job_gid: NOBODY,
        nodes: Some("t1".into()),
        ..Default::default()
    };
    let r = n.rpc(v, Message::RequestTerminateJob(k)).await;
    assert!(
        matches!(r, Message::ResponseSlurmRc(ref rc) if rc.return_code == 0),
        "{r:?}"
    );
    loop {
        match n.receive(v).await {
            Message::MessageEpilogComplete(e) => {
                assert_eq!((e.step_id.0.job_id, e.return_code), (job_id, 0));
                return;
            }
            // The supervisor's report of the killed script.
            Message::RequestCompleteBatchScript(c) => assert_eq!(c.step_id.job_id, job_id),
            m => panic!("expected epilog complete, got {m:?}"),
        }
    }
}

fn launch_ok(r: Message) {
    assert!(
        matches!(r, Message::ResponseSlurmRc(ref rc) if rc.return_code == 0),
        "{r:?}"
    );
}

/// No cgroup of the job is left in any controller.
fn job_cgroups_gone(n: &Node, job_id: u32) {
    for r in n.cgroup_roots() {
        let d = r.join(format!("uid_{NOBODY}/job_{job_id}"));
        assert!(!d.exists(), "{} left behind", d.display());
    }
}

fn alive(pid: i32) -> bool {
    // A zombie is dead for this purpose (its parent may be gone).
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s[s.rfind(')').unwrap() + 1..].trim_start().starts_with('Z'))
        .unwrap_or(false)
}

#[tokio::test(flavor = "multi_thread")]
async fn oom_is_reported_and_the_node_stays_healthy() {
    require_cgroups();
    let v = V::V24_11;
    let n = Node::new(TASK_CGROUP, Some(CGROUP_CONF), "oom").await;
    let _d = n.start(v);
    registered(&n, v).await;
    let auth = n.munged.auth();

    // 40 MB allocated; `tail` buffers 300 MB of NUL bytes (no newline).
    let mut m = launch(
        21,
        v,
        &auth,
        n.dir.path(),
        "t1",
        "#!/bin/sh\nhead -c 300000000 /dev/zero | tail > /dev/null\necho survived\n",
    );
    m.cred.cred.arg.job_mem_alloc = vec![MemAllocRep {
        mem_alloc: 40,
        rep_count: 1,
    }];
    resign(&mut m, v, &auth);
    launch_ok(n.rpc(v, Message::RequestBatchJobLaunch(m)).await);
    // The supervisor writes the limit just after the launch reply: poll.
    let limit_file = Path::new("/sys/fs/cgroup/memory")
        .join(&n.cg_root)
        .join(format!("uid_{NOBODY}/job_21/memory.limit_in_bytes"));
    let want = (40u64 << 20).to_string();
    let mut limit = std::fs::read_to_string(&limit_file);
    for _ in 0..100 {
        if limit.as_deref().is_ok_and(|l| l.trim() == want) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        limit = std::fs::read_to_string(&limit_file);
    }
    let c = completion(&n, v).await;
    assert_eq!(c.step_id.job_id, 21);
    assert_eq!(c.job_rc, 253, "SIG_OOM, as stock's slurmstepd reports it");
    assert_eq!(c.slurm_rc, 0, "an OOM kill does not drain the node");
    if let Ok(l) = limit {
        assert_eq!(l.trim(), want);
    }
    terminate(&n, v, 21).await;
    job_cgroups_gone(&n, 21);

    // The next job on the node runs normally.
    let m = launch(22, v, &auth, n.dir.path(), "t1", "#!/bin/sh\nexit 4\n");
    launch_ok(n.rpc(v, Message::RequestBatchJobLaunch(m)).await);
    let c = completion(&n, v).await;
    assert_eq!((c.step_id.job_id, c.job_rc, c.slurm_rc), (22, 4 << 8, 0));
    terminate(&n, v, 22).await;
    job_cgroups_gone(&n, 22);
}

#[tokio::test(flavor = "multi_thread")]
async fn termination_leaves_no_process_even_in_new_sessions() {
    require_cgroups();
    let v = V::V22_05;
    let n = Node::new(TASK_CGROUP, Some(CGROUP_CONF), "kill").await;
    let _d = n.start(v);
    registered(&n, v).await;
    let pids = n.path("pids.txt");
    // Children, a grandchild reparented to init, processes in sessions
    // of their own, one ignoring SIGTERM.
    let script = format!(
        "#!/bin/sh\n\
         sleep 1000 & echo $! >> {p}\n\
         (sleep 1001 & echo $! >> {p})\n\
         setsid sh -c 'trap \"\" TERM; sleep 1002 & echo $! >> {p}; echo $$ >> {p}; wait' &\n\
         nohup setsid sleep 1003 > /dev/null 2>&1 & echo $! >> {p}\n\
         sleep 0.5; echo go >> {p}.done\n\
         sleep 1000\n",
        p = pids.display()
    );
    let auth = n.munged.auth();
    let m = launch(31, v, &auth, n.dir.path(), "t1", &script);
    launch_ok(n.rpc(v, Message::RequestBatchJobLaunch(m)).await);
    let done = n.path("pids.txt.done");
    for _ in 0..100 {
        if done.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let list: Vec<i32> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    assert!(list.len() >= 5, "{list:?}");
    assert!(list.iter().all(|&p| alive(p)), "{list:?}");
    terminate(&n, v, 31).await;
    let left: Vec<i32> = list.iter().copied().filter(|&p| alive(p)).collect();
    assert!(left.is_empty(), "processes escaped: {left:?}");
    job_cgroups_gone(&n, 31);
    assert!(
        !n.path("spool/rs-jobs/31").exists(),
        "state directory left behind"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_daemon_restart_keeps_the_job() {
    require_cgroups();
    let v = V::V26_05;
    let n = Node::new(TASK_CGROUP, Some(CGROUP_CONF), "restart").await;
    let mut d = n.start(v);
    registered(&n, v).await;
    let auth = n.munged.auth();
    let gate = n.path("gate");
    let script = format!(
        "#!/bin/sh\nwhile [ ! -e {g} ]; do sleep 0.1; done\nexit 5\n",
        g = gate.display()
    );
    let m = launch(41, v, &auth, n.dir.path(), "t1", &script);
    launch_ok(n.rpc(v, Message::RequestBatchJobLaunch(m)).await);
    tokio::time::sleep(Duration::from_millis(500)).await;

    // The daemon dies hard; a new one finds the running job and reports
    // it in its registration.
    let _ = d.0.kill();
    let _ = d.0.wait();
    let _d2 = n.start(v);
    let steps = registered(&n, v).await;
    assert!(
        steps
            .iter()
            .any(|s| s.job_id == 41 && s.step_id == StepId::BATCH_SCRIPT),
        "running job not reported after restart: {steps:?}"
    );
    std::fs::write(&gate, "").unwrap();
    let c = completion(&n, v).await;
    assert_eq!((c.step_id.job_id, c.job_rc, c.slurm_rc), (41, 5 << 8, 0));
    // The new daemon still terminates it properly.
    terminate(&n, v, 41).await;
    job_cgroups_gone(&n, 41);
}
