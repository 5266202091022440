//! The state machine's errors. Each maps to the Slurm errno the client
//! gets (and prints its own text for); [`StateError::errno`] is used only
//! where a reply is encoded.

use slurm_wire::errno::*;

/// Why a command was refused or failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// `ESLURM_USER_ID_MISSING`.
    #[error("Invalid user id")]
    InvalidUserId,
    /// `ESLURM_ACCESS_DENIED`.
    #[error("Access/permission denied")]
    AccessDenied,
    /// `ESLURM_INVALID_JOB_ID`.
    #[error("Invalid job id specified")]
    InvalidJobId,
    /// `ESLURM_DEPENDENCY`.
    #[error("Job dependency problem")]
    Dependency,
    /// `ESLURM_CIRCULAR_DEPENDENCY`.
    #[error("Circular job dependency")]
    CircularDependency,
    /// `ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE`.
    #[error("Requested node configuration is not available")]
    NodeConfigUnavailable,
    /// `ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE`.
    #[error("Requested partition configuration not available now")]
    PartConfigUnavailable,
    /// `ESLURM_INVALID_NODE_NAME`.
    #[error("Invalid node name specified")]
    InvalidNodeName,
    /// `ESLURM_INVALID_NODE_STATE`.
    #[error("Invalid node state specified")]
    InvalidNodeState,
    /// `ESLURM_INVALID_NODE_COUNT`.
    #[error("Node count specification invalid")]
    InvalidNodeCount,
    /// `ESLURM_ALREADY_DONE`.
    #[error("Job/step already completing or completed")]
    AlreadyDone,
    /// `ESLURM_JOB_FINISHED`.
    #[error("Job has already finished")]
    JobFinished,
    /// `ESLURM_JOB_NOT_PENDING`.
    #[error("Job is no longer pending execution")]
    JobNotPending,
    /// `ESLURM_JOB_PENDING`.
    #[error("Job is pending execution")]
    JobPending,
    /// `ESLURM_JOB_HELD`.
    #[error("Job is in held state, pending scheduler release")]
    JobHeld,
    /// `ESLURM_TRANSITION_STATE_NO_UPDATE`.
    #[error("Job can not be altered now, try again later")]
    NotAlterableNow,
    /// `ESLURM_INVALID_PARTITION_NAME`.
    #[error("Invalid partition name specified")]
    InvalidPartitionName,
    /// `ESLURM_DEFAULT_PARTITION_NOT_SET`.
    #[error("No partition specified or system default partition")]
    NoPartition,
    /// `ESLURM_PARTITION_IN_USE`.
    #[error("Partition is in use")]
    PartitionInUse,
    /// `ESLURM_PARTITION_NOT_AVAIL`.
    #[error("Required partition not available (inactive or drain)")]
    PartitionUnavailable,
    /// `ESLURM_JOB_MISSING_REQUIRED_PARTITION_GROUP`.
    #[error("User's group not permitted to use this partition")]
    GroupNotPermitted,
    /// `ESLURM_INVALID_FEATURE`.
    #[error("Invalid feature specification")]
    InvalidFeature,
    /// `ESLURM_INVALID_GRES`.
    #[error("Invalid generic resource (gres) specification")]
    InvalidGres,
    /// `ESLURM_BAD_TASK_COUNT`.
    #[error("Task count specification invalid")]
    BadTaskCount,
    /// `ESLURM_INVALID_TIME_LIMIT`.
    #[error("Requested time limit is invalid (missing or exceeds some limit)")]
    InvalidTimeLimit,
    /// `ESLURM_INVALID_ARRAY`.
    #[error("Invalid job array specification")]
    InvalidArray,
    /// `ESLURM_INVALID_ACCOUNT`.
    #[error("Invalid account or account/partition combination specified")]
    InvalidAccount,
    /// `ESLURM_GROUP_ID_MISSING`.
    #[error("Invalid group id")]
    InvalidGroupId,
    /// `ESLURM_AUTH_NOBODY`.
    #[error("Rejecting authentication of user nobody or group nobody")]
    Nobody,
    /// `ESLURM_DISABLED`.
    #[error("Requested operation is presently disabled")]
    Disabled,
    /// `ESLURM_NOT_SUPPORTED`.
    #[error("Requested operation not supported on this system")]
    NotSupported,
    /// `ESLURM_JOB_SCRIPT_MISSING`.
    #[error("Job script not specified")]
    ScriptMissing,
    /// `ESLURM_BATCH_ONLY`.
    #[error("Only batch jobs are accepted or processed")]
    BatchOnly,
    /// `ESLURM_CAN_NOT_START_IMMEDIATELY`.
    #[error("Job can not start immediately")]
    CannotStartNow,
    /// `ESLURM_PRIO_RESET_FAIL`.
    #[error("Changes to job priority are not persistent, change nice instead")]
    PriorityNotPersistent,
    /// `ESLURM_WRITING_TO_FILE`.
    #[error("I/O error writing script/environment to file")]
    WriteFailed,
    /// `SLURM_ERROR`.
    #[error("Unspecified error")]
    Unspecified,
}

