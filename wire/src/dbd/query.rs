//! The bodies of the queries sacct (and the controller's start-up) sends, other than the bare
//! conditions and record lists: a `dbd_cond_msg_t` is its `slurmdb_*_cond_t` alone
//! (`_pack_cond_msg`), and a reply a [`super::list::DbdListMsg`] of records.

use crate::codec::shape;
use crate::msg::slurmdb::SlurmdbQosCond;
use crate::wire;

wire! {
    /// DBD_GET_QOS / DBD_REMOVE_QOS: from 24.11 the cond has a presence flag (`None`: a NULL
    /// cond); before, a NULL cond went out as an empty one and decodes as one.
    pub struct DbdQosCondMsg {
        #[wire(with = shape::flag8)] [V24_11..] pub cond: Option<SlurmdbQosCond>,
        #[wire(with = shape::some)] [..V24_11] => cond,
    }
}
