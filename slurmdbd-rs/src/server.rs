//! The listener: one task per connection, at most `max_connections` at
//! once (rpc's admission: a connection not yet authenticated gives way).

use crate::conn::{self, ConnConf};
use crate::db::Db;
use slurm_rpc::AuthCtx;
use std::sync::Arc;

/// Serves persistent connections on `listener` forever, storing in `db`
/// (`None`: no storage, its messages refused).
pub async fn serve(
    listener: tokio::net::TcpListener,
    ctx: AuthCtx,
    conf: ConnConf,
    db: Option<Db>,
) -> std::io::Result<()> {
    let limits = conf.limits.clone();
    let shared = Arc::new((ctx, conf, db));
    slurm_rpc::accept_loop(listener, &limits, move |stream, peer, guard| {
        let shared = shared.clone();
        async move {
            let (ctx, conf, db) = &*shared;
            match conn::serve(ctx, conf, db.as_ref(), peer.ip(), stream, guard).await {
                Ok(()) => {}
                // Connected and left without a message: a probe, or a
                // client whose own munge failed.
                Err(e) if e.is_early_close() => tracing::debug!(%peer, "{e}"),
                Err(e) => tracing::warn!(%peer, "{e}"),
            }
        }
    })
    .await
}
