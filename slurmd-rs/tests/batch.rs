//! The daemon against a test that plays slurmctld: a private munged, real
//! encoded RPCs over loopback in 22.05, 24.11 and 26.05. Needs root (the
//! job runs as another user) and munged; without them the tests fail.

mod common;

use common::*;
use slurm_rpc::call;
use slurm_testkit::munged::Munged;
use slurm_wire::auth::Audience;
use slurm_wire::msg::common::ReturnCodeMsg;
use slurm_wire::msg::kill::KillJobMsg;
use slurm_wire::types::StepId;
use slurm_wire::{Message, ProtocolVersion as V};
use std::net::SocketAddr;
use tokio::net::TcpListener;

/// Prints its environment's essentials, exits 3.
const SCRIPT: &str = "#!/bin/sh\necho \"$SLURM_JOB_ID $SLURM_JOB_NAME $SLURM_NODEID $SLURM_JOB_USER $(id -u)\"\nexit 3\n";

/// Registration, launch, completion, termination and epilog in `v`;
/// `pin` makes the daemon use `v` instead of probing for it.
async fn scenario(v: V, pin: bool) {
    let munged = Munged::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let ctld = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let ctld_port = ctld.local_addr().unwrap().port();
    let port = free_port();
    let p = |n: &str| dir.path().join(n).display().to_string();
    std::fs::write(
        p("epilog.sh"),
        format!(
            "#!/bin/sh\necho \"$SLURM_JOB_ID $SLURM_SCRIPT_CONTEXT\" > {}\n",
            p("epilog.out")
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        p("epilog.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::write(
        p("slurm.conf"),
        format!(
            "ClusterName=itest\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort={ctld_port}\n\
             SlurmUser=root\nAuthInfo=socket={}\nSlurmdSpoolDir={}\nSlurmdPidFile={}\n\
             Epilog={}\nKillWait=1\nSlurmdParameters=config_overrides\n\
             NodeName=t1 CPUs=1 RealMemory=100 Port={port}\nPartitionName=p Nodes=t1\n",
            munged.socket.display(),
            p("spool"),
            p("slurmd.pid"),
            p("epilog.sh"),
        ),
    )
    .unwrap();
    // A cgroup tree of our own (the host's cgroups when mounted).
    let cg_root = format!("slurm_rs_test_{}_{}", std::process::id(), v.release());
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_slurmd-rs"));
    cmd.args([
        "-D",
        "-N",
        "t1",
        "-f",
        &p("slurm.conf"),
        "-L",
        &p("slurmd.log"),
        "--cgroup-root",
        &cg_root,
    ]);
    if pin {
        cmd.args(["--ctld-protocol", v.release()]);
    }
    let _d = Daemon(cmd.spawn().unwrap());
    let ctx = munged.auth_ctx();

    // Registration, in the version this controller accepts.
    let (m, s, rv) = next_request(&ctld, &ctx, v).await;
    let Message::MessageNodeRegistrationStatus(reg) = m else {
        panic!("expected a registration, got {m:?}");
    };
    assert_eq!(rv, v);
    assert_eq!(reg.node_name.as_deref(), Some("t1"));
    assert_eq!((reg.cpus, reg.real_memory), (1, 100));
    assert_eq!(&reg.gres_info[..2], &v.to_wire().to_be_bytes());
    answer(s, &ctx, v, 0).await;

    // Ping.
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let ping = call(
        &ctx,
        addr,
        v,
        &Message::RequestPing(Default::default()),
        Audience::Any,
        T,
    )
    .await
    .unwrap()
    .1;
    assert!(matches!(ping, Message::ResponsePingSlurmd(_)), "{ping:?}");

    // A forged credential (signed, then altered) is refused.
    let auth = munged.auth();
    let mut bad = launch(8, v, &auth, dir.path(), "t1", SCRIPT);
    bad.cred.cred.arg.id.uid = 0;
    let r = call(
        &ctx,
        addr,
        v,
        &Message::RequestBatchJobLaunch(bad),
        Audience::Any,
        T,
    )
    .await
    .unwrap()
    .1;
    assert_eq!(
        r,
        Message::ResponseSlurmRc(ReturnCodeMsg {
            return_code: slurm_wire::errno::ESLURMD_INVALID_JOB_CREDENTIAL as u32
        })
    );

    // The real launch.
    let m = launch(7, v, &auth, dir.path(), "t1", SCRIPT);
    let r = call(
        &ctx,
        addr,
        v,
        &Message::RequestBatchJobLaunch(m),
        Audience::Any,
        T,
    )
    .await
    .unwrap()
    .1;
    assert_eq!(
        r,
        Message::ResponseSlurmRc(ReturnCodeMsg { return_code: 0 })
    );
    let (m, s, _) = next_request(&ctld, &ctx, v).await;
    let Message::RequestCompleteBatchScript(done) = m else {
        panic!("expected batch completion, got {m:?}");
    };
    assert_eq!(done.step_id.job_id, 7);
    assert_eq!(done.job_rc, 3 << 8, "exit 3 as a wait status");
    assert_eq!(done.slurm_rc, 0);
    assert_eq!(done.node_name.as_deref(), Some("t1"));
    answer(s, &ctx, v, 0).await;
    let out = std::fs::read_to_string(p("out-7-itest.txt")).unwrap();
    assert_eq!(out, format!("7 itest 0 nobody {NOBODY}\n"));

    // Termination: epilog, then MESSAGE_EPILOG_COMPLETE.
    let k = KillJobMsg {
        step_id: StepId::job(7),
        job_uid: NOBODY,
        job_gid: NOBODY,
        nodes: Some("t1".into()),
        ..Default::default()
    };
    let r = call(
        &ctx,
        addr,
        v,
        &Message::RequestTerminateJob(k),
        Audience::Any,
        T,
    )
    .await
    .unwrap()
    .1;
    assert_eq!(
        r,
        Message::ResponseSlurmRc(ReturnCodeMsg { return_code: 0 })
    );
    let (m, s, _) = next_request(&ctld, &ctx, v).await;
    let Message::MessageEpilogComplete(ep) = m else {
        panic!("expected epilog complete, got {m:?}");
    };
    assert_eq!((ep.step_id.0.job_id, ep.return_code), (7, 0));
    answer(s, &ctx, v, 0).await;
    assert_eq!(
        std::fs::read_to_string(p("epilog.out")).unwrap(),
        "7 epilog_slurmd\n"
    );
    for c in ["freezer", "memory", "cpuset", "devices", "pids"] {
        let r = std::path::Path::new("/sys/fs/cgroup")
            .join(c)
            .join(&cg_root);
        assert!(
            !r.join(format!("uid_{NOBODY}")).exists(),
            "cgroups left in {}",
            r.display()
        );
        let _ = std::fs::remove_dir(r);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn batch_job_22_05() {
    require_prerequisites();
    scenario(V::V22_05, true).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn batch_job_24_11_probed() {
    require_prerequisites();
    scenario(V::V24_11, false).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn batch_job_26_05() {
    require_prerequisites();
    scenario(V::V26_05, true).await;
}
