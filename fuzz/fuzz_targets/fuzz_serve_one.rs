#![no_main]

//! Arbitrary bytes as one connection to a server (FakeAuth: no munged).
//! First byte even: the bytes as they are. Odd: a frame with a valid
//! credential around a fuzzed type and body, so that the paths after
//! authentication are reached too. The server must neither panic (the
//! fuzzer's hook aborts on a panic in any thread) nor hang.

use libfuzzer_sys::fuzz_target;
use slurm_testkit::munged::FakeAuth;
use slurm_rpc::{frame_head, Incoming, ServeOpts};
use slurm_wire::auth::{sign_body, Audience};
use slurm_wire::{Header, MsgType, ProtocolVersion};
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::OnceLock;
use std::time::Duration;

fn server() -> SocketAddr {
    static ADDR: OnceLock<SocketAddr> = OnceLock::new();
    *ADDR.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(l.local_addr().unwrap()).unwrap();
                let opts = ServeOpts {
                    timeout: Duration::from_secs(2),
                    forwarder: None,
                };
                let limits = slurm_rpc::ConnLimits {
                    pre_auth_bytes: 4096,
                    ..Default::default()
                };
                let _ = slurm_rpc::serve_limited(l, FakeAuth::ctx(0), opts, limits, |req: Incoming| async move {
                    Some(slurm_rpc::rc_message(req.identity.uid as i32))
                })
                .await;
            });
        });
        rx.recv().unwrap()
    })
}

fn framed(data: &[u8]) -> Vec<u8> {
    let (v, rest) = match data.split_first() {
        Some((&i, r)) => (ProtocolVersion::ALL[i as usize % ProtocolVersion::ALL.len()], r),
        None => return Vec::new(),
    };
    let (ty, body) = match rest {
        [a, b, body @ ..] => (u16::from_be_bytes([*a, *b]), body),
        _ => return Vec::new(),
    };
    let ctx = FakeAuth::ctx(0);
    let Ok(blob) = sign_body(ctx.plugin.as_ref(), ty, body, Audience::Any) else {
        return Vec::new();
    };
    let mut h = Header::new(v, MsgType::RequestPing);
    h.msg_type = ty;
    let mut bytes = frame_head(h, Some(&blob), body.len());
    bytes.extend_from_slice(body);
    bytes
}

fuzz_target!(|data: &[u8]| {
    let bytes = match data.split_first() {
        Some((m, rest)) if m & 1 == 1 => framed(rest),
        Some((_, rest)) => rest.to_vec(),
        None => return,
    };
    let mut s = TcpStream::connect(server()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    // The server may close early (a bad prefix): that is an answer too.
    let _ = s.write_all(&bytes);
    let _ = s.shutdown(Shutdown::Write);
    let mut reply = Vec::new();
    match s.read_to_end(&mut reply) {
        Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
            panic!("server hung on {} bytes", bytes.len())
        }
        _ => {}
    }
});
