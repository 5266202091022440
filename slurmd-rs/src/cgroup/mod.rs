//! Job containers in cgroups: which hierarchy cgroup.conf selects, the
//! per-job layout, limits, membership, signalling, OOM counts and removal.
//!
//! Layout (as stock's): `<root>/uid_<uid>/job_<id>/step_<name>` where
//! `<root>` is `slurm` under each v1 controller's mount, or under the v2
//! mount. Job-level limits cover every step of the job; a step's own
//! limits sit below. Any step (batch, extern, srun steps) is created with
//! [`Hierarchy::create_step`] and its processes joined with
//! [`Hierarchy::attach`] (or, in a freshly forked child, by writing `0` to
//! each of [`Hierarchy::procs_files`]). Processes are tracked by
//! membership: whatever a job's process forks, even into a new session,
//! stays in the cgroup.
//!
//! Paths are computed, never read back from /proc/<pid>/cgroup: in a
//! container the hierarchy may be a bind mount of a sub-directory, and
//! /proc shows paths relative to the host's root.

pub mod ebpf;
pub mod v1;
pub mod v2;

use slurm_conf::CgroupConf;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    #[error(
        "cgroup.conf: CgroupPlugin={0} is not one of cgroup/v1, cgroup/v2, autodetect, disabled"
    )]
    UnknownPlugin(String),
    #[error("CgroupPlugin={plugin}: no cgroup {version} hierarchy is mounted at {mount}")]
    NotMounted {
        plugin: String,
        version: &'static str,
        mount: String,
    },
    #[error("{path}: {err}")]
    Io { path: String, err: std::io::Error },
    #[error("{path}: the cgroup v2 {controller} controller is not available here (is it bound to a v1 hierarchy?)")]
    NoController {
        controller: &'static str,
        path: String,
    },
    #[error(transparent)]
    Bpf(#[from] ebpf::BpfError),
}

impl CgroupError {
    pub fn io(path: &Path, err: std::io::Error) -> Self {
        CgroupError::Io {
            path: path.display().to_string(),
            err,
        }
    }
}

pub type Result<T> = std::result::Result<T, CgroupError>;

/// The step part of a job's cgroup path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepName {
    Batch,
    Extern,
    Interactive,
    Id(u32),
}

impl StepName {
    /// From the numeric step id of the protocol (SLURM_BATCH_SCRIPT etc.).
    pub fn from_step_id(id: u32) -> Self {
        use slurm_wire::types::StepId;
        match id {
            StepId::BATCH_SCRIPT => StepName::Batch,
            StepId::EXTERN_CONT => StepName::Extern,
            StepId::INTERACTIVE_STEP => StepName::Interactive,
            n => StepName::Id(n),
        }
    }

    pub fn dir(&self) -> String {
        match self {
            StepName::Batch => "step_batch".into(),
            StepName::Extern => "step_extern".into(),
            StepName::Interactive => "step_interactive".into(),
            StepName::Id(n) => format!("step_{n}"),
        }
    }
}

/// One step's cgroup, by what names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepCg {
    pub uid: u32,
    pub job_id: u32,
    pub step: StepName,
}

impl StepCg {
    pub fn batch(uid: u32, job_id: u32) -> Self {
        StepCg {
            uid,
            job_id,
            step: StepName::Batch,
        }
    }
    /// `uid_<uid>`, relative to the hierarchy root.
    pub fn user_rel(&self) -> PathBuf {
        PathBuf::from(format!("uid_{}", self.uid))
    }
    /// `uid_<uid>/job_<id>`.
    pub fn job_rel(&self) -> PathBuf {
        self.user_rel().join(format!("job_{}", self.job_id))
    }
    /// `uid_<uid>/job_<id>/step_<name>`.
    pub fn step_rel(&self) -> PathBuf {
        self.job_rel().join(self.step.dir())
    }
}

/// A device number, as gres.conf's File= devices are allowed or denied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Device {
    /// 'c' or 'b'.
    pub kind: char,
    pub major: u32,
    pub minor: u32,
}

