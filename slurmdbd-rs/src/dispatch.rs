//! The one match over DBD messages received after the handshake: a new
//! message gets its arm here, calling a handler in a module of its family.
//! The items of DBD_SEND_MULT_MSG come back through [`item`].

use crate::db::{Db, DbError};
use crate::handlers::common::Done;
use crate::handlers::jobs::{self, JobTables};
use crate::handlers::{ctld, steps};
use crate::reply::rc;
use crate::session::Session;
use slurm_wire::dbd::{DbdIdRcMsg, DbdListMsg, DbdMessage, DbdMsgType, DbdMultMsg};
use slurm_wire::errno::{
    ESLURM_ACCESS_DENIED, ESLURM_BAD_NAME, ESLURM_DB_CONNECTION, SLURM_ERROR,
    SLURM_NO_CHANGE_IN_DATA,
};

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

/// Only the controller (SlurmUser or root) sends these.
fn controller_only(ty: DbdMsgType) -> bool {
    use DbdMsgType as T;
    matches!(
        ty,
        T::RegisterCtld
            | T::ClusterTres
            | T::FlushJobs
            | T::NodeState
            | T::JobStart
            | T::JobHeavy
            | T::JobComplete
            | T::JobSuspend
            | T::StepStart
            | T::StepComplete
            | T::SendMultMsg
            | T::SendMultJobStart
    )
}

fn answer(reply: DbdMessage) -> Outcome {
    Outcome {
        reply,
        close: false,
    }
}

/// Answers one decoded message.
pub async fn dispatch(s: &Session, db: Option<&Db>, msg: DbdMessage) -> Outcome {
    let ty = msg.msg_type();
    if controller_only(ty) && !s.privileged {
        let why = format!("{} message from invalid uid", ty.name());
        tracing::error!(uid = s.uid, "{why}");
        return answer(rc(ESLURM_ACCESS_DENIED, Some(why), ty, s));
    }
    match msg {
        DbdMessage::Fini(f) => {
            // Every message commits its own transaction: nothing is left
            // open for DBD_FINI to commit or roll back.
            tracing::debug!(close = f.close_conn, commit = f.commit, "DBD_FINI");
            Outcome {
                reply: rc(0, None, DbdMsgType::Fini, s),
                close: f.close_conn != 0,
            }
        }
        DbdMessage::PersistInit(_) => answer(rc(
            UNSUPPORTED_RC,
            Some("REQUEST_PERSIST_INIT on a connection already open".into()),
            DbdMsgType::PersistInit,
            s,
        )),
        DbdMessage::SendMultMsg(m) => {
            let mut replies = Vec::new();
            for inner in m.my_list.unwrap_or_default() {
                let (reply, go_on) = item(s, db, inner).await;
                replies.push(reply);
                // Stock stops at the first that fails; the controller sends
                // the rest again.
                if !go_on {
                    break;
                }
            }
            answer(DbdMessage::GotMultMsg(DbdMultMsg {
                my_list: Some(replies),
                return_code: 0,
            }))
        }
        DbdMessage::SendMultJobStart(m) => {
            let mut ids = Vec::new();
            for start in m.my_list.unwrap_or_default() {
                ids.push(job_start(s, db, &start).await);
            }
            answer(DbdMessage::GotMultJobStart(DbdListMsg {
                my_list: Some(ids),
                return_code: 0,
            }))
        }
        other => answer(item(s, db, other).await.0),
    }
}

