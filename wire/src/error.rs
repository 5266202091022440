//! Decode errors. Every failure on untrusted bytes ends up here, never in a panic.

use crate::ProtocolVersion;
use thiserror::Error;

/// What went wrong, without position.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeErrorKind {
    #[error("truncated: needed {needed} bytes, {remaining} left")]
    Truncated { needed: usize, remaining: usize },
    #[error("count {count} exceeds the {remaining} bytes left")]
    CountTooLarge { count: u64, remaining: usize },
    #[error("{0} trailing bytes after the message")]
    TrailingBytes(usize),
    #[error("string is not NUL-terminated")]
    StringNotTerminated,
    #[error("string is not valid UTF-8")]
    InvalidUtf8,
    #[error("boolean byte {0:#04x} is neither 0 nor 1")]
    BadBool(u8),
    #[error("invalid bitstring: {0}")]
    BadBitstr(&'static str),
    #[error("unknown address family {0}")]
    BadAddrFamily(u16),
    #[error("unsupported protocol version {0:#06x}")]
    UnsupportedVersion(u16),
    #[error("unknown message type {number} for protocol {version}")]
    UnknownMsgType {
        version: ProtocolVersion,
        number: u16,
    },
    #[error("no body codec for {0} in protocol {1}")]
    UnsupportedBody(&'static str, ProtocolVersion),
    #[error("frame length {0} is outside 0..=1GiB")]
    BadFrameLength(u64),
    #[error("header body_length {declared} but {actual} bytes follow")]
    BodyLength { declared: u32, actual: usize },
    #[error("invalid value {value} for {what}")]
    BadValue { what: &'static str, value: u64 },
}

/// A decode failure with the byte offset and the field path that led to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    pub kind: DecodeErrorKind,
    pub offset: usize,
    /// Innermost field last once displayed (pushed while unwinding).
    path: Vec<&'static str>,
}

impl DecodeError {
    pub fn new(kind: DecodeErrorKind, offset: usize) -> Self {
        Self {
            kind,
            offset,
            path: Vec::new(),
        }
    }

    /// An error with a path already collected (the codec's `WireError` at the boundary).
    pub(crate) fn from_parts(
        kind: DecodeErrorKind,
        offset: usize,
        path: Vec<&'static str>,
    ) -> Self {
        Self { kind, offset, path }
    }

    /// Records that the error happened inside `field`.
    #[must_use]
    pub fn within(mut self, field: &'static str) -> Self {
        self.path.push(field);
        self
    }

    /// Field path, outermost first ("job_info.details.std_out").
    pub fn path(&self) -> String {
        let mut p: Vec<&str> = self.path.clone();
        p.reverse();
        p.join(".")
    }
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            write!(f, "at byte {}: {}", self.offset, self.kind)
        } else {
            write!(f, "{} at byte {}: {}", self.path(), self.offset, self.kind)
        }
    }
}

impl std::error::Error for DecodeError {}

pub type Result<T, E = DecodeError> = std::result::Result<T, E>;
