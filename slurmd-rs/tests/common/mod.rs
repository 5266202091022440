//! A test that plays slurmctld for slurmd-rs: a private munged, a
//! listener the daemon registers with and reports to, and launch
//! messages built as stock slurmctld sends them.
#![allow(dead_code)]

use slurm_rpc::{call, AuthCtx};
use slurm_testkit::munged::Munged;
use slurm_wire::auth::{Audience, AuthPlugin};
use slurm_wire::msg::cred::{CpuArrayRep, Identity, JobCred, JobCredArg, VersionedCred};
use slurm_wire::msg::kill::KillJobMsg;
use slurm_wire::msg::launch::BatchJobLaunchMsg;
use slurm_wire::pack::NO_VAL;
use slurm_wire::types::StepId;
use slurm_wire::{Message, ProtocolVersion as V};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::net::TcpListener;

pub const T: Duration = Duration::from_secs(20);
pub const NOBODY: u32 = 65534;

/// A missing prerequisite fails the test with the fix, never skips it.
pub fn require_prerequisites() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "these tests run jobs as another user: run them as root"
    );
    assert!(
        Path::new("/usr/sbin/munged").exists(),
        "munged is not installed: run scripts/setup"
    );
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub use slurm_testkit::mock::{answer, next_request};

/// User nobody as a credential names them, with their group.
pub fn nobody() -> Identity {
    Identity {
        uid: NOBODY,
        gid: NOBODY,
        pw_name: Some("nobody".into()),
        gids: vec![NOBODY],
        gr_names: vec![Some("nogroup".into())],
        ..Default::default()
    }
}

