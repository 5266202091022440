//! Read-only listings (squeue, sinfo, scontrol show): answered from the
//! published snapshot, never through the state machine.

use super::caller::Caller;
use super::privacy::Privacy;
use crate::reply_cache::{Key, Query};
use crate::shared::{now, Shared};
use crate::state::Controller;
use crate::users::lookup_user;
use crate::views;
use crate::visibility::Visible;
use slurm_rpc::{rc_message, Outgoing};
use slurm_wire::errno::*;
use slurm_wire::msg::job::{JobIdMsg, JobInfoRequestMsg, JobUserIdMsg};
use slurm_wire::msg::node::{NodeInfoMsg, NodeInfoRequestMsg, NodeInfoSingleMsg};
use slurm_wire::msg::partition::PartInfoRequestMsg;
use slurm_wire::msg::step_info::JobStepInfoRequestMsg;
use slurm_wire::Message;
use std::sync::Arc;

/// `(last_update - 1) >= changed`: the client's copy is current, as stock
/// tests it before answering SLURM_NO_CHANGE_IN_DATA.
fn unchanged(last_update: i64, changed: i64) -> bool {
    last_update.saturating_sub(1) >= changed
}

fn visible(snap: &Controller, who: &Caller, show_flags: u16) -> Visible {
    let (uid, gid) = (who.uid, who.gid);
    Visible::of(snap.conf(), uid, show_flags, || lookup_user(uid, gid))
}

/// A large listing from the reply cache: encoded once per snapshot and
/// shared, built off the async workers.
async fn cached(
    sh: &Arc<Shared>,
    snap: &Arc<Controller>,
    who: &Caller,
    query: Query,
    show_flags: u16,
) -> Outgoing {
    let key = Key {
        query,
        version: who.version,
        show_flags,
        visible: visible(snap, who, show_flags),
    };
    match sh.replies.get(snap, &key).await {
        Ok(body) => Outgoing::Encoded {
            msg_type: key.msg_type(),
            body,
        },
        Err(e) => {
            tracing::error!("{e}");
            rc_message(SLURM_ERROR).into()
        }
    }
}

/// REQUEST_JOB_INFO (squeue): every job from the cache; a few named jobs
/// (cheap) built here.
pub async fn job_info(sh: &Arc<Shared>, who: &Caller, m: JobInfoRequestMsg) -> Outgoing {
    let snap = sh.snapshot();
    if unchanged(m.last_update, snap.last_job_update()) {
        return rc_message(SLURM_NO_CHANGE_IN_DATA).into();
    }
    let own = Privacy::of(&snap, who.uid).own_jobs_only();
    if let Some(ids) = m.job_ids.as_deref() {
        let vis = visible(&snap, who, m.show_flags);
        let info = views::job_listing(&snap, Some(ids), own, &vis, m.show_flags, who.version);
        return Message::ResponseJobInfo(info).into();
    }
    cached(sh, &snap, who, Query::Jobs { user: own }, m.show_flags).await
}

/// REQUEST_JOB_USER_INFO (squeue -u).
pub async fn job_user_info(sh: &Arc<Shared>, who: &Caller, m: JobUserIdMsg) -> Outgoing {
    let snap = sh.snapshot();
    if Privacy::of(&snap, who.uid)
        .own_jobs_only()
        .is_some_and(|me| me != m.user_id)
    {
        // Someone else's jobs: none of them may be seen.
        let none = views::job_info_msg(&snap, Some(&[]), None, m.show_flags, who.version);
        return Message::ResponseJobInfo(none).into();
    }
    let query = Query::Jobs {
        user: Some(m.user_id),
    };
    cached(sh, &snap, who, query, m.show_flags).await
}

