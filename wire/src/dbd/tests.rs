//! Layouts here are written out from upstream's pack order
//! (slurm_persist_pack_init_req_msg, slurm_persist_pack_rc_msg,
//! slurmdbd_pack_fini_msg, pack_header), not from our encoder.

use super::persist::{self, frame_len, frame_len_limited, next_msg, MAX_PERSIST_MSG};
use super::*;
use crate::auth::{AuthBlob, AUTH_PLUGIN_MUNGE};
use crate::header::flags;
use crate::{DecodeErrorKind, ProtocolVersion as V};
use proptest::prelude::*;

pub(super) fn be16(b: &mut Vec<u8>, v: u16) {
    b.extend_from_slice(&v.to_be_bytes());
}
pub(super) fn be32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_be_bytes());
}
/// `pack64`, and `pack_time` (a signed 64-bit value) through `as u64`.
pub(super) fn be64(b: &mut Vec<u8>, v: u64) {
    b.extend_from_slice(&v.to_be_bytes());
}
pub(super) fn packstr(b: &mut Vec<u8>, s: &str) {
    be32(b, s.len() as u32 + 1);
    b.extend_from_slice(s.as_bytes());
    b.push(0);
}
pub(super) fn prefixed(payload: Vec<u8>) -> Vec<u8> {
    let mut b = Vec::new();
    be32(&mut b, payload.len() as u32);
    b.extend(payload);
    b
}

#[test]
fn fini_from_upstream_layout() {
    for v in V::ALL {
        let mut p = Vec::new();
        be16(&mut p, 1401); // DBD_FINI
        be16(&mut p, 1); // close_conn
        be16(&mut p, 0); // commit
        let bytes = prefixed(p);
        assert_eq!(bytes.len(), 10);
        let m = DbdMessage::decode_framed(v, &bytes).unwrap();
        assert_eq!(
            m,
            DbdMessage::Fini(DbdFiniMsg {
                close_conn: 1,
                commit: 0
            })
        );
        assert_eq!(m.encode(v).unwrap(), bytes, "{v}");
    }
}

#[test]
fn persist_rc_from_upstream_layout() {
    for v in V::ALL {
        let mut p = Vec::new();
        be16(&mut p, 1433); // SLURM_PERSIST_RC
        packstr(&mut p, "ok");
        be16(&mut p, 0x0001); // flags: PERSIST_FLAG_DBD
        be32(&mut p, 0); // rc
        be16(&mut p, 0x2A00); // ret_info: the release to use
        let bytes = prefixed(p);
        let m = DbdMessage::decode_framed(v, &bytes).unwrap();
        assert_eq!(
            m,
            DbdMessage::PersistRc(PersistRcMsg {
                comment: Some("ok".into()),
                flags: body::persist_flags::DBD,
                rc: 0,
                ret_info: 0x2A00,
            })
        );
        assert_eq!(m.encode(v).unwrap(), bytes, "{v}");
    }
}

/// `u16 type | header | [auth] | persist_init_req_msg_t`, as a 24.11 (no
/// credential) or 22.05 (munge credential) slurmctld opens towards slurmdbd.
fn init_bytes(version: u16, auth: Option<&str>, dbd_type: u16, hdr_type: u16) -> Vec<u8> {
    let mut body = Vec::new();
    be16(&mut body, version); // version, always first
    packstr(&mut body, "c1"); // cluster_name
    be16(&mut body, 1); // persist_type: PERSIST_TYPE_DBD
    be16(&mut body, 6817); // port
    let mut p = Vec::new();
    be16(&mut p, dbd_type);
    be16(&mut p, version); // header: version
    let mut hflags = flags::GLOBAL_AUTH_KEY | flags::SLURMDBD_CONNECTION;
    if auth.is_none() {
        hflags |= flags::NO_AUTH_CRED;
    }
    be16(&mut p, hflags);
    be16(&mut p, hdr_type);
    be32(&mut p, body.len() as u32); // body_length
    be16(&mut p, 0); // forward.cnt
    be16(&mut p, 0); // ret_cnt
    be16(&mut p, 0); // orig_addr: AF_UNSPEC
    if let Some(cred) = auth {
        be32(&mut p, AUTH_PLUGIN_MUNGE);
        packstr(&mut p, cred);
    }
    p.extend(body);
    prefixed(p)
}

