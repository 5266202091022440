//! Job steps launched by srun (REQUEST_LAUNCH_TASKS): what slurmstepd does
//! for them upstream, inside slurmd. The launch is checked and answered at
//! once; then each step runs on its own tokio task: start the tasks as the
//! user, connect back to srun's I/O port (io_init_msg, then framed
//! stdout/stderr, stdin from srun), send RESPONSE_LAUNCH_TASKS and
//! MESSAGE_TASK_EXIT to srun, and REQUEST_STEP_COMPLETE to the controller.
//!
//! * [`io`]: the I/O stream framing (pure).
//! * [`launch`]: checks and planning (pure).

pub mod io;
pub mod launch;

use crate::daemon::Daemon;
use launch::{StepPlan, TaskPlan};
use nix::sys::signal::Signal;
use slurm_rpc::call;
use slurm_wire::auth::Audience;
use slurm_wire::errno;
use slurm_wire::msg::common::ReturnCodeMsgWithText;
use slurm_wire::msg::launch::{LaunchTasksRequestMsg, LaunchTasksResponseMsg, TaskExitMsg};
use slurm_wire::msg::step::StepCompleteMsg;
use slurm_wire::types::{SlurmAddr, StepId};
use slurm_wire::{Message, ProtocolVersion};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

/// The steps running on this node: their tasks' process groups.
#[derive(Debug, Default)]
pub struct Registry {
    steps: Mutex<HashMap<(u32, u32), Vec<i32>>>,
    owners: Mutex<HashMap<(u32, u32), u32>>,
}

impl Registry {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(u32, u32), Vec<i32>>> {
        self.steps.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The uid a step runs as.
    pub fn owner(&self, job_id: u32, step_id: u32) -> Option<u32> {
        self.owners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(job_id, step_id))
            .copied()
    }

    fn set_owner(&self, s: StepId, uid: u32) {
        self.owners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert((s.job_id, s.step_id), uid);
    }

    fn add(&self, s: StepId, pid: i32) {
        self.lock()
            .entry((s.job_id, s.step_id))
            .or_default()
            .push(pid);
    }

    fn remove(&self, s: StepId) {
        self.lock().remove(&(s.job_id, s.step_id));
        self.owners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(s.job_id, s.step_id));
    }

    /// The steps running here (for registration).
    pub fn list(&self) -> Vec<StepId> {
        self.lock()
            .keys()
            .map(|&(job_id, step_id)| StepId {
                sluid: 0,
                job_id,
                step_id,
                step_het_comp: slurm_wire::pack::NO_VAL,
            })
            .collect()
    }

    /// Signals one step's tasks (each a process group); false if unknown.
    pub fn signal_step(&self, job_id: u32, step_id: u32, sig: Signal) -> bool {
        let pids = self.lock().get(&(job_id, step_id)).cloned();
        match pids {
            Some(p) => {
                for pid in p {
                    crate::track::signal_session(pid, sig);
                }
                true
            }
            None => false,
        }
    }

    /// Signals every step of a job; returns how many steps there were.
    pub fn signal_job(&self, job_id: u32, sig: Signal) -> usize {
        let all: Vec<Vec<i32>> = self
            .lock()
            .iter()
            .filter(|((j, _), _)| *j == job_id)
            .map(|(_, p)| p.clone())
            .collect();
        for p in &all {
            for &pid in p {
                crate::track::signal_session(pid, sig);
            }
        }
        all.len()
    }
}

fn rc_msg(rc: i32) -> Message {
    Message::ResponseSlurmRcMsg(ReturnCodeMsgWithText {
        return_code: rc as u32,
        err_msg: None,
    })
}