impl Device {
    /// The device of a special file (None for other files).
    pub fn of_path(p: &Path) -> Option<Device> {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let m = std::fs::metadata(p).ok()?;
        let ft = m.file_type();
        let kind = if ft.is_char_device() {
            'c'
        } else if ft.is_block_device() {
            'b'
        } else {
            return None;
        };
        let rdev = m.rdev();
        Some(Device {
            kind,
            major: libc::major(rdev),
            minor: libc::minor(rdev),
        })
    }
    /// `c 195:0 rwm`, as devices.allow/deny take it.
    pub fn rule(&self) -> String {
        format!("{} {}:{} rwm", self.kind, self.major, self.minor)
    }
}

/// Memory limits in bytes for one level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemLimits {
    pub limit: u64,
    pub soft: u64,
    /// Memory+swap, only with ConstrainSwapSpace.
    pub memsw: Option<u64>,
    pub swappiness: Option<u64>,
}

/// What to constrain at one level (job or step).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Limits {
    pub mem: Option<MemLimits>,
    /// Logical CPU ids (ConstrainCores).
    pub cpus: Option<Vec<u32>>,
    /// GRES devices this job was not given (ConstrainDevices).
    pub deny_devices: Vec<Device>,
}

/// cgroup.conf's memory options with the node's configured RealMemory.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemPolicy {
    pub constrain_ram: bool,
    pub constrain_swap: bool,
    pub allowed_ram: f32,
    pub allowed_swap: f32,
    pub max_ram_percent: f32,
    pub max_swap_percent: f32,
    pub min_ram_mb: u64,
    pub swappiness: Option<u64>,
    /// The node's RealMemory, MB.
    pub total_ram_mb: u64,
}

fn percent_bytes(mb: u64, percent: f32) -> u64 {
    ((mb as f64) * 1024.0 * 1024.0 * (f64::from(percent) / 100.0)) as u64
}

impl MemPolicy {
    pub fn from_conf(c: &CgroupConf, total_ram_mb: u64) -> Self {
        MemPolicy {
            constrain_ram: c.constrain_ram_space,
            constrain_swap: c.constrain_swap_space,
            allowed_ram: if c.constrain_ram_space {
                c.allowed_ram_space
            } else {
                100.0
            },
            allowed_swap: c.allowed_swap_space,
            max_ram_percent: c.max_ram_percent,
            max_swap_percent: c.max_swap_percent,
            min_ram_mb: c.min_ram_space,
            swappiness: c.memory_swappiness,
            total_ram_mb,
        }
    }

    fn max_ram(&self) -> u64 {
        percent_bytes(self.total_ram_mb, self.max_ram_percent)
    }

    /// Stock's rule: an allocation of 0 means the whole node; a percentage
    /// of it, clamped to [MinRAMSpace, MaxRAMPercent of RealMemory].
    fn ram_bytes(&self, alloc_mb: u64, with_allowed: bool) -> u64 {
        let b = if alloc_mb == 0 {
            self.total_ram_mb.saturating_mul(1024 * 1024)
        } else {
            percent_bytes(
                alloc_mb,
                if with_allowed {
                    self.allowed_ram
                } else {
                    100.0
                },
            )
        };
        let min = self.min_ram_mb.saturating_mul(1024 * 1024);
        if b < min {
            min
        } else {
            b.min(self.max_ram())
        }
    }

    /// RAM limit plus AllowedSwapSpace, clamped to [MinRAMSpace, max RAM +
    /// MaxSwapPercent].
    fn swap_bytes(&self, alloc_mb: u64) -> u64 {
        let base = if alloc_mb == 0 {
            self.total_ram_mb
        } else {
            alloc_mb
        };
        let b = self
            .ram_bytes(alloc_mb, true)
            .saturating_add(percent_bytes(base, self.allowed_swap));
        let min = self.min_ram_mb.saturating_mul(1024 * 1024);
        let max = self
            .max_ram()
            .saturating_add(percent_bytes(self.total_ram_mb, self.max_swap_percent));
        if b < min {
            min
        } else {
            b.min(max)
        }
    }

    /// Limits for an allocation of `alloc_mb` MB (0: unlimited job), or
    /// None when neither RAM nor swap is constrained.
    pub fn limits(&self, alloc_mb: u64) -> Option<MemLimits> {
        if !self.constrain_ram && !self.constrain_swap {
            return None;
        }
        let hard = self.ram_bytes(alloc_mb, true);
        let soft = self.ram_bytes(alloc_mb, false).min(hard);
        let memsw = self.swap_bytes(alloc_mb);
        Some(MemLimits {
            // Only swap constrained: RAM may use the whole mem+swap budget.
            limit: if self.constrain_ram { hard } else { memsw },
            soft,
            memsw: self.constrain_swap.then_some(memsw),
            swappiness: if self.constrain_swap {
                self.swappiness
            } else {
                None
            },
        })
    }
}

