//! Refusals decided before a command is logged.
//!
//! A command that `apply` would refuse for who sent it must not cost a
//! write-ahead-log record and an fsync: otherwise any user can make the
//! controller write to disk once per request. [`Controller::refuse_before_log`]
//! answers, from the state before a batch, the refusals that no earlier
//! command of the same batch can turn into an acceptance: sender rules
//! that depend only on the configuration, the body identity of a submit,
//! and ownership of a job that already exists (a job's owner never
//! changes while its record lives). Everything else stays in `apply`,
//! which also keeps these checks (old logs are replayed through it).

use super::command::{Command, Reply, SignalTarget, SIGKILL};
use super::controller::Controller;
use super::error::StateError;
use super::job::UserInfo;
use super::kill_jobs::has_filter;
use super::signal::signal_only;
use slurm_wire::msg::job_desc::JobDescMsg;
use slurm_wire::pack::NO_VAL;
use slurm_wire::ProtocolVersion;

/// The body's user_id/group_id meaning "the sender".
pub use slurm_wire::auth::SLURM_AUTH_NOBODY;

/// What the commands already let through in a batch may have changed, so
/// that later pre-checks only use what still holds.
#[derive(Debug, Clone, Copy, Default)]
pub struct BatchSoFar {
    /// A reconfiguration (SlurmUser may change): no sender rule holds.
    conf_may_change: bool,
    /// A Tick may purge finished jobs, whose ids could then be reused:
    /// ownership seen before the batch no longer holds.
    jobs_may_go: bool,
}

impl BatchSoFar {
    /// Notes a command that goes on to be applied.
    pub fn note(&mut self, cmd: &Command) {
        self.conf_may_change |= cmd.meta().reconfigures;
        self.jobs_may_go |= matches!(cmd, Command::Tick);
    }
}

/// Stock's `_valid_id` for a job description submitted by `user` (the
/// authenticated sender): the body may name the sender, or nobody meaning
/// the sender; naming anyone else is refused unless the sender is root or
/// SlurmUser. 22.05 clients leave the fields NO_VAL; later ones send
/// SLURM_AUTH_NOBODY and NO_VAL is refused. From 25.05 a sender
/// authenticated as nobody may not submit at all.
pub fn submit_identity(
    admin: bool,
    user: &UserInfo,
    desc: &JobDescMsg,
    version: ProtocolVersion,
) -> Result<(), StateError> {
    let old = version < ProtocolVersion::V23_02;
    // (22.05's own rule compares 99 literally; taking it as "the sender"
    // too only ever names the sender.)
    let unset = |id: u32| id == SLURM_AUTH_NOBODY || (old && id == NO_VAL);
    if !old && (desc.user_id == NO_VAL || desc.group_id == NO_VAL) {
        tracing::error!(uid = user.uid, "job refused: UID or GID NO_VAL");
        return Err(StateError::InvalidUserId);
    }
    if version >= ProtocolVersion::V25_05
        && (user.uid == SLURM_AUTH_NOBODY || user.gid == SLURM_AUTH_NOBODY)
    {
        tracing::error!(
            uid = user.uid,
            "job refused: sender authenticated as nobody"
        );
        return Err(StateError::Nobody);
    }
    if admin {
        return Ok(());
    }
    if !unset(desc.user_id) && desc.user_id != user.uid {
        tracing::error!(
            uid = user.uid,
            body_uid = desc.user_id,
            "job refused: requested UID is not the sender's"
        );
        return Err(StateError::InvalidUserId);
    }
    if !unset(desc.group_id) && desc.group_id != user.gid {
        tracing::error!(
            gid = user.gid,
            body_gid = desc.group_id,
            "job refused: requested GID is not the sender's"
        );
        return Err(StateError::InvalidGroupId);
    }
    Ok(())
}

/// Whether an allocation request's body identity is checked: 22.05's
/// controller checks it as for a batch job; later ones ignore the body and
/// take the credential's.
pub fn allocate_checks_identity(version: ProtocolVersion) -> bool {
    version < ProtocolVersion::V23_02
}

