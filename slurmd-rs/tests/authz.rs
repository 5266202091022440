//! Who may do what to an srun step on slurmd-rs, as stock slurmd decides
//! it: another user's KILL_STEPS_ONLY is refused, the groups come from the
//! credential or the group database (never the launch's own list), a
//! credential of an ended job is refused (also after a restart), a step
//! credential is used once (a forged copy does not use it up), a launch
//! of 100,000 task ids is refused, and a plain user's forward list is not
//! relayed while pings are answered. Needs root and munged.

mod common;

use common::*;
use slurm_rpc::{call, AuthCtx};
use slurm_testkit::munged::Munged;
use slurm_wire::auth::{Audience, AuthError, AuthPlugin, Identity as AuthId, AUTH_PLUGIN_MUNGE};
use slurm_wire::errno::{
    ESLURMD_CREDENTIAL_REPLAYED, ESLURMD_CREDENTIAL_REVOKED, ESLURMD_INVALID_JOB_CREDENTIAL,
    ESLURM_BAD_TASK_COUNT, ESLURM_USER_ID_MISSING,
};
use slurm_wire::header::Forward;
use slurm_wire::msg::common::{Empty, SignalTasksMsg};
use slurm_wire::msg::cred::{CpuArrayRep, Identity, JobCred, JobCredArg, VersionedCred};
use slurm_wire::msg::kill::KillJobMsg;
use slurm_wire::msg::launch::LaunchTasksRequestMsg;
use slurm_wire::pack::NO_VAL;
use slurm_wire::types::StepId;
use slurm_wire::{Message, ProtocolVersion as V};
use std::sync::Arc;
use std::time::Duration;

const KILL_STEPS_ONLY: u16 = 1 << 2;
const OTHER_USER: u32 = 4321;

/// Credentials as another uid, through the munge CLI.
struct AsUser {
    munged: Arc<Munged>,
    uid: u32,
}

impl AuthPlugin for AsUser {
    fn plugin_id(&self) -> u32 {
        AUTH_PLUGIN_MUNGE
    }
    fn create(&self, payload: &[u8], _: Audience) -> Result<String, AuthError> {
        Ok(self.munged.cred_as(self.uid, payload))
    }
    fn verify(&self, _: &str) -> Result<AuthId, AuthError> {
        Err(AuthError::Invalid("sign only".into()))
    }
}

fn as_user(n: &Node, uid: u32) -> AuthCtx {
    AuthCtx {
        plugin: Arc::new(AsUser {
            munged: Arc::new(n.munged.sibling()),
            uid,
        }),
        slurm_user_uid: 0,
        policy: Default::default(),
    }
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn rc_of(m: &Message) -> u32 {
    match m {
        Message::ResponseSlurmRc(r) => r.return_code,
        Message::ResponseSlurmRcMsg(r) => r.return_code,
        m => panic!("expected a return code, got {m:?}"),
    }
}

/// A listener that takes srun's connections and holds them.
async fn fake_srun_port() -> u16 {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let p = l.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = l.accept().await {
            held.push(s);
        }
    });
    p
}

