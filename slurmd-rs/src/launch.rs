//! Planning a batch job launch: everything the launcher needs, computed
//! from the launch message, its credential and this node, without I/O.

use crate::env::{batch_env, BatchEnvCtx, Env};
use crate::fname::{self, FnameCtx};
use slurm_wire::msg::cred::JobCredArg;
use slurm_wire::msg::launch::BatchJobLaunchMsg;
use slurm_wire::ProtocolVersion;
use std::path::PathBuf;

/// `open_mode` values of the launch message.
pub const OPEN_MODE_APPEND: u8 = 1;
pub const OPEN_MODE_TRUNCATE: u8 = 2;

/// The job owner, from the credential (names resolved by the caller).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Owner {
    pub uid: u32,
    pub gid: u32,
    pub user_name: String,
    /// Supplementary groups.
    pub groups: Vec<u32>,
}

/// This node, as the plan needs it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeCtx {
    pub node_name: String,
    pub hostname: String,
    pub cluster_name: String,
    pub conf_path: String,
    /// SlurmdSpoolDir, patterns expanded.
    pub spool_dir: String,
    /// `JobFileAppend=1`.
    pub job_file_append: bool,
    /// PropagateResourceLimitsExcept names.
    pub rlimits_except: Vec<String>,
}

/// Everything needed to start the batch script.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchPlan {
    pub job_id: u32,
    pub owner: Owner,
    pub work_dir: String,
    pub script: String,
    /// `<spool>/job<id:05>`, made for the owner.
    pub batch_dir: PathBuf,
    pub script_path: PathBuf,
    /// argv[0] is the script path.
    pub argv: Vec<String>,
    pub env: Env,
    pub stdin: String,
    pub stdout: String,
    pub stderr: String,
    pub append: bool,
    /// Soft limits to apply (from the submitter's SLURM_RLIMIT_*).
    pub rlimits: Vec<(libc::__rlimit_resource_t, u64)>,
    pub umask: Option<u32>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PlanError {
    #[error("launch message has no script")]
    NoScript,
    #[error("node {0} is not in the job's node list {1}")]
    NotInNodeList(String, String),
}

impl PlanError {
    /// The job's completion code.
    pub fn errno(&self) -> i32 {
        slurm_wire::errno::ESLURMD_EXECVE_FAILED
    }
}

/// Index of `node` in the hostlist `nodes` (0 when the list is unreadable,
/// as a batch job only ever runs on its first node).
pub fn node_index(nodes: &str, node: &str) -> Option<u32> {
    let hl = slurm_conf::Hostlist::parse(nodes).ok()?;
    hl.position(node).map(|p| p as u32)
}