#[test]
fn persist_init_from_upstream_layout() {
    for (version, auth) in [(0x2A00, None), (0x2600, Some("MUNGE:abc"))] {
        let bytes = init_bytes(version, auth, 6500, 6500);
        let m = DbdMessage::decode_framed(V::NEWEST, &bytes).unwrap();
        let DbdMessage::PersistInit(p) = &m else {
            panic!("{m:?}")
        };
        assert!(!p.tls);
        assert_eq!(p.frame.header.version.to_wire(), version);
        assert_eq!(
            p.frame.auth.as_ref().and_then(|a| a.credential.as_deref()),
            auth
        );
        assert_eq!(
            p.req,
            PersistInitReqMsg {
                version,
                cluster_name: Some("c1".into()),
                persist_type: body::persist_type::DBD,
                port: 6817,
            }
        );
        assert_eq!(m.encode(V::NEWEST).unwrap(), bytes);
    }
}

#[test]
fn persist_init_is_checked_against_its_header() {
    let e = DbdMessage::decode_framed(V::V24_11, &init_bytes(0x2A00, None, 6500, 6501));
    assert!(matches!(
        e.unwrap_err().kind,
        DecodeErrorKind::BadValue { .. }
    ));
    // Without SLURMDBD_CONNECTION stock would not have put the type in front.
    let mut b = init_bytes(0x2A00, None, 6500, 6500);
    b[9] &= !(flags::SLURMDBD_CONNECTION as u8); // low byte of the header's flags
    let e = DbdMessage::decode_framed(V::V24_11, &b).unwrap_err();
    assert!(matches!(e.kind, DecodeErrorKind::BadValue { .. }), "{e}");
    // A sender version below the window: only the version is there.
    let e = super::body::PersistInitReqMsg::default();
    let bytes = crate::pack::encode_to_vec(&e, V::NEWEST);
    assert_eq!(bytes, [0, 0]);
    let err = crate::pack::decode_exact::<PersistInitReqMsg>(&bytes, V::NEWEST).unwrap_err();
    assert_eq!(err.kind, DecodeErrorKind::UnsupportedVersion(0));
}

#[test]
fn tls_init_exists_from_24_05() {
    let bytes = init_bytes(0x2900, None, 6501, 6501);
    let e = DbdMessage::decode_framed(V::V23_11, &bytes).unwrap_err();
    assert!(matches!(
        e.kind,
        DecodeErrorKind::UnknownMsgType { number: 6501, .. }
    ));
    let m = DbdMessage::decode_framed(V::V24_05, &bytes).unwrap();
    assert_eq!(m.msg_type(), DbdMsgType::PersistInitTls);
    assert_eq!(
        m.encode(V::V23_11),
        Err(EncodeError::NotInRelease(
            "SLURM_PERSIST_INIT_TLS",
            V::V23_11
        ))
    );
}

#[test]
fn unknown_and_unimplemented_types_are_typed_errors() {
    let raw = RawMsg {
        msg_type: 1443, // DBD_DEFUNCT_RPC_1443
        body: &[],
    };
    let e = DbdMessage::decode(V::V24_11, raw).unwrap_err();
    assert!(matches!(e.kind, DecodeErrorKind::UnknownMsgType { .. }));
    let raw = RawMsg {
        msg_type: 1470, // DBD_GET_EVENTS: no codec yet
        body: &[],
    };
    let e = DbdMessage::decode(V::V24_11, raw).unwrap_err();
    assert_eq!(
        e.kind,
        DecodeErrorKind::UnsupportedBody("DBD_GET_EVENTS", V::V24_11)
    );
}

#[test]
fn hostile_lengths_are_refused_from_the_prefix_alone() {
    for n in [0u32, 1, u32::MAX, (MAX_PERSIST_MSG + 1) as u32] {
        let b = n.to_be_bytes();
        assert!(frame_len(&b).is_err(), "{n}");
        assert!(next_msg(&b, MAX_PERSIST_MSG).is_err(), "{n}");
    }
    assert_eq!(frame_len(&[0, 0, 0]), Ok(None));
    assert_eq!(
        frame_len(&(MAX_PERSIST_MSG as u32).to_be_bytes()),
        Ok(Some(MAX_PERSIST_MSG + 4))
    );
    assert!(frame_len_limited(&101u32.to_be_bytes(), 100).is_err());
    assert_eq!(frame_len_limited(&100u32.to_be_bytes(), 100), Ok(Some(104)));
    // A string count far beyond the bytes left.
    let mut p = Vec::new();
    be16(&mut p, 1433);
    be32(&mut p, 0x7fff_ffff);
    let e = DbdMessage::decode_framed(V::V24_11, &prefixed(p)).unwrap_err();
    assert!(
        matches!(e.kind, DecodeErrorKind::CountTooLarge { .. }),
        "{e}"
    );
}

