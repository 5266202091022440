//! Forwarding (TreeWidth) between in-process servers on localhost, with
//! real munge credentials.

use slurm_rpc::forward::{Forwarder, Resolver};
use slurm_rpc::{read_frame, request_frame, serve_with, write_frame, AuthCtx, Incoming, ServeOpts};
use slurm_testkit::munged::Munged;
use slurm_wire::auth::Audience;
use slurm_wire::errno::{
    SLURM_COMMUNICATIONS_CONNECTION_ERROR, SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT,
    SLURM_UNKNOWN_FORWARD_ADDR,
};
use slurm_wire::header::{Forward, RetEntry};
use slurm_wire::msg::common::{LastUpdateMsg, ReturnCodeMsg};
use slurm_wire::{Frame, Message, ProtocolVersion};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(5);

/// What each node received: its name and the frame.
type Seen = Arc<Mutex<Vec<(String, Frame)>>>;

/// One munged per node sharing one key, as on a real cluster: a single
/// munged would see each forwarded credential as a replay.
fn munges(count: usize) -> Vec<Munged> {
    let first = Munged::start();
    let mut all: Vec<Munged> = (1..count).map(|_| first.sibling()).collect();
    all.insert(0, first);
    all
}

/// Servers named `n1`..`n{count}` (node i using munged i-1) that answer
/// with their number as the return code, plus the names in `extra`
/// resolving to the given ports. Returns what they receive and every
/// name's port.
async fn cluster(munged: &[Munged], extra: &[(&str, u16)]) -> (Seen, Arc<HashMap<String, u16>>) {
    let count = munged.len();
    let mut listeners = Vec::new();
    let mut ports: HashMap<String, u16> = HashMap::new();
    for i in 1..=count {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        ports.insert(format!("n{i}"), l.local_addr().unwrap().port());
        listeners.push((i, l));
    }
    for (n, p) in extra {
        ports.insert(n.to_string(), *p);
    }
    let ports = Arc::new(ports);
    let table = ports.clone();
    let resolve: Resolver = Arc::new(move |n: &str| table.get(n).map(|p| ("127.0.0.1".into(), *p)));
    let seen: Seen = Arc::default();
    for (i, l) in listeners {
        let fw = Arc::new(Forwarder::new(resolve.clone(), T, 16));
        let opts = ServeOpts {
            timeout: T,
            forwarder: Some(fw),
        };
        let seen = seen.clone();
        let c = munged[i - 1].auth_ctx();
        tokio::spawn(serve_with(l, c, opts, move |req: Incoming| {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().push((format!("n{i}"), req.frame));
                Some(slurm_rpc::rc_message(i as i32))
            }
        }));
    }
    (seen, ports)
}

/// Sends `msg` to `port` with `forward` in its header; returns what was
/// sent and the reply.
async fn send(
    ctx: &AuthCtx,
    port: u16,
    v: ProtocolVersion,
    forward: Forward,
) -> (Frame, Frame, Duration) {
    let msg = Message::RequestBuildInfo(LastUpdateMsg {
        last_update: 0x0102_0304_0506,
    });
    let mut req = request_frame(ctx, v, &msg, Audience::Uid(0)).unwrap();
    req.header.forward = forward;
    let started = Instant::now();
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    write_frame(&mut s, &req).await.unwrap();
    let raw = tokio::time::timeout(T * 3, read_frame(&mut s))
        .await
        .expect("a reply within the timeout")
        .unwrap();
    (req, Frame::decode(&raw).unwrap(), started.elapsed())
}

fn by_name(ret: &[RetEntry]) -> HashMap<String, (u32, Message)> {
    let mut m = HashMap::new();
    for e in ret {
        let name = e.node_name.clone().expect("every entry names its node");
        assert!(
            m.insert(name.clone(), (e.err, e.body.clone())).is_none(),
            "{name} twice"
        );
    }
    m
}

fn rc(i: u32) -> Message {
    Message::ResponseSlurmRc(ReturnCodeMsg { return_code: i })
}

