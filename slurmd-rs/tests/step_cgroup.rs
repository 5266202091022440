//! srun steps (REQUEST_LAUNCH_TASKS) in real cgroups: each task runs in
//! the job's cgroup under its own step's, with the job's memory limit from
//! the credential; an OOM kill is reported as stock reports it (SIG_OOM in
//! MESSAGE_TASK_EXIT and REQUEST_STEP_COMPLETE); nothing a step forks
//! outlives it. The test plays srun (its response and I/O ports) and
//! slurmctld. Needs root, munged and cgroup v1 controllers at /sys/fs/cgroup.

mod common;

use common::*;
use slurm_rpc::{read_frame, reply_frame, write_frame};
use slurm_wire::auth::{Audience, AuthPlugin};
use slurm_wire::msg::common::ReturnCodeMsg;
use slurm_wire::msg::cred::{CpuArrayRep, JobCred, JobCredArg, MemAllocRep, VersionedCred};
use slurm_wire::msg::kill::KillJobMsg;
use slurm_wire::msg::launch::LaunchTasksRequestMsg;
use slurm_wire::pack::NO_VAL;
use slurm_wire::types::StepId;
use slurm_wire::{Frame, Message, ProtocolVersion as V};
use std::path::Path;
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

const CGROUP_CONF: &str =
    "CgroupPlugin=cgroup/v1\nCgroupMountpoint=/sys/fs/cgroup\nConstrainRAMSpace=yes\n";
const TASK_CGROUP: &str = "TaskPlugin=task/cgroup\nProctrackType=proctrack/cgroup";
const SIG_OOM: u32 = 253;

fn require_cgroups() {
    require_prerequisites();
    assert!(
        Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes").exists()
            && Path::new("/sys/fs/cgroup/freezer/cgroup.procs").exists(),
        "these tests need cgroup v1 memory and freezer controllers at /sys/fs/cgroup"
    );
}

/// srun's side: the messages slurmd sends to its response port (each
/// answered with rc 0); whatever comes on its I/O port is read and dropped.
struct Srun {
    resp_port: u16,
    io_port: u16,
    rx: mpsc::Receiver<Message>,
}

impl Srun {
    async fn start(n: &Node, v: V) -> Srun {
        let resp = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let io = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let (resp_port, io_port) = (
            resp.local_addr().unwrap().port(),
            io.local_addr().unwrap().port(),
        );
        let (tx, rx) = mpsc::channel(64);
        let ctx = n.ctx.clone();
        tokio::spawn(async move {
            loop {
                let Ok((mut s, _)) = resp.accept().await else {
                    return;
                };
                let raw = read_frame(&mut s).await.unwrap();
                // Not authenticated: the credential is for the step's user.
                let m = Frame::decode(&raw).unwrap().message().unwrap();
                let r = Message::ResponseSlurmRc(ReturnCodeMsg { return_code: 0 });
                let f = reply_frame(&ctx, v, 0, &r).unwrap();
                write_frame(&mut s, &f).await.unwrap();
                let _ = tx.send(m).await;
            }
        });
        tokio::spawn(async move {
            while let Ok((mut s, _)) = io.accept().await {
                tokio::spawn(async move {
                    let mut sink = Vec::new();
                    let _ = s.read_to_end(&mut sink).await;
                });
            }
        });
        Srun {
            resp_port,
            io_port,
            rx,
        }
    }

    async fn next(&mut self) -> Message {
        tokio::time::timeout(T, self.rx.recv())
            .await
            .expect("nothing from slurmd on srun's port")
            .unwrap()
    }

    /// Waits for the step's MESSAGE_TASK_EXIT; returns its return code.
    async fn task_exit(&mut self) -> u32 {
        loop {
            match self.next().await {
                Message::ResponseLaunchTasks(r) => assert_eq!(r.return_code, 0, "{r:?}"),
                Message::MessageTaskExit(e) => return e.return_code,
                m => panic!("unexpected message to srun: {m:?}"),
            }
        }
    }
}