impl Controller {
    /// The reply `apply` would give `cmd` for a refusal that no command
    /// before it in the batch (`so_far`) can change; None: log and apply it.
    pub fn refuse_before_log(&self, cmd: &Command, so_far: &BatchSoFar) -> Option<Reply> {
        if so_far.conf_may_change {
            return None;
        }
        let admin = |uid: u32| self.conf.is_admin(uid);
        let rc = match cmd {
            Command::Register { uid, .. }
            | Command::UpdateNode { uid, .. }
            | Command::BatchComplete { uid, .. }
            | Command::EpilogComplete { uid, .. }
            | Command::UpdatePartition { uid, .. }
            | Command::DeletePartition { uid, .. }
                if !admin(*uid) =>
            {
                StateError::InvalidUserId
            }
            Command::Submit {
                user,
                desc,
                version,
            } => submit_identity(admin(user.uid), user, desc, *version).err()?,
            Command::KillJobs { filter, .. } if !has_filter(filter) => {
                StateError::SignalJobsInvalid
            }
            Command::Allocate {
                user,
                desc,
                version,
                ..
            } if allocate_checks_identity(*version) => {
                submit_identity(admin(user.uid), user, desc, *version).err()?
            }
            Command::StepCreate { uid, req, .. } => {
                if req.user_id != SLURM_AUTH_NOBODY && req.user_id != *uid {
                    StateError::InvalidUserId
                } else if self.settled_owner(req.step_id.job_id, so_far)? != *uid {
                    // Only the owner runs steps, root and SlurmUser too.
                    StateError::AccessDenied
                } else {
                    return None;
                }
            }
            _ if so_far.jobs_may_go => return None,
            // SIGKILL (logged: it may cancel) to what the sender does not
            // own; apply refuses it first, cancel or signal. A signal to a
            // whole array is answered per task: left to apply.
            Command::Signal {
                uid,
                target: SignalTarget::Job(job_id),
                signal: SIGKILL,
                flags,
                ..
            } => {
                let owner = if self.arrays.is_array_id(*job_id) {
                    if signal_only(SIGKILL, *flags) {
                        return None;
                    }
                    self.array_owner(*job_id)?
                } else {
                    self.jobs.get(job_id)?.user.uid
                };
                self.not_owner(*uid, owner, StateError::AccessDenied)?
            }
            // (A task list past MaxArraySize is apply's ESLURM_INVALID_JOB_ID.)
            Command::Signal {
                uid,
                target:
                    SignalTarget::Tasks {
                        array_job_id,
                        tasks,
                    },
                signal,
                flags,
                ..
            } if !signal_only(*signal, *flags) && self.tasks_in_bounds(tasks) => self.not_owner(
                *uid,
                self.array_owner(*array_job_id)?,
                StateError::AccessDenied,
            )?,
            // A whole array is answered per group of tasks: left to apply.
            Command::UpdateJob { uid, job_id, .. } if !self.names_whole_array(*job_id) => self
                .not_owner(
                    *uid,
                    self.jobs.get(job_id)?.user.uid,
                    StateError::InvalidUserId,
                )?,
            Command::Requeue { uid, job_id, .. } if !self.names_whole_array(*job_id) => self
                .not_owner(
                    *uid,
                    self.jobs.get(job_id)?.user.uid,
                    StateError::AccessDenied,
                )?,
            Command::StepComplete { uid, msg } => self.not_owner(
                *uid,
                self.jobs.get(&msg.step_id.job_id)?.user.uid,
                StateError::InvalidUserId,
            )?,
            Command::CompleteAllocation { uid, job_id, .. } => self.not_owner(
                *uid,
                self.jobs.get(job_id)?.user.uid,
                StateError::InvalidUserId,
            )?,
            _ => return None,
        };
        tracing::debug!(?rc, "refused before logging: {}", command_name(cmd));
        Some(Reply::Err(rc))
    }

    /// `rc` when `uid` is neither `owner` nor an administrator.
    fn not_owner(&self, uid: u32, owner: u32, rc: StateError) -> Option<StateError> {
        (!self.conf.owner_or_operator(uid, owner)).then_some(rc)
    }

