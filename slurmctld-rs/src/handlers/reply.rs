//! Replies shared by the handler families.

use crate::state::Reply;
use slurm_rpc::rc_message;
use slurm_wire::errno::SLURM_SUCCESS;
use slurm_wire::msg::job::{JobArrayRespEntry, JobArrayRespMsg};
use slurm_wire::{Message, ProtocolVersion};

/// The return code of a command that answers nothing else.
pub fn rc_of(r: Reply) -> Message {
    match r {
        Reply::Err(e) => rc_message(e.errno()),
        _ => rc_message(SLURM_SUCCESS),
    }
}

/// A reply that may carry return codes per group of array tasks
/// (RESPONSE_JOB_ARRAY_ERRORS). Ids read `12_1-3,5`; 26.05's controller
/// brackets the tasks (`12_[1-3,5]`, `12_[9]`).
pub fn array_reply(array_job_id: u32, v: ProtocolVersion, r: Reply) -> Message {
    match r {
        Reply::ArrayErrors(groups) => Message::ResponseJobArrayErrors(JobArrayRespMsg(
            groups
                .iter()
                .map(|g| {
                    let tasks = crate::state::array_ctl::task_ranges(&g.tasks);
                    let id = if v >= ProtocolVersion::V26_05 {
                        format!("{array_job_id}_[{tasks}]")
                    } else {
                        format!("{array_job_id}_{tasks}")
                    };
                    JobArrayRespEntry {
                        error_code: crate::state::error::errno_of(g.rc) as u32,
                        job_array_id: Some(id),
                        err_msg: None,
                    }
                })
                .collect(),
        )),
        r => rc_of(r),
    }
}