/// A step launch as srun sends it, for user nobody, the job given
/// `mem_mb` on node t1.
fn step_launch(
    (job_id, step_id): (u32, u32),
    v: V,
    auth: &dyn AuthPlugin,
    srun: &Srun,
    dir: &Path,
    cmd: &str,
    mem_mb: u64,
) -> LaunchTasksRequestMsg {
    let step = StepId {
        sluid: 0,
        job_id,
        step_id,
        step_het_comp: NO_VAL,
    };
    let mut cred = JobCred {
        arg: JobCredArg {
            step_id: step,
            id: nobody(),
            job_hostlist: Some("t1".into()),
            step_hostlist: Some("t1".into()),
            job_nhosts: 1,
            cpu_array: vec![CpuArrayRep { cpus: 1, reps: 1 }],
            job_mem_alloc: vec![MemAllocRep {
                mem_alloc: mem_mb,
                rep_count: 1,
            }],
            // Fresh: slurmd refuses a credential past its lifetime.
            ctime: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs() as i64,
            ..Default::default()
        },
        signature: None,
    };
    cred.signature = Some(auth.create(&cred.signed_bytes(v), Audience::Any).unwrap());
    LaunchTasksRequestMsg {
        step_id: step,
        uid: NOBODY,
        gid: NOBODY,
        user_name: Some("nobody".into()),
        ntasks: 1,
        cred: VersionedCred {
            cred_version: v.to_wire(),
            cred: Box::new(cred),
        },
        global_task_ids: vec![vec![0]],
        resp_port: vec![srun.resp_port],
        io_port: vec![srun.io_port],
        argv: vec![Some("/bin/sh".into()), Some("-c".into()), Some(cmd.into())],
        env: vec![Some("PATH=/usr/bin:/bin".into())],
        complete_nodelist: Some("t1".into()),
        cwd: Some(dir.display().to_string()),
        ..Default::default()
    }
}

async fn registered(n: &Node, v: V) {
    match n.receive(v).await {
        Message::MessageNodeRegistrationStatus(_) => {}
        m => panic!("expected a registration, got {m:?}"),
    }
}

/// The controller hears the step's end; returns its step_rc.
async fn step_complete(n: &Node, v: V, job_id: u32, step_id: u32) -> u32 {
    match n.receive(v).await {
        Message::RequestStepComplete(c) => {
            assert_eq!((c.step_id.job_id, c.step_id.step_id), (job_id, step_id));
            c.step_rc
        }
        m => panic!("expected a step completion, got {m:?}"),
    }
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s[s.rfind(')').unwrap() + 1..].trim_start().starts_with('Z'))
        .unwrap_or(false)
}

/// The path of `controller` in a /proc/<pid>/cgroup text.
fn cgroup_of<'a>(text: &'a str, controller: &str) -> &'a str {
    text.lines()
        .find_map(|l| {
            let mut f = l.splitn(3, ':');
            let (_, ctl, path) = (f.next()?, f.next()?, f.next()?);
            ctl.split(',').any(|c| c == controller).then_some(path)
        })
        .unwrap_or_else(|| panic!("no {controller} line in:\n{text}"))
}

