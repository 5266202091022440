//! What goes into the state machine and what comes out: [`Command`]s and
//! what the log and pipeline do with each ([`CommandMeta`]), [`Reply`]s and
//! [`Effect`]s. A leaf: it names data types only, never the controller.

use super::config::ClusterConf;
use super::error::StateError;
use super::job::UserInfo;
use slurm_wire::errno::{ESLURMD_KILL_JOB_ALREADY_COMPLETE, SLURM_ERROR};
use slurm_wire::msg::job::{KillJobsMsg, KillJobsRespJob};
use slurm_wire::msg::job_desc::JobDescMsg;
use slurm_wire::msg::node::{SlurmNodeRegistrationStatusMsg, UpdateNodeMsg};
use slurm_wire::{Message, ProtocolVersion};
use std::collections::BTreeSet;

/// Unix seconds; the only clock the state machine knows.
pub type Time = i64;

/// `MEM_PER_CPU`: the top bit of `pn_min_memory` means "per CPU".
pub const MEM_PER_CPU: u64 = 0x8000_0000_0000_0000;
/// Signal numbers used by scancel.
pub const SIGKILL: u16 = 9;

/// Everything that changes the cluster.
#[derive(Debug, Clone)]
pub enum Command {
    /// Periodic: node timeouts, pings, time limits, scheduling, purging.
    Tick,
    /// MESSAGE_NODE_REGISTRATION_STATUS from a slurmd speaking `version`.
    Register {
        msg: Box<SlurmNodeRegistrationStatusMsg>,
        version: ProtocolVersion,
        uid: u32,
    },
    /// What happened to an outbound RPC ([`super::outcome`] says what it
    /// means: a node alive or unreachable, a launch failed, ...).
    RpcDone {
        node: String,
        purpose: Purpose,
        outcome: RpcOutcome,
    },
    UpdateNode {
        uid: u32,
        msg: Box<UpdateNodeMsg>,
    },
    Submit {
        user: UserInfo,
        desc: Box<JobDescMsg>,
        version: ProtocolVersion,
    },
    /// scancel (REQUEST_KILL_JOB, REQUEST_CANCEL_JOB_STEP): whether it
    /// cancels or only signals is decided by `apply`, on the state it
    /// finds. `version` is the client's (a step's refusal depends on it).
    Signal {
        uid: u32,
        target: SignalTarget,
        signal: u16,
        flags: u16,
        version: ProtocolVersion,
    },
    /// REQUEST_KILL_JOBS (`scancel --ctld` with filters): the jobs are
    /// picked by the filters inside `apply`.
    KillJobs {
        uid: u32,
        filter: Box<KillJobsMsg>,
    },
    /// REQUEST_COMPLETE_BATCH_SCRIPT from the batch host's slurmd.
    BatchComplete {
        uid: u32,
        job_id: u32,
        job_rc: u32,
        slurm_rc: u32,
        node: Option<String>,
    },
    /// MESSAGE_EPILOG_COMPLETE from a node.
    EpilogComplete {
        uid: u32,
        job_id: u32,
        node: Option<String>,
        rc: u32,
    },
    /// The configuration was re-read (SIGHUP, `scontrol reconfigure`).
    Reconfigure(Box<ClusterConf>),
    /// REQUEST_RESOURCE_ALLOCATION: an interactive job (srun, salloc).
    Allocate {
        user: UserInfo,
        desc: Box<JobDescMsg>,
        version: ProtocolVersion,
        /// srun's address, as the connection came from.
        resp_host: String,
    },
    /// REQUEST_JOB_STEP_CREATE.
    StepCreate {
        uid: u32,
        req: Box<slurm_wire::msg::step::JobStepCreateRequestMsg>,
        version: ProtocolVersion,
    },
    /// REQUEST_STEP_COMPLETE.
    StepComplete {
        uid: u32,
        msg: Box<slurm_wire::msg::step::StepCompleteMsg>,
    },
    /// REQUEST_COMPLETE_JOB_ALLOCATION: srun/salloc is done with its job.
    CompleteAllocation {
        uid: u32,
        job_id: u32,
        job_rc: u32,
    },
    /// REQUEST_UPDATE_JOB: scontrol hold/uhold/release/update job.
    UpdateJob {
        uid: u32,
        job_id: u32,
        desc: Box<JobDescMsg>,
        version: ProtocolVersion,
    },
    /// REQUEST_JOB_REQUEUE: scontrol requeue[hold], slurmd's launch failure.
    Requeue {
        uid: u32,
        job_id: u32,
        flags: u32,
    },
    /// REQUEST_UPDATE_JOB naming array tasks (`12_2`, `12_1-3`) or a
    /// whole array (`tasks` None).
    UpdateArray {
        uid: u32,
        array_job_id: u32,
        tasks: Option<Vec<u32>>,
        desc: Box<JobDescMsg>,
        version: ProtocolVersion,
    },
    /// REQUEST_JOB_REQUEUE naming array tasks or a whole array.
    RequeueArray {
        uid: u32,
        array_job_id: u32,
        tasks: Option<Vec<u32>>,
        flags: u32,
    },
    /// REQUEST_UPDATE_PARTITION.
    UpdatePartition {
        uid: u32,
        msg: Box<slurm_wire::msg::update_part::UpdatePartMsg>,
    },
    /// REQUEST_DELETE_PARTITION (`scontrol delete partition=NAME`).
    DeletePartition {
        uid: u32,
        name: String,
    },
}

