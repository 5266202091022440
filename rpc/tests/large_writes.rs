//! Large replies are written off the async workers. A binary of its own:
//! the bound on large writes is process-wide, and rpc.rs counts it.

use slurm_rpc::{
    large_writes_in_progress, read_frame, request_frame, serve, AuthCtx, Incoming, Outgoing,
    LARGE_BODY,
};
use slurm_testkit::munged::Munged;
use slurm_wire::auth::{Audience, VerifyPolicy};
use slurm_wire::msg::common::{Empty, LastUpdateMsg};
use slurm_wire::{Frame, Message, MsgType, ProtocolVersion};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncWriteExt;

const T: Duration = Duration::from_secs(5);

/// The server runs on a runtime of one thread, and a ping's handler holds
/// that thread until the test lets it go. A large reply already being
/// written still reaches its reader whole meanwhile: its copy does not need
/// the async worker (on it, the write would wait for the handler to end).
#[test]
fn a_large_reply_is_written_while_the_only_worker_is_blocked() {
    let m = Munged::start();
    let ctx = AuthCtx {
        plugin: Arc::new(m.auth()),
        slurm_user_uid: 0,
        policy: VerifyPolicy::default(),
    };
    let body: Arc<[u8]> = (0..16 * LARGE_BODY)
        .map(|i| (i % 251) as u8)
        .collect::<Vec<u8>>()
        .into();
    let (blocked_tx, blocked_rx) = mpsc::channel::<()>();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let release_rx = Arc::new(Mutex::new(release_rx));
    let (addr_tx, addr_rx) = mpsc::channel();
    let (server_ctx, served) = (ctx.clone(), body.clone());
    let server = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            addr_tx.send(l.local_addr().unwrap()).unwrap();
            serve(l, server_ctx, T, move |req: Incoming| {
                let (body, blocked_tx, release_rx) =
                    (served.clone(), blocked_tx.clone(), release_rx.clone());
                async move {
                    Some(match req.msg {
                        Message::RequestPing(_) => {
                            // Holds the runtime's only thread, as a long
                            // poll would.
                            let _ = blocked_tx.send(());
                            let rx = release_rx.lock().unwrap();
                            let _ = rx.recv_timeout(Duration::from_secs(20));
                            Outgoing::from(slurm_rpc::rc_message(0))
                        }
                        _ => Outgoing::Encoded {
                            msg_type: MsgType::ResponseJobInfo,
                            body,
                        },
                    })
                }
            })
            .await
            .unwrap();
        });
    });
    let addr = addr_rx.recv_timeout(T).unwrap();
    let v = ProtocolVersion::V24_11;
    let client = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    client.block_on(async {
        let ask = request_frame(
            &ctx,
            v,
            &Message::RequestBuildInfo(LastUpdateMsg { last_update: 0 }),
            Audience::Uid(0),
        )
        .unwrap();
        let mut big = tokio::net::TcpStream::connect(addr).await.unwrap();
        big.write_all(&ask.encode()).await.unwrap();
        // The write has begun (and stalls: nothing reads yet, and the
        // body is larger than the socket buffers).
        for _ in 0..250 {
            if large_writes_in_progress() == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(large_writes_in_progress(), 1, "the large write started");
        let ping = request_frame(&ctx, v, &Message::RequestPing(Empty {}), Audience::Uid(0))
            .unwrap()
            .encode();
        let mut pinger = tokio::net::TcpStream::connect(addr).await.unwrap();
        pinger.write_all(&ping).await.unwrap();
        tokio::task::spawn_blocking(move || blocked_rx.recv_timeout(T))
            .await
            .unwrap()
            .expect("the ping's handler holds the server's thread");
        // Now read: the whole body comes although the server's only
        // worker is held.
        let whole = tokio::time::timeout(T, read_frame(&mut big)).await;
        let _ = release_tx.send(());
        let raw = whole
            .expect("the large reply is written while the worker is blocked")
            .unwrap();
        let f = Frame::decode(&raw).unwrap();
        assert_eq!(f.header.typed_msg_type().unwrap(), MsgType::ResponseJobInfo);
        assert_eq!(&f.body[..], &body[..]);
        // The ping is answered once released.
        let reply = tokio::time::timeout(T, read_frame(&mut pinger))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            Frame::decode(&reply).unwrap().message().unwrap(),
            slurm_rpc::rc_message(0)
        );
    });
    // The writing thread gives its slot back once the last byte is sent.
    for _ in 0..250 {
        if large_writes_in_progress() == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(large_writes_in_progress(), 0);
    // The writers run below the daemon's priority, the other threads at it.
    let nices = thread_nices();
    let main_nice = stat_nice(&std::fs::read_to_string("/proc/self/stat").unwrap());
    let writers: Vec<i64> = nices
        .iter()
        .filter(|(name, _)| name.starts_with("large-writer"))
        .map(|(_, n)| *n)
        .collect();
    assert!(!writers.is_empty(), "writer threads: {nices:?}");
    for n in writers {
        assert_eq!(n, (main_nice + 10).min(19), "{nices:?}");
    }
    drop(server);
}

/// (name, nice) of every thread of this process, from /proc.
fn thread_nices() -> Vec<(String, i64)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc/self/task").unwrap() {
        let dir = e.unwrap().path();
        let (Ok(comm), Ok(stat)) = (
            std::fs::read_to_string(dir.join("comm")),
            std::fs::read_to_string(dir.join("stat")),
        ) else {
            continue; // the thread ended meanwhile
        };
        out.push((comm.trim().to_string(), stat_nice(&stat)));
    }
    out
}

/// The nice value in a /proc stat line.
fn stat_nice(stat: &str) -> i64 {
    // After "pid (comm) ": state is field 3, nice field 19.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    rest.split(' ').nth(16).unwrap().parse().unwrap()
}
