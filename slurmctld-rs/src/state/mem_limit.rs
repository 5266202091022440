//! MaxMemPerCPU as stock applies it to a job that asks for more memory per
//! CPU: the job is not refused, its CPUs per task are multiplied and its
//! memory per CPU divided by the same factor, so the total stays.

use slurm_conf::MemLimit;

/// A job's CPU and memory shape after the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// MB, per CPU when the job's memory is per CPU.
    pub mem: u64,
    pub cpus_per_task: u16,
    pub min_cpus: u32,
}

/// Fits `shape` to the partition's MaxMemPerCPU, else the cluster's
/// (`part_max` wins when set). Per-node limits and per-node requests are
/// left as they are.
pub fn fit_max_mem_per_cpu(
    part_max: Option<MemLimit>,
    cluster_max: Option<MemLimit>,
    mem_per_cpu: bool,
    num_tasks: u32,
    shape: Shape,
) -> Shape {
    let Some(MemLimit::PerCpu(max)) = part_max.or(cluster_max) else {
        return shape;
    };
    if !mem_per_cpu || max == 0 || shape.mem <= max {
        return shape;
    }
    let ratio = shape.mem.div_ceil(max);
    let Ok(ratio16) = u16::try_from(ratio) else {
        return shape;
    };
    let cpus_per_task = shape.cpus_per_task.max(1).saturating_mul(ratio16);
    Shape {
        mem: shape.mem.div_ceil(ratio),
        cpus_per_task,
        min_cpus: shape
            .min_cpus
            .max(num_tasks.saturating_mul(u32::from(cpus_per_task))),
    }
}

/// `PART_FLAG_EXCLUSIVE_USER` / `PART_FLAG_EXC_USER_CLR` in an update.
const PART_FLAG_EXCLUSIVE_USER: u32 = 1 << 6;
const PART_FLAG_EXC_USER_CLR: u32 = 1 << 14;
/// `MEM_PER_CPU`: the top bit of a memory limit means "per CPU".
const MEM_PER_CPU: u64 = 1 << 63;

/// The parts of REQUEST_UPDATE_PARTITION kept here: MaxMemPerCPU /
/// MaxMemPerNode (0 is unlimited) and ExclusiveUser.
pub fn update_partition(
    c: &mut slurm_conf::PartitionConf,
    m: &slurm_wire::msg::update_part::UpdatePartMsg,
) {
    let v = m.max_mem_per_cpu;
    if v != slurm_wire::pack::NO_VAL64 {
        c.max_mem = if v & MEM_PER_CPU != 0 {
            Some(MemLimit::PerCpu(v & !MEM_PER_CPU))
        } else if v == 0 {
            None
        } else {
            Some(MemLimit::PerNode(v))
        };
    }
    if m.flags.0 & PART_FLAG_EXCLUSIVE_USER != 0 {
        c.exclusive_user = true;
    }
    if m.flags.0 & PART_FLAG_EXC_USER_CLR != 0 {
        c.exclusive_user = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(mem: u64, cpt: u16, min_cpus: u32) -> Shape {
        Shape {
            mem,
            cpus_per_task: cpt,
            min_cpus,
        }
    }

    #[test]
    fn raises_cpus_per_task_by_the_memory_ratio() {
        let max = Some(MemLimit::PerCpu(1000));
        // 2500 MB per CPU over a 1000 limit: 3 CPUs a task, 834 MB each
        assert_eq!(
            fit_max_mem_per_cpu(max, None, true, 2, shape(2500, 1, 2)),
            shape(834, 3, 6)
        );
        // an existing -c is multiplied
        assert_eq!(
            fit_max_mem_per_cpu(max, None, true, 1, shape(2000, 2, 2)),
            shape(1000, 4, 4)
        );
        // within the limit, per-node memory, or a per-node limit: unchanged
        assert_eq!(
            fit_max_mem_per_cpu(max, None, true, 1, shape(1000, 1, 1)),
            shape(1000, 1, 1)
        );
        assert_eq!(
            fit_max_mem_per_cpu(max, None, false, 1, shape(5000, 1, 1)),
            shape(5000, 1, 1)
        );
        let per_node = Some(MemLimit::PerNode(1000));
        assert_eq!(
            fit_max_mem_per_cpu(per_node, None, true, 1, shape(5000, 1, 1)),
            shape(5000, 1, 1)
        );
        // the cluster's limit when the partition has none; the partition's wins
        assert_eq!(
            fit_max_mem_per_cpu(None, max, true, 1, shape(3000, 1, 1)),
            shape(1000, 3, 3)
        );
        assert_eq!(
            fit_max_mem_per_cpu(
                Some(MemLimit::PerCpu(5000)),
                max,
                true,
                1,
                shape(3000, 1, 1)
            ),
            shape(3000, 1, 1)
        );
    }

    #[test]
    fn partition_update_sets_the_limit_and_the_flag() {
        use slurm_wire::msg::partition::PartFlags;
        use slurm_wire::msg::update_part::UpdatePartMsg;
        let text =
            "ClusterName=t\nSlurmctldHost=ctl\nNodeName=n1 CPUs=4\nPartitionName=p Nodes=n1\n";
        let conf = crate::state::testkit::slurm_conf(text);
        let mut c = conf.partitions[0].clone();
        let mut m = UpdatePartMsg {
            max_mem_per_cpu: 100 | MEM_PER_CPU,
            flags: PartFlags(PART_FLAG_EXCLUSIVE_USER),
            ..Default::default()
        };
        update_partition(&mut c, &m);
        assert_eq!(
            (c.max_mem, c.exclusive_user),
            (Some(MemLimit::PerCpu(100)), true)
        );
        m.max_mem_per_cpu = slurm_wire::pack::NO_VAL64;
        m.flags = PartFlags(PART_FLAG_EXC_USER_CLR);
        update_partition(&mut c, &m);
        assert_eq!(
            (c.max_mem, c.exclusive_user),
            (Some(MemLimit::PerCpu(100)), false)
        );
        m.max_mem_per_cpu = 0;
        update_partition(&mut c, &m);
        assert_eq!(c.max_mem, None);
    }
}
