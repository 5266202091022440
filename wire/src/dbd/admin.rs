//! The bodies of sacctmgr's requests that are not a bare cond or record list (`slurmdbd_pack.c`):
//! a modification (`_pack_modify_msg`: a cond, then a record) and coordinators
//! (`_pack_acct_coord_msg`).

use crate::codec::error::{named, PResult};
use crate::codec::BufMut;
use crate::msg::slurmdb::SlurmdbUserCond;
use crate::pack::Wire;
use crate::{wire, ProtocolVersion};

/// `dbd_modify_msg_t`: the cond that selects, then the record with the new values. The message
/// type says which cond and record (DBD_MODIFY_*, and from 23.11 DBD_ADD_ACCOUNTS_COND /
/// DBD_ADD_USERS_COND with a `slurmdb_add_assoc_cond_t`).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct DbdModifyMsg<C, R> {
    pub cond: C,
    pub rec: R,
}

// irregular: generic over the cond and record, which a `wire!` body cannot be.
impl<C: Wire, R: Wire> Wire for DbdModifyMsg<C, R> {
    fn parse<'a>(i: &'a [u8], v: ProtocolVersion) -> PResult<'a, Self> {
        let (i, cond) = named(C::parse(i, v), "cond")?;
        let (i, rec) = named(R::parse(i, v), "rec")?;
        Ok((i, Self { cond, rec }))
    }

    fn put<B: BufMut>(&self, b: &mut B, v: ProtocolVersion) {
        self.cond.put(b, v);
        self.rec.put(b, v);
    }
}

wire! {
    /// `dbd_acct_coord_msg_t`, DBD_ADD_ACCOUNT_COORDS and DBD_REMOVE_ACCOUNT_COORDS: the accounts
    /// (a plain count, 0 for none), then the users as a cond.
    pub struct DbdAcctCoordMsg {
        pub acct_list: Vec<Option<String>>,
        pub cond: SlurmdbUserCond,
    }
}
