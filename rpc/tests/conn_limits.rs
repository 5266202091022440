//! Connections before authentication: bounded memory, a cap, deadlines,
//! and credential checks off the async workers.

use slurm_rpc::{call, frame_head, read_frame, request_frame, serve, AuthCtx, Incoming};
use slurm_testkit::munged::{FakeAuth, Munged};
use slurm_wire::auth::{hash::k12_payload, sign_body, Audience, AuthBlob};
use slurm_wire::msg::common::{Empty, LastUpdateMsg};
use slurm_wire::{Header, Message, MsgType, ProtocolVersion};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const T: Duration = Duration::from_secs(5);
const V: ProtocolVersion = ProtocolVersion::V24_11;
const GIB: usize = 1 << 30;

async fn handler(req: Incoming) -> Option<Message> {
    Some(match req.msg {
        Message::RequestPing(_) => slurm_rpc::rc_message(0),
        _ => slurm_rpc::rc_message(req.identity.uid as i32),
    })
}

fn ping() -> Message {
    Message::RequestPing(Empty {})
}

/// As many descriptors as the hard limit allows (5,000 clients and the
/// server's side of them).
fn raise_nofile() {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain syscalls on a local struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 {
            r.rlim_cur = r.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
}

/// A field of /proc/self/status, in bytes.
fn status_bytes(key: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = s.lines().find(|l| l.starts_with(key)).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

/// A frame declaring 1 GiB whose header's forward list runs on and on:
/// no credential is ever reached.
fn endless_header() -> Vec<u8> {
    let mut w = slurm_wire::pack::Writer::new();
    w.u32(GIB as u32);
    w.u16(V.to_wire());
    w.u16(0);
    w.u16(1008);
    w.u32(0);
    w.u16(1); // forward.cnt
    w.u32((GIB / 2) as u32); // nodelist length
    w.into_vec()
}

/// The head of a frame declaring a body that fills 1 GiB, with a valid
/// credential (over an empty body: the hash would fail at the end).
fn authenticated_1gib_head(ctx: &AuthCtx) -> Vec<u8> {
    let blob = sign_body(ctx.plugin.as_ref(), 1008, b"", Audience::Uid(0)).unwrap();
    let h = Header::new(V, MsgType::RequestPing);
    let head_len = frame_head(h.clone(), Some(&blob), 0).len() - 4;
    frame_head(h, Some(&blob), GIB - head_len)
}

/// Writes `head`, then `total` filler bytes in `chunk`s every `pause`,
/// until the server closes; keeps the stream open until `stop`.
async fn trickle(
    mut s: TcpStream,
    head: Vec<u8>,
    total: usize,
    chunk: usize,
    pause: Duration,
    stop: Arc<AtomicBool>,
) {
    let filler = vec![b'a'; chunk];
    if s.write_all(&head).await.is_ok() {
        let mut sent = 0;
        while sent < total && !stop.load(Ordering::Relaxed) {
            if s.write_all(&filler).await.is_err() {
                break;
            }
            sent += chunk;
            tokio::time::sleep(pause).await;
        }
    }
    while !stop.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// 5,000 idle connections and 100 slow ones declaring 1 GiB (half before
/// a credential, sending 8 MiB each; half with a valid one, a byte now and
/// then): pings are answered meanwhile, and memory follows what the
/// server keeps, not what was declared.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_slow_1gib_connections_leave_pings_answered_and_memory_bounded() {
    raise_nofile();
    let m = Munged::start();
    let c = m.auth_ctx();
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(serve(l, c.clone(), Duration::from_secs(30), handler));
    call(&c, addr, V, &ping(), Audience::Uid(0), T)
        .await
        .unwrap();

    let rss0 = status_bytes("VmRSS:");
    let vsz0 = status_bytes("VmSize:");
    let peak = Arc::new(AtomicU64::new(rss0));
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, stop) = (peak.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                peak.fetch_max(status_bytes("VmRSS:"), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };

    let mut connects = tokio::task::JoinSet::new();
    for _ in 0..5000 {
        connects.spawn(TcpStream::connect(addr));
    }
    let mut idle = Vec::new();
    while let Some(s) = connects.join_next().await {
        idle.push(s.unwrap().unwrap());
    }
    let mut slow = Vec::new();
    for i in 0..100 {
        let s = TcpStream::connect(addr).await.unwrap();
        let stop = stop.clone();
        slow.push(if i % 2 == 0 {
            tokio::spawn(trickle(
                s,
                endless_header(),
                8 << 20,
                64 << 10,
                Duration::from_millis(5),
                stop,
            ))
        } else {
            let head = authenticated_1gib_head(&c);
            tokio::spawn(trickle(s, head, 20, 1, Duration::from_millis(200), stop))
        });
    }
    for _ in 0..30 {
        let t = Instant::now();
        let (_, r) = call(&c, addr, V, &ping(), Audience::Uid(0), T)
            .await
            .expect("ping answered");
        assert_eq!(r, slurm_rpc::rc_message(0));
        assert!(t.elapsed() < T);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let vsz = status_bytes("VmSize:");
    stop.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    for t in slow {
        t.await.unwrap();
    }
    drop(idle);
    let grew = peak.load(Ordering::Relaxed).saturating_sub(rss0);
    assert!(grew < 200 << 20, "RSS grew by {} MiB", grew >> 20);
    // Nothing of the declared 100 GiB was reserved either.
    let vgrew = vsz.saturating_sub(vsz0);
    assert!(vgrew < 16 << 30, "VmSize grew by {} MiB", vgrew >> 20);
}

/// Credentials that take seconds to verify (a slow munged) hold no async
/// worker: a ping behind them is answered at once.
///
/// The server runs alone on a single-threaded runtime of its own, so a
/// decode done on its one worker (inline, or through `block_in_place`,
/// which there runs inline too) holds every connection behind it, the
/// ping included, for the 4 x 5 s of the slow ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_credential_checks_leave_the_workers_free() {
    let c = FakeAuth::ctx(0);
    let std_l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    std_l.set_nonblocking(true).unwrap();
    let addr = std_l.local_addr().unwrap();
    let sc = c.clone();
    // Never joined: the thread ends with the test's process.
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let l = tokio::net::TcpListener::from_std(std_l).unwrap();
            serve(l, sc, Duration::from_secs(30), handler).await
        })
    });
    let mut slow = Vec::new();
    for _ in 0..4 {
        let mut f = request_frame(&c, V, &ping(), Audience::Uid(0)).unwrap();
        let cred = FakeAuth::slow_credential(0, &k12_payload(1008, b""), Duration::from_secs(5));
        f.auth = Some(AuthBlob {
            plugin_id: slurm_wire::auth::AUTH_PLUGIN_MUNGE,
            credential: Some(cred),
        });
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(&f.encode()).await.unwrap();
        slow.push(s);
        // One at a time, so that each would land on a free worker.
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let t = Instant::now();
    let (_, r) = call(&c, addr, V, &ping(), Audience::Uid(0), T)
        .await
        .unwrap();
    assert_eq!(r, slurm_rpc::rc_message(0));
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "ping took {:?}",
        t.elapsed()
    );
    // The slow ones are answered too, once verified.
    for mut s in slow {
        let raw = tokio::time::timeout(Duration::from_secs(20), read_frame(&mut s))
            .await
            .unwrap()
            .unwrap();
        assert!(!raw.is_empty());
    }
}

