//! The tokio shell: registration, the RPC handler, and each batch job's
//! life (prolog, script, completion, termination, epilog).

use crate::cred::{check_batch_cred, Trusted};
use crate::ctld::Controller;
use crate::launch::{plan_batch, NodeCtx, Owner};
use crate::node::NodeCfg;
use crate::scripts::{self, Context, ScriptJob};
use crate::{exec, hw, track};
use nix::sys::signal::Signal;
use slurm_conf::SlurmConf;
use slurm_rpc::{rc_message, AuthCtx, Incoming};
use slurm_wire::errno;
use slurm_wire::msg::common::{PingSlurmdRespMsg, SignalTasksMsg};
use slurm_wire::msg::kill::{EpilogCompleteMsg, KillJobMsg};
use slurm_wire::msg::launch::BatchJobLaunchMsg;
use slurm_wire::msg::node::SlurmNodeRegistrationStatusMsg;
use slurm_wire::msg::step::{CompleteBatchScriptMsg, JobIdOrStepId};
use slurm_wire::types::StepId;
use slurm_wire::{Message, ProtocolVersion};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// `SLURMD_REG_FLAG_RESP`: ask for the TRES list in the reply.
const REG_FLAG_RESP: u16 = 0x0002;

/// Static facts of this daemon.
pub struct Settings {
    pub conf: SlurmConf,
    pub conf_path: String,
    pub node: NodeCfg,
    pub slurm_user_uid: u32,
    pub spool_dir: String,
    pub start_time: i64,
    pub gres: Vec<crate::gres::GresRec>,
}

/// A job this node runs.
#[derive(Debug, Clone, Default)]
struct JobState {
    /// The script's pid, also its session id, once started.
    sid: Option<i32>,
    /// A termination arrived: do not start it, or stop it.
    killed: bool,
    uid: u32,
    gid: u32,
    user_name: String,
    node_list: String,
    partition: Option<String>,
    work_dir: Option<String>,
}

pub struct Daemon {
    pub settings: Settings,
    pub ctld: Controller,
    pub auth: AuthCtx,
    jobs: Mutex<HashMap<u32, JobState>>,
    /// Steps launched by srun.
    pub steps: crate::step::Registry,
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// The numeric value of a Slurm errno as it travels in a u32 field.
fn rc32(rc: i32) -> u32 {
    rc as u32
}

impl Daemon {
    pub fn new(settings: Settings, ctld: Controller, auth: AuthCtx) -> Arc<Self> {
        Arc::new(Daemon {
            settings,
            ctld,
            auth,
            jobs: Mutex::new(HashMap::new()),
            steps: Default::default(),
        })
    }

    fn jobs(&self) -> std::sync::MutexGuard<'_, HashMap<u32, JobState>> {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn trusted(&self) -> Trusted {
        Trusted {
            slurm_user_uid: self.settings.slurm_user_uid,
        }
    }

