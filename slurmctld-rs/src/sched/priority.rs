//! Priority policies (stock's `PriorityType` plugins): the number a pending
//! job is queued by within its partition's PriorityTier (see
//! [`super::order`]). Pure: the time is an argument, nothing is read here.
//!
//! The one policy so far is [`Basic`], today's order: every runnable job
//! has the same priority, so jobs of a tier go by age. Every PriorityType
//! maps to it until multifactor exists; [`choose`] says so.

use crate::state::command::Time;
use crate::state::config::PartDef;
use crate::state::job::Job;
use std::fmt;

/// A priority policy.
pub trait PriorityPolicy: fmt::Debug + Sync {
    /// The plugin it implements, as slurm.conf names it.
    fn name(&self) -> &'static str;

    /// The priority `job` (of partition `part`) is queued by at `now`:
    /// higher first; jobs of equal priority go by submit time, then id.
    fn priority(&self, job: &Job, part: &PartDef, now: Time) -> u32;

    /// Whether [`Self::priority`] is always the job's stored `priority`.
    /// The job table keeps each partition's pending jobs sorted by that, so
    /// the queue is then read from the head of that index instead of
    /// sorting every pending job.
    fn is_stored(&self) -> bool {
        false
    }
}

/// The priority `priority/basic` gives a runnable job when it is submitted
/// or released from a hold; 0 means held.
pub const BASIC_PRIORITY: u32 = 1;

/// `priority/basic`: the job's stored priority (the same constant for every
/// runnable job unless an operator set one), so the queue goes by age.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Basic;

impl PriorityPolicy for Basic {
    fn name(&self) -> &'static str {
        BASIC
    }
    fn priority(&self, job: &Job, _part: &PartDef, _now: Time) -> u32 {
        job.priority
    }
    fn is_stored(&self) -> bool {
        true
    }
}

/// Stock's plugin names.
pub const BASIC: &str = "priority/basic";
pub const MULTIFACTOR: &str = "priority/multifactor";

/// The policy that serves a slurm.conf `PriorityType`.
#[derive(Debug, Clone, Copy)]
pub struct Choice {
    pub policy: &'static dyn PriorityPolicy,
    /// The PriorityType asked for differs from what serves it.
    pub fallback: bool,
}

impl Choice {
    /// The diagnostic to log when the site gets another policy than it asked
    /// for (replies still show the PriorityType it configured).
    pub fn note(&self, asked: &str) -> Option<String> {
        self.fallback.then(|| {
            format!(
                "PriorityType={asked} is not implemented yet: jobs are ordered as {} \
                 (partition PriorityTier, then priority, then submit time)",
                self.policy.name()
            )
        })
    }
}

/// The policy for `PriorityType=priority_type`. Until multifactor exists,
/// every name (multifactor included, and stock's default is multifactor)
/// is served by [`Basic`].
pub fn choose(priority_type: &str) -> Choice {
    static BASIC_POLICY: Basic = Basic;
    Choice {
        policy: &BASIC_POLICY,
        fallback: !priority_type.trim().eq_ignore_ascii_case(BASIC),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::testkit::{self, controller, job_id, submit_desc, true_job, user};
    use slurm_wire::msg::job_desc::JobDescMsg;
    use slurm_wire::ProtocolVersion;

    #[test]
    fn basic_is_chosen_by_name_and_needs_no_note() {
        let c = choose("priority/basic");
        assert_eq!(c.policy.name(), BASIC);
        assert!(!c.fallback);
        assert_eq!(c.note("priority/basic"), None);
        assert!(!choose(" Priority/Basic ").fallback);
    }

    #[test]
    fn multifactor_and_unknown_names_fall_back_to_basic_and_say_so() {
        for asked in [MULTIFACTOR, "priority/other", ""] {
            let c = choose(asked);
            assert_eq!(c.policy.name(), BASIC, "{asked}");
            assert!(c.fallback, "{asked}");
            let note = c.note(asked).expect("a note");
            assert!(note.contains(asked) && note.contains(BASIC), "{note}");
        }
    }

    #[test]
    fn basic_gives_the_stored_priority_whatever_the_time() {
        let mut c = controller(testkit::TWO_NODES);
        let d = JobDescMsg {
            time_limit: 10,
            num_tasks: 1,
            ..true_job()
        };
        let (r, _) = submit_desc(&mut c, 1000, user(1000, 1000), ProtocolVersion::V24_11, d);
        let id = job_id(r);
        let part = &c.conf().partitions[c.jobs()[&id].part];
        let stored = c.jobs()[&id].priority;
        assert!(Basic.is_stored());
        assert_eq!(Basic.priority(&c.jobs()[&id], part, 1000), stored);
        assert_eq!(Basic.priority(&c.jobs()[&id], part, 1_000_000), stored);
        c.jobs_mut().get_mut(&id).unwrap().priority = 77;
        let part = &c.conf().partitions[c.jobs()[&id].part];
        assert_eq!(Basic.priority(&c.jobs()[&id], part, 1000), 77);
    }
}
