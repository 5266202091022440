//! Talking to slurmctld in a protocol version it accepts.
//!
//! Stock slurmd sends in its own version; we speak 22.05..26.05 and the
//! controller accepts only its own release and the three before it. So
//! the first exchange probes: newest version first, stepping down whenever
//! the controller rejects the message (SLURM_PROTOCOL_VERSION_ERROR, or it
//! closes the connection without a reply, which is what an older release
//! does with a header it cannot read). The first version answered is the
//! controller's own (the newest it accepts) and is kept until an exchange
//! in it fails that way again (controller upgraded or downgraded), which
//! restarts the probe. `--ctld-protocol` pins the version instead.

use slurm_rpc::{call, AuthCtx, RpcError};
use slurm_wire::auth::Audience;
use slurm_wire::errno::{SLURM_PROTOCOL_AUTHENTICATION_ERROR, SLURM_PROTOCOL_VERSION_ERROR};
use slurm_wire::{Message, ProtocolVersion};
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::Duration;

/// host:port of each SlurmctldHost in slurm.conf, primary first.
pub fn hosts_from_conf(conf: &slurm_conf::SlurmConf) -> Vec<String> {
    let port = conf.slurmctld_port.first;
    conf.slurmctld_hosts
        .iter()
        .map(|h| {
            let host = if h.addr.is_empty() {
                &h.hostname
            } else {
                &h.addr
            };
            format!("{host}:{port}")
        })
        .collect()
}

/// How one attempt ended, for the probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Answered,
    /// The controller refused this version: try an older one.
    VersionRejected,
    /// Nobody is listening, or it hangs: try the next controller.
    Unreachable,
}

pub fn classify(r: &Result<Message, RpcError>) -> Outcome {
    match r {
        // A 24.11 controller answers a header it cannot read with an
        // authentication error (it never got as far as the credential).
        Ok(Message::ResponseSlurmRc(rc))
            if matches!(
                rc.return_code as i32,
                SLURM_PROTOCOL_VERSION_ERROR | SLURM_PROTOCOL_AUTHENTICATION_ERROR
            ) =>
        {
            Outcome::VersionRejected
        }
        Ok(_) => Outcome::Answered,
        Err(RpcError::Io(e))
            if matches!(
                e.kind(),
                std::io::ErrorKind::ConnectionRefused
                    | std::io::ErrorKind::HostUnreachable
                    | std::io::ErrorKind::NetworkUnreachable
                    | std::io::ErrorKind::AddrNotAvailable
            ) =>
        {
            Outcome::Unreachable
        }
        Err(RpcError::Timeout) => Outcome::Unreachable,
        // EOF/reset, a reply we cannot read, or a message the version lacks.
        Err(_) => Outcome::VersionRejected,
    }
}

/// Versions to try, in order: the pinned one only, or the known one then
/// every release from newest to oldest.
pub fn candidates(
    pinned: Option<ProtocolVersion>,
    known: Option<ProtocolVersion>,
) -> Vec<ProtocolVersion> {
    if let Some(p) = pinned {
        return vec![p];
    }
    let mut v: Vec<ProtocolVersion> = known.into_iter().collect();
    v.extend(
        ProtocolVersion::ALL
            .iter()
            .rev()
            .filter(|x| Some(**x) != known),
    );
    v
}

#[derive(Debug, thiserror::Error)]
pub enum CtldError {
    #[error("no controller address could be resolved ({0})")]
    NoAddress(String),
    #[error("no controller answered: {0}")]
    Unreachable(String),
    #[error("the controller accepts none of our protocol versions (last error: {0})")]
    NoVersion(String),
}

/// The controller(s) of this cluster, as slurm.conf lists them.
pub struct Controller {
    pub auth: AuthCtx,
    /// host:port of each SlurmctldHost, primary first.
    pub hosts: Vec<String>,
    pub pinned: Option<ProtocolVersion>,
    pub timeout: Duration,
    known: Mutex<Option<ProtocolVersion>>,
}

impl Controller {
    pub fn new(
        auth: AuthCtx,
        hosts: Vec<String>,
        pinned: Option<ProtocolVersion>,
        timeout: Duration,
    ) -> Self {
        Controller {
            auth,
            hosts,
            pinned,
            timeout,
            known: Mutex::new(None),
        }
    }

