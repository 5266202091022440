//! What a job was given on this node, from its credential: the cores
//! (job_core_bitmap/step_core_bitmap over the sockets×cores layout of the
//! job's nodes, as stock's `format_core_allocs`), the CPUs they map to,
//! and the GRES device files it may not touch.

use crate::cgroup::Device;
use crate::hw::CpuTopo;
use crate::node::NodeCfg;
use slurm_wire::msg::cred::JobCredArg;
use std::path::Path;

/// The range of the credential's core bitmaps that is this node's: first
/// bit and core count. None when the node is not in the job.
pub fn node_core_range(a: &JobCredArg, node: &str) -> Option<(u32, u32)> {
    let hosts = slurm_conf::Hostlist::parse(a.job_hostlist.as_deref()?).ok()?;
    let mut idx = hosts.position(node)? as u32;
    if a.job_nhosts != 0 && idx >= a.job_nhosts {
        return None;
    }
    let mut first = 0u32;
    for r in &a.sock_core {
        let per = u32::from(r.sockets_per_node).saturating_mul(u32::from(r.cores_per_socket));
        if idx < r.sock_core_rep_count {
            first = first.saturating_add(per.saturating_mul(idx));
            return Some((first, per));
        }
        first = first.saturating_add(per.saturating_mul(r.sock_core_rep_count));
        idx -= r.sock_core_rep_count;
    }
    None
}

/// Node-local core indices set in `bits` within `range`.
fn cores_in(bits: Option<&slurm_wire::types::BitStr>, range: (u32, u32)) -> Vec<u32> {
    let Some(b) = bits else { return Vec::new() };
    (0..range.1).filter(|i| b.get(range.0 + i)).collect()
}

/// Job and step cores of this node (node-local core indices); the step
/// falls back to the job's when its bitmap is empty.
pub fn node_cores(a: &JobCredArg, node: &str) -> Option<(Vec<u32>, Vec<u32>)> {
    let range = node_core_range(a, node)?;
    let job = cores_in(a.job_core_bitmap.as_ref(), range);
    if job.is_empty() {
        return None;
    }
    let step = cores_in(a.step_core_bitmap.as_ref(), range);
    let step = if step.is_empty() { job.clone() } else { step };
    Some((job, step))
}

/// Logical CPUs grouped by core, cores in (socket, core id) order.
pub fn cores_from_topology(cpus: &[(u32, CpuTopo)]) -> Vec<Vec<u32>> {
    let mut v: Vec<(i64, i64, u32)> = cpus.iter().map(|(c, t)| (t.package, t.core, *c)).collect();
    v.sort_unstable();
    let mut out: Vec<Vec<u32>> = Vec::new();
    let mut last = None;
    for (p, c, cpu) in v {
        if last == Some((p, c)) {
            if let Some(l) = out.last_mut() {
                l.push(cpu);
            }
        } else {
            out.push(vec![cpu]);
            last = Some((p, c));
        }
    }
    out
}

/// This machine's cores (online CPUs by sysfs topology; one core per CPU
/// when sysfs has no topology).
pub fn machine_cores(sys: &Path) -> Vec<Vec<u32>> {
    let online = std::fs::read_to_string(sys.join("devices/system/cpu/online"))
        .map(|s| crate::hw::parse_cpu_list(&s))
        .unwrap_or_default();
    let topo: Vec<(u32, CpuTopo)> = online
        .iter()
        .map(|&cpu| {
            let d = sys.join(format!("devices/system/cpu/cpu{cpu}/topology"));
            let num = |f: &str| {
                std::fs::read_to_string(d.join(f))
                    .ok()
                    .and_then(|s| s.trim().parse::<i64>().ok())
            };
            let t = CpuTopo {
                package: num("physical_package_id").unwrap_or(0),
                core: num("core_id").unwrap_or(i64::from(cpu)),
            };
            (cpu, t)
        })
        .collect();
    cores_from_topology(&topo)
}

/// CPUs of the given node-local cores. A node declared bigger than the
/// machine (SlurmdParameters=config_overrides, test clusters) wraps onto
/// the real cores rather than naming CPUs that do not exist.
pub fn cpus_of_cores(cores: &[u32], machine: &[Vec<u32>]) -> Vec<u32> {
    if machine.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<u32> = cores
        .iter()
        .flat_map(|&c| machine[c as usize % machine.len()].iter().copied())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Job and step CPU lists for ConstrainCores (None when not constrained
/// or the credential has no cores for this node).
pub fn cpus_for(a: &JobCredArg, node: &NodeCfg, constrain: bool) -> Option<(Vec<u32>, Vec<u32>)> {
    if !constrain {
        return None;
    }
    let (job, step) = node_cores(a, &node.name)?;
    let machine = machine_cores(Path::new("/sys"));
    let j = cpus_of_cores(&job, &machine);
    let s = cpus_of_cores(&step, &machine);
    (!j.is_empty()).then_some((j, s))
}

/// A GRES device file of this node (gres.conf `File=`), with its index
/// among the node's devices of that GRES.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GresFile {
    pub name: String,
    pub index: u32,
    pub path: String,
    pub device: Option<Device>,
}

/// The node's GRES device files from gres.conf, numbered per GRES name
/// in file order (stock's GRES bit index).
pub fn gres_files(g: Option<&slurm_conf::GresConf>, node: &str) -> Vec<GresFile> {
    let mut out: Vec<GresFile> = Vec::new();
    for r in g
        .iter()
        .flat_map(|g| g.records.iter())
        .filter(|r| r.applies_to(node))
    {
        for f in &r.files {
            let index = out.iter().filter(|x| x.name == r.name).count() as u32;
            out.push(GresFile {
                name: r.name.clone(),
                index,
                path: f.clone(),
                device: Device::of_path(Path::new(f)),
            });
        }
    }
    out
}

/// One GRES record of the credential's job GRES list, reduced to what a
/// node needs: the plugin (hash of the name) and this node's bitmap.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeGres {
    pub plugin_id: u32,
    pub bits: Option<slurm_wire::types::BitStr>,
}

