//! The controller's state, as a leaf: the commands that change it are
//! `impl Controller` blocks in the sibling modules, which name this one.

use super::command::Time;
use super::config::ClusterConf;
use super::{arrays, counters, deps, steps, table};
use crate::sched;
use std::sync::Arc;

/// The whole cluster. Cheap enough to clone into a read snapshot after each
/// batch of commands (reads never wait on writes).
#[derive(Debug, Clone)]
pub struct Controller {
    pub(super) conf: Arc<ClusterConf>,
    pub(super) nodes: table::Nodes,
    pub(super) jobs: table::Jobs,
    pub(super) next_job_id: u32,
    pub(super) boot_time: Time,
    pub(super) last_node_update: Time,
    pub(super) last_part_update: Time,
    pub(super) last_job_update: Time,
    pub(super) last_ping: Time,
    /// Steps and interactive-allocation callbacks, by job id.
    pub(super) steps: table::Table<u32, steps::JobSteps>,
    /// The scheduler's own state: the backfill plan and its cadence.
    pub(super) sched: sched::SchedState,
    /// Event counts for sdiag (not saved: they restart with the daemon).
    pub(super) counters: counters::Counters,
    /// Job arrays: task records and the meta records' pending tasks.
    pub(super) arrays: arrays::Arrays,
    /// Dependencies of pending jobs, by job id.
    pub(super) deps: deps::Deps,
}

/// What the daemon, the listings and persistence read of the counters and
/// stamps (only the state machine changes them).
impl Controller {
    /// The id the next job gets.
    pub fn next_job_id(&self) -> u32 {
        self.next_job_id
    }

    /// Restores the next job id from saved state.
    pub(crate) fn set_next_job_id(&mut self, id: u32) {
        self.next_job_id = id;
    }

    pub fn boot_time(&self) -> Time {
        self.boot_time
    }

    /// When a node record last changed (`sinfo -i`, `scontrol show node`).
    pub fn last_node_update(&self) -> Time {
        self.last_node_update
    }

    /// When the partitions last changed.
    pub fn last_part_update(&self) -> Time {
        self.last_part_update
    }

    /// When a job, step, array or dependency record last changed.
    pub fn last_job_update(&self) -> Time {
        self.last_job_update
    }

    /// When the nodes were last pinged (a Tick that pinged).
    pub fn last_ping(&self) -> Time {
        self.last_ping
    }

    /// The scheduler's own state.
    pub fn sched(&self) -> &sched::SchedState {
        &self.sched
    }

    /// Event counts for sdiag.
    pub fn counters(&self) -> counters::Counters {
        self.counters
    }

    /// The configuration in force.
    pub fn conf(&self) -> &Arc<ClusterConf> {
        &self.conf
    }

    /// The nodes, in configuration order.
    pub fn nodes(&self) -> &table::Nodes {
        &self.nodes
    }

    /// Every job record, by id.
    pub fn jobs(&self) -> &table::Jobs {
        &self.jobs
    }

    /// The configuration, replaced in place by tests.
    #[cfg(test)]
    pub(crate) fn conf_mut(&mut self) -> &mut Arc<ClusterConf> {
        &mut self.conf
    }

    /// The nodes, to restore saved state into (persist/) and for tests.
    pub(crate) fn nodes_mut(&mut self) -> &mut table::Nodes {
        &mut self.nodes
    }

    /// The jobs, to restore saved state into (persist/) and for tests.
    pub(crate) fn jobs_mut(&mut self) -> &mut table::Jobs {
        &mut self.jobs
    }

    /// Steps and interactive-allocation callbacks, by job id.
    pub fn steps(&self) -> &table::Table<u32, steps::JobSteps> {
        &self.steps
    }

    /// Job arrays: task records and the meta records' pending tasks.
    pub fn arrays(&self) -> &arrays::Arrays {
        &self.arrays
    }

    /// Dependencies of pending jobs, by job id.
    pub fn deps(&self) -> &deps::Deps {
        &self.deps
    }

    /// Restores a job's steps from saved state.
    pub(crate) fn restore_steps(&mut self, job_id: u32, js: steps::JobSteps) {
        self.steps.insert(job_id, js);
    }

    /// Restores the arrays and dependencies from saved state.
    pub(crate) fn restore_arrays(&mut self, arrays: arrays::Arrays, deps: deps::Deps) {
        (self.arrays, self.deps) = (arrays, deps);
    }
}
