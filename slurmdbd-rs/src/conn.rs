//! One persistent connection: the authenticated REQUEST_PERSIST_INIT and
//! its answer (the release both sides then speak), then framed DBD
//! messages answered in order until DBD_FINI or the client leaves.

use crate::db::Db;
use crate::dispatch::{self, Outcome};
use crate::session::{host_text, negotiate, Session};
use slurm_rpc::persist::{recv_msg, recv_opening};
use slurm_rpc::{AuthCtx, ConnGuard, ConnLimits, RpcError};
use slurm_wire::dbd::{persist, DbdMessage, DbdMsgType, PersistRcMsg};
use slurm_wire::errno::{SLURM_ERROR, SLURM_PROTOCOL_VERSION_ERROR};
use slurm_wire::{DecodeError, DecodeErrorKind, ProtocolVersion};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

/// How connections are served.
#[derive(Debug, Clone)]
pub struct ConnConf {
    /// Connections held, and the bytes and time the opening gets before
    /// its credential is verified.
    pub limits: ConnLimits,
    /// Bounds reading a message once it has begun, and writing a reply
    /// (MessageTimeout).
    pub timeout: Duration,
    /// The largest message accepted after the handshake.
    pub max_msg_bytes: usize,
}

impl Default for ConnConf {
    fn default() -> Self {
        ConnConf {
            limits: ConnLimits::default(),
            timeout: Duration::from_secs(10),
            max_msg_bytes: persist::MAX_PERSIST_MSG,
        }
    }
}

