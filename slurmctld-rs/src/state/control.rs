//! Job control: holds and releases, `scontrol update job`, begin times,
//! requeue (by request, on node failure, after a failed prolog) and
//! signals other than a plain cancel. Semantics follow stock's job_mgr.c
//! (`_update_job`, `_job_requeue_op`, `job_signal`).

use super::command::{Effect, Outbound, Purpose, Reply, Time};
use super::controller::Controller;
use super::error::StateError;
use super::job::{reason, Job, JobState};
use super::msgs;
use crate::sched::priority::BASIC_PRIORITY;
use slurm_wire::msg::common::SignalTasksMsg;
use slurm_wire::msg::job_desc::JobDescMsg;
use slurm_wire::pack::{INFINITE, NO_VAL, NO_VAL16};
use slurm_wire::types::StepId;
use slurm_wire::{Message, ProtocolVersion};

/// `ALLOC_SID_USER_HOLD`: `scontrol uhold` marks its hold request so.
pub const ALLOC_SID_USER_HOLD: u32 = 0x2;
/// Requeue flags (`job_states` flag bits) in REQUEST_JOB_REQUEUE.
pub const JOB_LAUNCH_FAILED: u32 = 1 << 8;
pub const JOB_REQUEUE_HOLD: u32 = 1 << 11;
pub const JOB_SPECIAL_EXIT: u32 = 1 << 12;
/// scancel's flags in REQUEST_KILL_JOB.
pub const KILL_JOB_BATCH: u16 = 1 << 0;
pub const KILL_STEPS_ONLY: u16 = 1 << 2;
pub const KILL_FULL_JOB: u16 = 1 << 3;
/// A requeued job waits until credentials of its last run expired
/// (stock: `now + cred_expiration() + 1`, 120 s by default).
pub const REQUEUE_DELAY: i64 = 121;
/// The step id stock's `_signal_job` uses so that no real step is killed
/// (`max_step_cnt + 1` with the default MaxStepCount).
const NO_STEP: u32 = 40_001;

/// Whether a job's reason is a hold.
pub fn is_held(j: &Job) -> bool {
    j.priority == 0
}

/// A pending job the scheduler may consider now.
pub fn eligible(j: &Job, now: Time) -> bool {
    !is_held(j) && j.eligible_time != 0 && j.eligible_time <= now && j.completing.is_empty()
}

/// Called when a job is built at submit: `--hold` and `--begin`.
pub fn on_submit(j: &mut Job, now: Time) {
    if j.req.priority == 0 {
        // Stock: a hold asked at submit is always the user's own hold.
        j.priority = 0;
        j.state_reason = reason::WAIT_HELD_USER;
    }
    if j.req.begin_time > now {
        j.eligible_time = j.req.begin_time;
        if !is_held(j) {
            j.state_reason = reason::WAIT_TIME;
        }
    } else if is_held(j) {
        // A held job has no begin time until released (EligibleTime=Unknown).
        j.eligible_time = 0;
    }
}

/// Whether the job may be requeued (`--requeue`/`--no-requeue`, else
/// `JobRequeue`, default 1).
pub fn requeue_allowed(c: &Controller, j: &Job) -> bool {
    if j.req.requeue != NO_VAL16 {
        return j.req.requeue != 0;
    }
    c.conf
        .raw
        .raw("JobRequeue")
        .and_then(|s| s.trim().parse::<u32>().ok())
        .map(|v| v != 0)
        .unwrap_or(true)
}

