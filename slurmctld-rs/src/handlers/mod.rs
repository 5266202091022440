//! The one RPC dispatch. Every request the controller serves is named once
//! in [`dispatch`], which hands its body to the handler of its family:
//!
//! * [`listings`]: squeue, sinfo, scontrol show (from the snapshot);
//! * [`admin`]: ping, configuration, sdiag, shutdown, reconfigure;
//! * [`nodes`]: slurmd registration, scontrol update node;
//! * [`partitions`]: partition administration;
//! * [`jobs`]: sbatch, scancel, scontrol update/requeue, batch and epilog
//!   completions;
//! * [`steps`]: salloc and srun: allocations, steps and their credentials.
//!
//! A handler decodes nothing and checks nothing the state machine checks:
//! it turns the body into a command (or a snapshot read) and the result
//! into the reply.

mod admin;
mod caller;
mod jobs;
mod listings;
mod nodes;
mod partitions;
mod privacy;
mod reply;
mod steps;

use crate::shared::Shared;
use caller::Caller;
use slurm_rpc::{rc_message, Incoming, Outgoing};
use slurm_wire::errno::ESLURM_NOT_SUPPORTED;
use slurm_wire::Message;
use std::sync::Arc;
use std::time::Instant;

/// Handles one authenticated request; None for one-way messages. Counts
/// it for sdiag once answered.
pub async fn handle(sh: Arc<Shared>, req: Incoming) -> Option<Outgoing> {
    let (ty, uid, started) = (req.msg.msg_type(), req.identity.uid, Instant::now());
    let _busy = sh.stats.server_thread();
    let reply = dispatch(&sh, req).await;
    sh.stats.rpc(ty, uid, started.elapsed());
    Some(reply)
}

async fn dispatch(sh: &Arc<Shared>, req: Incoming) -> Outgoing {
    let who = Caller::of(&req);
    let who = &who;
    let reply: Message = match req.msg {
        // Listings.
        Message::RequestJobInfo(m) => return listings::job_info(sh, who, m).await,
        Message::RequestJobUserInfo(m) => return listings::job_user_info(sh, who, m).await,
        Message::RequestNodeInfo(m) => return listings::node_info(sh, who, m).await,
        Message::RequestPartitionInfo(m) => return listings::partition_info(sh, who, m).await,
        Message::RequestNodeInfoSingle(m) => listings::node_info_single(sh, who, m),
        Message::RequestJobInfoSingle(m) => listings::job_info_single(sh, who, m),
        Message::RequestJobStepInfo(m) => listings::step_info(sh, who, m),
        // The controller itself.
        Message::RequestPing(_) => admin::ping(),
        Message::RequestFedInfo(_) => admin::fed_info(),
        Message::RequestBuildInfo(_) => admin::config(sh, who),
        Message::RequestStatsInfo(m) => admin::stats(sh, who, m.command_id),
        Message::RequestShutdown(m) => admin::shutdown(sh, who, m),
        Message::RequestReconfigure(_) => admin::reconfigure(sh, who),
        // Nodes and partitions.
        Message::MessageNodeRegistrationStatus(m) => nodes::register(sh, who, m).await,
        Message::RequestUpdateNode(m) => nodes::update(sh, who, m).await,
        Message::RequestUpdatePartition(m) => partitions::update(sh, who, m).await,
        Message::RequestDeletePartition(m) => partitions::delete(sh, who, m).await,
        // Jobs.
        Message::RequestSubmitBatchJob(m) => jobs::submit(sh, who, m).await,
        Message::RequestKillJob(m) | Message::RequestCancelJobStep(m) => {
            jobs::kill(sh, who, m).await
        }
        Message::RequestKillJobs(m) => jobs::kill_many(sh, who, m).await,
        Message::RequestUpdateJob(m) => jobs::update(sh, who, m).await,
        Message::RequestJobRequeue(m) => jobs::requeue(sh, who, m).await,
        Message::RequestCompleteBatchScript(m) => jobs::batch_complete(sh, who, m).await,
        Message::MessageEpilogComplete(m) => jobs::epilog_complete(sh, who, m).await,
        // Allocations and steps.
        Message::RequestResourceAllocation(m) => steps::allocate(sh, who, m).await,
        Message::RequestJobAllocationInfo(m) => steps::alloc_info(sh, who, m),
        Message::RequestHetJobAllocInfo(m) => steps::het_alloc_info(sh, who, m),
        Message::RequestJobReady(m) => steps::job_ready(sh, m),
        Message::RequestJobStepCreate(m) => steps::step_create(sh, who, m).await,
        Message::RequestStepComplete(m) => steps::step_complete(sh, who, m).await,
        Message::RequestCompleteJobAllocation(m) => steps::complete_allocation(sh, who, m).await,
        other => {
            tracing::warn!(uid = who.uid, "{} is not implemented", other.msg_type());
            rc_message(ESLURM_NOT_SUPPORTED)
        }
    };
    reply.into()
}
