//! Carries out [`Effect`]s: outbound RPCs to slurmd, each on its own task,
//! results reported back to the state machine ([`outcome::report`]), which
//! decides what they mean.

use crate::shared::Shared;
use crate::state::outcome::{self, Outcome};
use crate::state::{Effect, Outbound, Purpose};
use slurm_rpc::{call, request_frame, write_frame, AuthCtx, RpcError};
use slurm_wire::auth::{Audience, AuthError, AuthPlugin};
use slurm_wire::msg::cred::JobCred;
use slurm_wire::{Message, ProtocolVersion};
use std::sync::Arc;
use std::time::Duration;

/// How outbound RPCs are authenticated.
#[derive(Clone)]
pub struct Agent {
    pub ctx: AuthCtx,
    /// Requests to slurmd are restricted to SlurmdUser.
    pub slurmd_uid: u32,
    pub timeout: Duration,
}

/// Signs a job credential as stock does: munge over the packed fields,
/// decodable by anyone (slurmd and slurmstepd check the signer is SlurmUser).
pub fn sign_cred(
    plugin: &dyn AuthPlugin,
    cred: &mut JobCred,
    v: ProtocolVersion,
) -> Result<(), AuthError> {
    let bytes = cred.signed_bytes(v);
    cred.signature = Some(plugin.create(&bytes, Audience::Any)?);
    Ok(())
}

fn sign_all(
    plugin: &dyn AuthPlugin,
    msg: &mut Message,
    v: ProtocolVersion,
) -> Result<(), AuthError> {
    match msg {
        Message::RequestBatchJobLaunch(m) => {
            let cv = ProtocolVersion::from_wire(m.cred.cred_version).unwrap_or(v);
            sign_cred(plugin, &mut m.cred.cred, cv)
        }
        Message::RequestTerminateJob(m)
        | Message::RequestKillTimelimit(m)
        | Message::RequestAbortJob(m) => match m.cred.0.as_mut() {
            Some(c) => sign_cred(plugin, c, v),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

impl Agent {
    pub fn dispatch(&self, sh: &Arc<Shared>, effects: Vec<Effect>) {
        for e in effects {
            match e {
                Effect::Send(o) => {
                    let me = self.clone();
                    let sh = sh.clone();
                    tokio::spawn(async move {
                        let _busy = sh.stats.agent_message();
                        me.send(sh.clone(), *o).await
                    });
                }
            }
        }
    }

    async fn exchange(&self, o: &mut Outbound) -> Result<Message, RpcError> {
        let plugin = self.ctx.plugin.clone();
        let (mut msg, v) = (
            std::mem::replace(&mut o.msg, Message::RequestPing(Default::default())),
            o.version,
        );
        let msg = tokio::task::spawn_blocking(move || {
            sign_all(plugin.as_ref(), &mut msg, v).map(|_| msg)
        })
        .await
        .map_err(|e| RpcError::Io(std::io::Error::other(e)))??;
        let addr = tokio::net::lookup_host((o.addr.as_str(), o.port))
            .await?
            .next()
            .ok_or_else(|| {
                RpcError::Io(std::io::Error::other(format!("cannot resolve {}", o.addr)))
            })?;
        let (_, reply) = call(
            &self.ctx,
            addr,
            v,
            &msg,
            Audience::Uid(self.slurmd_uid),
            self.timeout,
        )
        .await?;
        Ok(reply)
    }

    async fn send(&self, sh: Arc<Shared>, mut o: Outbound) {
        if let Purpose::Srun { uid } = o.purpose {
            // A deferred grant: its group is named here, not in the state.
            if let Message::ResponseResourceAllocation(m) = &mut o.msg {
                crate::users::name_group(m);
            }
            return notify_srun(self, &o, uid).await;
        }
        let ty = o.msg.msg_type();
        let res = self.exchange(&mut o).await;
        tracing::debug!(node = o.node, version = %o.version, "{ty} -> {:?}", res.as_ref().map(|m| m.msg_type()));
        let outcome = match &res {
            Ok(m) => Outcome::Reply(m),
            Err(e) => {
                match o.purpose {
                    Purpose::Ping => tracing::warn!(node = o.node, "ping failed: {e}"),
                    Purpose::Launch { job_id } => {
                        tracing::error!(node = o.node, job_id, "batch launch failed: {e}")
                    }
                    Purpose::Terminate { job_id } => {
                        tracing::error!(node = o.node, job_id, "terminate failed: {e}")
                    }
                    _ => {}
                }
                Outcome::Failed
            }
        };
        if let Some(cmd) = outcome::report(&o.node, &o.purpose, outcome) {
            sh.exec(cmd).await;
        }
    }
}

/// Sends a message to srun: a deferred RESPONSE_RESOURCE_ALLOCATION
/// (srun answers it with an RC), or SRUN_JOB_COMPLETE (no answer).
async fn notify_srun(agent: &Agent, o: &Outbound, uid: u32) {
    let ty = o.msg.msg_type();
    if matches!(o.msg, Message::ResponseResourceAllocation(_)) {
        let res = async {
            let addr = tokio::net::lookup_host((o.addr.as_str(), o.port))
                .await?
                .next()
                .ok_or_else(|| std::io::Error::other(format!("cannot resolve {}", o.addr)))?;
            slurm_rpc::call(
                &agent.ctx,
                addr,
                o.version,
                &o.msg,
                Audience::Uid(uid),
                agent.timeout,
            )
            .await
        }
        .await;
        if let Err(e) = res {
            tracing::warn!("{ty} to srun at {}:{}: {e}", o.addr, o.port);
        }
        return;
    }
    let res = async {
        let f = request_frame(&agent.ctx, o.version, &o.msg, Audience::Uid(uid))?;
        let addr = tokio::net::lookup_host((o.addr.as_str(), o.port))
            .await?
            .next()
            .ok_or_else(|| std::io::Error::other(format!("cannot resolve {}", o.addr)))?;
        let mut s = tokio::time::timeout(agent.timeout, tokio::net::TcpStream::connect(addr))
            .await
            .map_err(|_| slurm_rpc::RpcError::Timeout)??;
        tokio::time::timeout(agent.timeout, write_frame(&mut s, &f))
            .await
            .map_err(|_| slurm_rpc::RpcError::Timeout)??;
        Ok::<_, slurm_rpc::RpcError>(())
    }
    .await;
    match res {
        Ok(()) => tracing::debug!("{ty} sent to {}:{}", o.addr, o.port),
        // srun may be gone already: not an error worth more than a note.
        Err(e) => tracing::info!("{ty} to {}:{} failed: {e}", o.addr, o.port),
    }
}
