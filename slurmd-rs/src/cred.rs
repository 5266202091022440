//! Job credential checks.
//!
//! The RPC that carries a launch must itself come from SlurmUser or root.
//! A credential that carries a signature must verify: a MUNGE credential
//! made by SlurmUser or root whose payload is exactly the packed fields.
//! Stock slurmctld (22.05 to 26.05) sends batch credentials unsigned
//! (`slurm_cred_create(.., sign_it=false, ..)`): they are trusted through
//! the RPC's own authentication, as stock slurmd does. Step launches from
//! srun (a later slice) must be signed.

use slurm_conf::Hostlist;
use slurm_wire::auth::{AuthError, AuthPlugin};
use slurm_wire::msg::cred::{JobCred, JobCredArg};
use slurm_wire::msg::launch::LaunchTasksRequestMsg;
use slurm_wire::ProtocolVersion;
use std::collections::HashMap;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::Mutex;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CredError {
    #[error("launch RPC from uid {0}, which is neither SlurmUser nor root")]
    UnauthorizedSender(u32),
    #[error("credential has no signature")]
    Unsigned,
    #[error("credential signature does not verify: {0}")]
    BadSignature(AuthError),
    #[error("credential signed by uid {0}, which is neither SlurmUser nor root")]
    WrongSigner(u32),
    #[error("credential signature does not cover these fields (altered credential)")]
    PayloadMismatch,
    #[error("credential is for job {cred}, the launch for job {msg}")]
    JobMismatch { cred: u32, msg: u32 },
    #[error("credential does not include node {0}")]
    NotThisNode(String),
    #[error("credential names uid/gid {0}, which is refused")]
    BadIdentity(u32),
    #[error("credential of job {0} revoked: the job ended on this node")]
    Revoked(u32),
    #[error("credential of job {0} expired")]
    Expired(u32),
    #[error("launch counts do not fit the credential: {0}")]
    BadCounts(CountError),
    #[error("launch lists do not fit the credential: {0}")]
    BadLists(ListError),
    #[error("launch too large: {0}")]
    TooLarge(SizeError),
    #[error("credential of step {0}.{1} already used here (replayed)")]
    Replayed(u32, u32),
}

/// How a launch's task counts disagree with its credential.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CountError {
    #[error("{nodes} nodes, the step has {step_nodes}")]
    Nodes { nodes: usize, step_nodes: usize },
    #[error("{total} task ids for ntasks {ntasks}")]
    TaskIds { total: u64, ntasks: u32 },
    #[error("no task list for node index {0}")]
    NoTaskList(usize),
    #[error("{tasks} tasks on {node}, at most {limit} ({cpus} CPUs)")]
    TooManyHere {
        tasks: usize,
        node: String,
        limit: u32,
        cpus: u32,
    },
    #[error("task id {id} of {ntasks}")]
    TaskId { id: u32, ntasks: u32 },
}

/// A launch list longer or shorter than the credential allows.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ListError {
    /// `what`: the credential's list or the launch's.
    #[error("{n} groups in the {what}, at most {MAX_GROUPS}", MAX_GROUPS = MAX_GROUPS)]
    Groups { n: usize, what: &'static str },
    #[error("{values} CPUs-per-task values in {runs} runs for {nodes} nodes")]
    CpusPerTaskRuns {
        values: usize,
        runs: usize,
        nodes: usize,
    },
    #[error("CPUs-per-task runs cover {covered} of {nodes} nodes")]
    CpusPerTaskCover { covered: u64, nodes: usize },
}

/// Argv and environment beyond what execve takes.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SizeError {
    #[error("argv and environment of {0} bytes, at most {MAX_EXEC_BYTES}", MAX_EXEC_BYTES = MAX_EXEC_BYTES)]
    Exec(u64),
    #[error("SPANK environment of {0} bytes, at most {MAX_EXEC_BYTES}", MAX_EXEC_BYTES = MAX_EXEC_BYTES)]
    Spank(u64),
    #[error(
        "{tasks} tasks of {exec}+{spank} bytes of argv and environment, \
         at most {MAX_NODE_EXEC_BYTES} in all",
        MAX_NODE_EXEC_BYTES = MAX_NODE_EXEC_BYTES
    )]
    Node { tasks: usize, exec: u64, spank: u64 },
}

impl CredError {
    /// The Slurm error code for a launch refused for this reason.
    pub fn errno(&self) -> i32 {
        use slurm_wire::errno::*;
        match self {
            CredError::UnauthorizedSender(_) => ESLURM_USER_ID_MISSING,
            CredError::Revoked(_) => ESLURMD_CREDENTIAL_REVOKED,
            CredError::BadCounts(_) => ESLURM_BAD_TASK_COUNT,
            CredError::Expired(_) => ESLURMD_CREDENTIAL_EXPIRED,
            CredError::Replayed(..) => ESLURMD_CREDENTIAL_REPLAYED,
            // What execve itself would answer, before slurmd copies it.
            CredError::TooLarge(_) => libc::E2BIG,
            _ => ESLURMD_INVALID_JOB_CREDENTIAL,
        }
    }
}