/// An srun step of job `job_id` for user nobody, signed as the controller
/// signs it, with a credential made at `ctime` and no groups in it.
fn step_launch(
    n: &Node,
    v: V,
    (job_id, step_id): (u32, u32),
    ctime: i64,
    ids: Vec<Vec<u32>>,
    script: &str,
    ports: (u16, u16),
) -> Message {
    let step = StepId {
        sluid: 0,
        job_id,
        step_id,
        step_het_comp: NO_VAL,
    };
    let nodes = if ids.len() > 1 { "t[1-2]" } else { "t1" };
    let mut cred = JobCred {
        arg: JobCredArg {
            step_id: step,
            id: Identity {
                uid: NOBODY,
                gid: NOBODY,
                pw_name: Some("nobody".into()),
                ..Default::default()
            },
            job_hostlist: Some(nodes.into()),
            step_hostlist: Some(nodes.into()),
            job_nhosts: ids.len() as u32,
            cpu_array: vec![CpuArrayRep {
                cpus: 1,
                reps: ids.len() as u32,
            }],
            ctime,
            ..Default::default()
        },
        signature: None,
    };
    let auth = n.munged.auth();
    cred.signature = Some(auth.create(&cred.signed_bytes(v), Audience::Any).unwrap());
    Message::RequestLaunchTasks(LaunchTasksRequestMsg {
        step_id: step,
        // Root's group, which the launch (unsigned) must not give.
        gids: vec![0],
        het_job_offset: NO_VAL,
        ntasks: ids.iter().map(|t| t.len() as u32).sum(),
        cred: VersionedCred {
            cred_version: v.to_wire(),
            cred: Box::new(cred),
        },
        global_task_ids: ids,
        resp_port: vec![ports.0],
        io_port: vec![ports.1],
        argv: vec![
            Some("/bin/sh".into()),
            Some("-c".into()),
            Some(script.into()),
        ],
        env: vec![Some("PATH=/usr/bin:/bin".into())],
        cwd: Some(n.dir.path().display().to_string()),
        complete_nodelist: Some(nodes.into()),
        ..Default::default()
    })
}

fn signal(job_id: u32, flags: u16, sig: i32) -> Message {
    Message::RequestSignalTasks(SignalTasksMsg {
        step_id: StepId {
            sluid: 0,
            job_id,
            step_id: NO_VAL,
            step_het_comp: NO_VAL,
        },
        flags,
        signal: sig as u16,
    })
}