/// Which cgroup version, if any, cgroup.conf and the mounts select.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V1,
    V2,
}

/// One line of /proc/mounts: mount point, type, options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub dir: PathBuf,
    pub fstype: String,
    pub options: Vec<String>,
}

/// /proc/mounts escapes spaces and the like as `\040`.
fn unescape_mount(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 4 <= b.len() {
            let oct = &b[i + 1..i + 4];
            if oct.iter().all(|c| (b'0'..=b'7').contains(c)) {
                let v = oct.iter().fold(0u32, |a, c| a * 8 + u32::from(c - b'0'));
                out.push(v as u8);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The cgroup mounts in /proc/mounts text.
pub fn parse_mounts(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let _src = f.next()?;
            let dir = unescape_mount(f.next()?);
            let fstype = f.next()?.to_string();
            let options = f.next()?.split(',').map(str::to_string).collect();
            (fstype == "cgroup" || fstype == "cgroup2").then(|| Mount {
                dir: PathBuf::from(dir),
                fstype,
                options,
            })
        })
        .collect()
}

/// A cgroup hierarchy the daemon puts jobs in.
#[derive(Debug, Clone)]
pub enum Hierarchy {
    V1(v1::V1),
    V2(v2::V2),
}

/// The name of the top directory of our tree (stock: `slurm`).
pub const DEFAULT_ROOT: &str = "slurm";

/// Picks the hierarchy cgroup.conf asks for. `mounts` is /proc/mounts'
/// text; `root_name` the top directory (normally [`DEFAULT_ROOT`]).
pub fn select(conf: &CgroupConf, mounts: &str, root_name: &str) -> Result<Option<Hierarchy>> {
    let plugin = conf.cgroup_plugin.trim().to_ascii_lowercase();
    let mount_point = PathBuf::from(&conf.cgroup_mountpoint);
    let ms = parse_mounts(mounts);
    let v2 = || {
        ms.iter()
            .any(|m| m.fstype == "cgroup2" && m.dir == mount_point)
            .then(|| Hierarchy::V2(v2::V2::new(mount_point.join(root_name))))
    };
    let v1 = || v1::V1::from_mounts(&ms, &mount_point, root_name).map(Hierarchy::V1);
    let not_mounted = |version| CgroupError::NotMounted {
        plugin: conf.cgroup_plugin.clone(),
        version,
        mount: mount_point.display().to_string(),
    };
    match plugin.as_str() {
        "disabled" => Ok(None),
        "cgroup/v1" => v1().map(Some).ok_or_else(|| not_mounted("v1")),
        "cgroup/v2" => v2().map(Some).ok_or_else(|| not_mounted("v2")),
        "autodetect" | "" => Ok(v2().or_else(v1)),
        _ => Err(CgroupError::UnknownPlugin(conf.cgroup_plugin.clone())),
    }
}

/// Reads a cgroup file, trimmed.
pub(crate) fn read(p: &Path) -> Result<String> {
    std::fs::read_to_string(p)
        .map(|s| s.trim().to_string())
        .map_err(|e| CgroupError::io(p, e))
}

/// Writes a cgroup file (no create: cgroup files exist or the write is
/// wrong, except in the tests' plain directories where they are made).
pub(crate) fn write(p: &Path, value: &str) -> Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(p)
        .map_err(|e| CgroupError::io(p, e))?;
    f.write_all(value.as_bytes())
        .map_err(|e| CgroupError::io(p, e))
}

/// mkdir that accepts an existing directory.
pub(crate) fn mkdir(p: &Path) -> Result<bool> {
    match std::fs::create_dir(p) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(CgroupError::io(p, e)),
    }
}