/// Stock's wording of a ReqNodeNotAvail wait, as the controller of client
/// version `v` gives it: 24.11+ name only nodes that are down or not
/// responding, older ones drained nodes too.
pub fn node_not_avail_desc(c: &Controller, j: &Job, v: ProtocolVersion) -> String {
    let required: Vec<usize> = j
        .req
        .req_nodes()
        .and_then(|r| crate::sched::client_hosts(&c.conf, r).ok())
        .map(|names| names.iter().filter_map(|n| c.node_index(n)).collect())
        .unwrap_or_default();
    let names: Vec<&str> = c.conf.partitions[j.part]
        .nodes
        .iter()
        .copied()
        .filter(|i| required.is_empty() || required.contains(i))
        .map(|i| &c.nodes[i])
        .filter(|n| {
            let down = n.base == super::node::Base::Down || n.no_respond;
            down || (v < ProtocolVersion::V24_11 && n.drain)
        })
        .map(|n| n.name())
        .collect();
    if names.is_empty() {
        "ReqNodeNotAvail, May be reserved for other job".to_string()
    } else {
        let list = slurm_conf::compress(&names).unwrap_or_else(|_| names.join(","));
        format!("ReqNodeNotAvail, UnavailableNodes:{list}")
    }
}

impl Controller {
    /// Before a scheduling pass: begin times that came, released jobs
    /// that get their begin time, reasons kept as stock shows them.
    /// Only the jobs a pass looks at (`ids`): a pass over every pending
    /// job would make each submit cost O(queue).
    pub(crate) fn refresh_eligibility(&mut self, now: Time, ids: &[u32]) {
        // Reads first: a record is copied (shared with the snapshot) only
        // when it changes.
        for &id in ids {
            let Some(j) = self.jobs.get(&id) else {
                continue;
            };
            // Held, or requeued and still completing its last run.
            if is_held(j) || !j.completing.is_empty() {
                continue;
            }
            let waiting = j.eligible_time != 0 && j.eligible_time > now;
            let change = j.eligible_time == 0
                || (waiting && j.state_reason != reason::WAIT_TIME)
                || (!waiting && j.state_reason == reason::WAIT_TIME);
            if !change {
                continue;
            }
            let Some(j) = self.jobs.get_mut(&id) else {
                continue;
            };
            if j.eligible_time == 0 {
                j.eligible_time = now;
            }
            if j.eligible_time > now {
                j.state_reason = reason::WAIT_TIME;
                j.state_desc = None;
            } else if j.state_reason == reason::WAIT_TIME {
                j.state_reason = reason::WAIT_NO_REASON;
            }
            self.last_job_update = now;
        }
    }

    /// Why a pending job that found no nodes waits: stock's ReqNodeNotAvail
    /// when nodes it needs are out of service (drained, down, not
    /// responding) so that it could not run even on an empty cluster, else
    /// Resources. Sets the job's `state_desc` as stock words it.
    pub(crate) fn no_nodes_reason(&mut self, job_id: u32) -> u32 {
        let Some(j) = self.jobs.get(&job_id) else {
            return reason::WAIT_RESOURCES;
        };
        let out_of_service =
            |n: &super::node::Node| n.drain || n.base == super::node::Base::Down || n.no_respond;
        let part = &self.conf.partitions[j.part];
        let required: Vec<usize> = j
            .req
            .req_nodes()
            .and_then(|r| crate::sched::client_hosts(&self.conf, r).ok())
            .map(|names| names.iter().filter_map(|n| self.node_index(n)).collect())
            .unwrap_or_default();
        let usable: Vec<usize> = part
            .nodes
            .iter()
            .copied()
            .filter(|&i| !out_of_service(&self.nodes[i]))
            .collect();
        let usable_cpus: u32 = usable
            .iter()
            .map(|&i| u32::from(self.nodes[i].def.cpus))
            .sum();
        let blocked = required.iter().any(|&i| out_of_service(&self.nodes[i]))
            || (usable.len() as u32) < j.min_nodes
            || usable_cpus < j.min_cpus;
        if !blocked {
            if let Some(j) = self.jobs.get_mut(&job_id) {
                if j.state_reason == reason::WAIT_NODE_NOT_AVAIL {
                    j.state_desc = None;
                }
            }
            return reason::WAIT_RESOURCES;
        }
        let desc = node_not_avail_desc(self, j, ProtocolVersion::V26_05);
        if let Some(j) = self.jobs.get_mut(&job_id) {
            j.state_desc = Some(desc);
        }
        reason::WAIT_NODE_NOT_AVAIL
    }

