//! The write-ahead log's records: one tagged form per logged command.
//!
//! Each format's set of records is a type ([`super::migrate`]): formats
//! 1-6 ([`LoggedV6`]) logged scancel as per-job cancels (`KILL`,
//! `KILL_TASKS`) decided by the daemon, and the outcomes of RPCs to slurmd
//! as the commands the daemon made of them; format 7 on ([`Logged`]) logs
//! the intent ([`Command::Signal`], [`Command::KillJobs`]) and the outcome
//! ([`Command::RpcDone`]), and the state machine decides. An old record is
//! lifted to the command that does what it did; only the new form is
//! written.

use super::migrate::{Before, Migrate};
use super::shared::{bad, get_nested, get_user, put_nested, put_user, req_str, version, DecResult};
use crate::state::{Command, Purpose, RpcOutcome, SignalTarget};
use slurm_wire::errno::ESLURMD_KILL_JOB_ALREADY_COMPLETE;
use slurm_wire::msg::job::KillJobsMsg;
use slurm_wire::msg::job_desc::JobDescMsg;
use slurm_wire::msg::node::{SlurmNodeRegistrationStatusMsg, UpdateNodeMsg};
use slurm_wire::pack::{Reader, Writer};
use slurm_wire::ProtocolVersion;

mod tag {
    pub const TICK: u8 = 0;
    pub const REGISTER: u8 = 1;
    /// Formats 1-6.
    pub const NODE_UNREACHABLE: u8 = 3;
    pub const UPDATE_NODE: u8 = 4;
    pub const SUBMIT: u8 = 5;
    /// Formats 1-6.
    pub const KILL: u8 = 6;
    pub const BATCH_COMPLETE: u8 = 7;
    pub const EPILOG_COMPLETE: u8 = 8;
    /// Formats 1-6.
    pub const TERMINATE_DONE: u8 = 9;
    /// Formats 1-6.
    pub const LAUNCH_FAILED: u8 = 10;
    pub const ALLOCATE: u8 = 11;
    pub const STEP_CREATE: u8 = 12;
    pub const STEP_COMPLETE: u8 = 13;
    pub const COMPLETE_ALLOCATION: u8 = 14;
    pub const UPDATE_JOB: u8 = 15;
    pub const REQUEUE: u8 = 16;
    // Arrays and dependencies (high numbers: clear of others' additions).
    /// Formats 1-6.
    pub const KILL_TASKS: u8 = 40;
    // 41 was a dependency-only update (now part of UPDATE_JOB).
    // 50..: operations (partitions, ...).
    pub const UPDATE_PARTITION: u8 = 50;
    // 60..64: job control of array tasks.
    pub const UPDATE_ARRAY: u8 = 60;
    pub const REQUEUE_ARRAY: u8 = 61;
    // 65..69: partitions (deletion, ...).
    pub const DELETE_PARTITION: u8 = 65;
    // 70..: node liveness.
    /// Formats 1-6.
    pub const NODE_RESPONDED: u8 = 70;
    // 80..: intents (format 7 on).
    pub const SIGNAL: u8 = 80;
    pub const KILL_JOBS: u8 = 81;
    pub const RPC_DONE: u8 = 82;
}

/// The first format that logs intents and RPC outcomes.
pub const INTENTS: u32 = 7;

/// An optional task list: a flag, then the tasks.
fn put_tasks(w: &mut Writer, tasks: &Option<Vec<u32>>) {
    w.bool(tasks.is_some());
    put_list(w, tasks.as_deref().unwrap_or_default());
}

fn get_tasks(r: &mut Reader<'_>) -> DecResult<Option<Vec<u32>>> {
    let some = r.bool()?;
    let tasks = get_list(r)?;
    Ok(some.then_some(tasks))
}

fn put_list(w: &mut Writer, t: &[u32]) {
    w.count(t.len());
    for id in t {
        w.u32(*id);
    }
}

