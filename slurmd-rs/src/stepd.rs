//! The batch job supervisor: a process of its own (`slurmd-rs --stepd
//! DIR`, stock has slurmstepd for this) that starts the script inside the
//! job's cgroup, waits for it, kills what it left, checks for OOM kills
//! and reports the completion to slurmctld. It outlives the daemon, so a
//! restarted slurmd-rs finds running jobs through their state directories
//! (`<SlurmdSpoolDir>/rs-jobs/<job id>/`, root only) and their cgroups.
//!
//! State directory files: `job` (a [`JobRecord`]), `launch` (the launch
//! message as received, wire-encoded), `stepd.pid`, `script.pid`,
//! `stderr` (the script's resolved stderr path), `noticed` (its end was
//! announced in that file),
//! `result` (`job_rc slurm_rc` once the script is over) and `reported`
//! (the controller acknowledged the completion).

use crate::cgroup::{self, Hierarchy, StepCg};
use crate::ctld::Controller;
use crate::launch::{plan_batch, NodeCtx, Owner};
use slurm_conf::SlurmConf;
use slurm_wire::msg::launch::BatchJobLaunchMsg;
use slurm_wire::{errno, ProtocolVersion};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Stock's `SIG_OOM`: the job_rc of a batch script whose step had OOM
/// kills; slurmctld turns it into JOB_OOM (OUT_OF_MEMORY).
pub const SIG_OOM: u32 = 253;

/// Directory under SlurmdSpoolDir holding one state directory per job.
pub const STATE_DIR: &str = "rs-jobs";

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
    /// The directory above the state directories is not root's alone.
    #[error(
        "{dir}: {} must be a directory of uid {uid} that no one else can write",
        .parent.display()
    )]
    UnsafeParent {
        dir: String,
        parent: PathBuf,
        uid: u32,
    },
    #[error("job record: line {0}: {1}")]
    Bad(usize, LineError),
    #[error("job record: {0} missing")]
    Missing(&'static str),
    #[error("launch message: {0}")]
    Launch(slurm_wire::DecodeError),
}

impl StateError {
    /// The job's completion code: its script cannot be started.
    pub fn errno(&self) -> i32 {
        errno::ESLURMD_EXECVE_FAILED
    }
}

/// What is wrong with one line of a job record.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum LineError {
    #[error("no '='")]
    NoEquals,
    #[error("{0}: not a number")]
    NotNumber(String),
    #[error("{0}: unknown release")]
    UnknownRelease(String),
    #[error("env: no '='")]
    EnvNoEquals,
}

/// Why a job's supervisor did not start (its state directory, or the process).
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    State(#[from] StateError),
    #[error(transparent)]
    Spawn(#[from] std::io::Error),
}

impl StartError {
    /// The job's completion code.
    pub fn errno(&self) -> i32 {
        match self {
            StartError::State(e) => e.errno(),
            StartError::Spawn(_) => errno::ESLURMD_EXECVE_FAILED,
        }
    }
}

/// Why the cgroup hierarchy is unusable (cgroup.conf, or the mounts).
#[derive(Debug, thiserror::Error)]
pub enum HierarchyError {
    #[error("{}: {source}", .path.display())]
    Conf {
        path: PathBuf,
        source: Box<slurm_conf::ConfError>,
    },
    #[error(transparent)]
    Cgroup(#[from] cgroup::CgroupError),
}

impl HierarchyError {
    /// The job's completion code.
    pub fn errno(&self) -> i32 {
        match self {
            HierarchyError::Conf { .. } => errno::ESLURMD_SETUP_ENVIRONMENT_ERROR,
            HierarchyError::Cgroup(e) => e.errno(),
        }
    }
}

/// What the supervisor needs besides the launch message.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRecord {
    pub job_id: u32,
    pub owner: Owner,
    pub node_list: String,
    pub partition: Option<String>,
    pub work_dir: Option<String>,
    pub node: NodeCtx,
    /// The launch message's encoding.
    pub protocol: ProtocolVersion,
    /// The release the job's environment follows.
    pub env_protocol: ProtocolVersion,
    /// The controller's protocol, when known or pinned.
    pub ctld_protocol: Option<ProtocolVersion>,
    pub slurm_user_uid: u32,
    /// Top directory of the cgroup tree; None without cgroups.
    pub cgroup_root: Option<String>,
    pub log_file: Option<String>,
    pub log_level: String,
    /// Variables the daemon adds to the job's environment (GRES).
    pub extra_env: Vec<(String, String)>,
}

impl Default for JobRecord {
    fn default() -> Self {
        JobRecord {
            job_id: 0,
            owner: Owner::default(),
            node_list: String::new(),
            partition: None,
            work_dir: None,
            node: NodeCtx::default(),
            protocol: ProtocolVersion::OLDEST,
            env_protocol: ProtocolVersion::OLDEST,
            ctld_protocol: None,
            slurm_user_uid: 0,
            cgroup_root: None,
            log_file: None,
            log_level: "INFO".into(),
            extra_env: Vec::new(),
        }
    }
}

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\n', "\\n")
}

