//! The bodies of sacctmgr's requests that are not a bare cond or record list (`slurmdbd_pack.c`):
//! a modification (`_pack_modify_msg`: a cond, then a record), coordinators
//! (`_pack_acct_coord_msg`), rollups, and the dbd's configuration.

use crate::codec::error::{named, PResult};
use crate::codec::BufMut;
use crate::msg::slurmdb::{ConfigKeyPair, SlurmdbUserCond};
use crate::pack::Wire;
use crate::{wire, ProtocolVersion};

use super::list::DbdListMsg;

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

wire! {
    /// `dbd_roll_usage_msg_t`, DBD_ROLL_USAGE (`sacctmgr roll`).
    pub struct DbdRollUsageMsg {
        pub archive_data: u16,
        pub end: i64,
        pub start: i64,
    }
}

wire! {
    /// DBD_GET_CONFIG: before 26.05 the name of the file asked for (stock always sends
    /// "slurmdbd.conf"); 26.05 sends nothing.
    pub struct DbdGetConfigMsg {
        [..V26_05] pub config_name: Option<String>,
    }
}

wire! {
    /// `slurmdbd_conf_t` as 26.05's `_pack_slurmdbd_conf` sends it (the storage location, password
    /// script and user always go out empty).
    pub struct SlurmdbdConf {
        pub archive_dir: Option<String>,
        pub archive_script: Option<String>,
        pub commit_delay: u16,
        pub dbd_addr: Option<String>,
        pub dbd_backup: Option<String>,
        pub dbd_host: Option<String>,
        pub dbd_port: u16,
        pub debug_level: u16,
        pub default_qos: Option<String>,
        pub flags: u32,
        pub log_file: Option<String>,
        pub max_purge_limit: u32,
        pub max_time_range: u32,
        pub parameters: Option<String>,
        pub persist_conn_rc_flags: u16,
        pub pid_file: Option<String>,
        pub purge_event: u32,
        pub purge_job: u32,
        pub purge_resv: u32,
        pub purge_step: u32,
        pub purge_suspend: u32,
        pub purge_txn: u32,
        pub purge_usage: u32,
        pub purge_jobscript: u32,
        pub purge_jobenv: u32,
        pub storage_loc: Option<String>,
        pub storage_pass_script: Option<String>,
        pub storage_user: Option<String>,
        pub syslog_debug: u16,
        pub track_wckey: u16,
        pub track_ctld: u16,
    }
}

wire! {
    /// DBD_GOT_CONFIG: the dbd's settings as key/value pairs before 26.05; 26.05 gave the pairs
    /// their own type (DBD_GOT_CONFIG_KEYPAIRS, the old number) and sends the structure here.
    pub struct DbdGotConfigMsg {
        [..V26_05] pub key_pairs: DbdListMsg<ConfigKeyPair>,
        [V26_05..] pub conf: Box<SlurmdbdConf>,
    }
}
