//! The steps running on this node: their tasks' process groups, their
//! owners and their cgroups. A leaf: the daemon's shared state holds one.

use crate::cgroup::{self, Hierarchy, StepCg};
use nix::sys::signal::Signal;
use slurm_wire::types::StepId;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// The steps running on this node: their tasks' process groups, and
/// their cgroups where jobs have them.
#[derive(Debug, Default)]
pub struct Registry {
    steps: Mutex<HashMap<(u32, u32), Vec<i32>>>,
    owners: Mutex<HashMap<(u32, u32), u32>>,
    cgroups: Mutex<HashMap<(u32, u32), Contained>>,
}

/// A step's cgroup in the daemon's hierarchy.
#[derive(Debug, Clone)]
pub struct Contained {
    pub hier: Hierarchy,
    pub cg: StepCg,
}

impl Contained {
    /// Kills what is left in the step's cgroup (bounded), then reads its
    /// OOM kills and removes it. Blocking.
    pub(super) fn end(&self) -> u64 {
        let (h, cg) = (&self.hier, &self.cg);
        let gone = cgroup::wait_for(Duration::from_secs(30), || {
            h.signal(cg, false, libc::SIGKILL);
            h.step_pids(cg).is_empty()
        });
        if !gone {
            tracing::error!(
                "{}.{}: processes survive SIGKILL: {:?}",
                cg.job_id,
                cg.step.dir(),
                h.step_pids(cg)
            );
        }
        let n = h.oom_kills(cg);
        if let Err(e) = h.remove_step(cg) {
            tracing::warn!("{}.{}: step cgroup: {e}", cg.job_id, cg.step.dir());
        }
        n
    }
}

impl Registry {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(u32, u32), Vec<i32>>> {
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

    pub(super) fn set_owner(&self, s: StepId, uid: u32) {
        self.owners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert((s.job_id, s.step_id), uid);
    }

    pub(super) fn add(&self, s: StepId, pid: i32) {
        self.lock()
            .entry((s.job_id, s.step_id))
            .or_default()
            .push(pid);
    }

    pub(super) fn cgroups(&self) -> std::sync::MutexGuard<'_, HashMap<(u32, u32), Contained>> {
        self.cgroups.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn set_cgroup(&self, s: StepId, c: Contained) {
        self.cgroups().insert((s.job_id, s.step_id), c);
    }

    /// Signals one step: everything in its cgroup, or its tasks' sessions.
    pub(super) fn signal_one(&self, key: (u32, u32), pids: &[i32], sig: Signal) {
        let cg = self.cgroups().get(&key).cloned();
        match cg {
            Some(c) => {
                c.hier.signal(&c.cg, false, sig as i32);
            }
            None => {
                for &pid in pids {
                    crate::track::signal_session(pid, sig);
                }
            }
        }
    }

    pub(super) fn remove(&self, s: StepId) {
        self.cgroups().remove(&(s.job_id, s.step_id));
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

    /// Signals one step's processes; false if unknown.
    pub fn signal_step(&self, job_id: u32, step_id: u32, sig: Signal) -> bool {
        let pids = self.lock().get(&(job_id, step_id)).cloned();
        match pids {
            Some(p) => {
                self.signal_one((job_id, step_id), &p, sig);
                true
            }
            None => false,
        }
    }

    /// Signals every step of a job; returns how many steps there were.
    pub fn signal_job(&self, job_id: u32, sig: Signal) -> usize {
        let all: Vec<((u32, u32), Vec<i32>)> = self
            .lock()
            .iter()
            .filter(|((j, _), _)| *j == job_id)
            .map(|(k, p)| (*k, p.clone()))
            .collect();
        for (k, p) in &all {
            self.signal_one(*k, p, sig);
        }
        all.len()
    }
}