async fn wait_for(p: &std::path::Path) -> String {
    for _ in 0..200 {
        if let Ok(s) = std::fs::read_to_string(p) {
            if s.ends_with('\n') {
                return s;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{} never written", p.display());
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.contains(") Z "))
        .unwrap_or(false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_users_steps_only_signal_groups_and_a_revoked_credential() {
    require_prerequisites();
    let v = V::V24_11;
    let n = Node::new("NodeName=t2 NodeAddr=127.0.0.1 CPUs=1", None, "authz").await;
    let d = n.start(v);
    n.receive(v).await;
    let ports = (fake_srun_port().await, fake_srun_port().await);
    let (groups, pidf) = (n.path("groups.71"), n.path("pid.71"));
    let script = format!(
        "id -G > {}; echo $$ > {}; exec sleep 100",
        groups.display(),
        pidf.display()
    );
    let m = step_launch(&n, v, (71, 0), now() - 5, vec![vec![0]], &script, ports);
    // A forged copy (its signature not the controller's) is refused and
    // does not use the credential up.
    let mut forged = m.clone();
    if let Message::RequestLaunchTasks(l) = &mut forged {
        l.cred.cred.signature = Some("MUNGE:forged:".into());
    }
    assert_eq!(
        rc_of(&n.rpc(v, forged).await),
        ESLURMD_INVALID_JOB_CREDENTIAL as u32
    );
    assert_eq!(rc_of(&n.rpc(v, m.clone()).await), 0);
    // The same credential again, within its lifetime: replayed.
    assert_eq!(
        rc_of(&n.rpc(v, m).await),
        ESLURMD_CREDENTIAL_REPLAYED as u32
    );

    // Groups: nobody's from the group database, not the launch's root.
    let g = wait_for(&groups).await;
    assert!(
        !g.split_whitespace().any(|x| x == "0"),
        "the task got root's group: {g:?}"
    );
    assert!(
        g.split_whitespace().any(|x| x == NOBODY.to_string()),
        "{g:?}"
    );

    // Another user's scancel of the steps (the job has no batch script).
    let pid: i32 = wait_for(&pidf).await.trim().parse().unwrap();
    let other = as_user(&n, OTHER_USER);
    let (_, r) = call(
        &other,
        n.addr(),
        v,
        &signal(71, KILL_STEPS_ONLY, libc::SIGKILL),
        Audience::Any,
        T,
    )
    .await
    .unwrap();
    assert_eq!(rc_of(&r), ESLURM_USER_ID_MISSING as u32);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(alive(pid), "another user killed the step");

    // The job ends here: its steps go, then its credentials are void.
    let kill = KillJobMsg {
        step_id: StepId::job(71),
        job_state: 4,
        job_uid: NOBODY,
        job_gid: NOBODY,
        nodes: Some("t1".into()),
        time: now(),
        ..Default::default()
    };
    assert_eq!(
        rc_of(&n.rpc(v, Message::RequestTerminateJob(kill)).await),
        0
    );
    loop {
        match n.receive(v).await {
            Message::MessageEpilogComplete(e) => {
                assert_eq!(e.step_id.0.job_id, 71);
                break;
            }
            Message::RequestStepComplete(_) => {}
            m => panic!("expected epilog complete, got {m:?}"),
        }
    }
    assert!(!alive(pid));
    let again = || step_launch(&n, v, (71, 1), now() - 5, vec![vec![0]], "true", ports);
    assert_eq!(
        rc_of(&n.rpc(v, again()).await),
        ESLURMD_CREDENTIAL_REVOKED as u32
    );
    // A restart forgets nothing within the credential's lifetime.
    drop(d);
    let _d = n.start(v);
    n.receive(v).await;
    assert_eq!(
        rc_of(&n.rpc(v, again()).await),
        ESLURMD_CREDENTIAL_REVOKED as u32
    );

    // A credential past its lifetime (120 s by default).
    let stale = step_launch(&n, v, (73, 0), now() - 1000, vec![vec![0]], "true", ports);
    assert_eq!(
        rc_of(&n.rpc(v, stale).await),
        slurm_wire::errno::ESLURMD_CREDENTIAL_EXPIRED as u32
    );

    // 100,000 task ids over the job's two nodes: refused, nothing started.
    let ids = vec![(0..50_000).collect(), (50_000..100_000).collect()];
    let big = step_launch(&n, v, (72, 0), now(), ids, "true", ports);
    assert_eq!(rc_of(&n.rpc(v, big).await), ESLURM_BAD_TASK_COUNT as u32);
}

/// A plain user's pings with a million unknown names to forward to in a
/// chain: not relayed (answered at once, for this node alone), and root's
/// pings are answered meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_users_forward_flood_is_not_relayed_and_pings_are_answered() {
    require_prerequisites();
    let v = V::V24_11;
    let n = Node::new("", None, "authz_fwd").await;
    let _d = n.start(v);
    n.receive(v).await;
    let user = as_user(&n, OTHER_USER);
    let mut flood = Vec::new();
    for _ in 0..6 {
        let mut f =
            slurm_rpc::request_frame(&user, v, &Message::RequestPing(Empty {}), Audience::Any)
                .unwrap();
        f.header.forward = Forward {
            cnt: u16::MAX,
            nodelist: Some("ghost[0-999999]".into()),
            timeout: 60_000,
            tree_width: 1,
            net_cred: None,
            tree_depth: 0,
        };
        flood.push(f);
    }
    let addr = n.addr();
    let mut flooders = tokio::task::JoinSet::new();
    for f in flood {
        flooders.spawn(async move {
            let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
            slurm_rpc::write_frame(&mut s, &f).await.unwrap();
            let raw = tokio::time::timeout(T, slurm_rpc::read_frame(&mut s))
                .await
                .expect("the flood is answered")
                .unwrap();
            slurm_wire::Frame::decode(&raw).unwrap()
        });
    }
    for _ in 0..5 {
        let started = std::time::Instant::now();
        let r = n.rpc(v, Message::RequestPing(Empty {})).await;
        assert!(matches!(r, Message::ResponsePingSlurmd(_)), "{r:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }
    while let Some(f) = flooders.join_next().await {
        let f = f.unwrap();
        assert!(f.header.ret_list.is_empty(), "relayed for a plain user");
        assert_eq!(
            rc_of(&f.message().unwrap()),
            ESLURM_USER_ID_MISSING as u32,
            "a user's ping is refused"
        );
    }
}
