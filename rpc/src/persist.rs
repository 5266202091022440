//! Persistent connections (slurmdbd's; also federation's in stock): one
//! authenticated opening message, then `u32 length | u16 type | body`
//! frames both ways with no credential. The opening is read as requests
//! are, within the same limits before its credential is verified.

use crate::base::{fill_to, RpcError};
use crate::{read_request, AuthCtx, ConnGuard, ConnLimits, Opening, Received};
use slurm_wire::auth::Identity;
use slurm_wire::Header;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};

/// The opening message, its credential verified.
#[derive(Debug)]
pub struct PersistOpening {
    /// What followed the length prefix: `u16 type | header | credential |
    /// body`, a header newer than ours rewritten to our newest release.
    pub payload: Vec<u8>,
    pub header: Header,
    /// From the credential.
    pub identity: Identity,
    /// The header's version as sent, when newer than ours.
    pub sent_version: Option<u16>,
}

/// Reads and authenticates the opening message: all of it within
/// `limits.pre_auth_bytes`, the prefix, type, header and credential within
/// `limits.header_timeout` (else `timeout`), the rest within `timeout`. The guard
/// lets a full server close this connection until the credential checks
/// out.
pub async fn recv_opening<S: AsyncRead + Unpin>(
    ctx: &AuthCtx,
    s: &mut S,
    limits: &ConnLimits,
    timeout: Duration,
    guard: &mut ConnGuard,
) -> Result<PersistOpening, RpcError> {
    let start = tokio::time::Instant::now();
    let header_deadline = start + limits.header_timeout.unwrap_or(timeout).min(timeout);
    let Received {
        frame,
        identity,
        mut raw,
        sent_version,
        ..
    } = read_request(
        ctx,
        s,
        limits.pre_auth_bytes,
        header_deadline,
        start + timeout,
        Some(guard),
        Opening::Persist,
    )
    .await?;
    raw.shrink_to_fit();
    Ok(PersistOpening {
        payload: raw,
        header: frame.header,
        identity,
        sent_version,
    })
}

/// The next message after the opening, without its length prefix (so
/// `u16 type | body`). Waits as long as it takes for the prefix (an idle
/// connection is normal), then `timeout` for the rest; a length outside
/// `2..=limit` is refused before anything is buffered, and the buffer
/// grows only with the bytes that arrive. `None` at a clean end of file.
pub async fn recv_msg<S: AsyncRead + Unpin>(
    s: &mut S,
    limit: usize,
    timeout: Duration,
) -> Result<Option<Vec<u8>>, RpcError> {
    let mut prefix = [0u8; 4];
    match s.read_exact(&mut prefix).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e.into()),
    }
    let total = slurm_wire::dbd::persist::frame_len_limited(&prefix, limit)?
        .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))?;
    let mut buf = Vec::new();
    tokio::time::timeout(timeout, fill_to(s, &mut buf, total - prefix.len()))
        .await
        .map_err(|_| RpcError::Timeout)??;
    Ok(Some(buf))
}