/// REQUEST_LAUNCH_TASKS: checks, then starts the step in the background.
pub fn launch_tasks(
    d: Arc<Daemon>,
    sender_uid: u32,
    v: ProtocolVersion,
    orig: SlurmAddr,
    peer: SocketAddr,
    m: LaunchTasksRequestMsg,
) -> Message {
    let s = &d.settings;
    let cred_v = ProtocolVersion::from_wire(m.cred.cred_version).unwrap_or(v);
    let trusted = crate::cred::Trusted {
        slurm_user_uid: s.slurm_user_uid,
    };
    if let Err(e) = launch::check_launch(
        d.auth.plugin.as_ref(),
        sender_uid,
        &m,
        cred_v,
        &s.node.name,
        trusted,
    ) {
        tracing::error!(
            "{}.{}: launch refused: {e}",
            m.step_id.job_id,
            m.step_id.step_id
        );
        return rc_msg(e.errno());
    }
    let node = launch::NodeInfo {
        node_name: s.node.name.clone(),
        conf_path: s.conf_path.clone(),
        rlimits_except: s
            .conf
            .raw("PropagateResourceLimitsExcept")
            .map(|x| x.split(',').map(|s| s.trim().to_string()).collect())
            .unwrap_or_default(),
    };
    let plan = match launch::plan_step(&m, &node, launch::srun_ip(&orig, peer)) {
        Ok(p) => p,
        Err(e) => {
            tracing::error!(
                "{}.{}: launch refused: {e}",
                m.step_id.job_id,
                m.step_id.step_id
            );
            return rc_msg(e.errno());
        }
    };
    tracing::info!(
        "launching step {}.{} ({} tasks here) for uid {}",
        plan.step.job_id,
        plan.step.step_id,
        plan.tasks.len(),
        plan.uid
    );
    tokio::spawn(async move { run_step(d, v, plan).await });
    rc_msg(0)
}

/// A started task: its pid and output pipes.
struct Running {
    gtid: u32,
    ltid: u32,
    child: Option<tokio::process::Child>,
    /// Raw wait status when it could not start.
    failed: Option<i32>,
}

fn spawn_task(p: &StepPlan, t: &TaskPlan) -> std::io::Result<tokio::process::Child> {
    let mut c = tokio::process::Command::new(&p.argv[0]);
    c.args(&p.argv[1..])
        .env_clear()
        .envs(t.env.iter())
        .stdin(match &p.ifname {
            Some(f) if f == "/dev/null" => Stdio::null(),
            _ => Stdio::piped(),
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(false);
    let groups = p.groups.clone();
    let (uid, gid) = (p.uid, p.gid);
    let rlimits = p.rlimits.clone();
    let umask = p.umask;
    let cwd = std::ffi::CString::new(p.cwd.as_bytes()).map_err(std::io::Error::other)?;
    let tmp = c"/tmp";
    // SAFETY: the closure runs in the forked child before exec and only
    // makes plain system calls on memory prepared before the fork.
    unsafe {
        c.pre_exec(move || {
            libc::setsid();
            if libc::setgroups(groups.len(), groups.as_ptr()) != 0
                || libc::setgid(gid) != 0
                || libc::setuid(uid) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            for &(res, v) in &rlimits {
                let mut r: libc::rlimit = std::mem::zeroed();
                if libc::getrlimit(res, &mut r) == 0 {
                    r.rlim_cur = v.min(r.rlim_max);
                    libc::setrlimit(res, &r);
                }
            }
            if let Some(m) = umask {
                libc::umask(m as libc::mode_t);
            }
            if libc::chdir(cwd.as_ptr()) != 0 {
                libc::chdir(tmp.as_ptr());
            }
            Ok(())
        });
    }
    c.spawn()
}

/// Copies one output pipe into I/O frames until end of file, then sends
/// the end-of-file frame.
async fn pump<R: tokio::io::AsyncRead + Unpin>(
    mut r: R,
    ty: u16,
    gtid: u32,
    ltid: u32,
    tx: mpsc::Sender<Vec<u8>>,
) {
    let mut buf = vec![0u8; io::MAX_MSG_LEN];
    let mut framer = io::LineFramer::default();
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                for chunk in framer.push(buf.get(..n).unwrap_or_default()) {
                    // If srun is gone, keep draining so the task never blocks.
                    let _ = tx.send(io::frame(ty, gtid, ltid, &chunk)).await;
                }
            }
        }
    }
    if let Some(rest) = framer.finish() {
        let _ = tx.send(io::frame(ty, gtid, ltid, &rest)).await;
    }
    let _ = tx.send(io::frame(ty, gtid, ltid, b"")).await;
}