/// What a [`Command::Signal`] is aimed at, as the client named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignalTarget {
    /// A job id: that job, or every record of the array it names.
    Job(u32),
    /// One step of a job (`scancel 12.3`).
    Step { job_id: u32, step_id: u32 },
    /// Tasks of an array (`12_3`, `12_[1-2]`).
    Tasks { array_job_id: u32, tasks: Vec<u32> },
}

/// How an outbound RPC ended, as the agent saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RpcOutcome {
    /// No answer: not reachable, timed out, refused the connection or the
    /// credential.
    Failed,
    /// RESPONSE_PING_SLURMD, with the node's load.
    Load { cpu_load: u32, free_mem: u64 },
    /// A return code.
    Rc(i32),
    /// Any other answer.
    Other,
}

/// What happens to a command while the write-ahead log cannot be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenLogDown<'a> {
    /// Answered ESLURM_WRITING_TO_FILE: the client may retry.
    Refused,
    /// A report of what happened on a node or to a step: held until the log
    /// works again, never lost (up to a bound).
    Held,
    /// The liveness of the node named: only the newest report per node is
    /// held (older ones are moot).
    NewestOf(&'a str),
}

/// What the log, the commit pipeline and the scheduler do with a command:
/// decided here once, for every variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandMeta<'a> {
    /// Has a log record, and is applied only once that record is synced.
    /// The others change no state (signals) or are followed by a snapshot
    /// (reconfiguration).
    pub logged: bool,
    /// What happens to it while it cannot be logged.
    pub when_log_down: WhenLogDown<'a>,
    /// May free resources or make nodes usable: the scheduler re-tests the
    /// jobs that failed to fit.
    pub may_free: bool,
    /// Replaces the configuration (the daemon then follows the new one).
    pub reconfigures: bool,
}

impl Command {
    /// This command's [`CommandMeta`]. No catch-all arm: a new variant
    /// must say what it is.
    pub fn meta(&self) -> CommandMeta<'_> {
        use WhenLogDown::*;
        let m = |logged, when_log_down, may_free| CommandMeta {
            logged,
            when_log_down,
            may_free,
            reconfigures: false,
        };
        match self {
            // Creates work or only runs the scheduler: frees nothing.
            Command::Tick => m(true, Refused, false),
            Command::Submit { .. } | Command::Allocate { .. } | Command::StepCreate { .. } => {
                m(true, Refused, false)
            }
            Command::Register { .. }
            | Command::BatchComplete { .. }
            | Command::EpilogComplete { .. }
            | Command::StepComplete { .. }
            | Command::CompleteAllocation { .. } => m(true, Held, true),
            Command::RpcDone {
                node,
                purpose,
                outcome,
            } => match meaning(purpose, outcome) {
                Meaning::Alive { .. } | Meaning::Unreachable => m(true, NewestOf(node), true),
                Meaning::LaunchFailed { .. } | Meaning::TerminateDone { .. } => m(true, Held, true),
                // Changes nothing.
                Meaning::Nothing => m(false, Refused, false),
            },
            Command::UpdateNode { .. }
            | Command::UpdateJob { .. }
            | Command::Requeue { .. }
            | Command::UpdateArray { .. }
            | Command::RequeueArray { .. }
            | Command::UpdatePartition { .. }
            | Command::DeletePartition { .. } => m(true, Refused, true),
            // Only SIGKILL may cancel (a pending job whatever the flags);
            // other signals change no state. Counted as freeing (safe,
            // only slower).
            Command::Signal { target, signal, .. } => {
                let may_cancel = *signal == SIGKILL && !matches!(target, SignalTarget::Step { .. });
                m(may_cancel, Refused, true)
            }
            Command::KillJobs { filter, .. } => m(filter.signal == SIGKILL, Refused, true),
            Command::Reconfigure(_) => CommandMeta {
                reconfigures: true,
                ..m(false, Refused, true)
            },
        }
    }
}

