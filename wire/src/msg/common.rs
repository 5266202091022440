//! Small bodies shared by many RPCs.

use crate::types::StepId;
use crate::wire_struct;

wire_struct! {
    /// No body at all (REQUEST_PING and friends).
    pub struct Empty {}
}

wire_struct! {
    /// `return_code_msg_t`: RESPONSE_SLURM_RC, RESPONSE_JOB_READY.
    pub struct ReturnCodeMsg {
        pub return_code: u32,
    }
}

wire_struct! {
    /// `return_code2_msg_t`: RESPONSE_SLURM_RC_MSG.
    pub struct ReturnCodeMsgWithText {
        pub return_code: u32,
        pub err_msg: Option<String>,
    }
}

wire_struct! {
    /// `last_update_msg_t`: REQUEST_BUILD_INFO and other "since" queries.
    pub struct LastUpdateMsg {
        pub last_update: i64,
    }
}

wire_struct! {
    /// `shutdown_msg_t`.
    pub struct ShutdownMsg {
        pub options: u16,
    }
}

wire_struct! {
    /// `ping_slurmd_resp_msg_t`.
    pub struct PingSlurmdRespMsg {
        pub cpu_load: u32,
        pub free_mem: u64,
    }
}

wire_struct! {
    /// `srun_job_complete_msg_t` is a bare step id.
    pub struct StepIdMsg {
        pub step_id: StepId,
    }
}

wire_struct! {
    /// `signal_tasks_msg_t`: REQUEST_SIGNAL_TASKS 6004 and
    /// REQUEST_TERMINATE_TASKS 6006 (same layout 22.05..26.05).
    pub struct SignalTasksMsg {
        pub step_id: StepId,
        pub flags: u16,
        pub signal: u16,
    }
}