/// Pids listed in `cgroup.procs` of `dir` and every cgroup below it.
pub(crate) fn procs_below(dir: &Path) -> Vec<i32> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        if let Ok(s) = std::fs::read_to_string(d.join("cgroup.procs")) {
            out.extend(s.lines().filter_map(|l| l.trim().parse::<i32>().ok()));
        }
        if let Ok(rd) = std::fs::read_dir(&d) {
            for e in rd.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(e.path());
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Removes `dir` and the cgroups below it, deepest first. Only empty
/// cgroups can go; the first failure is returned after trying them all.
pub(crate) fn rmdir_tree(dir: &Path) -> Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    let mut dirs = vec![dir.to_path_buf()];
    let mut i = 0;
    while i < dirs.len() {
        if let Ok(rd) = std::fs::read_dir(&dirs[i]) {
            for e in rd.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    dirs.push(e.path());
                }
            }
        }
        i += 1;
    }
    let mut first = None;
    for d in dirs.iter().rev() {
        if let Err(e) = std::fs::remove_dir(d) {
            if e.kind() != std::io::ErrorKind::NotFound && first.is_none() {
                first = Some(CgroupError::io(d, e));
            }
        }
    }
    first.map_or(Ok(()), Err)
}

/// The `oom_kill` count of a v1 `memory.oom_control` file.
pub fn parse_oom_control(text: &str) -> Option<u64> {
    kv_field(text, "oom_kill")
}

/// The `oom_kill` count of a v2 `memory.events` file.
pub fn parse_memory_events(text: &str) -> Option<u64> {
    kv_field(text, "oom_kill")
}

fn kv_field(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let mut f = l.split_whitespace();
        (f.next()? == key).then_some(())?;
        f.next()?.parse().ok()
    })
}

impl Hierarchy {
    pub fn version(&self) -> Version {
        match self {
            Hierarchy::V1(_) => Version::V1,
            Hierarchy::V2(_) => Version::V2,
        }
    }

    /// Creates the job's and the step's cgroups (reusing the job's when a
    /// step of it exists) with their limits.
    pub fn create_step(&self, cg: &StepCg, job: &Limits, step: &Limits) -> Result<()> {
        match self {
            Hierarchy::V1(h) => h.create_step(cg, job, step),
            Hierarchy::V2(h) => h.create_step(cg, job, step),
        }
    }

    /// Moves `pid` (all its threads) into the step.
    pub fn attach(&self, cg: &StepCg, pid: i32) -> Result<()> {
        for f in self.procs_files(cg) {
            write(&f, &pid.to_string())?;
        }
        Ok(())
    }

    /// The step's `cgroup.procs` files (one per v1 controller): a process
    /// joins by writing `0` to each.
    pub fn procs_files(&self, cg: &StepCg) -> Vec<PathBuf> {
        match self {
            Hierarchy::V1(h) => h.step_dirs(cg).map(|d| d.join("cgroup.procs")).collect(),
            Hierarchy::V2(h) => vec![h.dir(&cg.step_rel()).join("cgroup.procs")],
        }
    }

    /// The tracking directory of a relative path.
    fn track_dir(&self, rel: &Path) -> PathBuf {
        match self {
            Hierarchy::V1(h) => h.track_dir(rel),
            Hierarchy::V2(h) => h.dir(rel),
        }
    }

    /// Live processes of the step.
    pub fn step_pids(&self, cg: &StepCg) -> Vec<i32> {
        procs_below(&self.track_dir(&cg.step_rel()))
    }

    /// Live processes of every step of the job.
    pub fn job_pids(&self, cg: &StepCg) -> Vec<i32> {
        procs_below(&self.track_dir(&cg.job_rel()))
    }

    fn freeze(&self, rel: &Path, on: bool) -> bool {
        match self {
            Hierarchy::V1(h) => h.freeze(rel, on),
            Hierarchy::V2(h) => h.freeze(rel, on),
        }
    }

    /// Sends `sig` to every process of the job (`step: None`) or of one
    /// step. The cgroup is frozen meanwhile so nothing forks past the
    /// signal; stopped/frozen processes get SIGCONT after a SIGTERM or
    /// SIGKILL so they can act on it. Returns how many were signalled.
    pub fn signal(&self, cg: &StepCg, whole_job: bool, sig: i32) -> usize {
        let rel = if whole_job {
            cg.job_rel()
        } else {
            cg.step_rel()
        };
        if sig == libc::SIGKILL {
            if let Hierarchy::V2(h) = self {
                if h.kill(&rel) {
                    return procs_below(&h.dir(&rel)).len();
                }
            }
        }
        let frozen = self.freeze(&rel, true);
        let pids = procs_below(&self.track_dir(&rel));
        for &p in &pids {
            if p > 1 {
                // SAFETY: plain kill(2) on a pid read from our cgroup.
                unsafe { libc::kill(p, sig) };
            }
        }
        if frozen {
            self.freeze(&rel, false);
        }
        if matches!(sig, libc::SIGTERM | libc::SIGKILL) {
            for &p in &pids {
                if p > 1 {
                    // SAFETY: as above.
                    unsafe { libc::kill(p, libc::SIGCONT) };
                }
            }
        }
        pids.len()
    }

