//! The controller over loopback with a private munged: real encoded RPCs
//! in 22.05, 24.11 and 26.05 from a test that plays the clients and a
//! slurmd (which receives the batch launch and terminate RPCs). Needs
//! root (credentials of uid 0 are what SlurmUser=root accepts) and munged;
//! without them the test fails with the fix.

use slurm_rpc::{call, rc_message, AuthCtx};
use slurm_testkit::mock::MockSlurmd;
use slurm_testkit::munged::Munged;
use slurm_wire::auth::Audience;
use slurm_wire::msg::common::LastUpdateMsg;
use slurm_wire::msg::job::{JobIdMsg, JobInfoRequestMsg};
use slurm_wire::msg::job_desc::JobDescMsg;
use slurm_wire::msg::kill::EpilogCompleteMsg;
use slurm_wire::msg::node::SlurmNodeRegistrationStatusMsg;
use slurm_wire::msg::step::CompleteBatchScriptMsg;
use slurm_wire::pack::NO_VAL;
use slurm_wire::types::StepId;
use slurm_wire::{Message, ProtocolVersion as V};
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;
use tokio::net::TcpListener;

const T: Duration = Duration::from_secs(20);

fn require_prerequisites() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "this test signs requests as SlurmUser=root: run it as root"
    );
    assert!(
        Path::new("/usr/sbin/munged").exists(),
        "munged is not installed: run scripts/setup"
    );
}

fn conf(dir: &Path, munge: &Path, slurmd_port: u16) -> std::path::PathBuf {
    let text = format!(
        "ClusterName=loop\n\
         SlurmctldHost=localhost\n\
         SlurmUser=root\n\
         SlurmdUser=root\n\
         AuthType=auth/munge\n\
         AuthInfo=socket={}\n\
         CredType=cred/munge\n\
         StateSaveLocation={}/state\n\
         SlurmdTimeout=0\n\
         MinJobAge=300\n\
         NodeName=n1 NodeAddr=127.0.0.1 Port={slurmd_port} CPUs=4 RealMemory=1000\n\
         PartitionName=debug Nodes=n1 Default=YES State=UP\n",
        munge.display(),
        dir.display()
    );
    let p = dir.join("slurm.conf");
    std::fs::write(&p, text).unwrap();
    p
}

async fn rpc(ctx: &AuthCtx, addr: SocketAddr, v: V, msg: Message) -> Message {
    let (f, m) = call(ctx, addr, v, &msg, Audience::Uid(0), T)
        .await
        .unwrap_or_else(|e| panic!("{} in {v}: {e}", msg.msg_type()));
    assert_eq!(
        f.header.version, v,
        "replies come in the requester's version"
    );
    m
}

fn registration(v: V) -> Message {
    Message::MessageNodeRegistrationStatus(SlurmNodeRegistrationStatusMsg {
        node_name: Some("n1".into()),
        cpus: 4,
        sockets: 4,
        cores: 1,
        threads: 1,
        real_memory: 1000,
        version: Some(format!("{}.1", v.release())),
        ..Default::default()
    })
}

