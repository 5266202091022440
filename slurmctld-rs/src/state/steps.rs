//! What the controller holds of job steps and interactive allocations,
//! apart from the step commands so that [`super::controller::Controller`]
//! can hold it without naming them.

use super::command::Time;
use slurm_wire::ProtocolVersion;
use std::collections::BTreeMap;

/// Where the srun that asked for an interactive allocation listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SrunAddr {
    pub host: String,
    /// RESPONSE_RESOURCE_ALLOCATION goes here when the grant was deferred.
    pub alloc_resp_port: u16,
    /// SRUN_* callbacks (job complete, timeout) go here.
    pub other_port: u16,
    pub version: ProtocolVersion,
    pub uid: u32,
}

/// One running step.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub step_id: u32,
    pub name: Option<String>,
    /// Node indexes, in layout order (the step's node ids).
    pub nodes: Vec<usize>,
    /// Global task ids per node of `nodes`.
    pub tids: Vec<Vec<u32>>,
    pub num_tasks: u32,
    pub task_dist: u32,
    pub cpus_per_task: u16,
    pub start_time: Time,
    /// The protocol every party of the step can speak.
    pub start_protocol_ver: ProtocolVersion,
    /// srun's step callback address (host, port).
    pub srun_host: Option<String>,
    pub srun_port: u16,
    pub srun_pid: u32,
    pub submit_line: Option<String>,
    /// Nodes (by node id) that reported REQUEST_STEP_COMPLETE.
    pub done: Vec<bool>,
    /// The largest step_rc reported.
    pub exit_code: u32,
}

/// A job's steps and, for interactive allocations, its srun.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobSteps {
    pub next_step_id: u32,
    pub steps: BTreeMap<u32, Step>,
    pub srun: Option<SrunAddr>,
    /// The grant must be sent to srun when the job starts.
    pub grant_pending: bool,
}