impl StateError {
    /// Every variant, for tests and tables.
    pub const ALL: [StateError; 37] = [
        StateError::InvalidUserId,
        StateError::AccessDenied,
        StateError::InvalidJobId,
        StateError::Dependency,
        StateError::CircularDependency,
        StateError::NodeConfigUnavailable,
        StateError::PartConfigUnavailable,
        StateError::InvalidNodeName,
        StateError::InvalidNodeState,
        StateError::InvalidNodeCount,
        StateError::AlreadyDone,
        StateError::JobFinished,
        StateError::JobNotPending,
        StateError::JobPending,
        StateError::JobHeld,
        StateError::NotAlterableNow,
        StateError::InvalidPartitionName,
        StateError::NoPartition,
        StateError::PartitionInUse,
        StateError::PartitionUnavailable,
        StateError::GroupNotPermitted,
        StateError::InvalidFeature,
        StateError::InvalidGres,
        StateError::BadTaskCount,
        StateError::InvalidTimeLimit,
        StateError::InvalidArray,
        StateError::InvalidAccount,
        StateError::InvalidGroupId,
        StateError::Nobody,
        StateError::Disabled,
        StateError::NotSupported,
        StateError::ScriptMissing,
        StateError::BatchOnly,
        StateError::CannotStartNow,
        StateError::PriorityNotPersistent,
        StateError::WriteFailed,
        StateError::Unspecified,
    ];

    /// The wire value.
    pub fn errno(self) -> i32 {
        match self {
            StateError::InvalidUserId => ESLURM_USER_ID_MISSING,
            StateError::AccessDenied => ESLURM_ACCESS_DENIED,
            StateError::InvalidJobId => ESLURM_INVALID_JOB_ID,
            StateError::Dependency => ESLURM_DEPENDENCY,
            StateError::CircularDependency => ESLURM_CIRCULAR_DEPENDENCY,
            StateError::NodeConfigUnavailable => ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE,
            StateError::PartConfigUnavailable => ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE,
            StateError::InvalidNodeName => ESLURM_INVALID_NODE_NAME,
            StateError::InvalidNodeState => ESLURM_INVALID_NODE_STATE,
            StateError::InvalidNodeCount => ESLURM_INVALID_NODE_COUNT,
            StateError::AlreadyDone => ESLURM_ALREADY_DONE,
            StateError::JobFinished => ESLURM_JOB_FINISHED,
            StateError::JobNotPending => ESLURM_JOB_NOT_PENDING,
            StateError::JobPending => ESLURM_JOB_PENDING,
            StateError::JobHeld => ESLURM_JOB_HELD,
            StateError::NotAlterableNow => ESLURM_TRANSITION_STATE_NO_UPDATE,
            StateError::InvalidPartitionName => ESLURM_INVALID_PARTITION_NAME,
            StateError::NoPartition => ESLURM_DEFAULT_PARTITION_NOT_SET,
            StateError::PartitionInUse => ESLURM_PARTITION_IN_USE,
            StateError::PartitionUnavailable => ESLURM_PARTITION_NOT_AVAIL,
            StateError::GroupNotPermitted => ESLURM_JOB_MISSING_REQUIRED_PARTITION_GROUP,
            StateError::InvalidFeature => ESLURM_INVALID_FEATURE,
            StateError::InvalidGres => ESLURM_INVALID_GRES,
            StateError::BadTaskCount => ESLURM_BAD_TASK_COUNT,
            StateError::InvalidTimeLimit => ESLURM_INVALID_TIME_LIMIT,
            StateError::InvalidArray => ESLURM_INVALID_ARRAY,
            StateError::InvalidAccount => ESLURM_INVALID_ACCOUNT,
            StateError::InvalidGroupId => ESLURM_GROUP_ID_MISSING,
            StateError::Nobody => ESLURM_AUTH_NOBODY,
            StateError::Disabled => ESLURM_DISABLED,
            StateError::NotSupported => ESLURM_NOT_SUPPORTED,
            StateError::ScriptMissing => ESLURM_JOB_SCRIPT_MISSING,
            StateError::BatchOnly => ESLURM_BATCH_ONLY,
            StateError::CannotStartNow => ESLURM_CAN_NOT_START_IMMEDIATELY,
            StateError::PriorityNotPersistent => ESLURM_PRIO_RESET_FAIL,
            StateError::WriteFailed => ESLURM_WRITING_TO_FILE,
            StateError::Unspecified => SLURM_ERROR,
        }
    }
}

