//! Job credential checks.
//!
//! The RPC that carries a launch must itself come from SlurmUser or root.
//! A credential that carries a signature must verify: a MUNGE credential
//! made by SlurmUser or root whose payload is exactly the packed fields.
//! Stock slurmctld (22.05 to 26.05) sends batch credentials unsigned
//! (`slurm_cred_create(.., sign_it=false, ..)`): they are trusted through
//! the RPC's own authentication, as stock slurmd does. Step launches from
//! srun (a later slice) must be signed.

use slurm_conf::Hostlist;
use slurm_wire::auth::{AuthError, AuthPlugin};
use slurm_wire::msg::cred::JobCred;
use slurm_wire::ProtocolVersion;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CredError {
    #[error("launch RPC from uid {0}, which is neither SlurmUser nor root")]
    UnauthorizedSender(u32),
    #[error("credential has no signature")]
    Unsigned,
    #[error("credential signature does not verify: {0}")]
    BadSignature(AuthError),
    #[error("credential signed by uid {0}, which is neither SlurmUser nor root")]
    WrongSigner(u32),
    #[error("credential signature does not cover these fields (altered credential)")]
    PayloadMismatch,
    #[error("credential is for job {cred}, the launch for job {msg}")]
    JobMismatch { cred: u32, msg: u32 },
    #[error("credential does not include node {0}")]
    NotThisNode(String),
    #[error("credential names uid/gid {0}, which is refused")]
    BadIdentity(u32),
}

impl CredError {
    /// The Slurm error code for a launch refused for this reason.
    pub fn errno(&self) -> i32 {
        use slurm_wire::errno::*;
        match self {
            CredError::UnauthorizedSender(_) => ESLURM_USER_ID_MISSING,
            _ => ESLURMD_INVALID_JOB_CREDENTIAL,
        }
    }
}

/// Who may sign credentials and send launches.
#[derive(Debug, Clone, Copy)]
pub struct Trusted {
    pub slurm_user_uid: u32,
}

impl Trusted {
    pub fn allows(&self, uid: u32) -> bool {
        uid == 0 || uid == self.slurm_user_uid
    }
}

/// Verifies a signed credential packed at `v` (its own `cred_version`).
pub fn verify_signature(
    plugin: &dyn AuthPlugin,
    cred: &JobCred,
    v: ProtocolVersion,
    trusted: Trusted,
) -> Result<(), CredError> {
    let sig = cred.signature.as_deref().ok_or(CredError::Unsigned)?;
    let id = plugin.verify(sig).map_err(CredError::BadSignature)?;
    if !trusted.allows(id.uid) {
        return Err(CredError::WrongSigner(id.uid));
    }
    if id.payload != cred.signed_bytes(v) {
        return Err(CredError::PayloadMismatch);
    }
    Ok(())
}

