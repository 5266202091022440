//! Queue order, as stock's `sort_job_queue2`: partitions of a higher
//! PriorityTier first; within a tier, higher priority (from the
//! [`PriorityPolicy`]), then the older submit time, then the lower id.

use super::priority::PriorityPolicy;
use crate::state::command::Time;
use crate::state::config::PartDef;
use crate::state::table::Jobs;
use std::cmp::Reverse;

/// A pending job's place within its tier: priority, submit time, id.
type Key = (Reverse<u32>, Time, u32);

/// Pending jobs of partitions `parts` in scheduling order at `now`: at most
/// `limit` in all and `per_part` of each partition.
pub fn queue_order(
    parts: &[PartDef],
    jobs: &mut Jobs,
    policy: &dyn PriorityPolicy,
    now: Time,
    limit: usize,
    per_part: usize,
) -> Vec<u32> {
    let mut by_tier: Vec<usize> = (0..parts.len()).collect();
    by_tier.sort_by_key(|&p| (Reverse(parts[p].conf.priority_tier), p));
    let mut out = Vec::new();
    let mut i = 0;
    while i < by_tier.len() && out.len() < limit {
        let tier = parts[by_tier[i]].conf.priority_tier;
        // Merge the tier's partition queues by priority, age and id.
        let mut heads: Vec<Key> = Vec::new();
        while i < by_tier.len() && parts[by_tier[i]].conf.priority_tier == tier {
            let want = (limit - out.len()).min(per_part);
            heads.extend(head(parts, jobs, policy, now, by_tier[i], want));
            i += 1;
        }
        heads.sort_unstable();
        heads.dedup();
        out.extend(heads.into_iter().map(|h| h.2).take(limit - out.len()));
    }
    out
}