/// Who may sign credentials and send launches.
#[derive(Debug, Clone, Copy)]
pub struct Trusted {
    pub slurm_user_uid: u32,
}

impl Trusted {
    pub fn allows(&self, uid: u32) -> bool {
        uid == 0 || uid == self.slurm_user_uid
    }
}

/// Verifies a signed credential packed at `v` (its own `cred_version`).
pub fn verify_signature(
    plugin: &dyn AuthPlugin,
    cred: &JobCred,
    v: ProtocolVersion,
    trusted: Trusted,
) -> Result<(), CredError> {
    let sig = cred.signature.as_deref().ok_or(CredError::Unsigned)?;
    // munged's own replay check is not ours: several slurmd may share it.
    let id = plugin
        .verify_replay_ok(sig)
        .map_err(CredError::BadSignature)?;
    if !trusted.allows(id.uid) {
        return Err(CredError::WrongSigner(id.uid));
    }
    if id.payload != cred.signed_bytes(v) {
        return Err(CredError::PayloadMismatch);
    }
    Ok(())
}

/// The checks for REQUEST_BATCH_JOB_LAUNCH.
///
/// `msg_job_id` is the launch's own job id (`None` from 25.11, where the
/// credential is the only source).
pub fn check_batch_cred(
    plugin: &dyn AuthPlugin,
    sender_uid: u32,
    cred: &JobCred,
    cred_version: ProtocolVersion,
    msg_job_id: Option<u32>,
    node_name: &str,
    trusted: Trusted,
) -> Result<(), CredError> {
    if !trusted.allows(sender_uid) {
        return Err(CredError::UnauthorizedSender(sender_uid));
    }
    if cred.signature.is_some() {
        verify_signature(plugin, cred, cred_version, trusted)?;
    }
    let a = &cred.arg;
    if let Some(j) = msg_job_id {
        if j != a.step_id.job_id {
            return Err(CredError::JobMismatch {
                cred: a.step_id.job_id,
                msg: j,
            });
        }
    }
    let hosts = a.job_hostlist.as_deref().unwrap_or_default();
    if !hosts.is_empty() {
        let ok = Hostlist::parse(hosts)
            .map(|h| h.contains(node_name))
            .unwrap_or(false);
        if !ok {
            return Err(CredError::NotThisNode(node_name.to_string()));
        }
    }
    for id in [a.id.uid, a.id.gid] {
        if id == slurm_wire::auth::SLURM_AUTH_NOBODY || id == u32::MAX {
            return Err(CredError::BadIdentity(id));
        }
    }
    Ok(())
}

/// Stock's MaxTasksPerNode default: srun's `--overcommit` may start more
/// tasks than CPUs (stock only logs it), never more than this per node.
pub const MAX_TASKS_PER_NODE: u32 = 512;

/// Most bytes of a task's argv and environment, each string with its NUL
/// and its pointer: Linux's execve refuses more than 3/4 of an 8 MiB
/// stack limit whatever the rlimit, so nothing larger can run anyway.
pub const MAX_EXEC_BYTES: u64 = 8 << 20;

/// Most bytes of argv and environment over all the tasks of a step on one
/// node: each task gets its own copy, made in slurmd before it forks.
pub const MAX_NODE_EXEC_BYTES: u64 = 512 << 20;

/// Linux's NGROUPS_MAX: setgroups refuses a longer list.
pub const MAX_GROUPS: usize = 65_536;

/// What a NULL-terminated string array costs execve (0 for a NULL entry,
/// which ends it early; counted anyway, it was sent).
fn exec_bytes(list: &[Option<String>]) -> u64 {
    list.iter()
        .map(|s| s.as_ref().map_or(0, |s| s.len() as u64) + 1 + 8)
        .fold(0u64, u64::saturating_add)
}

/// The sizes of a launch's lists: argv and environment within what execve
/// takes, per task and over this node's tasks; group lists within what
/// setgroups takes; the CPUs-per-task runs one value per run, covering
/// the step's nodes. Pure and linear in the lists.
fn check_launch_lists(
    m: &LaunchTasksRequestMsg,
    nnodes: usize,
    tasks_here: usize,
) -> Result<(), CredError> {
    let a = &m.cred.cred.arg;
    let exec = exec_bytes(&m.argv).saturating_add(exec_bytes(&m.env));
    if exec > MAX_EXEC_BYTES {
        return Err(CredError::TooLarge(SizeError::Exec(exec)));
    }
    let spank = exec_bytes(&m.spank_job_env);
    if spank > MAX_EXEC_BYTES {
        return Err(CredError::TooLarge(SizeError::Spank(spank)));
    }
    let all = exec.saturating_add(spank).saturating_mul(tasks_here as u64);
    if all > MAX_NODE_EXEC_BYTES {
        return Err(CredError::TooLarge(SizeError::Node {
            tasks: tasks_here,
            exec,
            spank,
        }));
    }
    for (what, n) in [("credential", a.id.gids.len()), ("launch", m.gids.len())] {
        if n > MAX_GROUPS {
            return Err(CredError::BadLists(ListError::Groups { n, what }));
        }
    }
    let (vals, reps) = (&m.cpt_compact_array, &m.cpt_compact_reps);
    if vals.len() != reps.len() || vals.len() > nnodes {
        return Err(CredError::BadLists(ListError::CpusPerTaskRuns {
            values: vals.len(),
            runs: reps.len(),
            nodes: nnodes,
        }));
    }
    let covered = reps
        .iter()
        .map(|&r| u64::from(r))
        .fold(0u64, u64::saturating_add);
    if !vals.is_empty() && covered < nnodes as u64 {
        return Err(CredError::BadLists(ListError::CpusPerTaskCover {
            covered,
            nodes: nnodes,
        }));
    }
    Ok(())
}