fn batch_job(name: &str) -> Message {
    Message::RequestSubmitBatchJob(JobDescMsg {
        // as clients send it (0 would be --exclusive)
        shared: slurm_wire::pack::NO_VAL16,
        name: Some(name.into()),
        script: Some("#!/bin/sh\nhostname\n".into()),
        work_dir: Some("/tmp".into()),
        environment: vec![Some("PATH=/bin".into())],
        min_cpus: 1,
        user_id: 0,
        group_id: 0,
        ..JobDescMsg::unset()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_and_a_slurmd_of_three_versions() {
    require_prerequisites();
    let munged = Munged::start();
    let dir = tempfile::tempdir().unwrap();
    let ctx = munged.auth_ctx();
    // The fake slurmd: records what the controller sends, answers rc 0.
    let mut slurmd = MockSlurmd::start(ctx.clone()).await;
    let path = conf(dir.path(), &munged.socket, slurmd.port);

    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let opts = slurmctld::daemon::RunOptions::default();
    let daemon = tokio::spawn(slurmctld::daemon::run_with(path, Some(listener), opts));

    for v in [V::V22_05, V::V24_11, V::V26_05] {
        assert_eq!(
            rpc(&ctx, addr, v, Message::RequestPing(Default::default())).await,
            rc_message(0)
        );
        let Message::ResponseBuildInfo(b) = rpc(
            &ctx,
            addr,
            v,
            Message::RequestBuildInfo(LastUpdateMsg { last_update: 0 }),
        )
        .await
        else {
            panic!("build info in {v}")
        };
        assert_eq!(b.cluster_name.as_deref(), Some("loop"));
        // squeue/sinfo/scontrol ask whether the cluster is federated: a
        // NULL federation record, as a stock controller in none answers.
        assert_eq!(
            rpc(&ctx, addr, v, Message::RequestFedInfo(Default::default())).await,
            Message::ResponseFedInfo(slurm_wire::msg::common::NoFederation)
        );

        // The node registers in this version: the controller talks to it in it.
        let r = rpc(&ctx, addr, v, registration(v)).await;
        assert!(
            matches!(r, Message::ResponseNodeRegistration(_)),
            "{v}: {r:?}"
        );

        let Message::ResponseSubmitBatchJob(s) = rpc(&ctx, addr, v, batch_job("j")).await else {
            panic!("submit in {v}")
        };
        let job_id = s.step_id.job_id;
        let (lv, launch) = slurmd.next().await;
        assert_eq!(lv, v, "launch in the node's version");
        let Message::RequestBatchJobLaunch(l) = launch else {
            panic!("{v}: expected a batch launch, got {launch:?}")
        };
        assert_eq!(l.cred.cred.arg.step_id.job_id, job_id);
        assert_eq!(l.cred.cred_version, v.to_wire());
        assert!(l.cred.cred.signature.is_some(), "credential is signed");
        assert_eq!(l.nodes.as_deref(), Some("n1"));
        // 25.11+ stepds need the default output name
        assert_eq!(
            l.std_out.as_deref(),
            (v >= V::V25_11).then_some("slurm-%j.out")
        );

        // Running, as squeue (REQUEST_JOB_INFO) sees it.
        let jobs = rpc(
            &ctx,
            addr,
            v,
            Message::RequestJobInfo(JobInfoRequestMsg {
                last_update: 0,
                show_flags: 0,
                job_ids: None,
            }),
        )
        .await;
        let Message::ResponseJobInfo(info) = jobs else {
            panic!("{v}: {jobs:?}")
        };
        let j = info
            .job_array
            .iter()
            .find(|j| j.step_id.job_id == job_id)
            .expect("the job is listed");
        assert_eq!(j.job_state & 0xff, 1, "{v}: RUNNING");
        assert_eq!(j.nodes.as_deref(), Some("n1"));
        // A client whose copy is newer than the last change is told so (as
        // stock, (last_update - 1) >= last_job_update); one as old as the
        // change gets the listing again.
        let again = |last_update: i64| {
            rpc(
                &ctx,
                addr,
                v,
                Message::RequestJobInfo(JobInfoRequestMsg {
                    last_update,
                    show_flags: 0,
                    job_ids: None,
                }),
            )
        };
        assert_eq!(
            again(info.last_update + 1).await,
            rc_message(slurm_wire::errno::SLURM_NO_CHANGE_IN_DATA),
            "{v}"
        );
        assert!(
            matches!(again(info.last_update).await, Message::ResponseJobInfo(_)),
            "{v}"
        );

        // slurmd reports the script's end; the controller asks it to clean up.
        let done = Message::RequestCompleteBatchScript(CompleteBatchScriptMsg {
            step_id: StepId {
                sluid: 0,
                job_id,
                step_id: StepId::BATCH_SCRIPT,
                step_het_comp: NO_VAL,
            },
            job_rc: 0,
            node_name: Some("n1".into()),
            ..Default::default()
        });
        assert_eq!(rpc(&ctx, addr, v, done).await, rc_message(0));
        let (tv, term) = slurmd.next().await;
        assert_eq!(tv, v);
        assert!(
            matches!(&term, Message::RequestTerminateJob(k) if k.step_id.job_id == job_id),
            "{v}: {term:?}"
        );
        let mut epi = EpilogCompleteMsg {
            node_name: Some("n1".into()),
            ..Default::default()
        };
        epi.step_id.0.job_id = job_id;
        assert_eq!(
            rpc(&ctx, addr, v, Message::MessageEpilogComplete(epi)).await,
            rc_message(0)
        );
        let one = rpc(
            &ctx,
            addr,
            v,
            Message::RequestJobInfoSingle(JobIdMsg {
                step_id: StepId {
                    sluid: 0,
                    job_id,
                    step_id: NO_VAL,
                    step_het_comp: NO_VAL,
                },
                ..Default::default()
            }),
        )
        .await;
        let Message::ResponseJobInfo(info) = one else {
            panic!("{v}: {one:?}")
        };
        assert_eq!(info.job_array.len(), 1);
        assert_eq!(
            info.job_array[0].job_state, 3,
            "{v}: COMPLETED, epilog done"
        );
    }

    // Every submit was durable: the state directory has the log.
    assert!(dir.path().join("state").join("rs_state.wal").exists());
    daemon.abort();
}
