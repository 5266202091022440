//! The persistent-connection server over real sockets: the handshake of
//! each release, DBD_FINI, unsupported messages, and hostile input.

mod common;

use common::*;
use slurm_testkit::munged::{FakeAuth, Munged};
use slurm_wire::dbd::{DbdFiniMsg, DbdMessage, PersistRcMsg};
use slurm_wire::errno::SLURM_PROTOCOL_VERSION_ERROR;
use slurm_wire::ProtocolVersion as V;
use slurmdbd::conn::ConnConf;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn server(ctx: slurm_rpc::AuthCtx, conf: ConnConf) -> SocketAddr {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(slurmdbd::server::serve(l, ctx, conf, None));
    addr
}

async fn open(addr: SocketAddr, header: u16, sent: u16) -> (TcpStream, PersistRcMsg) {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(&init_bytes(&FakeAuth { uid: 1000 }, header, sent))
        .await
        .unwrap();
    let m = rc(&mut s, V::OLDEST).await;
    (s, m)
}

fn fini(close_conn: u16, commit: u16) -> DbdMessage {
    DbdMessage::Fini(DbdFiniMsg { close_conn, commit })
}

#[tokio::test]
async fn each_release_is_answered_in_the_newest_it_shares_with_us() {
    let addr = server(FakeAuth::ctx(0), ConnConf::default()).await;
    for (sent, expect) in [
        (V::V22_05.to_wire(), V::V22_05),
        (V::V24_11.to_wire(), V::V24_11),
        (V::V26_05.to_wire(), V::V26_05),
        (V26_11, V::V26_05),
    ] {
        let (mut s, m) = open(addr, sent, sent).await;
        assert_eq!(
            (m.rc, m.ret_info),
            (0, expect.to_wire()),
            "{sent:#x}: {m:?}"
        );
        // The connection now speaks `expect`: DBD_FINI that keeps it open,
        // then one that ends it.
        s.write_all(&fini(0, 1).encode(expect).unwrap())
            .await
            .unwrap();
        let m = rc(&mut s, expect).await;
        assert_eq!((m.rc, m.ret_info), (0, DBD_FINI), "{sent:#x}");
        s.write_all(&fini(1, 0).encode(expect).unwrap())
            .await
            .unwrap();
        let m = rc(&mut s, expect).await;
        assert_eq!(m.rc, 0);
        assert!(
            closed(&mut s).await,
            "{sent:#x}: DBD_FINI close_conn=1 must close"
        );
    }
}

#[tokio::test]
async fn older_than_22_05_is_refused_with_a_version_error() {
    let addr = server(FakeAuth::ctx(0), ConnConf::default()).await;
    // 21.08 in the init body (header 22.05), then in the header too.
    for header in [V::V22_05.to_wire(), 0x2500] {
        let (mut s, m) = open(addr, header, 0x2500).await;
        assert_eq!(
            m.rc, SLURM_PROTOCOL_VERSION_ERROR as u32,
            "{header:#x}: {m:?}"
        );
        assert_eq!(m.ret_info, PERSIST_INIT);
        assert!(closed(&mut s).await, "{header:#x}");
    }
}

#[tokio::test]
async fn messages_without_a_handler_get_einval_and_the_connection_stays() {
    let addr = server(FakeAuth::ctx(0), ConnConf::default()).await;
    let (mut s, m) = open(addr, V::V24_11.to_wire(), V::V24_11.to_wire()).await;
    assert_eq!(m.rc, 0);
    // DBD_GET_JOBS_COND (1444) and DBD_GET_TRES (1486), well formed: known,
    // no handler yet.
    for msg in [
        DbdMessage::GetJobsCond(Default::default()),
        DbdMessage::GetTres(Default::default()),
    ] {
        s.write_all(&msg.encode(V::V24_11).unwrap()).await.unwrap();
        let m = rc(&mut s, V::V24_11).await;
        assert_eq!(
            (m.rc, m.ret_info),
            (EINVAL, msg.msg_type().to_wire(V::V24_11).unwrap()),
            "{m:?}"
        );
    }
    // A body that does not decode: SLURM_ERROR, the connection kept.
    let frame = slurm_wire::dbd::persist::encode(1425, &[0, 0, 0, 0]).unwrap();
    s.write_all(&frame).await.unwrap();
    let m = rc(&mut s, V::V24_11).await;
    assert_eq!(m.ret_info, 1425);
    assert_ne!(m.rc, 0);
    // A number no release has, and a second REQUEST_PERSIST_INIT.
    let frame = slurm_wire::dbd::persist::encode(60000, b"x").unwrap();
    s.write_all(&frame).await.unwrap();
    let m = rc(&mut s, V::V24_11).await;
    assert_eq!(m.ret_info, 60000);
    assert_ne!(m.rc, 0);
    let again = init_bytes(&FakeAuth { uid: 1000 }, 0x2A00, 0x2A00);
    s.write_all(&again).await.unwrap();
    let m = rc(&mut s, V::V24_11).await;
    assert_eq!((m.rc, m.ret_info), (EINVAL, PERSIST_INIT));
    // Still served.
    s.write_all(&fini(0, 0).encode(V::V24_11).unwrap())
        .await
        .unwrap();
    assert_eq!(rc(&mut s, V::V24_11).await.rc, 0);
}

