//! The transport's leaf: its error type, who we are, and reading one
//! length-prefixed frame. The rest of the crate (the root, forwarding, the
//! pool) builds on these; this module names none of them.

use slurm_wire::auth::{AuthError, AuthPlugin, VerifyPolicy};
use slurm_wire::pack::MAX_MSG_SIZE;
use slurm_wire::{DecodeError, ProtocolVersion};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncReadExt};

/// Why an exchange failed.
#[derive(Debug, thiserror::Error)]
pub enum RpcError {
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    #[error("timed out")]
    Timeout,
    #[error("frame of {0} bytes exceeds the 1 GiB limit")]
    TooLarge(usize),
    #[error("malformed message: {0}")]
    Decode(#[from] DecodeError),
    #[error("authentication failed: {0}")]
    Auth(#[from] AuthError),
    #[error("message type {0} cannot be sent in protocol {1}")]
    NotInVersion(&'static str, ProtocolVersion),
    #[error("header and credential exceed the {0} bytes read before authentication")]
    PreAuthTooLarge(usize),
    #[error("closed for a newer connection: the server is full and this one sent no verified credential in time")]
    Evicted,
}

/// Who we are and how we check others.
#[derive(Clone)]
pub struct AuthCtx {
    pub plugin: Arc<dyn AuthPlugin>,
    /// SlurmUser: requests to slurmctld are restricted to it.
    pub slurm_user_uid: u32,
    pub policy: VerifyPolicy,
}

/// Reads one length-prefixed frame (without its prefix). The buffer grows
/// with the bytes that arrive, never to the declared length up front.
pub async fn read_frame<S: AsyncRead + Unpin>(s: &mut S) -> Result<Vec<u8>, RpcError> {
    let n = read_len(s).await?;
    let mut buf = Vec::new();
    fill_to(s, &mut buf, n).await?;
    Ok(buf)
}

/// A frame's length prefix, checked against upstream's 1 GiB cap.
pub(crate) async fn read_len<S: AsyncRead + Unpin>(s: &mut S) -> Result<usize, RpcError> {
    let n = s.read_u32().await? as usize;
    if n > MAX_MSG_SIZE {
        return Err(RpcError::TooLarge(n));
    }
    Ok(n)
}

/// The least a read buffer grows by.
const READ_CHUNK: usize = 16 << 10;

/// Reads until `buf` holds `want` bytes. Capacity at most doubles what has
/// arrived (plus `READ_CHUNK`), so a declared length costs nothing until
/// the bytes come.
pub(crate) async fn fill_to<S: AsyncRead + Unpin>(
    s: &mut S,
    buf: &mut Vec<u8>,
    want: usize,
) -> Result<(), RpcError> {
    while buf.len() < want {
        let left = want - buf.len();
        if buf.capacity() == buf.len() {
            buf.reserve_exact(left.min(buf.len().max(READ_CHUNK)));
        }
        let room = (buf.capacity() - buf.len()).min(left);
        let got = (&mut *s).take(room as u64).read_buf(buf).await?;
        if got == 0 {
            return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
        }
    }
    Ok(())
}