    /// The version the controller last accepted.
    pub fn version(&self) -> Option<ProtocolVersion> {
        self.pinned
            .or_else(|| *self.known.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Sends `msg` and returns the reply and the version used.
    pub async fn rpc(&self, msg: &Message) -> Result<(Message, ProtocolVersion), CtldError> {
        self.rpc_with(|_| msg.clone()).await
    }

    /// As `rpc`, with the message built for each version tried (bodies
    /// that name the protocol version inside, like the GRES blob).
    pub async fn rpc_with(
        &self,
        make: impl Fn(ProtocolVersion) -> Message,
    ) -> Result<(Message, ProtocolVersion), CtldError> {
        let mut last = String::from("no controller configured");
        let mut any_reachable = false;
        for host in &self.hosts {
            let addrs: Vec<SocketAddr> = match tokio::net::lookup_host(host.as_str()).await {
                Ok(a) => a.collect(),
                Err(e) => {
                    last = format!("{host}: {e}");
                    continue;
                }
            };
            let Some(addr) = addrs.first().copied() else {
                last = format!("{host}: no address");
                continue;
            };
            for v in candidates(self.pinned, self.version()) {
                let msg = make(v);
                let r = call(
                    &self.auth,
                    addr,
                    v,
                    &msg,
                    Audience::Uid(self.auth.slurm_user_uid),
                    self.timeout,
                )
                .await
                .map(|(_, m)| m);
                match classify(&r) {
                    Outcome::Answered => {
                        let mut k = self.known.lock().unwrap_or_else(|e| e.into_inner());
                        if *k != Some(v) {
                            tracing::info!("controller {host} speaks protocol {v}");
                            *k = Some(v);
                        }
                        return r
                            .map(|m| (m, v))
                            .map_err(|e| CtldError::Unreachable(e.to_string()));
                    }
                    Outcome::VersionRejected => {
                        any_reachable = true;
                        last = format!("{host} in {v}: {}", describe(&r));
                        tracing::debug!("{last}");
                    }
                    Outcome::Unreachable => {
                        last = format!("{host}: {}", describe(&r));
                        break;
                    }
                }
            }
        }
        if any_reachable {
            Err(CtldError::NoVersion(last))
        } else {
            Err(CtldError::Unreachable(last))
        }
    }
}

/// `JOB_LAUNCH_FAILED` (slurm.h, bit 8 in every supported release): the
/// requeue is the node's, after a failed launch (prolog), not a user's.
pub const JOB_LAUNCH_FAILED: u32 = 1 << 8;
/// `KILL_ARRAY_TASK` (slurm.h): only this task of an array.
pub const KILL_ARRAY_TASK: u16 = 1 << 1;

/// What the controller made of a failed launch (see `launch_failed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaunchFailed {
    /// It requeued the job.
    Requeued,
    /// It refused the requeue (not requeueable), and we asked it to kill the job.
    Killed,
    /// It did not take the requeue request at all: report the failure
    /// some other way.
    NotHandled,
}

impl Controller {
    /// A batch launch failed here (a failing prolog): ask the controller to
    /// requeue the job (REQUEST_JOB_REQUEUE with JOB_LAUNCH_FAILED), and if
    /// the job cannot be requeued, to kill it (REQUEST_KILL_JOB, SIGKILL), as
    /// stock slurmd does.
    pub async fn launch_failed(&self, job_id: u32) -> LaunchFailed {
        use slurm_wire::errno;
        use slurm_wire::msg::job::{JobStepKillMsg, RequeueMsg};
        use slurm_wire::types::StepId;
        let req = Message::RequestJobRequeue(RequeueMsg {
            step_id: StepId::job(job_id),
            job_id_str: None,
            flags: JOB_LAUNCH_FAILED,
        });
        let rc = match self.rpc(&req).await {
            Ok((Message::ResponseSlurmRc(rc), _)) => rc.return_code as i32,
            Ok((other, _)) => {
                tracing::warn!("job {job_id}: requeue answered {}", other.msg_type());
                return LaunchFailed::NotHandled;
            }
            Err(e) => {
                tracing::warn!("job {job_id}: requeue after the failed launch: {e}");
                return LaunchFailed::NotHandled;
            }
        };
        if rc == 0 {
            tracing::info!("job {job_id}: requeued after the failed launch");
            return LaunchFailed::Requeued;
        }
        if rc != errno::ESLURM_DISABLED && rc != errno::ESLURM_BATCH_ONLY {
            tracing::warn!(
                "job {job_id}: requeue answered {}",
                errno::name(rc).unwrap_or("an error")
            );
            return LaunchFailed::NotHandled;
        }
        tracing::info!("could not launch job {job_id} and not able to requeue it, cancelling it");
        let kill = Message::RequestKillJob(JobStepKillMsg {
            step_id: StepId::job(job_id),
            sjob_id: Some(job_id.to_string()),
            sibling: None,
            signal: 9,
            flags: KILL_ARRAY_TASK,
        });
        match self.rpc(&kill).await {
            Ok((Message::ResponseSlurmRc(rc), _)) if rc.return_code == 0 => LaunchFailed::Killed,
            other => {
                tracing::warn!("job {job_id}: kill after the failed launch: {other:?}");
                LaunchFailed::NotHandled
            }
        }
    }

