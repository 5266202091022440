//! Root never follows a name the job's owner could have planted: the
//! batch script's directory and the cancel notice's fallback to the
//! stderr file. Needs root and munged, as the other daemon tests.

mod common;

use common::*;
use slurm_wire::{Message, ProtocolVersion as V};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;

/// A root file the attacks aim at.
fn canary(dir: &Path) -> std::path::PathBuf {
    let c = dir.join("canary");
    std::fs::write(&c, "root's\n").unwrap();
    std::fs::set_permissions(&c, std::fs::Permissions::from_mode(0o600)).unwrap();
    c
}

fn assert_untouched(c: &Path) {
    let m = std::fs::metadata(c).unwrap();
    assert_eq!(
        (m.uid(), m.gid(), m.mode() & 0o7777),
        (0, 0, 0o600),
        "the canary's owner or mode changed"
    );
    assert_eq!(std::fs::read_to_string(c).unwrap(), "root's\n");
}

/// While jobs start, the owner keeps swapping `slurm_script` in every
/// batch directory for a link to root's canary; the job also checks
/// that it cannot add a name beside its script.
#[tokio::test(flavor = "multi_thread")]
async fn the_batch_script_cannot_be_swapped_for_a_link() {
    require_prerequisites();
    let v = V::V24_11;
    let n = Node::new("", None, "scriptlink").await;
    let _d = n.start(v);
    n.receive(v).await;
    let c = canary(n.dir.path());
    let spool = n.path("spool");
    let racer = Daemon(
        std::process::Command::new("sh")
            .args([
                "-c",
                &format!(
                    "while :; do for d in {0}/job*; do ln -sfn {1} $d/slurm_script; done 2>/dev/null; done",
                    spool.display(),
                    c.display()
                ),
            ])
            .uid(NOBODY)
            .gid(NOBODY)
            .spawn()
            .unwrap(),
    );
    let auth = n.munged.auth();
    for job_id in 60..80 {
        let script = "#!/bin/sh\nif touch \"$(dirname \"$0\")/mine\" 2>/dev/null; then echo open; else echo closed; fi\n";
        let m = launch(job_id, v, &auth, n.dir.path(), "t1", script);
        rc_ok(n.rpc(v, Message::RequestBatchJobLaunch(m)).await);
        match n.receive(v).await {
            Message::RequestCompleteBatchScript(d) => assert_eq!(d.step_id.job_id, job_id),
            m => panic!("expected the completion, got {m:?}"),
        }
        let out = n.path(&format!("out-{job_id}-itest.txt"));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "closed\n");
    }
    drop(racer);
    assert_untouched(&c);
}

/// `exec 2>&-` in the script, then its stderr file swapped for a link to
/// root's canary, then a cancel: the notice is refused, not written
/// through the link.
#[tokio::test(flavor = "multi_thread")]
async fn the_cancel_notice_never_writes_through_a_link() {
    require_prerequisites();
    let v = V::V24_11;
    let n = Node::new("", None, "noticelink").await;
    let _d = n.start(v);
    n.receive(v).await;
    let c = canary(n.dir.path());
    let auth = n.munged.auth();
    let script = "#!/bin/sh\necho started >&2\nexec 2>&-\nsleep 100\n";
    let mut m = launch(90, v, &auth, n.dir.path(), "t1", script);
    m.std_err = Some("err-%j.txt".into());
    rc_ok(n.rpc(v, Message::RequestBatchJobLaunch(m)).await);
    let err = n.path("err-90.txt");
    wait_file(&err, "the job's start", |s| s == "started\n").await;
    // The script closed its stderr once it said "started".
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    std::fs::remove_file(&err).unwrap();
    std::os::unix::fs::symlink(&c, &err).unwrap();
    let mut k = kill_msg(90, JOB_CANCELLED);
    k.details = Some("cancelled by test".into());
    end_job(&n, v, 90, Message::RequestTerminateJob(k)).await;
    assert_untouched(&c);
}