fn get_list(r: &mut Reader<'_>) -> DecResult<Vec<u32>> {
    let n = r.count(4)?;
    let mut tasks = Vec::with_capacity(n);
    for _ in 0..n {
        tasks.push(r.u32()?);
    }
    Ok(tasks)
}

fn put_target(w: &mut Writer, t: &SignalTarget) {
    match t {
        SignalTarget::Job(id) => {
            w.u8(0);
            w.u32(*id);
        }
        SignalTarget::Step { job_id, step_id } => {
            w.u8(1);
            w.u32(*job_id);
            w.u32(*step_id);
        }
        SignalTarget::Tasks {
            array_job_id,
            tasks,
        } => {
            w.u8(2);
            w.u32(*array_job_id);
            put_list(w, tasks);
        }
    }
}

fn get_target(r: &mut Reader<'_>) -> DecResult<SignalTarget> {
    Ok(match r.u8()? {
        0 => SignalTarget::Job(r.u32()?),
        1 => SignalTarget::Step {
            job_id: r.u32()?,
            step_id: r.u32()?,
        },
        2 => SignalTarget::Tasks {
            array_job_id: r.u32()?,
            tasks: get_list(r)?,
        },
        k => return Err(bad(r, "signal target", u64::from(k))),
    })
}

fn put_purpose(w: &mut Writer, p: &Purpose) {
    let (kind, id) = match p {
        Purpose::Ping => (0, 0),
        Purpose::Reregister => (1, 0),
        Purpose::Launch { job_id } => (2, *job_id),
        Purpose::Terminate { job_id } => (3, *job_id),
        Purpose::Signal { job_id } => (4, *job_id),
        Purpose::Srun { uid } => (5, *uid),
    };
    w.u8(kind);
    w.u32(id);
}

fn get_purpose(r: &mut Reader<'_>) -> DecResult<Purpose> {
    let kind = r.u8()?;
    let id = r.u32()?;
    Ok(match kind {
        0 => Purpose::Ping,
        1 => Purpose::Reregister,
        2 => Purpose::Launch { job_id: id },
        3 => Purpose::Terminate { job_id: id },
        4 => Purpose::Signal { job_id: id },
        5 => Purpose::Srun { uid: id },
        k => return Err(bad(r, "RPC purpose", u64::from(k))),
    })
}

fn put_outcome(w: &mut Writer, o: &RpcOutcome) {
    match *o {
        RpcOutcome::Failed => w.u8(0),
        RpcOutcome::Load { cpu_load, free_mem } => {
            w.u8(1);
            w.u32(cpu_load);
            w.u64(free_mem);
        }
        RpcOutcome::Rc(rc) => {
            w.u8(2);
            w.u32(rc as u32);
        }
        RpcOutcome::Other => w.u8(3),
    }
}

fn get_outcome(r: &mut Reader<'_>) -> DecResult<RpcOutcome> {
    Ok(match r.u8()? {
        0 => RpcOutcome::Failed,
        1 => RpcOutcome::Load {
            cpu_load: r.u32()?,
            free_mem: r.u64()?,
        },
        2 => RpcOutcome::Rc(r.u32()? as i32),
        3 => RpcOutcome::Other,
        k => return Err(bad(r, "RPC outcome", u64::from(k))),
    })
}

/// The version UpdatePartMsg is logged in (the newest: every field).
const UPDATE_PART_V: ProtocolVersion = ProtocolVersion::V26_05;

/// StepCompleteMsg carries no version of its own; the newest layout keeps
/// every field.
const STEP_COMPLETE_V: ProtocolVersion = ProtocolVersion::V26_05;

/// The version UpdateNodeMsg is logged in (the one with `reason_uid`).
const UPDATE_NODE_V: ProtocolVersion = ProtocolVersion::V22_05;

/// The version KillJobsMsg is logged in (the newest: every field).
const KILL_JOBS_V: ProtocolVersion = ProtocolVersion::V26_05;

