//! The DBD namespace: what travels on slurmdbd's persistent connections.
//!
//! A connection opens with REQUEST_PERSIST_INIT (type 6500; 6501 for the TLS
//! form from 24.05): the normal header, credential and a
//! [`PersistInitReqMsg`], preceded by its `u16` type because the header
//! carries SLURMDBD_CONNECTION. The server answers SLURM_PERSIST_RC, whose
//! `ret_info` names the release both sides then use. From there on every
//! message is `u32 length | u16 type | body` ([`persist`]), the type a
//! [`DbdMsgType`] number of that release ([`msg_type`], generated from
//! upstream's `slurmdbd_msg_type_t` by `scripts/dev/gen-dbd-msg-types.py`),
//! the body packed for that release ([`message`]); DBD_FINI ends it.
//!
//! The handshake and DBD_FINI are in [`body`], the controller's accounting
//! messages in [`acct`], the query bodies in [`query`], sacctmgr's other
//! bodies in [`admin`], the generic list body in [`list`]. The
//! `slurmdb_*_rec_t` records they carry live in `crate::msg::slurmdb`.

pub mod acct;
pub mod admin;
pub mod body;
pub mod error;
pub mod list;
pub mod message;
pub mod msg_type;
pub mod persist;
pub mod query;

pub use acct::{
    DbdClusterTresMsg, DbdIdRcMsg, DbdJobCompMsg, DbdJobHeavyMsg, DbdJobStartMsg, DbdJobSuspendMsg,
    DbdMultIdRcMsg, DbdMultJobStartMsg, DbdNodeStateMsg, DbdRegisterCtldMsg, DbdStepCompMsg,
    DbdStepStartMsg,
};
pub use admin::{
    DbdAcctCoordMsg, DbdGetConfigMsg, DbdGotConfigMsg, DbdModifyMsg, DbdRollUsageMsg, SlurmdbdConf,
};
pub use body::{DbdFiniMsg, PersistInitReqMsg, PersistRcMsg};
pub use error::EncodeError;
pub use list::DbdListMsg;
pub use message::{DbdMessage, DbdMultMsg, PersistInit};
pub use msg_type::DbdMsgType;
pub use persist::RawMsg;
pub use query::DbdQosCondMsg;

#[cfg(test)]
mod acct_tests;
#[cfg(test)]
mod admin_tests;
#[cfg(test)]
mod query_tests;
#[cfg(test)]
mod tests;
