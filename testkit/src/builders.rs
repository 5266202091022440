//! Wire messages as stock daemons and clients send them, with only the
//! fields a test cares about set.

use slurm_wire::msg::job_desc::JobDescMsg;
use slurm_wire::msg::node::SlurmNodeRegistrationStatusMsg;

/// A slurmd's registration: its name, CPUs and memory (MiB).
pub fn registration(name: &str, cpus: u16, real_memory: u64) -> SlurmNodeRegistrationStatusMsg {
    SlurmNodeRegistrationStatusMsg {
        node_name: Some(name.into()),
        cpus,
        real_memory,
        ..Default::default()
    }
}

/// `sbatch -n <tasks> -t <minutes>` of a one-line script, everything else
/// unset as the client leaves it.
pub fn batch_job(tasks: u32, minutes: u32) -> JobDescMsg {
    JobDescMsg {
        min_cpus: tasks,
        num_tasks: tasks,
        time_limit: minutes,
        script: Some("#!/bin/sh\ntrue\n".into()),
        ..JobDescMsg::unset()
    }
}
