//! The array bookkeeping the controller holds (which record is which task
//! of which array), apart from the array commands so that
//! [`super::controller::Controller`] can hold it without naming them.

use super::table::Table;
use imbl::OrdMap;
use std::collections::BTreeSet;

/// A record's place in an array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskRef {
    pub array_job_id: u32,
    /// NO_VAL for a meta record still holding several tasks.
    pub task_id: u32,
}

/// What the array's head record keeps (upstream's `array_recs`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ArrayMeta {
    /// Tasks not split off yet.
    pub pending: BTreeSet<u32>,
    /// Size of the task bitmap (highest task id + 1).
    pub bitmap_size: u32,
    pub max_run_tasks: u32,
    /// Some task ended other than COMPLETED (or was cancelled pending):
    /// the array as a whole did not succeed.
    pub failed: bool,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Arrays {
    /// Job id -> array membership, for every record of every array.
    recs: Table<u32, TaskRef>,
    /// Array job id -> task id -> record id: `recs` by array, so that
    /// dependency tests and job control do not scan every record.
    by_array: OrdMap<u32, OrdMap<u32, u32>>,
    /// Array job id -> the head's task set.
    pub metas: Table<u32, ArrayMeta>,
}

impl Arrays {
    pub fn task_of(&self, job_id: u32) -> Option<TaskRef> {
        self.recs.get(&job_id).copied()
    }

    /// Every record's membership, by job id.
    pub fn recs(&self) -> &Table<u32, TaskRef> {
        &self.recs
    }

    /// Records (or re-records: a meta record taking its last task) job
    /// `id` as `r`.
    pub fn insert_rec(&mut self, id: u32, r: TaskRef) {
        if let Some(old) = self.recs.get(&id).copied() {
            if let Some(tasks) = self.by_array.get_mut(&old.array_job_id) {
                if tasks.get(&old.task_id) == Some(&id) {
                    tasks.remove(&old.task_id);
                }
            }
        }
        self.by_array
            .entry(r.array_job_id)
            .or_default()
            .insert(r.task_id, id);
        self.recs.insert(id, r);
    }

    /// Keeps the records of the job ids `keep` accepts.
    pub fn retain_recs(&mut self, mut keep: impl FnMut(&u32) -> bool) {
        let mut gone = Vec::new();
        self.recs.retain(|id, r| {
            let k = keep(id);
            if !k {
                gone.push((*id, *r));
            }
            k
        });
        for (id, r) in gone {
            if let Some(tasks) = self.by_array.get_mut(&r.array_job_id) {
                if tasks.get(&r.task_id) == Some(&id) {
                    tasks.remove(&r.task_id);
                }
                if tasks.is_empty() {
                    self.by_array.remove(&r.array_job_id);
                }
            }
        }
    }

    /// Whether `job_id` names a whole array (its array job id).
    pub fn is_array_id(&self, job_id: u32) -> bool {
        self.metas.contains_key(&job_id)
            || self.by_array.get(&job_id).is_some_and(|t| !t.is_empty())
    }

    /// Ids of every record of array `array_job_id`, ascending.
    pub fn members(&self, array_job_id: u32) -> Vec<u32> {
        let mut ids: Vec<u32> = self
            .by_array
            .get(&array_job_id)
            .map(|t| t.values().copied().collect())
            .unwrap_or_default();
        ids.sort_unstable();
        ids
    }

    /// The record holding task `task` of an array: its own record, or the
    /// meta record while the task is still pending in it.
    pub fn find_task(&self, array_job_id: u32, task: u32) -> Option<u32> {
        if let Some(&id) = self.by_array.get(&array_job_id).and_then(|t| t.get(&task)) {
            return Some(id);
        }
        self.metas
            .get(&array_job_id)
            .filter(|m| m.pending.contains(&task))
            .map(|_| array_job_id)
    }
}
