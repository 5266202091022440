//! What the scheduler keeps between its passes: the backfill plan, when the
//! periodic passes last ran, and which head jobs failed on what.

use super::backfill::Planned;
use super::priority::{self, Choice};
use crate::state::command::{Command, Time};
use crate::state::table::Table;

/// The scheduler's state between passes.
#[derive(Debug, Clone, Default)]
pub struct SchedState {
    pub plan: Table<u32, Planned>,
    pub last_full: Time,
    pub last_backfill: Time,
    /// Per partition: the job that last failed to fit and when. Until a
    /// node changes again it would fail again, so it is not re-tested
    /// (a failing select scans every node of the partition).
    pub blocked_at: Vec<Option<(u32, Fingerprint)>>,
    /// Bumped by whatever may free resources or make nodes usable.
    pub freed: u64,
    /// The priority policy and the PriorityType it was chosen for.
    priority: Option<(String, Choice)>,
}

impl SchedState {
    /// Counts a command that may free something (`CommandMeta::may_free`).
    pub fn note_command(&mut self, cmd: &Command) {
        if cmd.meta().may_free {
            self.freed += 1;
        }
    }

    /// The policy for `PriorityType=priority_type`, and the note to log
    /// when it was chosen just now and is not the one asked for.
    pub fn priority_policy(&mut self, priority_type: &str) -> (Choice, Option<String>) {
        match &self.priority {
            Some((asked, c)) if asked == priority_type => (*c, None),
            _ => {
                let c = priority::choose(priority_type);
                self.priority = Some((priority_type.to_string(), c));
                (c, c.note(priority_type))
            }
        }
    }
}

/// When a head job last failed: what had been freed by then, and the
/// partitions' last change.
pub type Fingerprint = (u64, Time);