fn unesc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.next() {
                Some('n') => out.push('\n'),
                Some(o) => out.push(o),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn join<T: ToString>(v: &[T]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

impl JobRecord {
    /// `key=value` lines, values escaped (`\\`, `\n`).
    pub fn to_text(&self) -> String {
        let mut kv: Vec<(&str, String)> = vec![
            ("job_id", self.job_id.to_string()),
            ("uid", self.owner.uid.to_string()),
            ("gid", self.owner.gid.to_string()),
            ("user_name", self.owner.user_name.clone()),
            ("groups", join(&self.owner.groups)),
            ("node_list", self.node_list.clone()),
            ("node_name", self.node.node_name.clone()),
            ("hostname", self.node.hostname.clone()),
            ("cluster_name", self.node.cluster_name.clone()),
            ("conf_path", self.node.conf_path.clone()),
            ("spool_dir", self.node.spool_dir.clone()),
            (
                "job_file_append",
                u8::from(self.node.job_file_append).to_string(),
            ),
            ("rlimits_except", self.node.rlimits_except.join(",")),
            ("protocol", self.protocol.release().to_string()),
            ("env_protocol", self.env_protocol.release().to_string()),
            ("slurm_user_uid", self.slurm_user_uid.to_string()),
            ("log_level", self.log_level.clone()),
        ];
        let opt = [
            ("partition", &self.partition),
            ("work_dir", &self.work_dir),
            ("cgroup_root", &self.cgroup_root),
            ("log_file", &self.log_file),
        ];
        for (k, v) in opt {
            if let Some(v) = v {
                kv.push((k, v.clone()));
            }
        }
        if let Some(v) = self.ctld_protocol {
            kv.push(("ctld_protocol", v.release().to_string()));
        }
        for (k, v) in &self.extra_env {
            kv.push(("env", format!("{k}={v}")));
        }
        kv.iter()
            .map(|(k, v)| format!("{k}={}\n", esc(v)))
            .collect()
    }

    pub fn from_text(text: &str) -> Result<JobRecord, StateError> {
        let mut r = JobRecord::default();
        let mut seen = std::collections::HashSet::new();
        for (i, line) in text.lines().enumerate() {
            if line.is_empty() {
                continue;
            }
            let bad = |e: LineError| StateError::Bad(i + 1, e);
            let (k, v) = line
                .split_once('=')
                .ok_or_else(|| bad(LineError::NoEquals))?;
            let v = unesc(v);
            let num = |v: &str| {
                v.parse::<u32>()
                    .map_err(|_| bad(LineError::NotNumber(k.to_string())))
            };
            let ver = |v: &str| {
                ProtocolVersion::from_release(v)
                    .ok_or_else(|| bad(LineError::UnknownRelease(k.to_string())))
            };
            let list = |v: &str| -> Vec<String> {
                v.split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            };
            match k {
                "job_id" => r.job_id = num(&v)?,
                "uid" => r.owner.uid = num(&v)?,
                "gid" => r.owner.gid = num(&v)?,
                "user_name" => r.owner.user_name = v,
                "groups" => {
                    r.owner.groups = list(&v).iter().map(|g| num(g)).collect::<Result<_, _>>()?
                }
                "node_list" => r.node_list = v,
                "partition" => r.partition = Some(v),
                "work_dir" => r.work_dir = Some(v),
                "node_name" => r.node.node_name = v,
                "hostname" => r.node.hostname = v,
                "cluster_name" => r.node.cluster_name = v,
                "conf_path" => r.node.conf_path = v,
                "spool_dir" => r.node.spool_dir = v,
                "job_file_append" => r.node.job_file_append = v == "1",
                "rlimits_except" => r.node.rlimits_except = list(&v),
                "protocol" => r.protocol = ver(&v)?,
                "env_protocol" => r.env_protocol = ver(&v)?,
                "ctld_protocol" => r.ctld_protocol = Some(ver(&v)?),
                "slurm_user_uid" => r.slurm_user_uid = num(&v)?,
                "cgroup_root" => r.cgroup_root = Some(v),
                "log_file" => r.log_file = Some(v),
                "log_level" => r.log_level = v,
                "env" => {
                    let (n, val) = v
                        .split_once('=')
                        .ok_or_else(|| bad(LineError::EnvNoEquals))?;
                    r.extra_env.push((n.to_string(), val.to_string()));
                }
                // Newer daemons may add keys; an older supervisor skips them.
                _ => continue,
            }
            seen.insert(k.to_string());
        }
        for k in ["job_id", "uid", "gid", "conf_path", "protocol"] {
            if !seen.contains(k) {
                return Err(StateError::Missing(k));
            }
        }
        Ok(r)
    }

    pub fn step_cg(&self) -> StepCg {
        StepCg::batch(self.owner.uid, self.job_id)
    }
}

/// One job's state directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDir(pub PathBuf);

impl StateDir {
    pub fn new(spool_dir: &str, job_id: u32) -> Self {
        StateDir(
            Path::new(spool_dir)
                .join(STATE_DIR)
                .join(job_id.to_string()),
        )
    }

    fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    fn write(&self, name: &str, data: &[u8]) -> Result<(), StateError> {
        // Write then rename: a reader never sees half a file.
        let tmp = self.file(&format!(".{name}.tmp"));
        let dst = self.file(name);
        std::fs::write(&tmp, data)
            .and_then(|_| std::fs::rename(&tmp, &dst))
            .map_err(|e| StateError::Io(dst.display().to_string(), e))
    }

    /// Saves a new job (root-only directory: the supervisor runs as root
    /// on what it reads here).
    pub fn create(&self, rec: &JobRecord, launch: &[u8]) -> Result<(), StateError> {
        use std::os::unix::fs::DirBuilderExt;
        let io = |e| StateError::Io(self.0.display().to_string(), e);
        if let Some(p) = self.0.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(p)
                .map_err(io)?;
            // Made by someone else where the spool lets users write (a
            // link, or a directory of theirs): everything below is written
            // by path as root, so it must be root's alone.
            use std::os::unix::fs::MetadataExt;
            let st = std::fs::symlink_metadata(p).map_err(io)?;
            // SAFETY: geteuid has no preconditions.
            let me = unsafe { libc::geteuid() };
            if !st.is_dir() || st.uid() != me || st.mode() & 0o022 != 0 {
                return Err(StateError::UnsafeParent {
                    dir: self.0.display().to_string(),
                    parent: p.to_path_buf(),
                    uid: me,
                });
            }
        }
        let _ = std::fs::remove_dir_all(&self.0);
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&self.0)
            .map_err(io)?;
        self.write("launch", launch)?;
        self.write("job", rec.to_text().as_bytes())
    }

    pub fn record(&self) -> Result<JobRecord, StateError> {
        let p = self.file("job");
        let t =
            std::fs::read_to_string(&p).map_err(|e| StateError::Io(p.display().to_string(), e))?;
        JobRecord::from_text(&t)
    }

    pub fn launch(&self, v: ProtocolVersion) -> Result<BatchJobLaunchMsg, StateError> {
        let p = self.file("launch");
        let b = std::fs::read(&p).map_err(|e| StateError::Io(p.display().to_string(), e))?;
        slurm_wire::pack::decode_exact(&b, v).map_err(StateError::Launch)
    }

    fn read_num<T: std::str::FromStr>(&self, name: &str) -> Option<T> {
        std::fs::read_to_string(self.file(name))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    pub fn stepd_pid(&self) -> Option<i32> {
        self.read_num("stepd.pid")
    }

    pub fn script_pid(&self) -> Option<i32> {
        self.read_num("script.pid")
    }

    /// `(job_rc, slurm_rc)` once the script is over.
    pub fn result(&self) -> Option<(u32, i32)> {
        let t = std::fs::read_to_string(self.file("result")).ok()?;
        parse_result(&t)
    }

    pub fn reported(&self) -> bool {
        self.file("reported").exists()
    }

    pub fn set_result(&self, job_rc: u32, slurm_rc: i32) -> Result<(), StateError> {
        self.write("result", format!("{job_rc} {slurm_rc}\n").as_bytes())
    }

    pub fn set_reported(&self) -> Result<(), StateError> {
        self.write("reported", b"")
    }

    /// Whether this job's supervisor is running (its pid, and a command
    /// line naming this directory: pids get reused).
    pub fn supervisor_alive(&self) -> bool {
        let Some(pid) = self.stepd_pid() else {
            return false;
        };
        let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            return false;
        };
        let args: Vec<&[u8]> = cmd.split(|&b| b == 0).collect();
        let dir = self.0.as_os_str().as_encoded_bytes();
        args.contains(&b"--stepd".as_slice()) && args.contains(&dir) && !is_zombie(pid)
    }

    pub fn set_stepd_pid(&self, pid: u32) -> Result<(), StateError> {
        self.write("stepd.pid", format!("{pid}\n").as_bytes())
    }

    /// The job was terminated: a supervisor that has not started the
    /// script yet must not start it.
    pub fn set_killed(&self) -> Result<(), StateError> {
        self.write("killed", b"")
    }

    pub fn killed(&self) -> bool {
        self.file("killed").exists()
    }

    /// The script's stderr file, as its supervisor resolved the pattern.
    pub fn stderr_path(&self) -> Option<String> {
        std::fs::read_to_string(self.file("stderr")).ok()
    }

    /// Leaves a job's end notice for the supervisor to write: the script
    /// is forked but its pid not yet recorded.
    pub fn set_pending_notice(&self, text: &str) -> Result<(), StateError> {
        self.write("notice", text.as_bytes())
    }

    /// The pending notice, for whoever removes it first (the daemon that
    /// left it, or the supervisor once the script's pid is recorded): so
    /// that it is written once whichever of them sees the other's file.
    pub fn take_pending_notice(&self) -> Option<String> {
        let p = self.file("notice");
        let text = std::fs::read_to_string(&p).ok()?;
        std::fs::remove_file(&p).ok()?;
        Some(text)
    }

    /// True the first time only: a job's end is announced once.
    pub fn first_notice(&self) -> bool {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(self.file("noticed"))
            .is_ok()
    }

    pub fn remove(&self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }

    /// Every job with a state directory under `spool_dir`.
    pub fn list(spool_dir: &str) -> Vec<(u32, StateDir)> {
        let top = Path::new(spool_dir).join(STATE_DIR);
        let mut out: Vec<(u32, StateDir)> = std::fs::read_dir(&top)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let id = e.file_name().to_str()?.parse().ok()?;
                Some((id, StateDir(e.path())))
            })
            .collect();
        out.sort_by_key(|(id, _)| *id);
        out
    }
}

fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let rest = &s[s.rfind(')')? + 1..];
            rest.split_whitespace().next().map(|st| st == "Z")
        })
        .unwrap_or(false)
}

pub fn parse_result(t: &str) -> Option<(u32, i32)> {
    let mut f = t.split_whitespace();
    Some((f.next()?.parse().ok()?, f.next()?.parse().ok()?))
}

/// The job_rc to report: SIG_OOM when the step had OOM kills (stock
/// reports it whatever the script's own status), else the wait status.
pub fn job_rc(wait_status: i32, oom_kills: u64) -> u32 {
    if oom_kills > 0 {
        SIG_OOM
    } else {
        wait_status as u32
    }
}

/// The cgroup hierarchy a daemon with slurm.conf at `conf_path` uses.
pub fn hierarchy(
    conf_path: &Path,
    root: &str,
) -> Result<Option<(Hierarchy, slurm_conf::CgroupConf)>, HierarchyError> {
    let p = slurm_conf::extra_conf_path(conf_path, "cgroup.conf");
    let cc = if p.exists() {
        slurm_conf::CgroupConf::from_file(&p).map_err(|e| HierarchyError::Conf {
            path: p,
            source: Box::new(e),
        })?
    } else {
        slurm_conf::CgroupConf::default()
    };
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let h = cgroup::select(&cc, &mounts, root)?;
    Ok(h.map(|h| (h, cc)))
}