/// n1 is told to forward to n2..n7 with TreeWidth 2: it relays to n2 (with
/// n3, n4 to relay on) and n5 (with n6, n7). Every node gets the original
/// credential and body, and n1's reply lists the six others.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_tree_reaches_every_node_and_the_replies_come_back() {
    let m = munges(7);
    // The client shares n1's munged: n1 decodes its credential once.
    let c = m[0].auth_ctx();
    for v in [
        ProtocolVersion::V22_05,
        ProtocolVersion::V23_11,
        ProtocolVersion::V24_11,
        ProtocolVersion::V26_05,
    ] {
        let (seen, ports) = cluster(&m, &[]).await;
        let fwd = Forward {
            cnt: 6,
            nodelist: Some("n[2-7]".into()),
            timeout: 5000,
            tree_width: 2,
            net_cred: None,
            tree_depth: 0,
        };
        let (req, reply, _) = send(&c, ports["n1"], v, fwd).await;
        assert_eq!(reply.message().unwrap(), rc(1), "{v}");
        let got = by_name(&reply.header.ret_list);
        assert_eq!(got.len(), 6, "{v}: {got:?}");
        for i in 2..=7u32 {
            assert_eq!(got[&format!("n{i}")], (0, rc(i)), "{v}");
        }
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 7, "{v}: each node handled it once");
        for (name, f) in seen.iter() {
            assert_eq!(f.auth, req.auth, "{v} {name}: the original credential");
            assert_eq!(f.body, req.body, "{v} {name}: the original body");
            assert_eq!(f.header.msg_type, req.header.msg_type);
            let fwd = &f.header.forward;
            let want = match name.as_str() {
                "n1" => Some("n[2-7]"),
                "n2" => Some("n[3-4]"),
                "n5" => Some("n[6-7]"),
                _ => None,
            };
            assert_eq!(fwd.nodelist.as_deref(), want, "{v} {name}");
            if want.is_some() && name != "n1" {
                assert_eq!((fwd.cnt, fwd.tree_width), (2, 2), "{v} {name}");
                if v >= ProtocolVersion::V24_11 {
                    assert_eq!(fwd.tree_depth, 2, "{v} {name}: depth below n1");
                }
            }
        }
    }
}

/// Nodes that refuse the connection, never answer or have no address get
/// RESPONSE_FORWARD_FAILED entries, and the reply still comes within the
/// forward timeout. A dead head of a branch does not cost its branch: the
/// others are sent to directly.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn unreachable_nodes_are_reported_within_the_timeout() {
    let m = munges(4);
    let c = m[0].auth_ctx();
    // A port nobody listens on.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    // A server that accepts and never answers.
    let mute = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mute_port = mute.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = mute.accept().await {
            held.push(s);
        }
    });
    let (seen, ports) = cluster(&m, &[("dead1", closed), ("mute1", mute_port)]).await;
    let v = ProtocolVersion::V24_11;

    // All direct (TreeWidth 16): one of each kind.
    let fwd = Forward {
        cnt: 4,
        nodelist: Some("n2,dead1,mute1,ghost1".into()),
        timeout: 400,
        tree_width: 16,
        net_cred: None,
        tree_depth: 1,
    };
    let (_, reply, took) = send(&c, ports["n1"], v, fwd).await;
    assert!(took < Duration::from_secs(3), "took {took:?}");
    let got = by_name(&reply.header.ret_list);
    assert_eq!(got.len(), 4, "{got:?}");
    assert_eq!(got["n2"], (0, rc(2)));
    let failed = |err: i32| {
        (
            err as u32,
            Message::ResponseForwardFailed(Default::default()),
        )
    };
    assert_eq!(got["dead1"], failed(SLURM_COMMUNICATIONS_CONNECTION_ERROR));
    assert_eq!(got["mute1"], failed(SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT));
    assert_eq!(got["ghost1"], failed(SLURM_UNKNOWN_FORWARD_ADDR));

    // A chain (TreeWidth 1) whose head is dead: n3 and n4 still get it.
    seen.lock().unwrap().clear();
    let fwd = Forward {
        cnt: 3,
        nodelist: Some("dead1,n[3-4]".into()),
        timeout: 400,
        tree_width: 1,
        net_cred: None,
        tree_depth: 0,
    };
    let (_, reply, took) = send(&c, ports["n1"], v, fwd).await;
    assert!(took < Duration::from_secs(3), "took {took:?}");
    let got = by_name(&reply.header.ret_list);
    assert_eq!(got.len(), 3, "{got:?}");
    assert_eq!(got["dead1"], failed(SLURM_COMMUNICATIONS_CONNECTION_ERROR));
    assert_eq!(got["n3"], (0, rc(3)));
    assert_eq!(got["n4"], (0, rc(4)));
    // A chain whose head never answers: the deadline is the whole
    // branch's, so the reply still comes in time, n3 marked as not reached.
    let fwd = Forward {
        cnt: 2,
        nodelist: Some("mute1,n3".into()),
        timeout: 400,
        tree_width: 1,
        net_cred: None,
        tree_depth: 2,
    };
    let (_, reply, took) = send(&c, ports["n1"], v, fwd).await;
    assert!(took < Duration::from_secs(2), "took {took:?}");
    let got = by_name(&reply.header.ret_list);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got["mute1"], failed(SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT));
    assert_eq!(got["n3"], failed(SLURM_COMMUNICATIONS_CONNECTION_ERROR));

    let mut handled: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|(n, _)| n.clone())
        .collect();
    handled.sort();
    assert_eq!(handled, ["n1", "n1", "n3", "n4"]);
}

