//! The one match over DBD messages received after the handshake: a new
//! message gets its arm here, calling a handler in a module of its family.

use crate::session::Session;
use slurm_wire::dbd::{DbdMessage, DbdMsgType, PersistRcMsg};

/// What the connection does after a message.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub reply: DbdMessage,
    /// Close once the reply is written.
    pub close: bool,
}

/// stock's answer to a request it has no handler for (`proc_req`'s
/// default arm): EINVAL.
pub const UNSUPPORTED_RC: i32 = nix::libc::EINVAL;

/// A PERSIST_RC naming the message it answers, as stock's handlers do.
pub fn rc(rc: i32, comment: Option<String>, answers: DbdMsgType, s: &Session) -> DbdMessage {
    DbdMessage::PersistRc(PersistRcMsg {
        comment,
        flags: 0,
        rc: rc as u32,
        ret_info: answers.to_wire(s.version).unwrap_or(0),
    })
}

/// Answers one decoded message.
pub fn dispatch(s: &Session, msg: DbdMessage) -> Outcome {
    match msg {
        DbdMessage::Fini(f) => {
            // Nothing is stored yet, so there is nothing to commit or roll back.
            tracing::debug!(close = f.close_conn, commit = f.commit, "DBD_FINI");
            Outcome {
                reply: rc(0, None, DbdMsgType::Fini, s),
                close: f.close_conn != 0,
            }
        }
        DbdMessage::PersistInit(_) => Outcome {
            reply: rc(
                UNSUPPORTED_RC,
                Some("REQUEST_PERSIST_INIT on a connection already open".into()),
                DbdMsgType::PersistInit,
                s,
            ),
            close: false,
        },
        other => unsupported(s, other.msg_type()),
    }
}

/// A message we know but do not handle yet, answered and the connection
/// kept, as stock keeps it.
pub fn unsupported(s: &Session, ty: DbdMsgType) -> Outcome {
    tracing::warn!(uid = s.uid, "{} is not implemented", ty.name());
    Outcome {
        reply: rc(
            UNSUPPORTED_RC,
            Some(format!("{} is not implemented by slurmdbd-rs", ty.name())),
            ty,
            s,
        ),
        close: false,
    }
}
