//! Persistent-connection framing, sans-IO.
//!
//! After the opening REQUEST_PERSIST_INIT, every message on a persistent
//! connection, in both directions, is `u32 length | u16 type | body`, the
//! length (big-endian, not counting itself) covering the type and the body.
//! On a slurmdbd connection the type is a [`super::msg_type::DbdMsgType`]
//! number, and the opening message has the same shape (its body being a
//! normal header, credential and init body); elsewhere (federation) it is a
//! [`crate::MsgType`] number. This module only splits and joins: it
//! does not interpret the type.

use super::error::EncodeError;
use crate::error::{DecodeError, DecodeErrorKind, Result};
use crate::pack::MAX_MSG_SIZE;

/// The largest length stock's persistent-connection server reads
/// (`MAX_MSG_SIZE`, 1 GiB); daemons bound it lower with
/// [`frame_len_limited`].
pub const MAX_PERSIST_MSG: usize = MAX_MSG_SIZE;

/// Stock refuses lengths below the `u16` type.
pub const MIN_PERSIST_MSG: usize = 2;

/// One message as it lies in the buffer: the raw type and its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawMsg<'a> {
    pub msg_type: u16,
    pub body: &'a [u8],
}

/// Total size (prefix included) of the message at the start of `buf`, once
/// the prefix is there; a length outside `MIN_PERSIST_MSG..=limit` is an
/// error, so a caller can refuse before buffering anything.
pub fn frame_len_limited(buf: &[u8], limit: usize) -> Result<Option<usize>> {
    let Some(prefix) = buf.get(..4) else {
        return Ok(None);
    };
    let mut a = [0u8; 4];
    a.copy_from_slice(prefix);
    let n = u32::from_be_bytes(a);
    let len = n as usize;
    if len < MIN_PERSIST_MSG {
        return Err(DecodeError::new(
            DecodeErrorKind::BadValue {
                what: "persistent message length",
                value: n.into(),
            },
            0,
        ));
    }
    if len > limit.min(MAX_PERSIST_MSG) {
        return Err(DecodeError::new(
            DecodeErrorKind::BadFrameLength(n.into()),
            0,
        ));
    }
    Ok(Some(len + 4))
}

/// [`frame_len_limited`] with stock's limit.
pub fn frame_len(buf: &[u8]) -> Result<Option<usize>> {
    frame_len_limited(buf, MAX_PERSIST_MSG)
}

/// Splits the bytes after a length prefix into type and body.
pub fn split_payload(payload: &[u8]) -> Result<RawMsg<'_>> {
    match payload {
        [hi, lo, body @ ..] => Ok(RawMsg {
            msg_type: u16::from_be_bytes([*hi, *lo]),
            body,
        }),
        _ => Err(DecodeError::new(
            DecodeErrorKind::Truncated {
                needed: MIN_PERSIST_MSG,
                remaining: payload.len(),
            },
            0,
        )),
    }
}

/// The first message in a stream and the bytes it took, or `None` while it
/// is incomplete. Nothing is allocated: the body borrows from `buf`.
pub fn next_msg(buf: &[u8], limit: usize) -> Result<Option<(RawMsg<'_>, usize)>> {
    let Some(total) = frame_len_limited(buf, limit)? else {
        return Ok(None);
    };
    match buf.get(4..total) {
        Some(payload) => Ok(Some((split_payload(payload)?, total))),
        None => Ok(None),
    }
}

/// Exactly one whole message, prefix included: trailing bytes are an error.
pub fn decode_one(buf: &[u8]) -> Result<RawMsg<'_>> {
    match next_msg(buf, MAX_PERSIST_MSG)? {
        Some((m, n)) if n == buf.len() => Ok(m),
        Some((_, n)) => Err(DecodeError::new(
            DecodeErrorKind::TrailingBytes(buf.len() - n),
            n,
        )),
        None => Err(DecodeError::new(
            DecodeErrorKind::Truncated {
                needed: frame_len(buf)?.unwrap_or(4),
                remaining: buf.len(),
            },
            0,
        )),
    }
}

/// `u32 length | u16 type | body`.
pub fn encode(msg_type: u16, body: &[u8]) -> std::result::Result<Vec<u8>, EncodeError> {
    let len = body.len() + MIN_PERSIST_MSG;
    let n = u32::try_from(len)
        .ok()
        .filter(|_| len <= MAX_PERSIST_MSG)
        .ok_or(EncodeError::TooLarge(len))?;
    let mut out = Vec::with_capacity(4 + len);
    out.extend_from_slice(&n.to_be_bytes());
    out.extend_from_slice(&msg_type.to_be_bytes());
    out.extend_from_slice(body);
    Ok(out)
}