    /// REQUEST_UPDATE_JOB: hold/release and the fields `scontrol update
    /// job` may change while a job waits.
    pub(crate) fn update_job(
        &mut self,
        now: Time,
        uid: u32,
        job_id: u32,
        d: &JobDescMsg,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        // Ownership first, as stock's update_job: a stranger's Dependency=
        // is the same security violation as any other field.
        match self.jobs.get(&job_id) {
            None => return Reply::Err(StateError::InvalidJobId),
            Some(j) if !self.conf.owner_or_operator(uid, j.user.uid) => {
                tracing::error!(uid, job_id, "security violation: job update");
                return Reply::Err(StateError::InvalidUserId);
            }
            Some(_) => {}
        }
        let operator = self.conf.is_admin(uid);
        if let Some(dep) = d.dependency.as_deref() {
            let r = self.update_dependency(now, uid, job_id, dep, fx);
            if r != Reply::Ok {
                return r;
            }
        }
        let Some(j) = self.jobs.get_mut(&job_id) else {
            return Reply::Err(StateError::InvalidJobId);
        };
        if j.state.is_finished() {
            return Reply::Err(StateError::JobFinished);
        }
        let cur_name = self.conf.partitions[j.part].name();
        let new_part = match d
            .partition
            .as_deref()
            .filter(|p| !p.is_empty() && *p != cur_name)
        {
            Some(_) if j.state != JobState::Pending => {
                return Reply::Err(StateError::JobNotPending)
            }
            Some(p) => match self.conf.partition_index(p) {
                Some(i) => Some(i),
                None => return Reply::Err(StateError::InvalidPartitionName),
            },
            None => None,
        };
        let max_time = self.conf.partitions[new_part.unwrap_or(j.part)].max_time();
        let pending = j.state == JobState::Pending;
        let mut rc = Ok(());

        // Partition, then node count, then time limit, then priority: the
        // order stock checks them, stopping at the first refusal.
        if let Some(p) = new_part.filter(|&p| p != j.part) {
            if !pending {
                return Reply::Err(StateError::JobNotPending);
            }
            j.part = p;
            // Limits of the old partition no longer apply.
            if matches!(
                j.state_reason,
                reason::WAIT_PART_TIME_LIMIT | reason::WAIT_PART_NODE_LIMIT
            ) {
                j.state_reason = reason::WAIT_NO_REASON;
            }
            tracing::info!(job_id, part = p, "partition updated");
        }
        if d.min_nodes != NO_VAL && d.min_nodes != INFINITE && d.min_nodes != j.min_nodes {
            if !pending {
                return Reply::Err(StateError::JobNotPending);
            }
            if d.min_nodes == 0 {
                return Reply::Err(StateError::InvalidNodeCount);
            }
            // The CPUs the tasks then need may not wrap.
            let Some(task_cpus) = j
                .num_tasks
                .max(d.min_nodes)
                .checked_mul(u32::from(j.cpus_per_task))
                .filter(|&n| n < NO_VAL)
            else {
                return Reply::Err(StateError::BadTaskCount);
            };
            j.min_nodes = d.min_nodes;
            j.max_nodes = if d.max_nodes != NO_VAL && d.max_nodes != 0 {
                d.max_nodes.max(d.min_nodes)
            } else {
                j.max_nodes.max(d.min_nodes)
            };
            if j.num_tasks < j.min_nodes {
                j.num_tasks = j.min_nodes;
            }
            j.min_cpus = j.min_cpus.max(task_cpus);
            j.req.min_nodes = j.min_nodes;
            // What the user asked shows as the range (24.11's scontrol
            // sends a maximum with the count, 22.05's does not).
            if d.max_nodes != NO_VAL && d.max_nodes != 0 {
                j.req.max_nodes = j.max_nodes;
            }
            if j.state_reason == reason::WAIT_PART_NODE_LIMIT {
                j.state_reason = reason::WAIT_NO_REASON;
            }
        }
        if d.time_limit != NO_VAL && d.time_limit != j.time_limit {
            let lower = j.time_limit == INFINITE || (d.time_limit < j.time_limit);
            if operator || lower {
                let old = if j.time_limit == INFINITE {
                    365 * 24 * 60
                } else {
                    j.time_limit
                };
                j.time_limit = d.time_limit;
                if j.state == JobState::Running {
                    j.end_time = if d.time_limit == INFINITE {
                        now + 365 * 24 * 3600
                    } else {
                        (j.end_time + (i64::from(d.time_limit) - i64::from(old)) * 60).max(now)
                    };
                }
            } else if pending && max_time >= d.time_limit {
                // Users may raise a waiting job's limit up to the partition's.
                j.time_limit = d.time_limit;
            } else {
                tracing::info!(job_id, uid, "attempt to increase time limit");
                return Reply::Err(StateError::AccessDenied);
            }
            j.req.time_limit = j.time_limit;
        }
        // A pending job's partition time limit is checked afresh.
        if pending {
            let over = max_time != INFINITE && j.time_limit != INFINITE && j.time_limit > max_time;
            if over && !is_held(j) {
                j.state_reason = reason::WAIT_PART_TIME_LIMIT;
            } else if !over && j.state_reason == reason::WAIT_PART_TIME_LIMIT {
                j.state_reason = reason::WAIT_NO_REASON;
            }
        }
        if d.priority != NO_VAL {
            rc = self.update_priority(now, uid, operator, job_id, d);
        }
        // As stock's update_job ends: what changed stays, but a pending
        // job its partition's access rules exclude is answered
        // ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE and waits with
        // PartitionConfig (a held job keeps its hold reason).
        let conf = self.conf.clone();
        if let Some(j) = self.jobs.get_mut(&job_id) {
            if rc.is_ok()
                && j.state == JobState::Pending
                && super::partition::access_held(&conf, &conf.partitions[j.part], j)
            {
                if !matches!(j.state_reason, reason::WAIT_HELD | reason::WAIT_HELD_USER) {
                    j.state_reason = reason::WAIT_PART_CONFIG;
                    j.state_desc = None;
                }
                rc = Err(StateError::PartConfigUnavailable);
            }
        }
        self.last_job_update = now;
        self.schedule(now, fx);
        Reply::from(rc)
    }