/// The first `want` pending jobs of partition `part` by [`Key`].
fn head(
    parts: &[PartDef],
    jobs: &mut Jobs,
    policy: &dyn PriorityPolicy,
    now: Time,
    part: usize,
    want: usize,
) -> Vec<Key> {
    let p = &parts[part];
    // The table's index is sorted by the stored priority: a policy that
    // uses it needs only the head; any other sees every pending job.
    let ids: Vec<u32> = if policy.is_stored() {
        jobs.queue_of(part).take(want).collect()
    } else {
        jobs.queue_of(part).collect()
    };
    let mut keys: Vec<Key> = ids
        .into_iter()
        .filter_map(|id| {
            let j = jobs.get(&id)?;
            Some((Reverse(policy.priority(j, p, now)), j.submit_time, id))
        })
        .collect();
    if !policy.is_stored() {
        keys.sort_unstable();
        keys.truncate(want);
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::super::priority::Basic;
    use super::*;
    use crate::state::job::Job;
    use crate::state::testkit::{controller, job_id, submit_desc, true_job, user};
    use crate::state::Controller;
    use slurm_wire::msg::job_desc::JobDescMsg;
    use slurm_wire::ProtocolVersion;

    /// No node registers, so every job stays pending.
    const CONF: &str = "\
ClusterName=t
SlurmctldHost=ctl
SlurmUser=root
NodeName=n[1-2] CPUs=4 RealMemory=1000
PartitionName=low Nodes=n[1-2] Default=YES MaxTime=60 State=UP PriorityTier=1
PartitionName=low2 Nodes=n[1-2] MaxTime=60 State=UP PriorityTier=1
PartitionName=high Nodes=n[1-2] MaxTime=60 State=UP PriorityTier=2
";

    /// A policy that favours small jobs: priority falls with the CPU count.
    #[derive(Debug)]
    struct SmallFirst;
    impl PriorityPolicy for SmallFirst {
        fn name(&self) -> &'static str {
            "priority/test-small-first"
        }
        fn priority(&self, j: &Job, _: &PartDef, _: Time) -> u32 {
            1000 - j.min_cpus
        }
    }

    /// A policy whose priority grows with the time since submit, at a
    /// rate set by the partition's PriorityJobFactor.
    #[derive(Debug)]
    struct AgeByFactor;
    impl PriorityPolicy for AgeByFactor {
        fn name(&self) -> &'static str {
            "priority/test-age"
        }
        fn priority(&self, j: &Job, p: &PartDef, now: Time) -> u32 {
            let age = u32::try_from((now - j.submit_time).max(0)).unwrap_or(u32::MAX);
            age.saturating_mul(u32::from(p.conf.priority_job_factor))
        }
    }

    fn job(c: &mut Controller, now: Time, part: &str, tasks: u32) -> u32 {
        let d = JobDescMsg {
            partition: Some(part.into()),
            time_limit: 10,
            num_tasks: tasks,
            ..true_job()
        };
        job_id(submit_desc(c, now, user(1000, 1000), ProtocolVersion::V24_11, d).0)
    }

    fn order(c: &mut Controller, policy: &dyn PriorityPolicy, now: Time, limit: usize) -> Vec<u32> {
        let conf = c.conf().clone();
        queue_order(&conf.partitions, c.jobs_mut(), policy, now, limit, limit)
    }

    #[test]
    fn basic_orders_by_tier_then_priority_then_age() {
        let mut c = controller(CONF);
        let a = job(&mut c, 1001, "low", 4);
        let b = job(&mut c, 1002, "low2", 1);
        let h = job(&mut c, 1003, "high", 2);
        let d = job(&mut c, 1004, "low", 2);
        assert!([a, b, h, d].iter().all(|id| c.jobs()[id].priority == 1));
        assert_eq!(order(&mut c, &Basic, 2000, 10), vec![h, a, b, d]);
        // An operator's priority goes first within its tier, not above it.
        c.jobs_mut().get_mut(&d).unwrap().priority = 5;
        assert_eq!(order(&mut c, &Basic, 2000, 10), vec![h, d, a, b]);
        assert_eq!(order(&mut c, &Basic, 2000, 2), vec![h, d]);
    }

    #[test]
    fn another_policy_changes_the_order_within_a_tier_only() {
        let mut c = controller(CONF);
        let a = job(&mut c, 1001, "low", 4);
        let b = job(&mut c, 1002, "low2", 1);
        let h = job(&mut c, 1003, "high", 3);
        let d = job(&mut c, 1004, "low", 2);
        assert_eq!(order(&mut c, &Basic, 2000, 10), vec![h, a, b, d]);
        assert_eq!(order(&mut c, &SmallFirst, 2000, 10), vec![h, b, d, a]);
    }

    #[test]
    fn a_computed_priority_picks_each_partitions_head_by_itself() {
        // The table's index has `a` first in `low`; taking only one job of
        // the partition must still give the policy's first, `d`.
        let mut c = controller(CONF);
        let a = job(&mut c, 1001, "low", 4);
        let d = job(&mut c, 1002, "low", 1);
        let conf = c.conf().clone();
        let got = queue_order(&conf.partitions, c.jobs_mut(), &SmallFirst, 2000, 10, 1);
        assert_eq!(got, vec![d]);
        let got = queue_order(&conf.partitions, c.jobs_mut(), &Basic, 2000, 10, 1);
        assert_eq!(got, vec![a]);
    }

    #[test]
    fn the_time_and_the_partition_are_the_policys_inputs() {
        let conf = CONF.replace(
            "PartitionName=low2 Nodes=n[1-2] MaxTime=60 State=UP PriorityTier=1",
            "PartitionName=low2 Nodes=n[1-2] MaxTime=60 State=UP PriorityTier=1 \
             PriorityJobFactor=10",
        );
        let mut c = controller(&conf);
        let a = job(&mut c, 1000, "low", 1);
        let b = job(&mut c, 1050, "low2", 1);
        // At 1060: a is 60 s old (x1), b 10 s (x10, so 100): b first.
        assert_eq!(order(&mut c, &AgeByFactor, 1060, 10), vec![b, a]);
        // At 1001 a is 1 s old and b not yet aged: a first.
        assert_eq!(order(&mut c, &AgeByFactor, 1001, 10), vec![a, b]);
    }
}
