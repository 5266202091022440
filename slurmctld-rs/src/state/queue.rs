//! Scheduling passes: the state machine's side of scheduling (reasons,
//! starts, the plan kept), over the pure policy layer in [`crate::sched`].
//! The order is stock's ([`order`]): partitions of a higher PriorityTier
//! first, then job priority (from PriorityType's policy), then age (submit
//! time), then id.
//!
//! - The main pass starts jobs in that order until a job cannot start; that
//!   job's reason becomes Resources and the partition is blocked, so later
//!   jobs of it get Priority without being tested. Passes triggered by an
//!   event (submit, completion, node change) look at most at
//!   [`MAIN_DEPTH`] jobs (stock's `default_queue_depth`); every
//!   `sched_interval` the tick looks at the whole queue.
//! - The backfill pass (every `bf_interval`) plans, for up to
//!   [`BF_MAX_JOB_TEST`] jobs, the earliest start of each (see
//!   [`backfill`]), starts those that can run now without delaying
//!   the ones ahead of them, and keeps the plan for `squeue --start`.

use super::array::Gate;
use super::command::{Effect, Time};
use super::control;
use super::controller::Controller;
use super::job::{self, JobState};
use super::partition;
use super::table::Table;
use crate::sched::backfill::{self, Planned, Planner};
use crate::sched::params::{self, BF_MAX_JOB_TEST, MAIN_DEPTH};
use crate::sched::priority::PriorityPolicy;
use crate::sched::{self, cycle::Fingerprint, order};

impl Controller {
    /// Pending jobs in scheduling order at `now`, at most `limit` of them.
    pub fn queue_order(&mut self, now: Time, limit: usize) -> Vec<u32> {
        self.ordered(now, limit, limit)
    }

    /// [`Self::queue_order`] taking at most `per_part` jobs of each partition.
    fn ordered(&mut self, now: Time, limit: usize, per_part: usize) -> Vec<u32> {
        let policy = self.priority_policy();
        order::queue_order(
            &self.conf.partitions,
            &mut self.jobs,
            policy,
            now,
            limit,
            per_part,
        )
    }

