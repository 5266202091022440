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
    /// An init or a multiple-message list cannot be an item of a multiple-message list.
    #[error("{0} cannot be an item of DBD_SEND_MULT_MSG or DBD_GOT_MULT_MSG")]
    NotAnItem(&'static str),
}
