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
pub mod fs;
pub mod types;
pub mod v1;
pub mod v2;

pub use fs::{parse_memory_events, parse_oom_control, CgroupError, Result};
pub(crate) use fs::{procs_below, rmdir_tree, wait_for, write};
pub use types::{
    parse_mounts, Device, Limits, MemLimits, MemPolicy, Mount, StepCg, StepName, Version,
};

use slurm_conf::CgroupConf;
use std::path::{Path, PathBuf};

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