/// A batch launch as stock slurmctld sends it, for user nobody.
pub fn launch(
    job_id: u32,
    v: V,
    auth: &dyn AuthPlugin,
    dir: &Path,
    node: &str,
    script: &str,
) -> BatchJobLaunchMsg {
    let mut cred = JobCred {
        arg: JobCredArg {
            step_id: StepId {
                sluid: 0,
                job_id,
                step_id: StepId::BATCH_SCRIPT,
                step_het_comp: NO_VAL,
            },
            id: nobody(),
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
        script: Some(script.into()),
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

/// Re-signs a launch's credential after a test changed its fields.
pub fn resign(m: &mut BatchJobLaunchMsg, v: V, auth: &dyn AuthPlugin) {
    let c = &mut m.cred.cred;
    c.signature = Some(auth.create(&c.signed_bytes(v), Audience::Any).unwrap());
}

pub struct Daemon(pub std::process::Child);
impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The test's node: a temp dir with slurm.conf (and `extra` cgroup.conf
/// lines), a munged, the fake controller's listener.
pub struct Node {
    pub munged: Munged,
    pub dir: tempfile::TempDir,
    pub ctld: TcpListener,
    pub port: u16,
    pub ctx: AuthCtx,
    pub cg_root: String,
}

impl Node {
    pub async fn new(conf_extra: &str, cgroup_conf: Option<&str>, tag: &str) -> Node {
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
            p("slurm.conf"),
            format!(
                "ClusterName=itest\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort={ctld_port}\n\
                 SlurmUser=root\nAuthInfo=socket={}\nSlurmdSpoolDir={}\nSlurmdPidFile={}\n\
                 KillWait=1\nSlurmdParameters=config_overrides\n{conf_extra}\n\
                 NodeName=t1 CPUs=1 RealMemory=100 Port={port}\nPartitionName=p Nodes=t1\n",
                munged.socket.display(),
                p("spool"),
                p("slurmd.pid"),
            ),
        )
        .unwrap();
        if let Some(c) = cgroup_conf {
            std::fs::write(p("cgroup.conf"), c).unwrap();
        }
        let ctx = munged.auth_ctx();
        Node {
            munged,
            dir,
            ctld,
            port,
            ctx,
            cg_root: format!("slurm_rs_test_{}_{tag}", std::process::id()),
        }
    }

    pub fn path(&self, n: &str) -> PathBuf {
        self.dir.path().join(n)
    }

    pub fn addr(&self) -> SocketAddr {
        format!("127.0.0.1:{}", self.port).parse().unwrap()
    }

    /// Starts slurmd-rs, pinned to `v`, logging to `slurmd.log`.
    pub fn start(&self, v: V) -> Daemon {
        let mut cmd = self.command(v);
        cmd.arg("-L").arg(self.path("slurmd.log"));
        Daemon(cmd.spawn().unwrap())
    }

    /// slurmd-rs as node t1 pinned to `v`, without a log file option.
    pub fn command(&self, v: V) -> std::process::Command {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_slurmd-rs"));
        cmd.args(["-D", "-N", "t1", "-f"])
            .arg(self.path("slurm.conf"))
            .args(["--cgroup-root", &self.cg_root])
            .args(["--ctld-protocol", v.release()]);
        cmd
    }

    /// Sends one RPC to the daemon, returns its reply.
    pub async fn rpc(&self, v: V, m: Message) -> Message {
        call(&self.ctx, self.addr(), v, &m, Audience::Any, T)
            .await
            .unwrap()
            .1
    }

    /// The next message from the daemon, answered with rc 0.
    pub async fn receive(&self, v: V) -> Message {
        let (m, s, _) = next_request(&self.ctld, &self.ctx, v).await;
        answer(s, &self.ctx, v, 0).await;
        m
    }

    /// The v1 controller directories of this daemon's cgroup tree that
    /// exist on this host.
    pub fn cgroup_roots(&self) -> Vec<PathBuf> {
        ["freezer", "memory", "cpuset", "devices", "pids"]
            .iter()
            .map(|c| Path::new("/sys/fs/cgroup").join(c).join(&self.cg_root))
            .filter(|p| p.exists())
            .collect()
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        for r in self.cgroup_roots() {
            let _ = std::fs::remove_dir(r);
        }
    }
}

pub const JOB_CANCELLED: u32 = 4;

pub fn rc_ok(r: Message) {
    assert!(
        matches!(r, Message::ResponseSlurmRc(ref rc) if rc.return_code == 0),
        "{r:?}"
    );
}

pub async fn wait_file(p: &Path, what: &str, done: impl Fn(&str) -> bool) -> String {
    // A minute: a job's start under load (a busy build) takes seconds.
    for _ in 0..1200 {
        let s = std::fs::read_to_string(p).unwrap_or_default();
        if done(&s) {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "{what}: {} has {:?}",
        p.display(),
        std::fs::read_to_string(p).unwrap_or_default()
    );
}

pub fn kill_msg(job_id: u32, job_state: u32) -> KillJobMsg {
    KillJobMsg {
        step_id: StepId::job(job_id),
        job_state,
        job_uid: NOBODY,
        job_gid: NOBODY,
        nodes: Some("t1".into()),
        ..Default::default()
    }
}

/// Sends `m` (a kill request) and waits for the epilog's report.
pub async fn end_job(n: &Node, v: V, job_id: u32, m: Message) {
    rc_ok(n.rpc(v, m).await);
    loop {
        match n.receive(v).await {
            Message::MessageEpilogComplete(e) => {
                assert_eq!(e.step_id.0.job_id, job_id);
                return;
            }
            Message::RequestCompleteBatchScript(c) => assert_eq!(c.step_id.job_id, job_id),
            m => panic!("expected epilog complete, got {m:?}"),
        }
    }
}

/// A running job that said "started" on stderr; returns its output file.
pub async fn started(n: &Node, v: V, job_id: u32, script_tail: &str) -> std::path::PathBuf {
    let auth = n.munged.auth();
    let script = format!("#!/bin/sh\necho started >&2\n{script_tail}\n");
    let m = launch(job_id, v, &auth, n.dir.path(), "t1", &script);
    rc_ok(n.rpc(v, Message::RequestBatchJobLaunch(m)).await);
    let out = n.path(&format!("out-{job_id}-itest.txt"));
    wait_file(&out, "the job's start", |s| s == "started\n").await;
    out
}
