//! auth/munge against real munged daemons with throwaway keys.
//!
//! Needs `munged`, `munge` and `setpriv` (scripts/setup installs them).
//! These live here rather than in slurm-wire because they talk to daemons.

use slurm_testkit::munged::Munged;
use slurm_wire::auth::{
    reply_credential, require_uid, sign_body, verify_body, Audience, AuthError, AuthPlugin,
    VerifyPolicy,
};
use slurm_wire::ProtocolVersion;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

const PING: u16 = 1008;
const BUILD_INFO: u16 = 2001;

#[test]
fn signed_body_verifies_and_names_the_sender() {
    let m = Munged::start();
    let a = m.auth();
    let body = b"\x00\x00\x00\x00\x00\x00\x00\x00";
    let blob = sign_body(&a, BUILD_INFO, body, Audience::Uid(0)).unwrap();
    let id = verify_body(&a, Some(&blob), BUILD_INFO, body, VerifyPolicy::default()).unwrap();
    assert_eq!((id.uid, id.gid), (0, 0));
    assert_eq!(id.payload.len(), 33);
    assert_eq!(id.payload[0], 2, "K12 hash type");
}

#[test]
fn tampered_body_is_rejected() {
    let m = Munged::start();
    let a = m.auth();
    let blob = sign_body(&a, BUILD_INFO, b"original", Audience::Any).unwrap();
    let e = verify_body(
        &a,
        Some(&blob),
        BUILD_INFO,
        b"tampered",
        VerifyPolicy::default(),
    );
    assert_eq!(e, Err(AuthError::HashMismatch));
}

#[test]
fn wrong_key_is_rejected() {
    let m1 = Munged::start();
    let m2 = Munged::start();
    let blob = sign_body(&m1.auth(), PING, b"", Audience::Any).unwrap();
    let e = verify_body(&m2.auth(), Some(&blob), PING, b"", VerifyPolicy::default());
    assert!(matches!(e, Err(AuthError::Invalid(_))), "{e:?}");
}

#[test]
fn expired_credential_is_rejected() {
    let m = Munged::start();
    let mut a = m.auth();
    a.ttl = Some(1);
    let blob = sign_body(&a, PING, b"", Audience::Any).unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    let e = verify_body(&a, Some(&blob), PING, b"", VerifyPolicy::default());
    assert_eq!(e, Err(AuthError::Expired));
}

#[test]
fn replayed_credential_is_rejected() {
    let m = Munged::start();
    let a = m.auth();
    let blob = sign_body(&a, PING, b"", Audience::Any).unwrap();
    verify_body(&a, Some(&blob), PING, b"", VerifyPolicy::default()).unwrap();
    let e = verify_body(&a, Some(&blob), PING, b"", VerifyPolicy::default());
    assert_eq!(e, Err(AuthError::Replayed));
}

#[test]
fn uid_not_allowed_and_nobody_are_rejected() {
    let m = Munged::start();
    let a = m.auth();
    let payload = slurm_wire::auth::hash::k12_payload(PING, b"");
    let blob = slurm_wire::auth::AuthBlob {
        plugin_id: a.plugin_id(),
        credential: Some(m.cred_as(2001, &payload)),
    };
    let id = verify_body(&a, Some(&blob), PING, b"", VerifyPolicy::default()).unwrap();
    assert_eq!(id.uid, 2001, "identity comes from the credential");
    assert_eq!(require_uid(&id, &[0]), Err(AuthError::UidNotAllowed(2001)));

    let blob = slurm_wire::auth::AuthBlob {
        plugin_id: a.plugin_id(),
        credential: Some(m.cred_as(99, &payload)),
    };
    let e = verify_body(&a, Some(&blob), PING, b"", VerifyPolicy::default());
    assert_eq!(e, Err(AuthError::Nobody));
}

#[test]
fn missing_credential_and_foreign_plugin_are_rejected() {
    let m = Munged::start();
    let a = m.auth();
    assert_eq!(
        verify_body(&a, None, PING, b"", VerifyPolicy::default()),
        Err(AuthError::Missing)
    );
    let blob = slurm_wire::auth::AuthBlob {
        plugin_id: 103,
        credential: Some("x".into()),
    };
    assert_eq!(
        verify_body(&a, Some(&blob), PING, b"", VerifyPolicy::default()),
        Err(AuthError::UnsupportedPlugin(103))
    );
    let garbage = slurm_wire::auth::AuthBlob {
        plugin_id: 101,
        credential: Some("MUNGE:garbage:".into()),
    };
    assert!(verify_body(&a, Some(&garbage), PING, b"", VerifyPolicy::default()).is_err());
}

#[test]
fn replies_carry_credentials_only_for_22_05() {
    let m = Munged::start();
    let a = m.auth();
    for v in ProtocolVersion::ALL {
        let r = reply_credential(&a, v, 2001, 0, 8001, b"\0\0\0\0").unwrap();
        assert_eq!(r.is_some(), v == ProtocolVersion::V22_05, "{v}");
    }
    // The 22.05 reply is restricted to the requester: the controller's own
    // uid (root here) cannot read it, but uid 2001 can.
    let r = reply_credential(&a, ProtocolVersion::V22_05, 2001, 0, 8001, b"\0\0\0\0")
        .unwrap()
        .unwrap();
    let e = verify_body(&a, Some(&r), 8001, b"\0\0\0\0", VerifyPolicy::default());
    assert_eq!(e, Err(AuthError::Unauthorized));
    let out = Command::new("setpriv")
        .args([
            "--reuid=2001",
            "--regid=2001",
            "--clear-groups",
            "unmunge",
            "-S",
        ])
        .arg(&m.socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin
                .take()
                .unwrap()
                .write_all(r.credential.as_deref().unwrap().as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert!(out.status.success(), "uid 2001 can decode its reply");
}
