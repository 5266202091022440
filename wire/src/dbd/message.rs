//! Typed DBD messages: ties each [`DbdMsgType`] that has a codec to its body.
//!
//! Decoding is by (release, number), like RPCs. A known type without a
//! codec yet is `UnsupportedBody`, an unknown number `UnknownMsgType`.

use super::acct::{
    DbdClusterTresMsg, DbdIdRcMsg, DbdJobCompMsg, DbdJobHeavyMsg, DbdJobStartMsg, DbdJobSuspendMsg,
    DbdMultIdRcMsg, DbdMultJobStartMsg, DbdNodeStateMsg, DbdRegisterCtldMsg, DbdStepCompMsg,
    DbdStepStartMsg,
};
use super::admin::{
    DbdAcctCoordMsg, DbdGetConfigMsg, DbdGotConfigMsg, DbdModifyMsg, DbdRollUsageMsg,
};
use super::body::{DbdFiniMsg, PersistInitReqMsg, PersistRcMsg};
use super::error::EncodeError;
use super::list::DbdListMsg;
use super::msg_type::DbdMsgType;
use super::persist::{self, RawMsg};
use super::query::DbdQosCondMsg;
use crate::auth::AuthBlob;
use crate::codec::{prim, BufMut};
use crate::error::{DecodeError, DecodeErrorKind, Result};
use crate::header::{flags, Header};
use crate::msg::common::Empty;
use crate::msg::slurmdb::{
    ConfigKeyPair, OptAssocCond, OptClusterRec, OptFederationRec, OptUserRec, SlurmdbAccountCond,
    SlurmdbAccountRec, SlurmdbAddAssocCond, SlurmdbAssocRec, SlurmdbClusterCond,
    SlurmdbFederationCond, SlurmdbJobCond, SlurmdbJobRec, SlurmdbQosRec, SlurmdbResCond,
    SlurmdbResRec, SlurmdbStatsRec, SlurmdbTresCond, SlurmdbTresRec, SlurmdbTxnCond, SlurmdbTxnRec,
    SlurmdbUserCond, SlurmdbWckeyCond, SlurmdbWckeyRec,
};
use crate::pack::{decode_exact, encode_to_vec, Reader, Wire, NO_VAL};
use crate::{Frame, ProtocolVersion};

/// The opening REQUEST_PERSIST_INIT (or its TLS form, 24.05+).
///
/// Towards slurmdbd it travels as `u16 type` and then a whole normal frame
/// without its length prefix (header, credential, body): the header's
/// SLURMDBD_CONNECTION flag is what makes stock put the type in front.
/// `frame.body` is what is sent and what the credential's hash covers;
/// `req` is that body decoded, in the header's release.
#[derive(Debug, Clone, PartialEq)]
pub struct PersistInit {
    pub tls: bool,
    pub frame: Frame,
    pub req: PersistInitReqMsg,
}

impl PersistInit {
    /// A request as stock's client builds it; `version` is the header's.
    pub fn new(version: ProtocolVersion, tls: bool, req: PersistInitReqMsg) -> Self {
        let ty = init_type(tls);
        let header = Header {
            // NO_AUTH_CRED until a credential is attached, as `Frame::encode` does.
            flags: flags::GLOBAL_AUTH_KEY | flags::SLURMDBD_CONNECTION | flags::NO_AUTH_CRED,
            // 6500/6501 in both namespaces, in every release that has them.
            msg_type: ty.to_wire(ProtocolVersion::NEWEST).unwrap_or(0),
            ..Header::new(version, crate::MsgType::RequestPersistInit)
        };
        let body = encode_to_vec(&req, version);
        let frame = Frame {
            header: Header {
                body_length: u32::try_from(body.len()).unwrap_or(u32::MAX),
                ..header
            },
            auth: None,
            body,
        };
        Self { tls, frame, req }
    }

    /// Attaches the credential (made over `frame.body`).
    #[must_use]
    pub fn with_auth(mut self, auth: AuthBlob) -> Self {
        self.frame.auth = Some(auth);
        self.frame.header.flags &= !flags::NO_AUTH_CRED;
        self
    }

    fn decode(number: u16, tls: bool, body: &[u8]) -> Result<Self> {
        let frame = Frame::decode(body)?;
        let h = &frame.header;
        if h.msg_type != number {
            return Err(DecodeError::new(
                DecodeErrorKind::BadValue {
                    what: "header msg_type differing from the DBD type",
                    value: h.msg_type.into(),
                },
                0,
            ));
        }
        if h.flags & flags::SLURMDBD_CONNECTION == 0 {
            return Err(DecodeError::new(
                DecodeErrorKind::BadValue {
                    what: "header flags without SLURMDBD_CONNECTION",
                    value: h.flags.into(),
                },
                0,
            ));
        }
        let req = decode_exact(&frame.body, h.version).map_err(|e| e.within("persist_init"))?;
        Ok(Self { tls, frame, req })
    }
}

