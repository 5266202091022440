//! The allocation detail of a running job as the job info message carries
//! it: `job_resources` (cores and memory per node) and the per-node GRES
//! detail strings. `scontrol show job -d` prints them as the
//! `Nodes=.. CPU_IDs=.. Mem=.. GRES=gpu:a100:2(IDX:1-2)` lines.
//!
//! The controller keeps CPU counts per node, not core ids, so a node's
//! cores are shown as its first ones (stock shows the cores it picked).

use crate::state::job::{GresAlloc, Job};
use crate::state::node::Node;
use crate::state::Controller;
use slurm_wire::msg::job::JobResources;
use slurm_wire::types::BitStr;
use slurm_wire::ProtocolVersion as V;

/// `CR_CORE | CR_MEMORY`: cons_tres with memory as stock's default build.
const CR_CORE_MEMORY: u16 = 0x0004 | 0x0010;

/// What the job info message carries about a job's allocation.
#[derive(Debug, Default, PartialEq)]
pub struct AllocDetail {
    pub job_resrcs: Option<JobResources>,
    /// One entry per allocated node, in node order (empty: no GRES).
    pub gres_detail_str: Vec<Option<String>>,
    /// `JOB_GRES=`: the job's GRES summed over its nodes.
    pub gres_total: Option<String>,
}

/// The type of the allocated devices as the node's `Gres=` names them:
/// the job's own type, else the one type all its indexes have.
fn alloc_type(node: &Node, g: &GresAlloc) -> Option<String> {
    if g.type_name.is_some() {
        return g.type_name.clone();
    }
    // indexes count over all the node's items of this name, in line order
    let mut ranges: Vec<(u64, u64, Option<&String>)> = Vec::new();
    let mut at = 0u64;
    for item in node.def.gres_list.iter().filter(|i| i.name == g.name) {
        ranges.push((at, at + item.count, item.type_name.as_ref()));
        at += item.count;
    }
    let mut found: Option<Option<&String>> = None;
    for &i in &g.indices {
        let t = ranges
            .iter()
            .find(|(lo, hi, _)| (*lo..*hi).contains(&u64::from(i)))
            .and_then(|r| r.2);
        match found {
            None => found = Some(t),
            Some(prev) if prev != t => return None,
            Some(_) => {}
        }
    }
    found.flatten().cloned()
}

fn gres_label(name: &str, t: Option<&str>) -> String {
    match t {
        Some(t) => format!("{name}:{t}"),
        None => name.to_string(),
    }
}

/// Run-length encoding, as `cpu_array_*` and `sock_core_rep_count` use.
fn runs<T: PartialEq + Copy>(vals: impl Iterator<Item = T>) -> (Vec<T>, Vec<u32>) {
    let mut v: Vec<T> = Vec::new();
    let mut reps: Vec<u32> = Vec::new();
    for x in vals {
        match (v.last(), reps.last_mut()) {
            (Some(last), Some(r)) if *last == x => *r += 1,
            _ => {
                v.push(x);
                reps.push(1);
            }
        }
    }
    (v, reps)
}

/// The allocation detail of `j` (empty while it holds no nodes).
pub fn alloc_detail(c: &Controller, j: &Job, v: V) -> AllocDetail {
    if j.alloc.is_empty() || j.state.is_finished() {
        return AllocDetail::default();
    }
    let mut alloc: Vec<_> = j
        .alloc
        .iter()
        .filter(|a| a.node < c.nodes().len())
        .collect();
    alloc.sort_by_key(|a| a.node);
    if alloc.is_empty() {
        return AllocDetail::default();
    }
    let track_mem = crate::sched::memory_is_consumable(c.conf());
    let nodes: Vec<&Node> = alloc.iter().map(|a| &c.nodes()[a.node]).collect();
    let cpus: Vec<u16> = alloc.iter().map(|a| a.cpus).collect();
    let (cpu_array_value, cpu_array_reps) = runs(cpus.iter().copied());
    let layout = |n: &Node| (n.def.sockets.max(1), n.def.cores.max(1));
    let (sc, sock_core_rep_count) = runs(nodes.iter().map(|n| layout(n)));
    let total_cores: u32 = nodes
        .iter()
        .map(|n| {
            let (s, c) = layout(n);
            u32::from(s) * u32::from(c)
        })
        .sum();
    let mut core_bitmap = BitStr::new(total_cores);
    let mut base = 0u32;
    for (n, a) in nodes.iter().zip(&alloc) {
        let (s, cores) = layout(n);
        for k in a.core_ids(n) {
            core_bitmap.set(base + k, true);
        }
        base += u32::from(s) * u32::from(cores);
    }
    let mut node_bitmap = BitStr::new(c.nodes().len() as u32);
    for a in &alloc {
        node_bitmap.set(a.node as u32, true);
    }
    let nhosts = alloc.len();
    let job_resrcs = JobResources {
        ncpus: cpus.iter().map(|&x| u32::from(x)).sum(),
        next_step_node_inx: 0,
        node_req: 1,
        nodes: Some(crate::state::msgs::job_nodelist(c.nodes(), j)),
        whole_node: 0,
        threads_per_core: nodes.first().map_or(1, |n| n.def.threads.max(1)),
        cr_type: CR_CORE_MEMORY,
        cpu_array_reps,
        cpu_array_value,
        cpus,
        cpus_used: vec![0; nhosts],
        memory_allocated: alloc
            .iter()
            .map(|a| if track_mem { a.mem } else { 0 })
            .collect(),
        memory_used: vec![0; nhosts],
        sockets_per_node: sc.iter().map(|x| x.0).collect(),
        cores_per_socket: sc.iter().map(|x| x.1).collect(),
        sock_core_rep_count,
        core_bitmap_used: Some(BitStr::new(total_cores)),
        core_bitmap: Some(core_bitmap),
        node_bitmap: (v < V::V26_05).then_some(node_bitmap),
        node_ranks: Vec::new(),
    };

    // GRES: one "name[:type]:count(IDX:..)" item per GRES on each node;
    // the total sums each label over the nodes, in first-seen order.
    let mut totals: Vec<(String, u64)> = Vec::new();
    let mut details: Vec<Option<String>> = Vec::with_capacity(nhosts);
    for (n, a) in nodes.iter().zip(&alloc) {
        let mut items: Vec<String> = Vec::new();
        for g in &a.gres {
            if g.indices.is_empty() {
                continue;
            }
            let label = gres_label(&g.name, alloc_type(n, g).as_deref());
            let cnt = g.indices.len() as u64;
            items.push(format!(
                "{label}:{cnt}(IDX:{})",
                slurm_conf::format_ranges(&g.indices)
            ));
            match totals.iter_mut().find(|(l, _)| *l == label) {
                Some(t) => t.1 += cnt,
                None => totals.push((label, cnt)),
            }
        }
        details.push((!items.is_empty()).then(|| items.join(",")));
    }
    if totals.is_empty() {
        details.clear();
    }
    let gres_total = (!totals.is_empty()).then(|| {
        totals
            .iter()
            .map(|(l, n)| format!("{l}:{n}"))
            .collect::<Vec<_>>()
            .join(",")
    });
    AllocDetail {
        job_resrcs: Some(job_resrcs),
        gres_detail_str: details,
        gres_total,
    }
}

