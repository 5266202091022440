//! The daemon against a test that plays slurmctld: a private munged, real
//! encoded RPCs over loopback in 22.05, 24.11 and 26.05. Needs root (the
//! job runs as another user) and munged; without them the tests fail.

use slurm_rpc::testing::Munged;
use slurm_rpc::{call, read_frame, reply_frame, write_frame, AuthCtx};
use slurm_wire::auth::{Audience, AuthPlugin, VerifyPolicy};
use slurm_wire::msg::common::ReturnCodeMsg;
use slurm_wire::msg::cred::{CpuArrayRep, Identity, JobCred, JobCredArg, VersionedCred};
use slurm_wire::msg::kill::KillJobMsg;
use slurm_wire::msg::launch::BatchJobLaunchMsg;
use slurm_wire::pack::NO_VAL;
use slurm_wire::types::StepId;
use slurm_wire::{Frame, Message, ProtocolVersion as V};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};

const T: Duration = Duration::from_secs(20);
const NOBODY: u32 = 65534;

/// A missing prerequisite fails the test with the fix, never skips it.
fn require_prerequisites() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "these tests run jobs as another user: run them as root"
    );
    assert!(
        Path::new("/usr/sbin/munged").exists(),
        "munged is not installed: run scripts/setup"
    );
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One request to the fake controller; frames in other versions than
/// `accept` are dropped unanswered (as an older controller does).
async fn next_request(l: &TcpListener, ctx: &AuthCtx, accept: V) -> (Message, TcpStream, V) {
    loop {
        let (mut s, _) = tokio::time::timeout(T, l.accept())
            .await
            .expect("slurmd did not call the controller")
            .unwrap();
        let raw = read_frame(&mut s).await.unwrap();
        let f = Frame::decode(&raw).unwrap();
        if f.header.version != accept {
            continue;
        }
        let id = slurm_rpc::authenticate(ctx, &f).unwrap();
        assert_eq!(id.uid, 0, "slurmd runs as root");
        return (f.message().unwrap(), s, f.header.version);
    }
}

async fn answer(mut s: TcpStream, ctx: &AuthCtx, v: V, rc: u32) {
    let m = Message::ResponseSlurmRc(ReturnCodeMsg { return_code: rc });
    let f = reply_frame(ctx, v, 0, &m).unwrap();
    write_frame(&mut s, &f).await.unwrap();
}

fn launch(job_id: u32, v: V, auth: &dyn AuthPlugin, dir: &Path, node: &str) -> BatchJobLaunchMsg {
    let mut cred = JobCred {
        arg: JobCredArg {
            step_id: StepId {
                sluid: 0,
                job_id,
                step_id: StepId::BATCH_SCRIPT,
                step_het_comp: NO_VAL,
            },
            id: Identity {
                uid: NOBODY,
                gid: NOBODY,
                pw_name: Some("nobody".into()),
                gids: vec![NOBODY],
                gr_names: vec![Some("nogroup".into())],
                ..Default::default()
            },
            job_hostlist: Some(node.into()),
            job_nhosts: 1,
            cpu_array: vec![CpuArrayRep { cpus: 1, reps: 1 }],
            ..Default::default()
        },
        signature: None,
    };
    cred.signature = Some(auth.create(&cred.signed_bytes(v), Audience::Any).unwrap());
    BatchJobLaunchMsg {
        job_id,
        uid: NOBODY,
        gid: NOBODY,
        user_name: Some("nobody".into()),
        partition: Some("p".into()),
        array_task_id: NO_VAL,
        cpus_per_task: 1,
        cpu_groups: vec![CpuArrayRep { cpus: 1, reps: 1 }],
        nodes: Some(node.into()),
        script: Some(
            "#!/bin/sh\necho \"$SLURM_JOB_ID $SLURM_JOB_NAME $SLURM_NODEID $SLURM_JOB_USER $(id -u)\"\nexit 3\n"
                .into(),
        ),
        work_dir: Some(dir.display().to_string()),
        std_out: Some("out-%j-%x.txt".into()),
        environment: vec![
            Some("PATH=/usr/bin:/bin".into()),
            Some("SLURM_JOB_NAME=itest".into()),
        ],
        cred: VersionedCred {
            cred_version: v.to_wire(),
            cred: Box::new(cred),
        },
        ..Default::default()
    }
}

struct Daemon(std::process::Child);
impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

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
    let ctx = AuthCtx {
        plugin: Arc::new(munged.auth()),
        slurm_user_uid: 0,
        policy: VerifyPolicy::default(),
    };

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
    let mut bad = launch(8, v, &auth, dir.path(), "t1");
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
    let m = launch(7, v, &auth, dir.path(), "t1");
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
