//! The tokio shell: registration, the RPC handler, and each batch job's
//! life (prolog, script, completion, termination, epilog).

use crate::cgroup::{Limits, MemPolicy, StepCg};
use crate::cred::{check_batch_cred, CredError};
use crate::ctld::CtldError;
use crate::launch::{NodeCtx, Owner};
use crate::notice::{self, Cause};
use crate::scripts::{self, Context, ScriptJob};
use crate::shared::{now, Daemon, JobState};
use crate::stepd::{self, JobRecord, StartError, StateDir};
use crate::{hw, track};
use nix::sys::signal::Signal;
use slurm_rpc::{rc_message, Incoming};
use slurm_wire::errno;
use slurm_wire::msg::common::{PingSlurmdRespMsg, SignalTasksMsg};
use slurm_wire::msg::cred::JobCredArg;
use slurm_wire::msg::kill::{EpilogCompleteMsg, KillJobMsg};
use slurm_wire::msg::launch::{BatchJobLaunchMsg, LaunchTasksRequestMsg};
use slurm_wire::msg::node::SlurmNodeRegistrationStatusMsg;
use slurm_wire::msg::step::JobIdOrStepId;
use slurm_wire::types::StepId;
use slurm_wire::{Message, MsgType, ProtocolVersion};
use std::sync::Arc;
use std::time::Duration;

// REQUEST_SIGNAL_TASKS flags (slurm.h KILL_*).
const KILL_JOB_BATCH: u16 = 1 << 0;
const KILL_STEPS_ONLY: u16 = 1 << 2;
const KILL_FULL_JOB: u16 = 1 << 3;

/// `SLURMD_REG_FLAG_RESP`: ask for the TRES list in the reply.
const REG_FLAG_RESP: u16 = 0x0002;

/// The numeric value of a Slurm errno as it travels in a u32 field.
fn rc32(rc: i32) -> u32 {
    rc as u32
}