    /// The policy slurm.conf's PriorityType gets; logs once where that is
    /// not the policy asked for.
    pub fn priority_policy(&mut self) -> &'static dyn PriorityPolicy {
        let asked = &self.conf.raw.priority_type;
        let (choice, note) = self.sched.priority_policy(asked);
        if let Some(note) = note {
            tracing::warn!("{note}");
        }
        choice.policy
    }

    /// Whether the scheduler may consider `job_id` at all (held jobs,
    /// requests the partition can never satisfy, ... are left alone with
    /// the reason that says why).
    fn eligible(&self, job_id: u32, now: Time) -> bool {
        let Some(j) = self.jobs.get(&job_id) else {
            return false;
        };
        j.state == JobState::Pending
            && control::eligible(j, now)
            && !matches!(
                j.state_reason,
                job::reason::WAIT_PART_TIME_LIMIT
                    | job::reason::WAIT_PART_NODE_LIMIT
                    | job::reason::WAIT_PART_CONFIG
            )
    }

    fn fingerprint(&self, _part: usize) -> Fingerprint {
        (self.sched.freed, self.last_part_update)
    }

    /// The event-triggered pass (submit, completion, node change).
    pub(crate) fn schedule(&mut self, now: Time, fx: &mut Vec<Effect>) {
        self.main_pass(now, MAIN_DEPTH, fx);
    }

    /// The periodic passes: the main one over the whole queue every
    /// `sched_interval`, backfill every `bf_interval`.
    pub(crate) fn schedule_tick(&mut self, now: Time, fx: &mut Vec<Effect>) {
        // Chosen here too, so that a fallback is logged with no job queued.
        let _ = self.priority_policy();
        let full = now - self.sched.last_full >= params::sched_interval(&self.conf);
        if full {
            self.sched.last_full = now;
        }
        self.main_pass(now, if full { usize::MAX } else { MAIN_DEPTH }, fx);
        if now - self.sched.last_backfill >= params::bf_interval(&self.conf) {
            self.sched.last_backfill = now;
            self.backfill(now, fx);
        }
    }

    fn main_pass(&mut self, now: Time, depth: usize, fx: &mut Vec<Effect>) {
        if self.jobs.pending_count() == 0 {
            return;
        }
        let order = self.queue_order(now, depth);
        self.refresh_eligibility(now, &order);
        self.counters
            .schedule_cycle(order.len(), self.jobs.pending_count());
        let mut blocked = vec![false; self.conf.partitions.len()];
        // Nodes a blocked job waits for: later jobs, of any partition,
        // may not take them (stock's avail_node_bitmap in schedule()).
        let mut unavail = vec![false; self.nodes.len()];
        for job_id in order {
            if !self.eligible(job_id, now) {
                continue;
            }
            match self.gate(now, job_id, fx) {
                Gate::Go => {}
                Gate::Skip => continue,
                Gate::Wait(r) => {
                    self.set_wait_reason(now, job_id, r);
                    continue;
                }
            }
            let part = self.jobs[&job_id].part;
            let held =
                partition::held_by(&self.conf, &self.conf.partitions[part], &self.jobs[&job_id]);
            let reason = if let Some(r) = held {
                r
            } else if blocked[part] {
                job::reason::WAIT_PRIORITY
            } else if depth != usize::MAX
                && self.sched.blocked_at.get(part).copied().flatten()
                    == Some((job_id, self.fingerprint(part)))
            {
                // Nothing was freed since it last failed (the full pass
                // re-tests anyway, in case the job itself changed).
                self.block_partition(part, &mut blocked, &mut unavail);
                job::reason::WAIT_RESOURCES
            } else {
                let j = &self.jobs[&job_id];
                let req = sched::Request::of(j);
                let taken = |i: usize| unavail.get(i).copied().unwrap_or(false);
                match sched::select_excluding(&self.conf, &self.nodes, part, &req, &taken) {
                    Some(alloc) => {
                        let _ = self.sched.plan.remove(&job_id);
                        self.start_pending(now, job_id, alloc, fx);
                        continue;
                    }
                    None => {
                        let r = self.no_nodes_reason(job_id);
                        // A job waiting on out-of-service nodes holds back no one.
                        if r == job::reason::WAIT_RESOURCES {
                            if let Some(nodes) = self.required_nodes(job_id) {
                                // One that names its nodes holds only those.
                                for i in nodes {
                                    if let Some(u) = unavail.get_mut(i) {
                                        *u = true;
                                    }
                                }
                            } else {
                                self.block_partition(part, &mut blocked, &mut unavail);
                                let n = self.conf.partitions.len();
                                self.sched.blocked_at.resize(n, None);
                                self.sched.blocked_at[part] =
                                    Some((job_id, self.fingerprint(part)));
                            }
                        }
                        r
                    }
                }
            };
            self.set_wait_reason(now, job_id, reason);
        }
    }

    /// Marks partition `part` failed for the rest of a pass: its later
    /// jobs wait with Priority, and no job takes its nodes.
    fn block_partition(&self, part: usize, blocked: &mut [bool], unavail: &mut [bool]) {
        if let Some(b) = blocked.get_mut(part) {
            *b = true;
        }
        for &i in self.conf.partitions.get(part).map_or(&[][..], |p| &p.nodes) {
            if let Some(u) = unavail.get_mut(i) {
                *u = true;
            }
        }
    }

    /// The `--nodelist` of a job when it names at least as many nodes as
    /// the job needs (such a job blocks only those nodes, not its
    /// partition).
    fn required_nodes(&self, job_id: u32) -> Option<Vec<usize>> {
        let j = self.jobs.get(&job_id)?;
        let r = j.req.req_nodes().filter(|r| !r.is_empty())?;
        let nodes = sched::node_indexes(&self.conf, r)?;
        (nodes.len() as u32 >= j.min_nodes).then_some(nodes)
    }

    /// Plans starts for the head of the queue and starts what fits in the
    /// holes without delaying a job ahead of it.
    pub(crate) fn backfill(&mut self, now: Time, fx: &mut Vec<Effect>) {
        // Up to BF_MAX_JOB_TEST jobs of each partition, so that a long
        // queue in a higher tier does not use up every partition's turn.
        let nparts = self.conf.partitions.len().max(1);
        let order = self.ordered(now, BF_MAX_JOB_TEST.saturating_mul(nparts), BF_MAX_JOB_TEST);
        self.refresh_eligibility(now, &order);
        let mut per_part = vec![0usize; nparts];
        let mut planner = Planner::new(&self.conf, &self.nodes, &self.jobs, now);
        let mut plan = Table::new();
        let mut tested = 0;
        for job_id in order {
            if !self.eligible(job_id, now) {
                continue;
            }
            match self.gate(now, job_id, fx) {
                Gate::Go => {}
                Gate::Skip => continue,
                Gate::Wait(r) => {
                    self.set_wait_reason(now, job_id, r);
                    continue;
                }
            }
            let part = self.jobs[&job_id].part;
            if partition::held_by(&self.conf, &self.conf.partitions[part], &self.jobs[&job_id])
                .is_some()
            {
                continue;
            }
            if per_part.get(part).is_some_and(|&k| k >= BF_MAX_JOB_TEST) {
                continue;
            }
            if let Some(k) = per_part.get_mut(part) {
                *k += 1;
            }
            tested += 1;
            let j = &self.jobs[&job_id];
            let dur = backfill::duration(j);
            let req = sched::Request::of(j);
            // First: can it start now on nodes no reservation holds?
            let held = |i: usize| planner.reserved(i, now, dur);
            if let Some(alloc) = sched::select_excluding(&self.conf, &self.nodes, part, &req, &held)
            {
                let used: Vec<usize> = alloc.iter().map(|a| a.node).collect();
                self.counters.backfilled();
                tracing::info!(job_id, "backfill: starting");
                // One array task at a time: the next must fit the plan.
                let started = self.start_one(now, job_id, alloc, fx);
                planner.refresh(&self.nodes, &used);
                if let Some(j) = self.jobs.get(&started) {
                    planner.add_release(j.end_time, j, &self.nodes);
                }
                continue;
            }
            // Else: when it could, and hold that for it.
            if planner.budget == 0 {
                continue;
            }
            let Some((start, nodes)) = planner.earliest(&self.conf, part, &req, dur) else {
                continue;
            };
            planner.reserve(job_id, start, dur, nodes.clone());
            plan.insert(job_id, Planned { start, nodes });
        }
        let queue_len = self.jobs.pending_count();
        self.counters.backfill_cycle(tested, queue_len);
        self.sched.plan = plan;
        self.last_job_update = now;
    }

    /// Expected start of a pending job from the last plan (0: unknown).
    pub fn planned(&self, job_id: u32) -> Option<&Planned> {
        self.sched.plan.get(&job_id)
    }
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