/// Makes credentials as another uid, through the munge CLI.
struct AsUser {
    munged: Arc<Munged>,
    uid: u32,
}

impl slurm_wire::auth::AuthPlugin for AsUser {
    fn plugin_id(&self) -> u32 {
        slurm_wire::auth::AUTH_PLUGIN_MUNGE
    }
    fn create(&self, payload: &[u8], _: Audience) -> Result<String, slurm_wire::auth::AuthError> {
        Ok(self.munged.cred_as(self.uid, payload))
    }
    fn verify(&self, _: &str) -> Result<slurm_wire::auth::Identity, slurm_wire::auth::AuthError> {
        Err(slurm_wire::auth::AuthError::Invalid("sign only".into()))
    }
}

/// A plain user's forward list is not relayed: n2, named in it, hears
/// nothing, and n1 answers for itself alone. A flood of such requests,
/// each naming a million unknown nodes in a chain (TreeWidth 1), is
/// answered at once while root's requests keep being served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_users_forward_list_is_not_relayed() {
    let m = munges(2);
    let (seen, ports) = cluster(&m, &[]).await;
    let user = AuthCtx {
        plugin: Arc::new(AsUser {
            munged: Arc::new(m[0].sibling()),
            uid: 65534,
        }),
        slurm_user_uid: 0,
        policy: Default::default(),
    };
    let v = ProtocolVersion::V24_11;
    let fwd = |list: &str, cnt: u16, width: u16| Forward {
        cnt,
        nodelist: Some(list.into()),
        timeout: 60_000,
        tree_width: width,
        net_cred: None,
        tree_depth: 0,
    };
    let (_, reply, _) = send(&user, ports["n1"], v, fwd("n2", 1, 16)).await;
    assert_eq!(reply.message().unwrap(), rc(1));
    assert!(
        reply.header.ret_list.is_empty(),
        "{:?}",
        reply.header.ret_list
    );
    let handled: Vec<String> = seen.lock().unwrap().iter().map(|s| s.0.clone()).collect();
    assert_eq!(handled, ["n1"], "n2 got nothing");

    // The flood: its credentials made first (one each, munge refuses a
    // replay), then sent all at once.
    let msg = Message::RequestBuildInfo(LastUpdateMsg { last_update: 1 });
    let mut flood = Vec::new();
    for _ in 0..8 {
        let mut f = request_frame(&user, v, &msg, Audience::Uid(0)).unwrap();
        f.header.forward = fwd("ghost[0-999999]", u16::MAX, 1);
        flood.push(f);
    }
    let port = ports["n1"];
    let mut flooders = tokio::task::JoinSet::new();
    for f in flood {
        flooders.spawn(async move {
            let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .unwrap();
            write_frame(&mut s, &f).await.unwrap();
            let raw = tokio::time::timeout(T * 3, read_frame(&mut s))
                .await
                .expect("a flood request is answered")
                .unwrap();
            Frame::decode(&raw).unwrap()
        });
    }
    // Root's requests are served meanwhile (and relayed).
    let root = m[1].auth_ctx();
    for _ in 0..5 {
        let (_, reply, took) = send(&root, port, v, fwd("n2", 1, 16)).await;
        assert!(took < Duration::from_secs(5), "took {took:?}");
        assert_eq!(by_name(&reply.header.ret_list)["n2"], (0, rc(2)));
    }
    while let Some(r) = flooders.join_next().await {
        let f = r.unwrap();
        assert_eq!(f.message().unwrap(), rc(1));
        assert!(f.header.ret_list.is_empty());
    }
}