/// A full server closes idle connections for new ones, never those whose
/// credential checked out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_server_evicts_idle_connections_not_those_in_service() {
    let c = FakeAuth::ctx(0);
    let build_info = Message::RequestBuildInfo(LastUpdateMsg { last_update: 0 });
    let frames: Vec<Vec<u8>> = (0..4)
        .map(|_| {
            request_frame(&c, V, &build_info, Audience::Uid(0))
                .unwrap()
                .encode()
        })
        .collect();
    let body = 8;
    let head = frames[0].len() - body - 4;
    let limits = slurm_rpc::ConnLimits {
        max_connections: 8,
        evict_after: Duration::from_millis(50),
        // The header and credential, and part of the body.
        pre_auth_bytes: head + 2,
        ..Default::default()
    };
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let opts = slurm_rpc::ServeOpts {
        timeout: Duration::from_secs(30),
        forwarder: None,
    };
    tokio::spawn(slurm_rpc::serve_limited(
        l,
        c.clone(),
        opts,
        limits,
        handler,
    ));
    // Four in service, their bodies held back.
    let mut held = Vec::new();
    for f in &frames {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(&f[..f.len() - 4]).await.unwrap();
        held.push(s);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut idle = Vec::new();
    for _ in 0..40 {
        idle.push(TcpStream::connect(addr).await.unwrap());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (_, r) = call(&c, addr, V, &ping(), Audience::Uid(0), T)
        .await
        .unwrap();
    assert_eq!(r, slurm_rpc::rc_message(0));
    let mut closed = 0;
    for s in &mut idle {
        let mut b = [0u8; 1];
        if let Ok(Ok(0) | Err(_)) =
            tokio::time::timeout(Duration::from_secs(2), s.read(&mut b)).await
        {
            closed += 1;
        }
    }
    assert!(closed >= 36, "only {closed} of 40 idle connections closed");
    for (mut s, f) in held.into_iter().zip(&frames) {
        s.write_all(&f[f.len() - 4..]).await.unwrap();
        let raw = tokio::time::timeout(T, read_frame(&mut s))
            .await
            .unwrap()
            .expect("answered after the flood");
        let m = slurm_wire::Frame::decode(&raw).unwrap().message().unwrap();
        assert_eq!(m, slurm_rpc::rc_message(0));
    }
}

/// A connection that sends part of a header is closed at the header
/// deadline, well before the request's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partial_header_is_closed_at_the_header_deadline() {
    let c = FakeAuth::ctx(0);
    let limits = slurm_rpc::ConnLimits {
        header_timeout: Some(Duration::from_millis(300)),
        ..Default::default()
    };
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let opts = slurm_rpc::ServeOpts {
        timeout: Duration::from_secs(60),
        forwarder: None,
    };
    tokio::spawn(slurm_rpc::serve_limited(l, c, opts, limits, handler));
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(&[0, 0, 1, 0, 0x2a]).await.unwrap();
    let mut b = [0u8; 1];
    let r = tokio::time::timeout(Duration::from_secs(5), s.read(&mut b)).await;
    assert!(matches!(r, Ok(Ok(0) | Err(_))), "closed: {r:?}");
}