    /// REQUEST_COMPLETE_BATCH_SCRIPT, retried every 15 s until the
    /// controller answers (it may be down or restarting).
    pub async fn complete_batch(
        &self,
        node_name: &str,
        job_id: u32,
        uid: u32,
        job_rc: u32,
        slurm_rc: i32,
    ) {
        use slurm_wire::errno;
        use slurm_wire::msg::step::CompleteBatchScriptMsg;
        use slurm_wire::types::StepId;
        let msg = Message::RequestCompleteBatchScript(CompleteBatchScriptMsg {
            step_id: StepId {
                sluid: 0,
                job_id,
                step_id: StepId::BATCH_SCRIPT,
                step_het_comp: slurm_wire::pack::NO_VAL,
            },
            job_rc,
            slurm_rc: slurm_rc as u32,
            user_id: uid,
            node_name: Some(node_name.to_string()),
            ..Default::default()
        });
        loop {
            match self.rpc(&msg).await {
                Ok((Message::ResponseSlurmRc(rc), _)) => {
                    let rc = rc.return_code as i32;
                    if rc != 0
                        && rc != errno::ESLURM_ALREADY_DONE
                        && rc != errno::ESLURM_INVALID_JOB_ID
                    {
                        tracing::warn!(
                            "job {job_id}: completion answered {}",
                            errno::name(rc).unwrap_or("error")
                        );
                    }
                    return;
                }
                Ok((other, _)) => {
                    tracing::warn!("job {job_id}: completion answered {}", other.msg_type());
                    return;
                }
                Err(e) => {
                    tracing::info!("retrying job {job_id} completion in 15s: {e}");
                    tokio::time::sleep(Duration::from_secs(15)).await;
                }
            }
        }
    }
}

fn describe(r: &Result<Message, RpcError>) -> String {
    match r {
        Ok(m) => format!("{m:?}"),
        Err(e) => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slurm_wire::msg::common::ReturnCodeMsg;

    #[test]
    fn probe_order() {
        let all = candidates(None, None);
        assert_eq!(all.first(), Some(&ProtocolVersion::NEWEST));
        assert_eq!(all.last(), Some(&ProtocolVersion::OLDEST));
        assert_eq!(all.len(), ProtocolVersion::ALL.len());
        let k = candidates(None, Some(ProtocolVersion::V24_11));
        assert_eq!(k[0], ProtocolVersion::V24_11);
        assert_eq!(k.len(), ProtocolVersion::ALL.len());
        assert_eq!(
            candidates(Some(ProtocolVersion::V22_05), Some(ProtocolVersion::V24_11)),
            vec![ProtocolVersion::V22_05]
        );
    }

    #[test]
    fn outcomes() {
        let rc = |c: i32| {
            Ok(Message::ResponseSlurmRc(ReturnCodeMsg {
                return_code: c as u32,
            }))
        };
        assert_eq!(classify(&rc(0)), Outcome::Answered);
        assert_eq!(classify(&rc(2010)), Outcome::Answered);
        assert_eq!(
            classify(&rc(SLURM_PROTOCOL_VERSION_ERROR)),
            Outcome::VersionRejected
        );
        assert_eq!(
            classify(&rc(SLURM_PROTOCOL_AUTHENTICATION_ERROR)),
            Outcome::VersionRejected
        );
        let io = |k| Err(RpcError::Io(std::io::Error::from(k)));
        assert_eq!(
            classify(&io(std::io::ErrorKind::UnexpectedEof)),
            Outcome::VersionRejected
        );
        assert_eq!(
            classify(&io(std::io::ErrorKind::ConnectionReset)),
            Outcome::VersionRejected
        );
        assert_eq!(
            classify(&io(std::io::ErrorKind::ConnectionRefused)),
            Outcome::Unreachable
        );
        assert_eq!(classify(&Err(RpcError::Timeout)), Outcome::Unreachable);
    }
}
