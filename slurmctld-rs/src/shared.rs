//! What the daemon shell, the request handlers and the agent share: the
//! published snapshot, the actor's command queue and the daemon's control
//! channel. A leaf of the shell: it names none of the modules that use it.

use crate::state::error::StateError;
use crate::state::{Command, Controller, Reply};
use arc_swap::ArcSwap;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// What the daemon should do besides replying.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    Shutdown,
    /// `scontrol shutdown` without options: every slurmd stops too.
    ShutdownAll,
    Reconfigure,
}

/// A command for the actor and where its reply goes.
pub(crate) type Request = (Command, oneshot::Sender<Reply>);

/// What request handlers and the agent share.
pub struct Shared {
    snap: ArcSwap<Controller>,
    tx: mpsc::Sender<Request>,
    ctl: mpsc::UnboundedSender<Control>,
    pub slurm_user_name: String,
    /// Signs job credentials (step creation).
    pub plugin: Arc<dyn slurm_wire::auth::AuthPlugin>,
    /// sdiag counters.
    pub stats: crate::stats::Stats,
    /// Encoded large replies of the current snapshot.
    pub replies: crate::reply_cache::ReplyCache,
}

impl Shared {
    /// `first` is published as the snapshot until the actor publishes another.
    pub(crate) fn new(
        first: Controller,
        tx: mpsc::Sender<Request>,
        ctl: mpsc::UnboundedSender<Control>,
        slurm_user_name: String,
        plugin: Arc<dyn slurm_wire::auth::AuthPlugin>,
        stats: crate::stats::Stats,
    ) -> Shared {
        Shared {
            snap: ArcSwap::from_pointee(first),
            tx,
            ctl,
            slurm_user_name,
            plugin,
            stats,
            replies: Default::default(),
        }
    }

    pub fn snapshot(&self) -> Arc<Controller> {
        self.snap.load_full()
    }

    /// Publishes the state read RPCs see from now on.
    pub(crate) fn publish(&self, c: Arc<Controller>) {
        self.snap.store(c);
    }

    /// Runs a command through the actor and waits for its reply.
    pub async fn exec(&self, cmd: Command) -> Reply {
        let (tx, rx) = oneshot::channel();
        if self.tx.send((cmd, tx)).await.is_err() {
            return Reply::Err(StateError::Unspecified);
        }
        rx.await.unwrap_or(Reply::Err(StateError::Unspecified))
    }

    pub fn control(&self, c: Control) {
        let _ = self.ctl.send(c);
    }
}

/// Seconds since the epoch: the time every command is applied at.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}