/// REQUEST_NODE_INFO (sinfo, scontrol show node).
pub async fn node_info(sh: &Arc<Shared>, who: &Caller, m: NodeInfoRequestMsg) -> Outgoing {
    let snap = sh.snapshot();
    let privacy = Privacy::of(&snap, who.uid);
    if !privacy.nodes() {
        return privacy.refuse("REQUEST_NODE_INFO").into();
    }
    if unchanged(m.last_update, snap.last_node_update()) {
        return rc_message(SLURM_NO_CHANGE_IN_DATA).into();
    }
    cached(sh, &snap, who, Query::Nodes, m.show_flags).await
}

/// REQUEST_PARTITION_INFO (sinfo, scontrol show partition).
pub async fn partition_info(sh: &Arc<Shared>, who: &Caller, m: PartInfoRequestMsg) -> Outgoing {
    let snap = sh.snapshot();
    let privacy = Privacy::of(&snap, who.uid);
    if !privacy.partitions() {
        return privacy.refuse("REQUEST_PARTITION_INFO").into();
    }
    if unchanged(m.last_update, snap.last_part_update()) {
        return rc_message(SLURM_NO_CHANGE_IN_DATA).into();
    }
    cached(sh, &snap, who, Query::Partitions, m.show_flags).await
}

/// REQUEST_NODE_INFO_SINGLE (scontrol show node NAME).
pub fn node_info_single(sh: &Shared, who: &Caller, m: NodeInfoSingleMsg) -> Message {
    let snap = sh.snapshot();
    let privacy = Privacy::of(&snap, who.uid);
    if !privacy.nodes() {
        return privacy.refuse("REQUEST_NODE_INFO_SINGLE");
    }
    let seen = visible(&snap, who, m.show_flags).nodes(snap.conf());
    match m
        .node_name
        .as_deref()
        // A node the requester may not see is one that is not there.
        .filter(|n| {
            let i = snap.node_index(n);
            seen.as_ref()
                .is_none_or(|s| i.is_none_or(|i| s.get(i) != Some(&false)))
        })
        .and_then(|n| views::node_info_single(&snap, n, who.version))
    {
        Some(info) => Message::ResponseNodeInfo(info),
        // Stock answers an unknown name with an empty list.
        None => Message::ResponseNodeInfo(NodeInfoMsg {
            last_update: snap.last_node_update(),
            hidden_nodes: None,
            node_array: Vec::new(),
        }),
    }
}

/// REQUEST_JOB_STEP_INFO (squeue -s, scontrol show step).
pub fn step_info(sh: &Shared, who: &Caller, m: JobStepInfoRequestMsg) -> Message {
    let snap = sh.snapshot();
    match crate::step_info::step_info_msg(&snap, &m, now(), who.version) {
        Ok(mut r) => {
            if let Some(me) = Privacy::of(&snap, who.uid).own_jobs_only() {
                r.job_steps.retain(|s| s.user_id == me);
            }
            // Steps of jobs in partitions the requester does not see.
            let vis = visible(&snap, who, m.show_flags);
            r.job_steps.retain(|s| {
                snap.jobs()
                    .get(&s.step_id.job_id)
                    .is_none_or(|j| vis.job(j))
            });
            Message::ResponseJobStepInfo(r)
        }
        Err(rc) => rc_message(rc),
    }
}

/// REQUEST_JOB_INFO_SINGLE (scontrol show job ID).
pub fn job_info_single(sh: &Shared, who: &Caller, m: JobIdMsg) -> Message {
    let snap = sh.snapshot();
    let own = Privacy::of(&snap, who.uid).own_jobs_only();
    // An array's id answers with all its records; a job that may not be
    // seen is one that is not there, as stock answers.
    match crate::views::single_job_info(&snap, m.step_id.job_id, m.show_flags, who.version).map(
        |mut info| {
            if let Some(me) = own {
                info.job_array.retain(|j| j.user_id == me);
            }
            info
        },
    ) {
        Some(info) if !info.job_array.is_empty() => Message::ResponseJobInfo(info),
        _ => rc_message(ESLURM_INVALID_JOB_ID),
    }
}