    /// OOM kills seen in the step (and at the job level, where a job
    /// limit hit by this step is counted in v1).
    pub fn oom_kills(&self, cg: &StepCg) -> u64 {
        match self {
            Hierarchy::V1(h) => h.oom_kills(&cg.step_rel()) + h.oom_kills(&cg.job_rel()),
            Hierarchy::V2(h) => h.oom_kills(&cg.step_rel()),
        }
    }

    /// Removes the step's cgroups (they must be empty).
    pub fn remove_step(&self, cg: &StepCg) -> Result<()> {
        self.remove(&cg.step_rel())
    }

    /// Removes the job's cgroups, and the user's when no other job of
    /// theirs is left.
    pub fn remove_job(&self, cg: &StepCg) -> Result<()> {
        let r = self.remove(&cg.job_rel());
        let _ = self.remove_empty_dir(&cg.user_rel());
        r
    }

    fn remove(&self, rel: &Path) -> Result<()> {
        match self {
            Hierarchy::V1(h) => h.remove(rel),
            Hierarchy::V2(h) => rmdir_tree(&h.dir(rel)),
        }
    }

    fn remove_empty_dir(&self, rel: &Path) -> Result<()> {
        let dirs: Vec<PathBuf> = match self {
            Hierarchy::V1(h) => h.dirs(rel).collect(),
            Hierarchy::V2(h) => vec![h.dir(rel)],
        };
        for d in dirs {
            let _ = std::fs::remove_dir(d);
        }
        Ok(())
    }

    /// Jobs with a cgroup here: (uid, job id) pairs, for re-adoption.
    pub fn jobs(&self) -> Vec<(u32, u32)> {
        let top = self.track_dir(Path::new(""));
        let mut out = Vec::new();
        for u in std::fs::read_dir(&top).into_iter().flatten().flatten() {
            let name = u.file_name();
            let Some(uid) = name
                .to_str()
                .and_then(|n| n.strip_prefix("uid_"))
                .and_then(|n| n.parse().ok())
            else {
                continue;
            };
            for j in std::fs::read_dir(u.path()).into_iter().flatten().flatten() {
                if let Some(job) = j
                    .file_name()
                    .to_str()
                    .and_then(|n| n.strip_prefix("job_"))
                    .and_then(|n| n.parse().ok())
                {
                    out.push((uid, job));
                }
            }
        }
        out.sort_unstable();
        out
    }
}

