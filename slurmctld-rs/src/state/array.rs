//! Job arrays, kept as stock keeps them: one pending "meta" record (the
//! array job id) holds every task not started yet; when a task starts it
//! is split off into a record of its own with a fresh job id, and the
//! meta record, once down to its last task, becomes that task. Task
//! records point back to their array through [`Arrays::recs`]; the meta
//! record's pending tasks and throttle live in [`Arrays::metas`].

pub use super::arrays::{ArrayMeta, Arrays, TaskRef};
use super::command::{Effect, Outbound, Reply, Time, SIGKILL};
use super::controller::Controller;
use super::error::{worse, StateError};
use super::job::{reason, JobState};
use slurm_wire::msg::job::JobInfo;
use slurm_wire::msg::job_desc::JobDescMsg;
use slurm_wire::pack::{Reader, Writer, NO_VAL};
use slurm_wire::{Message, ProtocolVersion};
use std::collections::BTreeSet;

use super::tasks::num;
pub use super::tasks::{parse_tasks, task_ranges, ArrayError, MAX_MAX_ARRAY_SIZE};

/// `MaxArraySize` when slurm.conf does not set it.
pub const DEFAULT_MAX_ARRAY_SIZE: u32 = 1001;
/// The batch output name 25.11+ controllers store for array jobs.
pub const DEFAULT_ARRAY_STDOUT: &str = "slurm-%A_%a.out";
/// `WAIT_ARRAY_TASK_LIMIT` (same value 22.05..26.05).
pub const WAIT_ARRAY_TASK_LIMIT: u32 = 72;

/// A parsed `--array` value (`0-15:4%2`, `1,3,5` ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArraySpec {
    pub tasks: BTreeSet<u32>,
    /// The `%N` throttle; 0 when none.
    pub max_run: u32,
    /// The step after the first `:`, as stock reports it (1 when none).
    pub step: u32,
}

/// Parses sbatch's `array_inx`.
pub fn parse_spec(s: &str, max: u32) -> Result<ArraySpec, ArrayError> {
    let (list, max_run) = match s.split_once('%') {
        Some((l, m)) => (l, num(m)?),
        None => (s, 0),
    };
    let tasks = parse_tasks(list, max)?;
    // Like stock, the step reported is the one after the first ':'.
    let step = list
        .split_once(':')
        .map(|(_, r)| {
            let digits: String = r.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().unwrap_or(1)
        })
        .unwrap_or(1);
    Ok(ArraySpec {
        tasks,
        max_run,
        step,
    })
}

/// The hex mask stock sends as `array_task_str` (clients turn it back into
/// ranges and append the throttle).
pub fn hexmask(tasks: &BTreeSet<u32>, size: u32) -> String {
    let size = size.max(tasks.iter().next_back().map_or(0, |t| t + 1));
    if size == 0 {
        return "0x0".into();
    }
    let nibbles = size.div_ceil(4);
    let mut s = String::with_capacity(nibbles as usize + 2);
    s.push_str("0x");
    for n in (0..nibbles).rev() {
        let mut v = 0u32;
        for b in 0..4 {
            if tasks.contains(&(n * 4 + b)) {
                v |= 1 << b;
            }
        }
        s.push(char::from_digit(v, 16).unwrap_or('0').to_ascii_uppercase());
    }
    s
}

/// What the scheduler should do with a pending record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Gate {
    /// Not pending (any more), or held: leave it alone.
    Skip,
    /// Not eligible: this pending reason.
    Wait(u32),
    /// May be started if resources allow.
    Go,
}

/// `WAIT_HELD`, `WAIT_HELD_USER`: not touched by dependency tests.
const HELD: [u32; 2] = [8, 16];

impl Controller {
    /// MaxArraySize: task ids a client names are below it.
    pub(crate) fn max_array_size(&self) -> u32 {
        self.conf
            .raw
            .raw("MaxArraySize")
            .and_then(|s| s.trim().parse::<u32>().ok())
            .unwrap_or(DEFAULT_MAX_ARRAY_SIZE)
            .min(MAX_MAX_ARRAY_SIZE)
    }

