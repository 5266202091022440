//! Read replies built from a snapshot of the controller: RESPONSE_NODE_INFO,
//! RESPONSE_PARTITION_INFO, RESPONSE_JOB_INFO, RESPONSE_NODE_REGISTRATION.
//! Values for fields we do not model are the ones stock sends
//! (fixtures/<ver>/*.pcap), per version where they differ.

use crate::state::job::Job;
use crate::state::msgs::job_nodelist;
use crate::state::node::Node;
use crate::state::Controller;
use crate::tres::Counts;
use crate::visibility::Visible;
use slurm_conf::PartitionState;
use slurm_wire::msg::job::{JobDetails, JobInfo, JobInfoMsg, MultiCoreData};
use slurm_wire::msg::job_desc::SelectJobinfo;
use slurm_wire::msg::node::{
    ExtSensorsData, NodeInfo, NodeInfoMsg, NodeRegistrationRespMsg, PowerMgmtData,
};
use slurm_wire::msg::partition::{PartFlags, PartitionInfo, PartitionInfoMsg};
use slurm_wire::msg::slurmdb::SlurmdbTresRec;
use slurm_wire::pack::{INFINITE, NO_VAL, NO_VAL16, NO_VAL64};
use slurm_wire::types::{BitStr, Double, StepId};
use slurm_wire::ProtocolVersion as V;

/// `NICE_OFFSET`: nice values travel offset by 2^31.
const NICE_OFFSET: u32 = 0x8000_0000;

/// The `gres/...` TRES counts of a node's `Gres=` for the tracked names.
fn gres_tres(gres: Option<&str>, tracked: &[String]) -> Vec<(String, u64)> {
    let have = crate::gres::parse_node_gres(gres.unwrap_or(""));
    tracked
        .iter()
        .map(|t| {
            let want = t.strip_prefix("gres/").unwrap_or(t);
            let (name, ty) = match want.split_once(':') {
                Some((n, ty)) => (n, Some(ty)),
                None => (want, None),
            };
            let n = have
                .iter()
                .filter(|g| g.name == name && (ty.is_none() || g.type_name.as_deref() == ty))
                .map(|g| g.count)
                .sum();
            (t.clone(), n)
        })
        .collect()
}