/// Why a connection ended other than by the client's choice.
#[derive(Debug, thiserror::Error)]
pub enum ConnError {
    #[error("{0}")]
    Rpc(#[from] RpcError),
    #[error("malformed message: {0}")]
    Decode(#[from] DecodeError),
    #[error("cannot encode the reply: {0}")]
    Encode(#[from] slurm_wire::dbd::EncodeError),
    #[error("refused a client of protocol {0:#06x}: older than 22.05")]
    TooOld(u16),
    #[error("refused the opening: {0}")]
    BadOpening(String),
}

impl ConnError {
    /// The peer closed before a whole opening arrived.
    pub fn is_early_close(&self) -> bool {
        matches!(self, ConnError::Rpc(RpcError::Io(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof)
    }
}

impl From<std::io::Error> for ConnError {
    fn from(e: std::io::Error) -> Self {
        ConnError::Rpc(RpcError::Io(e))
    }
}

/// The unsupported-version kind, whether the header or the init body said it.
fn too_old(e: &RpcError) -> Option<u16> {
    match e {
        RpcError::Decode(DecodeError {
            kind: DecodeErrorKind::UnsupportedVersion(v),
            ..
        }) => Some(*v),
        _ => None,
    }
}

/// Serves one connection from `peer` until it ends; `db` is the storage,
/// `None` where there is none (messages that need it are refused).
pub async fn serve<S: AsyncRead + AsyncWrite + Unpin>(
    ctx: &AuthCtx,
    conf: &ConnConf,
    db: Option<&Db>,
    peer: std::net::IpAddr,
    mut stream: S,
    mut guard: ConnGuard,
) -> Result<(), ConnError> {
    let session = match handshake(ctx, conf, peer, &mut stream, &mut guard).await {
        Ok(s) => s,
        Err(e) => {
            let refused = match &e {
                ConnError::Rpc(r) => too_old(r),
                ConnError::TooOld(v) => Some(*v),
                _ => None,
            };
            if let Some(v) = refused {
                // Told why, then closed: stock's client gives up on it.
                let m = opening_rc(
                    SLURM_PROTOCOL_VERSION_ERROR,
                    format!("protocol {v:#06x} is older than 22.05"),
                );
                let _ = write(&mut stream, &m, ProtocolVersion::OLDEST, conf.timeout).await;
                return Err(ConnError::TooOld(v));
            }
            return Err(e);
        }
    };
    tracing::debug!(
        uid = session.uid,
        cluster = session.cluster_name.as_deref().unwrap_or(""),
        version = %session.version,
        "persistent connection open"
    );
    loop {
        let Some(buf) = recv_msg(&mut stream, conf.max_msg_bytes, conf.timeout).await? else {
            return Ok(());
        };
        let raw = persist::split_payload(&buf)?;
        let v = session.version;
        let out = match DbdMessage::decode(v, raw) {
            Ok(msg) => dispatch::dispatch(&session, db, msg).await,
            Err(e) => match (e.kind.clone(), DbdMsgType::from_wire(v, raw.msg_type)) {
                (DecodeErrorKind::UnsupportedBody(..), Some(ty)) => {
                    dispatch::unsupported(&session, ty)
                }
                // The frame was whole, so the stream is still in step: answer
                // and go on, as stock does after a failed unpack.
                (_, ty) => {
                    tracing::warn!(uid = session.uid, "message {}: {e}", raw.msg_type);
                    let ty = ty.map_or("an unknown message", DbdMsgType::name);
                    let reply = DbdMessage::PersistRc(PersistRcMsg {
                        comment: Some(format!("cannot decode {ty}")),
                        flags: 0,
                        rc: SLURM_ERROR as u32,
                        ret_info: raw.msg_type,
                    });
                    Outcome {
                        reply,
                        close: false,
                    }
                }
            },
        };
        write(&mut stream, &out.reply, v, conf.timeout).await?;
        if out.close {
            return Ok(());
        }
    }
}

/// Reads, authenticates and answers the opening.
async fn handshake<S: AsyncRead + AsyncWrite + Unpin>(
    ctx: &AuthCtx,
    conf: &ConnConf,
    peer: std::net::IpAddr,
    stream: &mut S,
    guard: &mut ConnGuard,
) -> Result<Session, ConnError> {
    let opening = recv_opening(ctx, stream, &conf.limits, conf.timeout, guard).await?;
    let raw = persist::split_payload(&opening.payload)?;
    let init = match DbdMessage::decode(ProtocolVersion::NEWEST, raw) {
        Ok(DbdMessage::PersistInit(p)) => p,
        Ok(other) => {
            let why = format!(
                "the first message must be REQUEST_PERSIST_INIT, not {}",
                other.msg_type().name()
            );
            let m = opening_rc(nix::libc::EINVAL, why.clone());
            write(stream, &m, ProtocolVersion::OLDEST, conf.timeout).await?;
            return Err(ConnError::BadOpening(why));
        }
        Err(e) => match e.kind {
            DecodeErrorKind::UnsupportedVersion(v) => return Err(ConnError::TooOld(v)),
            _ => return Err(e.into()),
        },
    };
    if init.tls {
        // After 6501 the client expects TLS; we have none to offer.
        let why = "REQUEST_PERSIST_INIT_TLS: TLS is not supported".to_string();
        write(
            stream,
            &opening_rc(nix::libc::EINVAL, why.clone()),
            ProtocolVersion::OLDEST,
            conf.timeout,
        )
        .await?;
        return Err(ConnError::BadOpening(why));
    }
    let version = negotiate(init.req.version).ok_or(ConnError::TooOld(init.req.version))?;
    let session = Session {
        version,
        uid: opening.identity.uid,
        privileged: opening.identity.uid == 0 || opening.identity.uid == ctx.slurm_user_uid,
        slurm_user_uid: ctx.slurm_user_uid,
        cluster_name: init.req.cluster_name,
        persist_type: init.req.persist_type,
        peer_host: host_text(peer),
    };
    let ok = DbdMessage::PersistRc(PersistRcMsg {
        comment: None,
        flags: 0,
        rc: 0,
        ret_info: version.to_wire(),
    });
    write(stream, &ok, version, conf.timeout).await?;
    Ok(session)
}

/// A refusal of the opening: `ret_info` names REQUEST_PERSIST_INIT, as
/// stock's does (a client reads it as a version only on success).
fn opening_rc(rc: i32, comment: String) -> DbdMessage {
    DbdMessage::PersistRc(PersistRcMsg {
        comment: Some(comment),
        flags: 0,
        rc: rc as u32,
        ret_info: DbdMsgType::PersistInit
            .to_wire(ProtocolVersion::NEWEST)
            .unwrap_or(0),
    })
}

async fn write<S: AsyncWrite + Unpin>(
    s: &mut S,
    m: &DbdMessage,
    v: ProtocolVersion,
    timeout: Duration,
) -> Result<(), ConnError> {
    let bytes = m.encode(v)?;
    tokio::time::timeout(timeout, async {
        s.write_all(&bytes).await?;
        s.flush().await
    })
    .await
    .map_err(|_| RpcError::Timeout)??;
    Ok(())
}
