//! Credential work (libmunge: a blocking round trip to munged) on the
//! blocking pool, a few at a time, so that a slow munged never holds an
//! async worker.

use crate::base::RpcError;
use tokio::sync::Semaphore;

/// How many credential calls run at once. munged serves a few at a time
/// itself (2 threads by default); the rest wait asleep, off the workers.
pub const AUTH_CALLS: usize = 8;
static AUTH_SLOTS: Semaphore = Semaphore::const_new(AUTH_CALLS);

/// Runs `f` (a credential encode or decode) on the blocking pool once one
/// of `AUTH_CALLS` slots is free. A caller that gives up (a deadline)
/// leaves the call to finish; its slot is held until it does, so a hung
/// munged cannot pile up threads.
pub async fn auth_call<R: Send + 'static>(
    f: impl FnOnce() -> R + Send + 'static,
) -> Result<R, RpcError> {
    let slot = AUTH_SLOTS
        .acquire()
        .await
        .map_err(|_| RpcError::Io(std::io::Error::other("credential pool closed")))?;
    tokio::task::spawn_blocking(move || {
        let _slot = slot;
        f()
    })
    .await
    .map_err(|e| RpcError::Io(std::io::Error::other(format!("credential call: {e}"))))
}
