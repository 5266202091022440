//! slurmd-rs relays a forwarded request to the other nodes of its header's
//! list, found through slurm.conf, and answers with their replies in its
//! ret_list -- as a stock controller sending over TreeWidth expects.
//! Needs root and munged.

mod common;

use common::*;
use slurm_rpc::{read_frame, request_frame, write_frame, AuthCtx, Incoming};
use slurm_wire::auth::{Audience, VerifyPolicy};
use slurm_wire::errno::SLURM_COMMUNICATIONS_CONNECTION_ERROR;
use slurm_wire::header::Forward;
use slurm_wire::msg::common::{Empty, ReturnCodeMsg};
use slurm_wire::{Frame, Message, ProtocolVersion as V};
use std::sync::{Arc, Mutex};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forwarded_ping_reaches_the_other_nodes_and_their_replies_come_back() {
    require_prerequisites();
    let v = V::V24_11;
    // t2: a node of our own, with its own munged (same key) as on a real
    // cluster; t3: configured, but nothing listens there.
    let t2 = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let t2_port = t2.local_addr().unwrap().port();
    let dead = free_port();
    let node = Node::new(
        &format!(
            "NodeName=t2 NodeAddr=127.0.0.1 CPUs=1 Port={t2_port}\n\
             NodeName=t3 NodeAddr=127.0.0.1 CPUs=1 Port={dead}"
        ),
        None,
        "fwd",
    )
    .await;
    let t2_munged = node.munged.sibling();
    let t2_ctx = AuthCtx {
        plugin: Arc::new(t2_munged.auth()),
        slurm_user_uid: 0,
        policy: VerifyPolicy::default(),
    };
    let got: Arc<Mutex<Vec<Frame>>> = Arc::default();
    let seen = got.clone();
    tokio::spawn(slurm_rpc::serve(t2, t2_ctx, T, move |req: Incoming| {
        let seen = seen.clone();
        async move {
            seen.lock().unwrap().push(req.frame);
            Some(slurm_rpc::rc_message(42))
        }
    }));

    let _d = node.start(v);
    let Message::MessageNodeRegistrationStatus(_) = node.receive(v).await else {
        panic!("expected the first registration");
    };

    let mut req =
        request_frame(&node.ctx, v, &Message::RequestPing(Empty {}), Audience::Any).unwrap();
    req.header.forward = Forward {
        cnt: 2,
        nodelist: Some("t[2-3]".into()),
        timeout: 2000,
        tree_width: 16,
        net_cred: None,
        tree_depth: 1,
    };
    let mut s = tokio::net::TcpStream::connect(node.addr()).await.unwrap();
    write_frame(&mut s, &req).await.unwrap();
    let raw = tokio::time::timeout(T, read_frame(&mut s))
        .await
        .expect("t1 answers within the timeout")
        .unwrap();
    let reply = Frame::decode(&raw).unwrap();
    assert!(
        matches!(
            reply.message().unwrap(),
            Message::ResponsePingSlurmd(_) | Message::ResponseSlurmRc(_)
        ),
        "t1 answers its own ping"
    );
    let mut entries: Vec<(String, u32, Message)> = reply
        .header
        .ret_list
        .iter()
        .map(|e| {
            (
                e.node_name.clone().unwrap_or_default(),
                e.err,
                e.body.clone(),
            )
        })
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        entries,
        [
            (
                "t2".to_string(),
                0,
                Message::ResponseSlurmRc(ReturnCodeMsg { return_code: 42 })
            ),
            (
                "t3".to_string(),
                SLURM_COMMUNICATIONS_CONNECTION_ERROR as u32,
                Message::ResponseForwardFailed(Empty {})
            ),
        ]
    );
    let got = got.lock().unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].auth, req.auth, "the original credential");
    assert_eq!(got[0].body, req.body, "the original body");
    assert_eq!(got[0].header.forward.cnt, 0, "t2 is a leaf");
}