    /// The priority part of `_update_job`: hold, uhold, release.
    fn update_priority(
        &mut self,
        now: Time,
        uid: u32,
        operator: bool,
        job_id: u32,
        d: &JobDescMsg,
    ) -> Result<(), StateError> {
        let Some(j) = self.jobs.get_mut(&job_id) else {
            return Err(StateError::InvalidJobId);
        };
        let user_hold = d.alloc_sid == ALLOC_SID_USER_HOLD;
        if j.priority == d.priority {
            if j.priority == 0 && operator {
                // An operator may turn one kind of hold into the other.
                j.state_reason = if user_hold {
                    reason::WAIT_HELD_USER
                } else {
                    reason::WAIT_HELD
                };
            }
            return Ok(());
        }
        if j.priority == 0 && d.priority == INFINITE {
            if operator || j.state_reason == reason::WAIT_HELD_USER {
                tracing::info!(job_id, uid, "hold released");
                if j.eligible_time < now {
                    j.eligible_time = 0;
                }
                j.priority = BASIC_PRIORITY;
                j.state_reason = reason::WAIT_NO_REASON;
                j.state_desc = None;
                j.exit_code = 0;
                j.ctl.special_exit = false;
                return Ok(());
            }
            return Err(StateError::AccessDenied);
        }
        if j.priority == 0 {
            return Err(StateError::JobHeld);
        }
        if d.priority == INFINITE {
            // Already released.
            return Ok(());
        }
        if !operator && d.priority > j.priority {
            return Err(StateError::AccessDenied);
        }
        if d.priority == 0 {
            tracing::info!(job_id, uid, "job held");
            j.priority = 0;
            if j.eligible_time < now {
                j.eligible_time = 0;
            }
            j.state_reason = if !operator || user_hold {
                reason::WAIT_HELD_USER
            } else {
                reason::WAIT_HELD
            };
            j.state_desc = None;
            Ok(())
        } else {
            j.priority = d.priority;
            if operator {
                Ok(())
            } else {
                Err(StateError::PriorityNotPersistent)
            }
        }
    }

