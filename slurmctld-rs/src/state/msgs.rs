//! Outbound messages to slurmd, built from state (pure: the agent signs the
//! job credentials and sends). Field values follow what stock slurmctld
//! sends (fixtures/<ver>/sbatch.pcap).

use super::command::{Outbound, Purpose, Time, MEM_PER_CPU};
use super::config::ClusterConf;
use super::job::Job;
use super::node::Node;
use slurm_wire::msg::cred::{
    CpuArrayRep, Identity, JobCred, JobCredArg, MemAllocRep, SockCoreRep, VersionedCred,
};
use slurm_wire::msg::gres::{gres_plugin_id, GresJobState, GresJobStateList};
use slurm_wire::msg::kill::{KillJobMsg, OptCred};
use slurm_wire::msg::launch::BatchJobLaunchMsg;
use slurm_wire::pack::{NO_VAL, NO_VAL16};
use slurm_wire::types::{BitStr, StepId};
use slurm_wire::{DecodeError, Message, ProtocolVersion};

/// select/cons_tres's plugin id, which 22.05 peers still expect.
const SELECT_CONS_TRES: u32 = 109;

/// An RPC to node `n` in its registered version; None if it never registered.
pub fn outbound(n: &Node, msg: Message, purpose: Purpose) -> Option<Outbound> {
    Some(Outbound {
        node: n.def.name.clone(),
        addr: n.def.addr.clone(),
        port: n.def.port,
        version: n.protocol_version?,
        msg,
        purpose,
    })
}

/// The job's nodes as a hostlist expression ("n[1-2]").
pub fn job_nodelist(nodes: &super::table::Nodes, j: &Job) -> String {
    let names: Vec<&str> = j.alloc.iter().map(|a| nodes[a.node].name()).collect();
    slurm_conf::compress(&names).unwrap_or_else(|_| names.join(","))
}

/// The 12-bit cluster id a 25.11+ sluid starts with. Stock draws one at
/// random when the cluster is first started and keeps it; ours is derived
/// from ClusterName so that it needs no state of its own and never
/// changes (2..=4095, the range stock uses).
pub fn cluster_id(conf: &ClusterConf) -> u16 {
    let name = conf.raw.raw("ClusterName").unwrap_or_default();
    // FNV-1a: stable across builds and platforms.
    let mut h: u32 = 0x811c_9dc5;
    for b in name.trim().to_ascii_lowercase().bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    (h % 4094) as u16 + 2
}

/// A job's sluid (25.11+): cluster id, a millisecond time and a sequence,
/// as stock's `generate_sluid` lays them out. Stock takes the time when
/// the job is made (and again when a requeue is done); here it is the
/// submit time, which the controller keeps and resets at the same points,
/// with the job id spread over the milliseconds and the sequence so that
/// jobs of one second differ. A function of saved state: stable across
/// restarts without being stored.
pub fn job_sluid(conf: &ClusterConf, j: &Job) -> u64 {
    let ms = (j.submit_time.max(0) as u64) * 1000 + u64::from(j.job_id >> 10) % 1000;
    let seq = u64::from(j.job_id & 0x3ff);
    (u64::from(cluster_id(conf)) << 52) | ((ms << 10) & ((1 << 52) - 1)) | seq
}

/// `JOB_OVERSUBSCRIBE_*` of a job (26.05's `get_job_oversubscribe_value`):
/// YES when it asked `--oversubscribe`, OK when it left it to a partition
/// that shares, else NO.
pub fn oversubscribe_value(conf: &ClusterConf, j: &Job) -> u16 {
    const NO: u16 = 0;
    const YES: u16 = 1;
    const OK: u16 = 2;
    match j.req.shared {
        1 => YES,
        NO_VAL16 => {
            let m = conf
                .partitions
                .get(j.part)
                .map_or(1, |p| p.conf.over_subscribe.max_share());
            if m > 1 {
                OK
            } else {
                NO
            }
        }
        _ => NO,
    }
}

/// `JOB_EXCLUSIVE_*` of a job (26.05's `get_job_exclusive_display_value`):
/// its own `--exclusive[=user|mcs]`, else its partition's ExclusiveUser or
/// OverSubscribe=EXCLUSIVE.
pub fn exclusive_value(conf: &ClusterConf, j: &Job) -> u16 {
    const NONE: u16 = 0;
    const NODE: u16 = 1;
    const USER: u16 = 2;
    const MCS: u16 = 3;
    match j.req.shared {
        1 => return NONE,
        0 => return NODE,
        2 => return USER,
        3 => return MCS,
        _ => {}
    }
    match conf.partitions.get(j.part) {
        Some(p) if p.conf.exclusive_user => USER,
        Some(p) if p.conf.over_subscribe.max_share() == 0 => NODE,
        _ => NONE,
    }
}