    /// Submit-time checks of `--array` and `--dependency`, before a job id
    /// is taken; on success what to attach to the new record.
    pub(super) fn submit_ext_check(
        &self,
        desc: &JobDescMsg,
        version: ProtocolVersion,
    ) -> Result<(Option<ArraySpec>, Vec<super::depend::Dep>), StateError> {
        let spec = match desc.array_inx.as_deref().filter(|s| !s.is_empty()) {
            None => None,
            Some(s) => match parse_spec(s, self.max_array_size()) {
                Ok(spec) => Some(spec),
                Err(e) => {
                    tracing::info!("submit refused: {e}");
                    return Err(StateError::InvalidArray);
                }
            },
        };
        let deps = match desc.dependency.as_deref() {
            None => Vec::new(),
            Some(s) => self.parse_dependency(None, s, version >= ProtocolVersion::V23_02)?,
        };
        Ok((spec, deps))
    }

    /// Attaches what [`Controller::submit_ext_check`] found to the new job.
    pub(super) fn submit_ext_attach(
        &mut self,
        job_id: u32,
        ext: (Option<ArraySpec>, Vec<super::depend::Dep>),
    ) {
        let (spec, deps) = ext;
        if !deps.is_empty() {
            self.deps.insert(job_id, deps);
        }
        let Some(spec) = spec else {
            return;
        };
        let (Some(&min), Some(&max)) = (spec.tasks.iter().next(), spec.tasks.iter().next_back())
        else {
            return;
        };
        // Stock adds these to the job's environment at submit.
        if let Some(j) = self.jobs.get_mut(&job_id) {
            let vars = [
                ("SLURM_ARRAY_TASK_COUNT", spec.tasks.len() as u32),
                ("SLURM_ARRAY_TASK_MIN", min),
                ("SLURM_ARRAY_TASK_MAX", max),
                ("SLURM_ARRAY_TASK_STEP", spec.step),
            ]
            .map(|(k, v)| Some(format!("{k}={v}")));
            if let Err(e) = j.req.modify(|d| d.environment.extend(vars)) {
                tracing::error!(job_id, "job request unreadable: {e}");
            }
        }
        let single = spec.tasks.len() == 1;
        self.arrays.insert_rec(
            job_id,
            TaskRef {
                array_job_id: job_id,
                task_id: if single { min } else { NO_VAL },
            },
        );
        self.arrays.metas.insert(
            job_id,
            ArrayMeta {
                pending: if single { BTreeSet::new() } else { spec.tasks },
                bitmap_size: max + 1,
                max_run_tasks: spec.max_run,
                failed: false,
            },
        );
    }

    /// Tasks of array `array_job_id` running now.
    fn running_tasks(&self, array_job_id: u32) -> u32 {
        self.arrays
            .recs()
            .iter()
            .filter(|(id, r)| {
                r.array_job_id == array_job_id
                    && self
                        .jobs
                        .get(id)
                        .is_some_and(|j| j.state == JobState::Running)
            })
            .count() as u32
    }

    /// Dependencies and array throttles, tested before each start attempt.
    pub(super) fn gate(&mut self, now: Time, job_id: u32, fx: &mut Vec<Effect>) -> Gate {
        let Some(j) = self.jobs.get(&job_id) else {
            return Gate::Skip;
        };
        if j.state != JobState::Pending || HELD.contains(&j.state_reason) {
            return Gate::Skip;
        }
        if j.state_reason == super::depend::WAIT_DEP_INVALID {
            return Gate::Skip;
        }
        match self.test_dependencies(now, job_id) {
            super::depend::Outcome::Ready => {}
            super::depend::Outcome::Waiting => return Gate::Wait(super::depend::WAIT_DEPENDENCY),
            super::depend::Outcome::Failed => {
                if self.kill_invalid_depend() {
                    tracing::info!(job_id, "dependency can never be satisfied: cancelled");
                    self.end_job(now, job_id, JobState::Cancelled, fx);
                    return Gate::Skip;
                }
                return Gate::Wait(super::depend::WAIT_DEP_INVALID);
            }
        }
        if let Some(r) = self.arrays.task_of(job_id) {
            let max = self
                .arrays
                .metas
                .get(&r.array_job_id)
                .map_or(0, |m| m.max_run_tasks);
            if max != 0 && self.running_tasks(r.array_job_id) >= max {
                return Gate::Wait(WAIT_ARRAY_TASK_LIMIT);
            }
        }
        Gate::Go
    }

    /// Sets a pending reason found by [`Controller::gate`].
    pub(super) fn set_wait_reason(&mut self, now: Time, job_id: u32, r: u32) {
        if let Some(j) = self.jobs.get_mut(&job_id) {
            if j.state_reason != r {
                j.state_reason = r;
                // ReqNodeNotAvail's text names the nodes (set with it).
                if r != reason::WAIT_NODE_NOT_AVAIL {
                    j.state_desc = None;
                }
                self.last_job_update = now;
            }
        }
    }