/// Starts the supervisor for `dir` in a session of its own, detached from
/// the daemon (it must survive a daemon restart).
pub fn spawn_supervisor(dir: &StateDir) -> std::io::Result<std::process::Child> {
    use std::os::unix::process::CommandExt;
    let err = std::fs::File::create(dir.file("stepd.err"))?;
    let mut cmd = std::process::Command::new("/proc/self/exe");
    cmd.arg0("slurmd-rs")
        .arg("--stepd")
        .arg(&dir.0)
        .env_clear()
        .env(
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        )
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(err);
    if let Ok(v) = std::env::var("SLURMD_RS_LOG") {
        cmd.env("SLURMD_RS_LOG", v);
    }
    // SAFETY: setsid is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    cmd.spawn()
}

/// Entry point of `slurmd-rs --stepd DIR`.
pub fn main(dir: &Path) -> ExitCode {
    let sd = StateDir(dir.to_path_buf());
    let rec = match sd.record() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("slurmd-rs --stepd: {e}");
            return ExitCode::FAILURE;
        }
    };
    let level = rec.log_level.parse().unwrap_or(tracing::Level::INFO);
    if let Err(e) = slurm_rpc::daemon::init_logging(
        rec.log_file.as_deref().map(Path::new),
        level,
        false,
        "SLURMD_RS_LOG",
    ) {
        eprintln!("slurmd-rs --stepd: {e}");
    }
    let _ = sd.write("stepd.pid", format!("{}\n", std::process::id()).as_bytes());
    let job_id = rec.job_id;
    let conf = match SlurmConf::from_file(&rec.node.conf_path) {
        Ok(c) => c,
        Err(e) => {
            tracing::error!("[job {job_id}] stepd: {}: {e}", rec.node.conf_path);
            return ExitCode::FAILURE;
        }
    };
    let (job_rc, slurm_rc) = match sd.result() {
        // A supervisor restarted after the script ended only reports.
        Some(r) => r,
        None => {
            let r = supervise(&rec, &sd);
            if let Err(e) = sd.set_result(r.0, r.1) {
                tracing::error!("[job {job_id}] stepd: {e}");
            }
            r
        }
    };
    if !sd.reported() {
        report(&rec, &conf, job_rc, slurm_rc);
        let _ = sd.set_reported();
    }
    ExitCode::SUCCESS
}