/// The wire value of an outcome: SLURM_SUCCESS or the error's errno.
pub fn errno_of(r: Result<(), StateError>) -> i32 {
    r.err().map_or(SLURM_SUCCESS, StateError::errno)
}

/// The outcome with the larger errno: several targets' outcomes folded
/// into one reply, as stock reports the largest return code.
pub fn worse(a: Result<(), StateError>, b: Result<(), StateError>) -> Result<(), StateError> {
    if errno_of(b) > errno_of(a) {
        b
    } else {
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The errno each variant stands for, by name (a match, so that a new
    /// variant must say which).
    fn slurm_name(e: StateError) -> Option<&'static str> {
        match e {
            StateError::Unspecified => None,
            StateError::InvalidUserId => Some("ESLURM_USER_ID_MISSING"),
            StateError::AccessDenied => Some("ESLURM_ACCESS_DENIED"),
            StateError::InvalidJobId => Some("ESLURM_INVALID_JOB_ID"),
            StateError::Dependency => Some("ESLURM_DEPENDENCY"),
            StateError::CircularDependency => Some("ESLURM_CIRCULAR_DEPENDENCY"),
            StateError::NodeConfigUnavailable => Some("ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE"),
            StateError::PartConfigUnavailable => Some("ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE"),
            StateError::InvalidNodeName => Some("ESLURM_INVALID_NODE_NAME"),
            StateError::InvalidNodeState => Some("ESLURM_INVALID_NODE_STATE"),
            StateError::InvalidNodeCount => Some("ESLURM_INVALID_NODE_COUNT"),
            StateError::AlreadyDone => Some("ESLURM_ALREADY_DONE"),
            StateError::JobFinished => Some("ESLURM_JOB_FINISHED"),
            StateError::JobNotPending => Some("ESLURM_JOB_NOT_PENDING"),
            StateError::JobPending => Some("ESLURM_JOB_PENDING"),
            StateError::JobHeld => Some("ESLURM_JOB_HELD"),
            StateError::NotAlterableNow => Some("ESLURM_TRANSITION_STATE_NO_UPDATE"),
            StateError::InvalidPartitionName => Some("ESLURM_INVALID_PARTITION_NAME"),
            StateError::NoPartition => Some("ESLURM_DEFAULT_PARTITION_NOT_SET"),
            StateError::PartitionInUse => Some("ESLURM_PARTITION_IN_USE"),
            StateError::PartitionUnavailable => Some("ESLURM_PARTITION_NOT_AVAIL"),
            StateError::GroupNotPermitted => Some("ESLURM_JOB_MISSING_REQUIRED_PARTITION_GROUP"),
            StateError::InvalidFeature => Some("ESLURM_INVALID_FEATURE"),
            StateError::InvalidGres => Some("ESLURM_INVALID_GRES"),
            StateError::BadTaskCount => Some("ESLURM_BAD_TASK_COUNT"),
            StateError::InvalidTimeLimit => Some("ESLURM_INVALID_TIME_LIMIT"),
            StateError::InvalidArray => Some("ESLURM_INVALID_ARRAY"),
            StateError::InvalidAccount => Some("ESLURM_INVALID_ACCOUNT"),
            StateError::InvalidGroupId => Some("ESLURM_GROUP_ID_MISSING"),
            StateError::Nobody => Some("ESLURM_AUTH_NOBODY"),
            StateError::Disabled => Some("ESLURM_DISABLED"),
            StateError::NotSupported => Some("ESLURM_NOT_SUPPORTED"),
            StateError::ScriptMissing => Some("ESLURM_JOB_SCRIPT_MISSING"),
            StateError::BatchOnly => Some("ESLURM_BATCH_ONLY"),
            StateError::CannotStartNow => Some("ESLURM_CAN_NOT_START_IMMEDIATELY"),
            StateError::PriorityNotPersistent => Some("ESLURM_PRIO_RESET_FAIL"),
            StateError::WriteFailed => Some("ESLURM_WRITING_TO_FILE"),
        }
    }

    #[test]
    fn every_errno_is_distinct_and_known() {
        let mut seen = BTreeSet::new();
        for e in StateError::ALL {
            assert!(seen.insert(e.errno()), "{e:?}: errno {} twice", e.errno());
            assert_eq!(name(e.errno()), slurm_name(e), "{e:?}");
            assert!(!e.to_string().is_empty());
        }
        // SLURM_ERROR (-1) is the one code without a symbolic name.
        assert_eq!(StateError::Unspecified.errno(), SLURM_ERROR);
        assert!(!seen.contains(&SLURM_SUCCESS));
    }
}