    /// Starts pending record `job_id` (for an array's meta record, its
    /// next task only) on `alloc`; returns the id of the record started.
    /// Backfill uses this: further tasks must go through its plan.
    pub(crate) fn start_one(
        &mut self,
        now: Time,
        job_id: u32,
        alloc: Vec<super::job::NodeAlloc>,
        fx: &mut Vec<Effect>,
    ) -> u32 {
        let id = self.split_for_start(now, job_id);
        self.start_job(now, id, alloc, fx);
        id
    }

    /// Starts pending record `job_id` on `alloc`; for an array's meta
    /// record, then as many more of its tasks as the throttle and free
    /// resources allow in this same pass, as stock does.
    pub(super) fn start_pending(
        &mut self,
        now: Time,
        job_id: u32,
        alloc: Vec<super::job::NodeAlloc>,
        fx: &mut Vec<Effect>,
    ) {
        let id = self.split_for_start(now, job_id);
        self.start_job(now, id, alloc, fx);
        if id == job_id {
            return;
        }
        loop {
            match self.gate(now, job_id, fx) {
                Gate::Go => {}
                Gate::Skip => return,
                Gate::Wait(r) => {
                    self.set_wait_reason(now, job_id, r);
                    return;
                }
            }
            let Some(j) = self.jobs.get(&job_id) else {
                return;
            };
            let req = crate::sched::Request::of(j);
            let Some(alloc) = crate::sched::select(&self.conf, &self.nodes, j.part, &req) else {
                self.set_wait_reason(now, job_id, reason::WAIT_RESOURCES);
                return;
            };
            let id = self.split_for_start(now, job_id);
            self.start_job(now, id, alloc, fx);
            if id == job_id {
                return;
            }
        }
    }

    /// Before pending record `job_id` starts: an array's meta record with
    /// several tasks splits its lowest task off into a new record (a new
    /// job id), which is returned; the meta record keeps the array job id
    /// and, once down to one task, becomes that task.
    pub(super) fn split_for_start(&mut self, now: Time, job_id: u32) -> u32 {
        let Some(r) = self.arrays.task_of(job_id) else {
            return job_id;
        };
        if r.task_id != NO_VAL {
            return job_id;
        }
        let Some(first) = self
            .arrays
            .metas
            .get(&job_id)
            .and_then(|m| m.pending.first().copied())
        else {
            return job_id;
        };
        self.split_task(now, job_id, first)
    }

    /// Fills the array fields of a batch launch (and 25.11+'s default
    /// output name for arrays).
    pub(super) fn patch_launch(&self, job_id: u32, o: &mut Outbound) {
        let Some(r) = self.arrays.task_of(job_id) else {
            return;
        };
        let v = o.version;
        let Message::RequestBatchJobLaunch(m) = &mut o.msg else {
            return;
        };
        m.array_job_id = r.array_job_id;
        m.array_task_id = r.task_id;
        let no_out = self
            .jobs
            .get(&job_id)
            .is_some_and(|j| j.req.std_out().is_none());
        if no_out && v >= ProtocolVersion::V25_11 {
            m.std_out = Some(DEFAULT_ARRAY_STDOUT.into());
            m.cred.cred.arg.job_std_out = Some(DEFAULT_ARRAY_STDOUT.into());
        }
    }

    /// REQUEST_KILL_JOB for a plain job id: the whole array when it names
    /// one, else the one record.
    pub(super) fn kill_request(
        &mut self,
        now: Time,
        uid: u32,
        job_id: u32,
        signal: u16,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        if !self.arrays.is_array_id(job_id) {
            return self.kill(now, uid, job_id, signal, fx);
        }
        let members = self.arrays.members(job_id);
        if members
            .iter()
            .filter_map(|id| self.jobs.get(id))
            .any(|j| !self.conf.owner_or_operator(uid, j.user.uid))
        {
            tracing::error!(uid, job_id, "kill refused: not the owner");
            return Reply::Err(StateError::AccessDenied);
        }
        if members.is_empty() {
            return Reply::Err(StateError::InvalidJobId);
        }
        let (mut rc, mut done) = (Ok(()), 0);
        // The meta record first, so no pending task starts meanwhile.
        let mut order = members.clone();
        order.sort_by_key(|&id| id != job_id);
        for id in &order {
            match self.kill(now, uid, *id, signal, fx) {
                Reply::Err(StateError::AlreadyDone) => done += 1,
                Reply::Err(e) => rc = worse(rc, Err(e)),
                _ => {}
            }
        }
        if rc.is_ok() && done == order.len() {
            return Reply::Err(StateError::AlreadyDone);
        }
        Reply::from(rc)
    }