/// The checks for REQUEST_BATCH_JOB_LAUNCH.
///
/// `msg_job_id` is the launch's own job id (`None` from 25.11, where the
/// credential is the only source).
pub fn check_batch_cred(
    plugin: &dyn AuthPlugin,
    sender_uid: u32,
    cred: &JobCred,
    cred_version: ProtocolVersion,
    msg_job_id: Option<u32>,
    node_name: &str,
    trusted: Trusted,
) -> Result<(), CredError> {
    if !trusted.allows(sender_uid) {
        return Err(CredError::UnauthorizedSender(sender_uid));
    }
    if cred.signature.is_some() {
        verify_signature(plugin, cred, cred_version, trusted)?;
    }
    let a = &cred.arg;
    if let Some(j) = msg_job_id {
        if j != a.step_id.job_id {
            return Err(CredError::JobMismatch {
                cred: a.step_id.job_id,
                msg: j,
            });
        }
    }
    let hosts = a.job_hostlist.as_deref().unwrap_or_default();
    if !hosts.is_empty() {
        let ok = Hostlist::parse(hosts)
            .map(|h| h.contains(node_name))
            .unwrap_or(false);
        if !ok {
            return Err(CredError::NotThisNode(node_name.to_string()));
        }
    }
    for id in [a.id.uid, a.id.gid] {
        if id == slurm_wire::auth::SLURM_AUTH_NOBODY || id == u32::MAX {
            return Err(CredError::BadIdentity(id));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use slurm_wire::auth::{Audience, Identity, AUTH_PLUGIN_MUNGE};
    use slurm_wire::msg::cred::JobCredArg;
    use slurm_wire::types::StepId;

    /// A stand-in signer: "SIG:<uid>:<hex payload>". Real munge is used by
    /// the integration tests.
    struct Fake;
    impl AuthPlugin for Fake {
        fn plugin_id(&self) -> u32 {
            AUTH_PLUGIN_MUNGE
        }
        fn create(&self, payload: &[u8], _: Audience) -> Result<String, AuthError> {
            Ok(format!("SIG:0:{}", hex(payload)))
        }
        fn verify(&self, c: &str) -> Result<Identity, AuthError> {
            let mut it = c.splitn(3, ':');
            let (Some("SIG"), Some(uid), Some(p)) = (it.next(), it.next(), it.next()) else {
                return Err(AuthError::Invalid("not a fake cred".into()));
            };
            Ok(Identity {
                uid: uid.parse().unwrap(),
                gid: 0,
                payload: unhex(p),
            })
        }
    }
    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }
    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len() / 2)
            .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
            .collect()
    }

    const V: ProtocolVersion = ProtocolVersion::V24_11;
    const T: Trusted = Trusted {
        slurm_user_uid: 64030,
    };

    fn cred(job: u32) -> JobCred {
        let mut c = JobCred {
            arg: JobCredArg {
                step_id: StepId::job(job),
                job_hostlist: Some("n[1-3]".into()),
                ..Default::default()
            },
            signature: None,
        };
        c.arg.id.uid = 1000;
        c.arg.id.gid = 1000;
        c
    }

    fn signed(job: u32, signer: u32) -> JobCred {
        let mut c = cred(job);
        c.signature = Some(format!("SIG:{signer}:{}", hex(&c.signed_bytes(V))));
        c
    }

    #[test]
    fn accepts_signed_by_root_or_slurm_user_and_unsigned_from_trusted_rpc() {
        for signer in [0, 64030] {
            assert_eq!(
                check_batch_cred(&Fake, 0, &signed(5, signer), V, Some(5), "n2", T),
                Ok(())
            );
        }
        assert_eq!(
            check_batch_cred(&Fake, 64030, &cred(5), V, None, "n2", T),
            Ok(())
        );
    }

    #[test]
    fn refuses_forgeries() {
        assert_eq!(
            check_batch_cred(&Fake, 1000, &cred(5), V, Some(5), "n2", T),
            Err(CredError::UnauthorizedSender(1000))
        );
        assert_eq!(
            check_batch_cred(&Fake, 0, &signed(5, 1000), V, Some(5), "n2", T),
            Err(CredError::WrongSigner(1000))
        );
        let mut altered = signed(5, 0);
        altered.arg.id.uid = 0;
        assert_eq!(
            check_batch_cred(&Fake, 0, &altered, V, Some(5), "n2", T),
            Err(CredError::PayloadMismatch)
        );
        // Signed at another version than the one it claims.
        let s = signed(5, 0);
        assert_eq!(
            verify_signature(&Fake, &s, ProtocolVersion::V22_05, T),
            Err(CredError::PayloadMismatch)
        );
        let mut garbage = cred(5);
        garbage.signature = Some("MUNGE:junk:".into());
        assert!(matches!(
            check_batch_cred(&Fake, 0, &garbage, V, Some(5), "n2", T),
            Err(CredError::BadSignature(_))
        ));
        assert_eq!(
            check_batch_cred(&Fake, 0, &signed(5, 0), V, Some(6), "n2", T),
            Err(CredError::JobMismatch { cred: 5, msg: 6 })
        );
        assert_eq!(
            check_batch_cred(&Fake, 0, &signed(5, 0), V, Some(5), "n9", T),
            Err(CredError::NotThisNode("n9".into()))
        );
        let mut nobody = cred(5);
        nobody.arg.id.uid = 99;
        assert_eq!(
            check_batch_cred(&Fake, 0, &nobody, V, Some(5), "n1", T),
            Err(CredError::BadIdentity(99))
        );
        assert_eq!(
            verify_signature(&Fake, &cred(5), V, T),
            Err(CredError::Unsigned)
        );
    }
}