/// One accounting message (on its own or an item of DBD_SEND_MULT_MSG):
/// its answer, and whether a batch it is in goes on (stock's handler
/// returned success).
pub async fn item(s: &Session, db: Option<&Db>, msg: DbdMessage) -> (DbdMessage, bool) {
    let ty = msg.msg_type();
    if controller_only(ty) && !s.privileged {
        let why = format!("{} message from invalid uid", ty.name());
        return (rc(ESLURM_ACCESS_DENIED, Some(why), ty, s), false);
    }
    if let DbdMessage::Fini(_) | DbdMessage::PersistInit(_) = msg {
        return (
            rc(
                UNSUPPORTED_RC,
                Some(format!("{} in a list", ty.name())),
                ty,
                s,
            ),
            false,
        );
    }
    if !matches!(
        msg,
        DbdMessage::RegisterCtld(_)
            | DbdMessage::ClusterTres(_)
            | DbdMessage::FlushJobs(_)
            | DbdMessage::NodeState(_)
            | DbdMessage::JobStart(_)
            | DbdMessage::JobHeavy(_)
            | DbdMessage::JobComplete(_)
            | DbdMessage::JobSuspend(_)
            | DbdMessage::StepStart(_)
            | DbdMessage::StepComplete(_)
    ) {
        let o = unsupported(s, ty);
        return (o.reply, false);
    }
    let Some(db) = db else {
        let why = "slurmdbd-rs runs without storage".to_string();
        return (rc(ESLURM_DB_CONNECTION, Some(why), ty, s), false);
    };
    let Some(cluster) = s.cluster_name.as_deref() else {
        let why = "Must have a cluster name to register it".to_string();
        return (rc(ESLURM_BAD_NAME, Some(why), ty, s), false);
    };
    if let DbdMessage::JobStart(m) = &msg {
        return (DbdMessage::IdRc(job_start(s, Some(db), m).await), true);
    }
    let tables = match JobTables::of(cluster) {
        Ok(t) => t,
        Err(e) => return (rc(ESLURM_BAD_NAME, Some(e.to_string()), ty, s), false),
    };
    let v = s.version;
    // Whether stock's handler reports a failure to a batch (it does for
    // these; the others answer their error and succeed).
    let stops = matches!(
        ty,
        DbdMsgType::RegisterCtld
            | DbdMsgType::ClusterTres
            | DbdMsgType::FlushJobs
            | DbdMsgType::StepStart
            | DbdMsgType::StepComplete
    );
    let done: Result<Done, DbError> = match &msg {
        DbdMessage::RegisterCtld(m) => ctld::register(s, db, cluster, m).await,
        DbdMessage::ClusterTres(m) => ctld::cluster_tres(db, cluster, m).await,
        DbdMessage::FlushJobs(m) => jobs::flush_jobs(db, &tables, m.event_time).await,
        DbdMessage::NodeState(m) => ctld::node_state(db, cluster, s.slurm_user_uid, m).await,
        DbdMessage::JobHeavy(m) => jobs::job_heavy(db, &tables, m).await,
        DbdMessage::JobComplete(m) => jobs::job_complete(db, v, &tables, m).await,
        DbdMessage::JobSuspend(m) => jobs::job_suspend(db, v, &tables, m).await,
        DbdMessage::StepStart(m) => steps::step_start(db, v, &tables, m).await,
        DbdMessage::StepComplete(m) => steps::step_complete(db, v, &tables, m).await,
        _ => Ok(Done::rc(UNSUPPORTED_RC)),
    };
    let done = done.unwrap_or_else(|e| {
        tracing::warn!(cluster, "{}: {e}", ty.name());
        Done::err(SLURM_ERROR, e.to_string())
    });
    let ok = done.rc == 0
        || done.rc == SLURM_NO_CHANGE_IN_DATA
        || (ty == DbdMsgType::RegisterCtld && done.rc as u32 & ctld::RC_AS_CLUSTER_ID != 0);
    (rc(done.rc, done.comment, ty, s), ok || !stops)
}

/// DBD_JOB_START alone or in DBD_SEND_MULT_JOB_START: its DBD_ID_RC.
async fn job_start(
    s: &Session,
    db: Option<&Db>,
    m: &slurm_wire::dbd::DbdJobStartMsg,
) -> DbdIdRcMsg {
    let fail = |rc: i32| DbdIdRcMsg {
        job_id: m.job_id,
        db_index: jobs::sent_index(m.db_index),
        flags: 0,
        return_code: rc as u32,
    };
    let Some(db) = db else {
        return fail(ESLURM_DB_CONNECTION);
    };
    let Some(tables) = s
        .cluster_name
        .as_deref()
        .and_then(|c| JobTables::of(c).ok())
    else {
        return fail(ESLURM_BAD_NAME);
    };
    jobs::job_start(db, s.version, &tables, m).await
}

/// A message we know but do not handle yet, answered and the connection
/// kept, as stock keeps it.
pub fn unsupported(s: &Session, ty: DbdMsgType) -> Outcome {
    tracing::warn!(uid = s.uid, "{} is not implemented", ty.name());
    answer(rc(
        UNSUPPORTED_RC,
        Some(format!("{} is not implemented by slurmdbd-rs", ty.name())),
        ty,
        s,
    ))
}