/// The log form of a command; None for those not logged
/// ([`crate::state::CommandMeta::logged`]).
pub fn encode_command(cmd: &Command) -> Option<Vec<u8>> {
    if !cmd.meta().logged {
        return None;
    }
    let mut w = Writer::new();
    match cmd {
        Command::Tick => w.u8(tag::TICK),
        Command::Register { msg, version, uid } => {
            w.u8(tag::REGISTER);
            w.u16(version.to_wire());
            w.u32(*uid);
            put_nested(&mut w, msg.as_ref(), *version);
        }
        Command::UpdatePartition { uid, msg } => {
            w.u8(tag::UPDATE_PARTITION);
            w.u32(*uid);
            put_nested(&mut w, msg.as_ref(), UPDATE_PART_V);
        }
        Command::DeletePartition { uid, name } => {
            w.u8(tag::DELETE_PARTITION);
            w.u32(*uid);
            w.str(Some(name));
        }
        Command::UpdateNode { uid, msg } => {
            w.u8(tag::UPDATE_NODE);
            w.u32(*uid);
            put_nested(&mut w, msg.as_ref(), UPDATE_NODE_V);
        }
        Command::Submit {
            user,
            desc,
            version,
        } => {
            w.u8(tag::SUBMIT);
            put_user(&mut w, user);
            w.u16(version.to_wire());
            put_nested(&mut w, desc.as_ref(), *version);
        }
        Command::BatchComplete {
            uid,
            job_id,
            job_rc,
            slurm_rc,
            node,
        } => {
            w.u8(tag::BATCH_COMPLETE);
            w.u32(*uid);
            w.u32(*job_id);
            w.u32(*job_rc);
            w.u32(*slurm_rc);
            w.str(node.as_deref());
        }
        Command::EpilogComplete {
            uid,
            job_id,
            node,
            rc,
        } => {
            w.u8(tag::EPILOG_COMPLETE);
            w.u32(*uid);
            w.u32(*job_id);
            w.str(node.as_deref());
            w.u32(*rc);
        }
        Command::Allocate {
            user,
            desc,
            version,
            resp_host,
        } => {
            w.u8(tag::ALLOCATE);
            put_user(&mut w, user);
            w.u16(version.to_wire());
            put_nested(&mut w, desc.as_ref(), *version);
            w.str(Some(resp_host));
        }
        Command::StepCreate { uid, req, version } => {
            w.u8(tag::STEP_CREATE);
            w.u32(*uid);
            w.u16(version.to_wire());
            put_nested(&mut w, req.as_ref(), *version);
        }
        Command::StepComplete { uid, msg } => {
            w.u8(tag::STEP_COMPLETE);
            w.u32(*uid);
            put_nested(&mut w, msg.as_ref(), STEP_COMPLETE_V);
        }
        Command::CompleteAllocation {
            uid,
            job_id,
            job_rc,
        } => {
            w.u8(tag::COMPLETE_ALLOCATION);
            w.u32(*uid);
            w.u32(*job_id);
            w.u32(*job_rc);
        }
        Command::UpdateJob {
            uid,
            job_id,
            desc,
            version,
        } => {
            w.u8(tag::UPDATE_JOB);
            w.u32(*uid);
            w.u32(*job_id);
            w.u16(version.to_wire());
            put_nested(&mut w, desc.as_ref(), *version);
        }
        Command::Requeue { uid, job_id, flags } => {
            w.u8(tag::REQUEUE);
            w.u32(*uid);
            w.u32(*job_id);
            w.u32(*flags);
        }
        Command::UpdateArray {
            uid,
            array_job_id,
            tasks,
            desc,
            version,
        } => {
            w.u8(tag::UPDATE_ARRAY);
            w.u32(*uid);
            w.u32(*array_job_id);
            put_tasks(&mut w, tasks);
            w.u16(version.to_wire());
            put_nested(&mut w, desc.as_ref(), *version);
        }
        Command::RequeueArray {
            uid,
            array_job_id,
            tasks,
            flags,
        } => {
            w.u8(tag::REQUEUE_ARRAY);
            w.u32(*uid);
            w.u32(*array_job_id);
            put_tasks(&mut w, tasks);
            w.u32(*flags);
        }
        Command::Signal {
            uid,
            target,
            signal,
            flags,
            version,
        } => {
            w.u8(tag::SIGNAL);
            w.u32(*uid);
            put_target(&mut w, target);
            w.u16(*signal);
            w.u16(*flags);
            w.u16(version.to_wire());
        }
        Command::KillJobs { uid, filter } => {
            w.u8(tag::KILL_JOBS);
            w.u32(*uid);
            put_nested(&mut w, filter.as_ref(), KILL_JOBS_V);
        }
        Command::RpcDone {
            node,
            purpose,
            outcome,
        } => {
            w.u8(tag::RPC_DONE);
            w.str(Some(node));
            put_purpose(&mut w, purpose);
            put_outcome(&mut w, outcome);
        }
        // Not logged (above).
        Command::Reconfigure(_) => return None,
    }
    Some(w.into_vec())
}

