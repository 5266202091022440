//! slurmdbd connections in captures: found by their opening (or by port 6819
//! with the capture's release), read by the DBD codec in the agreed release.

use slurm_decode::{decode_streams, decode_streams_in, Decoded, Direction, Stream, DBD_PORT};
use slurm_wire::dbd::{DbdFiniMsg, DbdMessage, PersistInit, PersistInitReqMsg, PersistRcMsg};
use slurm_wire::ProtocolVersion as V;
use std::net::SocketAddr;

fn dir(src: &str, dst: &str, msgs: &[Vec<u8>]) -> Direction {
    let bytes: Vec<u8> = msgs.concat();
    Direction {
        src: src.parse().unwrap(),
        dst: dst.parse().unwrap(),
        marks: vec![(0, 1)],
        bytes,
        gap: false,
    }
}

fn stream(client: Direction, server: Direction) -> Stream {
    Stream {
        index: 1,
        to_server: client,
        to_client: server,
    }
}

const CTLD: &str = "10.0.0.10:40000";
const DBD: &str = "10.0.0.11:6819";

fn opening(v: V) -> Vec<u8> {
    let req = PersistInitReqMsg {
        version: v.to_wire(),
        cluster_name: Some("c".into()),
        persist_type: 1,
        port: 6817,
    };
    DbdMessage::PersistInit(PersistInit::new(v, false, req))
        .encode(v)
        .unwrap()
}

fn rc(v: V, ret_info: u16) -> Vec<u8> {
    DbdMessage::PersistRc(PersistRcMsg {
        comment: None,
        flags: 1,
        rc: 0,
        ret_info,
    })
    .encode(v)
    .unwrap()
}

fn fini(v: V) -> Vec<u8> {
    DbdMessage::Fini(DbdFiniMsg {
        close_conn: 1,
        commit: 0,
    })
    .encode(v)
    .unwrap()
}

#[test]
fn after_the_handshake_both_sides_speak_the_release_the_server_names() {
    // a 24.11 client, a server that answers 22.05
    let s = stream(
        dir(CTLD, DBD, &[opening(V::V24_11), fini(V::V22_05)]),
        dir(
            DBD,
            CTLD,
            &[rc(V::V24_11, V::V22_05.to_wire()), rc(V::V22_05, 0)],
        ),
    );
    let streams = [s];
    let (msgs, raws) = decode_streams(&streams);
    assert!(raws.is_empty());
    let seen: Vec<_> = msgs
        .iter()
        .map(|m| (m.dir, m.name.as_str(), m.version, m.dbd))
        .collect();
    let c2s = "C->S";
    let s2c = "S->C";
    assert_eq!(
        seen,
        [
            (c2s, "SLURM_PERSIST_INIT", Some(V::V24_11), true),
            (s2c, "SLURM_PERSIST_RC", Some(V::V24_11), true),
            (c2s, "DBD_FINI", Some(V::V22_05), true),
            (s2c, "SLURM_PERSIST_RC", Some(V::V22_05), true),
        ]
    );
    for m in &msgs {
        assert!(
            matches!(m.outcome, Ok(Decoded::Dbd(_))),
            "{}: {:?}",
            m.name,
            m.outcome
        );
    }
}

#[test]
fn a_damaged_dbd_message_is_a_failure_not_a_missing_codec() {
    let mut cut = fini(V::V24_11);
    // DBD_FINI's body one byte short, the length prefix adjusted
    cut.pop();
    cut[3] -= 1;
    let streams = [stream(
        dir(CTLD, DBD, &[opening(V::V24_11), cut]),
        dir(DBD, CTLD, &[rc(V::V24_11, V::V24_11.to_wire())]),
    )];
    let (msgs, _) = decode_streams(&streams);
    let bad = msgs.iter().find(|m| m.name == "DBD_FINI").unwrap();
    assert!(bad.outcome.is_err());
    assert!(!bad.awaits_codec());
}

#[test]
fn a_connection_open_before_the_capture_needs_the_release() {
    let ctld: SocketAddr = CTLD.parse().unwrap();
    assert_ne!(ctld.port(), DBD_PORT);
    let mid = || {
        [stream(
            dir(CTLD, DBD, &[fini(V::V26_05)]),
            dir(DBD, CTLD, &[rc(V::V26_05, 0)]),
        )]
    };
    let streams = mid();
    let (msgs, raws) = decode_streams(&streams);
    assert!(msgs.is_empty(), "not RPC framing, and no opening to go by");
    assert_eq!(raws.len(), 2);

    let (msgs, raws) = decode_streams_in(&streams, Some(V::V26_05));
    assert!(raws.is_empty());
    assert_eq!(msgs.len(), 2);
    assert!(msgs
        .iter()
        .all(|m| m.outcome.is_ok() && m.version == Some(V::V26_05)));

    // first seen talking: the server (no SYN); the client side is still the one towards 6819
    let s = mid().map(|s| Stream {
        index: s.index,
        to_server: s.to_client,
        to_client: s.to_server,
    });
    let (msgs, _) = decode_streams_in(&s, Some(V::V26_05));
    let fini = msgs.iter().find(|m| m.name == "DBD_FINI").unwrap();
    assert_eq!((fini.dir, fini.dst.port()), ("C->S", DBD_PORT));
}
