//! Authentication: the credential blob between header and body, the body
//! hash it signs, and the plugins that create and verify credentials.
//!
//! Identity comes only from a verified credential, never from a body field.

mod error;
pub mod hash;
#[cfg(feature = "munge")]
pub mod munge;

pub use error::{AuthError, SLURM_AUTH_NOBODY};
pub use hash::VerifyPolicy;

use crate::error::{DecodeError, DecodeErrorKind, Result};
use crate::pack::{Reader, Writer};

pub const AUTH_PLUGIN_NONE: u32 = 100;
pub const AUTH_PLUGIN_MUNGE: u32 = 101;
pub const AUTH_PLUGIN_JWT: u32 = 102;
pub const AUTH_PLUGIN_SLURM: u32 = 103;

/// `u32 plugin_id` and the plugin's credential text.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct AuthBlob {
    pub plugin_id: u32,
    pub credential: Option<String>,
}

impl AuthBlob {
    pub fn decode(r: &mut Reader<'_>) -> Result<Self> {
        let at = r.position();
        let plugin_id = r.u32()?;
        match plugin_id {
            AUTH_PLUGIN_MUNGE | AUTH_PLUGIN_SLURM | AUTH_PLUGIN_JWT => Ok(Self {
                plugin_id,
                credential: r.str()?,
            }),
            other => Err(DecodeError::new(
                DecodeErrorKind::BadValue {
                    what: "auth plugin id",
                    value: other as u64,
                },
                at,
            )),
        }
    }

    pub fn encode(&self, w: &mut Writer) {
        w.u32(self.plugin_id);
        w.str(self.credential.as_deref());
    }
}

/// Who sent a message, from a verified credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub uid: u32,
    pub gid: u32,
    /// What was signed: the body hash for RPCs, packed fields for job creds.
    pub payload: Vec<u8>,
}

/// Restriction placed on who may decode a credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    Any,
    Uid(u32),
}

/// A credential mechanism (auth/munge today; auth/slurm can slot in).
pub trait AuthPlugin: Send + Sync {
    fn plugin_id(&self) -> u32;
    /// Signs `payload` for `audience`.
    fn create(&self, payload: &[u8], audience: Audience) -> std::result::Result<String, AuthError>;
    /// Verifies a credential and returns who made it and what it signed.
    fn verify(&self, credential: &str) -> std::result::Result<Identity, AuthError>;
    /// As `verify`, but a credential already decoded once (by this host's
    /// munged) still passes. Stock accepts such a job-credential signature
    /// (several slurmd on one host share munged) and catches replays of
    /// the job credential itself with its own list.
    fn verify_replay_ok(&self, credential: &str) -> std::result::Result<Identity, AuthError> {
        self.verify(credential)
    }
}

/// Signs a message body as upstream does: the credential's payload is the
/// body hash (K12, customised with the message type).
pub fn sign_body(
    plugin: &dyn AuthPlugin,
    msg_type: u16,
    body: &[u8],
    audience: Audience,
) -> std::result::Result<AuthBlob, AuthError> {
    let payload = hash::k12_payload(msg_type, body);
    Ok(AuthBlob {
        plugin_id: plugin.plugin_id(),
        credential: Some(plugin.create(&payload, audience)?),
    })
}

/// Verifies the credential of a received message against its body.
pub fn verify_body(
    plugin: &dyn AuthPlugin,
    blob: Option<&AuthBlob>,
    msg_type: u16,
    body: &[u8],
    policy: VerifyPolicy,
) -> std::result::Result<Identity, AuthError> {
    let id = verify_credential(plugin, blob)?;
    hash::check_payload(&id.payload, msg_type, body, policy)?;
    Ok(id)
}

/// The credential half of [`verify_body`]: who signed, before the body is
/// read; its payload must still be checked against the body
/// ([`hash::check_payload`]).
pub fn verify_credential(
    plugin: &dyn AuthPlugin,
    blob: Option<&AuthBlob>,
) -> std::result::Result<Identity, AuthError> {
    let blob = blob.ok_or(AuthError::Missing)?;
    if blob.plugin_id != plugin.plugin_id() {
        return Err(AuthError::UnsupportedPlugin(blob.plugin_id));
    }
    let cred = blob.credential.as_deref().ok_or(AuthError::Missing)?;
    let id = plugin.verify(cred)?;
    if id.uid == SLURM_AUTH_NOBODY || id.gid == SLURM_AUTH_NOBODY {
        return Err(AuthError::Nobody);
    }
    Ok(id)
}

/// Refuses identities outside `allowed` (admin RPCs: SlurmUser and root).
pub fn require_uid(id: &Identity, allowed: &[u32]) -> std::result::Result<(), AuthError> {
    if allowed.contains(&id.uid) {
        Ok(())
    } else {
        Err(AuthError::UidNotAllowed(id.uid))
    }
}

/// The credential a reply must carry, by the requester's version.
///
/// 23.02+ peers accept replies without a credential (`NO_AUTH_CRED`); 22.05
/// always unpacks one, so it gets a credential restricted to the requester,
/// or to anyone when the requester is SlurmUser.
pub fn reply_credential(
    plugin: &dyn AuthPlugin,
    requester_version: crate::ProtocolVersion,
    requester_uid: u32,
    slurm_user_uid: u32,
    msg_type: u16,
    body: &[u8],
) -> std::result::Result<Option<AuthBlob>, AuthError> {
    if requester_version >= crate::ProtocolVersion::V23_02 {
        return Ok(None);
    }
    let audience = if requester_uid == slurm_user_uid {
        Audience::Any
    } else {
        Audience::Uid(requester_uid)
    };
    sign_body(plugin, msg_type, body, audience).map(Some)
}
