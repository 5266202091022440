//! Partition administration: scontrol create/update/delete partition.

use super::caller::Caller;
use super::reply::rc_of;
use crate::shared::Shared;
use crate::state::Command;
use slurm_wire::msg::update_part::{DeletePartMsg, UpdatePartMsg};
use slurm_wire::Message;

/// REQUEST_UPDATE_PARTITION (also create).
pub async fn update(sh: &Shared, who: &Caller, m: UpdatePartMsg) -> Message {
    rc_of(
        sh.exec(Command::UpdatePartition {
            uid: who.uid,
            msg: Box::new(m),
        })
        .await,
    )
}

/// REQUEST_DELETE_PARTITION.
pub async fn delete(sh: &Shared, who: &Caller, m: DeletePartMsg) -> Message {
    rc_of(
        sh.exec(Command::DeletePartition {
            uid: who.uid,
            name: m.name.unwrap_or_default(),
        })
        .await,
    )
}