#[test]
fn trailing_bytes_are_rejected() {
    let mut p = Vec::new();
    be16(&mut p, 1401);
    be32(&mut p, 0x0001_0000);
    p.push(0);
    let e = DbdMessage::decode_framed(V::V24_11, &prefixed(p)).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::TrailingBytes(1));
    let mut b = DbdMessage::Fini(DbdFiniMsg::default())
        .encode(V::V24_11)
        .unwrap();
    b.push(0);
    let e = DbdMessage::decode_framed(V::V24_11, &b).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::TrailingBytes(1));
    // Inside the init, past the init body.
    let mut b = init_bytes(0x2A00, None, 6500, 6500);
    b.push(0);
    let n = b.len() as u32 - 4;
    b[..4].copy_from_slice(&n.to_be_bytes());
    assert!(DbdMessage::decode_framed(V::V24_11, &b).is_err());
}

#[test]
fn a_stream_splits_into_messages() {
    let v = V::V26_05;
    let a = DbdMessage::Fini(DbdFiniMsg {
        close_conn: 0,
        commit: 1,
    });
    let b = DbdMessage::PersistRc(PersistRcMsg {
        comment: None,
        flags: 0,
        rc: 2,
        ret_info: 1401,
    });
    let mut stream = a.encode(v).unwrap();
    let first = stream.len();
    stream.extend(b.encode(v).unwrap());
    for cut in 0..first {
        assert_eq!(next_msg(&stream[..cut], 1 << 20), Ok(None), "{cut}");
    }
    let (raw, used) = next_msg(&stream, 1 << 20).unwrap().unwrap();
    assert_eq!(used, first);
    assert_eq!(DbdMessage::decode(v, raw).unwrap(), a);
    let (raw, used) = next_msg(&stream[first..], 1 << 20).unwrap().unwrap();
    assert_eq!(used, stream.len() - first);
    assert_eq!(DbdMessage::decode(v, raw).unwrap(), b);
    assert!(persist::split_payload(&[5]).is_err());
}

fn opt_str() -> impl Strategy<Value = Option<String>> {
    prop::option::of(".{0,40}")
}

fn messages() -> impl Strategy<Value = DbdMessage> {
    let newest = V::NEWEST.to_wire();
    let rc = (opt_str(), any::<u16>(), any::<u32>(), any::<u16>()).prop_map(
        |(comment, flags, rc, ret_info)| {
            DbdMessage::PersistRc(PersistRcMsg {
                comment,
                flags,
                rc,
                ret_info,
            })
        },
    );
    let fini = (any::<u16>(), any::<u16>())
        .prop_map(|(close_conn, commit)| DbdMessage::Fini(DbdFiniMsg { close_conn, commit }));
    let init = (
        V::OLDEST.to_wire()..=u16::MAX,
        opt_str(),
        any::<u16>(),
        any::<u16>(),
        any::<bool>(),
        prop::option::of(opt_str()),
        prop::sample::select(V::ALL.to_vec()),
    )
        .prop_map(
            move |(version, cluster_name, persist_type, port, tls, auth, hv)| {
                let req = PersistInitReqMsg {
                    version: version.min(newest.saturating_add(0x300)),
                    cluster_name,
                    persist_type,
                    port,
                };
                let p = PersistInit::new(hv, tls, req);
                DbdMessage::PersistInit(match auth {
                    Some(credential) => p.with_auth(AuthBlob {
                        plugin_id: AUTH_PLUGIN_MUNGE,
                        credential,
                    }),
                    None => p,
                })
            },
        );
    prop_oneof![rc, fini, init]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 1000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn round_trip_in_every_release(m in messages()) {
        for v in V::ALL {
            let Some(number) = m.msg_type().to_wire(v) else {
                prop_assert_eq!(m.encode(v), Err(EncodeError::NotInRelease(m.msg_type().name(), v)));
                continue;
            };
            let bytes = m.encode(v).unwrap();
            prop_assert_eq!(&bytes[4..6], &number.to_be_bytes()[..]);
            let back = DbdMessage::decode_framed(v, &bytes).unwrap();
            prop_assert_eq!(&back, &m);
            prop_assert_eq!(back.encode(v).unwrap(), bytes);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(v in prop::sample::select(V::ALL.to_vec()),
                                   data in prop::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(m) = DbdMessage::decode_framed(v, &data) {
            prop_assert_eq!(m.encode(v).unwrap(), data.clone());
        }
        if let Ok(raw) = persist::split_payload(&data) {
            let _ = DbdMessage::decode(v, raw);
        }
    }
}