/// Runs the script to its end; returns `(job_rc, slurm_rc)`.
fn supervise(rec: &JobRecord, sd: &StateDir) -> (u32, i32) {
    let job_id = rec.job_id;
    let msg = match sd.launch(rec.protocol) {
        Ok(m) => m,
        Err(e) => {
            tracing::error!("[job {job_id}] stepd: {e}");
            return (0, e.errno());
        }
    };
    let hier = match rec.cgroup_root.as_deref() {
        None => None,
        Some(root) => match hierarchy(Path::new(&rec.node.conf_path), root) {
            Ok(h) => h.map(|(h, _)| h),
            Err(e) => {
                tracing::error!("[job {job_id}] stepd: cgroups: {e}");
                return (0, e.errno());
            }
        },
    };
    let cg = rec.step_cg();
    let plan = match plan_batch(
        &msg,
        &msg.cred.cred.arg,
        job_id,
        rec.owner.clone(),
        &rec.node,
        rec.env_protocol,
    ) {
        Ok(p) => p,
        Err(e) => {
            tracing::error!("[job {job_id}] stepd: {e}");
            return (0, e.errno());
        }
    };
    let mut plan = plan;
    for (k, v) in &rec.extra_env {
        plan.env.set(k, v.as_str());
    }
    if sd.killed() {
        tracing::info!("[job {job_id}] terminated before its script started");
        crate::exec::remove_batch_dir(&plan.batch_dir);
        return (0, 0);
    }
    let procs = hier
        .as_ref()
        .map(|h| h.procs_files(&cg))
        .unwrap_or_default();
    let pid = match crate::exec::spawn_batch(&plan, &procs) {
        Ok(p) => p,
        Err(e) => {
            tracing::error!("[job {job_id}] launch failed: {e}");
            crate::exec::remove_batch_dir(&plan.batch_dir);
            return (0, e.errno());
        }
    };
    let _ = sd.write("stderr", plan.stderr.as_bytes());
    let _ = sd.write("script.pid", format!("{pid}\n").as_bytes());
    // An end announced while the script was starting (the daemon found no
    // pid yet) is written now, to the script's stderr.
    if let Some(text) = sd.take_pending_notice() {
        let file = Some((&rec.owner, plan.stderr.as_str()));
        if let Err(e) = crate::notice::write(Some(pid), file, &text) {
            tracing::warn!("[job {job_id}] cannot write the job's end to its stderr: {e}");
        }
    }
    tracing::info!(
        "[job {job_id}] batch script started as pid {pid} for uid {}",
        rec.owner.uid
    );
    let status = crate::exec::wait_blocking(pid);
    // The job is over when its script is: nothing of it may linger.
    let oom = match &hier {
        Some(h) => {
            let gone = cgroup::wait_for(Duration::from_secs(30), || {
                h.signal(&cg, false, libc::SIGKILL);
                h.step_pids(&cg).is_empty()
            });
            if !gone {
                tracing::error!(
                    "[job {job_id}] processes survive SIGKILL: {:?}",
                    h.step_pids(&cg)
                );
            }
            let n = h.oom_kills(&cg);
            if let Err(e) = h.remove_step(&cg) {
                tracing::warn!("[job {job_id}] step cgroup: {e}");
            }
            n
        }
        None => {
            crate::track::signal_session(pid, nix::sys::signal::Signal::SIGKILL);
            0
        }
    };
    if oom > 0 {
        tracing::error!(
            "[job {job_id}] Detected {oom} oom_kill event{} in StepId={job_id}.batch. Some of the step tasks have been OOM Killed.",
            if oom == 1 { "" } else { "s" }
        );
    }
    crate::exec::remove_batch_dir(&plan.batch_dir);
    tracing::info!("[job {job_id}] script ended, status {status:#x}");
    (job_rc(status, oom), 0)
}