/// The entry of a run-length list (`values[i]` repeated `reps[i]` times)
/// at `idx`, as stock's `slurm_get_rep_count_inx` finds it.
fn run_value<T: Copy>(values: &[T], reps: &[u32], idx: usize) -> Option<T> {
    let mut end = 0u64;
    for (v, &r) in values.iter().zip(reps) {
        end = end.saturating_add(u64::from(r));
        if (idx as u64) < end {
            return Some(*v);
        }
    }
    None
}

/// The counts of a step launch against its credential, before anything is
/// planned: the node count of the step, the task count (`ntasks`, every
/// node's list, this node's ids), the tasks per node (at most the
/// larger of `max_per_node` and the job's CPUs here) and the sizes of its
/// lists (`check_launch_lists`). Then, as stock does, the fields the
/// credential decides are taken from it, not from the launch: CPUs per
/// task (from the per-node runs), this node's CPUs and core spec. Pure
/// and linear in the lists, so it may run on an unverified credential: a
/// forged one fails its signature check next.
pub fn check_launch_counts(
    m: &mut LaunchTasksRequestMsg,
    node_name: &str,
    max_per_node: u32,
) -> Result<(), CredError> {
    let bad = |e: CountError| Err(CredError::BadCounts(e));
    let a = &m.cred.cred.arg;
    let step_nodes = Hostlist::parse(a.step_hostlist.as_deref().unwrap_or_default())
        .map(|h| h.len())
        .unwrap_or(0);
    let nnodes = m.global_task_ids.len();
    if nnodes == 0 || nnodes > step_nodes {
        return bad(CountError::Nodes {
            nodes: nnodes,
            step_nodes,
        });
    }
    let total: u64 = m.global_task_ids.iter().map(|t| t.len() as u64).sum();
    if total != u64::from(m.ntasks) {
        return bad(CountError::TaskIds {
            total,
            ntasks: m.ntasks,
        });
    }
    // This node's share: its place in the step's list.
    let list = m
        .complete_nodelist
        .as_deref()
        .filter(|s| !s.is_empty())
        .or(a.step_hostlist.as_deref())
        .unwrap_or_default();
    let Some(idx) = Hostlist::parse(list)
        .ok()
        .and_then(|h| h.position(node_name))
    else {
        return Ok(()); // refused later as not in the step
    };
    let Some(ids) = m.global_task_ids.get(idx) else {
        return bad(CountError::NoTaskList(idx));
    };
    let cpus = job_cpus_here(a, node_name);
    let limit = max_per_node.max(cpus);
    if ids.len() as u64 > u64::from(limit) {
        return bad(CountError::TooManyHere {
            tasks: ids.len(),
            node: node_name.to_string(),
            limit,
            cpus,
        });
    }
    if let Some(t) = ids.iter().find(|&&t| t >= m.ntasks) {
        return bad(CountError::TaskId {
            id: *t,
            ntasks: m.ntasks,
        });
    }
    check_launch_lists(m, nnodes, ids.len())?;
    let core_spec = a.job_core_spec;
    if let Some(c) = run_value(&m.cpt_compact_array, &m.cpt_compact_reps, idx) {
        m.cpus_per_task = c;
    }
    m.node_cpus = u16::try_from(cpus).unwrap_or(u16::MAX);
    m.job_core_spec = core_spec;
    Ok(())
}

/// The job's CPUs on `node` from the credential's CPU groups (0 when the
/// node is not in the job).
fn job_cpus_here(a: &JobCredArg, node: &str) -> u32 {
    let Some(idx) = a
        .job_hostlist
        .as_deref()
        .and_then(|l| Hostlist::parse(l).ok())
        .and_then(|h| h.position(node))
    else {
        return 0;
    };
    crate::env::cpus_of_node(&a.cpu_array, idx).unwrap_or(0)
}

/// Stock's credential lifetime (`AuthInfo=cred_expire=`, 120 s by default,
/// at least 5).
pub fn cred_expire(auth_info: Option<&str>) -> i64 {
    auth_info
        .unwrap_or_default()
        .split(',')
        .find_map(|kv| kv.trim().strip_prefix("cred_expire="))
        .and_then(|v| v.trim().parse::<i64>().ok())
        .filter(|&v| v >= 5)
        .unwrap_or(120)
}

/// Most revoked jobs remembered; past it the one whose expiry is nearest
/// goes first (thousands of jobs ending on one node within one credential
/// lifetime are not expected).
const MAX_REVOKED: usize = 65_536;

