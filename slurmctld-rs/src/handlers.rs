//! One function per RPC: decode -> command (or snapshot read) -> reply.

use crate::build_info::build_info;
use crate::private_data::PrivateData;
use crate::reply_cache::{Key, Query};
use crate::shared::{now, Control, Shared};
use crate::state::{Command, Reply};
use crate::users::lookup_user;
use crate::views;
use crate::visibility::Visible;
use slurm_rpc::{rc_message, Incoming, Outgoing};
use slurm_wire::errno::*;
use slurm_wire::msg::job::SubmitResponseMsg;
use slurm_wire::msg::stats::STAT_COMMAND_RESET;
use slurm_wire::pack::NO_VAL;
use slurm_wire::types::StepId;
use slurm_wire::Message;
use std::sync::Arc;
use std::time::Instant;

/// Handles one authenticated request; None for one-way messages. Counts
/// it for sdiag once answered.
pub async fn handle(sh: Arc<Shared>, req: Incoming) -> Option<Outgoing> {
    let (ty, uid, started) = (req.msg.msg_type(), req.identity.uid, Instant::now());
    let _busy = sh.stats.server_thread();
    let reply = match listing(&sh, req).await {
        Ok(r) => Some(r),
        Err(req) => match ops_request(&sh, req).await {
            Ok(r) => Some(r.into()),
            Err(req) => handle_one(sh.clone(), req).await.map(Outgoing::from),
        },
    };
    sh.stats.rpc(ty, uid, started.elapsed());
    reply
}

/// `(last_update - 1) >= changed`: the client's copy is current, as stock
/// tests it before answering SLURM_NO_CHANGE_IN_DATA.
fn unchanged(last_update: i64, changed: i64) -> bool {
    last_update.saturating_sub(1) >= changed
}

/// The large listings (all jobs, a user's jobs, all nodes, partitions):
/// unchanged data is answered as stock does, the rest from the reply cache,
/// built off the async workers. Other requests come back.
async fn listing(sh: &Arc<Shared>, req: Incoming) -> Result<Outgoing, Incoming> {
    let version = req.version();
    let snap = sh.snapshot();
    let (uid, gid) = (req.identity.uid, req.identity.gid);
    let privacy = Privacy::of(&snap, uid);
    let (query, show_flags) = match &req.msg {
        Message::RequestJobInfo(m) => {
            if unchanged(m.last_update, snap.last_job_update) {
                return Ok(rc_message(SLURM_NO_CHANGE_IN_DATA).into());
            }
            if m.job_ids.is_some() {
                // A few named jobs: cheap, built here.
                return Err(req);
            }
            (
                Query::Jobs {
                    user: privacy.own_jobs_only(),
                },
                m.show_flags,
            )
        }
        Message::RequestJobUserInfo(m) => {
            if privacy.own_jobs_only().is_some_and(|me| me != m.user_id) {
                // Someone else's jobs: none of them may be seen.
                let none = views::job_info_msg(&snap, Some(&[]), None, m.show_flags, version);
                return Ok(Message::ResponseJobInfo(none).into());
            }
            (
                Query::Jobs {
                    user: Some(m.user_id),
                },
                m.show_flags,
            )
        }
        Message::RequestNodeInfo(m) => {
            if !privacy.nodes() {
                return Ok(privacy.refuse("REQUEST_NODE_INFO").into());
            }
            if unchanged(m.last_update, snap.last_node_update) {
                return Ok(rc_message(SLURM_NO_CHANGE_IN_DATA).into());
            }
            (Query::Nodes, m.show_flags)
        }
        Message::RequestPartitionInfo(m) => {
            if !privacy.partitions() {
                return Ok(privacy.refuse("REQUEST_PARTITION_INFO").into());
            }
            if unchanged(m.last_update, snap.last_part_update) {
                return Ok(rc_message(SLURM_NO_CHANGE_IN_DATA).into());
            }
            (Query::Partitions, m.show_flags)
        }
        _ => return Err(req),
    };
    let key = Key {
        query,
        version,
        show_flags,
        visible: Visible::of(&snap.conf, uid, show_flags, || lookup_user(uid, gid)),
    };
    Ok(match sh.replies.get(&snap, &key).await {
        Ok(body) => Outgoing::Encoded {
            msg_type: key.msg_type(),
            body,
        },
        Err(e) => {
            tracing::error!("{e}");
            rc_message(SLURM_ERROR).into()
        }
    })
}