/// The credential's job GRES records for this node: each record's bitmap
/// at this node's position in the job's node list.
pub fn node_gres(a: &JobCredArg, node: &str) -> Vec<NodeGres> {
    let Some(index) = a
        .job_hostlist
        .as_deref()
        .and_then(|h| slurm_conf::expand(h).ok())
        .and_then(|hosts| hosts.iter().position(|h| h == node))
    else {
        return Vec::new();
    };
    a.job_gres_list
        .0
        .iter()
        .map(|g| NodeGres {
            plugin_id: g.plugin_id,
            bits: g
                .gres_bit_alloc
                .as_ref()
                .and_then(|b| b.get(index).cloned().flatten()),
        })
        .collect()
}

/// Indices set in the bitmaps of the records of GRES `name`.
pub fn indices_of(recs: &[NodeGres], name: &str) -> Vec<u32> {
    let id = crate::gres::plugin_id(name);
    let mut out: Vec<u32> = recs
        .iter()
        .filter(|r| r.plugin_id == id)
        .filter_map(|r| r.bits.as_ref())
        .flat_map(|b| (0..b.len()).filter(move |&i| b.get(i)))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// GRES indices of `name` the job was given on this node.
pub fn allocated_gres(a: &JobCredArg, name: &str, node: &str) -> Vec<u32> {
    indices_of(&node_gres(a, node), name)
}

/// The GPU variables of a job given GPUs `indices` (stock's
/// `gres_common_gpu_set_env` for the job): SLURM_JOB_GPUS with the node's
/// GPU indices, the vendor variables with the indices as the job sees
/// them (renumbered from 0 when ConstrainDevices hides the others).
pub fn gpu_env(indices: &[u32], local_index: bool) -> Vec<(&'static str, String)> {
    if indices.is_empty() {
        return Vec::new();
    }
    let join = |v: Vec<u32>| {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let global = join(indices.to_vec());
    let local = if local_index {
        join((0..indices.len() as u32).collect())
    } else {
        global.clone()
    };
    let mut out = vec![
        ("SLURM_GPUS_ON_NODE", indices.len().to_string()),
        ("SLURM_JOB_GPUS", global),
    ];
    // gres.conf without Flags= sets every vendor's variable.
    for var in [
        "CUDA_VISIBLE_DEVICES",
        "ROCR_VISIBLE_DEVICES",
        "ZE_AFFINITY_MASK",
        "GPU_DEVICE_ORDINAL",
    ] {
        out.push((var, local.clone()));
    }
    out
}

/// Devices of GRES files not allocated to the job (ConstrainDevices).
pub fn denied_devices(files: &[GresFile], a: &JobCredArg, node: &str) -> Vec<Device> {
    files
        .iter()
        .filter(|f| !allocated_gres(a, &f.name, node).contains(&f.index))
        .filter_map(|f| f.device)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use slurm_wire::msg::cred::SockCoreRep;
    use slurm_wire::types::BitStr;

    fn bits(n: u32, set: &[u32]) -> BitStr {
        let mut b = BitStr::new(n);
        for &i in set {
            b.set(i, true);
        }
        b
    }

    /// Three nodes: n1 with 2×4 cores, n[2-3] with 1×2 cores.
    fn cred() -> JobCredArg {
        JobCredArg {
            job_hostlist: Some("n[1-3]".into()),
            job_nhosts: 3,
            sock_core: vec![
                SockCoreRep {
                    cores_per_socket: 4,
                    sockets_per_node: 2,
                    sock_core_rep_count: 1,
                },
                SockCoreRep {
                    cores_per_socket: 2,
                    sockets_per_node: 1,
                    sock_core_rep_count: 2,
                },
            ],
            // n1: cores 0,5; n2: core 1; n3: both.
            job_core_bitmap: Some(bits(12, &[0, 5, 9, 10, 11])),
            step_core_bitmap: Some(bits(12, &[5, 9, 10])),
            ..Default::default()
        }
    }

    #[test]
    fn gpu_indices_come_from_this_nodes_bitmap() {
        let mut a = cred();
        a.job_gres_list =
            slurm_wire::msg::gres::GresJobStateList(vec![slurm_wire::msg::gres::GresJobState {
                plugin_id: crate::gres::plugin_id("gpu"),
                node_cnt: 3,
                gres_bit_alloc: Some(vec![Some(bits(4, &[0, 1])), None, Some(bits(4, &[2, 3]))]),
                ..Default::default()
            }]);
        assert_eq!(allocated_gres(&a, "gpu", "n1"), vec![0, 1]);
        assert_eq!(allocated_gres(&a, "gpu", "n2"), Vec::<u32>::new());
        assert_eq!(allocated_gres(&a, "gpu", "n3"), vec![2, 3]);
        assert_eq!(allocated_gres(&a, "gpu", "n9"), Vec::<u32>::new());
        assert_eq!(allocated_gres(&a, "mps", "n1"), Vec::<u32>::new());
    }

    #[test]
    fn core_ranges_per_node() {
        let a = cred();
        assert_eq!(node_core_range(&a, "n1"), Some((0, 8)));
        assert_eq!(node_core_range(&a, "n2"), Some((8, 2)));
        assert_eq!(node_core_range(&a, "n3"), Some((10, 2)));
        assert_eq!(node_core_range(&a, "n4"), None);
        assert_eq!(node_cores(&a, "n1"), Some((vec![0, 5], vec![5])));
        assert_eq!(node_cores(&a, "n2"), Some((vec![1], vec![1])));
        assert_eq!(node_cores(&a, "n3"), Some((vec![0, 1], vec![0])));
        let mut none = cred();
        none.job_core_bitmap = None;
        assert_eq!(node_cores(&none, "n1"), None);
    }

    #[test]
    fn cores_to_cpus() {
        // 2 sockets × 2 cores × 2 threads, Linux-style numbering: thread
        // siblings are n and n+4.
        let t = |p, c| CpuTopo {
            package: p,
            core: c,
        };
        let topo = [
            (0, t(0, 0)),
            (1, t(0, 1)),
            (2, t(1, 0)),
            (3, t(1, 1)),
            (4, t(0, 0)),
            (5, t(0, 1)),
            (6, t(1, 0)),
            (7, t(1, 1)),
        ];
        let m = cores_from_topology(&topo);
        assert_eq!(m, vec![vec![0, 4], vec![1, 5], vec![2, 6], vec![3, 7]]);
        assert_eq!(cpus_of_cores(&[1, 2], &m), vec![1, 2, 5, 6]);
        // Cores beyond the machine wrap.
        assert_eq!(cpus_of_cores(&[5], &m), vec![1, 5]);
        assert_eq!(cpus_of_cores(&[0], &[]), Vec::<u32>::new());
    }

    #[test]
    fn gres_files_are_numbered_per_name() {
        let g = slurm_conf::GresConf::parse_str(
            "NodeName=n1 Name=gpu File=/dev/null,/dev/zero\nNodeName=n1 Name=nic File=/dev/full\nNodeName=n9 Name=gpu File=/dev/x\n",
            "/etc/slurm/gres.conf",
        )
        .unwrap();
        let f = gres_files(Some(&g), "n1");
        let ids: Vec<(&str, u32)> = f.iter().map(|x| (x.name.as_str(), x.index)).collect();
        assert_eq!(ids, vec![("gpu", 0), ("gpu", 1), ("nic", 0)]);
        // /dev/null is 1:3 on Linux.
        assert_eq!(
            f[0].device,
            Some(Device {
                kind: 'c',
                major: 1,
                minor: 3
            })
        );
        // A job without GRES may use none of them.
        assert_eq!(denied_devices(&f, &cred(), "n1").len(), 3);
    }

    #[test]
    fn gres_indices_and_gpu_env() {
        let recs = vec![
            NodeGres {
                plugin_id: crate::gres::plugin_id("gpu"),
                bits: Some(bits(4, &[1, 3])),
            },
            NodeGres {
                plugin_id: crate::gres::plugin_id("nic"),
                bits: Some(bits(2, &[0])),
            },
            NodeGres {
                plugin_id: crate::gres::plugin_id("gpu"),
                bits: None,
            },
        ];
        assert_eq!(indices_of(&recs, "gpu"), vec![1, 3]);
        assert_eq!(indices_of(&recs, "nic"), vec![0]);
        assert!(indices_of(&recs, "mps").is_empty());
        let e = gpu_env(&[1, 3], true);
        let get = |k: &str| e.iter().find(|(n, _)| *n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("SLURM_JOB_GPUS"), Some("1,3"));
        assert_eq!(get("CUDA_VISIBLE_DEVICES"), Some("0,1"));
        assert_eq!(get("SLURM_GPUS_ON_NODE"), Some("2"));
        let e = gpu_env(&[1, 3], false);
        assert!(e.contains(&("CUDA_VISIBLE_DEVICES", "1,3".to_string())));
        assert!(gpu_env(&[], true).is_empty());
    }
}