fn launched(r: Message) {
    let rc = match &r {
        Message::ResponseSlurmRc(rc) => rc.return_code,
        Message::ResponseSlurmRcMsg(rc) => rc.return_code,
        _ => u32::MAX,
    };
    assert_eq!(rc, 0, "{r:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn srun_steps_run_in_the_jobs_step_cgroup_with_its_memory_limit() {
    require_cgroups();
    let v = V::V24_11;
    let n = Node::new(TASK_CGROUP, Some(CGROUP_CONF), "step").await;
    let _d = n.start(v);
    registered(&n, v).await;
    let auth = n.munged.auth();
    let mut srun = Srun::start(&n, v).await;
    let job = 61;
    let rel = format!("{}/uid_{NOBODY}/job_{job}", n.cg_root);

    // Step 0: where it runs, and a child in a session of its own.
    let cmd = format!(
        "cat /proc/self/cgroup > {d}/cg.txt; \
         setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > {d}/bg.txt; \
         cat /sys/fs/cgroup/memory/{rel}/memory.limit_in_bytes > {d}/limit.txt",
        d = n.dir.path().display()
    );
    let m = step_launch((job, 0), v, &auth, &srun, n.dir.path(), &cmd, 40);
    launched(n.rpc(v, Message::RequestLaunchTasks(m)).await);
    assert_eq!(srun.task_exit().await, 0);
    assert_eq!(step_complete(&n, v, job, 0).await, 0);
    let cg = std::fs::read_to_string(n.path("cg.txt")).unwrap();
    let step_dir = format!("/{rel}/step_0");
    for ctl in ["freezer", "memory", "cpuset", "devices", "pids"] {
        if Path::new("/sys/fs/cgroup")
            .join(ctl)
            .join(&n.cg_root)
            .exists()
        {
            let p = cgroup_of(&cg, ctl);
            assert!(p.ends_with(&step_dir), "{ctl}: {p}, want ...{step_dir}");
        }
    }
    assert_eq!(
        std::fs::read_to_string(n.path("limit.txt")).unwrap().trim(),
        (40u64 << 20).to_string(),
        "the job's memory limit from the credential"
    );
    let bg: i32 = std::fs::read_to_string(n.path("bg.txt"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!alive(bg), "step 0's setsid child {bg} outlived the step");
    assert!(
        !Path::new("/sys/fs/cgroup/freezer")
            .join(&rel)
            .join("step_0")
            .exists(),
        "step 0's cgroup left behind"
    );

    // Step 1 goes beyond the job's 40 MB: OOM-killed, reported SIG_OOM.
    let cmd = "head -c 300000000 /dev/zero | tail > /dev/null; echo survived";
    let m = step_launch((job, 1), v, &auth, &srun, n.dir.path(), cmd, 40);
    launched(n.rpc(v, Message::RequestLaunchTasks(m)).await);
    assert_eq!(srun.task_exit().await, SIG_OOM, "as stock's slurmstepd");
    assert_eq!(step_complete(&n, v, job, 1).await, SIG_OOM);

    // The job's end removes its cgroups.
    let k = KillJobMsg {
        step_id: StepId::job(job),
        job_uid: NOBODY,
        job_gid: NOBODY,
        nodes: Some("t1".into()),
        ..Default::default()
    };
    launched(n.rpc(v, Message::RequestTerminateJob(k)).await);
    match n.receive(v).await {
        Message::MessageEpilogComplete(e) => {
            assert_eq!((e.step_id.0.job_id, e.return_code), (job, 0));
        }
        m => panic!("expected epilog complete, got {m:?}"),
    }
    for r in n.cgroup_roots() {
        let d = r.join(format!("uid_{NOBODY}/job_{job}"));
        assert!(!d.exists(), "{} left behind", d.display());
    }
}

/// A step's processes die at the job's end even while the step runs
/// (terminate before the step ended).
#[tokio::test(flavor = "multi_thread")]
async fn a_running_steps_processes_die_with_the_job() {
    require_cgroups();
    let v = V::V22_05;
    let n = Node::new(TASK_CGROUP, Some(CGROUP_CONF), "stepkill").await;
    let _d = n.start(v);
    registered(&n, v).await;
    let auth = n.munged.auth();
    let mut srun = Srun::start(&n, v).await;
    let job = 62;
    let cmd = format!(
        "setsid sh -c 'trap \"\" TERM; sleep 1000' </dev/null >/dev/null 2>&1 & echo $! > {d}/bg.txt; \
         sleep 1000",
        d = n.dir.path().display()
    );
    let m = step_launch((job, 0), v, &auth, &srun, n.dir.path(), &cmd, 0);
    launched(n.rpc(v, Message::RequestLaunchTasks(m)).await);
    let bg = n.path("bg.txt");
    for _ in 0..100 {
        if std::fs::read_to_string(&bg).is_ok_and(|s| s.ends_with('\n')) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let bg: i32 = std::fs::read_to_string(&bg)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(alive(bg));
    let k = KillJobMsg {
        step_id: StepId::job(job),
        job_uid: NOBODY,
        job_gid: NOBODY,
        nodes: Some("t1".into()),
        ..Default::default()
    };
    launched(n.rpc(v, Message::RequestTerminateJob(k)).await);
    let mut epilog = false;
    let mut step_done = false;
    while !(epilog && step_done) {
        match n.receive(v).await {
            Message::MessageEpilogComplete(e) => {
                assert_eq!(e.step_id.0.job_id, job);
                epilog = true;
            }
            Message::RequestStepComplete(c) => {
                assert_eq!(c.step_id.job_id, job);
                step_done = true;
            }
            m => panic!("unexpected message to the controller: {m:?}"),
        }
    }
    let _ = srun.task_exit().await;
    assert!(!alive(bg), "the step's setsid child {bg} outlived the job");
    for r in n.cgroup_roots() {
        let d = r.join(format!("uid_{NOBODY}/job_{job}"));
        assert!(!d.exists(), "{} left behind", d.display());
    }
}

/// The same containment on cgroup v2 (this host's unified hierarchy, which
/// has no controllers here: tracking only, no limits).
#[tokio::test(flavor = "multi_thread")]
async fn srun_steps_are_tracked_in_cgroup_v2() {
    require_prerequisites();
    let unified = Path::new("/sys/fs/cgroup/unified");
    assert!(
        unified.join("cgroup.procs").exists(),
        "this test needs the cgroup2 hierarchy at {}",
        unified.display()
    );
    let v = V::V26_05;
    let conf = format!(
        "CgroupPlugin=cgroup/v2\nCgroupMountpoint={}\n",
        unified.display()
    );
    let n = Node::new("ProctrackType=proctrack/cgroup", Some(&conf), "stepv2").await;
    let top = unified.join(&n.cg_root);
    let _d = n.start(v);
    registered(&n, v).await;
    let auth = n.munged.auth();
    let mut srun = Srun::start(&n, v).await;
    let job = 63;
    let cmd = format!(
        "cat /proc/self/cgroup > {d}/cg.txt; \
         setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > {d}/bg.txt",
        d = n.dir.path().display()
    );
    let m = step_launch((job, 0), v, &auth, &srun, n.dir.path(), &cmd, 0);
    launched(n.rpc(v, Message::RequestLaunchTasks(m)).await);
    assert_eq!(srun.task_exit().await, 0);
    assert_eq!(step_complete(&n, v, job, 0).await, 0);
    let cg = std::fs::read_to_string(n.path("cg.txt")).unwrap();
    let want = format!("/{}/uid_{NOBODY}/job_{job}/step_0", n.cg_root);
    let line = cg
        .lines()
        .find(|l| l.starts_with("0::"))
        .unwrap_or_default();
    assert!(line.ends_with(&want), "{line}, want ...{want}");
    let bg: i32 = std::fs::read_to_string(n.path("bg.txt"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!alive(bg), "step 0's setsid child {bg} outlived the step");
    let k = KillJobMsg {
        step_id: StepId::job(job),
        job_uid: NOBODY,
        job_gid: NOBODY,
        nodes: Some("t1".into()),
        ..Default::default()
    };
    launched(n.rpc(v, Message::RequestTerminateJob(k)).await);
    match n.receive(v).await {
        Message::MessageEpilogComplete(e) => assert_eq!(e.step_id.0.job_id, job),
        m => panic!("expected epilog complete, got {m:?}"),
    }
    let job_dir = top.join(format!("uid_{NOBODY}/job_{job}"));
    let gone = !job_dir.exists();
    let _ = std::fs::remove_dir(top.join(format!("uid_{NOBODY}")));
    let _ = std::fs::remove_dir(&top);
    assert!(gone, "{} left behind", job_dir.display());
}
