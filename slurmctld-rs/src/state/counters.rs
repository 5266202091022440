//! Monotonic event counters kept by the state machine for `sdiag`.
//!
//! They only ever grow (wrapping), so the daemon shell implements
//! `sdiag -r` by remembering a baseline and reporting differences; the
//! state machine never needs a "reset" command, and replaying the log
//! after a restart cannot make them go backwards within one run.

use super::job::JobState;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub jobs_submitted: u32,
    pub jobs_started: u32,
    pub jobs_completed: u32,
    pub jobs_canceled: u32,
    pub jobs_failed: u32,
    /// Main scheduler passes over a non-empty queue.
    pub schedule_cycles: u32,
    /// Sum over cycles of jobs examined (for the mean depth).
    pub schedule_depth_sum: u32,
    /// Pending jobs seen by the last cycle.
    pub schedule_queue_len: u32,
    /// Backfill passes.
    pub bf_cycles: u32,
    /// Jobs the backfill pass started.
    pub bf_backfilled_jobs: u32,
    /// Sum over backfill passes of the jobs each tested.
    pub bf_depth_sum: u32,
    /// Jobs the last backfill pass tested, and the queue it saw.
    pub bf_last_depth: u32,
    pub bf_queue_len: u32,
}

impl Counters {
    pub fn submitted(&mut self) {
        self.jobs_submitted = self.jobs_submitted.wrapping_add(1);
    }

    pub fn started(&mut self) {
        self.jobs_started = self.jobs_started.wrapping_add(1);
    }

    /// A job reached a final state (as stock counts them: timeouts, node
    /// failures and bad exits all count as failed).
    pub fn ended(&mut self, state: JobState) {
        let c = match state {
            JobState::Pending | JobState::Running => return,
            JobState::Complete => &mut self.jobs_completed,
            JobState::Cancelled => &mut self.jobs_canceled,
            // Failed, Timeout, NodeFail and any failure state added later.
            _ => &mut self.jobs_failed,
        };
        *c = c.wrapping_add(1);
    }

    /// One scheduler pass that looked at `depth` of `queue_len` pending jobs.
    pub fn schedule_cycle(&mut self, depth: usize, queue_len: usize) {
        self.schedule_cycles = self.schedule_cycles.wrapping_add(1);
        let depth = u32::try_from(depth).unwrap_or(u32::MAX);
        self.schedule_depth_sum = self.schedule_depth_sum.wrapping_add(depth);
        self.schedule_queue_len = u32::try_from(queue_len).unwrap_or(u32::MAX);
    }

    /// One backfill pass that tested `depth` of `queue_len` pending jobs.
    pub fn backfill_cycle(&mut self, depth: usize, queue_len: usize) {
        self.bf_cycles = self.bf_cycles.wrapping_add(1);
        let depth = u32::try_from(depth).unwrap_or(u32::MAX);
        self.bf_depth_sum = self.bf_depth_sum.wrapping_add(depth);
        self.bf_last_depth = depth;
        self.bf_queue_len = u32::try_from(queue_len).unwrap_or(u32::MAX);
    }

    pub fn backfilled(&mut self) {
        self.bf_backfilled_jobs = self.bf_backfilled_jobs.wrapping_add(1);
    }

    /// What happened since `base` (a snapshot taken at the last reset).
    pub fn since(&self, base: &Counters) -> Counters {
        Counters {
            jobs_submitted: self.jobs_submitted.wrapping_sub(base.jobs_submitted),
            jobs_started: self.jobs_started.wrapping_sub(base.jobs_started),
            jobs_completed: self.jobs_completed.wrapping_sub(base.jobs_completed),
            jobs_canceled: self.jobs_canceled.wrapping_sub(base.jobs_canceled),
            jobs_failed: self.jobs_failed.wrapping_sub(base.jobs_failed),
            schedule_cycles: self.schedule_cycles.wrapping_sub(base.schedule_cycles),
            schedule_depth_sum: self
                .schedule_depth_sum
                .wrapping_sub(base.schedule_depth_sum),
            schedule_queue_len: self.schedule_queue_len,
            bf_cycles: self.bf_cycles.wrapping_sub(base.bf_cycles),
            bf_backfilled_jobs: self
                .bf_backfilled_jobs
                .wrapping_sub(base.bf_backfilled_jobs),
            bf_depth_sum: self.bf_depth_sum.wrapping_sub(base.bf_depth_sum),
            bf_last_depth: self.bf_last_depth,
            bf_queue_len: self.bf_queue_len,
        }
    }
}