    /// REQUEST_JOB_REQUEUE (scontrol requeue[hold], or slurmd after a
    /// failed launch with `JOB_LAUNCH_FAILED`).
    pub(crate) fn requeue_request(
        &mut self,
        now: Time,
        uid: u32,
        job_id: u32,
        flags: u32,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        let r = self.requeue_unscheduled(now, uid, job_id, flags, fx);
        if r == Reply::Ok {
            self.schedule(now, fx);
        }
        r
    }

    /// [`Controller::requeue_request`] without the scheduling pass after
    /// it (an array's records are all requeued before one pass).
    pub(crate) fn requeue_unscheduled(
        &mut self,
        now: Time,
        uid: u32,
        job_id: u32,
        flags: u32,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        let Some(j) = self.jobs.get(&job_id) else {
            return Reply::Err(StateError::InvalidJobId);
        };
        if !self.conf.owner_or_operator(uid, j.user.uid) {
            return Reply::Err(StateError::AccessDenied);
        }
        if !requeue_allowed(self, j) {
            return Reply::Err(StateError::Disabled);
        }
        if !j.req.has_script() {
            return Reply::Err(StateError::BatchOnly);
        }
        if j.state == JobState::Pending {
            return Reply::Err(StateError::JobPending);
        }
        // Stock applies the special exit hold, then the requeue hold: with
        // both flags (scontrol requeuehold State=SpecialExit) the second
        // one's text is the one left.
        let hold = if flags & JOB_REQUEUE_HOLD != 0 {
            Some("job requeued in held state")
        } else if flags & JOB_SPECIAL_EXIT != 0 {
            Some("job requeued in special exit state")
        } else if flags & JOB_LAUNCH_FAILED != 0 && !self.nohold_on_prolog_fail() {
            Some("launch failed requeued held")
        } else {
            None
        };
        tracing::info!(job_id, uid, flags, "requeue per user/system request");
        self.requeue_job(now, job_id, hold, fx);
        if flags & JOB_SPECIAL_EXIT != 0 {
            if let Some(j) = self.jobs.get_mut(&job_id) {
                j.ctl.special_exit = true;
            }
        }
        Reply::Ok
    }

    fn nohold_on_prolog_fail(&self) -> bool {
        self.conf
            .raw
            .raw("SchedulerParameters")
            .is_some_and(|s| s.to_ascii_lowercase().contains("nohold_on_prolog_fail"))
    }

    /// Puts a job back in the queue: its nodes are released (they finish
    /// the old run as COMPLETING). While they do, the job shows COMPLETING
    /// with the reason it had while running, and keeps its times; once
    /// the last epilog is in, [`Controller::requeue_fini`] makes it a new
    /// submission that waits out the credential lifetime (stock's
    /// `batch_requeue_fini`).
    pub(crate) fn requeue_job(
        &mut self,
        now: Time,
        job_id: u32,
        hold: Option<&str>,
        fx: &mut Vec<Effect>,
    ) {
        let running = self
            .jobs
            .get(&job_id)
            .is_some_and(|j| j.state == JobState::Running);
        if running {
            self.end_job(now, job_id, JobState::Pending, fx);
        }
        let Some(j) = self.jobs.get_mut(&job_id) else {
            return;
        };
        j.state = JobState::Pending;
        j.ctl.restart_cnt = j.ctl.restart_cnt.saturating_add(1);
        j.ctl.special_exit = false;
        j.alloc.clear();
        j.batch_host = None;
        j.exit_code = 0;
        j.derived_ec = 0;
        j.launch_failed = false;
        j.cancelled_by = None;
        // Not eligible before requeue_fini gives it a begin time.
        j.eligible_time = now + REQUEUE_DELAY;
        if !is_held(j) {
            j.state_desc = None;
            j.state_reason = reason::WAIT_NO_REASON;
        }
        if let Some(why) = hold {
            j.priority = 0;
            j.state_reason = reason::WAIT_HELD_USER;
            j.state_desc = Some(why.to_string());
        }
        let completing = !j.completing.is_empty();
        self.last_job_update = now;
        if !completing {
            self.requeue_fini(now, job_id);
        }
    }