    fn node_name(&self) -> &str {
        &self.settings.node.name
    }

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
            .filter(|(_, j)| j.sid.is_some())
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
    pub async fn register(&self, status: i32) -> Result<(), String> {
        let (reply, _) = self
            .ctld
            .rpc_with(|v| Message::MessageNodeRegistrationStatus(self.registration(status, v)))
            .await
            .map_err(|e| e.to_string())?;
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

    fn ping_reply() -> Message {
        Message::ResponsePingSlurmd(PingSlurmdRespMsg {
            cpu_load: hw::cpu_load(),
            free_mem: hw::free_mem(),
        })
    }

    /// One RPC; the reply goes back in the requester's version.
    pub async fn handle(self: Arc<Self>, req: Incoming) -> Option<Message> {
        let uid = req.identity.uid;
        let v = req.version();
        let ok = self.trusted().allows(uid);
        let deny = |what: &str| {
            tracing::error!("security violation: {what} RPC from uid {uid}");
            Some(rc_message(errno::ESLURM_USER_ID_MISSING))
        };
        match req.msg {
            Message::RequestPing(_) if ok => Some(Self::ping_reply()),
            Message::RequestPing(_) => deny("ping"),
            Message::RequestNodeRegistrationStatus(_) if ok => {
                let me = self.clone();
                tokio::spawn(async move { me.register_loop(0).await });
                Some(Self::ping_reply())
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
            Message::RequestLaunchTasks(m) => Some(crate::step::launch_tasks(
                self.clone(),
                uid,
                v,
                req.frame.header.orig_addr,
                req.peer,
                m,
            )),
            Message::RequestTerminateJob(k)
            | Message::RequestKillTimelimit(k)
            | Message::RequestKillPreempted(k)
            | Message::RequestAbortJob(k) => {
                if !ok {
                    return deny("terminate job");
                }
                let me = self.clone();
                tokio::spawn(async move { me.terminate(k).await });
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
                    sid: None,
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

    /// Prolog, script, completion report.
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
                // Drain the node (a registration with a failure status)
                // and fail the job.
                let me = self.clone();
                tokio::spawn(async move { me.register_loop(errno::ESLURMD_PROLOG_FAILED).await });
                self.complete_batch(job_id, state.uid, 0, errno::ESLURMD_PROLOG_FAILED)
                    .await;
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
        let owner = Owner {
            uid: state.uid,
            gid: state.gid,
            user_name: state.user_name.clone(),
            groups,
        };
        let node = NodeCtx {
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
        };
        // The environment follows the release we pose as to the controller.
        let env_v = self.ctld.version().unwrap_or(v).max(v);
        let plan = match plan_batch(&m, a, job_id, owner, &node, env_v) {
            Ok(p) => p,
            Err(e) => {
                tracing::error!("job {job_id}: {e}");
                self.complete_batch(job_id, state.uid, 0, errno::ESLURMD_EXECVE_FAILED)
                    .await;
                return;
            }
        };
        let spawned = tokio::task::spawn_blocking({
            let plan = plan.clone();
            move || exec::spawn_batch(&plan)
        })
        .await;
        let pid = match spawned {
            Ok(Ok(pid)) => pid,
            Ok(Err(e)) => {
                tracing::error!("job {job_id}: launch failed: {e}");
                exec::remove_batch_dir(&plan.batch_dir);
                self.complete_batch(job_id, state.uid, 0, e.errno()).await;
                return;
            }
            Err(e) => {
                tracing::error!("job {job_id}: launcher panicked: {e}");
                self.complete_batch(job_id, state.uid, 0, errno::ESLURMD_EXECVE_FAILED)
                    .await;
                return;
            }
        };
        tracing::info!(
            "launched batch job {job_id} for uid {} (pid {pid})",
            state.uid
        );
        let killed = {
            let mut jobs = self.jobs();
            match jobs.get_mut(&job_id) {
                Some(j) => {
                    j.sid = Some(pid);
                    j.killed
                }
                None => true,
            }
        };
        if killed {
            track::signal_session(pid, Signal::SIGKILL);
        }
        let status = tokio::task::spawn_blocking(move || exec::wait_blocking(pid))
            .await
            .unwrap_or(0);
        // The job is over when its script is: nothing of it may linger.
        track::signal_session(pid, Signal::SIGKILL);
        tracing::info!("job {job_id} script ended, status {status:#x}");
        exec::remove_batch_dir(&plan.batch_dir);
        self.complete_batch(job_id, state.uid, status as u32, 0)
            .await;
    }

    /// REQUEST_COMPLETE_BATCH_SCRIPT, retried until the controller answers.
    async fn complete_batch(&self, job_id: u32, uid: u32, job_rc: u32, slurm_rc: i32) {
        let msg = Message::RequestCompleteBatchScript(CompleteBatchScriptMsg {
            step_id: StepId {
                sluid: 0,
                job_id,
                step_id: StepId::BATCH_SCRIPT,
                step_het_comp: slurm_wire::pack::NO_VAL,
            },
            job_rc,
            slurm_rc: rc32(slurm_rc),
            user_id: uid,
            node_name: Some(self.node_name().to_string()),
            ..Default::default()
        });
        loop {
            match self.ctld.rpc(&msg).await {
                Ok((Message::ResponseSlurmRc(rc), _)) => {
                    let rc = rc.return_code as i32;
                    if rc != 0
                        && rc != errno::ESLURM_ALREADY_DONE
                        && rc != errno::ESLURM_INVALID_JOB_ID
                    {
                        tracing::warn!(
                            "job {job_id}: completion answered {}",
                            errno::name(rc).unwrap_or("error")
                        );
                    }
                    return;
                }
                Ok((other, _)) => {
                    tracing::warn!("job {job_id}: completion answered {}", other.msg_type());
                    return;
                }
                Err(e) => {
                    tracing::info!("retrying job {job_id} completion in 15s: {e}");
                    tokio::time::sleep(Duration::from_secs(15)).await;
                }
            }
        }
    }

    /// SIGCONT+SIGTERM to the job, SIGKILL after KillWait, then the epilog
    /// and MESSAGE_EPILOG_COMPLETE.
    async fn terminate(self: Arc<Self>, k: KillJobMsg) {
        let job_id = k.step_id.job_id;
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
        if let Some(sid) = entry.as_ref().and_then(|j| j.sid) {
            track::signal_session(sid, Signal::SIGCONT);
            track::signal_session(sid, Signal::SIGTERM);
            let wait = Duration::from_secs(u64::from(self.settings.conf.kill_wait.max(5)));
            let deadline = tokio::time::Instant::now() + wait;
            while !track::session_members(sid).is_empty() && tokio::time::Instant::now() < deadline
            {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            if track::signal_session(sid, Signal::SIGKILL) > 0 {
                tracing::info!("job {job_id}: killed what outlived KillWait");
            }
        }
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
        self.jobs().remove(&job_id);
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

    /// REQUEST_SIGNAL_TASKS for the batch step (or the whole job).
    fn signal_tasks(&self, uid: u32, s: &SignalTasksMsg) -> i32 {
        let job_id = s.step_id.job_id;
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
            let sig = Signal::try_from(i32::from(s.signal & 0xff));
            return match sig {
                Ok(sig) if self.steps.signal_step(job_id, s.step_id.step_id, sig) => 0,
                _ => errno::ESLURM_INVALID_JOB_ID,
            };
        }
        let Some(j) = self.jobs().get(&job_id).cloned() else {
            return errno::ESLURM_INVALID_JOB_ID;
        };
        if !self.trusted().allows(uid) && uid != j.uid {
            tracing::error!("security violation: signal of job {job_id} from uid {uid}");
            return errno::ESLURM_USER_ID_MISSING;
        }
        let Ok(sig) = Signal::try_from(i32::from(s.signal & 0xff)) else {
            return errno::ESLURM_INVALID_JOB_ID;
        };
        match j.sid {
            Some(sid) => {
                track::signal_session(sid, sig);
                0
            }
            None => errno::ESLURM_INVALID_JOB_ID,
        }
    }
}

fn check_reg_reply(reply: &Message) -> Result<(), String> {
    match reply {
        Message::ResponseNodeRegistration(_) => Ok(()),
        Message::ResponseSlurmRc(rc) if rc.return_code == 0 => Ok(()),
        Message::ResponseSlurmRc(rc) => Err(format!(
            "controller answered {}",
            errno::name(rc.return_code as i32).unwrap_or("error")
        )),
        other => Err(format!("unexpected reply {}", other.msg_type())),
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
