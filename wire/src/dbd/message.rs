//! Typed DBD messages: ties each [`DbdMsgType`] that has a codec to its body.
//!
//! Decoding is by (release, number), like RPCs. A known type without a
//! codec yet is `UnsupportedBody`, an unknown number `UnknownMsgType`.

use super::body::{DbdFiniMsg, PersistInitReqMsg, PersistRcMsg};
use super::error::EncodeError;
use super::msg_type::DbdMsgType;
use super::persist::{self, RawMsg};
use crate::auth::AuthBlob;
use crate::error::{DecodeError, DecodeErrorKind, Result};
use crate::header::{flags, Header};
use crate::pack::{decode_exact, encode_to_vec};
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

/// A DBD message with a codec.
#[derive(Debug, Clone, PartialEq)]
pub enum DbdMessage {
    PersistInit(PersistInit),
    PersistRc(PersistRcMsg),
    Fini(DbdFiniMsg),
}

impl DbdMessage {
    pub fn msg_type(&self) -> DbdMsgType {
        match self {
            Self::PersistInit(p) => init_type(p.tls),
            Self::PersistRc(_) => DbdMsgType::PersistRc,
            Self::Fini(_) => DbdMsgType::Fini,
        }
    }

    /// Decodes a message split by [`persist::next_msg`], in release `v` (for
    /// the opening message: the receiver's own release).
    pub fn decode(v: ProtocolVersion, raw: RawMsg<'_>) -> Result<Self> {
        let unknown = || {
            DecodeError::new(
                DecodeErrorKind::UnknownMsgType {
                    version: v,
                    number: raw.msg_type,
                },
                0,
            )
        };
        let ty = DbdMsgType::from_wire(v, raw.msg_type).ok_or_else(unknown)?;
        let within = |e: DecodeError| e.within(ty.name());
        match ty {
            DbdMsgType::PersistInit | DbdMsgType::PersistInitTls => {
                let tls = ty == DbdMsgType::PersistInitTls;
                PersistInit::decode(raw.msg_type, tls, raw.body)
                    .map(Self::PersistInit)
                    .map_err(within)
            }
            DbdMsgType::PersistRc => decode_exact(raw.body, v)
                .map(Self::PersistRc)
                .map_err(within),
            DbdMsgType::Fini => decode_exact(raw.body, v).map(Self::Fini).map_err(within),
            other => Err(DecodeError::new(
                DecodeErrorKind::UnsupportedBody(other.name(), v),
                0,
            )),
        }
    }

    /// Decodes exactly one whole message, length prefix included.
    pub fn decode_framed(v: ProtocolVersion, buf: &[u8]) -> Result<Self> {
        Self::decode(v, persist::decode_one(buf)?)
    }

    /// The body as it follows the `u16` type.
    pub fn encode_body(&self, v: ProtocolVersion) -> Vec<u8> {
        match self {
            Self::PersistInit(p) => p.frame.encode().get(4..).unwrap_or_default().to_vec(),
            Self::PersistRc(m) => encode_to_vec(m, v),
            Self::Fini(m) => encode_to_vec(m, v),
        }
    }

    /// `u32 length | u16 type | body` for release `v`.
    pub fn encode(&self, v: ProtocolVersion) -> std::result::Result<Vec<u8>, EncodeError> {
        let ty = self.msg_type();
        let number = ty
            .to_wire(v)
            .ok_or(EncodeError::NotInRelease(ty.name(), v))?;
        persist::encode(number, &self.encode_body(v))
    }
}