    /// A requeued job whose nodes finished the old run: it starts over
    /// as a new submission, eligible once the old credential expired.
    pub(crate) fn requeue_fini(&mut self, now: Time, job_id: u32) {
        let Some(j) = self.jobs.get_mut(&job_id) else {
            return;
        };
        if j.state != JobState::Pending || !j.completing.is_empty() {
            return;
        }
        j.start_time = 0;
        j.end_time = 0;
        // A new submit time, never equal to the last one.
        j.submit_time = if j.submit_time == now { now + 1 } else { now };
        j.eligible_time = now + REQUEUE_DELAY;
        // A job held while it ran stays held (and keeps its hold reason).
        if !is_held(j) {
            j.state_desc = None;
            j.state_reason = reason::WAIT_TIME;
        }
        self.last_job_update = now;
    }

    /// A node of a running job failed: requeue it when it allows that
    /// (true), else the caller ends it NODE_FAIL.
    pub(crate) fn requeue_on_node_fail(
        &mut self,
        now: Time,
        job_id: u32,
        fx: &mut Vec<Effect>,
    ) -> bool {
        let Some(j) = self.jobs.get(&job_id) else {
            return false;
        };
        if j.state != JobState::Running || !j.req.has_script() || !requeue_allowed(self, j) {
            return false;
        }
        tracing::info!(job_id, "requeue due to node failure");
        self.requeue_job(now, job_id, None, fx);
        true
    }

    /// The prolog failed on `node` (batch completion or launch reply with
    /// ESLURMD_PROLOG_FAILED): drain the node and requeue the job held,
    /// as stock does on its slurmd's requeue request and registration.
    pub(crate) fn prolog_failed(
        &mut self,
        now: Time,
        job_id: u32,
        node: Option<&str>,
        fx: &mut Vec<Effect>,
    ) {
        let idx = node
            .and_then(|n| self.node_index(n))
            .or_else(|| self.jobs.get(&job_id).and_then(|j| j.batch_host));
        if let Some(i) = idx {
            self.drain_for_prolog(now, i);
        }
        let Some(j) = self.jobs.get(&job_id) else {
            return;
        };
        if j.state != JobState::Running {
            return;
        }
        if requeue_allowed(self, j) && j.req.has_script() {
            let hold = (!self.nohold_on_prolog_fail()).then_some("launch failed requeued held");
            self.requeue_job(now, job_id, hold, fx);
        } else {
            // Not requeueable: stock's slurmd then cancels the job.
            if let Some(j) = self.jobs.get_mut(&job_id) {
                j.launch_failed = true;
                j.state_reason = reason::FAIL_LAUNCH;
            }
            self.end_job(now, job_id, JobState::Failed, fx);
        }
        self.schedule(now, fx);
    }

    /// Registration status ESLURMD_PROLOG_FAILED, or our own detection.
    pub(crate) fn drain_for_prolog(&mut self, now: Time, i: usize) {
        let n = &mut self.nodes[i];
        if !n.drain {
            tracing::error!(node = n.name(), "prolog failure, draining the node");
            n.drain = true;
            n.set_reason(Some("Prolog error".into()), self.conf.slurm_user_uid, now);
            self.last_node_update = now;
        }
    }