/// `job_oversubscribe_string`.
pub fn oversubscribe_str(v: u16) -> &'static str {
    match v {
        1 => "YES",
        2 => "OK",
        _ => "NO",
    }
}

/// `job_exclusive_display_string`.
pub fn exclusive_str(v: u16) -> &'static str {
    match v {
        1 => "NODE",
        2 => "USER",
        3 => "MCS",
        4 => "TOPO",
        _ => "NO",
    }
}

/// SLURM_TASKS_PER_NODE as 26.05's controller computes it for the batch
/// environment (`get_tasks_per_node`): the job's tasks laid out in blocks
/// over its nodes' CPUs, as `2(x3),1`. (slurmd-rs's env.rs lays out the
/// same for releases whose slurmd does it.)
pub fn tasks_per_node(j: &Job) -> String {
    let cpt = u32::from(j.cpus_per_task).max(1);
    let cpus: Vec<u32> = j.alloc.iter().map(|a| u32::from(a.cpus)).collect();
    let d = &j.req;
    let ntasks = if d.num_tasks != NO_VAL && d.num_tasks != 0 {
        d.num_tasks
    } else if d.ntasks_per_node != NO_VAL16 && d.ntasks_per_node != 0 {
        u32::from(d.ntasks_per_node).saturating_mul(cpus.len() as u32)
    } else {
        cpus.iter().map(|c| c / cpt).sum()
    };
    // One task per node first, then each node up to its CPUs, then the
    // rest round-robin (overcommit).
    let mut out: Vec<u32> = vec![0; cpus.len()];
    let mut left = ntasks;
    for slot in out.iter_mut() {
        if left == 0 {
            break;
        }
        *slot = 1;
        left -= 1;
    }
    for (slot, c) in out.iter_mut().zip(&cpus) {
        let add = (c / cpt).max(1).saturating_sub(*slot).min(left);
        *slot += add;
        left -= add;
    }
    // The rest round-robin, in one pass (a task count is the client's).
    let n = out.len() as u32;
    if let (Some(each), Some(extra)) = (left.checked_div(n), left.checked_rem(n)) {
        for (i, slot) in out.iter_mut().enumerate() {
            *slot = slot.saturating_add(each + u32::from((i as u32) < extra));
        }
    }
    runs(out)
        .into_iter()
        .map(|(v, reps)| {
            if reps > 1 {
                format!("{v}(x{reps})")
            } else {
                v.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Sets `key=value` in a launch environment, replacing an earlier value.
fn env_overwrite(env: &mut Vec<Option<String>>, key: &str, value: &str) {
    let prefix = format!("{key}=");
    env.retain(|e| !e.as_deref().is_some_and(|e| e.starts_with(&prefix)));
    env.push(Some(format!("{prefix}{value}")));
}

/// Runs of equal values, as upstream's `cpu_array_value`/`reps` pairs.
pub fn runs<T: PartialEq + Copy>(xs: impl IntoIterator<Item = T>) -> Vec<(T, u32)> {
    let mut out: Vec<(T, u32)> = Vec::new();
    for x in xs {
        match out.last_mut() {
            Some((v, n)) if *v == x => *n += 1,
            _ => out.push((x, 1)),
        }
    }
    out
}

fn opt(s: &Option<String>) -> Option<String> {
    s.clone()
}

fn own(s: Option<&str>) -> Option<String> {
    s.map(str::to_string)
}

/// The job's cores: one bit per core of each allocated node, set for
/// the cores it holds there.
fn core_bitmap(nodes: &super::table::Nodes, j: &Job) -> (u32, BitStr, Vec<SockCoreRep>) {
    let cores_of = |n: &Node| super::node::cores_of(&n.def) as u32;
    let total: u32 = j.alloc.iter().map(|a| cores_of(&nodes[a.node])).sum();
    let mut bm = BitStr::new(total);
    let mut off = 0;
    for a in &j.alloc {
        let n = &nodes[a.node];
        for c in a.core_ids(n) {
            bm.set(off + c, true);
        }
        off += cores_of(n);
    }
    let sock = runs(
        j.alloc
            .iter()
            .map(|a| (nodes[a.node].def.cores, nodes[a.node].def.sockets)),
    )
    .into_iter()
    .map(|((c, s), r)| SockCoreRep {
        cores_per_socket: c,
        sockets_per_node: s,
        sock_core_rep_count: r,
    })
    .collect();
    (total, bm, sock)
}

fn identity(j: &Job) -> Identity {
    Identity {
        uid: j.user.uid,
        gid: j.user.gid,
        pw_name: j.user.name.clone(),
        pw_gecos: j.user.gecos.clone(),
        pw_dir: j.user.dir.clone(),
        pw_shell: j.user.shell.clone(),
        gids: j.user.gids.clone(),
        gr_names: Vec::new(),
    }
}

pub(crate) fn cred_arg(
    conf: &ClusterConf,
    nodes: &super::table::Nodes,
    j: &Job,
    v: ProtocolVersion,
    now: Time,
    step: u32,
) -> JobCredArg {
    let hostlist = job_nodelist(nodes, j);
    let (tot, bm, sock) = core_bitmap(nodes, j);
    let cpu_array = runs(j.alloc.iter().map(|a| a.cpus))
        .into_iter()
        .map(|(cpus, reps)| CpuArrayRep { cpus, reps })
        .collect();
    let d = &j.req;
    JobCredArg {
        job_gres_list: job_gres_states(j),
        step_id: StepId {
            // Packed from 25.11 on; 26.05's slurmd sets SLURM_JOB_SLUID from it.
            sluid: if v >= ProtocolVersion::V25_11 {
                job_sluid(conf, j)
            } else {
                0
            },
            job_id: j.job_id,
            step_id: step,
            step_het_comp: NO_VAL,
        },
        id: identity(j),
        job_core_spec: NO_VAL16,
        job_account: own(d.account()),
        job_constraints: own(d.features()),
        job_end_time: j.end_time,
        // 26.05's prolog/epilog environment shows both.
        job_oversubscribe: if v >= ProtocolVersion::V26_05 {
            oversubscribe_value(conf, j)
        } else if v == ProtocolVersion::V24_11 {
            NO_VAL16
        } else {
            0
        },
        job_exclusive: if v >= ProtocolVersion::V26_05 {
            exclusive_value(conf, j)
        } else {
            0
        },
        job_partition: Some(conf.partitions[j.part].name().to_string()),
        job_start_time: j.start_time,
        job_std_err: own(d.std_err()),
        job_std_in: own(d.std_in()),
        job_std_out: own(d.std_out()),
        ctime: now,
        tot_core_cnt: tot,
        job_core_bitmap: Some(bm),
        sock_core: sock,
        cpu_array,
        job_nhosts: j.alloc.len() as u32,
        job_ntasks: if d.num_tasks == NO_VAL {
            0
        } else {
            d.num_tasks
        },
        job_hostlist: Some(hostlist),
        ..Default::default()
    }
}

/// The job's allocated GRES as the credential carries them (one record
/// per requested name/type), from which slurmd sets CUDA_VISIBLE_DEVICES.
pub fn job_gres_states(j: &Job) -> GresJobStateList {
    let nodes = j.alloc.len();
    GresJobStateList(
        j.gres_req
            .iter()
            .enumerate()
            .map(|(k, r)| {
                let per: Vec<Option<&super::node::GresAlloc>> =
                    j.alloc.iter().map(|a| a.gres.get(k)).collect();
                let counts: Vec<u64> = per
                    .iter()
                    .map(|g| g.map(|g| g.indices.len() as u64).unwrap_or(0))
                    .collect();
                let bits = per
                    .iter()
                    .map(|g| {
                        g.map(|g| {
                            let mut b = BitStr::new(g.total);
                            for &i in &g.indices {
                                b.set(i, true);
                            }
                            b
                        })
                    })
                    .collect();
                GresJobState {
                    plugin_id: gres_plugin_id(&r.name),
                    gres_per_node: r.count,
                    total_gres: counts.iter().sum(),
                    type_name: r.type_name.clone(),
                    node_cnt: nodes as u32,
                    gres_cnt_node_alloc: Some(counts),
                    gres_bit_alloc: Some(bits),
                    ..Default::default()
                }
            })
            .collect(),
    )
}

pub(crate) fn job_mem_runs(j: &Job) -> Vec<MemAllocRep> {
    runs(j.alloc.iter().map(|a| a.mem))
        .into_iter()
        .map(|(mem_alloc, rep_count)| MemAllocRep {
            mem_alloc,
            rep_count,
        })
        .collect()
}

/// REQUEST_BATCH_JOB_LAUNCH to the batch host (None while the host's
/// version is unknown); an error when the kept request does not decode.
pub fn batch_launch(
    conf: &ClusterConf,
    nodes: &super::table::Nodes,
    j: &Job,
    now: Time,
) -> Result<Option<Outbound>, DecodeError> {
    let Some(host) = j.batch_host.map(|h| &nodes[h]) else {
        return Ok(None);
    };
    let Some(v) = host.protocol_version else {
        return Ok(None);
    };
    let d = j.req.to_desc()?;
    let hostlist = job_nodelist(nodes, j);
    let mut arg = cred_arg(conf, nodes, j, v, now, StepId::BATCH_SCRIPT);
    arg.step_hostlist = Some(host.name().to_string());
    arg.step_core_bitmap = arg.job_core_bitmap.clone();
    arg.job_mem_alloc = job_mem_runs(j);
    let mut env = d.environment.clone();
    if let Some(name) = d.name.as_deref() {
        if !env
            .iter()
            .flatten()
            .any(|e| e.starts_with("SLURM_JOB_NAME="))
        {
            env.push(Some(format!("SLURM_JOB_NAME={name}")));
        }
    }
    // 26.05's controller puts the sharing mode in the job's environment.
    if v >= ProtocolVersion::V26_05 {
        env_overwrite(
            &mut env,
            "SLURM_JOB_OVERSUBSCRIBE",
            oversubscribe_str(oversubscribe_value(conf, j)),
        );
        env_overwrite(
            &mut env,
            "SLURM_JOB_EXCLUSIVE",
            exclusive_str(exclusive_value(conf, j)),
        );
        env_overwrite(&mut env, "SLURM_TASKS_PER_NODE", &tasks_per_node(j));
    }
    // 25.11+ controllers store the default output name and their stepd
    // relies on it (with none, a 26.05 stepd crashes setting up stdio).
    let std_out = d.std_out.clone().or_else(|| {
        (v >= ProtocolVersion::V25_11).then(|| super::job::DEFAULT_BATCH_STDOUT.to_string())
    });
    arg.job_std_out = std_out.clone();
    let cpu_groups = arg.cpu_array.clone();
    let msg = BatchJobLaunchMsg {
        job_id: j.job_id,
        uid: j.user.uid,
        gid: j.user.gid,
        partition: Some(conf.partitions[j.part].name().to_string()),
        ntasks: if d.num_tasks == NO_VAL {
            0
        } else {
            d.num_tasks
        },
        pn_min_memory: if j.mem_per_cpu {
            j.mem | MEM_PER_CPU
        } else {
            j.mem
        },
        open_mode: d.open_mode,
        array_task_id: NO_VAL,
        acctg_freq: opt(&d.acctg_freq),
        container: opt(&d.container),
        cpus_per_task: j.cpus_per_task,
        cpu_groups,
        nodes: Some(hostlist),
        script: opt(&d.script),
        work_dir: opt(&d.work_dir),
        std_err: opt(&d.std_err),
        std_in: opt(&d.std_in),
        std_out,
        argv: d.argv.clone(),
        spank_job_env: d.spank_job_env.clone(),
        environment: env,
        job_mem: j.alloc.first().map(|a| a.mem).unwrap_or(0),
        cred: VersionedCred {
            cred_version: v.to_wire(),
            cred: Box::new(JobCred {
                arg,
                signature: None,
            }),
        },
        select_plugin_id: if v < ProtocolVersion::V23_02 {
            SELECT_CONS_TRES
        } else {
            0
        },
        account: opt(&d.account),
        qos: opt(&d.qos),
        resv_name: opt(&d.reservation),
        cpu_freq_min: d.cpu_freq_min,
        cpu_freq_max: d.cpu_freq_max,
        cpu_freq_gov: d.cpu_freq_gov,
        ..Default::default()
    };
    Ok(super::msgs::outbound(
        host,
        Message::RequestBatchJobLaunch(msg),
        Purpose::Launch { job_id: j.job_id },
    ))
}

/// REQUEST_TERMINATE_JOB to every node still completing the job.
pub fn terminate(
    conf: &ClusterConf,
    nodes: &super::table::Nodes,
    j: &Job,
    now: Time,
) -> Vec<Outbound> {
    let hostlist = job_nodelist(nodes, j);
    j.completing
        .iter()
        .filter_map(|&i| {
            let n = &nodes[i];
            let v = n.protocol_version?;
            let arg = cred_arg(conf, nodes, j, v, now, NO_VAL);
            let msg = KillJobMsg {
                cred: OptCred(Some(Box::new(JobCred {
                    arg,
                    signature: None,
                }))),
                derived_ec: j.derived_ec,
                exit_code: j.exit_code,
                step_id: StepId {
                    sluid: 0,
                    job_id: j.job_id,
                    step_id: NO_VAL,
                    step_het_comp: NO_VAL,
                },
                job_state: j.state_word(),
                job_uid: j.user.uid,
                job_gid: j.user.gid,
                nodes: Some(hostlist.clone()),
                select_plugin_id: if v < ProtocolVersion::V23_02 {
                    SELECT_CONS_TRES
                } else {
                    0
                },
                start_time: j.start_time,
                time: now,
                work_dir: j.req.work_dir().map(str::to_string),
                ..Default::default()
            };
            outbound(
                n,
                // A time limit is announced as such (slurmd tells srun,
                // then SIGTERM, KillWait, SIGKILL).
                if j.state == super::job::JobState::Timeout {
                    Message::RequestKillTimelimit(msg)
                } else {
                    Message::RequestTerminateJob(msg)
                },
                Purpose::Terminate { job_id: j.job_id },
            )
        })
        .collect()
}