/// Reads srun's side of the I/O stream: stdin for the tasks.
async fn stdin_from_srun(
    mut rd: tokio::net::tcp::OwnedReadHalf,
    mut stdins: HashMap<u32, tokio::process::ChildStdin>,
) {
    let mut hdr = [0u8; io::HDR_LEN];
    loop {
        if rd.read_exact(&mut hdr).await.is_err() {
            return;
        }
        let h = io::IoHdr::decode(&hdr);
        if h.length > io::MAX_IN_LEN {
            tracing::warn!("I/O frame of {} bytes from srun: closing", h.length);
            return;
        }
        let mut data = vec![0u8; h.length as usize];
        if rd.read_exact(&mut data).await.is_err() {
            return;
        }
        let targets: Vec<u32> = match h.r#type {
            io::ALLSTDIN => stdins.keys().copied().collect(),
            io::STDIN => vec![u32::from(h.gtaskid)],
            _ => continue,
        };
        for t in targets {
            if data.is_empty() {
                stdins.remove(&t); // end of file: close the task's stdin
            } else if let Some(w) = stdins.get_mut(&t) {
                if w.write_all(&data).await.is_err() {
                    stdins.remove(&t);
                }
            }
        }
    }
}

/// Runs this node's part of a step to its end.
async fn run_step(d: Arc<Daemon>, v: ProtocolVersion, plan: StepPlan) {
    let timeout = Duration::from_secs(u64::from(d.settings.conf.message_timeout.max(1)));
    let step = plan.step;
    d.steps.set_owner(step, plan.uid);
    // Start the tasks.
    let mut running: Vec<Running> = Vec::new();
    for t in &plan.tasks {
        match spawn_task(&plan, t) {
            Ok(child) => {
                if let Some(pid) = child.id() {
                    d.steps.add(step, pid as i32);
                }
                running.push(Running {
                    gtid: t.gtid,
                    ltid: t.ltid,
                    child: Some(child),
                    failed: None,
                });
            }
            Err(e) => {
                tracing::error!(
                    "{}.{}: task {} failed to start: {e}",
                    step.job_id,
                    step.step_id,
                    t.gtid
                );
                running.push(Running {
                    gtid: t.gtid,
                    ltid: t.ltid,
                    child: None,
                    // As a shell reports a command it cannot run.
                    failed: Some(127 << 8),
                });
            }
        }
    }
    // Tell srun the tasks started.
    let pids: Vec<u32> = running
        .iter()
        .map(|r| r.child.as_ref().and_then(|c| c.id()).unwrap_or(0))
        .collect();
    let any_failed = running.iter().any(|r| r.failed.is_some());
    let resp = Message::ResponseLaunchTasks(LaunchTasksResponseMsg {
        step_id: step,
        return_code: if any_failed {
            errno::ESLURMD_EXECVE_FAILED as u32
        } else {
            0
        },
        node_name: Some(d.settings.node.name.clone()),
        count_of_pids: pids.len() as u32,
        local_pids: pids,
        task_ids: running.iter().map(|r| r.gtid).collect(),
    });
    to_srun(&d, plan.resp_addr, v, plan.uid, &resp, timeout).await;

    // Connect the I/O stream.
    let (tx, mut rx) = mpsc::channel::<Vec<u8>>(256);
    let n = running.len() as u32;
    let io_conn = tokio::time::timeout(timeout, tokio::net::TcpStream::connect(plan.io_addr)).await;
    let writer = match io_conn {
        Ok(Ok(sock)) => {
            let (rd, mut wr) = sock.into_split();
            let init = io::init_msg(v.to_wire(), plan.nodeid, n, n, &plan.io_key);
            let mut stdins = HashMap::new();
            for r in running.iter_mut() {
                if let Some(si) = r.child.as_mut().and_then(|c| c.stdin.take()) {
                    stdins.insert(r.gtid, si);
                }
            }
            tokio::spawn(stdin_from_srun(rd, stdins));
            Some(tokio::spawn(async move {
                let mut ok = wr.write_all(&init).await.is_ok();
                while let Some(f) = rx.recv().await {
                    if ok && wr.write_all(&f).await.is_err() {
                        ok = false;
                    }
                }
                let _ = wr.shutdown().await;
            }))
        }
        other => {
            tracing::warn!(
                "{}.{}: cannot reach srun's I/O port {}: {other:?}",
                step.job_id,
                step.step_id,
                plan.io_addr
            );
            // Output is dropped, but tasks still run to their end.
            tokio::spawn(async move { while rx.recv().await.is_some() {} });
            None
        }
    };
    let mut pumps = Vec::new();
    for r in running.iter_mut() {
        let Some(c) = r.child.as_mut() else {
            // Nothing will come from a task that never started.
            let _ = tx.send(io::frame(io::STDOUT, r.gtid, r.ltid, b"")).await;
            let _ = tx.send(io::frame(io::STDERR, r.gtid, r.ltid, b"")).await;
            continue;
        };
        if let Some(o) = c.stdout.take() {
            pumps.push(tokio::spawn(pump(
                o,
                io::STDOUT,
                r.gtid,
                r.ltid,
                tx.clone(),
            )));
        }
        if let Some(e) = c.stderr.take() {
            pumps.push(tokio::spawn(pump(
                e,
                io::STDERR,
                r.gtid,
                r.ltid,
                tx.clone(),
            )));
        }
    }
    drop(tx);

    // Wait for every task.
    let mut statuses: Vec<(u32, i32)> = Vec::new();
    for r in running.iter_mut() {
        let st = match (r.child.as_mut(), r.failed) {
            (Some(c), _) => c.wait().await.map(|s| s.into_raw()).unwrap_or(0),
            (None, Some(f)) => f,
            (None, None) => 0,
        };
        statuses.push((r.gtid, st));
    }
    // Output first, so srun has it all before it hears the tasks ended.
    for p in pumps {
        let _ = p.await;
    }
    if let Some(w) = writer {
        let _ = w.await;
    }
    d.steps.remove(step);
    // One MESSAGE_TASK_EXIT per distinct status.
    let mut by_status: Vec<(i32, Vec<u32>)> = Vec::new();
    for &(g, st) in &statuses {
        match by_status.iter_mut().find(|(s, _)| *s == st) {
            Some((_, ids)) => ids.push(g),
            None => by_status.push((st, vec![g])),
        }
    }
    for (st, ids) in &by_status {
        let m = Message::MessageTaskExit(TaskExitMsg {
            return_code: *st as u32,
            num_tasks: ids.len() as u32,
            task_id_list: ids.clone(),
            step_id: step,
        });
        to_srun(&d, plan.resp_addr, v, plan.uid, &m, timeout).await;
    }
    let step_rc = statuses.iter().map(|s| s.1 as u32).max().unwrap_or(0);
    tracing::info!(
        "step {}.{} done here, rc {step_rc:#x}",
        step.job_id,
        step.step_id
    );
    let done = Message::RequestStepComplete(StepCompleteMsg {
        step_id: step,
        range_first: plan.nodeid,
        range_last: plan.nodeid,
        step_rc,
        ..Default::default()
    });
    for attempt in 0..5u64 {
        match d.ctld.rpc(&done).await {
            Ok(_) => return,
            Err(e) => {
                tracing::info!(
                    "{}.{}: step complete failed ({e}), retrying",
                    step.job_id,
                    step.step_id
                );
                tokio::time::sleep(Duration::from_secs(1 + attempt * 2)).await;
            }
        }
    }
}

/// One RPC to srun's message server, in the step's protocol version, with
/// a credential only srun's user can decode.
async fn to_srun(
    d: &Daemon,
    addr: SocketAddr,
    v: ProtocolVersion,
    uid: u32,
    msg: &Message,
    timeout: Duration,
) {
    let ty = msg.msg_type();
    if let Err(e) = call(&d.auth, addr, v, msg, Audience::Uid(uid), timeout).await {
        tracing::warn!("{ty} to srun at {addr}: {e}");
    }
}
