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
pub mod registry;

pub use registry::{Contained, Registry};

use crate::cgroup::{StepCg, StepName};
use crate::shared::Daemon;
use launch::{StepPlan, TaskPlan};
use nix::sys::signal::Signal;
use slurm_rpc::call;
use slurm_wire::auth::Audience;
use slurm_wire::errno;
use slurm_wire::msg::common::ReturnCodeMsgWithText;
use slurm_wire::msg::launch::{LaunchTasksRequestMsg, LaunchTasksResponseMsg, TaskExitMsg};
use slurm_wire::msg::step::StepCompleteMsg;
use slurm_wire::types::SlurmAddr;
use slurm_wire::{Message, ProtocolVersion};
use std::collections::HashMap;
use std::ffi::CString;
use std::net::SocketAddr;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

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
    // Verified: now it counts as used (stock's cred_cache_valid).
    if let Err(e) = d.seen.admit(&m.cred.cred.arg, crate::shared::now()) {
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
        constrain_devices: s.cgroups.is_some() && s.cgroup_conf.constrain_devices,
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
    // The step's cgroup below the job's (made here when no batch step
    // made it), with the credential's limits, before any task exists.
    let contained = match &s.cgroups {
        None => None,
        Some(h) => {
            let cg = StepCg {
                uid: plan.uid,
                job_id: plan.step.job_id,
                step: StepName::from_step_id(plan.step.step_id),
            };
            let (job_l, step_l) = d.limits(&m.cred.cred.arg);
            if let Err(e) = h.create_step(&cg, &job_l, &step_l) {
                tracing::error!(
                    "{}.{}: cannot create the step's cgroup: {e}",
                    plan.step.job_id,
                    plan.step.step_id
                );
                let _ = h.remove_step(&cg);
                return rc_msg(e.errno());
            }
            Some(Contained {
                hier: h.clone(),
                cg,
            })
        }
    };
    tracing::info!(
        "launching step {}.{} ({} tasks here) for uid {}",
        plan.step.job_id,
        plan.step.step_id,
        plan.tasks.len(),
        plan.uid
    );
    tokio::spawn(async move { run_step(d, v, plan, contained).await });
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

/// The step's `cgroup.procs` files, for a task to join before it drops
/// root.
fn procs_files(c: Option<&Contained>) -> std::io::Result<Vec<CString>> {
    use std::os::unix::ffi::OsStrExt;
    c.map(|c| c.hier.procs_files(&c.cg))
        .unwrap_or_default()
        .iter()
        .map(|p| CString::new(p.as_os_str().as_bytes()).map_err(std::io::Error::other))
        .collect()
}

fn spawn_task(
    p: &StepPlan,
    t: &TaskPlan,
    procs: &[CString],
) -> std::io::Result<tokio::process::Child> {
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
    let procs = procs.to_vec();
    // SAFETY: the closure runs in the forked child before exec and only
    // makes plain system calls on memory prepared before the fork.
    unsafe {
        c.pre_exec(move || {
            // Into the step's cgroups while still root ("0" = the writer),
            // so everything the task forks is the step's from the start.
            for f in &procs {
                let fd = libc::open(f.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let ok = libc::write(fd, b"0".as_ptr().cast(), 1) == 1;
                let err = std::io::Error::last_os_error();
                libc::close(fd);
                if !ok {
                    return Err(err);
                }
            }
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
async fn run_step(
    d: Arc<Daemon>,
    v: ProtocolVersion,
    plan: StepPlan,
    contained: Option<Contained>,
) {
    let timeout = Duration::from_secs(u64::from(d.settings.conf.message_timeout.max(1)));
    let step = plan.step;
    d.steps.set_owner(step, plan.uid);
    if let Some(c) = &contained {
        d.steps.set_cgroup(step, c.clone());
    }
    // A task that cannot join the step's cgroup does not start.
    let procs = procs_files(contained.as_ref());
    // Start the tasks.
    let mut running: Vec<Running> = Vec::new();
    for t in &plan.tasks {
        let child = procs
            .as_ref()
            .map_err(|e| std::io::Error::other(e.to_string()));
        match child.and_then(|procs| spawn_task(&plan, t, procs)) {
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
    // Kept for the end: a reaped child no longer has its id.
    let task_pids: Vec<i32> = pids.iter().filter(|&&p| p > 0).map(|&p| p as i32).collect();
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
    // The step is over when its tasks are: nothing it forked outlives it
    // (which also closes the output pipes such leftovers hold).
    let oom = match contained {
        Some(c) => tokio::task::spawn_blocking(move || c.end())
            .await
            .unwrap_or(0),
        None => {
            for &pid in &task_pids {
                crate::track::signal_session(pid, Signal::SIGKILL);
            }
            0
        }
    };
    if oom > 0 {
        tracing::error!(
            "Detected {oom} oom_kill event{} in StepId={}.{}. Some of the step tasks have been OOM Killed.",
            if oom == 1 { "" } else { "s" },
            step.job_id,
            step.step_id
        );
        // As stock: every task of an OOM-killed step exits SIG_OOM, and so
        // does the step (slurmctld and srun report OUT_OF_MEMORY).
        for s in statuses.iter_mut() {
            s.1 = crate::stepd::SIG_OOM as i32;
        }
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