    /// `scancel 12_3`, `scancel 12_[1-2]`: pending tasks leave the meta
    /// record; started ones are signalled as jobs of their own.
    pub(super) fn kill_tasks(
        &mut self,
        now: Time,
        uid: u32,
        array_job_id: u32,
        tasks: &BTreeSet<u32>,
        signal: u16,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        let members = self.arrays.members(array_job_id);
        let Some(owner) = members
            .iter()
            .find_map(|id| self.jobs.get(id))
            .map(|j| j.user.uid)
        else {
            return Reply::Err(StateError::InvalidJobId);
        };
        if !self.conf.owner_or_operator(uid, owner) {
            tracing::error!(uid, array_job_id, "kill refused: not the owner");
            return Reply::Err(StateError::AccessDenied);
        }
        let mut rc = Ok(());
        let mut left: BTreeSet<u32> = tasks.clone();
        let meta_pending = self.jobs.get(&array_job_id).is_some_and(|j| {
            j.state == JobState::Pending
                && self
                    .arrays
                    .task_of(array_job_id)
                    .is_some_and(|r| r.task_id == NO_VAL)
        });
        if meta_pending {
            if let Some(meta) = self.arrays.metas.get_mut(&array_job_id) {
                let hit: Vec<u32> = left.intersection(&meta.pending).copied().collect();
                if !hit.is_empty() {
                    if signal == SIGKILL {
                        for t in &hit {
                            meta.pending.remove(t);
                        }
                        meta.failed = true;
                        let empty = meta.pending.is_empty();
                        self.last_job_update = now;
                        if empty {
                            if let Some(j) = self.jobs.get_mut(&array_job_id) {
                                j.cancelled_by = Some(uid);
                            }
                            self.end_job(now, array_job_id, JobState::Cancelled, fx);
                        }
                    } else {
                        rc = Err(StateError::NotAlterableNow);
                    }
                    for t in hit {
                        left.remove(&t);
                    }
                }
            }
        }
        for t in left {
            match self.arrays.find_task(array_job_id, t) {
                Some(id) => {
                    if let Reply::Err(e) = self.kill(now, uid, id, signal, fx) {
                        rc = worse(rc, Err(e));
                    }
                }
                None => {
                    tracing::info!(array_job_id, task = t, "kill: no such array task");
                    rc = worse(rc, Err(StateError::InvalidJobId));
                }
            }
        }
        self.schedule(now, fx);
        Reply::from(rc)
    }

    /// Records a task's end for the array's overall result.
    pub(super) fn note_array_end(&mut self, job_id: u32) {
        let (Some(r), Some(j)) = (self.arrays.task_of(job_id), self.jobs.get(&job_id)) else {
            return;
        };
        if j.state.is_finished() && j.state != JobState::Complete {
            if let Some(m) = self.arrays.metas.get_mut(&r.array_job_id) {
                m.failed = true;
            }
        }
    }

    /// Drops array and dependency records of purged jobs.
    pub(super) fn purge_ext(&mut self) {
        let jobs = &self.jobs;
        self.arrays.retain_recs(|id| jobs.contains_key(id));
        self.arrays.metas.retain(|id, _| jobs.contains_key(id));
        self.deps.retain(|id, _| jobs.contains_key(id));
    }
}

/// Ids `scontrol show job ID` answers with, in stock's order (its
/// pack_one_job): the job, or for an array the head record, then the
/// other records newest first.
pub fn single_job_ids(c: &Controller, job_id: u32) -> Vec<u32> {
    let mut ids = Vec::new();
    if c.jobs.contains_key(&job_id) {
        ids.push(job_id);
    }
    let is_head = c
        .arrays
        .task_of(job_id)
        .is_some_and(|r| r.array_job_id == job_id);
    if is_head || !c.jobs.contains_key(&job_id) {
        let mut rest: Vec<u32> = c
            .arrays
            .members(job_id)
            .into_iter()
            .filter(|&id| id != job_id)
            .collect();
        rest.reverse();
        ids.extend(rest);
    }
    ids
}