/// The synchronous answer to a command.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Done, nothing more to say (SLURM_SUCCESS).
    Ok,
    /// Refused or failed.
    Err(StateError),
    Submitted {
        job_id: u32,
    },
    /// Registration accepted: the node's TRES for the response.
    Registered {
        node: usize,
    },
    /// A step was created.
    Step {
        job_id: u32,
        step_id: u32,
    },
    /// Return codes per group of array tasks (RESPONSE_JOB_ARRAY_ERRORS).
    ArrayErrors(Vec<TaskGroup>),
    /// One answer per job or task a REQUEST_KILL_JOBS acted on or left
    /// out (RESPONSE_KILL_JOBS).
    KillJobs(Vec<KillJobsRespJob>),
}

impl From<Result<(), StateError>> for Reply {
    fn from(r: Result<(), StateError>) -> Self {
        match r {
            Ok(()) => Reply::Ok,
            Err(e) => Reply::Err(e),
        }
    }
}

impl Reply {
    /// The outcome of a reply that is not an error: success.
    pub fn result(&self) -> Result<(), StateError> {
        match self {
            Reply::Err(e) => Err(*e),
            _ => Ok(()),
        }
    }
}

/// Why an outbound RPC is sent; the agent reports failures back by this.
#[derive(Debug, Clone, PartialEq)]
pub enum Purpose {
    Ping,
    /// Ask slurmd to register again (after it came back from not responding).
    Reregister,
    Launch {
        job_id: u32,
    },
    Terminate {
        job_id: u32,
    },
    Signal {
        job_id: u32,
    },
    /// A message to an srun (one way, authenticated for its user).
    Srun {
        uid: u32,
    },
}

/// What an RPC's outcome means for the cluster; the one mapping, used by
/// [`Command::meta`] and `apply`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Meaning {
    /// The node answered a ping: alive, with its load (None: keep the
    /// last known).
    Alive { load: Option<(u32, u64)> },
    /// A ping got no answer.
    Unreachable,
    /// The batch launch failed (refused with code `rc`, or lost:
    /// SLURM_ERROR).
    LaunchFailed { job_id: u32, rc: i32 },
    /// slurmd answered a terminate with "already complete": no epilog
    /// message will follow, the node is done with the job.
    TerminateDone { job_id: u32 },
    /// Nothing changes: a node that misses a terminate is caught by its
    /// ping or its next registration; a signal's result changes nothing.
    Nothing,
}

/// The [`Meaning`] of `outcome` of an RPC sent for `purpose`.
pub fn meaning(purpose: &Purpose, outcome: &RpcOutcome) -> Meaning {
    match (purpose, *outcome) {
        (Purpose::Ping, RpcOutcome::Load { cpu_load, free_mem }) => Meaning::Alive {
            load: Some((cpu_load, free_mem)),
        },
        (Purpose::Ping, RpcOutcome::Failed) => Meaning::Unreachable,
        (Purpose::Ping, _) => Meaning::Alive { load: None },
        (&Purpose::Launch { job_id }, RpcOutcome::Rc(rc)) if rc != 0 => {
            Meaning::LaunchFailed { job_id, rc }
        }
        (&Purpose::Launch { job_id }, RpcOutcome::Failed) => Meaning::LaunchFailed {
            job_id,
            rc: SLURM_ERROR,
        },
        (&Purpose::Terminate { job_id }, RpcOutcome::Rc(ESLURMD_KILL_JOB_ALREADY_COMPLETE)) => {
            Meaning::TerminateDone { job_id }
        }
        _ => Meaning::Nothing,
    }
}

/// An RPC to a slurmd, in that node's protocol version.
#[derive(Debug, Clone, PartialEq)]
pub struct Outbound {
    pub node: String,
    pub addr: String,
    pub port: u16,
    pub version: ProtocolVersion,
    /// Job credentials inside are unsigned; the agent signs them.
    pub msg: Message,
    pub purpose: Purpose,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Send(Box<Outbound>),
}

/// Tasks that got one return code (stock's `resp_array_struct_t`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskGroup {
    pub rc: Result<(), StateError>,
    pub tasks: BTreeSet<u32>,
}
