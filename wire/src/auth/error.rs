//! Why a credential is refused. A leaf of `auth`: the body hash and the
//! plugins name it without going through the parent.

use thiserror::Error;

/// Uid that marks unknown identities; credentials from it are refused.
pub const SLURM_AUTH_NOBODY: u32 = 99;

/// Why a credential was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AuthError {
    #[error("message carries no credential")]
    Missing,
    #[error("auth plugin {0} is not supported")]
    UnsupportedPlugin(u32),
    #[error("credential expired")]
    Expired,
    #[error("credential replayed")]
    Replayed,
    #[error("credential rewound (its encode time is in the future)")]
    Rewound,
    #[error("credential invalid: wrong key or corrupted ({0})")]
    Invalid(String),
    #[error("credential is restricted to another uid")]
    Unauthorized,
    #[error("body hash mismatch: the message was altered")]
    HashMismatch,
    #[error("hash type {0} is not supported")]
    UnsupportedHash(u8),
    #[error("credential payload is malformed")]
    BadPayload,
    #[error("uid {0} is not allowed to do this")]
    UidNotAllowed(u32),
    #[error("credential belongs to nobody (uid or gid {SLURM_AUTH_NOBODY})")]
    Nobody,
    #[error("cannot reach munged: {0}")]
    Socket(String),
    #[error("munge error {code}: {text}")]
    Munge { code: u32, text: String },
}