    /// The owner of an array's records (all have the same).
    fn array_owner(&self, array_job_id: u32) -> Option<u32> {
        self.arrays
            .members(array_job_id)
            .iter()
            .find_map(|id| self.jobs.get(id))
            .map(|j| j.user.uid)
    }

    /// The owner of job `job_id`, while no earlier command of the batch
    /// can have replaced its record.
    fn settled_owner(&self, job_id: u32, so_far: &BatchSoFar) -> Option<u32> {
        if so_far.jobs_may_go {
            return None;
        }
        self.jobs.get(&job_id).map(|j| j.user.uid)
    }
}

fn command_name(cmd: &Command) -> &'static str {
    match cmd {
        Command::Register { .. } => "node registration",
        Command::UpdateNode { .. } => "node update",
        Command::BatchComplete { .. } => "batch completion",
        Command::EpilogComplete { .. } => "epilog completion",
        Command::UpdatePartition { .. } => "partition update",
        Command::DeletePartition { .. } => "partition delete",
        Command::Submit { .. } => "batch submit",
        Command::Allocate { .. } => "allocation",
        Command::StepCreate { .. } => "step create",
        Command::Signal { .. } => "job cancel",
        Command::KillJobs { .. } => "job cancel by filter",
        Command::UpdateJob { .. } => "job update",
        Command::Requeue { .. } => "job requeue",
        Command::StepComplete { .. } => "step completion",
        Command::CompleteAllocation { .. } => "allocation completion",
        _ => "command",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::job::JobState;
    use crate::state::testkit::{
        allocate_cmd, controller_up, kill_cmd, kill_tasks_cmd, step_req, submit_cmd, true_job,
        update_job_cmd, user,
    };
    use slurm_wire::msg::node::UpdateNodeMsg;
    use slurm_wire::msg::step::StepCompleteMsg;
    use slurm_wire::msg::update_part::UpdatePartMsg;
    use slurm_wire::types::StepId;

    const CONF: &str = crate::state::testkit::TWO_NODES;
    const OWNER: u32 = 1000;
    const OTHER: u32 = 1001;

    /// Two nodes up and one pending job of OWNER's (id 1).
    fn cluster() -> Controller {
        let mut c = controller_up(CONF, &["n1", "n2"], 4, 1000);
        let big = JobDescMsg {
            min_nodes: 2,
            num_tasks: 8,
            min_cpus: 8,
            priority: 0,
            ..true_job()
        };
        let r = c.apply(
            1000,
            submit_cmd(user(OWNER, OWNER), big, ProtocolVersion::V24_11),
        );
        assert_eq!(r.0, Reply::Submitted { job_id: 1 });
        c
    }

    fn v24(uid: u32, gid: u32, f: impl FnOnce(&mut JobDescMsg)) -> Command {
        let mut d = true_job();
        f(&mut d);
        submit_cmd(user(uid, gid), d, ProtocolVersion::V24_11)
    }

    /// Commands a sender may not give, with stock's answer.
    fn refused() -> Vec<(Command, StateError)> {
        vec![
            (
                Command::UpdateNode {
                    uid: OTHER,
                    msg: Box::new(UpdateNodeMsg {
                        node_names: Some("n1".into()),
                        node_state: crate::state::node::bits::DOWN,
                        reason: Some("x".into()),
                        ..Default::default()
                    }),
                },
                StateError::InvalidUserId,
            ),
            (
                Command::Register {
                    msg: Box::new(crate::state::testkit::node_msg("n1", 4, 1000)),
                    version: ProtocolVersion::V24_11,
                    uid: OTHER,
                },
                StateError::InvalidUserId,
            ),
            (
                Command::BatchComplete {
                    uid: OWNER,
                    job_id: 1,
                    job_rc: 0,
                    slurm_rc: 0,
                    node: Some("n1".into()),
                },
                StateError::InvalidUserId,
            ),
            (
                Command::EpilogComplete {
                    uid: OWNER,
                    job_id: 1,
                    node: Some("n1".into()),
                    rc: 0,
                },
                StateError::InvalidUserId,
            ),
            (
                Command::UpdatePartition {
                    uid: OWNER,
                    msg: Box::new(UpdatePartMsg {
                        name: Some("debug".into()),
                        ..Default::default()
                    }),
                },
                StateError::InvalidUserId,
            ),
            (
                Command::DeletePartition {
                    uid: OWNER,
                    name: "debug".into(),
                },
                StateError::InvalidUserId,
            ),
            (kill_cmd(OTHER, 1), StateError::AccessDenied),
            (
                update_job_cmd(OTHER, 1, |d| d.time_limit = 5),
                StateError::InvalidUserId,
            ),
            (
                update_job_cmd(OTHER, 1, |d| d.dependency = Some("afterok:7".into())),
                StateError::InvalidUserId,
            ),
            (
                Command::Requeue {
                    uid: OTHER,
                    job_id: 1,
                    flags: 0,
                },
                StateError::AccessDenied,
            ),
            (
                Command::StepComplete {
                    uid: OTHER,
                    msg: Box::new(StepCompleteMsg {
                        step_id: StepId::job(1),
                        ..Default::default()
                    }),
                },
                StateError::InvalidUserId,
            ),
            (
                Command::CompleteAllocation {
                    uid: OTHER,
                    job_id: 1,
                    job_rc: 0,
                },
                StateError::InvalidUserId,
            ),
            (
                Command::StepCreate {
                    uid: OTHER,
                    req: Box::new(step_req(1, 1, 1)),
                    version: ProtocolVersion::V24_11,
                },
                StateError::AccessDenied,
            ),
            (
                Command::StepCreate {
                    uid: OWNER,
                    req: Box::new(slurm_wire::msg::step::JobStepCreateRequestMsg {
                        user_id: OTHER,
                        ..step_req(1, 1, 1)
                    }),
                    version: ProtocolVersion::V24_11,
                },
                StateError::InvalidUserId,
            ),
            // Body identity of a submit (stock's _valid_id).
            (
                v24(OWNER, OWNER, |d| d.user_id = 0),
                StateError::InvalidUserId,
            ),
            (
                v24(OWNER, OWNER, |d| d.group_id = 0),
                StateError::InvalidGroupId,
            ),
            (
                v24(OWNER, OWNER, |d| d.user_id = NO_VAL),
                StateError::InvalidUserId,
            ),
            (
                submit_cmd(
                    user(OWNER, OWNER),
                    JobDescMsg {
                        user_id: OTHER,
                        ..true_job()
                    },
                    ProtocolVersion::V22_05,
                ),
                StateError::InvalidUserId,
            ),
            (
                submit_cmd(user(99, 99), true_job(), ProtocolVersion::V26_05),
                StateError::Nobody,
            ),
            (
                Command::Allocate {
                    user: user(OWNER, OWNER),
                    desc: Box::new(JobDescMsg {
                        user_id: 0,
                        ..true_job()
                    }),
                    version: ProtocolVersion::V22_05,
                    resp_host: "10.0.0.9".into(),
                },
                StateError::InvalidUserId,
            ),
        ]
    }

    #[test]
    fn refused_before_logging_as_apply_refuses_and_nothing_changes() {
        let c = cluster();
        for (cmd, rc) in refused() {
            let pre = c.refuse_before_log(&cmd, &BatchSoFar::default());
            assert_eq!(pre, Some(Reply::Err(rc)), "{cmd:?}");
            // apply (replay, defence in depth) gives the same answer.
            let mut after = c.clone();
            let (reply, fx) = after.apply(1001, cmd.clone());
            assert_eq!(reply, Reply::Err(rc), "apply: {cmd:?}");
            assert!(fx.is_empty(), "{cmd:?}");
            assert_eq!(after.jobs[&1].state, JobState::Pending);
            assert_eq!(after.next_job_id, 2, "{cmd:?}");
        }
    }

    #[test]
    fn a_strangers_cancel_of_array_tasks_is_refused_before_logging() {
        let mut c = cluster();
        let d = JobDescMsg {
            array_inx: Some("1-4".into()),
            ..true_job()
        };
        let r = c.apply(
            1000,
            submit_cmd(user(OWNER, OWNER), d, ProtocolVersion::V24_11),
        );
        let Reply::Submitted { job_id: array } = r.0 else {
            panic!("{r:?}");
        };
        let tasks = |tasks: Vec<u32>| kill_tasks_cmd(OTHER, array, &tasks);
        let pre = c.refuse_before_log(&tasks(vec![2, 3]), &BatchSoFar::default());
        assert_eq!(pre, Some(Reply::Err(StateError::AccessDenied)));
        assert_eq!(c.clone().apply(1001, tasks(vec![2, 3])).0, pre.unwrap());
        assert_eq!(
            c.refuse_before_log(&kill_cmd(OTHER, array), &BatchSoFar::default()),
            Some(Reply::Err(StateError::AccessDenied))
        );
        // A list past MaxArraySize gets apply's own answer.
        let huge = tasks(vec![u32::MAX - 1]);
        assert_eq!(c.refuse_before_log(&huge, &BatchSoFar::default()), None);
        assert_eq!(c.apply(1001, huge).0, Reply::Err(StateError::InvalidJobId));
    }

    #[test]
    fn what_the_sender_may_do_is_logged() {
        let c = cluster();
        let ok = [
            kill_cmd(OWNER, 1),
            kill_cmd(0, 1),
            update_job_cmd(OWNER, 1, |d| d.time_limit = 5),
            // Unknown jobs: apply answers (a job of the batch may be it).
            kill_cmd(OTHER, 77),
            // The body names the sender, or nobody (the sender).
            v24(OWNER, OWNER, |d| {
                d.user_id = OWNER;
                d.group_id = OWNER
            }),
            v24(OWNER, OWNER, |_| {}),
            submit_cmd(
                user(OWNER, OWNER),
                JobDescMsg {
                    user_id: NO_VAL,
                    group_id: NO_VAL,
                    ..true_job()
                },
                ProtocolVersion::V22_05,
            ),
            // root and SlurmUser may name anyone.
            v24(0, 0, |d| d.user_id = OWNER),
            // 24.11 and later take an allocation's identity from the credential.
            allocate_cmd(
                user(OWNER, OWNER),
                JobDescMsg {
                    user_id: 0,
                    ..true_job()
                },
            ),
        ];
        for cmd in ok {
            assert_eq!(
                c.refuse_before_log(&cmd, &BatchSoFar::default()),
                None,
                "{cmd:?}"
            );
        }
    }

    #[test]
    fn a_body_naming_someone_else_is_refused_not_rewritten() {
        let mut c = cluster();
        let r = c.apply(1001, v24(OWNER, OWNER, |d| d.user_id = 0));
        assert_eq!(r.0, Reply::Err(StateError::InvalidUserId));
        assert_eq!(c.jobs.len(), 1, "no job for root was made");
        // 24.11's allocation ignores the body: the job is the sender's.
        let d = JobDescMsg {
            user_id: 0,
            group_id: 0,
            ..true_job()
        };
        let (r, _) = c.apply(1001, allocate_cmd(user(OWNER, OWNER), d));
        let Reply::Submitted { job_id } = r else {
            panic!("{r:?}");
        };
        assert_eq!(c.jobs[&job_id].user.uid, OWNER);
    }

    #[test]
    fn after_a_reconfigure_or_tick_in_the_batch_apply_decides() {
        let c = cluster();
        let mut so_far = BatchSoFar::default();
        so_far.note(&Command::Tick);
        // A Tick may purge jobs: ownership is apply's.
        assert_eq!(c.refuse_before_log(&kill_cmd(OTHER, 1), &so_far), None);
        // Sender rules from the configuration still hold.
        let (cmd, rc) = refused().swap_remove(0);
        assert_eq!(c.refuse_before_log(&cmd, &so_far), Some(Reply::Err(rc)));
        so_far.note(&Command::Reconfigure(Box::new((*c.conf).clone())));
        assert_eq!(c.refuse_before_log(&cmd, &so_far), None);
    }
}