/// The records whose shape is the same in every format; None for `tag`
/// not one of them.
fn decode_common(tag: u8, r: &mut Reader<'_>) -> Option<DecResult<Command>> {
    let mut one = || -> DecResult<Option<Command>> {
        Ok(Some(match tag {
            tag::TICK => Command::Tick,
            tag::REGISTER => {
                let version = version(r)?;
                let uid = r.u32()?;
                let msg: SlurmNodeRegistrationStatusMsg = get_nested(r, version)?;
                Command::Register {
                    msg: Box::new(msg),
                    version,
                    uid,
                }
            }
            tag::UPDATE_NODE => {
                let uid = r.u32()?;
                let msg: UpdateNodeMsg = get_nested(r, UPDATE_NODE_V)?;
                Command::UpdateNode {
                    uid,
                    msg: Box::new(msg),
                }
            }
            tag::SUBMIT => {
                let user = get_user(r)?;
                let version = version(r)?;
                let desc: JobDescMsg = get_nested(r, version)?;
                Command::Submit {
                    user,
                    desc: Box::new(desc),
                    version,
                }
            }
            tag::UPDATE_JOB => {
                let uid = r.u32()?;
                let job_id = r.u32()?;
                let version = version(r)?;
                let desc: JobDescMsg = get_nested(r, version)?;
                Command::UpdateJob {
                    uid,
                    job_id,
                    desc: Box::new(desc),
                    version,
                }
            }
            tag::REQUEUE => Command::Requeue {
                uid: r.u32()?,
                job_id: r.u32()?,
                flags: r.u32()?,
            },
            tag::BATCH_COMPLETE => Command::BatchComplete {
                uid: r.u32()?,
                job_id: r.u32()?,
                job_rc: r.u32()?,
                slurm_rc: r.u32()?,
                node: r.str()?,
            },
            tag::EPILOG_COMPLETE => Command::EpilogComplete {
                uid: r.u32()?,
                job_id: r.u32()?,
                node: r.str()?,
                rc: r.u32()?,
            },
            tag::ALLOCATE => {
                let user = get_user(r)?;
                let version = version(r)?;
                let desc: JobDescMsg = get_nested(r, version)?;
                Command::Allocate {
                    user,
                    desc: Box::new(desc),
                    version,
                    resp_host: req_str(r)?,
                }
            }
            tag::STEP_CREATE => {
                let uid = r.u32()?;
                let version = version(r)?;
                let req: slurm_wire::msg::step::JobStepCreateRequestMsg = get_nested(r, version)?;
                Command::StepCreate {
                    uid,
                    req: Box::new(req),
                    version,
                }
            }
            tag::STEP_COMPLETE => {
                let uid = r.u32()?;
                let msg: slurm_wire::msg::step::StepCompleteMsg = get_nested(r, STEP_COMPLETE_V)?;
                Command::StepComplete {
                    uid,
                    msg: Box::new(msg),
                }
            }
            tag::UPDATE_PARTITION => {
                let uid = r.u32()?;
                let msg: slurm_wire::msg::update_part::UpdatePartMsg =
                    get_nested(r, UPDATE_PART_V)?;
                Command::UpdatePartition {
                    uid,
                    msg: Box::new(msg),
                }
            }
            tag::DELETE_PARTITION => Command::DeletePartition {
                uid: r.u32()?,
                name: r.str()?.unwrap_or_default(),
            },
            tag::COMPLETE_ALLOCATION => Command::CompleteAllocation {
                uid: r.u32()?,
                job_id: r.u32()?,
                job_rc: r.u32()?,
            },
            tag::UPDATE_ARRAY => {
                let uid = r.u32()?;
                let array_job_id = r.u32()?;
                let tasks = get_tasks(r)?;
                let version = version(r)?;
                let desc: JobDescMsg = get_nested(r, version)?;
                Command::UpdateArray {
                    uid,
                    array_job_id,
                    tasks,
                    desc: Box::new(desc),
                    version,
                }
            }
            tag::REQUEUE_ARRAY => Command::RequeueArray {
                uid: r.u32()?,
                array_job_id: r.u32()?,
                tasks: get_tasks(r)?,
                flags: r.u32()?,
            },
            _ => return Ok(None),
        }))
    };
    one().transpose()
}