pub fn plan_batch(
    msg: &BatchJobLaunchMsg,
    cred: &JobCredArg,
    job_id: u32,
    owner: Owner,
    node: &NodeCtx,
    v: ProtocolVersion,
) -> Result<BatchPlan, PlanError> {
    let script = msg.script.clone().ok_or(PlanError::NoScript)?;
    let nodes = msg.nodes.clone().unwrap_or_default();
    let node_id = if nodes.is_empty() {
        0
    } else {
        node_index(&nodes, &node.node_name)
            .ok_or_else(|| PlanError::NotInNodeList(node.node_name.clone(), nodes.clone()))?
    };
    let work_dir = msg
        .work_dir
        .clone()
        .filter(|w| !w.is_empty())
        .unwrap_or_else(|| "/tmp".into());
    let mut env = batch_env(
        msg,
        cred,
        &BatchEnvCtx {
            job_id,
            cluster_name: node.cluster_name.clone(),
            node_name: node.node_name.clone(),
            node_id,
            conf_path: node.conf_path.clone(),
            user_name: owner.user_name.clone(),
            uid: owner.uid,
            gid: owner.gid,
            has_oom_kill_step: v >= ProtocolVersion::V24_11,
            has_node_aliases: v < ProtocolVersion::V23_02,
            working_cluster: if v < ProtocolVersion::V23_02 {
                working_cluster(&node.conf_path, v)
            } else {
                None
            },
            has_step_ids: v >= ProtocolVersion::V25_11,
        },
    );
    let (rlimits, umask) = crate::env::take_limits(&mut env, &node.rlimits_except);
    let fctx = FnameCtx {
        job_id,
        array_job_id: msg.array_job_id,
        array_task_id: msg.array_task_id,
        job_name: env.get("SLURM_JOB_NAME").unwrap_or_default().to_string(),
        user_name: owner.user_name.clone(),
        hostname: node.hostname.clone(),
        node_id,
        work_dir: work_dir.clone(),
    };
    let out_pat = msg
        .std_out
        .clone()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| fname::default_pattern(msg.array_task_id).to_string());
    let stdout = fname::expand(&out_pat, &fctx);
    let stderr = match msg.std_err.as_deref().filter(|s| !s.is_empty()) {
        Some(p) => fname::expand(p, &fctx),
        None => stdout.clone(),
    };
    let stdin = match msg.std_in.as_deref().filter(|s| !s.is_empty()) {
        Some(p) => fname::expand(p, &fctx),
        None => "/dev/null".into(),
    };
    let append = match msg.open_mode {
        OPEN_MODE_APPEND => true,
        OPEN_MODE_TRUNCATE => false,
        _ => node.job_file_append,
    };
    let batch_dir = PathBuf::from(&node.spool_dir).join(format!("job{job_id:05}"));
    let script_path = batch_dir.join("slurm_script");
    let mut argv = vec![script_path.to_string_lossy().into_owned()];
    argv.extend(
        msg.argv
            .iter()
            .skip(1)
            .map(|a| a.clone().unwrap_or_default()),
    );
    Ok(BatchPlan {
        job_id,
        owner,
        work_dir,
        script,
        batch_dir,
        script_path,
        argv,
        env,
        stdin,
        stdout,
        stderr,
        append,
        rlimits,
        umask,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use slurm_wire::msg::cred::CpuArrayRep;
    use slurm_wire::pack::NO_VAL;

    fn owner() -> Owner {
        Owner {
            uid: 1000,
            gid: 100,
            user_name: "alice".into(),
            groups: vec![100, 27],
        }
    }

    fn node() -> NodeCtx {
        NodeCtx {
            node_name: "n2".into(),
            hostname: "n2".into(),
            cluster_name: "c".into(),
            conf_path: "/etc/slurm/slurm.conf".into(),
            spool_dir: "/var/spool/slurmd".into(),
            job_file_append: false,
            rlimits_except: vec![],
        }
    }

    fn msg() -> BatchJobLaunchMsg {
        BatchJobLaunchMsg {
            job_id: 12,
            array_task_id: NO_VAL,
            nodes: Some("n[1-2]".into()),
            cpu_groups: vec![CpuArrayRep { cpus: 1, reps: 2 }],
            script: Some("#!/bin/sh\nhostname\n".into()),
            work_dir: Some("/home/alice".into()),
            argv: vec![Some("ignored".into()), Some("arg1".into())],
            environment: vec![Some("SLURM_JOB_NAME=myjob".into())],
            ..Default::default()
        }
    }

    #[test]
    fn plan_defaults() {
        let p = plan_batch(
            &msg(),
            &JobCredArg::default(),
            12,
            owner(),
            &node(),
            ProtocolVersion::V24_11,
        )
        .unwrap();
        assert_eq!(p.stdout, "/home/alice/slurm-12.out");
        assert_eq!(p.stderr, p.stdout);
        assert_eq!(p.stdin, "/dev/null");
        assert!(!p.append);
        assert_eq!(
            p.script_path,
            PathBuf::from("/var/spool/slurmd/job00012/slurm_script")
        );
        assert_eq!(
            p.argv,
            vec!["/var/spool/slurmd/job00012/slurm_script", "arg1"]
        );
        assert_eq!(p.env.get("SLURM_NODEID"), Some("1"));
        assert_eq!(p.env.get("SLURM_JOB_USER"), Some("alice"));
    }

    #[test]
    fn plan_patterns_and_modes() {
        let mut m = msg();
        m.std_out = Some("out-%x-%j-%N-%n.txt".into());
        m.std_err = Some("/err/%u.%s".into());
        m.open_mode = OPEN_MODE_APPEND;
        let p = plan_batch(
            &m,
            &JobCredArg::default(),
            12,
            owner(),
            &node(),
            ProtocolVersion::V22_05,
        )
        .unwrap();
        assert_eq!(p.stdout, "/home/alice/out-myjob-12-n2-1.txt");
        assert_eq!(p.stderr, "/err/alice.batch");
        assert!(p.append);
        assert_eq!(p.env.get("SLURM_OOM_KILL_STEP"), None);
        let mut n = node();
        n.job_file_append = true;
        m.open_mode = OPEN_MODE_TRUNCATE;
        let p = plan_batch(
            &m,
            &JobCredArg::default(),
            12,
            owner(),
            &n,
            ProtocolVersion::V24_11,
        )
        .unwrap();
        assert!(!p.append);
    }

    #[test]
    fn plan_refusals() {
        let mut m = msg();
        m.nodes = Some("n[5-6]".into());
        assert!(matches!(
            plan_batch(
                &m,
                &JobCredArg::default(),
                1,
                owner(),
                &node(),
                ProtocolVersion::V24_11
            ),
            Err(PlanError::NotInNodeList(..))
        ));
        assert_eq!(
            PlanError::NoScript.errno(),
            slurm_wire::errno::ESLURMD_EXECVE_FAILED
        );
        m.script = None;
        assert_eq!(
            plan_batch(
                &m,
                &JobCredArg::default(),
                1,
                owner(),
                &node(),
                ProtocolVersion::V24_11
            ),
            Err(PlanError::NoScript)
        );
    }
}

/// 22.05's SLURM_WORKING_CLUSTER from slurm.conf: cluster name, the first
/// controller's address, SlurmctldPort, the protocol number, and the
/// select plugin's id (slurm.h's select_plugin_type). None when the config
/// cannot be read or the select plugin has no known id.
pub fn working_cluster(conf_path: &str, v: ProtocolVersion) -> Option<String> {
    let conf = slurm_conf::SlurmConf::from_file(conf_path).ok()?;
    let ctl = conf.slurmctld_hosts.first()?;
    let addr = conf
        .slurmctld_addr
        .clone()
        .unwrap_or_else(|| ctl.addr.clone());
    let select_id = match conf.select_type.trim() {
        "select/cons_tres" => 109,
        "select/cons_res" => 101,
        "select/linear" => 102,
        _ => return None,
    };
    Some(format!(
        "{}:{addr}:{}:{}:{select_id}",
        conf.cluster_name.as_deref()?,
        conf.slurmctld_port.first,
        v.to_wire()
    ))
}

#[cfg(test)]
mod working_cluster_tests {
    use super::*;

    #[test]
    fn from_slurm_conf() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("slurm.conf");
        std::fs::write(
            &p,
            "ClusterName=c1\nSlurmctldHost=ctl\nSelectType=select/cons_tres\n\
             NodeName=n1 CPUs=1\nPartitionName=p Nodes=n1\n",
        )
        .unwrap();
        let p = p.display().to_string();
        assert_eq!(
            working_cluster(&p, ProtocolVersion::V22_05).as_deref(),
            Some("c1:ctl:6817:9728:109")
        );
        assert_eq!(
            working_cluster("/nonexistent/slurm.conf", ProtocolVersion::V22_05),
            None
        );
    }
}
