//! Admission of connections: a cap on how many a server holds, and who
//! gives way when it is full. Connections that have not yet proved a
//! credential give way, oldest first; those in service never do.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{oneshot, OwnedSemaphorePermit, Semaphore};

/// Limits on the connections one server holds, before and after
/// authentication.
#[derive(Debug, Clone)]
pub struct ConnLimits {
    /// Connections held at once (stock: `conmgr_max_connections`, 50 in
    /// 24.11, 512 for slurmctld in 26.05). Beyond it a new connection
    /// waits in the listen backlog, unless one still unauthenticated is
    /// old enough to be closed for it.
    pub max_connections: usize,
    /// Deadline for the length prefix, header and credential, verified
    /// (stock: `conmgr_read_timeout`, default MessageTimeout). `None`: the
    /// serve timeout, which also bounds the whole request.
    pub header_timeout: Option<Duration>,
    /// Bytes read of a frame before its credential is verified: the
    /// header and credential must fit in them. Stock reads the whole
    /// frame, up to 1 GiB, first. 1 MiB because a 23.11+ forward header
    /// carries a credential with the address of every node to relay to.
    pub pre_auth_bytes: usize,
    /// A full server closes its oldest unauthenticated connection once
    /// it is this old, to admit a new one. A client sends its request
    /// right after connecting; one this slow is idle or hostile.
    pub evict_after: Duration,
}

impl Default for ConnLimits {
    fn default() -> Self {
        ConnLimits {
            max_connections: 512,
            header_timeout: None,
            pre_auth_bytes: 1 << 20,
            evict_after: Duration::from_millis(200),
        }
    }
}

/// Connections not yet authenticated, oldest first (ids only grow).
#[derive(Default)]
struct Waiting {
    next: u64,
    conns: BTreeMap<u64, (Instant, oneshot::Sender<()>)>,
}

/// One server's connection slots.
pub(crate) struct Admission {
    slots: Arc<Semaphore>,
    waiting: Arc<Mutex<Waiting>>,
    evict_after: Duration,
}

fn lock(w: &Mutex<Waiting>) -> std::sync::MutexGuard<'_, Waiting> {
    w.lock().unwrap_or_else(|e| e.into_inner())
}

impl Admission {
    pub(crate) fn new(l: &ConnLimits) -> Self {
        Admission {
            slots: Arc::new(Semaphore::new(l.max_connections.max(1))),
            waiting: Arc::default(),
            evict_after: l.evict_after,
        }
    }

    /// A slot for a connection just accepted: a free one, else the one of
    /// the oldest unauthenticated connection once it is `evict_after` old,
    /// else the first to be freed.
    pub(crate) async fn admit(&self) -> ConnGuard {
        loop {
            if let Ok(p) = self.slots.clone().try_acquire_owned() {
                return self.guard(p);
            }
            let oldest = lock(&self.waiting)
                .conns
                .first_key_value()
                .map(|(_, (t, _))| *t);
            let free = self.slots.clone().acquire_owned();
            match oldest {
                Some(t) if t.elapsed() >= self.evict_after => {
                    if let Some((_, (_, tx))) = lock(&self.waiting).conns.pop_first() {
                        // Its task ends at once and frees its slot.
                        let _ = tx.send(());
                    }
                    if let Ok(p) = free.await {
                        return self.guard(p);
                    }
                }
                Some(t) => {
                    tokio::select! {
                        p = free => if let Ok(p) = p { return self.guard(p) },
                        _ = tokio::time::sleep_until((t + self.evict_after).into()) => {}
                    }
                }
                // All in service: the new one waits for one of them.
                None => {
                    if let Ok(p) = free.await {
                        return self.guard(p);
                    }
                }
            }
        }
    }

    fn guard(&self, permit: OwnedSemaphorePermit) -> ConnGuard {
        let (tx, rx) = oneshot::channel();
        let mut w = lock(&self.waiting);
        let id = w.next;
        w.next += 1;
        w.conns.insert(id, (Instant::now(), tx));
        ConnGuard {
            _permit: permit,
            id,
            waiting: self.waiting.clone(),
            evicted: Some(rx),
        }
    }
}

/// A connection's slot; it is freed on drop.
pub struct ConnGuard {
    _permit: OwnedSemaphorePermit,
    id: u64,
    waiting: Arc<Mutex<Waiting>>,
    evicted: Option<oneshot::Receiver<()>>,
}

impl ConnGuard {
    /// Resolves when the server closes this connection for a newer one
    /// (only before [`ConnGuard::in_service`]).
    pub(crate) async fn evicted(&mut self) {
        match self.evicted.as_mut() {
            Some(rx) => {
                let _ = rx.await;
            }
            None => std::future::pending().await,
        }
    }

    /// Authenticated: never evicted from now on. False if it was evicted
    /// meanwhile.
    pub(crate) fn in_service(&mut self) -> bool {
        self.evicted = None;
        lock(&self.waiting).conns.remove(&self.id).is_some()
    }
}

impl Drop for ConnGuard {
    fn drop(&mut self) {
        lock(&self.waiting).conns.remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(n: usize, evict_ms: u64) -> ConnLimits {
        ConnLimits {
            max_connections: n,
            evict_after: Duration::from_millis(evict_ms),
            ..ConnLimits::default()
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_server_evicts_the_oldest_unauthenticated_only() {
        let a = Admission::new(&limits(2, 100));
        let mut served = a.admit().await;
        assert!(served.in_service());
        let mut idle = a.admit().await;
        // Full: the idle one is evicted once old enough, for the newcomer.
        let t0 = tokio::time::Instant::now();
        let (newcomer, ()) = tokio::join!(a.admit(), async {
            idle.evicted().await;
            drop(idle);
        });
        assert!(t0.elapsed() >= Duration::from_millis(100));
        let mut newcomer = newcomer;
        assert!(newcomer.in_service());
        // Both in service: a third waits until one ends.
        let third = tokio::time::timeout(Duration::from_secs(60), a.admit()).await;
        assert!(third.is_err(), "no slot while both are in service");
        drop(served);
        let _third = a.admit().await;
        drop(newcomer);
    }
}
