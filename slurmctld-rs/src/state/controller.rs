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
    pub conf: Arc<ClusterConf>,
    pub nodes: table::Nodes,
    pub jobs: table::Jobs,
    pub next_job_id: u32,
    pub boot_time: Time,
    pub last_node_update: Time,
    pub last_part_update: Time,
    pub last_job_update: Time,
    pub last_ping: Time,
    /// Steps and interactive-allocation callbacks, by job id.
    pub steps: table::Table<u32, steps::JobSteps>,
    /// The scheduler's own state: the backfill plan and its cadence.
    pub sched: sched::SchedState,
    /// Event counts for sdiag (not saved: they restart with the daemon).
    pub counters: counters::Counters,
    /// Job arrays: task records and the meta records' pending tasks.
    pub arrays: arrays::Arrays,
    /// Dependencies of pending jobs, by job id.
    pub deps: deps::Deps,
}
