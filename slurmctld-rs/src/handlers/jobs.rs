//! Job RPCs: sbatch, scancel, scontrol update/requeue, and the completions
//! slurmd reports for a job.

use super::caller::Caller;
use super::reply::{array_reply, rc_of};
use crate::shared::Shared;
use crate::state::error::StateError;
use crate::state::{Command, Reply, SignalTarget};
use crate::users::lookup_user;
use slurm_rpc::rc_message;
use slurm_wire::errno::*;
use slurm_wire::msg::common::ReturnCodeMsgWithText;
use slurm_wire::msg::job::{
    JobStepKillMsg, KillJobsMsg, KillJobsRespMsg, RequeueMsg, SubmitResponseMsg,
};
use slurm_wire::msg::job_desc::JobDescMsg;
use slurm_wire::msg::kill::EpilogCompleteMsg;
use slurm_wire::msg::step::CompleteBatchScriptMsg;
use slurm_wire::pack::NO_VAL;
use slurm_wire::types::StepId;
use slurm_wire::Message;

/// REQUEST_SUBMIT_BATCH_JOB (sbatch).
pub async fn submit(sh: &Shared, who: &Caller, mut desc: JobDescMsg) -> Message {
    crate::alloc_host::settle(sh.snapshot().conf(), who.peer.ip(), &mut desc);
    let user = lookup_user(who.uid, who.gid);
    let part = desc.partition.clone();
    let cmd = Command::Submit {
        user,
        desc: Box::new(desc),
        version: who.version,
    };
    match sh.exec(cmd).await {
        Reply::Submitted { job_id } => Message::ResponseSubmitBatchJob(SubmitResponseMsg {
            step_id: StepId {
                sluid: 0,
                job_id,
                step_id: StepId::BATCH_SCRIPT,
                step_het_comp: NO_VAL,
            },
            error_code: 0,
            job_submit_user_msg: None,
        }),
        // Stock explains which name it did not know; clients print it.
        Reply::Err(StateError::InvalidPartitionName) => {
            Message::ResponseSlurmRcMsg(ReturnCodeMsgWithText {
                return_code: StateError::InvalidPartitionName.errno() as u32,
                err_msg: Some(format!(
                    "invalid partition specified: {}",
                    part.as_deref().unwrap_or("")
                )),
            })
        }
        r => rc_of(r),
    }
}

/// REQUEST_KILL_JOB and REQUEST_CANCEL_JOB_STEP (scancel): what the
/// request names; whether it cancels is the state machine's decision.
pub async fn kill(sh: &Shared, who: &Caller, m: JobStepKillMsg) -> Message {
    let max_task = sh.snapshot().max_array_size();
    let target = match m
        .sjob_id
        .as_deref()
        .map(|s| crate::state::array::parse_job_id_str(s, max_task))
    {
        Some(Ok((id, None))) => SignalTarget::Job(id),
        // Array tasks: `12_3`, `12_[1-2]`, with the client's flags (`-b`,
        // `--full`, `--signal`) as stock's job_str_signal keeps them.
        Some(Ok((array_job_id, Some(tasks)))) => SignalTarget::Tasks {
            array_job_id,
            tasks: tasks.into_iter().collect(),
        },
        Some(Err(_)) => return rc_message(ESLURM_INVALID_JOB_ID),
        // One step other than the batch script.
        None if m.step_id.step_id != NO_VAL && m.step_id.step_id != StepId::BATCH_SCRIPT => {
            SignalTarget::Step {
                job_id: m.step_id.job_id,
                step_id: m.step_id.step_id,
            }
        }
        None => SignalTarget::Job(m.step_id.job_id),
    };
    let cmd = Command::Signal {
        uid: who.uid,
        target,
        signal: m.signal,
        flags: m.flags,
        version: who.version,
    };
    rc_of(sh.exec(cmd).await)
}

/// REQUEST_KILL_JOBS (24.11+ scancel with filters).
pub async fn kill_many(sh: &Shared, who: &Caller, m: KillJobsMsg) -> Message {
    let cmd = Command::KillJobs {
        uid: who.uid,
        filter: Box::new(m),
    };
    match sh.exec(cmd).await {
        Reply::KillJobs(out) => Message::ResponseKillJobs(KillJobsRespMsg(out)),
        r => rc_of(r),
    }
}

/// A job or array tasks named by an id string (`12`, `12_3`, `12_[1-4]`),
/// else by the numeric id; None for an unparsable string.
fn target(sh: &Shared, job_id_str: Option<&str>, job_id: u32) -> Option<(u32, Option<Vec<u32>>)> {
    match job_id_str {
        Some(s) => crate::state::array::parse_job_id_str(s, sh.snapshot().max_array_size())
            .ok()
            .map(|(id, tasks)| (id, tasks.map(|t| t.into_iter().collect()))),
        None => Some((job_id, None)),
    }
}

/// REQUEST_UPDATE_JOB (scontrol update job, hold, release).
pub async fn update(sh: &Shared, who: &Caller, desc: JobDescMsg) -> Message {
    let (uid, version) = (who.uid, who.version);
    let Some((id, tasks)) = target(sh, desc.job_id_str.as_deref(), desc.step_id.job_id) else {
        return rc_message(ESLURM_INVALID_JOB_ID);
    };
    let cmd = match tasks {
        None => Command::UpdateJob {
            uid,
            job_id: id,
            desc: Box::new(desc),
            version,
        },
        Some(tasks) => Command::UpdateArray {
            uid,
            array_job_id: id,
            tasks: Some(tasks),
            desc: Box::new(desc),
            version,
        },
    };
    array_reply(id, version, sh.exec(cmd).await)
}

/// REQUEST_JOB_REQUEUE (scontrol requeue).
pub async fn requeue(sh: &Shared, who: &Caller, m: RequeueMsg) -> Message {
    let uid = who.uid;
    let Some((id, tasks)) = target(sh, m.job_id_str.as_deref(), m.step_id.job_id) else {
        return rc_message(ESLURM_INVALID_JOB_ID);
    };
    let cmd = match tasks {
        None => Command::Requeue {
            uid,
            job_id: id,
            flags: m.flags,
        },
        Some(tasks) => Command::RequeueArray {
            uid,
            array_job_id: id,
            tasks: Some(tasks),
            flags: m.flags,
        },
    };
    array_reply(id, who.version, sh.exec(cmd).await)
}

/// REQUEST_COMPLETE_BATCH_SCRIPT (slurmd: the batch script ended).
pub async fn batch_complete(sh: &Shared, who: &Caller, m: CompleteBatchScriptMsg) -> Message {
    rc_of(
        sh.exec(Command::BatchComplete {
            uid: who.uid,
            job_id: m.step_id.job_id,
            job_rc: m.job_rc,
            slurm_rc: m.slurm_rc,
            node: m.node_name,
        })
        .await,
    )
}

/// MESSAGE_EPILOG_COMPLETE (slurmd: the job's epilog ended on a node).
pub async fn epilog_complete(sh: &Shared, who: &Caller, m: EpilogCompleteMsg) -> Message {
    rc_of(
        sh.exec(Command::EpilogComplete {
            uid: who.uid,
            job_id: m.step_id.0.job_id,
            node: m.node_name,
            rc: m.return_code,
        })
        .await,
    )
}
