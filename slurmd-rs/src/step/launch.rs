//! Planning a step launch (REQUEST_LAUNCH_TASKS from srun): the checks on
//! its credential, this node's share of the tasks, where srun listens, and
//! each task's environment. No I/O.

use crate::cred::{verify_signature, CredError, Trusted};
use crate::env::{compress_counts, cpus_of_node, take_limits, Env};
use slurm_conf::Hostlist;
use slurm_wire::auth::AuthPlugin;
use slurm_wire::msg::launch::LaunchTasksRequestMsg;
use slurm_wire::types::{SlurmAddr, StepId};
use slurm_wire::ProtocolVersion;
use std::net::{IpAddr, SocketAddr};

/// What this node needs to know about itself.
#[derive(Debug, Clone, Default)]
pub struct NodeInfo {
    pub node_name: String,
    pub conf_path: String,
    /// PropagateResourceLimitsExcept names.
    pub rlimits_except: Vec<String>,
    /// ConstrainDevices in force: the tasks see their GPUs numbered from 0.
    pub constrain_devices: bool,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum LaunchError {
    #[error("{0}")]
    Cred(#[from] CredError),
    #[error("launch by uid {sender} for a step of uid {owner}")]
    NotOwner { sender: u32, owner: u32 },
    #[error("credential is for {cred:?}, the launch for {msg:?}")]
    StepMismatch { cred: StepId, msg: StepId },
    #[error("node {0} is not in the step's node list {1}")]
    NotInStep(String, String),
    #[error("no task ids for node index {0}")]
    NoTasks(u32),
    #[error("no {0} port to reach srun")]
    NoPort(&'static str),
    #[error("empty command line")]
    NoArgv,
}

impl LaunchError {
    pub fn errno(&self) -> i32 {
        use slurm_wire::errno::*;
        match self {
            LaunchError::Cred(e) => e.errno(),
            LaunchError::NotOwner { .. } => ESLURM_USER_ID_MISSING,
            LaunchError::NoArgv => ESLURMD_EXECVE_FAILED,
            _ => ESLURMD_INVALID_JOB_CREDENTIAL,
        }
    }
}

/// One task to start here.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskPlan {
    pub gtid: u32,
    pub ltid: u32,
    pub env: Env,
}

/// Everything needed to run this node's part of a step.
#[derive(Debug, Clone, PartialEq)]
pub struct StepPlan {
    pub step: StepId,
    /// This node's index in the step (SLURM_NODEID).
    pub nodeid: u32,
    pub uid: u32,
    pub gid: u32,
    pub groups: Vec<u32>,
    pub argv: Vec<String>,
    pub cwd: String,
    pub tasks: Vec<TaskPlan>,
    /// srun's message server (RESPONSE_LAUNCH_TASKS, MESSAGE_TASK_EXIT).
    pub resp_addr: SocketAddr,
    /// srun's I/O server.
    pub io_addr: SocketAddr,
    /// The credential's signature: the io_init key srun checks.
    pub io_key: String,
    pub rlimits: Vec<(libc::__rlimit_resource_t, u64)>,
    pub umask: Option<u32>,
    /// `--input` file (None: stdin comes from srun).
    pub ifname: Option<String>,
}

/// Where srun is: the header's original sender when the launch was
/// forwarded, else the peer of the connection.
pub fn srun_ip(orig: &SlurmAddr, peer: SocketAddr) -> IpAddr {
    match orig {
        SlurmAddr::V4(a, _) => IpAddr::V4(*a),
        SlurmAddr::V6(a, _) => IpAddr::V6(*a),
        SlurmAddr::Unspec => peer.ip(),
    }
}

/// The launch checks: a credential signed by SlurmUser (or root) covering
/// exactly its fields, for this step, this node, and the sender's uid.
pub fn check_launch(
    plugin: &dyn AuthPlugin,
    sender_uid: u32,
    m: &LaunchTasksRequestMsg,
    cred_version: ProtocolVersion,
    node_name: &str,
    trusted: Trusted,
) -> Result<(), LaunchError> {
    let cred = &m.cred.cred;
    verify_signature(plugin, cred, cred_version, trusted)?;
    let a = &cred.arg;
    if sender_uid != a.id.uid && !trusted.allows(sender_uid) {
        return Err(LaunchError::NotOwner {
            sender: sender_uid,
            owner: a.id.uid,
        });
    }
    if a.step_id.job_id != m.step_id.job_id || a.step_id.step_id != m.step_id.step_id {
        return Err(LaunchError::StepMismatch {
            cred: a.step_id,
            msg: m.step_id,
        });
    }
    let hosts = a.step_hostlist.as_deref().unwrap_or_default();
    let ok = Hostlist::parse(hosts)
        .map(|h| h.contains(node_name))
        .unwrap_or(false);
    if !ok {
        return Err(LaunchError::NotInStep(node_name.into(), hosts.into()));
    }
    for id in [a.id.uid, a.id.gid] {
        if id == slurm_wire::auth::SLURM_AUTH_NOBODY || id == u32::MAX {
            return Err(CredError::BadIdentity(id).into());
        }
    }
    Ok(())
}

/// The entry of a `*_mem_alloc` run-length list covering node `idx`.
fn rep_value(reps: &[slurm_wire::msg::cred::MemAllocRep], idx: u32) -> Option<u64> {
    let mut end = 0u64;
    for r in reps {
        end = end.saturating_add(u64::from(r.rep_count));
        if u64::from(idx) < end {
            return Some(r.mem_alloc);
        }
    }
    None
}

/// This node's job and step memory (MB) from a credential, as stock's
/// `slurm_cred_get_mem` reads them: a batch credential's first entry; else
/// the node's run in the job's list (by its index in the job's nodes) and
/// in the step's (by its index in the step's nodes). A step of 0 (or none
/// found) gets the job's.
pub fn cred_mem(a: &slurm_wire::msg::cred::JobCredArg, node: &str) -> (u64, u64) {
    if a.step_id.step_id == StepId::BATCH_SCRIPT {
        let job = a.job_mem_alloc.first().map_or(0, |r| r.mem_alloc);
        let step = a.step_mem_alloc.first().map_or(0, |r| r.mem_alloc);
        return (job, if step == 0 { job } else { step });
    }
    let at = |list: &Option<String>, reps| {
        node_position(list.as_deref().unwrap_or_default(), node).and_then(|i| rep_value(reps, i))
    };
    let job = at(&a.job_hostlist, &a.job_mem_alloc).unwrap_or(0);
    let step = at(&a.step_hostlist, &a.step_mem_alloc).unwrap_or(0);
    (job, if step == 0 { job } else { step })
}

fn node_position(list: &str, node: &str) -> Option<u32> {
    Hostlist::parse(list).ok()?.position(node).map(|p| p as u32)
}

/// Plans this node's tasks (after [`check_launch`]).
pub fn plan_step(
    m: &LaunchTasksRequestMsg,
    node: &NodeInfo,
    srun: IpAddr,
) -> Result<StepPlan, LaunchError> {
    let a = &m.cred.cred.arg;
    let step_nodes = m
        .complete_nodelist
        .clone()
        .filter(|s| !s.is_empty())
        .or_else(|| a.step_hostlist.clone())
        .unwrap_or_default();
    let nodeid = node_position(&step_nodes, &node.node_name)
        .ok_or_else(|| LaunchError::NotInStep(node.node_name.clone(), step_nodes.clone()))?;
    let gtids = m
        .global_task_ids
        .get(nodeid as usize)
        .filter(|t| !t.is_empty())
        .ok_or(LaunchError::NoTasks(nodeid))?;
    let pick = |ports: &[u16], what| {
        ports
            .get(nodeid as usize % ports.len().max(1))
            .copied()
            .filter(|&p| p != 0)
            .ok_or(LaunchError::NoPort(what))
    };
    let resp_addr = SocketAddr::new(srun, pick(&m.resp_port, "response")?);
    let io_addr = SocketAddr::new(srun, pick(&m.io_port, "I/O")?);
    let argv: Vec<String> = m
        .argv
        .iter()
        .map(|s| s.clone().unwrap_or_default())
        .collect();
    if argv.first().is_none_or(|a| a.is_empty()) {
        return Err(LaunchError::NoArgv);
    }

    let mut base = Env::from_pairs(m.env.iter().flatten().map(String::as_str));
    let (rlimits, umask) = take_limits(&mut base, &node.rlimits_except);
    // A batch script's own pid must not pass for the task's (unknown here).
    base.remove("SLURM_TASK_PID");
    // CPUs of this node in the job, from the credential's groups.
    let job_idx = a
        .job_hostlist
        .as_deref()
        .and_then(|l| node_position(l, &node.node_name))
        .unwrap_or(0);
    let cpus = cpus_of_node(&a.cpu_array, job_idx as usize).unwrap_or(1);
    let gtid_list = gtids
        .iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let ip = srun.to_string();
    base.set("SLURM_NODEID", nodeid.to_string());
    base.set("SLURM_GTIDS", gtid_list);
    base.set("SLURM_CPUS_ON_NODE", cpus.to_string());
    base.set("SLURMD_NODENAME", node.node_name.as_str());
    base.set("SLURM_TOPOLOGY_ADDR", node.node_name.as_str());
    base.set("SLURM_TOPOLOGY_ADDR_PATTERN", "node");
    base.set("SLURM_LAUNCH_NODE_IPADDR", ip.as_str());
    base.set("SLURM_SRUN_COMM_HOST", ip.as_str());
    // Steps see the job's GPUs on this node (device indices as on the node).
    let gpus = crate::alloc::allocated_gres(a, "gpu", &node.node_name);
    for (k, v) in crate::alloc::gpu_env(&gpus, node.constrain_devices) {
        base.set(k, v);
    }
    base.set_default("SLURM_STEP_ID", m.step_id.step_id.to_string());
    base.set_default("SLURM_STEPID", m.step_id.step_id.to_string());
    base.set_default("SLURM_JOB_ID", m.step_id.job_id.to_string());
    base.set_default("SLURM_JOBID", m.step_id.job_id.to_string());
    base.set_default("SLURM_STEP_NODELIST", step_nodes.as_str());
    base.set_default("SLURM_STEP_NUM_NODES", m.global_task_ids.len().to_string());
    base.set_default("SLURM_STEP_NUM_TASKS", m.ntasks.to_string());
    let per_node: Vec<(u32, u32)> = m
        .global_task_ids
        .iter()
        .map(|t| (t.len() as u32, 1))
        .collect();
    base.set_default("SLURM_STEP_TASKS_PER_NODE", compress_counts(&per_node));
    base.set_default("SLURM_JOB_UID", a.id.uid.to_string());
    base.set_default("SLURM_JOB_GID", a.id.gid.to_string());
    if let Some(n) = a.id.pw_name.as_deref() {
        base.set_default("SLURM_JOB_USER", n);
    }
    if a.job_end_time != 0 {
        base.set("SLURM_JOB_END_TIME", a.job_end_time.to_string());
    }
    if a.job_start_time != 0 {
        base.set("SLURM_JOB_START_TIME", a.job_start_time.to_string());
    }
    base.set_default("SLURM_CONF", node.conf_path.as_str());
    base.set_default("TMPDIR", "/tmp");
    let tasks = gtids
        .iter()
        .enumerate()
        .map(|(l, &g)| {
            let mut env = base.clone();
            env.set("SLURM_PROCID", g.to_string());
            env.set("SLURM_LOCALID", l.to_string());
            TaskPlan {
                gtid: g,
                ltid: l as u32,
                env,
            }
        })
        .collect();
    let groups = if a.id.gids.is_empty() {
        m.gids.clone()
    } else {
        a.id.gids.clone()
    };
    Ok(StepPlan {
        step: m.step_id,
        nodeid,
        uid: a.id.uid,
        gid: a.id.gid,
        groups,
        argv,
        cwd: m
            .cwd
            .clone()
            .filter(|c| !c.is_empty())
            .unwrap_or_else(|| "/tmp".into()),
        tasks,
        resp_addr,
        io_addr,
        io_key: m.cred.cred.signature.clone().unwrap_or_default(),
        rlimits,
        umask,
        ifname: m.ifname.clone().filter(|s| !s.is_empty()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use slurm_wire::msg::cred::{CpuArrayRep, JobCred, VersionedCred};
    use std::net::Ipv4Addr;

    fn launch() -> LaunchTasksRequestMsg {
        let mut cred = JobCred::default();
        cred.arg.step_id = StepId {
            sluid: 0,
            job_id: 7,
            step_id: 0,
            step_het_comp: slurm_wire::pack::NO_VAL,
        };
        cred.arg.id.uid = 1000;
        cred.arg.id.gid = 100;
        cred.arg.id.pw_name = Some("alice".into());
        cred.arg.job_hostlist = Some("n[1-3]".into());
        cred.arg.step_hostlist = Some("n[2-3]".into());
        cred.arg.cpu_array = vec![CpuArrayRep { cpus: 4, reps: 3 }];
        cred.signature = Some("MUNGE:key:".into());
        LaunchTasksRequestMsg {
            step_id: cred.arg.step_id,
            ntasks: 3,
            cred: VersionedCred {
                cred_version: ProtocolVersion::V24_11.to_wire(),
                cred: Box::new(cred),
            },
            global_task_ids: vec![vec![0, 1], vec![2]],
            resp_port: vec![5000, 5001],
            io_port: vec![6000],
            argv: vec![Some("hostname".into())],
            env: vec![
                Some("PATH=/bin".into()),
                Some("SLURM_RLIMIT_CORE=0".into()),
                Some("SLURM_UMASK=0022".into()),
            ],
            complete_nodelist: Some("n[2-3]".into()),
            cwd: Some("/home/alice".into()),
            ..Default::default()
        }
    }

    fn node(n: &str) -> NodeInfo {
        NodeInfo {
            node_name: n.into(),
            conf_path: "/etc/slurm/slurm.conf".into(),
            rlimits_except: vec![],
            constrain_devices: false,
        }
    }

    const SRUN: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 9));

    #[test]
    fn second_node_gets_its_tasks_ports_and_env() {
        let p = plan_step(&launch(), &node("n3"), SRUN).unwrap();
        assert_eq!(p.nodeid, 1);
        assert_eq!(p.resp_addr, "10.0.0.9:5001".parse().unwrap());
        assert_eq!(p.io_addr, "10.0.0.9:6000".parse().unwrap());
        assert_eq!(p.io_key, "MUNGE:key:");
        assert_eq!(p.tasks.len(), 1);
        let e = &p.tasks[0].env;
        for (k, v) in [
            ("SLURM_PROCID", "2"),
            ("SLURM_LOCALID", "0"),
            ("SLURM_NODEID", "1"),
            ("SLURM_GTIDS", "2"),
            ("SLURM_STEP_ID", "0"),
            ("SLURM_JOB_ID", "7"),
            ("SLURM_STEP_NODELIST", "n[2-3]"),
            ("SLURM_STEP_NUM_TASKS", "3"),
            ("SLURM_STEP_TASKS_PER_NODE", "2,1"),
            ("SLURM_CPUS_ON_NODE", "4"),
            ("SLURM_LAUNCH_NODE_IPADDR", "10.0.0.9"),
            ("SLURMD_NODENAME", "n3"),
            ("PATH", "/bin"),
        ] {
            assert_eq!(e.get(k), Some(v), "{k}");
        }
        // Limits are applied, not passed on.
        assert_eq!(e.get("SLURM_RLIMIT_CORE"), None);
        assert_eq!(p.rlimits, vec![(libc::RLIMIT_CORE, 0)]);
        assert_eq!(p.umask, Some(0o022));
        let p = plan_step(&launch(), &node("n2"), SRUN).unwrap();
        assert_eq!(p.nodeid, 0);
        let procs: Vec<_> = p
            .tasks
            .iter()
            .map(|t| {
                (
                    t.gtid,
                    t.ltid,
                    t.env.get("SLURM_GTIDS").unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(procs, vec![(0, 0, "0,1".into()), (1, 1, "0,1".into())]);
    }

    #[test]
    fn refusals() {
        assert!(matches!(
            plan_step(&launch(), &node("n1"), SRUN),
            Err(LaunchError::NotInStep(..))
        ));
        let mut m = launch();
        m.io_port.clear();
        assert_eq!(
            plan_step(&m, &node("n2"), SRUN),
            Err(LaunchError::NoPort("I/O"))
        );
        let mut m = launch();
        m.argv.clear();
        assert_eq!(plan_step(&m, &node("n2"), SRUN), Err(LaunchError::NoArgv));
    }

    #[test]
    fn memory_of_this_node_from_the_credential() {
        use slurm_wire::msg::cred::MemAllocRep;
        let rep = |mem_alloc, rep_count| MemAllocRep {
            mem_alloc,
            rep_count,
        };
        let m = launch();
        let mut a = m.cred.cred.arg.clone();
        // Job on n[1-3]: 100 MB on n1, 300 on n[2-3]; step on n[2-3].
        a.job_mem_alloc = vec![rep(100, 1), rep(300, 2)];
        a.step_mem_alloc = vec![rep(50, 1), rep(70, 1)];
        assert_eq!(cred_mem(&a, "n2"), (300, 50));
        assert_eq!(cred_mem(&a, "n3"), (300, 70));
        // Not in the step: the job's amount for both.
        assert_eq!(cred_mem(&a, "n1"), (100, 100));
        a.step_mem_alloc.clear();
        assert_eq!(cred_mem(&a, "n3"), (300, 300));
        assert_eq!(cred_mem(&a, "elsewhere"), (0, 0));
        // A batch credential carries this node's first.
        a.step_id.step_id = StepId::BATCH_SCRIPT;
        a.job_mem_alloc = vec![rep(64, 1)];
        assert_eq!(cred_mem(&a, "n3"), (64, 64));
    }

    #[test]
    fn srun_address_prefers_the_forwarded_origin() {
        let peer: SocketAddr = "10.0.0.2:999".parse().unwrap();
        assert_eq!(srun_ip(&SlurmAddr::Unspec, peer), peer.ip());
        let o = SlurmAddr::V4(Ipv4Addr::new(10, 0, 0, 9), 1);
        assert_eq!(srun_ip(&o, peer), SRUN);
    }
}
