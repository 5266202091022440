//! cgroup v1: one hierarchy per controller, the job's tree made in each of
//! freezer (tracking and freezing), memory, cpuset, devices and pids.

use super::fs::{mkdir, read, rmdir_tree, wait_for, write, Result};
use super::types::{Limits, Mount, StepCg};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Controllers we use, the first present one tracks membership.
pub const CONTROLLERS: [&str; 5] = ["freezer", "memory", "cpuset", "devices", "pids"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V1 {
    /// (controller, `<its mount>/<root name>`), in CONTROLLERS order.
    roots: Vec<(&'static str, PathBuf)>,
}

impl V1 {
    /// The controllers mounted at or below `mount_point` (e.g.
    /// /sys/fs/cgroup/memory, or a joint cpu,cpuacct mount); None when none
    /// of ours is.
    pub fn from_mounts(ms: &[Mount], mount_point: &Path, root_name: &str) -> Option<V1> {
        let roots: Vec<(&'static str, PathBuf)> = CONTROLLERS
            .iter()
            .filter_map(|&c| {
                let m = ms.iter().find(|m| {
                    m.fstype == "cgroup"
                        && m.dir.starts_with(mount_point)
                        && m.options.iter().any(|o| o == c)
                })?;
                Some((c, m.dir.join(root_name)))
            })
            .collect();
        (!roots.is_empty()).then_some(V1 { roots })
    }

    /// A hierarchy over explicit controller roots (tests, temp trees).
    pub fn with_roots(roots: Vec<(&'static str, PathBuf)>) -> V1 {
        V1 { roots }
    }

    pub fn controller_root(&self, c: &str) -> Option<PathBuf> {
        self.roots
            .iter()
            .find(|(n, _)| *n == c)
            .map(|(_, p)| p.clone())
    }

    pub fn dirs<'a>(&'a self, rel: &'a Path) -> impl Iterator<Item = PathBuf> + 'a {
        self.roots.iter().map(move |(_, r)| r.join(rel))
    }

    pub fn step_dirs<'a>(&'a self, cg: &StepCg) -> impl Iterator<Item = PathBuf> + 'a {
        let rel = cg.step_rel();
        self.roots.iter().map(move |(_, r)| r.join(&rel))
    }

    pub fn track_dir(&self, rel: &Path) -> PathBuf {
        self.roots
            .first()
            .map(|(_, r)| r.join(rel))
            .unwrap_or_default()
    }

    pub fn create_step(&self, cg: &StepCg, job: &Limits, step: &Limits) -> Result<()> {
        for (c, root) in &self.roots {
            let levels: [(PathBuf, Option<&Limits>); 4] = [
                (root.clone(), None),
                (root.join(cg.user_rel()), None),
                (root.join(cg.job_rel()), Some(job)),
                (root.join(cg.step_rel()), Some(step)),
            ];
            for (dir, limits) in levels {
                let created = mkdir(&dir)?;
                match *c {
                    "cpuset" => init_cpuset(&dir, limits)?,
                    "memory" => {
                        if created && dir == *root {
                            // Job limits must cover the steps below them.
                            let _ = write(&dir.join("memory.use_hierarchy"), "1");
                        }
                        if let Some(m) = limits.and_then(|l| l.mem) {
                            set_memory(&dir, &m)?;
                        }
                    }
                    "devices" => {
                        for d in limits.map(|l| l.deny_devices.as_slice()).unwrap_or(&[]) {
                            write(&dir.join("devices.deny"), &d.rule())?;
                        }
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// Freezes (or thaws) `rel`; false without a freezer.
    pub fn freeze(&self, rel: &Path, on: bool) -> bool {
        let Some(root) = self.controller_root("freezer") else {
            return false;
        };
        let f = root.join(rel).join("freezer.state");
        let want = if on { "FROZEN" } else { "THAWED" };
        if write(&f, want).is_err() {
            return false;
        }
        if on {
            wait_for(Duration::from_secs(1), || {
                read(&f).is_ok_and(|s| s == "FROZEN")
            });
        }
        true
    }

    pub fn oom_kills(&self, rel: &Path) -> u64 {
        self.controller_root("memory")
            .and_then(|r| std::fs::read_to_string(r.join(rel).join("memory.oom_control")).ok())
            .and_then(|s| super::fs::parse_oom_control(&s))
            .unwrap_or(0)
    }

    pub fn remove(&self, rel: &Path) -> Result<()> {
        let mut first = Ok(());
        for (_, r) in &self.roots {
            let res = rmdir_tree(&r.join(rel));
            if first.is_ok() {
                first = res;
            }
        }
        first
    }
}

/// A new cpuset is empty and takes no tasks: give it its parent's CPUs and
/// memory nodes, or the allocated CPUs.
fn init_cpuset(dir: &Path, limits: Option<&Limits>) -> Result<()> {
    let parent = dir.parent().unwrap_or(dir);
    let cpus = dir.join("cpuset.cpus");
    match limits.and_then(|l| l.cpus.as_ref()) {
        Some(list) => write(&cpus, &slurm_conf::format_ranges(list))?,
        None => {
            if read(&cpus).unwrap_or_default().is_empty() {
                write(&cpus, &read(&parent.join("cpuset.cpus"))?)?;
            }
        }
    }
    let mems = dir.join("cpuset.mems");
    if read(&mems).unwrap_or_default().is_empty() {
        write(&mems, &read(&parent.join("cpuset.mems"))?)?;
    }
    Ok(())
}

fn set_memory(dir: &Path, m: &super::types::MemLimits) -> Result<()> {
    write(&dir.join("memory.limit_in_bytes"), &m.limit.to_string())?;
    write(&dir.join("memory.soft_limit_in_bytes"), &m.soft.to_string())?;
    if let Some(sw) = m.memsw {
        let f = dir.join("memory.memsw.limit_in_bytes");
        // Absent when the kernel does not account swap.
        if f.exists() {
            write(&f, &sw.to_string())?;
        }
    }
    if let Some(s) = m.swappiness {
        write(&dir.join("memory.swappiness"), &s.to_string())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{Device, Hierarchy, MemLimits, StepName};
    use super::*;

    /// A plain directory tree standing in for the v1 mounts.
    fn tree() -> (tempfile::TempDir, Hierarchy) {
        let t = tempfile::tempdir().unwrap();
        let mut roots = Vec::new();
        for c in CONTROLLERS {
            let m = t.path().join(c);
            std::fs::create_dir_all(&m).unwrap();
            if c == "cpuset" {
                std::fs::write(m.join("cpuset.cpus"), "0-7\n").unwrap();
                std::fs::write(m.join("cpuset.mems"), "0\n").unwrap();
            }
            roots.push((c, m.join("slurm")));
        }
        (t, Hierarchy::V1(V1::with_roots(roots)))
    }

    fn rd(p: PathBuf) -> String {
        std::fs::read_to_string(&p)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            .trim()
            .to_string()
    }

    #[test]
    fn creates_the_job_tree_with_limits() {
        let (t, h) = tree();
        let cg = StepCg::batch(1000, 42);
        let job = Limits {
            mem: Some(MemLimits {
                limit: 500 << 20,
                soft: 400 << 20,
                memsw: None,
                swappiness: None,
            }),
            cpus: Some(vec![2, 3]),
            deny_devices: vec![Device {
                kind: 'c',
                major: 195,
                minor: 1,
            }],
        };
        h.create_step(&cg, &job, &job).unwrap();
        let p = |c: &str, rel: &str| t.path().join(c).join("slurm").join(rel);
        let step = "uid_1000/job_42/step_batch";
        let jobd = "uid_1000/job_42";
        assert_eq!(
            rd(p("memory", jobd).join("memory.limit_in_bytes")),
            "524288000"
        );
        assert_eq!(
            rd(p("memory", step).join("memory.soft_limit_in_bytes")),
            "419430400"
        );
        assert_eq!(rd(p("memory", "").join("memory.use_hierarchy")), "1");
        // cpusets inherit down to the job, which gets the allocated CPUs.
        assert_eq!(rd(p("cpuset", "uid_1000").join("cpuset.cpus")), "0-7");
        assert_eq!(rd(p("cpuset", jobd).join("cpuset.cpus")), "2-3");
        assert_eq!(rd(p("cpuset", step).join("cpuset.mems")), "0");
        assert_eq!(rd(p("devices", jobd).join("devices.deny")), "c 195:1 rwm");
        assert!(p("freezer", step).is_dir() && p("pids", step).is_dir());
        assert!(!p("memory", "uid_1000")
            .join("memory.limit_in_bytes")
            .exists());

        // A second step reuses the job's cgroup; unconstrained steps only
        // inherit.
        let s2 = StepCg {
            step: StepName::Id(0),
            ..cg
        };
        h.create_step(&s2, &job, &Limits::default()).unwrap();
        assert_eq!(
            rd(p("cpuset", "uid_1000/job_42/step_0").join("cpuset.cpus")),
            "2-3"
        );
        assert_eq!(h.procs_files(&s2).len(), CONTROLLERS.len());

        // Membership is read from the freezer tree, steps included.
        std::fs::write(p("freezer", step).join("cgroup.procs"), "12\n13\n").unwrap();
        std::fs::write(
            p("freezer", "uid_1000/job_42/step_0").join("cgroup.procs"),
            "20\n",
        )
        .unwrap();
        assert_eq!(h.step_pids(&cg), vec![12, 13]);
        assert_eq!(h.job_pids(&cg), vec![12, 13, 20]);
        assert_eq!(h.jobs(), vec![(1000, 42)]);

        std::fs::write(
            p("memory", step).join("memory.oom_control"),
            "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n",
        )
        .unwrap();
        assert_eq!(h.oom_kills(&cg), 1);
        assert_eq!(h.oom_kills(&s2), 0);
    }

    #[test]
    fn swap_limit_only_where_accounted() {
        let (t, h) = tree();
        let cg = StepCg::batch(5, 6);
        let d = t.path().join("memory/slurm/uid_5/job_6");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("memory.memsw.limit_in_bytes"), "").unwrap();
        let l = Limits {
            mem: Some(MemLimits {
                limit: 100,
                soft: 100,
                memsw: Some(200),
                swappiness: Some(0),
            }),
            ..Default::default()
        };
        h.create_step(&cg, &l, &l).unwrap();
        assert_eq!(rd(d.join("memory.memsw.limit_in_bytes")), "200");
        assert_eq!(rd(d.join("memory.swappiness")), "0");
        assert!(!d.join("step_batch/memory.memsw.limit_in_bytes").exists());
    }

    #[test]
    fn removal_is_bottom_up_and_keeps_other_jobs() {
        let (t, h) = tree();
        let a = StepCg::batch(7, 1);
        let b = StepCg::batch(7, 2);
        h.create_step(&a, &Limits::default(), &Limits::default())
            .unwrap();
        h.create_step(&b, &Limits::default(), &Limits::default())
            .unwrap();
        // Plain directories hold files, which real cgroups' rmdir ignores;
        // use a tree without files for the removal check.
        for c in CONTROLLERS {
            let _ = std::fs::remove_file(t.path().join(c).join("slurm/uid_7/job_1/cpuset.cpus"));
        }
        let cpuset_job = t.path().join("cpuset/slurm/uid_7/job_1");
        for f in ["cpuset.cpus", "cpuset.mems"] {
            let _ = std::fs::remove_file(cpuset_job.join(f));
            let _ = std::fs::remove_file(cpuset_job.join("step_batch").join(f));
        }
        h.remove_job(&a).unwrap();
        assert!(!t.path().join("freezer/slurm/uid_7/job_1").exists());
        assert!(t
            .path()
            .join("freezer/slurm/uid_7/job_2/step_batch")
            .exists());
        assert_eq!(h.jobs(), vec![(7, 2)]);
    }
}
