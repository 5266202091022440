//! Job control of array tasks: `scontrol update jobid=12_2`, `scontrol
//! hold|release|requeue 12_[1-3]` and the same for a whole array
//! (`jobid=12`). Clients send the expression in `job_id_str`; the answer
//! is one return code per group of tasks (RESPONSE_JOB_ARRAY_ERRORS), as
//! stock's `update_job_str` and `job_requeue2` give it.

use super::array::TaskRef;
use super::command::{Effect, Reply, Time};
use super::controller::Controller;
use super::error::StateError;
use slurm_wire::msg::job_desc::JobDescMsg;
use slurm_wire::pack::NO_VAL;
use std::collections::BTreeSet;

pub use super::command::TaskGroup;

/// Collects return codes per task set, grouped by code.
#[derive(Default)]
struct Groups(Vec<TaskGroup>);

impl Groups {
    fn add(&mut self, rc: Result<(), StateError>, tasks: &BTreeSet<u32>) {
        match self.0.iter_mut().find(|g| g.rc == rc) {
            Some(g) => g.tasks.extend(tasks.iter().copied()),
            None => self.0.push(TaskGroup {
                rc,
                tasks: tasks.clone(),
            }),
        }
    }

    /// Groups in the order of their lowest task, as stock sends them.
    fn into_reply(mut self, none: StateError) -> Reply {
        if self.0.is_empty() {
            return Reply::Err(none);
        }
        self.0.retain(|g| !g.tasks.is_empty());
        self.0.sort_by_key(|g| g.tasks.iter().next().copied());
        Reply::ArrayErrors(self.0)
    }
}

/// `1-3,5,7-9`: stock's `bit_fmt` of a task set (no brackets).
pub fn task_ranges(tasks: &BTreeSet<u32>) -> String {
    let mut out = String::new();
    let mut it = tasks.iter().copied().peekable();
    while let Some(lo) = it.next() {
        let mut hi = lo;
        while let Some(&next) = it.peek().filter(|&&n| hi.checked_add(1) == Some(n)) {
            hi = next;
            it.next();
        }
        if !out.is_empty() {
            out.push(',');
        }
        if hi == lo {
            out.push_str(&lo.to_string());
        } else {
            out.push_str(&format!("{lo}-{hi}"));
        }
    }
    out
}

impl Controller {
    /// The tasks a record stands for: its own, or the meta record's
    /// pending ones.
    fn tasks_of_record(&self, job_id: u32) -> BTreeSet<u32> {
        match self.arrays.task_of(job_id) {
            Some(TaskRef { task_id, .. }) if task_id != NO_VAL => BTreeSet::from([task_id]),
            Some(r) => self
                .arrays
                .metas
                .get(&r.array_job_id)
                .map(|m| m.pending.clone())
                .unwrap_or_default(),
            None => BTreeSet::new(),
        }
    }

    /// Whether `array_job_id`'s meta record still holds pending tasks.
    fn meta_pending(&self, array_job_id: u32) -> bool {
        self.meta_tasks(array_job_id).is_some_and(|p| !p.is_empty())
    }

    /// Whether a plain `job_id` stands for a whole array: the id of an
    /// array job (its head record, or records left after it was purged).
    pub(crate) fn names_whole_array(&self, job_id: u32) -> bool {
        match self.arrays.task_of(job_id) {
            Some(r) => r.array_job_id == job_id,
            None => !self.jobs.contains_key(&job_id) && self.arrays.is_array_id(job_id),
        }
    }

    /// The records of array `array_job_id`, meta record first (stock
    /// updates the head record, then every other).
    fn array_records(&self, array_job_id: u32) -> Vec<u32> {
        let mut ids = self.arrays.members(array_job_id);
        ids.sort_by_key(|&id| id != array_job_id);
        ids
    }