/// sdiag and partition administration; other requests come back.
async fn ops_request(sh: &Arc<Shared>, req: Incoming) -> Result<Message, Incoming> {
    let (uid, v) = (req.identity.uid, req.version());
    match req.msg {
        Message::RequestStatsInfo(m) => Ok(stats_info(sh, uid, m.command_id, v)),
        Message::RequestUpdatePartition(m) => Ok(rc_of(
            sh.exec(Command::UpdatePartition {
                uid,
                msg: Box::new(m),
            })
            .await,
        )),
        Message::RequestDeletePartition(m) => Ok(rc_of(
            sh.exec(Command::DeletePartition {
                uid,
                name: m.name.unwrap_or_default(),
            })
            .await,
        )),
        _ => Err(req),
    }
}

/// REQUEST_STATS_INFO: the counters, or `sdiag -r` (operators only).
fn stats_info(sh: &Shared, uid: u32, command_id: u16, v: slurm_wire::ProtocolVersion) -> Message {
    let snap = sh.snapshot();
    if command_id == STAT_COMMAND_RESET {
        if !snap.conf.is_admin(uid) {
            tracing::error!(uid, "Security violation: REQUEST_STATS_INFO reset");
            return rc_message(ESLURM_ACCESS_DENIED);
        }
        sh.stats.reset(now(), snap.counters);
        return rc_message(SLURM_SUCCESS);
    }
    Message::ResponseStatsInfo(sh.stats.response(&snap, now(), v))
}