/// Root's 60,000 unknown names in a chain (a reply carries at most
/// 65,535 entries): each is resolved once and reported as unknown, within
/// a generous bound (the quadratic splitting took many minutes), and
/// nothing is sent anywhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_list_of_unknown_names_is_linear() {
    let m = munges(1);
    let (seen, ports) = cluster(&m, &[]).await;
    let c = m[0].auth_ctx();
    let fwd = Forward {
        cnt: u16::MAX,
        nodelist: Some("ghost[0-59999]".into()),
        timeout: 60_000,
        tree_width: 1,
        net_cred: None,
        tree_depth: 0,
    };
    let (_, reply, took) = send(&c, ports["n1"], ProtocolVersion::V24_11, fwd).await;
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert_eq!(reply.header.ret_list.len(), 60_000);
    assert!(reply
        .header
        .ret_list
        .iter()
        .all(|e| e.err == SLURM_UNKNOWN_FORWARD_ADDR as u32));
    assert_eq!(seen.lock().unwrap().len(), 1);
}

/// Requests that get no reply (REQUEST_RECONFIGURE here) are relayed down
/// a TreeWidth=1 chain too: each node handles its copy, though the hop
/// above it does not wait for an answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reconfigure_goes_down_a_chain() {
    let m = munges(3);
    let c = m[0].auth_ctx();
    let v = ProtocolVersion::V24_11;
    let (seen, ports) = cluster(&m, &[]).await;
    let mut req = request_frame(
        &c,
        v,
        &Message::RequestReconfigure(slurm_wire::msg::common::Empty {}),
        Audience::Uid(0),
    )
    .unwrap();
    req.header.forward = Forward {
        cnt: 2,
        nodelist: Some("n[2-3]".into()),
        timeout: 5000,
        tree_width: 1,
        net_cred: None,
        tree_depth: 0,
    };
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", ports["n1"]))
        .await
        .unwrap();
    write_frame(&mut s, &req).await.unwrap();
    let raw = tokio::time::timeout(T, read_frame(&mut s))
        .await
        .expect("n1 answers within the timeout")
        .unwrap();
    let reply = Frame::decode(&raw).unwrap();
    let got = by_name(&reply.header.ret_list);
    assert_eq!(got.len(), 2, "{got:?}");
    // Delivered is all a hop reports; the handling follows.
    let all = Instant::now();
    let names = loop {
        let mut names: Vec<String> = seen
            .lock()
            .unwrap()
            .iter()
            .map(|(n, _)| n.clone())
            .collect();
        names.sort();
        if names.len() >= 3 || all.elapsed() > Duration::from_secs(20) {
            break names;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(names, ["n1", "n2", "n3"], "each node handled it once");
}
