//! Request/reply over TCP with real munge credentials, in every version.

use slurm_rpc::{call, read_frame, request_frame, serve, AuthCtx, Incoming, RpcError};
use slurm_testkit::munged::Munged;
use slurm_wire::auth::Audience;
use slurm_wire::msg::common::{Empty, LastUpdateMsg, ReturnCodeMsg};
use slurm_wire::{Frame, Message, ProtocolVersion};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;

const T: Duration = Duration::from_secs(5);

async fn server(ctx: AuthCtx) -> std::net::SocketAddr {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(serve(l, ctx, T, |req: Incoming| async move {
        match req.msg {
            Message::RequestPing(_) => Some(slurm_rpc::rc_message(0)),
            // Echo the uid the credential proved, to check identity plumbing.
            Message::RequestBuildInfo(_) => Some(slurm_rpc::rc_message(req.identity.uid as i32)),
            _ => Some(slurm_rpc::rc_message(-1)),
        }
    }));
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ping_in_every_version() {
    let m = Munged::start();
    let c = m.auth_ctx();
    let addr = server(c.clone()).await;
    for v in ProtocolVersion::ALL {
        let ping = Message::RequestPing(Empty {});
        let (f, reply) = call(&c, addr, v, &ping, Audience::Uid(0), T).await.unwrap();
        assert_eq!(
            f.header.version, v,
            "reply goes out in the requester's version"
        );
        assert_eq!(f.auth.is_some(), v == ProtocolVersion::V22_05);
        assert_eq!(
            reply,
            Message::ResponseSlurmRc(ReturnCodeMsg { return_code: 0 })
        );
    }
    let (_, reply) = call(
        &c,
        addr,
        ProtocolVersion::V24_11,
        &Message::RequestBuildInfo(LastUpdateMsg { last_update: 0 }),
        Audience::Uid(0),
        T,
    )
    .await
    .unwrap();
    assert_eq!(
        reply,
        Message::ResponseSlurmRc(ReturnCodeMsg { return_code: 0 })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_are_dropped_and_the_server_stays_up() {
    let m = Munged::start();
    let c = m.auth_ctx();
    let addr = server(c.clone()).await;
    let v = ProtocolVersion::V24_11;

    // Tampered body: the credential's hash no longer matches.
    let mut f: Frame = request_frame(
        &c,
        v,
        &Message::RequestBuildInfo(LastUpdateMsg { last_update: 0 }),
        Audience::Uid(0),
    )
    .unwrap();
    f.body[7] ^= 1;
    // Garbage, an unknown type and an oversized length prefix.
    let garbage = vec![0, 0, 0, 8, 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4];
    let huge = vec![0x7f, 0xff, 0xff, 0xff];
    for bytes in [f.encode(), garbage, huge] {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(&bytes).await.unwrap();
        let r = tokio::time::timeout(T, read_frame(&mut s)).await.unwrap();
        assert!(
            matches!(r, Err(RpcError::Io(_))),
            "no reply, connection closed: {r:?}"
        );
    }
    // Still serving.
    let (_, reply) = call(
        &c,
        addr,
        v,
        &Message::RequestPing(Empty {}),
        Audience::Uid(0),
        T,
    )
    .await
    .unwrap();
    assert_eq!(
        reply,
        Message::ResponseSlurmRc(ReturnCodeMsg { return_code: 0 })
    );
}

/// Large replies are written at most `LARGE_WRITES` at a time, every one of them
/// completes, and a ping is answered while readers stall them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_replies_are_written_a_few_at_a_time_and_a_ping_passes_them() {
    use slurm_rpc::{large_writes_in_progress, Outgoing, LARGE_BODY, LARGE_WRITES};
    use slurm_wire::MsgType;
    use tokio::io::AsyncReadExt;

    let m = Munged::start();
    let c = m.auth_ctx();
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let body: Arc<[u8]> = vec![7u8; 64 * LARGE_BODY].into();
    let served = body.clone();
    // A reply's deadline runs from its request, also while it waits for a
    // writer: ten of 64 MiB, two at a time, under load take a while.
    tokio::spawn(serve(
        l,
        c.clone(),
        Duration::from_secs(120),
        move |req: Incoming| {
            let body = served.clone();
            async move {
                Some(match req.msg {
                    Message::RequestPing(_) => Outgoing::from(slurm_rpc::rc_message(0)),
                    _ => Outgoing::Encoded {
                        msg_type: MsgType::ResponseJobInfo,
                        body,
                    },
                })
            }
        },
    ));
    let v = ProtocolVersion::V24_11;
    // Each request needs its own credential (a replay is refused).
    let ask = || {
        request_frame(
            &c,
            v,
            &Message::RequestBuildInfo(LastUpdateMsg { last_update: 0 }),
            Audience::Uid(0),
        )
        .unwrap()
        .encode()
    };
    // Ten readers ask and then read nothing, so writes stall on full
    // socket buffers (loopback ones hold several MB: the body is larger).
    let mut readers = Vec::new();
    for _ in 0..10 {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(&ask()).await.unwrap();
        readers.push(s);
    }
    // Ten credentials through munged and ten replies to build come first:
    // under load that may take seconds, so wait for the writers to fill
    // up (bounded), then watch a while longer that no more start.
    let mut seen = 0;
    let filled = Instant::now();
    while seen < LARGE_WRITES && filled.elapsed() < Duration::from_secs(60) {
        tokio::time::sleep(Duration::from_millis(20)).await;
        seen = seen.max(large_writes_in_progress());
    }
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        seen = seen.max(large_writes_in_progress());
    }
    assert_eq!(
        seen, LARGE_WRITES,
        "that many writes at once, the others waiting"
    );
    let (_, reply) = call(
        &c,
        addr,
        v,
        &Message::RequestPing(Empty {}),
        Audience::Uid(0),
        T,
    )
    .await
    .unwrap();
    assert_eq!(reply, slurm_rpc::rc_message(0));
    // Every reader gets its whole body. All read at once: the writers
    // serve the requests in the order their credentials checked out, not
    // the order of the connections, so reading one reader after the other
    // would wait on a reply stuck behind two others not being read.
    let reads: Vec<_> = readers
        .into_iter()
        .map(|mut s| {
            tokio::spawn(async move {
                let mut all = Vec::new();
                s.read_to_end(&mut all).await.map(|_| all)
            })
        })
        .collect();
    for r in reads {
        let all = tokio::time::timeout(Duration::from_secs(60), r)
            .await
            .expect("a reader still waits for its reply")
            .unwrap()
            .unwrap();
        assert!(all.len() > body.len(), "whole frame: {} bytes", all.len());
        assert!(all.ends_with(&body));
    }
    assert_eq!(large_writes_in_progress(), 0);
}
