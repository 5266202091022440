//! A job as the controller keeps it.

pub use super::node::GresAlloc;
use slurm_wire::ProtocolVersion;

/// Stock's `SIG_OOM`: the low byte of a batch job_rc whose step had OOM
/// kills.
pub const SIG_OOM: u32 = 253;

/// The batch output name stock (25.11+) stores when `--output` is unset.
pub const DEFAULT_BATCH_STDOUT: &str = "slurm-%j.out";

/// `job_states` from slurm.h (the base values).
pub mod bits {
    pub const PENDING: u32 = 0;
    pub const RUNNING: u32 = 1;
    pub const COMPLETE: u32 = 3;
    pub const CANCELLED: u32 = 4;
    pub const FAILED: u32 = 5;
    pub const TIMEOUT: u32 = 6;
    pub const NODE_FAIL: u32 = 7;
    pub const OOM: u32 = 11;
    pub const LAUNCH_FAILED: u32 = 1 << 8;
    /// Requeued and held by `scontrol requeuehold State=SpecialExit`;
    /// clients print SPECIAL_EXIT until the job is released.
    pub const SPECIAL_EXIT: u32 = 1 << 12;
    pub const COMPLETING: u32 = 1 << 15;
}

/// `job_state_reason` values used here.
pub mod reason {
    pub const WAIT_NO_REASON: u32 = 0;
    pub const WAIT_PRIORITY: u32 = 1;
    pub const WAIT_RESOURCES: u32 = 3;
    pub const WAIT_PART_NODE_LIMIT: u32 = 4;
    pub const WAIT_PART_TIME_LIMIT: u32 = 5;
    pub const WAIT_PART_DOWN: u32 = 6;
    pub const WAIT_HELD: u32 = 8;
    pub const WAIT_TIME: u32 = 9;
    pub const WAIT_NODE_NOT_AVAIL: u32 = 15;
    pub const WAIT_HELD_USER: u32 = 16;
    pub const FAIL_DOWN_NODE: u32 = 20;
    pub const FAIL_LAUNCH: u32 = 23;
    pub const FAIL_EXIT_CODE: u32 = 24;
    pub const FAIL_TIMEOUT: u32 = 25;
    /// Exhausted memory (same value 22.05..26.05).
    pub const FAIL_OOM: u32 = 181;
    /// Generic partition configuration reason (same value 22.05..26.05).
    pub const WAIT_PART_CONFIG: u32 = 178;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    Pending,
    Running,
    Complete,
    Cancelled,
    Failed,
    Timeout,
    NodeFail,
    /// JOB_OOM: the batch step had OOM kills (slurmd reports SIG_OOM).
    OutOfMemory,
}

impl JobState {
    pub fn base_bits(self) -> u32 {
        match self {
            JobState::Pending => bits::PENDING,
            JobState::Running => bits::RUNNING,
            JobState::Complete => bits::COMPLETE,
            JobState::Cancelled => bits::CANCELLED,
            JobState::Failed => bits::FAILED,
            JobState::Timeout => bits::TIMEOUT,
            JobState::NodeFail => bits::NODE_FAIL,
            JobState::OutOfMemory => bits::OOM,
        }
    }
    pub fn is_finished(self) -> bool {
        !matches!(self, JobState::Pending | JobState::Running)
    }
}

/// The submitting user, resolved by the daemon shell from the uid in the
/// credential (the state machine does no passwd lookups).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UserInfo {
    pub uid: u32,
    pub gid: u32,
    pub name: Option<String>,
    pub gecos: Option<String>,
    pub dir: Option<String>,
    pub shell: Option<String>,
    pub gids: Vec<u32>,
}

/// Control state of a job beyond the submit request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobCtl {
    /// Times the job was requeued (`Restarts=`).
    pub restart_cnt: u16,
    /// Requeued in the special exit state (JOB_SPECIAL_EXIT), until
    /// released.
    pub special_exit: bool,
}

/// Resources held on one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeAlloc {
    pub node: usize,
    pub cpus: u16,
    pub mem: u64,
    pub gres: Vec<GresAlloc>,
    /// The node's cores the job holds (see `Node::core_use`); chosen as
    /// the job starts.
    pub cores: Vec<u16>,
}

impl NodeAlloc {
    /// The job's cores on node `n` as bit offsets within the node's part
    /// of a credential's core bitmap (the first ones for an allocation
    /// made before cores were recorded).
    pub fn core_ids(&self, n: &super::node::Node) -> Vec<u32> {
        let ncores = super::node::cores_of(&n.def);
        if !self.cores.is_empty() {
            return self
                .cores
                .iter()
                .map(|&c| u32::from(c))
                .filter(|&c| (c as usize) < ncores)
                .collect();
        }
        let k = u32::from(self.cpus).div_ceil(u32::from(n.def.threads.max(1)));
        (0..k.min(ncores as u32)).collect()
    }
}

#[derive(Debug, Clone)]
pub struct Job {
    pub job_id: u32,
    /// Shared by the user's jobs (the table keeps one per distinct user).
    pub user: std::sync::Arc<UserInfo>,
    pub part: usize,
    pub state: JobState,
    /// Epilogs still running on these nodes (the COMPLETING flag).
    pub completing: Vec<usize>,
    pub state_reason: u32,
    pub state_desc: Option<String>,
    pub submit_time: i64,
    pub eligible_time: i64,
    pub start_time: i64,
    pub end_time: i64,
    /// Minutes, INFINITE when unlimited.
    pub time_limit: u32,
    pub priority: u32,
    pub min_nodes: u32,
    pub max_nodes: u32,
    pub num_tasks: u32,
    pub cpus_per_task: u16,
    /// CPUs the job asked for in all (`min_cpus`).
    pub min_cpus: u32,
    /// MiB per node, or per CPU when `mem_per_cpu`.
    pub mem: u64,
    pub mem_per_cpu: bool,
    /// GRES wanted on each node (`--gres`).
    pub gres_req: Vec<crate::gres::GresReq>,
    pub alloc: Vec<NodeAlloc>,
    pub batch_host: Option<usize>,
    /// Wait status of the batch script (upstream's `exit_code`).
    pub exit_code: u32,
    pub derived_ec: u32,
    /// The request as sent, compact; the launch message (script, env,
    /// argv ...) decodes the rest of it.
    pub req: super::req::JobReq,
    pub submit_version: ProtocolVersion,
    pub launch_failed: bool,
    pub cancelled_by: Option<u32>,
    /// Holds, requeues (state/control.rs).
    pub ctl: JobCtl,
}

impl Job {
    pub fn state_word(&self) -> u32 {
        let mut w = self.state.base_bits();
        if !self.completing.is_empty() {
            w |= bits::COMPLETING;
        }
        if self.launch_failed {
            w |= bits::LAUNCH_FAILED;
        }
        if self.ctl.special_exit && self.state == JobState::Pending {
            w |= bits::SPECIAL_EXIT;
        }
        w
    }

    pub fn name(&self) -> Option<&str> {
        self.req.name()
    }

    pub fn alloc_cpus(&self) -> u32 {
        self.alloc.iter().map(|a| u32::from(a.cpus)).sum()
    }

    /// End of the time limit for a job started at `start`.
    pub fn limit_end(&self, start: i64) -> i64 {
        if self.time_limit == slurm_wire::pack::INFINITE
            || self.time_limit == slurm_wire::pack::NO_VAL
        {
            // Stock shows a year ahead for unlimited jobs.
            start + 365 * 24 * 3600
        } else {
            start + i64::from(self.time_limit) * 60
        }
    }
}
