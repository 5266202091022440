//! What the server tests share: stock's opening bytes and reading replies.
#![allow(dead_code)]

pub mod db;

use slurm_wire::auth::{sign_body, Audience, AuthPlugin};
use slurm_wire::dbd::body::persist_type;
use slurm_wire::dbd::{DbdMessage, PersistInit, PersistInitReqMsg, PersistRcMsg};
use slurm_wire::ProtocolVersion as V;
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

pub const WAIT: Duration = Duration::from_secs(10);
pub const EINVAL: u32 = 22;
pub const DBD_FINI: u16 = 1401;
pub const PERSIST_INIT: u16 = 6500;
/// A release after ours, as a future client would send it.
pub const V26_11: u16 = 0x2E00;

/// REQUEST_PERSIST_INIT as stock's client sends it: `sent` in the body,
/// the header in `header` (a number of any release), signed by `plugin`.
pub fn init_bytes(plugin: &dyn AuthPlugin, header: u16, sent: u16) -> Vec<u8> {
    let req = PersistInitReqMsg {
        version: sent,
        cluster_name: Some("c1".into()),
        persist_type: persist_type::DBD,
        port: 6817,
    };
    let v = V::from_wire(header).unwrap_or(V::NEWEST);
    let p = PersistInit::new(v, false, req);
    let blob = sign_body(plugin, PERSIST_INIT, &p.frame.body, Audience::Any).unwrap();
    let mut b = DbdMessage::PersistInit(p.with_auth(blob))
        .encode(v)
        .unwrap();
    // u32 length | u16 type | u16 header version: the credential does not
    // cover it, so any number can stand there.
    b[6..8].copy_from_slice(&header.to_be_bytes());
    b
}

/// The next message, or `None` once the server has closed.
pub async fn recv(s: &mut TcpStream, v: V) -> Option<DbdMessage> {
    let mut len = [0u8; 4];
    match tokio::time::timeout(WAIT, s.read_exact(&mut len)).await {
        Ok(Ok(_)) => {}
        Ok(Err(_)) => return None,
        Err(_) => panic!("no answer and no close within {WAIT:?}"),
    }
    let n = u32::from_be_bytes(len) as usize;
    let mut b = len.to_vec();
    b.resize(4 + n, 0);
    tokio::time::timeout(WAIT, s.read_exact(&mut b[4..]))
        .await
        .unwrap()
        .unwrap();
    Some(DbdMessage::decode_framed(v, &b).unwrap())
}

pub async fn rc(s: &mut TcpStream, v: V) -> PersistRcMsg {
    match recv(s, v).await {
        Some(DbdMessage::PersistRc(m)) => m,
        other => panic!("expected SLURM_PERSIST_RC, got {other:?}"),
    }
}

pub async fn closed(s: &mut TcpStream) -> bool {
    let mut b = [0u8; 1];
    matches!(
        tokio::time::timeout(WAIT, s.read(&mut b)).await,
        Ok(Ok(0)) | Ok(Err(_))
    )
}