#[tokio::test]
async fn hostile_openings_close_the_connection_and_the_server_goes_on() {
    // Longer than the test waits: what closes a connection is a bound,
    // never the server giving up on bytes that do not come.
    let conf = ConnConf {
        max_msg_bytes: 64 << 10,
        timeout: Duration::from_secs(60),
        ..ConnConf::default()
    };
    let pre_auth = conf.limits.pre_auth_bytes;
    let addr = server(FakeAuth::ctx(0), conf).await;
    let mut garbage = vec![0, 0, 0, 40];
    garbage.extend((0..40u8).map(|i| i.wrapping_mul(37)));
    // Length over stock's 1 GiB cap.
    let huge = 0x7fff_ffffu32.to_be_bytes().to_vec();
    // An opening of 10 MiB whose credential claims 5 MiB: refused without
    // waiting for the rest (all of an opening is read before its
    // credential is verified, within a bound).
    let mut long_cred = init_bytes(&FakeAuth { uid: 1000 }, 0x2A00, 0x2A00);
    let munge_id = slurm_wire::auth::AUTH_PLUGIN_MUNGE.to_be_bytes();
    let cred_at = 8 + long_cred[8..]
        .windows(4)
        .position(|w| w == munge_id)
        .unwrap();
    long_cred.truncate(cred_at + 4);
    long_cred.extend_from_slice(&(5u32 << 20).to_be_bytes());
    long_cred.extend(std::iter::repeat_n(b'A', pre_auth + 4096));
    long_cred[..4].copy_from_slice(&(10u32 << 20).to_be_bytes());
    // A credential that does not verify.
    let forged = {
        let mut b = init_bytes(&FakeAuth { uid: 1000 }, 0x2A00, 0x2A00);
        let at = b.windows(4).position(|w| w == b"uid=").unwrap();
        b[at] = b'x';
        b
    };
    for (what, bytes) in [
        ("garbage", garbage),
        ("a length over 1 GiB", huge),
        ("an oversized credential", long_cred),
        ("a forged credential", forged),
    ] {
        let mut s = TcpStream::connect(addr).await.unwrap();
        let _ = s.write_all(&bytes).await;
        let mut b = [0u8; 1];
        let r = tokio::time::timeout(WAIT, s.read(&mut b)).await;
        assert!(
            matches!(r, Ok(Ok(0)) | Ok(Err(_))),
            "{what}: not closed: {r:?}"
        );
    }
    // After the handshake: a frame over the limit, and one too short for a type.
    for bad in [(1u32 << 20).to_be_bytes().to_vec(), vec![0, 0, 0, 1, 7]] {
        let (mut s, m) = open(addr, 0x2A00, 0x2A00).await;
        assert_eq!(m.rc, 0);
        s.write_all(&bad).await.unwrap();
        assert!(closed(&mut s).await, "{bad:?}");
    }
    let (_s, m) = open(addr, 0x2D00, 0x2D00).await;
    assert_eq!((m.rc, m.ret_info), (0, 0x2D00), "the server still serves");
}

#[tokio::test]
async fn connections_are_bounded() {
    let mut conf = ConnConf::default();
    conf.limits.max_connections = 1;
    let addr = server(FakeAuth::ctx(0), conf).await;
    let (first, m) = open(addr, 0x2A00, 0x2A00).await;
    assert_eq!(m.rc, 0);
    // The only slot is in service: a second waits until it is free.
    let mut second = TcpStream::connect(addr).await.unwrap();
    second
        .write_all(&init_bytes(&FakeAuth { uid: 1000 }, 0x2A00, 0x2A00))
        .await
        .unwrap();
    let mut b = [0u8; 4];
    let early = tokio::time::timeout(Duration::from_millis(500), second.read(&mut b)).await;
    assert!(early.is_err(), "served beyond the bound: {early:?}");
    drop(first);
    assert_eq!(rc(&mut second, V::V24_11).await.ret_info, 0x2A00);
}

#[tokio::test]
async fn a_munge_credential_opens_a_connection() {
    let munged = Munged::start();
    let addr = server(munged.auth_ctx(), ConnConf::default()).await;
    let auth = munged.auth();
    for v in [V::V22_05, V::V26_05] {
        let bytes = init_bytes(&auth, v.to_wire(), v.to_wire());
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(&bytes).await.unwrap();
        let m = rc(&mut s, v).await;
        assert_eq!((m.rc, m.ret_info), (0, v.to_wire()), "{v}");
    }
    // A credential from a munged with another key is refused.
    let stranger = Munged::start();
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(&init_bytes(&stranger.auth(), 0x2A00, 0x2A00))
        .await
        .unwrap();
    assert!(closed(&mut s).await);
}