    /// REQUEST_UPDATE_JOB for an array: every record when `tasks` is
    /// None, else the named tasks. Pending tasks named without all their
    /// siblings are split off into records of their own first, so that
    /// the update reaches only them.
    pub(crate) fn update_array(
        &mut self,
        now: Time,
        uid: u32,
        array_job_id: u32,
        tasks: Option<&BTreeSet<u32>>,
        desc: &JobDescMsg,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        let mut groups = Groups::default();
        let Some(tasks) = tasks else {
            for id in self.array_records(array_job_id) {
                let set = self.tasks_of_record(id);
                let rc = self.update_job(now, uid, id, desc, fx);
                groups.add(rc.result(), &set);
            }
            return groups.into_reply(StateError::InvalidJobId);
        };
        let mut left = tasks.clone();
        if self.meta_pending(array_job_id) {
            let pending = self
                .arrays
                .metas
                .get(&array_job_id)
                .map(|m| m.pending.clone())
                .unwrap_or_default();
            let hit: BTreeSet<u32> = left.intersection(&pending).copied().collect();
            if !hit.is_empty() && hit.len() == pending.len() {
                // Every pending task: the meta record as a whole.
                let rc = self.update_job(now, uid, array_job_id, desc, fx);
                groups.add(rc.result(), &hit);
                left.retain(|t| !hit.contains(t));
            } else {
                for &t in &hit {
                    self.split_task(now, array_job_id, t);
                }
            }
        }
        for t in left {
            match self.arrays.find_task(array_job_id, t) {
                Some(id) => {
                    let rc = self.update_job(now, uid, id, desc, fx);
                    groups.add(rc.result(), &BTreeSet::from([t]));
                }
                None => groups.add(Err(StateError::InvalidJobId), &BTreeSet::from([t])),
            }
        }
        groups.into_reply(StateError::InvalidJobId)
    }

    /// REQUEST_JOB_REQUEUE for an array: every record, or the records
    /// holding the named tasks (a task still pending in the meta record
    /// answers for the meta record, which refuses: it is pending).
    pub(crate) fn requeue_array(
        &mut self,
        now: Time,
        uid: u32,
        array_job_id: u32,
        tasks: Option<&BTreeSet<u32>>,
        flags: u32,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        let mut groups = Groups::default();
        let targets: Vec<(u32, Option<u32>)> = match tasks {
            None => self
                .array_records(array_job_id)
                .into_iter()
                .map(|id| (id, None))
                .collect(),
            Some(tasks) => tasks
                .iter()
                .map(|&t| (self.arrays.find_task(array_job_id, t).unwrap_or(0), Some(t)))
                .collect(),
        };
        for (id, task) in targets {
            let set = match task {
                Some(t) => BTreeSet::from([t]),
                None => self.tasks_of_record(id),
            };
            if id == 0 {
                groups.add(Err(StateError::InvalidJobId), &set);
                continue;
            }
            // The set of a meta record is read before the requeue changes it.
            let set =
                if task.is_some() && self.arrays.task_of(id).is_some_and(|r| r.task_id == NO_VAL) {
                    self.tasks_of_record(id)
                } else {
                    set
                };
            let rc = self.requeue_unscheduled(now, uid, id, flags, fx);
            groups.add(rc.result(), &set);
        }
        self.schedule(now, fx);
        groups.into_reply(StateError::InvalidJobId)
    }

    /// Splits pending task `task` out of array `array_job_id`'s meta
    /// record into a record of its own (stock's `job_array_split`);
    /// returns that record's id.
    pub(crate) fn split_task(&mut self, now: Time, array_job_id: u32, task: u32) -> u32 {
        let Some(meta) = self.arrays.metas.get_mut(&array_job_id) else {
            return array_job_id;
        };
        if !meta.pending.remove(&task) {
            return array_job_id;
        }
        if meta.pending.is_empty() {
            // Only this task was left: the meta record is it.
            self.arrays.insert_rec(
                array_job_id,
                TaskRef {
                    array_job_id,
                    task_id: task,
                },
            );
            self.last_job_update = now;
            return array_job_id;
        }
        if meta.pending.len() == 1 {
            // One task left: the meta record becomes that task.
            let last = meta.pending.pop_first().unwrap_or(task);
            self.arrays.insert_rec(
                array_job_id,
                TaskRef {
                    array_job_id,
                    task_id: last,
                },
            );
        }
        let Some(mut rec) = self.jobs.get(&array_job_id).cloned() else {
            return array_job_id;
        };
        let mut new_id = self.next_job_id;
        while self.jobs.contains_key(&new_id) {
            new_id = new_id.wrapping_add(1).max(1);
        }
        self.next_job_id = new_id.wrapping_add(1).max(1);
        rec.job_id = new_id;
        self.jobs.insert(new_id, rec);
        self.arrays.insert_rec(
            new_id,
            TaskRef {
                array_job_id,
                task_id: task,
            },
        );
        if let Some(d) = self.deps.get(&array_job_id).cloned() {
            self.deps.insert(new_id, d);
        }
        self.last_job_update = now;
        tracing::info!(job_id = new_id, array_job_id, task, "array task split off");
        new_id
    }
}

#[cfg(test)]
#[path = "array_ctl_tests.rs"]
mod tests;
