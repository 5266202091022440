//! The message-body hash carried inside the credential (22.05+).

use super::error::AuthError;
use k12::digest::{ExtendableOutput, Update};

pub const HASH_DEFAULT: u8 = 0;
pub const HASH_NONE: u8 = 1;
pub const HASH_K12: u8 = 2;
pub const HASH_SHA256: u8 = 3;
pub const HASH_SHA3: u8 = 4;

/// What a receiver insists on beyond a valid credential.
#[derive(Debug, Clone, Copy, Default)]
pub struct VerifyPolicy {
    /// `CommunicationParameters=block_null_hash`: refuse credentials without a hash.
    pub block_null_hash: bool,
    /// `block_zero_hash`: refuse the NONE hash type.
    pub block_zero_hash: bool,
}

/// KangarooTwelve of the body, customised with the big-endian message type.
pub fn k12(msg_type: u16, body: &[u8]) -> [u8; 32] {
    let custom = msg_type.to_be_bytes();
    let mut h = k12::KangarooTwelve::from_core(k12::KangarooTwelveCore::new(&custom));
    h.update(body);
    let mut out = [0u8; 32];
    h.finalize_xof_into(&mut out);
    out
}

/// The 33-byte credential payload: type byte then digest.
pub fn k12_payload(msg_type: u16, body: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(33);
    p.push(HASH_K12);
    p.extend_from_slice(&k12(msg_type, body));
    p
}

/// Checks a credential payload against the body it arrived with.
pub fn check_payload(
    payload: &[u8],
    msg_type: u16,
    body: &[u8],
    policy: VerifyPolicy,
) -> Result<(), AuthError> {
    let Some((&kind, digest)) = payload.split_first() else {
        return if policy.block_null_hash {
            Err(AuthError::BadPayload)
        } else {
            Ok(())
        };
    };
    match kind {
        HASH_K12 | HASH_DEFAULT => {
            if digest == k12(msg_type, body) {
                Ok(())
            } else {
                Err(AuthError::HashMismatch)
            }
        }
        HASH_NONE => {
            if policy.block_zero_hash {
                return Err(AuthError::BadPayload);
            }
            // 22.05 talking to older peers used host order; accept both.
            let be = msg_type.to_be_bytes();
            let le = msg_type.to_le_bytes();
            if digest == be || digest == le {
                Ok(())
            } else {
                Err(AuthError::HashMismatch)
            }
        }
        other => Err(AuthError::UnsupportedHash(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Payload of REQUEST_PING (1008) seen in every fixture capture.
    #[test]
    fn ping_hash_matches_upstream() {
        let expect = "5d5247bbb9ae435b2674a601f4a615de08d36c074c352457612d21db790784f9";
        let got: String = k12(1008, b"").iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(got, expect);
    }

    #[test]
    fn tampered_body_is_refused() {
        let p = k12_payload(2001, b"abc");
        let pol = VerifyPolicy::default();
        assert_eq!(check_payload(&p, 2001, b"abc", pol), Ok(()));
        assert_eq!(
            check_payload(&p, 2001, b"abd", pol),
            Err(AuthError::HashMismatch)
        );
        assert_eq!(
            check_payload(&p, 2002, b"abc", pol),
            Err(AuthError::HashMismatch)
        );
        assert_eq!(check_payload(&[], 1, b"", pol), Ok(()));
        let strict = VerifyPolicy {
            block_null_hash: true,
            ..pol
        };
        assert_eq!(
            check_payload(&[], 1, b"", strict),
            Err(AuthError::BadPayload)
        );
    }
}