/// A record of format 7 on.
pub(super) struct Logged(pub(super) Command);

/// A record of formats 1-6: the commands those formats logged that are
/// now others.
pub(super) enum LoggedV6 {
    Same(Command),
    Kill {
        uid: u32,
        job_id: u32,
        signal: u16,
    },
    KillTasks {
        uid: u32,
        array_job_id: u32,
        tasks: Vec<u32>,
        signal: u16,
    },
    NodeUnreachable {
        node: String,
    },
    NodeResponded {
        node: String,
        cpu_load: u32,
        free_mem: u64,
    },
    TerminateDone {
        job_id: u32,
        node: String,
    },
    LaunchFailed {
        job_id: u32,
        node: String,
        rc: i32,
    },
}

fn unknown(at: usize, t: u8) -> slurm_wire::DecodeError {
    slurm_wire::DecodeError::new(
        slurm_wire::DecodeErrorKind::BadValue {
            what: "command tag",
            value: u64::from(t),
        },
        at,
    )
}

impl Migrate for LoggedV6 {
    const SINCE: u32 = 1;
    type Previous = Before<()>;
    type Cx = ();

    fn decode_own(r: &mut Reader<'_>, _: &()) -> DecResult<Self> {
        let at = r.position();
        let t = r.u8()?;
        Ok(match t {
            tag::NODE_UNREACHABLE => LoggedV6::NodeUnreachable { node: req_str(r)? },
            tag::NODE_RESPONDED => LoggedV6::NodeResponded {
                node: req_str(r)?,
                cpu_load: r.u32()?,
                free_mem: r.u64()?,
            },
            tag::KILL => LoggedV6::Kill {
                uid: r.u32()?,
                job_id: r.u32()?,
                signal: r.u16()?,
            },
            tag::TERMINATE_DONE => LoggedV6::TerminateDone {
                job_id: r.u32()?,
                node: req_str(r)?,
            },
            tag::LAUNCH_FAILED => LoggedV6::LaunchFailed {
                job_id: r.u32()?,
                node: req_str(r)?,
                rc: r.u32()? as i32,
            },
            tag::KILL_TASKS => LoggedV6::KillTasks {
                uid: r.u32()?,
                array_job_id: r.u32()?,
                signal: r.u16()?,
                tasks: get_list(r)?,
            },
            t => LoggedV6::Same(decode_common(t, r).ok_or_else(|| unknown(at, t))??),
        })
    }