/// REQUEST_COMPLETE_BATCH_SCRIPT, retried until the controller answers.
fn report(rec: &JobRecord, conf: &SlurmConf, job_rc: u32, slurm_rc: i32) {
    let auth = slurm_rpc::daemon::auth_ctx(conf, rec.slurm_user_uid);
    let timeout = Duration::from_secs(u64::from(conf.message_timeout.max(1)));
    let ctld = Controller::new(
        auth,
        crate::ctld::hosts_from_conf(conf),
        rec.ctld_protocol,
        timeout,
    );
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!("[job {}] stepd: tokio: {e}", rec.job_id);
            return;
        }
    };
    rt.block_on(ctld.complete_batch(
        &rec.node.node_name,
        rec.job_id,
        rec.owner.uid,
        job_rc,
        slurm_rc,
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec() -> JobRecord {
        JobRecord {
            job_id: 42,
            owner: Owner {
                uid: 1000,
                gid: 100,
                user_name: "alice".into(),
                groups: vec![100, 27],
            },
            node_list: "n[1-2]".into(),
            partition: Some("debug".into()),
            work_dir: Some("/home/alice/dir with\nnewline\\".into()),
            node: NodeCtx {
                node_name: "n1".into(),
                hostname: "n1".into(),
                cluster_name: "c".into(),
                conf_path: "/etc/slurm/slurm.conf".into(),
                spool_dir: "/var/spool/slurmd".into(),
                job_file_append: true,
                rlimits_except: vec!["NOFILE".into(), "CORE".into()],
            },
            protocol: ProtocolVersion::V22_05,
            env_protocol: ProtocolVersion::V24_11,
            ctld_protocol: Some(ProtocolVersion::V24_11),
            slurm_user_uid: 64030,
            cgroup_root: Some("slurm".into()),
            log_file: None,
            log_level: "INFO".into(),
            extra_env: vec![
                ("SLURM_JOB_GPUS".into(), "1,3".into()),
                ("X".into(), "a=b".into()),
            ],
        }
    }

    #[test]
    fn record_round_trip() {
        let r = rec();
        let t = r.to_text();
        assert_eq!(t.lines().count(), 23, "{t}");
        assert_eq!(JobRecord::from_text(&t).unwrap(), r);
        let mut none = rec();
        none.partition = None;
        none.cgroup_root = None;
        none.ctld_protocol = None;
        none.owner.groups = vec![];
        assert_eq!(JobRecord::from_text(&none.to_text()).unwrap(), none);
    }

    #[test]
    fn record_errors() {
        assert!(matches!(
            JobRecord::from_text("job_id=1\n"),
            Err(StateError::Missing("uid"))
        ));
        let bad = |t: &str| match JobRecord::from_text(t) {
            Err(StateError::Bad(n, e)) => (n, e),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            bad("job_id=x\n"),
            (1, LineError::NotNumber("job_id".into()))
        );
        assert_eq!(
            bad("job_id=1\nprotocol=9.99\n"),
            (2, LineError::UnknownRelease("protocol".into()))
        );
        assert_eq!(bad("garbage\n"), (1, LineError::NoEquals));
        assert_eq!(bad("job_id=1\nenv=X\n"), (2, LineError::EnvNoEquals));
        // The texts the supervisor logs.
        let text = |t: &str| JobRecord::from_text(t).unwrap_err().to_string();
        assert_eq!(
            text("job_id=x\n"),
            "job record: line 1: job_id: not a number"
        );
        assert_eq!(
            text("job_id=1\nprotocol=9.99\n"),
            "job record: line 2: protocol: unknown release"
        );
        assert_eq!(text("garbage\n"), "job record: line 1: no '='");
        assert_eq!(text("job_id=1\nenv=X\n"), "job record: line 2: env: no '='");
        // Unknown keys from a newer daemon are skipped.
        let t = format!("{}future_key=1\n", rec().to_text());
        assert_eq!(JobRecord::from_text(&t).unwrap(), rec());
    }

    #[test]
    fn hierarchy_errors() {
        let t = tempfile::tempdir().unwrap();
        let conf = t.path().join("slurm.conf");
        let cc = t.path().join("cgroup.conf");
        std::fs::write(&cc, "CgroupPlugin=cgroup/v9\n").unwrap();
        let e = hierarchy(&conf, "slurm").unwrap_err();
        assert!(matches!(
            e,
            HierarchyError::Cgroup(cgroup::CgroupError::UnknownPlugin(_))
        ));
        assert_eq!(e.errno(), errno::ESLURMD_SETUP_ENVIRONMENT_ERROR);
        assert!(
            e.to_string()
                .starts_with("cgroup.conf: CgroupPlugin=cgroup/v9 "),
            "{e}"
        );
        std::fs::write(&cc, "ConstrainCores=maybe\n").unwrap();
        let e = hierarchy(&conf, "slurm").unwrap_err();
        let HierarchyError::Conf { path, source } = &e else {
            panic!("{e:?}");
        };
        assert_eq!(path, &cc);
        assert_eq!(e.to_string(), format!("{}: {source}", cc.display()));
        assert_eq!(e.errno(), errno::ESLURMD_SETUP_ENVIRONMENT_ERROR);
    }

    #[test]
    fn state_dir_files() {
        let t = tempfile::tempdir().unwrap();
        let spool = t.path().display().to_string();
        let sd = StateDir::new(&spool, 42);
        let v = ProtocolVersion::V24_11;
        let mut msg = BatchJobLaunchMsg {
            job_id: 42,
            script: Some("#!/bin/sh\n".into()),
            ..Default::default()
        };
        msg.cred.cred_version = v.to_wire();
        sd.create(&rec(), &slurm_wire::pack::encode_to_vec(&msg, v))
            .unwrap();
        assert_eq!(sd.record().unwrap(), rec());
        assert_eq!(sd.launch(v).unwrap(), msg);
        // A launch message cut short: the script cannot start.
        let full = std::fs::read(sd.file("launch")).unwrap();
        sd.write("launch", &full[..full.len() / 2]).unwrap();
        let e = sd.launch(v).unwrap_err();
        let StateError::Launch(d) = &e else {
            panic!("{e:?}");
        };
        assert_eq!(e.to_string(), format!("launch message: {d}"));
        assert_eq!(e.errno(), errno::ESLURMD_EXECVE_FAILED);
        sd.write("launch", &full).unwrap();
        assert_eq!(sd.result(), None);
        assert!(!sd.supervisor_alive());
        sd.set_result(SIG_OOM, 0).unwrap();
        assert_eq!(sd.result(), Some((253, 0)));
        assert!(!sd.reported());
        sd.set_reported().unwrap();
        assert!(sd.reported());
        let listed = StateDir::list(&spool);
        assert_eq!(listed, vec![(42, sd.clone())]);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&sd.0).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        sd.remove();
        assert!(StateDir::list(&spool).is_empty());
    }

    #[test]
    fn the_state_directory_must_be_roots_alone() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let spool = dir.path().to_str().unwrap().to_string();
        // A user's link where the state directory goes.
        let theirs = dir.path().join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        std::os::unix::fs::symlink(&theirs, dir.path().join(STATE_DIR)).unwrap();
        let sd = StateDir::new(&spool, 44);
        let unsafe_parent = |e: StateError| {
            let me = nix::unistd::geteuid().as_raw();
            let parent = dir.path().join(STATE_DIR);
            assert_eq!(
                e.to_string(),
                format!(
                    "{}: {} must be a directory of uid {me} that no one else can write",
                    sd.0.display(),
                    parent.display()
                )
            );
            assert!(
                matches!(e, StateError::UnsafeParent { parent: p, uid, .. } if p == parent && uid == me)
            );
        };
        unsafe_parent(sd.create(&rec(), b"").unwrap_err());
        assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 0);
        // One every user can write.
        std::fs::remove_file(dir.path().join(STATE_DIR)).unwrap();
        std::fs::create_dir(dir.path().join(STATE_DIR)).unwrap();
        std::fs::set_permissions(
            dir.path().join(STATE_DIR),
            std::fs::Permissions::from_mode(0o777),
        )
        .unwrap();
        unsafe_parent(sd.create(&rec(), b"").unwrap_err());
        std::fs::set_permissions(
            dir.path().join(STATE_DIR),
            std::fs::Permissions::from_mode(0o700),
        )
        .unwrap();
        sd.create(&rec(), b"").unwrap();
    }

    #[test]
    fn a_pending_notice_is_taken_once() {
        let dir = tempfile::tempdir().unwrap();
        let spool = dir.path().to_str().unwrap().to_string();
        let sd = StateDir::new(&spool, 43);
        sd.create(&rec(), b"").unwrap();
        assert_eq!(sd.take_pending_notice(), None);
        sd.set_pending_notice("*** JOB 43 ***\n").unwrap();
        // The daemon and the supervisor both try: one of them gets it.
        let got: Vec<_> = std::thread::scope(|s| {
            let a = s.spawn(|| sd.take_pending_notice());
            let b = s.spawn(|| sd.take_pending_notice());
            [a.join().unwrap(), b.join().unwrap()]
        })
        .into_iter()
        .flatten()
        .collect();
        assert_eq!(got, ["*** JOB 43 ***\n"]);
        assert_eq!(sd.take_pending_notice(), None);
    }

    #[test]
    fn oom_wins_over_the_exit_status() {
        assert_eq!(job_rc(3 << 8, 0), 3 << 8);
        assert_eq!(job_rc(9, 1), SIG_OOM);
        assert_eq!(job_rc(0, 2), SIG_OOM);
    }
}
