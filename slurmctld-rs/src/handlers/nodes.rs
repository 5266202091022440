//! Node RPCs: slurmd's registration, scontrol update node.

use super::caller::Caller;
use super::reply::rc_of;
use crate::shared::Shared;
use crate::state::{Command, Reply};
use crate::views;
use slurm_rpc::rc_message;
use slurm_wire::errno::{SLURM_ERROR, SLURM_SUCCESS};
use slurm_wire::msg::node::{SlurmNodeRegistrationStatusMsg, UpdateNodeMsg};
use slurm_wire::Message;

/// MESSAGE_NODE_REGISTRATION_STATUS (slurmd at start and on request).
pub async fn register(sh: &Shared, who: &Caller, m: SlurmNodeRegistrationStatusMsg) -> Message {
    let cmd = Command::Register {
        msg: Box::new(m),
        version: who.version,
        uid: who.uid,
    };
    match sh.exec(cmd).await {
        Reply::Registered { node } => {
            Message::ResponseNodeRegistration(views::registration_resp(&sh.snapshot(), node))
        }
        Reply::Ok => rc_message(SLURM_SUCCESS),
        Reply::Err(e) => rc_message(e.errno()),
        _ => rc_message(SLURM_ERROR),
    }
}

/// REQUEST_UPDATE_NODE (scontrol update node).
pub async fn update(sh: &Shared, who: &Caller, m: UpdateNodeMsg) -> Message {
    rc_of(
        sh.exec(Command::UpdateNode {
            uid: who.uid,
            msg: Box::new(m),
        })
        .await,
    )
}