    fn migrate(p: Before<()>) -> Self {
        p.never()
    }
}

/// The version a lifted cancel carries (it only words a step's refusal,
/// and no old cancel names a step).
const LIFTED_V: ProtocolVersion = ProtocolVersion::V26_05;

impl Migrate for Logged {
    const SINCE: u32 = INTENTS;
    type Previous = LoggedV6;
    type Cx = ();

    fn decode_own(r: &mut Reader<'_>, _: &()) -> DecResult<Self> {
        let at = r.position();
        let t = r.u8()?;
        Ok(Logged(match t {
            tag::SIGNAL => Command::Signal {
                uid: r.u32()?,
                target: get_target(r)?,
                signal: r.u16()?,
                flags: r.u16()?,
                version: version(r)?,
            },
            tag::KILL_JOBS => {
                let uid = r.u32()?;
                let filter: KillJobsMsg = get_nested(r, KILL_JOBS_V)?;
                Command::KillJobs {
                    uid,
                    filter: Box::new(filter),
                }
            }
            tag::RPC_DONE => Command::RpcDone {
                node: req_str(r)?,
                purpose: get_purpose(r)?,
                outcome: get_outcome(r)?,
            },
            t => decode_common(t, r).ok_or_else(|| unknown(at, t))??,
        }))
    }

    /// The daemon of formats 1-6 logged a cancel only for what it had
    /// decided was one (SIGKILL; to a pending job whatever the flags), so
    /// a plain SIGKILL to the same target does what it did; RPC outcomes
    /// are reported as what the agent saw.
    fn migrate(p: LoggedV6) -> Self {
        let signal = |uid, target, signal| Command::Signal {
            uid,
            target,
            signal,
            flags: 0,
            version: LIFTED_V,
        };
        Logged(match p {
            LoggedV6::Same(c) => c,
            LoggedV6::Kill {
                uid,
                job_id,
                signal: s,
            } => signal(uid, SignalTarget::Job(job_id), s),
            LoggedV6::KillTasks {
                uid,
                array_job_id,
                tasks,
                signal: s,
            } => signal(
                uid,
                SignalTarget::Tasks {
                    array_job_id,
                    tasks,
                },
                s,
            ),
            LoggedV6::NodeUnreachable { node } => Command::RpcDone {
                node,
                purpose: Purpose::Ping,
                outcome: RpcOutcome::Failed,
            },
            LoggedV6::NodeResponded {
                node,
                cpu_load,
                free_mem,
            } => Command::RpcDone {
                node,
                purpose: Purpose::Ping,
                outcome: RpcOutcome::Load { cpu_load, free_mem },
            },
            LoggedV6::TerminateDone { job_id, node } => Command::RpcDone {
                node,
                purpose: Purpose::Terminate { job_id },
                outcome: RpcOutcome::Rc(ESLURMD_KILL_JOB_ALREADY_COMPLETE),
            },
            // A code 0 ended the job as a lost launch does.
            LoggedV6::LaunchFailed { job_id, node, rc } => Command::RpcDone {
                node,
                purpose: Purpose::Launch { job_id },
                outcome: if rc == 0 {
                    RpcOutcome::Failed
                } else {
                    RpcOutcome::Rc(rc)
                },
            },
        })
    }
}

/// A record's command, as format `format` wrote it.
pub fn decode_record(format: u32, b: &[u8]) -> DecResult<Command> {
    let mut r = Reader::new(b);
    let Logged(cmd) = Logged::decode(format, &mut r, &())?;
    r.finish()?;
    Ok(cmd)
}

/// A record's command in the current form.
pub fn decode_command(b: &[u8]) -> DecResult<Command> {
    decode_record(Logged::SINCE, b)
}