async fn handle_one(sh: Arc<Shared>, req: Incoming) -> Option<Message> {
    let v = req.version();
    let uid = req.identity.uid;
    let admin = sh.snapshot().conf.is_admin(uid);
    let ty = req.msg.msg_type();
    let req = match crate::srun::handle(&sh, req).await {
        Ok(reply) => return Some(reply),
        Err(req) => req,
    };
    let reply = match req.msg {
        Message::RequestPing(_) => rc_message(SLURM_SUCCESS),
        // Not federated: the NULL federation record, as stock without one.
        Message::RequestFedInfo(_) => {
            Message::ResponseFedInfo(slurm_wire::msg::common::NoFederation)
        }
        Message::RequestBuildInfo(_) => {
            let snap = sh.snapshot();
            Message::ResponseBuildInfo(build_info(&snap, &sh.slurm_user_name, now(), v))
        }
        Message::RequestShutdown(_) | Message::RequestReconfigure(_) if !admin => {
            tracing::error!(uid, "{ty} from non-admin refused");
            rc_message(ESLURM_USER_ID_MISSING)
        }
        Message::RequestShutdown(m) => {
            // options 0: all daemons; 1: controller with a core; 2: controller.
            sh.control(if m.options == 0 {
                Control::ShutdownAll
            } else {
                Control::Shutdown
            });
            rc_message(SLURM_SUCCESS)
        }
        Message::RequestReconfigure(_) => {
            sh.control(Control::Reconfigure);
            rc_message(SLURM_SUCCESS)
        }
        Message::RequestNodeInfoSingle(_) if !Privacy::of(&sh.snapshot(), uid).nodes() => {
            Privacy::of(&sh.snapshot(), uid).refuse("REQUEST_NODE_INFO_SINGLE")
        }
        Message::RequestNodeInfoSingle(m) => {
            let snap = sh.snapshot();
            let gid = req.identity.gid;
            let vis = Visible::of(&snap.conf, uid, m.show_flags, || lookup_user(uid, gid));
            let seen = vis.nodes(&snap.conf);
            match m
                .node_name
                .as_deref()
                // A node the requester may not see is one that is not there.
                .filter(|n| {
                    let i = snap.node_index(n);
                    seen.as_ref()
                        .is_none_or(|s| i.is_none_or(|i| s.get(i) != Some(&false)))
                })
                .and_then(|n| views::node_info_single(&snap, n, v))
            {
                Some(info) => Message::ResponseNodeInfo(info),
                // Stock answers an unknown name with an empty list.
                None => Message::ResponseNodeInfo(slurm_wire::msg::node::NodeInfoMsg {
                    last_update: snap.last_node_update,
                    hidden_nodes: None,
                    node_array: Vec::new(),
                }),
            }
        }
        Message::RequestJobInfo(m) => {
            let snap = sh.snapshot();
            let ids = m.job_ids.as_deref();
            let own = Privacy::of(&snap, uid).own_jobs_only();
            let gid = req.identity.gid;
            let vis = Visible::of(&snap.conf, uid, m.show_flags, || lookup_user(uid, gid));
            Message::ResponseJobInfo(views::job_listing(&snap, ids, own, &vis, m.show_flags, v))
        }
        Message::RequestJobStepInfo(m) => {
            let snap = sh.snapshot();
            match crate::step_info::step_info_msg(&snap, &m, now(), v) {
                Ok(mut r) => {
                    if let Some(me) = Privacy::of(&snap, uid).own_jobs_only() {
                        r.job_steps.retain(|s| s.user_id == me);
                    }
                    // Steps of jobs in partitions the requester does not see.
                    let gid = req.identity.gid;
                    let vis = Visible::of(&snap.conf, uid, m.show_flags, || lookup_user(uid, gid));
                    r.job_steps
                        .retain(|s| snap.jobs.get(&s.step_id.job_id).is_none_or(|j| vis.job(j)));
                    Message::ResponseJobStepInfo(r)
                }
                Err(rc) => rc_message(rc),
            }
        }
        Message::RequestJobInfoSingle(m) => {
            let snap = sh.snapshot();
            let own = Privacy::of(&snap, uid).own_jobs_only();
            // An array's id answers with all its records; a job that may
            // not be seen is one that is not there, as stock answers.
            match crate::state::array::single_job_info(&snap, m.step_id.job_id, m.show_flags, v)
                .map(|mut info| {
                    if let Some(me) = own {
                        info.job_array.retain(|j| j.user_id == me);
                    }
                    info
                }) {
                Some(info) if !info.job_array.is_empty() => Message::ResponseJobInfo(info),
                _ => rc_message(ESLURM_INVALID_JOB_ID),
            }
        }
        Message::MessageNodeRegistrationStatus(m) => {
            let cmd = Command::Register {
                msg: Box::new(m),
                version: v,
                uid,
            };
            match sh.exec(cmd).await {
                Reply::Registered { node } => Message::ResponseNodeRegistration(
                    views::registration_resp(&sh.snapshot(), node),
                ),
                Reply::Rc(rc) => rc_message(rc),
                _ => rc_message(SLURM_ERROR),
            }
        }
        Message::RequestUpdateNode(m) => rc_of(
            sh.exec(Command::UpdateNode {
                uid,
                msg: Box::new(m),
            })
            .await,
        ),
        Message::RequestSubmitBatchJob(mut desc) => {
            crate::alloc_host::settle(&sh.snapshot().conf, req.peer.ip(), &mut desc);
            let user = lookup_user(uid, req.identity.gid);
            let part = desc.partition.clone();
            match sh
                .exec(Command::Submit {
                    user,
                    desc: Box::new(desc),
                    version: v,
                })
                .await
            {
                Reply::Submitted { job_id } => Message::ResponseSubmitBatchJob(SubmitResponseMsg {
                    step_id: StepId {
                        sluid: 0,
                        job_id,
                        step_id: StepId::BATCH_SCRIPT,
                        step_het_comp: NO_VAL,
                    },
                    error_code: 0,
                    job_submit_user_msg: None,
                }),
                // Stock explains which name it did not know; clients print it.
                Reply::Rc(ESLURM_INVALID_PARTITION_NAME) => {
                    Message::ResponseSlurmRcMsg(slurm_wire::msg::common::ReturnCodeMsgWithText {
                        return_code: ESLURM_INVALID_PARTITION_NAME as u32,
                        err_msg: Some(format!(
                            "invalid partition specified: {}",
                            part.as_deref().unwrap_or("")
                        )),
                    })
                }
                r => rc_of(r),
            }
        }
        Message::RequestKillJob(m) | Message::RequestCancelJobStep(m) => {
            let max_task = sh.snapshot().max_array_size();
            let job_id = match m
                .sjob_id
                .as_deref()
                .map(|s| crate::state::array::parse_job_id_str(s, max_task))
            {
                Some(Ok((id, None))) => id,
                // Array tasks: `12_3`, `12_[1-2]`, with the client's
                // flags (`-b`, `--full`, `--signal`) as stock's
                // job_str_signal keeps them.
                Some(Ok((array_job_id, Some(tasks)))) => {
                    let snap = sh.snapshot();
                    let (cmds, rc) = crate::kill_jobs::task_commands(
                        &snap,
                        uid,
                        array_job_id,
                        tasks.into_iter().collect(),
                        m.signal,
                        m.flags,
                    );
                    if cmds.is_empty() && rc == SLURM_SUCCESS {
                        return Some(rc_message(ESLURM_INVALID_JOB_ID));
                    }
                    return Some(rc_message(crate::kill_jobs::exec_all(&sh, cmds, rc).await));
                }
                Some(Err(_)) => return Some(rc_message(ESLURM_INVALID_JOB_ID)),
                None => m.step_id.job_id,
            };
            // One step other than the batch script: just its tasks.
            if m.step_id.step_id != NO_VAL
                && m.step_id.step_id != StepId::BATCH_SCRIPT
                && m.sjob_id.is_none()
            {
                let cmd = Command::SignalStep {
                    uid,
                    job_id,
                    step_id: m.step_id.step_id,
                    signal: m.signal,
                    version: v,
                };
                return Some(rc_of(sh.exec(cmd).await));
            }
            // A signal (not a cancel) to a whole array reaches every task,
            // as stock's job_str_signal walks them.
            let snap = sh.snapshot();
            if crate::kill_jobs::signal_only(m.signal, m.flags) && snap.arrays.is_array_id(job_id) {
                let tasks = crate::kill_jobs::all_tasks(&snap, job_id);
                let (cmds, rc) =
                    crate::kill_jobs::task_commands(&snap, uid, job_id, tasks, m.signal, m.flags);
                return Some(rc_message(crate::kill_jobs::exec_all(&sh, cmds, rc).await));
            }
            // SIGKILL cancels a pending job whatever the flags.
            let pending = snap
                .jobs
                .get(&job_id)
                .is_some_and(|j| j.state == crate::state::job::JobState::Pending);
            // Other signals, and `scancel -b`, go to the job's processes.
            let cmd = if crate::kill_jobs::signal_only(m.signal, m.flags)
                && !(m.signal == crate::state::SIGKILL && pending)
            {
                Command::Signal {
                    uid,
                    job_id,
                    signal: m.signal,
                    flags: m.flags,
                }
            } else {
                Command::Kill {
                    uid,
                    job_id,
                    signal: m.signal,
                }
            };
            rc_of(sh.exec(cmd).await)
        }
        Message::RequestUpdateJob(desc) => {
            let target = match desc.job_id_str.as_deref() {
                Some(s) => {
                    match crate::state::array::parse_job_id_str(s, sh.snapshot().max_array_size()) {
                        Ok(t) => t,
                        Err(_) => return Some(rc_message(ESLURM_INVALID_JOB_ID)),
                    }
                }
                None => (desc.step_id.job_id, None),
            };
            let cmd = match target {
                (job_id, None) => Command::UpdateJob {
                    uid,
                    job_id,
                    desc: Box::new(desc),
                    version: v,
                },
                (array_job_id, Some(tasks)) => Command::UpdateArray {
                    uid,
                    array_job_id,
                    tasks: Some(tasks.into_iter().collect()),
                    desc: Box::new(desc),
                    version: v,
                },
            };
            array_reply(target.0, v, sh.exec(cmd).await)
        }
        Message::RequestKillJobs(m) => crate::kill_jobs::handle(&sh, uid, m).await,
        Message::RequestJobRequeue(m) => {
            let target = match m.job_id_str.as_deref() {
                Some(s) => {
                    match crate::state::array::parse_job_id_str(s, sh.snapshot().max_array_size()) {
                        Ok(t) => t,
                        Err(_) => return Some(rc_message(ESLURM_INVALID_JOB_ID)),
                    }
                }
                None => (m.step_id.job_id, None),
            };
            let cmd = match target {
                (job_id, None) => Command::Requeue {
                    uid,
                    job_id,
                    flags: m.flags,
                },
                (array_job_id, Some(tasks)) => Command::RequeueArray {
                    uid,
                    array_job_id,
                    tasks: Some(tasks.into_iter().collect()),
                    flags: m.flags,
                },
            };
            array_reply(target.0, v, sh.exec(cmd).await)
        }
        Message::RequestCompleteBatchScript(m) => rc_of(
            sh.exec(Command::BatchComplete {
                uid,
                job_id: m.step_id.job_id,
                job_rc: m.job_rc,
                slurm_rc: m.slurm_rc,
                node: m.node_name,
            })
            .await,
        ),
        Message::MessageEpilogComplete(m) => rc_of(
            sh.exec(Command::EpilogComplete {
                uid,
                job_id: m.step_id.0.job_id,
                node: m.node_name,
                rc: m.return_code,
            })
            .await,
        ),
        other => {
            tracing::warn!(uid, "{} is not implemented", other.msg_type());
            rc_message(ESLURM_NOT_SUPPORTED)
        }
    };
    Some(reply)
}

