//! The scheduler's cadence and depths: stock's defaults, and the
//! SchedulerParameters that override them.

use crate::state::command::Time;
use crate::state::config::ClusterConf;

/// Jobs an event-triggered pass looks at (stock's `default_queue_depth`).
pub const MAIN_DEPTH: usize = 100;
/// Jobs one backfill pass plans per partition (stock's `bf_max_job_test`,
/// per partition like `bf_max_job_part`).
pub const BF_MAX_JOB_TEST: usize = 500;
/// Seconds between passes over the whole queue (stock's `sched_interval`).
pub const SCHED_INTERVAL: Time = 60;
/// Seconds between backfill passes (stock's `bf_interval`).
pub const BF_INTERVAL: Time = 30;

/// `name=value` from SchedulerParameters as positive seconds, or `default`.
pub fn seconds(conf: &ClusterConf, name: &str, default: Time) -> Time {
    conf.raw
        .scheduler_parameters
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .and_then(|(_, v)| v?.parse::<Time>().ok())
        .filter(|&v| v > 0)
        .unwrap_or(default)
}

/// `sched_interval`: seconds between passes over the whole queue.
pub fn sched_interval(conf: &ClusterConf) -> Time {
    seconds(conf, "sched_interval", SCHED_INTERVAL)
}

/// `bf_interval`: seconds between backfill passes.
pub fn bf_interval(conf: &ClusterConf) -> Time {
    seconds(conf, "bf_interval", BF_INTERVAL)
}
