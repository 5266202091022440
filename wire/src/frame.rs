//! Frames: `u32 length | header | auth | body`.

use crate::auth::AuthBlob;
use crate::error::{DecodeError, DecodeErrorKind, Result};
use crate::header::{flags, Header};
use crate::msg::Message;
use crate::pack::{Reader, Writer, MAX_MSG_SIZE};

/// One RPC as it travels: header, optional credential and the raw body.
///
/// The body stays raw here because the credential's hash covers those exact
/// bytes; `message()` types it.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub header: Header,
    pub auth: Option<AuthBlob>,
    pub body: Vec<u8>,
}

/// Size of the frame at the start of `buf` (prefix included), once the
/// prefix is complete.
pub fn frame_len(buf: &[u8]) -> Result<Option<usize>> {
    let Some(prefix) = buf.get(..4) else {
        return Ok(None);
    };
    let mut a = [0u8; 4];
    a.copy_from_slice(prefix);
    let n = u32::from_be_bytes(a) as usize;
    if n > MAX_MSG_SIZE {
        return Err(DecodeError::new(
            DecodeErrorKind::BadFrameLength(n as u64),
            0,
        ));
    }
    Ok(Some(n + 4))
}

impl Frame {
    /// Decodes the bytes after the length prefix.
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        let mut r = Reader::new(bytes);
        let header = Header::decode(&mut r).map_err(|e| e.within("header"))?;
        let auth = if header.flags & flags::NO_AUTH_CRED != 0 {
            None
        } else {
            Some(AuthBlob::decode(&mut r).map_err(|e| e.within("auth"))?)
        };
        let body = r.rest();
        if body.len() != header.body_length as usize {
            return Err(r.error(DecodeErrorKind::BodyLength {
                declared: header.body_length,
                actual: body.len(),
            }));
        }
        Ok(Self {
            header,
            auth,
            body: body.to_vec(),
        })
    }

    /// Decodes one whole frame including its length prefix.
    pub fn decode_prefixed(bytes: &[u8]) -> Result<Self> {
        match frame_len(bytes)? {
            Some(n) if n == bytes.len() => Self::decode(bytes.get(4..).unwrap_or_default()),
            _ => Err(DecodeError::new(
                DecodeErrorKind::BadFrameLength(bytes.len() as u64),
                0,
            )),
        }
    }

    /// Builds a frame around a message; `auth` is attached by the caller.
    pub fn new(mut header: Header, msg: &Message) -> Self {
        let body = msg.encode_to_vec(header.version);
        header.msg_type = msg.msg_type().to_wire(header.version).unwrap_or(0);
        header.body_length = u32::try_from(body.len()).unwrap_or(u32::MAX);
        Self {
            header,
            auth: None,
            body,
        }
    }

    /// Length prefix included.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(64 + self.body.len());
        w.u32(0);
        let mut h = self.header.clone();
        h.body_length = u32::try_from(self.body.len()).unwrap_or(u32::MAX);
        if self.auth.is_none() {
            h.flags |= flags::NO_AUTH_CRED;
        } else {
            h.flags &= !flags::NO_AUTH_CRED;
        }
        h.encode(&mut w);
        if let Some(a) = &self.auth {
            a.encode(&mut w);
        }
        w.bytes(&self.body);
        let n = u32::try_from(w.len() - 4).unwrap_or(u32::MAX);
        w.patch_u32(0, n);
        w.into_vec()
    }

    pub fn message(&self) -> Result<Message> {
        let ty = self.header.typed_msg_type()?;
        Message::decode(self.header.version, ty, &self.body)
    }
}