/// Waits until `done()` or `limit` passes, polling.
pub(crate) fn wait_for(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let end = std::time::Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if std::time::Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> MemPolicy {
        MemPolicy::from_conf(
            &CgroupConf {
                constrain_ram_space: true,
                ..Default::default()
            },
            64000,
        )
    }

    const MB: u64 = 1024 * 1024;

    #[test]
    fn memory_limit_follows_the_allocation() {
        let p = policy();
        let l = p.limits(500).unwrap();
        assert_eq!(l.limit, 500 * MB);
        assert_eq!(l.soft, 500 * MB);
        assert_eq!(l.memsw, None);
        // Allocation 0: the whole node.
        assert_eq!(p.limits(0).unwrap().limit, 64000 * MB);
        // Below MinRAMSpace (30 MB by default).
        assert_eq!(p.limits(10).unwrap().limit, 30 * MB);
        // Nothing constrained, nothing to set.
        let none = MemPolicy::from_conf(&CgroupConf::default(), 64000);
        assert_eq!(none.limits(500), None);
    }

    #[test]
    fn allowed_and_max_percentages() {
        let mut p = policy();
        p.allowed_ram = 50.0;
        let l = p.limits(1000).unwrap();
        assert_eq!(l.limit, 500 * MB);
        // The soft limit is the allocation, but never above the hard one.
        assert_eq!(l.soft, 500 * MB);
        p.allowed_ram = 200.0;
        let l = p.limits(1000).unwrap();
        assert_eq!((l.limit, l.soft), (2000 * MB, 1000 * MB));
        p.max_ram_percent = 1.0; // 640 MB
        assert_eq!(p.limits(1000).unwrap().limit, 640 * MB);
        assert_eq!(p.limits(0).unwrap().limit, 640 * MB);
    }

    #[test]
    fn swap_limits() {
        let mut p = policy();
        p.constrain_swap = true;
        p.allowed_swap = 10.0;
        p.swappiness = Some(5);
        let l = p.limits(1000).unwrap();
        assert_eq!(l.limit, 1000 * MB);
        assert_eq!(l.memsw, Some(1100 * MB));
        assert_eq!(l.swappiness, Some(5));
        // Only swap constrained: RAM gets the mem+swap budget.
        p.constrain_ram = false;
        p.allowed_ram = 100.0;
        let l = p.limits(1000).unwrap();
        assert_eq!(l.limit, 1100 * MB);
    }

    #[test]
    fn step_paths() {
        let s = StepCg {
            uid: 1000,
            job_id: 42,
            step: StepName::from_step_id(slurm_wire::types::StepId::BATCH_SCRIPT),
        };
        assert_eq!(s.step_rel(), PathBuf::from("uid_1000/job_42/step_batch"));
        assert_eq!(s.job_rel(), PathBuf::from("uid_1000/job_42"));
        assert_eq!(StepName::from_step_id(3).dir(), "step_3");
        assert_eq!(
            StepName::from_step_id(slurm_wire::types::StepId::EXTERN_CONT).dir(),
            "step_extern"
        );
    }

    #[test]
    fn oom_files() {
        let v1 = "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n";
        assert_eq!(parse_oom_control(v1), Some(2));
        assert_eq!(parse_oom_control("oom_kill_disable 0\nunder_oom 0\n"), None);
        let v2 = "low 0\nhigh 0\nmax 17\noom 1\noom_kill 1\noom_group_kill 0\n";
        assert_eq!(parse_memory_events(v2), Some(1));
    }

    const MOUNTS_V1: &str = "\
tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0
cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,relatime,cpu,cpuacct 0 0
cgroup /sys/fs/cgroup/cpuset cgroup rw,relatime,cpuset 0 0
cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0
cgroup /sys/fs/cgroup/freezer cgroup rw,relatime,freezer 0 0
cgroup /sys/fs/cgroup/systemd cgroup rw,relatime,name=systemd 0 0
cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0
";
    const MOUNTS_V2: &str = "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n";

    fn conf(plugin: &str) -> CgroupConf {
        CgroupConf {
            cgroup_plugin: plugin.into(),
            ..Default::default()
        }
    }

    #[test]
    fn plugin_selection() {
        let h = select(&conf("autodetect"), MOUNTS_V1, "slurm")
            .unwrap()
            .unwrap();
        assert_eq!(h.version(), Version::V1);
        let Hierarchy::V1(v) = &h else { unreachable!() };
        assert_eq!(
            v.controller_root("memory"),
            Some(PathBuf::from("/sys/fs/cgroup/memory/slurm"))
        );
        assert_eq!(v.controller_root("devices"), None);
        let h = select(&conf("autodetect"), MOUNTS_V2, "slurm")
            .unwrap()
            .unwrap();
        assert_eq!(h.version(), Version::V2);
        assert!(select(&conf("disabled"), MOUNTS_V1, "slurm")
            .unwrap()
            .is_none());
        assert!(matches!(
            select(&conf("cgroup/v2"), MOUNTS_V1, "slurm"),
            Err(CgroupError::NotMounted { .. })
        ));
        assert!(matches!(
            select(&conf("cgroup/v1"), MOUNTS_V2, "slurm"),
            Err(CgroupError::NotMounted { .. })
        ));
        assert!(matches!(
            select(&conf("cgroup/v3"), MOUNTS_V2, "slurm"),
            Err(CgroupError::UnknownPlugin(_))
        ));
        assert!(select(&conf("autodetect"), "", "slurm").unwrap().is_none());
        assert_eq!(
            parse_mounts("cgroup /a\\040b cgroup rw,memory 0 0\n")[0].dir,
            PathBuf::from("/a b")
        );
    }
}
