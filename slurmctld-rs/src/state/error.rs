//! The state machine's errors. Each maps to the Slurm errno the client
//! gets (and prints its own text for); [`StateError::errno`] is used only
//! where a reply is encoded.

use slurm_wire::errno::*;

/// Why a command was refused or failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateError {
    /// `ESLURM_USER_ID_MISSING`.
    InvalidUserId,
    /// `ESLURM_ACCESS_DENIED`.
    AccessDenied,
    /// `ESLURM_INVALID_JOB_ID`.
    InvalidJobId,
    /// `ESLURM_DEPENDENCY`.
    Dependency,
    /// `ESLURM_CIRCULAR_DEPENDENCY`.
    CircularDependency,
    /// `ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE`.
    NodeConfigUnavailable,
    /// `ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE`.
    PartConfigUnavailable,
    /// `ESLURM_INVALID_NODE_NAME`.
    InvalidNodeName,
    /// `ESLURM_INVALID_NODE_STATE`.
    InvalidNodeState,
    /// `ESLURM_INVALID_NODE_COUNT`.
    InvalidNodeCount,
    /// `ESLURM_ALREADY_DONE`.
    AlreadyDone,
    /// `ESLURM_JOB_FINISHED`.
    JobFinished,
    /// `ESLURM_JOB_NOT_PENDING`.
    JobNotPending,
    /// `ESLURM_JOB_PENDING`.
    JobPending,
    /// `ESLURM_JOB_HELD`.
    JobHeld,
    /// `ESLURM_TRANSITION_STATE_NO_UPDATE`.
    NotAlterableNow,
    /// `ESLURM_INVALID_PARTITION_NAME`.
    InvalidPartitionName,
    /// `ESLURM_DEFAULT_PARTITION_NOT_SET`.
    NoPartition,
    /// `ESLURM_PARTITION_IN_USE`.
    PartitionInUse,
    /// `ESLURM_PARTITION_NOT_AVAIL`.
    PartitionUnavailable,
    /// `ESLURM_JOB_MISSING_REQUIRED_PARTITION_GROUP`.
    GroupNotPermitted,
    /// `ESLURM_INVALID_FEATURE`.
    InvalidFeature,
    /// `ESLURM_INVALID_GRES`.
    InvalidGres,
    /// `ESLURM_BAD_TASK_COUNT`.
    BadTaskCount,
    /// `ESLURM_INVALID_TIME_LIMIT`.
    InvalidTimeLimit,
    /// `ESLURM_INVALID_ARRAY`.
    InvalidArray,
    /// `ESLURM_INVALID_ACCOUNT`.
    InvalidAccount,
    /// `ESLURM_GROUP_ID_MISSING`.
    InvalidGroupId,
    /// `ESLURM_AUTH_NOBODY`.
    Nobody,
    /// `ESLURM_DISABLED`.
    Disabled,
    /// `ESLURM_NOT_SUPPORTED`.
    NotSupported,
    /// `ESLURM_JOB_SCRIPT_MISSING`.
    ScriptMissing,
    /// `ESLURM_BATCH_ONLY`.
    BatchOnly,
    /// `ESLURM_CAN_NOT_START_IMMEDIATELY`.
    CannotStartNow,
    /// `ESLURM_PRIO_RESET_FAIL`.
    PriorityNotPersistent,
    /// `ESLURM_WRITING_TO_FILE`.
    WriteFailed,
    /// `ESLURM_SIGNAL_JOBS_INVALID`.
    SignalJobsInvalid,
    /// `SLURM_ERROR`.
    Unspecified,
}

impl StateError {
    /// Every variant, for tests and tables.
    pub const ALL: [StateError; 38] = [
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
        StateError::SignalJobsInvalid,
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
            StateError::SignalJobsInvalid => ESLURM_SIGNAL_JOBS_INVALID,
            StateError::Unspecified => SLURM_ERROR,
        }
    }
}

/// Shown as Slurm's symbolic name of the errno (clients print their own text for it).
impl std::fmt::Display for StateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(slurm_wire::errno::name(self.errno()).unwrap_or("SLURM_ERROR"))
    }
}

impl std::error::Error for StateError {}

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

    #[test]
    fn shown_by_the_errno_name() {
        assert_eq!(
            StateError::InvalidJobId.to_string(),
            "ESLURM_INVALID_JOB_ID"
        );
        assert_eq!(StateError::Unspecified.to_string(), "SLURM_ERROR");
    }

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
            StateError::SignalJobsInvalid => Some("ESLURM_SIGNAL_JOBS_INVALID"),
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