/// TRES shown for the requester: `gres:` before 23.02, `gres/` since.
fn tres_per_node_for(s: &str, v: V) -> String {
    s.split(',')
        .map(|t| {
            let rest = t.strip_prefix("gres/").or_else(|| t.strip_prefix("gres:"));
            match rest {
                Some(r) if v < V::V23_02 => format!("gres:{r}"),
                Some(r) => format!("gres/{r}"),
                None => t.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// `TOP_PRIORITY` of 22.05's priority/basic: each new job got one less.
const TOP_PRIORITY: u32 = 0xffff_0000;

fn node_bitmap(total: usize, set: impl IntoIterator<Item = usize>) -> BitStr {
    let mut b = BitStr::new(total as u32);
    for i in set {
        b.set(i as u32, true);
    }
    b
}

/// One node as `scontrol show node` receives it.
pub fn node_info(n: &Node, tracked: &[String], v: V) -> NodeInfo {
    let r = n.reported.as_ref();
    let old = v < V::V24_11;
    NodeInfo {
        name: Some(n.def.name.clone()),
        node_hostname: Some(n.def.hostname.clone()),
        node_addr: Some(n.def.addr.clone()),
        port: n.def.port,
        next_state: NO_VAL,
        node_state: n.state_word(),
        version: r.and_then(|r| r.version.clone()),
        cpus: n.def.cpus,
        boards: n.def.boards,
        sockets: n.def.sockets,
        cores: n.def.cores,
        threads: n.def.threads,
        real_memory: n.def.real_memory,
        tmp_disk: n.def.tmp_disk,
        owner: NO_VAL,
        cpus_efctv: n.def.cpus,
        cpu_load: n.cpu_load,
        free_mem: n.free_mem,
        weight: n.def.weight,
        reason_uid: if n.reason.is_some() {
            n.reason_uid
        } else {
            NO_VAL
        },
        suspend_time: if v >= V::V26_05 { INFINITE } else { 0 },
        boot_time: r.map(|r| r.boot_time).unwrap_or(0),
        last_busy: n.last_busy,
        reason_time: n.reason_time,
        slurmd_start_time: r.map(|r| r.slurmd_start_time).unwrap_or(0),
        select_plugin_id: if v >= V::V26_05 {
            0
        } else {
            NodeInfo::SELECT_PLUGIN_CONS_TRES
        },
        alloc_cpus: n.alloc_cpus,
        alloc_memory: n.alloc_mem,
        alloc_tres_fmt_str: (n.alloc_cpus > 0).then(|| {
            Counts {
                cpu: u64::from(n.alloc_cpus),
                mem: n.alloc_mem,
                ..Default::default()
            }
            .format()
        }),
        tres_alloc_weighted: Double::from_value(f64::from(n.alloc_cpus)),
        arch: r.and_then(|r| r.arch.clone()),
        features: n.def.features.clone(),
        features_act: n.def.features.clone(),
        gres: n.def.gres.clone(),
        os: r.and_then(|r| r.os.clone()),
        reason: n.reason.clone(),
        ext_sensors: if old {
            ExtSensorsData {
                consumed_energy: NO_VAL64,
                temperature: NO_VAL,
                ..Default::default()
            }
        } else {
            ExtSensorsData::default()
        },
        power: PowerMgmtData {
            cap_watts: if old { NO_VAL } else { 0 },
        },
        tres_fmt_str: Some(
            Counts {
                cpu: u64::from(n.def.cpus),
                mem: n.def.real_memory,
                billing: u64::from(n.def.cpus),
                extra: gres_tres(n.def.gres.as_deref(), tracked),
                ..Default::default()
            }
            .format(),
        ),
        ..Default::default()
    }
}

/// RESPONSE_NODE_INFO for all nodes. A node the requester may not see
/// (see [`Visible::nodes`]) keeps its slot, as stock's: a bit in
/// `hidden_nodes` from 24.11, a blank record before.
pub fn node_info_msg(c: &Controller, v: V, visible: &Visible) -> NodeInfoMsg {
    let seen = visible.nodes(c.conf());
    let shown = |i: usize| {
        seen.as_ref()
            .is_none_or(|s| s.get(i).copied().unwrap_or(true))
    };
    let hidden_nodes = (v >= V::V24_11).then(|| {
        let mut b = BitStr::new(c.nodes().len() as u32);
        for i in (0..c.nodes().len()).filter(|&i| !shown(i)) {
            b.set(i as u32, true);
        }
        b
    });
    NodeInfoMsg {
        last_update: c.last_node_update(),
        hidden_nodes,
        node_array: c
            .nodes()
            .iter()
            .enumerate()
            .map(|(i, n)| {
                if shown(i) {
                    node_info(n, &c.conf().tracked_gres, v)
                } else {
                    NodeInfo::default()
                }
            })
            .collect(),
    }
}

/// RESPONSE_NODE_INFO for one node (REQUEST_NODE_INFO_SINGLE); None if unknown.
pub fn node_info_single(c: &Controller, name: &str, v: V) -> Option<NodeInfoMsg> {
    let n = &c.nodes()[c.node_index(name)?];
    Some(NodeInfoMsg {
        last_update: c.last_node_update(),
        hidden_nodes: None,
        node_array: vec![node_info(n, &c.conf().tracked_gres, v)],
    })
}

/// RESPONSE_PARTITION_INFO.
pub fn partition_info_msg(c: &Controller, _v: V, visible: &Visible) -> PartitionInfoMsg {
    let conf = &c.conf();
    let partition_array = conf
        .partitions
        .iter()
        .enumerate()
        .filter(|&(pi, _)| visible.partition(pi))
        .map(|(pi, p)| {
            let pc = &p.conf;
            let cpus: u64 = p.nodes.iter().map(|&i| u64::from(conf.nodes[i].cpus)).sum();
            let mem: u64 = p.nodes.iter().map(|&i| conf.nodes[i].real_memory).sum();
            let mut flags = 0u32;
            for (on, bit) in [
                (conf.default_partition == Some(pi), 0x1),
                (pc.hidden, 0x2),
                (pc.root_only, 0x8),
                (pc.req_resv, 0x10),
                (pc.lln, 0x20),
                (pc.exclusive_user, 0x40),
            ] {
                if on {
                    flags |= bit;
                }
            }
            let names: Vec<&str> = p
                .nodes
                .iter()
                .map(|&i| conf.nodes[i].name.as_str())
                .collect();
            PartitionInfo {
                name: Some(pc.name.clone()),
                max_time: p.max_time(),
                default_time: p.default_time(),
                max_nodes: pc.max_nodes,
                min_nodes: pc.min_nodes,
                total_nodes: p.nodes.len() as u32,
                total_cpus: cpus as u32,
                max_cpus_per_node: pc.max_cpus_per_node,
                max_cpus_per_socket: pc.max_cpus_per_socket,
                def_mem_per_cpu: pc.def_mem.map(|m| m.to_wire()).unwrap_or(0),
                max_mem_per_cpu: pc.max_mem.map(|m| m.to_wire()).unwrap_or(0),
                flags: PartFlags(flags),
                max_share: pc.over_subscribe.max_share(),
                over_time_limit: pc.over_time_limit.unwrap_or(NO_VAL16),
                preempt_mode: NO_VAL16,
                priority_job_factor: pc.priority_job_factor,
                priority_tier: pc.priority_tier,
                state_up: match pc.state {
                    PartitionState::Up => 3,
                    PartitionState::Down => 1,
                    PartitionState::Drain => 2,
                    PartitionState::Inactive => 0,
                },
                resume_timeout: pc.resume_timeout.unwrap_or(NO_VAL16),
                suspend_timeout: pc.suspend_timeout.unwrap_or(NO_VAL16),
                suspend_time: pc.suspend_time.unwrap_or(NO_VAL),
                allow_accounts: pc.allow_accounts.clone(),
                allow_groups: pc.allow_groups.clone(),
                allow_alloc_nodes: pc.alloc_nodes.clone(),
                allow_qos: pc.allow_qos.clone(),
                alternate: pc.alternate.clone(),
                deny_accounts: pc.deny_accounts.clone(),
                deny_qos: pc.deny_qos.clone(),
                nodes: (!names.is_empty())
                    .then(|| slurm_conf::compress(&names).unwrap_or_else(|_| names.join(","))),
                node_inx: Some(node_bitmap(conf.nodes.len(), p.nodes.iter().copied())),
                tres_fmt_str: Some(
                    Counts {
                        cpu: cpus,
                        mem,
                        node: p.nodes.len() as u64,
                        billing: cpus,
                        extra: {
                            let mut extra: Vec<(String, u64)> = Vec::new();
                            for &i in &p.nodes {
                                let g =
                                    gres_tres(conf.nodes[i].gres.as_deref(), &conf.tracked_gres);
                                if extra.is_empty() {
                                    extra = g;
                                } else {
                                    for (e, (_, n)) in extra.iter_mut().zip(g) {
                                        e.1 += n;
                                    }
                                }
                            }
                            extra
                        },
                    }
                    .format(),
                ),
                ..Default::default()
            }
        })
        .collect();
    PartitionInfoMsg {
        last_update: c.last_part_update(),
        partition_array,
    }
}

/// One job as squeue / scontrol show job receive it.
/// `show_flags` bit: allocation details (`scontrol show job -d`).
pub const SHOW_DETAIL: u16 = 0x0002;

/// One job's record; the allocation detail (job_resources, per-node GRES)
/// only with SHOW_DETAIL, as stock packs it.
pub fn job_info(c: &Controller, j: &Job, v: V, show_flags: u16) -> JobInfo {
    let d = &j.req;
    let planned = if j.state == crate::state::job::JobState::Pending {
        c.planned(j.job_id)
    } else {
        None
    };
    let nodes = (!j.alloc.is_empty()).then(|| job_nodelist(c.nodes(), j));
    let alloc_cpus = j.alloc_cpus();
    let num_cpus = if j.alloc.is_empty() {
        j.min_cpus
    } else {
        alloc_cpus
    };
    let num_nodes = if j.alloc.is_empty() {
        j.min_nodes
    } else {
        j.alloc.len() as u32
    };
    let req_mem = crate::sched::requested_mem(c.conf(), j);
    let track_mem = crate::sched::memory_is_consumable(c.conf());
    let alloc_mem: u64 = if track_mem {
        j.alloc.iter().map(|a| a.mem).sum()
    } else {
        0
    };
    let priority = if j.priority == 0 {
        0 // held
    } else if v < V::V23_02 {
        let seq = j.job_id.saturating_sub(c.conf().raw.first_job_id.max(1)) + 1;
        TOP_PRIORITY.saturating_sub(seq)
    } else {
        j.priority
    };
    // 25.11+ controllers store the default batch output name; older
    // clients derive it from WorkDir themselves.
    let std_out = d
        .std_out()
        .map(str::to_string)
        .or_else(|| (v >= V::V25_11).then(|| crate::state::job::DEFAULT_BATCH_STDOUT.to_string()));
    let mut info = JobInfo {
        step_id: StepId {
            // 26.05's `scontrol show job -d` prints it (SLUID=).
            sluid: crate::state::msgs::job_sluid(c.conf(), j),
            job_id: j.job_id,
            step_id: NO_VAL,
            step_het_comp: NO_VAL,
        },
        account: d.account().map(str::to_string),
        // 22.05's scancel filters --wckey by it, client side.
        wckey: d.wckey().map(str::to_string),
        alloc_node: d.alloc_node().map(str::to_string),
        alloc_sid: d.alloc_sid,
        array_task_id: NO_VAL,
        batch_flag: u16::from(d.has_script()),
        batch_host: j.batch_host.map(|i| c.nodes()[i].def.name.clone()),
        billable_tres: Double::from_value(f64::from(num_cpus)),
        comment: d.comment().map(str::to_string),
        exit_code: j.exit_code,
        derived_ec: j.derived_ec,
        group_id: j.user.gid,
        job_state: j.state_word(),
        last_sched_eval: j.start_time.max(j.submit_time),
        mail_type: d.mail_type,
        mail_user: d
            .mail_user()
            .map(str::to_string)
            .or_else(|| j.user.name.clone()),
        name: d.name().map(str::to_string),
        priority,
        site_factor: NICE_OFFSET,
        start_protocol_ver: j.submit_version.to_wire(),
        state_desc: if j.state_reason == crate::state::job::reason::WAIT_NODE_NOT_AVAIL {
            // Worded as the client's own release's controller would.
            Some(crate::state::control::node_not_avail_desc(c, j, v))
        } else {
            j.state_desc.clone().or_else(|| {
                (j.state == crate::state::job::JobState::Pending
                    && j.state_reason == crate::state::partition::WAIT_ACCOUNT)
                    .then(|| {
                        crate::state::partition::wait_account_desc(&c.conf().partitions[j.part], j)
                    })
            })
        },
        state_reason: j.state_reason,
        tres_alloc_str: (!j.alloc.is_empty()).then(|| {
            Counts {
                cpu: u64::from(alloc_cpus),
                mem: alloc_mem,
                node: j.alloc.len() as u64,
                billing: u64::from(alloc_cpus),
                extra: Vec::new(),
            }
            .format()
        }),
        tres_req_str: Some(
            Counts {
                cpu: u64::from(j.min_cpus),
                mem: req_mem,
                node: u64::from(j.min_nodes),
                billing: u64::from(j.min_cpus),
                extra: Vec::new(),
            }
            .format(),
        ),
        tres_per_node: d.tres_per_node().map(|t| tres_per_node_for(t, v)),
        tres_per_job: d.tres_per_job().map(str::to_string),
        tres_per_socket: d.tres_per_socket().map(str::to_string),
        tres_per_task: d.tres_per_task().map(str::to_string),
        tres_bind: d.tres_bind().map(str::to_string),
        tres_freq: d.tres_freq().map(str::to_string),
        user_id: j.user.uid,
        time_limit: j.time_limit,
        // Pending: the backfill plan's expected start and nodes.
        start_time: planned.map(|p| p.start).unwrap_or(j.start_time),
        sched_nodes: planned.map(|p| crate::state::step::nodelist(c.nodes(), &p.nodes)),
        end_time: j.end_time,
        cluster: c.conf().raw.cluster_name.clone(),
        nodes,
        partition: c
            .conf()
            .partitions
            .get(j.part)
            .map(|p| p.name().to_string()),
        node_inx: Some(node_bitmap(c.nodes().len(), j.alloc.iter().map(|a| a.node))),
        details: Some(JobDetails {
            accrue_time: j.submit_time,
            eligible_time: j.eligible_time,
            cpu_freq_gov: d.cpu_freq_gov,
            cpu_freq_max: d.cpu_freq_max,
            cpu_freq_min: d.cpu_freq_min,
            requeue: u16::from(crate::state::control::requeue_allowed(c, j)),
            submit_time: j.submit_time,
            work_dir: d.work_dir().map(str::to_string),
            features: d.features().map(str::to_string),
            submit_line: d.submit_line().map(str::to_string),
            // 26.05 controllers send the node count range of pending jobs
            // (a job cannot use more nodes than it has tasks).
            max_nodes: if v >= V::V26_05 && j.state == crate::state::job::JobState::Pending {
                j.max_nodes.min(j.num_tasks.max(j.min_nodes))
            } else if j.state == crate::state::job::JobState::Pending
                && d.max_nodes != NO_VAL
                && d.max_nodes != 0
            {
                // Older ones send the maximum the user asked for.
                d.max_nodes
            } else {
                0
            },
            num_tasks: j.num_tasks,
            shared: crate::job_resrcs::share_value(c, j),
            oversubscribe: crate::job_resrcs::oversubscribe_value(c, j),
            exclusive: crate::job_resrcs::exclusive_value(c, j),
            ..Default::default()
        }),
        nice: NICE_OFFSET,
        restart_cnt: j.ctl.restart_cnt,
        num_cpus,
        num_nodes,
        core_spec: NO_VAL16,
        cpus_per_task: j.cpus_per_task,
        pn_min_cpus: j.cpus_per_task,
        pn_min_memory: if j.mem_per_cpu {
            j.mem | crate::state::MEM_PER_CPU
        } else {
            j.mem
        },
        oom_kill_step: NO_VAL16,
        req_nodes: d.req_nodes().map(str::to_string),
        exc_nodes: d.exc_nodes().map(str::to_string),
        std_err: d.std_err().map(str::to_string),
        std_in: d.std_in().map(str::to_string),
        std_out,
        multi_core: Some(MultiCoreData {
            sockets_per_node: NO_VAL16,
            cores_per_socket: NO_VAL16,
            threads_per_core: NO_VAL16,
            ntasks_per_socket: u16::MAX,
            ntasks_per_core: u16::MAX,
            ..Default::default()
        }),
        select_jobinfo: SelectJobinfo::default(),
        ..Default::default()
    };
    let detail = crate::job_resrcs::alloc_detail(c, j, v);
    info.gres_total = detail.gres_total;
    if show_flags & SHOW_DETAIL != 0 {
        info.job_resrcs = detail.job_resrcs;
        info.gres_detail_str = detail.gres_detail_str;
    }
    crate::state::array::decorate(c, j.job_id, &mut info, v);
    info
}

/// RESPONSE_JOB_INFO for the given jobs (all when `ids` is None), every
/// partition's.
pub fn job_info_msg(
    c: &Controller,
    ids: Option<&[u32]>,
    uid_filter: Option<u32>,
    show_flags: u16,
    v: V,
) -> JobInfoMsg {
    job_listing(c, ids, uid_filter, &Visible::all(), show_flags, v)
}

/// [`job_info_msg`] for a requester who sees only the `visible` partitions'
/// jobs.
pub fn job_listing(
    c: &Controller,
    ids: Option<&[u32]>,
    uid_filter: Option<u32>,
    visible: &Visible,
    show_flags: u16,
    v: V,
) -> JobInfoMsg {
    // Named jobs are looked up, not searched for among all of them.
    let picked: Box<dyn Iterator<Item = &Job>> = match ids {
        Some(ids) => {
            let mut uniq = ids.to_vec();
            uniq.sort_unstable();
            uniq.dedup();
            Box::new(uniq.into_iter().filter_map(|id| c.jobs().get(&id)))
        }
        None => Box::new(c.jobs().values()),
    };
    let job_array = picked
        .filter(|j| uid_filter.is_none_or(|u| j.user.uid == u) && visible.job(j))
        .map(|j| job_info(c, j, v, show_flags))
        .collect();
    JobInfoMsg {
        last_update: c.last_job_update(),
        last_backfill: 0,
        job_array,
    }
}

/// RESPONSE_NODE_REGISTRATION: the cluster's TRES as the node should count them.
pub fn registration_resp(c: &Controller, node: usize) -> NodeRegistrationRespMsg {
    let n = &c.nodes()[node];
    let t = |id: u32, ty: &str, name: Option<&str>, count: u64| SlurmdbTresRec {
        alloc_secs: 0,
        count,
        id,
        name: name.map(str::to_string),
        r#type: Some(ty.to_string()),
    };
    NodeRegistrationRespMsg {
        tres_list: Some(vec![
            t(1, "cpu", None, u64::from(n.def.cpus)),
            t(2, "mem", None, n.def.real_memory),
            t(3, "energy", None, 0),
            t(4, "node", None, 1),
            t(5, "billing", None, u64::from(n.def.cpus)),
            t(6, "fs", Some("disk"), 0),
            t(7, "vmem", None, 0),
            t(8, "pages", None, 0),
        ]),
        node_name: None,
    }
}

/// RESPONSE_JOB_INFO for REQUEST_JOB_INFO_SINGLE; None for an unknown id.
pub fn single_job_info(c: &Controller, job_id: u32, show_flags: u16, v: V) -> Option<JobInfoMsg> {
    let ids = crate::state::array::single_job_ids(c, job_id);
    if ids.is_empty() {
        return None;
    }
    Some(JobInfoMsg {
        last_update: c.last_job_update(),
        last_backfill: 0,
        job_array: ids
            .iter()
            .filter_map(|id| c.jobs().get(id))
            .map(|j| job_info(c, j, v, show_flags))
            .collect(),
    })
}
