//! Ending and signalling a running batch job as stock's step daemon does:
//! the "*** JOB .. CANCELLED AT .. ***" line in the job's stderr (per
//! cause and release), and `scancel -b` reaching the batch shell alone
//! unless `--full`. Needs root and munged, as the other daemon tests.

mod common;

use common::*;
use slurm_wire::msg::common::SignalTasksMsg;
use slurm_wire::pack::NO_VAL;
use slurm_wire::types::StepId;
use slurm_wire::{Message, ProtocolVersion as V};
use std::time::Duration;

const KILL_JOB_BATCH: u16 = 1 << 0;
const KILL_STEPS_ONLY: u16 = 1 << 2;
const KILL_FULL_JOB: u16 = 1 << 3;
const JOB_RUNNING: u32 = 1;

/// The lines of `text` after "started", the time after " AT " and a
/// leading `[<time>.<ms>]` stamp checked and replaced.
fn notices(text: &str) -> Vec<String> {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("started"), "{text:?}");
    lines
        .map(
            |l| match l.strip_prefix('[').and_then(|r| r.split_once("] ")) {
                Some((stamp, rest)) => {
                    assert!(stamp.len() == 23 && stamp.as_bytes()[19] == b'.', "{l}");
                    format!("[<STAMP>] {rest}")
                }
                None => l.to_string(),
            },
        )
        .map(|l| {
            let at = l.find(" AT ").map(|i| i + 4);
            match at {
                Some(i) if l.len() >= i + 19 => {
                    let t = &l[i..i + 19];
                    assert!(
                        t.as_bytes()[10] == b'T' && t[..4].bytes().all(|b| b.is_ascii_digit()),
                        "{l}"
                    );
                    format!("{}<TIME>{}", &l[..i], &l[i + 19..])
                }
                _ => l.to_string(),
            }
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_time_limit_is_announced_once_in_the_jobs_output() {
    require_prerequisites();
    let v = V::V24_11;
    let n = Node::new("", None, "notice_tl").await;
    let _d = n.start(v);
    n.receive(v).await;
    let out = started(&n, v, 51, "sleep 100").await;
    end_job(&n, v, 51, Message::RequestKillTimelimit(kill_msg(51, 6))).await;
    // The termination that follows says nothing more.
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        notices(&text),
        ["slurmstepd-t1: error: *** JOB 51 ON t1 CANCELLED AT <TIME> DUE TO TIME LIMIT ***"]
    );
}

async fn cancel_line(v: V, job_id: u32) -> Vec<String> {
    require_prerequisites();
    let n = Node::new("", None, &format!("notice_{}", v.release())).await;
    let _d = n.start(v);
    n.receive(v).await;
    let out = started(&n, v, job_id, "sleep 100").await;
    let mut k = kill_msg(job_id, JOB_CANCELLED);
    k.details = Some("cancelled by test".into());
    end_job(&n, v, job_id, Message::RequestTerminateJob(k)).await;
    notices(&std::fs::read_to_string(&out).unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancel_is_announced_in_the_releases_words() {
    let reason = "slurmstepd-t1: error: *** REASON: cancelled by test ***";
    assert_eq!(
        cancel_line(V::V22_05, 52).await,
        [
            "slurmstepd-t1: error: *** JOB 52 ON t1 CANCELLED AT <TIME> ***",
            reason
        ]
    );
    assert_eq!(
        cancel_line(V::V26_05, 53).await,
        [
            "[<STAMP>] error: *** JOB 53 ON t1 CANCELLED AT <TIME> DUE to SIGNAL Terminated ***",
            "[<STAMP>] error: *** REASON: cancelled by test ***"
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_that_already_ended_gets_no_line() {
    require_prerequisites();
    let v = V::V26_05;
    let n = Node::new("", None, "notice_done").await;
    let _d = n.start(v);
    n.receive(v).await;
    let out = started(&n, v, 54, "exit 0").await;
    match n.receive(v).await {
        Message::RequestCompleteBatchScript(c) => assert_eq!(c.step_id.job_id, 54),
        m => panic!("expected the completion, got {m:?}"),
    }
    end_job(&n, v, 54, Message::RequestTerminateJob(kill_msg(54, 3))).await;
    assert_eq!(std::fs::read_to_string(out).unwrap(), "started\n");
}

fn signal(job_id: u32, step_id: u32, flags: u16, sig: i32) -> Message {
    Message::RequestSignalTasks(SignalTasksMsg {
        step_id: StepId {
            sluid: 0,
            job_id,
            step_id,
            step_het_comp: NO_VAL,
        },
        flags,
        signal: sig as u16,
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn batch_signals_reach_the_shell_alone_unless_full() {
    require_prerequisites();
    let v = V::V24_11;
    let n = Node::new("", None, "sigb").await;
    let _d = n.start(v);
    n.receive(v).await;
    let log = n.path("sig.log");
    let gate = n.path("gate");
    // The shell and a child in its process group each log a USR1.
    let tail = format!(
        "sh -c 'trap \"echo child >> {l}\" USR1; while :; do sleep 0.1; done' & c=$!\n\
         trap 'echo shell >> {l}' USR1\n\
         echo ready >> {l}\n\
         while [ ! -e {g} ]; do sleep 0.1; done\n\
         kill $c\n",
        l = log.display(),
        g = gate.display()
    );
    started(&n, v, 61, &tail).await;
    wait_file(&log, "the script's traps", |s| s == "ready\n").await;
    // The child sets its trap right after it starts.
    tokio::time::sleep(Duration::from_millis(300)).await;

    // scancel --signal=USR1 (no -b): srun steps only, the script is not one.
    let steps_only = signal(61, 40_001, KILL_STEPS_ONLY, libc::SIGUSR1);
    rc_ok(n.rpc(v, steps_only).await);
    // scancel -b --signal=USR1: the shell alone.
    let b = signal(61, StepId::BATCH_SCRIPT, KILL_JOB_BATCH, libc::SIGUSR1);
    rc_ok(n.rpc(v, b).await);
    wait_file(&log, "-b", |s| s.contains("shell")).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "ready\nshell\n",
        "only the shell got -b's signal"
    );
    // scancel -b --full: the shell's whole process group.
    let full = signal(
        61,
        StepId::BATCH_SCRIPT,
        KILL_JOB_BATCH | KILL_FULL_JOB,
        libc::SIGUSR1,
    );
    rc_ok(n.rpc(v, full).await);
    let s = wait_file(&log, "--full", |s| s.lines().count() >= 4).await;
    let mut got: Vec<&str> = s.lines().skip(2).collect();
    got.sort_unstable();
    assert_eq!(got, ["child", "shell"]);

    std::fs::write(&gate, "").unwrap();
    match n.receive(v).await {
        Message::RequestCompleteBatchScript(c) => assert_eq!(c.step_id.job_id, 61),
        m => panic!("expected the completion, got {m:?}"),
    }
    end_job(
        &n,
        v,
        61,
        Message::RequestTerminateJob(kill_msg(61, JOB_RUNNING)),
    )
    .await;
}
