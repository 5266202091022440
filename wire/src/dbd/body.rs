//! The bodies of the persistent-connection handshake and of DBD_FINI.
//!
//! Their layout has not changed from 22.05 to 26.05; what changes per
//! release is only which types exist (see `msg_type`).

use crate::codec::error::{named, PResult, WireError};
use crate::codec::{prim, BufMut};
use crate::error::DecodeErrorKind;
use crate::pack::Wire;
use crate::wire;
use crate::ProtocolVersion;

/// `persist_conn_type_t`, a `u16` on the wire.
pub mod persist_type {
    pub const NONE: u16 = 0;
    pub const DBD: u16 = 1;
    pub const FED: u16 = 2;
    pub const HA_CTL: u16 = 3;
    pub const HA_DBD: u16 = 4;
    pub const ACCT_UPDATE: u16 = 5;
}

/// `PERSIST_FLAG_*`, as carried in [`PersistRcMsg::flags`].
pub mod persist_flags {
    pub const DBD: u16 = 1 << 0;
    pub const RECONNECT: u16 = 1 << 1;
    pub const ALREADY_INITED: u16 = 1 << 2;
    pub const P_USER_CASE: u16 = 1 << 3;
    pub const SUPPRESS_ERR: u16 = 1 << 4;
    pub const EXT_DBD: u16 = 1 << 5;
    pub const DONT_UPDATE_CLUSTER: u16 = 1 << 6;
}

/// `persist_init_req_msg_t`, the body of REQUEST_PERSIST_INIT.
///
/// The gate is on a field's value, not on the connection's release:
/// `version` (the sender's own release, which may be newer than any we know)
/// comes first, and the rest is there only when it is one a receiver accepts. Stock's receiver of release R accepts R's
/// SLURM_MIN_PROTOCOL_VERSION; ours serves the whole window, so the floor
/// is [`ProtocolVersion::OLDEST`]. `uid` is filled by authentication and
/// never travels.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct PersistInitReqMsg {
    pub version: u16,
    pub cluster_name: Option<String>,
    pub persist_type: u16,
    pub port: u16,
}

// irregular: presence depends on the `version` field's value, and a version below the window is refused.
impl Wire for PersistInitReqMsg {
    fn parse<'a>(i: &'a [u8], _: ProtocolVersion) -> PResult<'a, Self> {
        let (r, version) = prim::u16(i)?;
        if version < ProtocolVersion::OLDEST.to_wire() {
            return WireError::fail(DecodeErrorKind::UnsupportedVersion(version), i);
        }
        let (r, cluster_name) = named(prim::str(r), "cluster_name")?;
        let (r, persist_type) = named(prim::u16(r), "persist_type")?;
        let (r, port) = named(prim::u16(r), "port")?;
        let m = Self {
            version,
            cluster_name,
            persist_type,
            port,
        };
        Ok((r, m))
    }

    fn put<B: BufMut>(&self, b: &mut B, _: ProtocolVersion) {
        b.put_u16(self.version);
        // Like stock, an unusable version goes out alone (and is refused).
        if self.version >= ProtocolVersion::OLDEST.to_wire() {
            prim::put_str(b, self.cluster_name.as_deref());
            b.put_u16(self.persist_type);
            b.put_u16(self.port);
        }
    }
}

wire! {
    /// `persist_rc_msg_t`, the body of SLURM_PERSIST_RC. In the reply to
    /// REQUEST_PERSIST_INIT, `ret_info` is the release the connection will
    /// use (or, on failure, the type of the refused message).
    pub struct PersistRcMsg {
        pub comment: Option<String>,
        pub flags: u16,
        pub rc: u32,
        pub ret_info: u16,
    }
}

wire! {
    /// `dbd_fini_msg_t`, the body of DBD_FINI.
    pub struct DbdFiniMsg {
        /// Non-zero: the connection ends after the reply.
        pub close_conn: u16,
        /// Non-zero: commit pending changes, else roll them back.
        pub commit: u16,
    }
}