/// A stock controller sends REQUEST_RECONFIGURE to each node itself (its
/// agent never splits it into a tree) and reads no reply; a sender that
/// does forward it, under TreeWidth=1, still gets it to the rest of the
/// list, an answer within the time it gave, and the node re-registers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forwarded_reconfigure_is_relayed_answered_and_re_registers() {
    require_prerequisites();
    let v = V::V24_11;
    let t2 = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let t2_port = t2.local_addr().unwrap().port();
    let node = Node::new(
        &format!("NodeName=t2 NodeAddr=127.0.0.1 CPUs=1 Port={t2_port}"),
        None,
        "fwd_reconf",
    )
    .await;
    // Kept: t2's munged lives as long as the test.
    let t2_munged = node.munged.sibling();
    let t2_ctx = AuthCtx {
        plugin: Arc::new(t2_munged.auth()),
        slurm_user_uid: 0,
        policy: VerifyPolicy::default(),
    };
    let got: Arc<Mutex<Vec<Frame>>> = Arc::default();
    let seen = got.clone();
    tokio::spawn(slurm_rpc::serve(t2, t2_ctx, T, move |req: Incoming| {
        let seen = seen.clone();
        async move {
            seen.lock().unwrap().push(req.frame);
            Some(slurm_rpc::rc_message(0))
        }
    }));
    let _d = node.start(v);
    let Message::MessageNodeRegistrationStatus(_) = node.receive(v).await else {
        panic!("expected the first registration");
    };

    let mut req = request_frame(
        &node.ctx,
        v,
        &Message::RequestReconfigure(Empty {}),
        Audience::Any,
    )
    .unwrap();
    req.header.forward = Forward {
        cnt: 1,
        nodelist: Some("t2".into()),
        timeout: 2000,
        tree_width: 1,
        net_cred: None,
        tree_depth: 1,
    };
    let mut s = tokio::net::TcpStream::connect(node.addr()).await.unwrap();
    write_frame(&mut s, &req).await.unwrap();
    let raw = tokio::time::timeout(T, read_frame(&mut s))
        .await
        .expect("t1 answers within the timeout")
        .unwrap();
    let reply = Frame::decode(&raw).unwrap();
    let names: Vec<_> = reply
        .header
        .ret_list
        .iter()
        .map(|e| (e.node_name.clone().unwrap_or_default(), e.err))
        .collect();
    assert_eq!(names, [("t2".to_string(), 0)], "t2 reached");
    // No reply comes to a reconfigure: delivered is what t1 reports, and
    // t2 handles it a moment later.
    for _ in 0..200 {
        if !got.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    {
        let got = got.lock().unwrap();
        assert_eq!(got.len(), 1, "t2 got the reconfigure once");
        assert_eq!(got[0].header.forward.cnt, 0, "t2 is a leaf");
        assert_eq!(got[0].body, req.body);
        assert_eq!(got[0].auth, req.auth, "the original credential");
    }
    let Message::MessageNodeRegistrationStatus(_) = node.receive(v).await else {
        panic!("expected a registration after the reconfigure");
    };
}

/// Several slurmd-rs -N on one host log apart: `%n` in SlurmdLogFile is the
/// node's name, as stock expands it (the first `%n` only).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slurmd_log_file_names_the_node() {
    require_prerequisites();
    let v = V::V24_11;
    let dir = tempfile::tempdir().unwrap();
    let pattern = dir.path().join("slurmd-%n.%n.log");
    let node = Node::new(
        &format!("SlurmdLogFile={}", pattern.display()),
        None,
        "logn",
    )
    .await;
    let _d = Daemon(node.command(v).spawn().unwrap());
    let Message::MessageNodeRegistrationStatus(_) = node.receive(v).await else {
        panic!("expected the first registration");
    };
    let expanded = dir.path().join("slurmd-t1.%n.log");
    let log = std::fs::read_to_string(&expanded)
        .unwrap_or_else(|e| panic!("{}: {e}", expanded.display()));
    assert!(!log.is_empty(), "the node's log is empty");
    assert!(!pattern.exists(), "{} was created", pattern.display());
}
