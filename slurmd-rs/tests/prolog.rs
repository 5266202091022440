//! A failing Prolog, against a test that plays slurmctld: the daemon asks
//! for the job's requeue (JOB_LAUNCH_FAILED), kills it when the controller
//! cannot requeue it, and then registers with ESLURMD_PROLOG_FAILED so that
//! the controller drains the node -- as stock slurmd does. Needs root and munged.

mod common;

use common::*;
use slurm_wire::errno::{ESLURMD_PROLOG_FAILED, ESLURM_BATCH_ONLY};
use slurm_wire::msg::common::ReturnCodeMsg;
use slurm_wire::{Message, ProtocolVersion as V};

const JOB_LAUNCH_FAILED: u32 = 1 << 8;

/// Launch job `id` on a node whose prolog fails; the controller answers
/// the requeue with `requeue_rc`. Returns the messages the daemon sent
/// after the launch, up to its registration.
async fn failing_prolog(v: V, requeue_rc: u32, tag: &str) -> Vec<Message> {
    let scripts = tempfile::tempdir().unwrap();
    let prolog = scripts.path().join("prolog.sh");
    std::fs::write(&prolog, "#!/bin/sh\nexit 1\n").unwrap();
    std::fs::set_permissions(&prolog, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let node = Node::new(&format!("Prolog={}", prolog.display()), None, tag).await;
    let _d = node.start(v);
    let Message::MessageNodeRegistrationStatus(_) = node.receive(v).await else {
        panic!("expected the first registration");
    };
    let auth = node.munged.auth();
    let m = launch(5, v, &auth, node.dir.path(), "t1", "#!/bin/sh\necho ran\n");
    let r = node.rpc(v, Message::RequestBatchJobLaunch(m)).await;
    assert_eq!(
        r,
        Message::ResponseSlurmRc(ReturnCodeMsg { return_code: 0 }),
        "the launch itself is accepted (the prolog runs after the reply)"
    );
    let mut seen = Vec::new();
    loop {
        let (m, s, _) = next_request(&node.ctld, &node.ctx, v).await;
        let rc = match &m {
            Message::RequestJobRequeue(_) => requeue_rc,
            _ => 0,
        };
        answer(s, &node.ctx, v, rc).await;
        let last = matches!(m, Message::MessageNodeRegistrationStatus(_));
        seen.push(m);
        if last {
            break;
        }
    }
    assert!(
        !node.path("out-5-itest.txt").exists(),
        "the script ran despite the failed prolog"
    );
    seen
}

fn check_requeue(m: &Message) {
    let Message::RequestJobRequeue(r) = m else {
        panic!("expected REQUEST_JOB_REQUEUE first, got {m:?}");
    };
    assert_eq!(r.step_id.job_id, 5);
    assert_eq!(r.flags, JOB_LAUNCH_FAILED);
}

fn check_registration(m: &Message) {
    let Message::MessageNodeRegistrationStatus(reg) = m else {
        panic!("expected a registration, got {m:?}");
    };
    assert_eq!(reg.status, ESLURMD_PROLOG_FAILED as u32);
}

#[tokio::test(flavor = "multi_thread")]
async fn failing_prolog_requeues_then_drains() {
    require_prerequisites();
    for v in [V::V22_05, V::V24_11, V::V26_05] {
        let seen = failing_prolog(v, 0, &format!("pq{}", v.release())).await;
        assert_eq!(seen.len(), 2, "{seen:?}");
        check_requeue(&seen[0]);
        check_registration(&seen[1]);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn failing_prolog_kills_a_job_that_cannot_be_requeued() {
    require_prerequisites();
    let seen = failing_prolog(V::V24_11, ESLURM_BATCH_ONLY as u32, "pk").await;
    assert_eq!(seen.len(), 3, "{seen:?}");
    check_requeue(&seen[0]);
    let Message::RequestKillJob(k) = &seen[1] else {
        panic!("expected REQUEST_KILL_JOB, got {:?}", seen[1]);
    };
    assert_eq!((k.step_id.job_id, k.signal), (5, 9));
    check_registration(&seen[2]);
}
