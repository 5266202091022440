//! The answers every handler builds.

use crate::session::Session;
use slurm_wire::dbd::{DbdMessage, DbdMsgType, PersistRcMsg};

/// A PERSIST_RC naming the message it answers, as stock's handlers do.
pub fn rc(rc: i32, comment: Option<String>, answers: DbdMsgType, s: &Session) -> DbdMessage {
    DbdMessage::PersistRc(PersistRcMsg {
        comment,
        flags: 0,
        rc: rc as u32,
        ret_info: answers.to_wire(s.version).unwrap_or(0),
    })
}