#[derive(Debug, Clone, Copy, PartialEq)]
struct RevokedJob {
    /// Credentials created up to then are refused.
    revoked: i64,
    /// When the record may go: the job's end plus the credential
    /// lifetime, after which every credential it refuses has expired.
    /// None until the job's end on this node (epilog) is done.
    expires: Option<i64>,
}

/// Stock's credential-revocation state (`cred_revoke`, `cred_revoked`,
/// `cred_begin_expiration`): a job ended on this node refuses credentials
/// created before it ended. Kept in `<spool>/cred_revoked` (text: job id,
/// revoke time, expiry or 0), rewritten on each change, so that a restart
/// within a credential's lifetime still refuses them.
#[derive(Debug)]
pub struct Revocations {
    file: Option<PathBuf>,
    window: i64,
    jobs: Mutex<HashMap<u32, RevokedJob>>,
}

impl Revocations {
    /// The state saved in `spool_dir` (None: memory only), credentials
    /// living `window` seconds.
    pub fn load(spool_dir: Option<&str>, window: i64, now: i64) -> Self {
        let file = spool_dir.map(|d| PathBuf::from(d).join("cred_revoked"));
        let mut jobs = HashMap::new();
        for f in load_rows(file.as_deref(), MAX_REVOKED) {
            if let [job, revoked, expires] = f[..] {
                let Ok(job) = u32::try_from(job) else {
                    continue;
                };
                let expires = (expires != 0).then_some(expires);
                if expires.is_none_or(|e| e >= now) {
                    jobs.insert(job, RevokedJob { revoked, expires });
                }
            }
        }
        Revocations {
            file,
            window,
            jobs: Mutex::new(jobs),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u32, RevokedJob>> {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// REQUEST_TERMINATE_JOB and its kind: credentials of `job_id` made
    /// up to `time` are refused from now on.
    pub fn revoke(&self, job_id: u32, time: i64) {
        let mut jobs = self.lock();
        let e = jobs.entry(job_id).or_insert(RevokedJob {
            revoked: time,
            expires: None,
        });
        e.revoked = e.revoked.max(time);
        e.expires = None;
        if jobs.len() > MAX_REVOKED {
            let oldest = jobs
                .iter()
                .min_by_key(|(_, j)| j.expires.unwrap_or(i64::MAX))
                .map(|(id, _)| *id);
            if let Some(id) = oldest {
                tracing::warn!("revocation of job {id} forgotten: {MAX_REVOKED} jobs revoked");
                jobs.remove(&id);
            }
        }
        self.save(&jobs);
    }

    /// The job's end on this node is done: its record may go once every
    /// credential it refuses has expired.
    pub fn begin_expiration(&self, job_id: u32, now: i64) {
        let mut jobs = self.lock();
        if let Some(j) = jobs.get_mut(&job_id) {
            j.expires = Some(now.saturating_add(self.window));
        }
        jobs.retain(|_, j| j.expires.is_none_or(|e| e >= now));
        self.save(&jobs);
    }

    /// ESLURMD_CREDENTIAL_REVOKED for a credential of an ended job made
    /// before it ended (a requeued job's new credential is newer).
    pub fn check(&self, a: &JobCredArg) -> Result<(), CredError> {
        let job = a.step_id.job_id;
        match self.lock().get(&job) {
            Some(j) if a.ctime <= j.revoked => Err(CredError::Revoked(job)),
            _ => Ok(()),
        }
    }

    fn save(&self, jobs: &HashMap<u32, RevokedJob>) {
        let Some(file) = &self.file else { return };
        let mut text = String::new();
        for (id, j) in jobs {
            text.push_str(&format!("{id} {} {}\n", j.revoked, j.expires.unwrap_or(0)));
        }
        save_state(file, &text, "credential revocations");
    }
}

/// The first `max` lines of a state file written by [`save_state`], each
/// as its numbers (none when there is no file).
fn load_rows(file: Option<&std::path::Path>, max: usize) -> Vec<Vec<i64>> {
    let Some(text) = file.and_then(|f| std::fs::read_to_string(f).ok()) else {
        return Vec::new();
    };
    text.lines()
        .take(max)
        .map(|l| {
            l.split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect()
        })
        .collect()
}

/// Replaces `file` (in the root-owned spool) with `text`: written to a
/// fresh sibling, never through a link, then renamed over it.
fn save_state(file: &std::path::Path, text: &str, what: &str) {
    let tmp = file.with_extension("new");
    let _ = std::fs::remove_file(&tmp);
    let r = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp)
        .and_then(|mut f| {
            f.write_all(text.as_bytes())?;
            f.sync_all()
        })
        .and_then(|()| std::fs::rename(&tmp, file));
    if let Err(e) = r {
        tracing::error!("cannot save {what} in {}: {e}", file.display());
    }
}

/// Most step credentials remembered for replay detection; past it the
/// one that expires first goes (it would be refused as expired soon).
const MAX_SEEN: usize = 65_536;

/// A step credential's identity: its step and creation time, as stock
/// compares them.
type SeenKey = (u32, u32, u32, i64);

/// Stock's credential state list (`cred_state`, 22.05 to 26.05): each step
/// credential is accepted once; a second launch with it, within its
/// lifetime, is refused with ESLURMD_CREDENTIAL_REPLAYED. Only verified
/// credentials are recorded, so a forged copy cannot burn a real one.
/// Kept in `<spool>/cred_state` (text: job, step, het component, ctime),
/// so that a restart within a credential's lifetime still refuses them.
#[derive(Debug)]
pub struct SeenCredentials {
    file: Option<PathBuf>,
    window: i64,
    seen: Mutex<HashMap<SeenKey, i64>>,
}

impl SeenCredentials {
    /// The state saved in `spool_dir` (None: memory only), credentials
    /// living `window` seconds; those expired by `now` are dropped.
    pub fn load(spool_dir: Option<&str>, window: i64, now: i64) -> Self {
        let file = spool_dir.map(|d| PathBuf::from(d).join("cred_state"));
        let mut seen = HashMap::new();
        for f in load_rows(file.as_deref(), MAX_SEEN) {
            let [job, step, het, ctime] = f[..] else {
                continue;
            };
            let (Ok(job), Ok(step), Ok(het)) =
                (u32::try_from(job), u32::try_from(step), u32::try_from(het))
            else {
                continue;
            };
            let expires = ctime.saturating_add(window);
            if expires >= now {
                seen.insert((job, step, het, ctime), expires);
            }
        }
        SeenCredentials {
            file,
            window,
            seen: Mutex::new(seen),
        }
    }

    /// Records a verified step credential at `now`, or refuses it as
    /// replayed when it was recorded before.
    pub fn admit(&self, a: &JobCredArg, now: i64) -> Result<(), CredError> {
        let s = a.step_id;
        let key = (s.job_id, s.step_id, s.step_het_comp, a.ctime);
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.retain(|_, &mut e| e >= now);
        if seen.contains_key(&key) {
            return Err(CredError::Replayed(s.job_id, s.step_id));
        }
        if seen.len() >= MAX_SEEN {
            let first = seen.iter().min_by_key(|(_, &e)| e).map(|(k, _)| *k);
            if let Some(k) = first {
                tracing::warn!(
                    "credential of {}.{} forgotten: {MAX_SEEN} remembered",
                    k.0,
                    k.1
                );
                seen.remove(&k);
            }
        }
        seen.insert(key, a.ctime.saturating_add(self.window));
        if let Some(file) = &self.file {
            let mut text = String::new();
            for (j, st, h, c) in seen.keys() {
                text.push_str(&format!("{j} {st} {h} {c}\n"));
            }
            save_state(file, &text, "credential states");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slurm_wire::auth::{Audience, Identity, AUTH_PLUGIN_MUNGE};
    use slurm_wire::msg::cred::JobCredArg;
    use slurm_wire::types::StepId;

    /// A stand-in signer: "SIG:<uid>:<hex payload>". Real munge is used by
    /// the integration tests.
    struct Fake;
    impl AuthPlugin for Fake {
        fn plugin_id(&self) -> u32 {
            AUTH_PLUGIN_MUNGE
        }
        fn create(&self, payload: &[u8], _: Audience) -> Result<String, AuthError> {
            Ok(format!("SIG:0:{}", hex(payload)))
        }
        fn verify(&self, c: &str) -> Result<Identity, AuthError> {
            let mut it = c.splitn(3, ':');
            let (Some("SIG"), Some(uid), Some(p)) = (it.next(), it.next(), it.next()) else {
                return Err(AuthError::Invalid("not a fake cred".into()));
            };
            Ok(Identity {
                uid: uid.parse().unwrap(),
                gid: 0,
                payload: unhex(p),
            })
        }
    }
    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }
    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len() / 2)
            .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
            .collect()
    }

    const V: ProtocolVersion = ProtocolVersion::V24_11;
    const T: Trusted = Trusted {
        slurm_user_uid: 64030,
    };

    fn cred(job: u32) -> JobCred {
        let mut c = JobCred {
            arg: JobCredArg {
                step_id: StepId::job(job),
                job_hostlist: Some("n[1-3]".into()),
                ..Default::default()
            },
            signature: None,
        };
        c.arg.id.uid = 1000;
        c.arg.id.gid = 1000;
        c
    }

    fn signed(job: u32, signer: u32) -> JobCred {
        let mut c = cred(job);
        c.signature = Some(format!("SIG:{signer}:{}", hex(&c.signed_bytes(V))));
        c
    }

    #[test]
    fn accepts_signed_by_root_or_slurm_user_and_unsigned_from_trusted_rpc() {
        for signer in [0, 64030] {
            assert_eq!(
                check_batch_cred(&Fake, 0, &signed(5, signer), V, Some(5), "n2", T),
                Ok(())
            );
        }
        assert_eq!(
            check_batch_cred(&Fake, 64030, &cred(5), V, None, "n2", T),
            Ok(())
        );
    }

    #[test]
    fn refuses_forgeries() {
        assert_eq!(
            check_batch_cred(&Fake, 1000, &cred(5), V, Some(5), "n2", T),
            Err(CredError::UnauthorizedSender(1000))
        );
        assert_eq!(
            check_batch_cred(&Fake, 0, &signed(5, 1000), V, Some(5), "n2", T),
            Err(CredError::WrongSigner(1000))
        );
        let mut altered = signed(5, 0);
        altered.arg.id.uid = 0;
        assert_eq!(
            check_batch_cred(&Fake, 0, &altered, V, Some(5), "n2", T),
            Err(CredError::PayloadMismatch)
        );
        // Signed at another version than the one it claims.
        let s = signed(5, 0);
        assert_eq!(
            verify_signature(&Fake, &s, ProtocolVersion::V22_05, T),
            Err(CredError::PayloadMismatch)
        );
        let mut garbage = cred(5);
        garbage.signature = Some("MUNGE:junk:".into());
        assert!(matches!(
            check_batch_cred(&Fake, 0, &garbage, V, Some(5), "n2", T),
            Err(CredError::BadSignature(_))
        ));
        assert_eq!(
            check_batch_cred(&Fake, 0, &signed(5, 0), V, Some(6), "n2", T),
            Err(CredError::JobMismatch { cred: 5, msg: 6 })
        );
        assert_eq!(
            check_batch_cred(&Fake, 0, &signed(5, 0), V, Some(5), "n9", T),
            Err(CredError::NotThisNode("n9".into()))
        );
        let mut nobody = cred(5);
        nobody.arg.id.uid = 99;
        assert_eq!(
            check_batch_cred(&Fake, 0, &nobody, V, Some(5), "n1", T),
            Err(CredError::BadIdentity(99))
        );
        assert_eq!(
            verify_signature(&Fake, &cred(5), V, T),
            Err(CredError::Unsigned)
        );
    }

    fn step_launch(ids: Vec<Vec<u32>>) -> LaunchTasksRequestMsg {
        let mut c = cred(5);
        c.arg.step_hostlist = Some("n[1-2]".into());
        c.arg.job_hostlist = Some("n[1-2]".into());
        c.arg.cpu_array = vec![slurm_wire::msg::cred::CpuArrayRep { cpus: 4, reps: 2 }];
        LaunchTasksRequestMsg {
            ntasks: ids.iter().map(|t| t.len() as u32).sum(),
            global_task_ids: ids,
            cred: slurm_wire::msg::cred::VersionedCred {
                cred_version: V.to_wire(),
                cred: Box::new(c),
            },
            ..Default::default()
        }
    }

    #[test]
    fn launch_counts_are_bounded_by_the_credential() {
        let ok = step_launch(vec![vec![0, 1], vec![2]]);
        assert_eq!(
            check_launch_counts(&mut ok.clone(), "n1", MAX_TASKS_PER_NODE),
            Ok(())
        );
        // Overcommit up to MaxTasksPerNode, not beyond.
        let many = step_launch(vec![(0..512).collect(), vec![512]]);
        assert_eq!(
            check_launch_counts(&mut many.clone(), "n1", MAX_TASKS_PER_NODE),
            Ok(())
        );
        let refused = |m: &LaunchTasksRequestMsg| {
            matches!(
                check_launch_counts(&mut m.clone(), "n1", MAX_TASKS_PER_NODE),
                Err(CredError::BadCounts(_))
            )
        };
        assert!(refused(&step_launch(vec![
            (0..50_000).collect(),
            (50_000..100_000).collect()
        ])));
        let mut lying = ok.clone();
        lying.ntasks = 1;
        assert!(refused(&lying));
        let mut out_of_range = ok.clone();
        out_of_range.global_task_ids[0][1] = 7;
        assert!(refused(&out_of_range));
        assert!(refused(&step_launch(vec![vec![0], vec![1], vec![2]])));
        assert_eq!(
            CredError::BadCounts(CountError::NoTaskList(0)).errno(),
            slurm_wire::errno::ESLURM_BAD_TASK_COUNT
        );
    }

    #[test]
    fn a_step_credential_is_accepted_once_within_its_lifetime() {
        let dir = tempfile::tempdir().unwrap();
        let spool = dir.path().to_str();
        let seen = SeenCredentials::load(spool, 120, 1000);
        let mut a = cred(5).arg;
        a.step_id.step_id = 0;
        a.ctime = 1000;
        assert_eq!(seen.admit(&a, 1000), Ok(()));
        let replayed = seen.admit(&a, 1001);
        assert_eq!(replayed, Err(CredError::Replayed(5, 0)));
        assert_eq!(
            replayed.unwrap_err().errno(),
            slurm_wire::errno::ESLURMD_CREDENTIAL_REPLAYED
        );
        // Another step, or a credential made later for the same step, is new.
        let mut other = a.clone();
        other.step_id.step_id = 1;
        assert_eq!(seen.admit(&other, 1001), Ok(()));
        let mut later = a.clone();
        later.ctime = 1001;
        assert_eq!(seen.admit(&later, 1001), Ok(()));
        // A restart within the lifetime still knows it.
        let again = SeenCredentials::load(spool, 120, 1050);
        assert_eq!(again.admit(&a, 1050), Err(CredError::Replayed(5, 0)));
        // Past its lifetime the record goes (the credential is expired
        // by then, and refused as such before this check).
        assert_eq!(again.admit(&a, 1121), Ok(()));
        let fresh = SeenCredentials::load(spool, 120, 2000);
        assert_eq!(fresh.admit(&other, 2000), Ok(()));
    }

    fn launch_error(m: &LaunchTasksRequestMsg) -> Option<CredError> {
        check_launch_counts(&mut m.clone(), "n1", MAX_TASKS_PER_NODE).err()
    }

    #[test]
    fn launch_lists_are_bounded_before_use() {
        let ok = step_launch(vec![vec![0, 1], vec![2]]);
        let too_large = |m: &LaunchTasksRequestMsg| matches!(launch_error(m), Some(e @ CredError::TooLarge(_)) if e.errno() == libc::E2BIG);
        let bad_lists = |m: &LaunchTasksRequestMsg| {
            matches!(launch_error(m), Some(e @ CredError::BadLists(_))
                if e.errno() == slurm_wire::errno::ESLURMD_INVALID_JOB_CREDENTIAL)
        };
        // An environment execve could never take.
        let mut env = ok.clone();
        env.env = vec![Some("X=".to_string() + &"y".repeat(1 << 20)); 9];
        assert!(too_large(&env));
        // Millions of empty entries cost their pointers too.
        let mut argv = ok.clone();
        argv.argv = vec![None; 1 << 20];
        assert!(too_large(&argv));
        let mut spank = ok.clone();
        spank.spank_job_env = vec![Some("S".repeat(1 << 20)); 9];
        assert!(too_large(&spank));
        // Each within execve's limit, but copied for 512 tasks.
        let mut wide = step_launch(vec![(0..512).collect(), vec![512]]);
        wide.env = vec![Some("E".repeat(1 << 20)); 2];
        assert!(too_large(&wide));
        wide.env.truncate(1);
        wide.env[0] = Some("E".repeat(4 << 10));
        assert_eq!(launch_error(&wide), None);
        // Group lists setgroups would refuse.
        let mut gids = ok.clone();
        gids.gids = vec![100; MAX_GROUPS + 1];
        assert!(bad_lists(&gids));
        let mut cred_gids = ok.clone();
        cred_gids.cred.cred.arg.id.gids = vec![100; MAX_GROUPS + 1];
        assert!(bad_lists(&cred_gids));
        // CPUs-per-task runs: one value per run, covering the step's nodes.
        let mut cpt = ok.clone();
        cpt.cpt_compact_array = vec![2, 3];
        cpt.cpt_compact_reps = vec![1];
        assert!(bad_lists(&cpt));
        cpt.cpt_compact_reps = vec![1, 0];
        assert!(bad_lists(&cpt));
        cpt.cpt_compact_array = vec![2; 3];
        cpt.cpt_compact_reps = vec![1; 3];
        assert!(bad_lists(&cpt));
        cpt.cpt_compact_array = vec![2];
        cpt.cpt_compact_reps = vec![u32::MAX];
        assert_eq!(launch_error(&cpt), None);
    }

    /// One launch per reason a launch's counts or lists are refused.
    fn refusals() -> Vec<(&'static str, LaunchTasksRequestMsg)> {
        let ok = step_launch(vec![vec![0, 1], vec![2]]);
        let with = |f: &dyn Fn(&mut LaunchTasksRequestMsg)| {
            let mut m = ok.clone();
            f(&mut m);
            m
        };
        vec![
            ("nodes", step_launch(vec![vec![0], vec![1], vec![2]])),
            ("task ids", with(&|m| m.ntasks = 1)),
            (
                "no task list",
                with(&|m| {
                    m.complete_nodelist = Some("n[0-5]".into());
                    m.global_task_ids = vec![vec![0, 1, 2]];
                }),
            ),
            (
                "too many here",
                step_launch(vec![(0..50_000).collect(), (50_000..100_000).collect()]),
            ),
            ("task id", with(&|m| m.global_task_ids[0][1] = 7)),
            (
                "exec",
                with(&|m| m.env = vec![Some("X=".to_string() + &"y".repeat(1 << 20)); 9]),
            ),
            (
                "spank",
                with(&|m| m.spank_job_env = vec![Some("S".repeat(1 << 20)); 9]),
            ),
            ("node", {
                let mut w = step_launch(vec![(0..512).collect(), vec![512]]);
                w.env = vec![Some("E".repeat(1 << 20)); 2];
                w
            }),
            ("groups", with(&|m| m.gids = vec![100; MAX_GROUPS + 1])),
            (
                "cred groups",
                with(&|m| m.cred.cred.arg.id.gids = vec![100; MAX_GROUPS + 1]),
            ),
            (
                "cpt runs",
                with(&|m| {
                    m.cpt_compact_array = vec![2, 3];
                    m.cpt_compact_reps = vec![1];
                }),
            ),
            (
                "cpt cover",
                with(&|m| {
                    m.cpt_compact_array = vec![2, 3];
                    m.cpt_compact_reps = vec![1, 0];
                }),
            ),
        ]
    }

    /// Each reason, and the text the refusal logs (unchanged from when
    /// the reasons were strings).
    #[test]
    fn refusal_reasons_and_texts() {
        use CountError as C;
        use ListError as L;
        use SizeError as S;
        let want: Vec<(CredError, &str)> = vec![
            (
                CredError::BadCounts(C::Nodes {
                    nodes: 3,
                    step_nodes: 2,
                }),
                "launch counts do not fit the credential: 3 nodes, the step has 2",
            ),
            (
                CredError::BadCounts(C::TaskIds { total: 3, ntasks: 1 }),
                "launch counts do not fit the credential: 3 task ids for ntasks 1",
            ),
            (
                CredError::BadCounts(C::NoTaskList(1)),
                "launch counts do not fit the credential: no task list for node index 1",
            ),
            (
                CredError::BadCounts(C::TooManyHere {
                    tasks: 50_000,
                    node: "n1".into(),
                    limit: 512,
                    cpus: 4,
                }),
                "launch counts do not fit the credential: 50000 tasks on n1, at most 512 (4 CPUs)",
            ),
            (
                CredError::BadCounts(C::TaskId { id: 7, ntasks: 3 }),
                "launch counts do not fit the credential: task id 7 of 3",
            ),
            (
                CredError::TooLarge(S::Exec(9_437_283)),
                "launch too large: argv and environment of 9437283 bytes, at most 8388608",
            ),
            (
                CredError::TooLarge(S::Spank(9_437_265)),
                "launch too large: SPANK environment of 9437265 bytes, at most 8388608",
            ),
            (
                CredError::TooLarge(S::Node {
                    tasks: 512,
                    exec: 2_097_170,
                    spank: 0,
                }),
                "launch too large: 512 tasks of 2097170+0 bytes of argv and environment, \
                 at most 536870912 in all",
            ),
            (
                CredError::BadLists(L::Groups {
                    n: 65_537,
                    what: "launch",
                }),
                "launch lists do not fit the credential: 65537 groups in the launch, at most 65536",
            ),
            (
                CredError::BadLists(L::Groups {
                    n: 65_537,
                    what: "credential",
                }),
                "launch lists do not fit the credential: 65537 groups in the credential, \
                 at most 65536",
            ),
            (
                CredError::BadLists(L::CpusPerTaskRuns {
                    values: 2,
                    runs: 1,
                    nodes: 2,
                }),
                "launch lists do not fit the credential: 2 CPUs-per-task values in 1 runs for 2 nodes",
            ),
            (
                CredError::BadLists(L::CpusPerTaskCover {
                    covered: 1,
                    nodes: 2,
                }),
                "launch lists do not fit the credential: CPUs-per-task runs cover 1 of 2 nodes",
            ),
        ];
        let cases = refusals();
        assert_eq!(cases.len(), want.len());
        for ((name, m), (err, text)) in cases.iter().zip(want) {
            let got = launch_error(m);
            assert_eq!(got.as_ref(), Some(&err), "{name}");
            assert_eq!(err.to_string(), text, "{name}");
        }
    }

    #[test]
    fn launch_takes_the_credentials_cpus_not_its_own() {
        let mut m = step_launch(vec![vec![0, 1], vec![2]]);
        m.cpus_per_task = 60_000;
        m.node_cpus = 60_000;
        m.job_core_spec = 7;
        m.cpt_compact_array = vec![3, 1];
        m.cpt_compact_reps = vec![1, 1];
        m.cred.cred.arg.job_core_spec = slurm_wire::pack::NO_VAL16;
        assert_eq!(
            check_launch_counts(&mut m, "n2", MAX_TASKS_PER_NODE),
            Ok(())
        );
        assert_eq!(m.cpus_per_task, 1);
        assert_eq!(m.node_cpus, 4);
        assert_eq!(m.job_core_spec, slurm_wire::pack::NO_VAL16);
        // Without runs the launch's own value stands (older releases).
        let mut old = step_launch(vec![vec![0, 1], vec![2]]);
        old.cpus_per_task = 2;
        assert_eq!(
            check_launch_counts(&mut old, "n1", MAX_TASKS_PER_NODE),
            Ok(())
        );
        assert_eq!((old.cpus_per_task, old.node_cpus), (2, 4));
    }

    #[test]
    fn revocations_refuse_older_credentials_and_survive_a_reload() {
        let dir = tempfile::tempdir().unwrap();
        let spool = dir.path().to_str().unwrap();
        let r = Revocations::load(Some(spool), 120, 1000);
        let mut a = cred(5).arg;
        a.ctime = 990;
        assert_eq!(r.check(&a), Ok(()));
        r.revoke(5, 1000);
        assert_eq!(r.check(&a), Err(CredError::Revoked(5)));
        a.ctime = 1000;
        assert_eq!(r.check(&a), Err(CredError::Revoked(5)));
        // A requeued job's new credential.
        a.ctime = 1001;
        assert_eq!(r.check(&a), Ok(()));
        a.ctime = 990;
        r.begin_expiration(5, 1010);
        let again = Revocations::load(Some(spool), 120, 1100);
        assert_eq!(again.check(&a), Err(CredError::Revoked(5)));
        // Gone once every credential it refused has expired.
        let later = Revocations::load(Some(spool), 120, 1131);
        assert_eq!(later.check(&a), Ok(()));
        assert_eq!(cred_expire(Some("socket=/x,cred_expire=300")), 300);
        assert_eq!(cred_expire(Some("cred_expire=1")), 120);
        assert_eq!(cred_expire(None), 120);
    }
}
