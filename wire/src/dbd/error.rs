//! Why a DBD message could not be encoded (decoding uses [`crate::DecodeError`]).

use crate::ProtocolVersion;
use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EncodeError {
    /// The release has no number for this message type.
    #[error("{0} does not exist in protocol {1}")]
    NotInRelease(&'static str, ProtocolVersion),
    /// Larger than the receiver accepts (see `persist::MAX_PERSIST_MSG`).
    #[error("message of {0} bytes exceeds the persistent-connection limit")]
    TooLarge(usize),
}
