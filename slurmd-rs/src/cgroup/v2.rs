//! cgroup v2: one unified tree. Controllers are enabled down to the job
//! level through `cgroup.subtree_control`; processes live in the leaves
//! (the step cgroups), as the "no internal processes" rule requires.
//! Devices are an eBPF program attached to the job and step cgroups
//! (see [`super::ebpf`]).

use super::ebpf;
use super::fs::{mkdir, read, wait_for, write, CgroupError, Result};
use super::types::{Limits, StepCg};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Controllers enabled for the job tree when the kernel offers them.
pub const CONTROLLERS: [&str; 3] = ["cpuset", "memory", "pids"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V2 {
    /// `<mount>/<root name>`.
    root: PathBuf,
}

impl V2 {
    pub fn new(root: PathBuf) -> V2 {
        V2 { root }
    }

    pub fn dir(&self, rel: &Path) -> PathBuf {
        self.root.join(rel)
    }

    /// Enables our controllers for the children of `dir` (those its own
    /// `cgroup.controllers` offers and that are not enabled yet: the mount
    /// root is visited for every step).
    fn enable_below(dir: &Path) {
        let offered = read(&dir.join("cgroup.controllers")).unwrap_or_default();
        let ctl = dir.join("cgroup.subtree_control");
        let enabled = read(&ctl).unwrap_or_default();
        let has = |list: &str, c: &str| list.split_whitespace().any(|o| o == c);
        for c in CONTROLLERS {
            if has(&offered, c) && !has(&enabled, c) {
                if let Err(e) = write(&ctl, &format!("+{c}")) {
                    tracing::debug!("cgroup v2: cannot enable {c}: {e}");
                }
            }
        }
    }

    /// A limit needs its controller enabled here; without it the kernel
    /// has no file to write (and the job would run unconstrained).
    fn require(dir: &Path, controller: &'static str) -> Result<()> {
        let offered = read(&dir.join("cgroup.controllers")).unwrap_or_default();
        if offered.split_whitespace().any(|c| c == controller) {
            Ok(())
        } else {
            Err(CgroupError::NoController {
                controller,
                path: dir.display().to_string(),
            })
        }
    }

    pub fn create_step(&self, cg: &StepCg, job: &Limits, step: &Limits) -> Result<()> {
        if let Some(mount) = self.root.parent() {
            Self::enable_below(mount);
        }
        let levels: [(PathBuf, Option<&Limits>, bool); 4] = [
            (self.root.clone(), None, false),
            (self.dir(&cg.user_rel()), None, false),
            (self.dir(&cg.job_rel()), Some(job), false),
            (self.dir(&cg.step_rel()), Some(step), true),
        ];
        for (dir, limits, leaf) in levels {
            mkdir(&dir)?;
            if !leaf {
                Self::enable_below(&dir);
            }
            let Some(l) = limits else { continue };
            if l.mem.is_some() {
                Self::require(&dir, "memory")?;
            }
            if l.cpus.is_some() {
                Self::require(&dir, "cpuset")?;
            }
            if let Some(m) = l.mem {
                write(&dir.join("memory.max"), &m.limit.to_string())?;
                // Absent when the kernel does not account swap, as in v1.
                let swap = dir.join("memory.swap.max");
                if let (Some(sw), true) = (m.memsw, swap.exists()) {
                    write(&swap, &sw.saturating_sub(m.limit).to_string())?;
                }
            }
            if let Some(cpus) = &l.cpus {
                write(&dir.join("cpuset.cpus"), &slurm_conf::format_ranges(cpus))?;
            }
            // ConstrainDevices: the job's program may be replaced by a
            // step's own below it; the step is the leaf.
            if let Some(prog) = ebpf::device_program(&ebpf::deny_rules(&l.deny_devices)) {
                let flags = if leaf { 0 } else { ebpf::BPF_F_ALLOW_OVERRIDE };
                ebpf::attach(&dir, &prog, flags)?;
            }
        }
        Ok(())
    }

    pub fn freeze(&self, rel: &Path, on: bool) -> bool {
        let d = self.dir(rel);
        if write(&d.join("cgroup.freeze"), if on { "1" } else { "0" }).is_err() {
            return false;
        }
        if on {
            let events = d.join("cgroup.events");
            wait_for(Duration::from_secs(1), || {
                read(&events).is_ok_and(|s| s.lines().any(|l| l.trim() == "frozen 1"))
            });
        }
        true
    }

    /// SIGKILL to everything below `rel` at once (`cgroup.kill`, 5.14+).
    pub fn kill(&self, rel: &Path) -> bool {
        let f = self.dir(rel).join("cgroup.kill");
        f.exists() && write(&f, "1").is_ok()
    }

    pub fn oom_kills(&self, rel: &Path) -> u64 {
        std::fs::read_to_string(self.dir(rel).join("memory.events"))
            .ok()
            .and_then(|s| super::fs::parse_memory_events(&s))
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Hierarchy, MemLimits};
    use super::*;

    fn rd(p: PathBuf) -> String {
        std::fs::read_to_string(&p)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            .trim()
            .to_string()
    }

    #[test]
    fn creates_the_job_tree_with_limits() {
        let t = tempfile::tempdir().unwrap();
        let mount = t.path();
        std::fs::write(
            mount.join("cgroup.controllers"),
            "cpuset cpu io memory pids\n",
        )
        .unwrap();
        let h = Hierarchy::V2(V2::new(mount.join("slurm")));
        let cg = StepCg::batch(1000, 9);
        // What the kernel offers each new cgroup once its parent enabled it.
        std::fs::create_dir_all(mount.join("slurm/uid_1000/job_9")).unwrap();
        for d in ["slurm", "slurm/uid_1000", "slurm/uid_1000/job_9"] {
            std::fs::write(
                mount.join(d).join("cgroup.controllers"),
                "cpuset memory pids",
            )
            .unwrap();
        }
        // The kernel offers swap.max only where it accounts swap.
        std::fs::write(mount.join("slurm/uid_1000/job_9/memory.swap.max"), "max").unwrap();
        let job = Limits {
            mem: Some(MemLimits {
                limit: 1 << 30,
                soft: 1 << 30,
                memsw: Some(3 << 29),
                swappiness: None,
            }),
            cpus: Some(vec![0, 1, 4]),
            deny_devices: vec![],
        };
        h.create_step(&cg, &job, &Limits::default()).unwrap();
        let jobd = mount.join("slurm/uid_1000/job_9");
        assert_eq!(rd(jobd.join("memory.max")), "1073741824");
        assert_eq!(rd(jobd.join("memory.swap.max")), "536870912");
        assert_eq!(rd(jobd.join("cpuset.cpus")), "0-1,4");
        // Controllers enabled down to the job, never in the leaf.
        assert_eq!(rd(jobd.join("cgroup.subtree_control")), "+pids");
        assert!(mount.join("cgroup.subtree_control").exists());
        assert!(!jobd.join("step_batch/cgroup.subtree_control").exists());
        assert!(!jobd.join("step_batch/memory.max").exists());
        assert_eq!(
            h.procs_files(&cg),
            vec![jobd.join("step_batch/cgroup.procs")]
        );

        std::fs::write(jobd.join("step_batch/cgroup.procs"), "77\n").unwrap();
        assert_eq!(h.job_pids(&cg), vec![77]);
        std::fs::write(
            jobd.join("step_batch/memory.events"),
            "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n",
        )
        .unwrap();
        assert_eq!(h.oom_kills(&cg), 1);
        assert_eq!(h.jobs(), vec![(1000, 9)]);
    }
}