/// The `shared` a job record reports (`OverSubscribe=` of scontrol show
/// job): the job's own `--exclusive`/`--oversubscribe`, else its
/// partition's ExclusiveUser / OverSubscribe=EXCLUSIVE|FORCE, else unset.
pub fn share_value(c: &Controller, j: &Job) -> u16 {
    use crate::sched::{JOB_SHARED_MCS, JOB_SHARED_NONE, JOB_SHARED_OK, JOB_SHARED_USER};
    use slurm_conf::OverSubscribe;
    if crate::sched::whole_node(j) {
        return JOB_SHARED_NONE;
    }
    match j.req.shared {
        JOB_SHARED_NONE | JOB_SHARED_OK | JOB_SHARED_USER | JOB_SHARED_MCS => return j.req.shared,
        _ => {}
    }
    let Some(p) = c.conf().partitions.get(j.part) else {
        return slurm_wire::pack::NO_VAL16;
    };
    if p.conf.exclusive_user {
        return JOB_SHARED_USER;
    }
    match p.conf.over_subscribe {
        OverSubscribe::Force(n) if n > 1 => JOB_SHARED_OK,
        OverSubscribe::Exclusive => JOB_SHARED_NONE,
        _ => slurm_wire::pack::NO_VAL16,
    }
}

/// The job's `share_res` as stock has it once the scheduler looked at
/// the job: Some(true) shares (FORCE:N>1, or `--oversubscribe`),
/// Some(false) does not (`--exclusive`, OverSubscribe=EXCLUSIVE), None
/// left to the partition.
fn share_res(p: Option<&crate::state::config::PartDef>, j: &Job) -> Option<bool> {
    use slurm_conf::OverSubscribe;
    match p.map(|p| p.conf.over_subscribe) {
        Some(OverSubscribe::Force(n)) if n > 1 => return Some(true),
        Some(OverSubscribe::Exclusive) => return Some(false),
        _ => {}
    }
    if crate::sched::whole_node(j) {
        Some(false)
    } else if j.req.shared == crate::sched::JOB_SHARED_OK {
        Some(true)
    } else {
        None
    }
}

/// 26.05's `oversubscribe` of a job record (JOB_OVERSUBSCRIBE_NO 0,
/// YES 1, OK 2): whether it shares cores, or may as its partition allows.
pub fn oversubscribe_value(c: &Controller, j: &Job) -> u16 {
    let p = c.conf().partitions.get(j.part);
    match share_res(p, j) {
        Some(true) => 1,
        Some(false) => 0,
        None => {
            let m = p.map_or(1, |p| p.conf.over_subscribe.max_share());
            if m & 0x7fff > 1 || m & 0x8000 != 0 {
                2
            } else {
                0
            }
        }
    }
}

/// 26.05's `exclusive` of a job record (JOB_EXCLUSIVE_NONE 0, NODE 1,
/// USER 2, MCS 3): the job's own `--exclusive[=user|mcs]`, else its
/// partition's ExclusiveUser or OverSubscribe=EXCLUSIVE.
pub fn exclusive_value(c: &Controller, j: &Job) -> u16 {
    use crate::sched::{JOB_SHARED_MCS, JOB_SHARED_USER};
    let p = c.conf().partitions.get(j.part);
    match share_res(p, j) {
        Some(true) => return 0,
        Some(false) => return 1,
        None => {}
    }
    match j.req.shared {
        JOB_SHARED_USER => return 2,
        JOB_SHARED_MCS => return 3,
        _ => {}
    }
    match p {
        Some(p) if p.conf.exclusive_user => 2,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_lengths() {
        let (v, r) = runs([4u16, 4, 2, 4].into_iter());
        assert_eq!(v, vec![4, 2, 4]);
        assert_eq!(r, vec![2, 1, 1]);
    }
}
