//! Fake peers over real sockets and munge: a slurmd that records what a
//! controller sends it, and a controller a slurmd registers with.

use slurm_rpc::{read_frame, reply_frame, write_frame, AuthCtx, Incoming};
use slurm_wire::msg::common::ReturnCodeMsg;
use slurm_wire::{Frame, Message, ProtocolVersion};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// How long a mock waits for its peer before the test fails.
pub const WAIT: Duration = Duration::from_secs(20);

/// A slurmd that answers every request with rc 0 and hands each one, with
/// the release it came in, to the test.
pub struct MockSlurmd {
    pub port: u16,
    pub received: mpsc::UnboundedReceiver<(ProtocolVersion, Message)>,
}

impl MockSlurmd {
    /// Listens on a free loopback port, verifying requests with `ctx`.
    pub async fn start(ctx: AuthCtx) -> MockSlurmd {
        let l = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("mock slurmd: bind");
        let port = l.local_addr().expect("mock slurmd: address").port();
        let (tx, received) = mpsc::unbounded_channel();
        tokio::spawn(slurm_rpc::serve(l, ctx, WAIT, move |req: Incoming| {
            let tx = tx.clone();
            async move {
                let _ = tx.send((req.version(), req.msg));
                Some(slurm_rpc::rc_message(0))
            }
        }));
        MockSlurmd { port, received }
    }

    /// The next request, or a failed test after [`WAIT`].
    pub async fn next(&mut self) -> (ProtocolVersion, Message) {
        tokio::time::timeout(WAIT, self.received.recv())
            .await
            .expect("the controller sent nothing to the mock slurmd")
            .expect("mock slurmd stopped")
    }
}

/// One request to a fake controller listening on `l`; frames in another
/// release than `accept` are dropped unanswered, as an older controller
/// does. The request must come from root (slurmd's uid).
pub async fn next_request(
    l: &TcpListener,
    ctx: &AuthCtx,
    accept: ProtocolVersion,
) -> (Message, TcpStream, ProtocolVersion) {
    loop {
        let (mut s, _) = tokio::time::timeout(WAIT, l.accept())
            .await
            .expect("slurmd did not call the controller")
            .expect("mock controller: accept");
        let raw = read_frame(&mut s).await.expect("mock controller: read");
        let f = Frame::decode(&raw).expect("mock controller: frame");
        if f.header.version != accept {
            continue;
        }
        let id = slurm_rpc::authenticate(ctx, &f).expect("mock controller: credential");
        assert_eq!(id.uid, 0, "slurmd runs as root");
        let m = f.message().expect("mock controller: body");
        return (m, s, f.header.version);
    }
}

/// Answers a request taken by [`next_request`] with `rc`.
pub async fn answer(mut s: TcpStream, ctx: &AuthCtx, v: ProtocolVersion, rc: u32) {
    let m = Message::ResponseSlurmRc(ReturnCodeMsg { return_code: rc });
    let f = reply_frame(ctx, v, 0, &m).expect("mock controller: reply");
    write_frame(&mut s, &f)
        .await
        .expect("mock controller: write");
}