    /// scancel with `--signal` or `-b`: REQUEST_SIGNAL_TASKS to the job's
    /// nodes (the batch host only for `-b`). SIGKILL without `-b` is a
    /// cancel and does not come here.
    pub(crate) fn signal_job(
        &mut self,
        uid: u32,
        job_id: u32,
        signal: u16,
        flags: u16,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        let Some(j) = self.jobs.get(&job_id) else {
            return Reply::Err(StateError::InvalidJobId);
        };
        if !self.conf.owner_or_operator(uid, j.user.uid) {
            return Reply::Err(StateError::AccessDenied);
        }
        if j.state.is_finished() {
            return Reply::Err(StateError::AlreadyDone);
        }
        if j.state != JobState::Running {
            return Reply::Err(StateError::NotAlterableNow);
        }
        let batch = flags & KILL_JOB_BATCH != 0;
        if batch && !j.req.has_script() {
            return Reply::Err(StateError::ScriptMissing);
        }
        let (targets, step_id, flags): (Vec<usize>, u32, u16) = if batch {
            (
                j.batch_host.into_iter().collect(),
                StepId::BATCH_SCRIPT,
                flags,
            )
        } else {
            let f = if flags & (KILL_FULL_JOB | KILL_STEPS_ONLY) != 0 {
                flags
            } else {
                KILL_STEPS_ONLY
            };
            (j.alloc.iter().map(|a| a.node).collect(), NO_STEP, f)
        };
        tracing::info!(job_id, uid, signal, flags, "signal job");
        for i in targets {
            let msg = Message::RequestSignalTasks(SignalTasksMsg {
                step_id: StepId {
                    sluid: 0,
                    job_id,
                    step_id,
                    step_het_comp: NO_VAL,
                },
                flags,
                signal,
            });
            let o: Option<Outbound> =
                msgs::outbound(&self.nodes[i], msg, Purpose::Signal { job_id });
            if let Some(o) = o {
                fx.push(Effect::Send(Box::new(o)));
            }
        }
        Reply::Ok
    }

    /// `scancel <job>.<step>`: REQUEST_SIGNAL_TASKS to the nodes of that
    /// step only, as stock's job_step_signal: the job's owner, root or
    /// SlurmUser, a running job, a known step. A stranger gets
    /// ESLURM_USER_ID_MISSING, from 26.05 ESLURM_ACCESS_DENIED (its
    /// kill_job_step checks access first).
    pub(crate) fn signal_step(
        &mut self,
        uid: u32,
        job_id: u32,
        step_id: u32,
        signal: u16,
        version: ProtocolVersion,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        let Some(j) = self.jobs.get(&job_id) else {
            return Reply::Err(StateError::InvalidJobId);
        };
        if !self.conf.owner_or_operator(uid, j.user.uid) {
            tracing::error!(uid, job_id, "security violation: step cancel");
            return Reply::Err(if version >= ProtocolVersion::V26_05 {
                StateError::AccessDenied
            } else {
                StateError::InvalidUserId
            });
        }
        if j.state.is_finished() {
            return Reply::Err(StateError::AlreadyDone);
        }
        if j.state != JobState::Running {
            return Reply::Err(StateError::NotAlterableNow);
        }
        let Some(step) = self.steps.get(&job_id).and_then(|s| s.steps.get(&step_id)) else {
            return Reply::Err(StateError::InvalidJobId);
        };
        tracing::info!(job_id, step_id, uid, signal, "signal step");
        for &i in &step.nodes {
            let msg = Message::RequestSignalTasks(SignalTasksMsg {
                step_id: StepId {
                    sluid: 0,
                    job_id,
                    step_id,
                    step_het_comp: NO_VAL,
                },
                flags: 0,
                signal,
            });
            if let Some(o) = msgs::outbound(&self.nodes[i], msg, Purpose::Signal { job_id }) {
                fx.push(Effect::Send(Box::new(o)));
            }
        }
        Reply::Ok
    }
}

#[cfg(test)]
mod tests;