fn init_type(tls: bool) -> DbdMsgType {
    if tls {
        DbdMsgType::PersistInitTls
    } else {
        DbdMsgType::PersistInit
    }
}

/// Where a message is being decoded: on the connection, or as an item of a
/// DBD_SEND_MULT_MSG / DBD_GOT_MULT_MSG (which may carry neither another such
/// list nor an init, so nesting stops at one level).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Depth {
    Top,
    Item,
}

macro_rules! dbd_messages {
    ($($(#[doc = $doc:literal])* $variant:ident($body:ty),)*) => {
        /// A DBD message with a codec.
        #[derive(Debug, Clone, PartialEq)]
        pub enum DbdMessage {
            /// REQUEST_PERSIST_INIT or its TLS form.
            PersistInit(PersistInit),
            /// DBD_SEND_MULT_MSG: queued messages sent as one.
            SendMultMsg(DbdMultMsg),
            /// DBD_GOT_MULT_MSG: their answers, in order.
            GotMultMsg(DbdMultMsg),
            $($(#[doc = $doc])* $variant($body),)*
        }

        impl DbdMessage {
            /// The types that have a body codec.
            pub const SUPPORTED: &'static [DbdMsgType] = &[
                DbdMsgType::PersistInit,
                DbdMsgType::PersistInitTls,
                DbdMsgType::SendMultMsg,
                DbdMsgType::GotMultMsg,
                $(DbdMsgType::$variant,)*
            ];

            pub fn msg_type(&self) -> DbdMsgType {
                match self {
                    Self::PersistInit(p) => init_type(p.tls),
                    Self::SendMultMsg(_) => DbdMsgType::SendMultMsg,
                    Self::GotMultMsg(_) => DbdMsgType::GotMultMsg,
                    $(Self::$variant(_) => DbdMsgType::$variant,)*
                }
            }

            fn decode_typed(
                v: ProtocolVersion,
                ty: DbdMsgType,
                raw: RawMsg<'_>,
                depth: Depth,
            ) -> Result<Self> {
                match ty {
                    DbdMsgType::PersistInit | DbdMsgType::PersistInitTls
                    | DbdMsgType::SendMultMsg | DbdMsgType::GotMultMsg
                        if depth == Depth::Item =>
                    {
                        Err(DecodeError::new(
                            DecodeErrorKind::BadValue {
                                what: "message type inside a multiple-message list",
                                value: raw.msg_type.into(),
                            },
                            0,
                        ))
                    }
                    DbdMsgType::PersistInit | DbdMsgType::PersistInitTls => {
                        let tls = ty == DbdMsgType::PersistInitTls;
                        PersistInit::decode(raw.msg_type, tls, raw.body).map(Self::PersistInit)
                    }
                    DbdMsgType::SendMultMsg => {
                        DbdMultMsg::decode(v, raw.body).map(Self::SendMultMsg)
                    }
                    DbdMsgType::GotMultMsg => {
                        DbdMultMsg::decode(v, raw.body).map(Self::GotMultMsg)
                    }
                    $(DbdMsgType::$variant => decode_exact(raw.body, v).map(Self::$variant),)*
                    other => Err(DecodeError::new(
                        DecodeErrorKind::UnsupportedBody(other.name(), v),
                        0,
                    )),
                }
            }

            fn put_body(
                &self,
                out: &mut Vec<u8>,
                v: ProtocolVersion,
            ) -> std::result::Result<(), EncodeError> {
                match self {
                    Self::PersistInit(p) => {
                        out.extend_from_slice(p.frame.encode().get(4..).unwrap_or_default())
                    }
                    Self::SendMultMsg(m) | Self::GotMultMsg(m) => m.put(out, v)?,
                    $(Self::$variant(m) => m.put(out, v),)*
                }
                Ok(())
            }
        }
    };
}

dbd_messages! {
    PersistRc(PersistRcMsg),
    Fini(DbdFiniMsg),
    RegisterCtld(DbdRegisterCtldMsg),
    ClusterTres(DbdClusterTresMsg),
    FlushJobs(DbdClusterTresMsg),
    NodeState(DbdNodeStateMsg),
    JobStart(Box<DbdJobStartMsg>),
    /// The answer to DBD_JOB_START.
    IdRc(DbdIdRcMsg),
    JobHeavy(DbdJobHeavyMsg),
    JobComplete(Box<DbdJobCompMsg>),
    JobSuspend(DbdJobSuspendMsg),
    StepStart(Box<DbdStepStartMsg>),
    StepComplete(Box<DbdStepCompMsg>),
    SendMultJobStart(DbdMultJobStartMsg),
    GotMultJobStart(DbdMultIdRcMsg),
    GetJobsCond(Box<SlurmdbJobCond>),
    GotJobs(DbdListMsg<SlurmdbJobRec>),
    GetTres(SlurmdbTresCond),
    GotTres(DbdListMsg<SlurmdbTresRec>),
    GetQos(DbdQosCondMsg),
    GotQos(DbdListMsg<SlurmdbQosRec>),
    GetFederations(SlurmdbFederationCond),
    GotFederations(DbdListMsg<OptFederationRec>),
    // sacctmgr's entities and the controller's start-up reads
    GetClusters(SlurmdbClusterCond),
    GotClusters(DbdListMsg<OptClusterRec>),
    AddClusters(DbdListMsg<OptClusterRec>),
    ModifyClusters(Box<DbdModifyMsg<SlurmdbClusterCond, OptClusterRec>>),
    RemoveClusters(SlurmdbClusterCond),
    GetAccounts(SlurmdbAccountCond),
    GotAccounts(DbdListMsg<SlurmdbAccountRec>),
    AddAccounts(DbdListMsg<SlurmdbAccountRec>),
    /// 23.11+: `sacctmgr add account` with the associations to make.
    AddAccountsCond(Box<DbdModifyMsg<SlurmdbAddAssocCond, SlurmdbAccountRec>>),
    ModifyAccounts(Box<DbdModifyMsg<SlurmdbAccountCond, SlurmdbAccountRec>>),
    RemoveAccounts(SlurmdbAccountCond),
    GetUsers(SlurmdbUserCond),
    GotUsers(DbdListMsg<OptUserRec>),
    AddUsers(DbdListMsg<OptUserRec>),
    /// 23.11+: `sacctmgr add user` with the associations to make.
    AddUsersCond(Box<DbdModifyMsg<SlurmdbAddAssocCond, OptUserRec>>),
    ModifyUsers(Box<DbdModifyMsg<SlurmdbUserCond, OptUserRec>>),
    RemoveUsers(SlurmdbUserCond),
    AddAccountCoords(DbdAcctCoordMsg),
    RemoveAccountCoords(DbdAcctCoordMsg),
    GetAssocs(OptAssocCond),
    GotAssocs(DbdListMsg<SlurmdbAssocRec>),
    AddAssocs(DbdListMsg<SlurmdbAssocRec>),
    ModifyAssocs(Box<DbdModifyMsg<OptAssocCond, SlurmdbAssocRec>>),
    RemoveAssocs(OptAssocCond),
    AddQos(DbdListMsg<SlurmdbQosRec>),
    ModifyQos(Box<DbdModifyMsg<DbdQosCondMsg, SlurmdbQosRec>>),
    RemoveQos(DbdQosCondMsg),
    AddTres(DbdListMsg<SlurmdbTresRec>),
    GetWckeys(SlurmdbWckeyCond),
    GotWckeys(DbdListMsg<SlurmdbWckeyRec>),
    AddWckeys(DbdListMsg<SlurmdbWckeyRec>),
    RemoveWckeys(SlurmdbWckeyCond),
    GetRes(SlurmdbResCond),
    GotRes(DbdListMsg<SlurmdbResRec>),
    AddRes(DbdListMsg<SlurmdbResRec>),
    ModifyRes(Box<DbdModifyMsg<SlurmdbResCond, SlurmdbResRec>>),
    RemoveRes(SlurmdbResCond),
    /// The names a modify or remove touched.
    GotList(DbdListMsg<Option<String>>),
    // show stats / problem / config / txn, roll
    GetStats(Empty),
    GotStats(SlurmdbStatsRec),
    ClearStats(Empty),
    GetProbs(OptAssocCond),
    GotProbs(DbdListMsg<SlurmdbAssocRec>),
    GetConfig(DbdGetConfigMsg),
    GotConfig(DbdGotConfigMsg),
    /// 26.05: the pairs DBD_GOT_CONFIG carried before.
    GotConfigKeypairs(DbdListMsg<ConfigKeyPair>),
    GetTxn(SlurmdbTxnCond),
    GotTxn(DbdListMsg<SlurmdbTxnRec>),
    RollUsage(DbdRollUsageMsg),
}

impl DbdMessage {
    /// Decodes a message split by [`persist::next_msg`], in release `v` (for
    /// the opening message: the receiver's own release).
    pub fn decode(v: ProtocolVersion, raw: RawMsg<'_>) -> Result<Self> {
        Self::decode_at(v, raw, Depth::Top)
    }

    fn decode_at(v: ProtocolVersion, raw: RawMsg<'_>, depth: Depth) -> Result<Self> {
        let ty = DbdMsgType::from_wire(v, raw.msg_type).ok_or_else(|| {
            DecodeError::new(
                DecodeErrorKind::UnknownMsgType {
                    version: v,
                    number: raw.msg_type,
                },
                0,
            )
        })?;
        Self::decode_typed(v, ty, raw, depth).map_err(|e| e.within(ty.name()))
    }

    /// Decodes exactly one whole message, length prefix included.
    pub fn decode_framed(v: ProtocolVersion, buf: &[u8]) -> Result<Self> {
        Self::decode(v, persist::decode_one(buf)?)
    }

    /// The body as it follows the `u16` type.
    pub fn encode_body(&self, v: ProtocolVersion) -> std::result::Result<Vec<u8>, EncodeError> {
        let mut out = Vec::new();
        self.put_body(&mut out, v)?;
        Ok(out)
    }

    /// The type's number in release `v`.
    fn number(&self, v: ProtocolVersion) -> std::result::Result<u16, EncodeError> {
        let ty = self.msg_type();
        ty.to_wire(v).ok_or(EncodeError::NotInRelease(ty.name(), v))
    }

    /// `u16 type | body`, an item of a multiple-message list.
    fn payload(&self, v: ProtocolVersion) -> std::result::Result<Vec<u8>, EncodeError> {
        let mut out = self.number(v)?.to_be_bytes().to_vec();
        self.put_body(&mut out, v)?;
        Ok(out)
    }

    /// `u32 length | u16 type | body` for release `v`.
    pub fn encode(&self, v: ProtocolVersion) -> std::result::Result<Vec<u8>, EncodeError> {
        persist::encode(self.number(v)?, &self.encode_body(v)?)
    }
}

/// `dbd_list_msg_t` of packed messages (`_pack_buffer` items), the body of
/// DBD_SEND_MULT_MSG and DBD_GOT_MULT_MSG: each item is `packmem` of
/// `u16 type | body` in the connection's release.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DbdMultMsg {
    /// `None`: NO_VAL, no list.
    pub my_list: Option<Vec<DbdMessage>>,
    pub return_code: u32,
}

/// The least bytes of an item: its `packmem` length and its type.
const ITEM_MIN: usize = 4 + persist::MIN_PERSIST_MSG;

// irregular: the items are whole DBD messages, typed by number in the release and decoded
// recursively (one level deep), and encoding one can fail.
impl DbdMultMsg {
    fn decode(v: ProtocolVersion, body: &[u8]) -> Result<Self> {
        let mut r = Reader::new(body);
        let my_list = Self::decode_items(v, &mut r).map_err(|e| e.within("my_list"))?;
        let return_code = r.u32().map_err(|e| e.within("return_code"))?;
        r.finish()?;
        Ok(Self {
            my_list,
            return_code,
        })
    }

    fn decode_items(v: ProtocolVersion, r: &mut Reader<'_>) -> Result<Option<Vec<DbdMessage>>> {
        let at = r.position();
        let n = r.u32()?;
        if n == NO_VAL {
            return Ok(None);
        }
        if n > NO_VAL {
            return Err(DecodeError::new(
                DecodeErrorKind::BadValue {
                    what: "list count",
                    value: n.into(),
                },
                at,
            ));
        }
        let n = r.check_count(n, ITEM_MIN, at)?;
        let mut items = prim::vec_n(n);
        for _ in 0..n {
            let item = r.mem()?;
            // Offsets inside an item count from this message's body.
            let base = r.position() - item.len();
            let shift = |mut e: DecodeError, by: usize| {
                e.offset += by;
                e
            };
            let raw = persist::split_payload(item).map_err(|e| shift(e, base))?;
            let m = DbdMessage::decode_at(v, raw, Depth::Item)
                .map_err(|e| shift(e, base + persist::MIN_PERSIST_MSG))?;
            items.push(m);
        }
        Ok(Some(items))
    }

    fn put(&self, out: &mut Vec<u8>, v: ProtocolVersion) -> std::result::Result<(), EncodeError> {
        match &self.my_list {
            None => out.put_u32(NO_VAL),
            Some(items) => {
                prim::put_count(out, items.len());
                for m in items {
                    if matches!(
                        m,
                        DbdMessage::PersistInit(_)
                            | DbdMessage::SendMultMsg(_)
                            | DbdMessage::GotMultMsg(_)
                    ) {
                        return Err(EncodeError::NotAnItem(m.msg_type().name()));
                    }
                    prim::put_mem(out, &m.payload(v)?);
                }
            }
        }
        out.put_u32(self.return_code);
        Ok(())
    }
}