/// A reply that may carry return codes per group of array tasks
/// (RESPONSE_JOB_ARRAY_ERRORS). Ids read `12_1-3,5`; 26.05's controller
/// brackets the tasks (`12_[1-3,5]`, `12_[9]`).
fn array_reply(array_job_id: u32, v: slurm_wire::ProtocolVersion, r: Reply) -> Message {
    use slurm_wire::msg::job::{JobArrayRespEntry, JobArrayRespMsg};
    match r {
        Reply::ArrayErrors(groups) => Message::ResponseJobArrayErrors(JobArrayRespMsg(
            groups
                .iter()
                .map(|g| {
                    let tasks = crate::state::array_ctl::task_ranges(&g.tasks);
                    let id = if v >= slurm_wire::ProtocolVersion::V26_05 {
                        format!("{array_job_id}_[{tasks}]")
                    } else {
                        format!("{array_job_id}_{tasks}")
                    };
                    JobArrayRespEntry {
                        error_code: g.rc as u32,
                        job_array_id: Some(id),
                        err_msg: None,
                    }
                })
                .collect(),
        )),
        r => rc_of(r),
    }
}

fn rc_of(r: Reply) -> Message {
    match r {
        Reply::Rc(rc) => rc_message(rc),
        _ => rc_message(SLURM_SUCCESS),
    }
}

/// PrivateData for one requester: what the operators (root, SlurmUser)
/// see and others may not.
struct Privacy {
    flags: PrivateData,
    uid: u32,
    operator: bool,
}

impl Privacy {
    fn of(snap: &crate::state::Controller, uid: u32) -> Privacy {
        Privacy {
            flags: PrivateData::parse(snap.conf.raw.raw("PrivateData")),
            uid,
            operator: snap.conf.is_admin(uid),
        }
    }

    /// The requester's uid when they may see only their own jobs.
    fn own_jobs_only(&self) -> Option<u32> {
        (!self.flags.all_jobs_visible(self.operator)).then_some(self.uid)
    }

    fn nodes(&self) -> bool {
        self.flags.nodes_visible(self.operator)
    }

    fn partitions(&self) -> bool {
        self.flags.partitions_visible(self.operator)
    }

    /// Stock's answer to a listing PrivateData keeps from this user.
    fn refuse(&self, what: &str) -> Message {
        tracing::error!(
            uid = self.uid,
            "Security violation, {what} RPC (PrivateData)"
        );
        rc_message(ESLURM_ACCESS_DENIED)
    }
}