/// Array and dependency fields of one job's info record.
pub fn decorate(c: &Controller, job_id: u32, info: &mut JobInfo, v: ProtocolVersion) {
    if let Some(d) = info.details.as_mut() {
        d.dependency = c.dependency_text(job_id);
    }
    let Some(r) = c.arrays.task_of(job_id) else {
        return;
    };
    info.array_job_id = r.array_job_id;
    info.array_task_id = r.task_id;
    let meta = c.arrays.metas.get(&r.array_job_id);
    info.array_max_tasks = meta.map_or(0, |m| m.max_run_tasks);
    info.array_task_str = None;
    if r.task_id == NO_VAL && r.array_job_id == job_id {
        if let Some(m) = meta.filter(|m| !m.pending.is_empty()) {
            info.array_task_str = Some(hexmask(&m.pending, m.bitmap_size));
        }
    }
    let no_out = c
        .jobs
        .get(&job_id)
        .is_some_and(|j| j.req.std_out().is_none());
    if no_out && v >= ProtocolVersion::V25_11 {
        info.std_out = Some(DEFAULT_ARRAY_STDOUT.into());
    }
}

// ------------------------------------------------------------ persistence

/// Appends the arrays and dependencies to a snapshot body.
pub fn put_state(w: &mut Writer, c: &Controller) {
    w.count(c.arrays.recs().len());
    for (id, r) in c.arrays.recs() {
        w.u32(*id);
        w.u32(r.array_job_id);
        w.u32(r.task_id);
    }
    w.count(c.arrays.metas.len());
    for (id, m) in &c.arrays.metas {
        w.u32(*id);
        w.u32(m.bitmap_size);
        w.u32(m.max_run_tasks);
        w.bool(m.failed);
        w.count(m.pending.len());
        for t in &m.pending {
            w.u32(*t);
        }
    }
    super::depend::put_deps(w, &c.deps);
}

/// Reads what [`put_state`] wrote (nothing, in a snapshot from before).
pub fn get_state(
    r: &mut Reader<'_>,
) -> Result<(Arrays, super::depend::Deps), slurm_wire::DecodeError> {
    let mut arrays = Arrays::default();
    if r.remaining() == 0 {
        return Ok((arrays, Default::default()));
    }
    let n = r.count(12)?;
    for _ in 0..n {
        let id = r.u32()?;
        let array_job_id = r.u32()?;
        let task_id = r.u32()?;
        arrays.insert_rec(
            id,
            TaskRef {
                array_job_id,
                task_id,
            },
        );
    }
    let n = r.count(17)?;
    for _ in 0..n {
        let id = r.u32()?;
        let bitmap_size = r.u32()?;
        let max_run_tasks = r.u32()?;
        let failed = r.bool()?;
        let k = r.count(4)?;
        let mut pending = BTreeSet::new();
        for _ in 0..k {
            pending.insert(r.u32()?);
        }
        arrays.metas.insert(
            id,
            ArrayMeta {
                pending,
                bitmap_size,
                max_run_tasks,
                failed,
            },
        );
    }
    Ok((arrays, super::depend::get_deps(r)?))
}

/// Splits scancel's job id string: `12` (None: the job or whole array),
/// `12_*` (whole array), `12_3`, `12_[1-3,5]`. Task ids are below `max`
/// (MaxArraySize), as stock's slurm_array_str2bitmap wants them; callers
/// answer a refusal with ESLURM_INVALID_JOB_ID, as stock does.
pub fn parse_job_id_str(s: &str, max: u32) -> Result<(u32, Option<BTreeSet<u32>>), ArrayError> {
    let (id, rest) = match s.split_once('_') {
        Some((id, rest)) => (id, Some(rest)),
        None => (s, None),
    };
    let id = num(id)?;
    if id == 0 {
        return Err(ArrayError::Element(s.to_string()));
    }
    match rest {
        None | Some("*") => Ok((id, None)),
        Some(r) => Ok((id, Some(parse_tasks(&strip_throttle(r), max)?))),
    }
}

/// Drops a `%N` throttle ending an element: clients that build ids from
/// a job's array_task_str (22.05's scancel with a filter: `9_[3-4%2]`)
/// send it, and stock's _parse_array_tok ignores it.
fn strip_throttle(r: &str) -> String {
    let mut out = String::with_capacity(r.len());
    let mut rest = r;
    while let Some(i) = rest.find('%') {
        let (head, tail) = rest.split_at(i);
        let after = tail.get(1..).unwrap_or("");
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let next = after.get(digits..).unwrap_or("");
        out.push_str(head);
        if digits == 0 || !(next.is_empty() || next.starts_with([',', ']'])) {
            // Not a throttle: kept, for parse_tasks to refuse.
            out.push('%');
            rest = after;
        } else {
            rest = next;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
#[path = "array_tests.rs"]
mod tests;