/// Why a registration did not go through (the daemon retries).
#[derive(Debug, thiserror::Error)]
pub enum RegisterError {
    #[error(transparent)]
    Ctld(#[from] CtldError),
    /// The controller's return code.
    #[error("controller answered {}", errno::name(*.0).unwrap_or("error"))]
    Refused(i32),
    #[error("unexpected reply {0}")]
    UnexpectedReply(MsgType),
}

impl Daemon {
    /// The registration message, for the controller's version `v`.
    pub fn registration(&self, status: i32, v: ProtocolVersion) -> SlurmNodeRegistrationStatusMsg {
        let s = &self.settings;
        let n = &s.node;
        let uname = nix::sys::utsname::uname().ok();
        let field = |f: fn(&nix::sys::utsname::UtsName) -> &std::ffi::OsStr| {
            uname
                .as_ref()
                .map(|u| f(u).to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let steps: Vec<StepId> = self
            .jobs()
            .iter()
            .filter(|(_, j)| j.stepd.is_some() && !j.done)
            .map(|(id, _)| StepId {
                sluid: 0,
                job_id: *id,
                step_id: StepId::BATCH_SCRIPT,
                step_het_comp: slurm_wire::pack::NO_VAL,
            })
            .collect();
        let gres = crate::gres::pack(&s.gres, v);
        SlurmNodeRegistrationStatusMsg {
            timestamp: now(),
            slurmd_start_time: s.start_time,
            status: rc32(status),
            hostname: Some(n.hostname.clone()),
            instance_id: Some(String::new()),
            instance_type: Some(String::new()),
            node_name: Some(n.name.clone()),
            arch: Some(field(|u| u.machine())),
            cpu_spec_list: n.cpu_spec_list.clone(),
            os: Some(format!(
                "{} {} {}",
                field(|u| u.sysname()),
                field(|u| u.release()),
                field(|u| u.version())
            )),
            cpus: n.hw.cpus,
            boards: n.hw.boards,
            sockets: n.hw.sockets,
            cores: n.hw.cores_per_socket,
            threads: n.hw.threads_per_core,
            real_memory: n.hw.real_memory,
            tmp_disk: n.tmp_disk,
            up_time: hw::uptime().min(u32::MAX as u64) as u32,
            hash_val: s.conf.hash_val,
            cpu_load: hw::cpu_load(),
            free_mem: hw::free_mem(),
            step_id: steps,
            flags: REG_FLAG_RESP,
            gres_info: gres,
            version: Some(format!("{}.0", v.release())),
            ..Default::default()
        }
    }

    /// Sends one registration, built for each version the probe tries.
    pub async fn register(&self, status: i32) -> Result<(), RegisterError> {
        let (reply, _) = self
            .ctld
            .rpc_with(|v| Message::MessageNodeRegistrationStatus(self.registration(status, v)))
            .await?;
        check_reg_reply(&reply)
    }

    /// Registers until the controller answers (1 s backoff doubling to 128 s).
    pub async fn register_loop(self: Arc<Self>, status: i32) {
        let mut delay = 1u64;
        loop {
            match self.register(status).await {
                Ok(()) => {
                    tracing::info!(
                        "registered with the controller (protocol {})",
                        self.ctld
                            .version()
                            .map(|v| v.to_string())
                            .unwrap_or_default()
                    );
                    return;
                }
                Err(e) => tracing::warn!("unable to register (retry in {delay}s): {e}"),
            }
            tokio::time::sleep(Duration::from_secs(delay)).await;
            delay = (delay * 2).min(128);
        }
    }

    fn ping_reply(&self) -> Message {
        Message::ResponsePingSlurmd(PingSlurmdRespMsg {
            cpu_load: hw::cpu_load(),
            free_mem: hw::free_mem(),
            node_name: Some(self.node_name().to_string()),
        })
    }

    /// One RPC; the reply goes back in the requester's version.
    ///
    /// Who may send what (stock slurmd's `_rpc_*` rules; "trusted" is root
    /// or SlurmUser), each checked here or in the code named:
    ///
    /// | RPC | who | refusal |
    /// |---|---|---|
    /// | REQUEST_PING | trusted | ESLURM_USER_ID_MISSING |
    /// | REQUEST_NODE_REGISTRATION_STATUS | trusted | ESLURM_USER_ID_MISSING |
    /// | REQUEST_HEALTH_CHECK | trusted | ESLURM_USER_ID_MISSING |
    /// | REQUEST_RECONFIGURE | trusted | ESLURM_USER_ID_MISSING |
    /// | REQUEST_SHUTDOWN | trusted | ESLURM_USER_ID_MISSING |
    /// | REQUEST_BATCH_JOB_LAUNCH | trusted (`check_batch_cred`); the credential's job not ended here | ESLURM_USER_ID_MISSING, ESLURMD_CREDENTIAL_REVOKED |
    /// | REQUEST_LAUNCH_TASKS | the credential's user or trusted, with a credential signed by trusted (`step::launch::check_launch`), not revoked nor expired, its counts and lists within the allocation (`admit_launch`), used once (`SeenCredentials`) | ESLURM_USER_ID_MISSING, ESLURMD_INVALID_JOB_CREDENTIAL, ESLURMD_CREDENTIAL_REVOKED, ESLURMD_CREDENTIAL_EXPIRED, ESLURMD_CREDENTIAL_REPLAYED, ESLURM_BAD_TASK_COUNT, E2BIG |
    /// | REQUEST_TERMINATE_JOB, REQUEST_KILL_TIMELIMIT, REQUEST_KILL_PREEMPTED, REQUEST_ABORT_JOB | trusted | ESLURM_USER_ID_MISSING |
    /// | REQUEST_SIGNAL_TASKS, REQUEST_TERMINATE_TASKS (every flag) | the job's owner (batch script or any step) or trusted; a single step also its own owner (`signal_tasks`) | ESLURM_INVALID_JOB_ID (unknown job), ESLURM_USER_ID_MISSING |
    /// | any other | nobody | SLURM_UNEXPECTED_MSG_ERROR |
    /// | a forward list (any RPC) | trusted; anyone else's request is answered for this node alone (`slurm_rpc::forward::may_relay`) | not relayed |
    pub async fn handle(self: Arc<Self>, req: Incoming) -> Option<Message> {
        let uid = req.identity.uid;
        let v = req.version();
        let ok = self.trusted().allows(uid);
        let deny = |what: &str| {
            tracing::error!("security violation: {what} RPC from uid {uid}");
            Some(rc_message(errno::ESLURM_USER_ID_MISSING))
        };
        let mtype = req.msg.msg_type();
        match req.msg {
            Message::RequestPing(_) if ok => Some(self.ping_reply()),
            Message::RequestPing(_) => deny("ping"),
            Message::RequestNodeRegistrationStatus(_) if ok => {
                let me = self.clone();
                tokio::spawn(async move { me.register_loop(0).await });
                Some(self.ping_reply())
            }
            Message::RequestNodeRegistrationStatus(_) => deny("registration request"),
            Message::RequestHealthCheck(_) if ok => {
                if let Some(p) = self.settings.conf.health_check_program.clone() {
                    tokio::spawn(async move {
                        let st = tokio::process::Command::new(&p)
                            .env_clear()
                            .stdin(std::process::Stdio::null())
                            .status()
                            .await;
                        tracing::debug!("health check {p}: {st:?}");
                    });
                }
                Some(rc_message(0))
            }
            Message::RequestHealthCheck(_) => deny("health check"),
            Message::RequestReconfigure(_) if ok => {
                // Configuration is read at start; re-registering tells the
                // controller our (unchanged) state, as stock does after a
                // reconfigure.
                let me = self.clone();
                tokio::spawn(async move { me.register_loop(0).await });
                Some(rc_message(0))
            }
            Message::RequestReconfigure(_) => deny("reconfigure"),
            Message::RequestBatchJobLaunch(m) => Some(self.batch_launch(uid, v, m)),
            Message::RequestLaunchTasks(mut m) => {
                if let Err(e) = self.admit_launch(&mut m) {
                    tracing::error!(
                        "{}.{}: launch from uid {uid} refused: {e}",
                        m.step_id.job_id,
                        m.step_id.step_id
                    );
                    return Some(Message::ResponseSlurmRcMsg(
                        slurm_wire::msg::common::ReturnCodeMsgWithText {
                            return_code: rc32(e.errno()),
                            err_msg: None,
                        },
                    ));
                }
                Some(crate::step::launch_tasks(
                    self.clone(),
                    uid,
                    v,
                    req.frame.header.orig_addr,
                    req.peer,
                    m,
                ))
            }
            Message::RequestTerminateJob(k)
            | Message::RequestKillTimelimit(k)
            | Message::RequestKillPreempted(k)
            | Message::RequestAbortJob(k) => {
                if !ok {
                    return deny("terminate job");
                }
                // Every credential of the job so far is void here (stock's
                // cred_revoke), before we answer and before anything of it
                // is stopped.
                let t = if k.time > 0 { k.time } else { now() };
                self.revoked.revoke(k.step_id.job_id, t);
                let cause = match mtype {
                    MsgType::RequestKillTimelimit => Some(Cause::TimeLimit),
                    MsgType::RequestKillPreempted => Some(Cause::Preempted),
                    MsgType::RequestTerminateJob => Some(Cause::of_termination(k.job_state)),
                    _ => None,
                };
                let me = self.clone();
                tokio::spawn(async move { me.terminate(k, cause).await });
                Some(rc_message(0))
            }
            Message::RequestSignalTasks(s) | Message::RequestTerminateTasks(s) => {
                Some(rc_message(self.signal_tasks(uid, &s)))
            }
            Message::RequestShutdown(_) if ok => {
                tracing::info!("shutdown requested by uid {uid}");
                tokio::spawn(async {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    std::process::exit(0);
                });
                Some(rc_message(0))
            }
            other => {
                tracing::info!("{} not handled here", other.msg_type());
                Some(rc_message(errno::SLURM_UNEXPECTED_MSG_ERROR))
            }
        }
    }

    /// Validates a launch, records the job and starts it in the background.
    fn batch_launch(
        self: Arc<Self>,
        uid: u32,
        v: ProtocolVersion,
        m: BatchJobLaunchMsg,
    ) -> Message {
        let cred = &m.cred.cred;
        let cred_v = ProtocolVersion::from_wire(m.cred.cred_version).unwrap_or(v);
        let job_id = if v >= ProtocolVersion::V25_11 {
            cred.arg.step_id.job_id
        } else {
            m.job_id
        };
        let msg_job = (v < ProtocolVersion::V25_11).then_some(m.job_id);
        if let Err(e) = check_batch_cred(
            self.auth.plugin.as_ref(),
            uid,
            cred,
            cred_v,
            msg_job,
            self.node_name(),
            self.trusted(),
        ) {
            tracing::error!("job {job_id}: launch refused: {e}");
            return rc_message(e.errno());
        }
        if let Err(e) = self.revoked.check(&cred.arg) {
            tracing::error!("job {job_id} already killed, not launching it: {e}");
            return rc_message(e.errno());
        }
        {
            let mut jobs = self.jobs();
            if jobs.get(&job_id).is_some_and(|j| !j.killed) {
                tracing::error!("job {job_id} already running, not launching a second copy");
                return rc_message(errno::ESLURM_DUPLICATE_JOB_ID);
            }
            let a = &cred.arg;
            jobs.insert(
                job_id,
                JobState {
                    stepd: None,
                    done: false,
                    killed: false,
                    uid: a.id.uid,
                    gid: a.id.gid,
                    user_name: user_name(a.id.pw_name.as_deref(), a.id.uid),
                    node_list: m.nodes.clone().unwrap_or_default(),
                    partition: m.partition.clone(),
                    work_dir: m.work_dir.clone(),
                },
            );
        }
        tokio::spawn(async move { self.run_batch(job_id, v, m).await });
        rc_message(0)
    }

    fn script_job(&self, job_id: u32, j: &JobState) -> ScriptJob {
        let s = &self.settings;
        ScriptJob {
            job_id,
            uid: j.uid,
            gid: j.gid,
            user_name: j.user_name.clone(),
            node_list: j.node_list.clone(),
            partition: j.partition.clone(),
            work_dir: j.work_dir.clone(),
            cluster_name: s.conf.cluster_name.clone().unwrap_or_default(),
            node_name: s.node.name.clone(),
            conf_path: s.conf_path.clone(),
            ..Default::default()
        }
    }

    /// The job's and the step's cgroup limits from its credential.
    pub fn limits(&self, a: &JobCredArg) -> (Limits, Limits) {
        let s = &self.settings;
        // Stock constrains only through task/cgroup; without it cgroups
        // just track the job.
        let task_cgroup = s
            .conf
            .task_plugin
            .as_deref()
            .is_some_and(|t| t.split(',').any(|p| p.trim() == "task/cgroup"));
        if !task_cgroup {
            return (Limits::default(), Limits::default());
        }
        // This node's memory, as stock's slurm_cred_get_mem reads it.
        let (job_mem, step_mem) = crate::step::launch::cred_mem(a, &s.node.name);
        let total = s
            .conf
            .node(&s.node.name)
            .map(|n| n.real_memory)
            .filter(|m| *m > 0)
            .unwrap_or(s.node.hw.real_memory);
        let pol = MemPolicy::from_conf(&s.cgroup_conf, total);
        let cores = crate::alloc::cpus_for(a, &s.node, s.cgroup_conf.constrain_cores);
        let deny = if s.cgroup_conf.constrain_devices {
            crate::alloc::denied_devices(&s.gres_files, a, &s.node.name)
        } else {
            Vec::new()
        };
        (
            Limits {
                mem: pol.limits(job_mem),
                cpus: cores.as_ref().map(|c| c.0.clone()),
                deny_devices: deny.clone(),
            },
            Limits {
                mem: pol.limits(step_mem),
                cpus: cores.map(|c| c.1),
                deny_devices: deny,
            },
        )
    }

    /// Prolog, then the job's cgroup, its state directory and its
    /// supervisor, which runs the script and reports the completion.
    async fn run_batch(self: Arc<Self>, job_id: u32, v: ProtocolVersion, m: BatchJobLaunchMsg) {
        let s = &self.settings;
        let Some(state) = self.jobs().get(&job_id).cloned() else {
            return;
        };
        let prolog_timeout = Duration::from_secs(3600);
        if !s.conf.prolog.is_empty() {
            let sj = self.script_job(job_id, &state);
            if let Err(st) =
                scripts::run_all(&s.conf.prolog, &sj, Context::Prolog, prolog_timeout).await
            {
                tracing::error!("[job {job_id}] prolog failed status={st}");
                // As stock: the job goes back to the queue (or is killed
                // when it cannot be requeued), then a registration with a
                // failure status drains the node. A controller that takes
                // no requeue request gets the failure as the batch
                // completion instead.
                let handled = self.ctld.launch_failed(job_id).await;
                if handled == crate::ctld::LaunchFailed::NotHandled {
                    self.complete_batch(job_id, state.uid, 0, errno::ESLURMD_PROLOG_FAILED)
                        .await;
                }
                let me = self.clone();
                tokio::spawn(async move { me.register_loop(errno::ESLURMD_PROLOG_FAILED).await });
                return;
            }
        }
        if self.jobs().get(&job_id).is_none_or(|j| j.killed) {
            tracing::info!("job {job_id} killed before it started");
            return;
        }
        let a = &m.cred.cred.arg;
        let groups = if a.id.gids.is_empty() {
            lookup_groups(&state.user_name, state.gid)
        } else {
            a.id.gids.clone()
        };
        let cg = StepCg::batch(state.uid, job_id);
        if let Some(h) = &s.cgroups {
            let (job_l, step_l) = self.limits(a);
            if let Some(mem) = job_l.mem {
                tracing::info!(
                    "[job {job_id}] memory limit {} MB (alloc {} MB)",
                    mem.limit >> 20,
                    a.job_mem_alloc.first().map_or(0, |r| r.mem_alloc)
                );
            }
            if let Err(e) = h.create_step(&cg, &job_l, &step_l) {
                tracing::error!("[job {job_id}] cannot create its cgroup: {e}");
                let _ = h.remove_job(&cg);
                self.complete_batch(job_id, state.uid, 0, e.errno()).await;
                return;
            }
        }
        let rec = JobRecord {
            job_id,
            owner: Owner {
                uid: state.uid,
                gid: state.gid,
                user_name: state.user_name.clone(),
                groups,
            },
            node_list: state.node_list.clone(),
            partition: state.partition.clone(),
            work_dir: state.work_dir.clone(),
            node: NodeCtx {
                node_name: s.node.name.clone(),
                hostname: s.node.hostname.clone(),
                cluster_name: s.conf.cluster_name.clone().unwrap_or_default(),
                conf_path: s.conf_path.clone(),
                spool_dir: s.spool_dir.clone(),
                job_file_append: s.conf.raw("JobFileAppend").is_some_and(|x| x.trim() == "1"),
                rlimits_except: s
                    .conf
                    .raw("PropagateResourceLimitsExcept")
                    .map(|x| x.split(',').map(|s| s.trim().to_string()).collect())
                    .unwrap_or_default(),
            },
            protocol: v,
            // The environment follows the release we pose as to the controller.
            env_protocol: self.ctld.version().unwrap_or(v).max(v),
            ctld_protocol: self.ctld.version(),
            slurm_user_uid: s.slurm_user_uid,
            cgroup_root: s.cgroups.as_ref().map(|_| s.cgroup_root.clone()),
            log_file: s.log_file.clone(),
            log_level: s.log_level.clone(),
            extra_env: crate::alloc::gpu_env(
                &crate::alloc::allocated_gres(a, "gpu", &s.node.name),
                s.cgroups.is_some() && s.cgroup_conf.constrain_devices,
            )
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        };
        let sd = StateDir::new(&s.spool_dir, job_id);
        let launch = slurm_wire::pack::encode_to_vec(&m, v);
        let child = sd
            .create(&rec, &launch)
            .map_err(StartError::from)
            .and_then(|()| stepd::spawn_supervisor(&sd).map_err(StartError::from));
        let mut child = match child {
            Ok(c) => c,
            Err(e) => {
                tracing::error!("[job {job_id}] cannot start its supervisor: {e}");
                sd.remove();
                if let Some(h) = &s.cgroups {
                    let _ = h.remove_job(&cg);
                }
                self.complete_batch(job_id, state.uid, 0, e.errno()).await;
                return;
            }
        };
        let pid = child.id();
        let _ = sd.set_stepd_pid(pid);
        tracing::info!("[job {job_id}] supervisor started (pid {pid})");
        let killed = match self.jobs().get_mut(&job_id) {
            Some(j) => {
                j.stepd = Some(pid as i32);
                j.killed
            }
            None => true,
        };
        if killed {
            // A termination raced the start: it may have found nothing yet.
            let me = self.clone();
            let uid = state.uid;
            tokio::spawn(async move { me.kill_job(job_id, uid).await });
        }
        // Reap it; a restarted daemon watches adopted ones through /proc.
        let _ = tokio::task::spawn_blocking(move || child.wait()).await;
        self.supervisor_ended(job_id);
    }

    fn supervisor_ended(&self, job_id: u32) {
        tracing::debug!("[job {job_id}] supervisor ended");
        if let Some(j) = self.jobs().get_mut(&job_id) {
            j.done = true;
        }
    }

    /// Finds the jobs a previous instance left running (or finished while
    /// no daemon was up) through their state directories, and cgroups no
    /// job owns any more.
    pub fn adopt(self: &Arc<Self>) {
        let s = &self.settings;
        for (job_id, sd) in StateDir::list(&s.spool_dir) {
            let rec = match sd.record() {
                Ok(r) => r,
                Err(e) => {
                    tracing::error!("[job {job_id}] unreadable state, removed: {e}");
                    sd.remove();
                    continue;
                }
            };
            let alive = sd.supervisor_alive();
            self.jobs().insert(
                job_id,
                JobState {
                    stepd: sd.stepd_pid(),
                    done: !alive,
                    killed: sd.killed(),
                    uid: rec.owner.uid,
                    gid: rec.owner.gid,
                    user_name: rec.owner.user_name.clone(),
                    node_list: rec.node_list.clone(),
                    partition: rec.partition.clone(),
                    work_dir: rec.work_dir.clone(),
                },
            );
            if alive {
                tracing::info!(
                    "[job {job_id}] re-adopted: supervisor pid {} still running",
                    sd.stepd_pid().unwrap_or(0)
                );
                let me = self.clone();
                tokio::spawn(async move {
                    while sd.supervisor_alive() {
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                    me.supervisor_ended(job_id);
                });
            } else if !sd.reported() {
                // The supervisor died before its report: make it.
                let (job_rc, slurm_rc) = sd.result().unwrap_or((libc::SIGKILL as u32, 0));
                tracing::warn!(
                    "[job {job_id}] supervisor gone before reporting; reporting job_rc {job_rc:#x}"
                );
                let cg = rec.step_cg();
                if let Some(h) = &s.cgroups {
                    h.signal(&cg, true, libc::SIGKILL);
                }
                let me = self.clone();
                tokio::spawn(async move {
                    me.complete_batch(job_id, rec.owner.uid, job_rc, slurm_rc)
                        .await;
                    let _ = sd.set_reported();
                });
            } else {
                tracing::info!("[job {job_id}] finished while the daemon was down");
            }
        }
        // Empty cgroups of jobs nobody knows (left by a crash) go.
        if let Some(h) = &s.cgroups {
            let known: Vec<u32> = self.jobs().keys().copied().collect();
            for (uid, job_id) in h.jobs() {
                let cg = StepCg::batch(uid, job_id);
                if !known.contains(&job_id) && h.job_pids(&cg).is_empty() {
                    let _ = h.remove_job(&cg);
                }
            }
        }
    }

    async fn complete_batch(&self, job_id: u32, uid: u32, job_rc: u32, slurm_rc: i32) {
        self.ctld
            .complete_batch(self.node_name(), job_id, uid, job_rc, slurm_rc)
            .await
    }

    /// Processes of the job: its cgroup's, or the script's session's.
    fn job_pids(&self, job_id: u32, uid: u32, sd: &StateDir) -> Vec<i32> {
        match &self.settings.cgroups {
            Some(h) => h.job_pids(&StepCg::batch(uid, job_id)),
            None => sd
                .script_pid()
                .map(track::session_members)
                .unwrap_or_default(),
        }
    }

    fn signal_job(&self, job_id: u32, uid: u32, sd: &StateDir, sig: Signal) -> usize {
        match &self.settings.cgroups {
            Some(h) => h.signal(&StepCg::batch(uid, job_id), true, sig as i32),
            None => sd
                .script_pid()
                .map(|p| track::signal_session(p, sig))
                .unwrap_or(0),
        }
    }

    /// SIGCONT+SIGTERM, then SIGKILL after KillWait until the job's
    /// processes and its supervisor are gone (bounded).
    async fn kill_job(&self, job_id: u32, uid: u32) {
        let sd = StateDir::new(&self.settings.spool_dir, job_id);
        let _ = sd.set_killed();
        self.signal_job(job_id, uid, &sd, Signal::SIGCONT);
        self.signal_job(job_id, uid, &sd, Signal::SIGTERM);
        let wait = Duration::from_secs(u64::from(self.settings.conf.kill_wait.max(1)));
        let deadline = tokio::time::Instant::now() + wait;
        while !self.job_pids(job_id, uid, &sd).is_empty() && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            let left = self.job_pids(job_id, uid, &sd);
            if left.is_empty() && !sd.supervisor_alive() {
                return;
            }
            if tokio::time::Instant::now() >= deadline {
                tracing::error!("[job {job_id}] still running after SIGKILL: {left:?}");
                return;
            }
            if !left.is_empty() {
                tracing::info!(
                    "[job {job_id}] SIGKILL to {} process(es) that outlived KillWait",
                    left.len()
                );
                self.signal_job(job_id, uid, &sd, Signal::SIGKILL);
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// SIGCONT+SIGTERM to the job, SIGKILL after KillWait, then the epilog
    /// and MESSAGE_EPILOG_COMPLETE.
    async fn terminate(self: Arc<Self>, k: KillJobMsg, cause: Option<Cause>) {
        let job_id = k.step_id.job_id;
        if let Some(c) = cause {
            self.notice(job_id, c, k.details.as_deref());
        }
        if self.steps.signal_job(job_id, Signal::SIGCONT) > 0 {
            self.steps.signal_job(job_id, Signal::SIGTERM);
            let wait = Duration::from_secs(u64::from(self.settings.conf.kill_wait.max(1)));
            let deadline = tokio::time::Instant::now() + wait;
            while self.steps.signal_job(job_id, Signal::SIGCONT) > 0
                && tokio::time::Instant::now() < deadline
            {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            self.steps.signal_job(job_id, Signal::SIGKILL);
        }
        let entry = {
            let mut jobs = self.jobs();
            jobs.get_mut(&job_id).map(|j| {
                j.killed = true;
                j.clone()
            })
        };
        let uid = entry.as_ref().map_or(k.job_uid, |j| j.uid);
        self.kill_job(job_id, uid).await;
        let mut sj = match &entry {
            Some(j) => self.script_job(job_id, j),
            None => ScriptJob {
                job_id,
                uid: k.job_uid,
                gid: k.job_gid,
                user_name: user_name(None, k.job_uid),
                node_list: k.nodes.clone().unwrap_or_default(),
                work_dir: k.work_dir.clone(),
                ..self.script_job(job_id, &JobState::default())
            },
        };
        sj.exit_code = Some(k.exit_code);
        sj.derived_ec = Some(k.derived_ec);
        sj.spank_env = k.spank_job_env.iter().flatten().cloned().collect();
        let mut rc = 0;
        if !self.settings.conf.epilog.is_empty() {
            if let Err(st) = scripts::run_all(
                &self.settings.conf.epilog,
                &sj,
                Context::Epilog,
                Duration::from_secs(3600),
            )
            .await
            {
                tracing::error!("[job {job_id}] epilog failed status={st}");
                rc = errno::ESLURMD_EPILOG_FAILED;
            }
        }
        if let Some(h) = &self.settings.cgroups {
            if let Err(e) = h.remove_job(&StepCg::batch(uid, job_id)) {
                tracing::warn!("[job {job_id}] cgroup left behind: {e}");
            }
        }
        let sd = StateDir::new(&self.settings.spool_dir, job_id);
        if !sd.supervisor_alive() {
            sd.remove();
        }
        self.jobs().remove(&job_id);
        self.revoked.begin_expiration(job_id, now());
        let msg = Message::MessageEpilogComplete(EpilogCompleteMsg {
            step_id: JobIdOrStepId(StepId::job(job_id)),
            return_code: rc32(rc),
            node_name: Some(self.node_name().to_string()),
        });
        for attempt in 0..10u64 {
            match self.ctld.rpc(&msg).await {
                Ok(_) => {
                    tracing::debug!("job {job_id}: epilog complete sent");
                    return;
                }
                Err(e) => {
                    tracing::info!("job {job_id}: epilog complete failed ({e}), retrying");
                    tokio::time::sleep(Duration::from_secs(2 + attempt * 2)).await;
                }
            }
        }
    }

    /// Stock's "*** JOB .. CANCELLED AT .. ***" line in the job's stderr:
    /// once per job, and only while its script runs.
    fn notice(&self, job_id: u32, cause: Cause, details: Option<&str>) {
        let sd = StateDir::new(&self.settings.spool_dir, job_id);
        if sd.result().is_some() {
            return;
        }
        let Ok(rec) = sd.record() else {
            return;
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let when = notice::local_time(now.as_secs() as libc::time_t);
        let text = notice::lines(
            cause,
            job_id,
            self.node_name(),
            (&when, now.subsec_millis()),
            details,
            rec.env_protocol,
        );
        if text.is_empty() || !sd.first_notice() {
            return;
        }
        // The script may be forked and writing while its pid is not yet
        // recorded: then the supervisor writes the notice once it records
        // it. Left first, then the pid looked at, so that one of the two
        // always sees the other.
        let pid = match sd.script_pid() {
            Some(pid) => pid,
            None => {
                if let Err(e) = sd.set_pending_notice(&text) {
                    tracing::warn!("[job {job_id}] cannot leave the job's end notice: {e}");
                    return;
                }
                match sd.script_pid() {
                    Some(pid) if sd.take_pending_notice().is_some() => pid,
                    _ => return,
                }
            }
        };
        if let Err(e) = notice::write(
            Some(pid),
            sd.stderr_path().as_deref().map(|p| (&rec.owner, p)),
            &text,
        ) {
            tracing::warn!("[job {job_id}] cannot write the job's end to its stderr: {e}");
        }
    }

    /// REQUEST_SIGNAL_TASKS: with KILL_JOB_BATCH the batch shell alone
    /// (its process group with KILL_FULL_JOB), with KILL_STEPS_ONLY every
    /// srun step but not the batch script, else the step named.
    fn signal_tasks(&self, uid: u32, s: &SignalTasksMsg) -> i32 {
        let job_id = s.step_id.job_id;
        // Stock's rule, whatever the flags: the job's owner (from its batch
        // script or any of its steps), SlurmUser or root.
        if !self.trusted().allows(uid) {
            match self.job_owner(job_id) {
                None => return errno::ESLURM_INVALID_JOB_ID,
                Some(o) if o != uid => {
                    tracing::error!("security violation: signal of job {job_id} from uid {uid}");
                    return errno::ESLURM_USER_ID_MISSING;
                }
                Some(_) => {}
            }
        }
        let Ok(sig) = Signal::try_from(i32::from(s.signal & 0xff)) else {
            return errno::ESLURM_INVALID_JOB_ID;
        };
        if s.flags & (KILL_JOB_BATCH | KILL_FULL_JOB) != 0 {
            return self.signal_batch_shell(uid, job_id, sig, s.flags & KILL_FULL_JOB != 0);
        }
        if s.flags & KILL_STEPS_ONLY != 0 {
            self.steps.signal_job(job_id, sig);
            return 0;
        }
        if s.step_id.step_id < StepId::INTERACTIVE_STEP {
            // An srun step: srun (the owner) or the controller may signal it.
            let owner = self.steps.owner(job_id, s.step_id.step_id);
            if owner.is_some_and(|o| o != uid) && !self.trusted().allows(uid) {
                tracing::error!(
                    "security violation: signal of step {job_id}.{} from uid {uid}",
                    s.step_id.step_id
                );
                return errno::ESLURM_USER_ID_MISSING;
            }
            return if self.steps.signal_step(job_id, s.step_id.step_id, sig) {
                0
            } else {
                errno::ESLURM_INVALID_JOB_ID
            };
        }
        let Some(j) = self.jobs().get(&job_id).cloned() else {
            return errno::ESLURM_INVALID_JOB_ID;
        };
        if !self.trusted().allows(uid) && uid != j.uid {
            tracing::error!("security violation: signal of job {job_id} from uid {uid}");
            return errno::ESLURM_USER_ID_MISSING;
        }
        let sd = StateDir::new(&self.settings.spool_dir, job_id);
        if j.stepd.is_none() || j.done {
            return errno::ESLURM_INVALID_JOB_ID;
        }
        if matches!(sig, Signal::SIGTERM | Signal::SIGKILL) {
            self.notice(job_id, Cause::Signal(sig as i32), None);
        }
        self.signal_job(job_id, j.uid, &sd, sig);
        0
    }

    /// Whose job this is here: its batch script's, else any of its steps'.
    fn job_owner(&self, job_id: u32) -> Option<u32> {
        if let Some(uid) = self.jobs().get(&job_id).map(|j| j.uid) {
            return Some(uid);
        }
        self.steps
            .list()
            .into_iter()
            .filter(|s| s.job_id == job_id)
            .find_map(|s| self.steps.owner(job_id, s.step_id))
    }

    /// What a step launch must pass before the step code sees it: a
    /// credential of a job not ended here and not expired, counts within
    /// its allocation, and the groups from the credential or the group
    /// database, never the launch's own (unsigned) list.
    fn admit_launch(&self, m: &mut LaunchTasksRequestMsg) -> Result<(), CredError> {
        let a = &m.cred.cred.arg;
        self.revoked.check(a)?;
        let window = crate::cred::cred_expire(self.settings.conf.auth_info.as_deref());
        if now() > a.ctime.saturating_add(window) {
            return Err(CredError::Expired(a.step_id.job_id));
        }
        let max = self
            .settings
            .conf
            .raw("MaxTasksPerNode")
            .and_then(|x| x.trim().parse::<u32>().ok())
            .unwrap_or(crate::cred::MAX_TASKS_PER_NODE);
        crate::cred::check_launch_counts(m, self.node_name(), max)?;
        let a = &m.cred.cred.arg;
        m.gids = if a.id.gids.is_empty() {
            lookup_groups(&user_name(a.id.pw_name.as_deref(), a.id.uid), a.id.gid)
        } else {
            a.id.gids.clone()
        };
        Ok(())
    }

    /// `scancel -b`: the batch shell only (stock signals the step's
    /// process group leader, which is the shell); `--full`: its whole
    /// process group. Children in other groups or sessions are untouched.
    fn signal_batch_shell(&self, uid: u32, job_id: u32, sig: Signal, group: bool) -> i32 {
        let Some(j) = self.jobs().get(&job_id).cloned() else {
            return errno::ESLURM_INVALID_JOB_ID;
        };
        if !self.trusted().allows(uid) && uid != j.uid {
            tracing::error!("security violation: signal of job {job_id} from uid {uid}");
            return errno::ESLURM_USER_ID_MISSING;
        }
        let sd = StateDir::new(&self.settings.spool_dir, job_id);
        let pid = match sd.script_pid() {
            Some(p) if p > 1 && j.stepd.is_some() && !j.done && sd.result().is_none() => p,
            _ => return errno::ESLURM_INVALID_JOB_ID,
        };
        if matches!(sig, Signal::SIGTERM | Signal::SIGKILL) {
            self.notice(job_id, Cause::Signal(sig as i32), None);
        }
        let pid = nix::unistd::Pid::from_raw(pid);
        let r = if group {
            nix::sys::signal::killpg(pid, sig)
        } else {
            nix::sys::signal::kill(pid, sig)
        };
        match r {
            Ok(()) => {
                tracing::info!(
                    "[job {job_id}] signal {sig} to the batch shell{}",
                    if group { "'s process group" } else { "" }
                );
                0
            }
            Err(e) => {
                tracing::warn!("[job {job_id}] signal {sig} to the batch shell: {e}");
                errno::ESLURM_INVALID_JOB_ID
            }
        }
    }
}

fn check_reg_reply(reply: &Message) -> Result<(), RegisterError> {
    match reply {
        Message::ResponseNodeRegistration(_) => Ok(()),
        Message::ResponseSlurmRc(rc) if rc.return_code == 0 => Ok(()),
        Message::ResponseSlurmRc(rc) => Err(RegisterError::Refused(rc.return_code as i32)),
        other => Err(RegisterError::UnexpectedReply(other.msg_type())),
    }
}

/// The user's name from the credential, else the passwd database, else
/// the number.
pub fn user_name(from_cred: Option<&str>, uid: u32) -> String {
    if let Some(n) = from_cred.filter(|n| !n.is_empty()) {
        return n.to_string();
    }
    nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten()
        .map(|u| u.name)
        .unwrap_or_else(|| uid.to_string())
}

/// Supplementary groups from the group database (when the credential has none).
fn lookup_groups(user: &str, gid: u32) -> Vec<u32> {
    let Ok(name) = std::ffi::CString::new(user) else {
        return vec![gid];
    };
    nix::unistd::getgrouplist(&name, nix::unistd::Gid::from_raw(gid))
        .map(|g| g.into_iter().map(|x| x.as_raw()).collect())
        .unwrap_or_else(|_| vec![gid])
}

#[cfg(test)]
mod tests {
    use super::*;
    use slurm_wire::msg::common::ReturnCodeMsg;

    fn rc(code: u32) -> Message {
        Message::ResponseSlurmRc(ReturnCodeMsg { return_code: code })
    }

    #[test]
    fn registration_reply() {
        assert!(check_reg_reply(&rc(0)).is_ok());
        assert!(check_reg_reply(&Message::ResponseNodeRegistration(Default::default())).is_ok());
        let e = check_reg_reply(&rc(errno::ESLURM_INVALID_NODE_NAME as u32)).unwrap_err();
        assert!(matches!(
            e,
            RegisterError::Refused(errno::ESLURM_INVALID_NODE_NAME)
        ));
        assert_eq!(
            e.to_string(),
            "controller answered ESLURM_INVALID_NODE_NAME"
        );
        // A code without a name.
        let e = check_reg_reply(&rc(987_654)).unwrap_err();
        assert_eq!(e.to_string(), "controller answered error");
        let ping = Message::ResponsePingSlurmd(PingSlurmdRespMsg::default());
        let e = check_reg_reply(&ping).unwrap_err();
        assert!(matches!(
            e,
            RegisterError::UnexpectedReply(MsgType::ResponsePingSlurmd)
        ));
        assert_eq!(
            e.to_string(),
            format!("unexpected reply {}", MsgType::ResponsePingSlurmd)
        );
    }

    #[test]
    fn supervisor_start_code() {
        let e = StartError::from(std::io::Error::from_raw_os_error(libc::ENOENT));
        assert_eq!(e.errno(), errno::ESLURMD_EXECVE_FAILED);
        assert_eq!(
            e.to_string(),
            std::io::Error::from_raw_os_error(libc::ENOENT).to_string()
        );
        let e = StartError::from(stepd::StateError::Missing("uid"));
        assert_eq!(e.errno(), errno::ESLURMD_EXECVE_FAILED);
        assert_eq!(e.to_string(), "job record: uid missing");
    }
}
