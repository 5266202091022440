//! scancel's intent, decided on the state as it is: whether a signal
//! cancels (logged, ends jobs) or only reaches processes, and which
//! records it touches. Stock's job_signal / job_str_signal semantics.

use super::command::{Effect, Reply, SignalTarget, Time, SIGKILL};
use super::control::{KILL_JOB_BATCH, KILL_STEPS_ONLY};
use super::controller::Controller;
use super::error::{worse, StateError};
use super::job::JobState;
use slurm_wire::pack::NO_VAL;
use slurm_wire::ProtocolVersion;
use std::collections::{BTreeSet, HashSet};

/// Whether `signal` with `flags` only signals processes (stock's
/// job_signal): anything but a plain SIGKILL, or SIGKILL to the batch
/// script (`-b`) or the steps only. A plain SIGKILL cancels (and SIGKILL
/// cancels a pending job whatever the flags).
pub fn signal_only(signal: u16, flags: u16) -> bool {
    signal != SIGKILL || flags & (KILL_JOB_BATCH | KILL_STEPS_ONLY) != 0
}

impl Controller {
    /// [`super::Command::Signal`].
    #[allow(clippy::too_many_arguments)]
    pub(super) fn signal(
        &mut self,
        now: Time,
        uid: u32,
        target: SignalTarget,
        signal: u16,
        flags: u16,
        version: ProtocolVersion,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        match target {
            // One step other than the batch script: just its tasks.
            SignalTarget::Step { job_id, step_id } => {
                self.signal_step(uid, job_id, step_id, signal, version, fx)
            }
            SignalTarget::Tasks { tasks, .. } if !self.tasks_in_bounds(&tasks) => {
                Reply::Err(StateError::InvalidJobId)
            }
            SignalTarget::Tasks { tasks, .. } if tasks.is_empty() => {
                Reply::Err(StateError::InvalidJobId)
            }
            SignalTarget::Tasks {
                array_job_id,
                tasks,
            } => Reply::from(self.signal_tasks(now, uid, array_job_id, tasks, signal, flags, fx)),
            // A signal (not a cancel) to a whole array reaches every task,
            // as stock's job_str_signal walks them.
            SignalTarget::Job(id) if signal_only(signal, flags) && self.arrays.is_array_id(id) => {
                let tasks = self.all_tasks(id);
                Reply::from(self.signal_tasks(now, uid, id, tasks, signal, flags, fx))
            }
            SignalTarget::Job(job_id) => self.signal_one(now, uid, job_id, signal, flags, fx),
        }
    }

    /// A job id outside any array, or an array's id for a cancel.
    pub(super) fn signal_one(
        &mut self,
        now: Time,
        uid: u32,
        job_id: u32,
        signal: u16,
        flags: u16,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        let pending = self
            .jobs
            .get(&job_id)
            .is_some_and(|j| j.state == JobState::Pending);
        if signal_only(signal, flags) && !(signal == SIGKILL && pending) {
            self.signal_job(uid, job_id, signal, flags, fx)
        } else {
            self.kill_request(now, uid, job_id, signal, fx)
        }
    }

    /// Tasks `tasks` of `array_job_id`, as stock treats them: a cancel
    /// ends them all; otherwise the started tasks get the signal with the
    /// client's flags (`-b`, `-f`), and pending ones are cancelled by
    /// SIGKILL (`-b` or not: stock's job_signal and
    /// _signal_pending_job_array_tasks cancel a pending job whatever the
    /// flags) and refuse other signals (ESLURM_TRANSITION_STATE_NO_UPDATE).
    /// Tasks that have no record are ESLURM_INVALID_JOB_ID; the worst
    /// outcome is the answer.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn signal_tasks(
        &mut self,
        now: Time,
        uid: u32,
        array_job_id: u32,
        tasks: Vec<u32>,
        signal: u16,
        flags: u16,
        fx: &mut Vec<Effect>,
    ) -> Result<(), StateError> {
        if !signal_only(signal, flags) {
            let tasks: BTreeSet<u32> = tasks.into_iter().collect();
            return self
                .kill_tasks(now, uid, array_job_id, &tasks, signal, fx)
                .result();
        }
        let pending = |t: &u32| {
            self.arrays
                .find_task(array_job_id, *t)
                .and_then(|id| self.jobs.get(&id))
                .is_some_and(|j| j.state == JobState::Pending)
        };
        let (pending, others): (BTreeSet<u32>, Vec<u32>) = if signal == SIGKILL {
            let (p, o): (Vec<u32>, Vec<u32>) = tasks.into_iter().partition(pending);
            (p.into_iter().collect(), o)
        } else {
            (BTreeSet::new(), tasks)
        };
        // One signal a record (the meta record holds several tasks),
        // picked before anything changes; a pending record answers it
        // after the owner check, as stock does.
        let mut rc = Ok(());
        let mut records: Vec<u32> = Vec::new();
        let mut seen = HashSet::new();
        for t in others {
            match self.arrays.find_task(array_job_id, t) {
                Some(job_id) if seen.insert(job_id) => records.push(job_id),
                Some(_) => {}
                None => rc = worse(rc, Err(StateError::InvalidJobId)),
            }
        }
        if !pending.is_empty() {
            let r = self.kill_tasks(now, uid, array_job_id, &pending, signal, fx);
            rc = worse(rc, r.result());
        }
        for job_id in records {
            let r = self.signal_job(uid, job_id, signal, flags, fx);
            rc = worse(rc, r.result());
        }
        rc
    }

    /// Every task of array `array_job_id`, pending in the meta record or
    /// with a record of its own.
    pub(crate) fn all_tasks(&self, array_job_id: u32) -> Vec<u32> {
        let mut t: BTreeSet<u32> = self.meta_tasks(array_job_id).cloned().unwrap_or_default();
        t.extend(
            self.arrays
                .members(array_job_id)
                .into_iter()
                .filter_map(|id| self.arrays.task_of(id))
                .map(|r| r.task_id)
                .filter(|&t| t != NO_VAL),
        );
        t.into_iter().collect()
    }

    /// The tasks still pending in an array's meta record, while it is one
    /// (not yet a task of its own).
    pub(crate) fn meta_tasks(&self, array_job_id: u32) -> Option<&BTreeSet<u32>> {
        let still_meta = self
            .arrays
            .task_of(array_job_id)
            .is_some_and(|r| r.task_id == NO_VAL);
        let meta = self.arrays.metas.get(&array_job_id)?;
        still_meta.then_some(&meta.pending)
    }
}
