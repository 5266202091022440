//! Scenarios: sequences of client commands with assertions on exit codes,
//! outputs and states. Each runs on a login host of one client version, on a
//! cluster shared with the other scenarios (so each leaves the queue empty).
//!
//! Cluster layout (scripts/cluster defaults, `--nodes 2`): controller `ctl`,
//! nodes n1, n2 (CPUs=16 RealMemory=64000 Gres=gpu:a100:4), partitions
//! `debug` (default, n[1-2]) and `gpu_nodes` (n2); users alice/bob with a
//! home shared by all hosts.

mod ctx;
use crate::cluster::Impl;
pub use ctx::*;

pub mod arrays;
pub mod basic;
pub mod ctld2;
pub mod jobs;
pub mod ops;
pub mod parts;
pub mod sched;
pub mod slurmd;

impl Scenario {
    pub fn needs(&self) -> Needs {
        let mut n = slurmd::NEEDS
            .iter()
            .find(|(n, _)| *n == self.name)
            .map(|(_, x)| *x)
            .unwrap_or_default();
        n.stockd = STOCK_SLURMD.contains(&self.name);
        n
    }

    /// Whether the cells of `imp` run this scenario.
    pub fn runs_on(&self, imp: Impl) -> bool {
        match imp {
            Impl::Stock | Impl::Rs => true,
            Impl::Mixed => self.needs().mixed,
            Impl::Stockd => self.needs().stockd,
        }
    }
}

/// Scenarios also run with stock slurmd nodes of the client's version
/// under slurmctld-rs: registration, batch jobs to COMPLETED, signals,
/// GPUs, steps, time limits, and re-attaching after a controller crash.
pub const STOCK_SLURMD: &[&str] = &[
    "sbatch_wrap",
    "show_job",
    "scancel",
    "sbatch_gres",
    "ctld_crash",
    "srun_hostname",
    "time_limit",
    "slurmd_env",
    "slurmd_fname",
    "slurmd_epilog",
];

/// Every scenario, in run order: each topic's module lists its own.
pub fn all() -> Vec<Scenario> {
    let mut v = basic::all();
    v.extend(jobs::all());
    v.extend(arrays::all());
    v.extend(sched::all());
    v.extend(slurmd::all());
    v.extend(ops::all());
    v.extend(ctld2::all());
    v.extend(parts::all());
    v
}
