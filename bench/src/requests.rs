//! The requests the load generator sends, built as the real clients build
//! them, and the check of what came back.

use slurm_wire::msg::common::Empty;
use slurm_wire::msg::job::JobInfoRequestMsg;
use slurm_wire::msg::job_desc::JobDescMsg;
use slurm_wire::msg::node::NodeInfoRequestMsg;
use slurm_wire::pack::{NO_VAL, NO_VAL16, NO_VAL64};
use slurm_wire::types::StepId;
use slurm_wire::Message;

/// One kind of RPC the generator can send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// REQUEST_SUBMIT_BATCH_JOB, as `sbatch [--hold] -o /dev/null --wrap true`.
    Submit { hold: bool },
    /// REQUEST_JOB_INFO, as `squeue` (all jobs).
    JobInfo,
    /// REQUEST_NODE_INFO, as `sinfo` (all nodes).
    NodeInfo,
    /// REQUEST_PING, as `scontrol ping`.
    Ping,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Submit { .. } => "submit",
            Kind::JobInfo => "job-info",
            Kind::NodeInfo => "node-info",
            Kind::Ping => "ping",
        }
    }
}

/// Who submits and from where (what sbatch reads from its environment).
#[derive(Debug, Clone)]
pub struct Submitter {
    pub uid: u32,
    pub gid: u32,
    pub work_dir: String,
    pub host: String,
    pub partition: Option<String>,
}

/// `show_flags` squeue and sinfo send: SHOW_ALL (hidden partitions too)
/// is what squeue -a does; plain squeue/sinfo send 0, and so do we.
const SHOW_FLAGS: u16 = 0;

/// The request for `kind`.
pub fn request(kind: Kind, who: &Submitter) -> Message {
    match kind {
        Kind::Submit { hold } => Message::RequestSubmitBatchJob(batch_job(who, hold)),
        Kind::JobInfo => Message::RequestJobInfo(JobInfoRequestMsg {
            // 0: "anything since the epoch", so the controller always sends the list.
            last_update: 0,
            show_flags: SHOW_FLAGS,
            job_ids: None,
        }),
        Kind::NodeInfo => Message::RequestNodeInfo(NodeInfoRequestMsg {
            last_update: 0,
            show_flags: SHOW_FLAGS,
        }),
        Kind::Ping => Message::RequestPing(Empty {}),
    }
}

/// What `sbatch [--hold] -o /dev/null --wrap true` sends: the fields
/// sbatch leaves unset are NO_VAL as `slurm_init_job_desc_msg` makes them
/// (values taken from real 22.05/24.11/26.05 captures).
pub fn batch_job(who: &Submitter, hold: bool) -> JobDescMsg {
    let env = [
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string(),
        "SLURM_JOB_NAME=wrap".to_string(),
        "SLURM_PRIO_PROCESS=0".to_string(),
        format!("SLURM_SUBMIT_DIR={}", who.work_dir),
        format!("SLURM_SUBMIT_HOST={}", who.host),
        "SLURM_UMASK=0022".to_string(),
    ];
    JobDescMsg {
        step_id: StepId {
            sluid: 0,
            job_id: NO_VAL,
            step_id: NO_VAL,
            step_het_comp: NO_VAL,
        },
        site_factor: NO_VAL,
        core_spec: NO_VAL16,
        // SLURM_DIST_UNKNOWN... sbatch's default task distribution
        task_dist: 8192,
        kill_on_node_fail: NO_VAL16,
        name: Some("wrap".into()),
        pn_min_cpus: NO_VAL16,
        pn_min_memory: NO_VAL64,
        oom_kill_step: NO_VAL16,
        pn_min_tmp_disk: NO_VAL,
        cpu_freq_min: NO_VAL,
        cpu_freq_max: NO_VAL,
        cpu_freq_gov: NO_VAL,
        partition: who.partition.clone(),
        // --hold is priority 0
        priority: if hold { 0 } else { NO_VAL },
        nice: NO_VAL,
        overcommit: 0xfe,
        num_tasks: NO_VAL,
        environment: env.into_iter().map(Some).collect(),
        script: Some("#!/bin/sh\n# This script was created by sbatch --wrap.\n\ntrue\n".into()),
        std_in: Some("/dev/null".into()),
        std_out: Some("/dev/null".into()),
        submit_line: Some(if hold {
            "sbatch --hold -o /dev/null --wrap true".into()
        } else {
            "sbatch -o /dev/null --wrap true".into()
        }),
        work_dir: Some(who.work_dir.clone()),
        reboot: NO_VAL16,
        requeue: NO_VAL16,
        shared: NO_VAL16,
        cpus_per_task: NO_VAL16,
        ntasks_per_node: NO_VAL16,
        ntasks_per_socket: NO_VAL16,
        ntasks_per_core: NO_VAL16,
        ntasks_per_tres: NO_VAL16,
        plane_size: NO_VAL16,
        cpu_bind_type: NO_VAL16,
        time_limit: NO_VAL,
        time_min: NO_VAL,
        min_cpus: 1,
        max_cpus: NO_VAL,
        min_nodes: NO_VAL,
        max_nodes: NO_VAL,
        sockets_per_node: NO_VAL16,
        cores_per_socket: NO_VAL16,
        threads_per_core: NO_VAL16,
        user_id: who.uid,
        group_id: who.gid,
        resv_port_cnt: NO_VAL16,
        req_switch: NO_VAL,
        wait4switch: NO_VAL,
        wait_all_nodes: NO_VAL16,
        // what sbatch sets in every capture (environment/spank flags)
        bitflags: 0x1E00_0000,
        delay_boot: NO_VAL,
        ..Default::default()
    }
}

/// A reply that counts as success, with the number of records it carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accepted {
    pub records: usize,
}

/// Checks `reply` against what a successful `kind` returns; the error
/// names the return code (e.g. `ESLURM_REJECTED_BY_...`) or the message type.
pub fn check_reply(kind: Kind, reply: &Message) -> Result<Accepted, String> {
    let rc_name = |rc: u32| {
        let rc = rc as i32;
        slurm_wire::errno::name(rc)
            .map(str::to_string)
            .unwrap_or_else(|| format!("rc={rc}"))
    };
    match (kind, reply) {
        (Kind::Submit { .. }, Message::ResponseSubmitBatchJob(r)) if r.error_code == 0 => {
            Ok(Accepted { records: 1 })
        }
        // Stock accepts a held job with this code in the reply (sbatch prints
        // the job id all the same): the job exists, pending with priority 0.
        (Kind::Submit { hold: true }, Message::ResponseSubmitBatchJob(r))
            if r.error_code as i32 == slurm_wire::errno::ESLURM_JOB_HELD =>
        {
            Ok(Accepted { records: 1 })
        }
        (Kind::Submit { .. }, Message::ResponseSubmitBatchJob(r)) => Err(rc_name(r.error_code)),
        (Kind::JobInfo, Message::ResponseJobInfo(r)) => Ok(Accepted {
            records: r.job_array.len(),
        }),
        (Kind::NodeInfo, Message::ResponseNodeInfo(r)) => Ok(Accepted {
            records: r.node_array.len(),
        }),
        (Kind::Ping, Message::ResponseSlurmRc(r)) if r.return_code == 0 => {
            Ok(Accepted { records: 0 })
        }
        (_, Message::ResponseSlurmRc(r)) => Err(rc_name(r.return_code)),
        (_, Message::ResponseSlurmRcMsg(r)) => Err(rc_name(r.return_code)),
        (_, other) => Err(format!("unexpected reply {}", other.msg_type())),
    }
}

/// The record count a job-info or node-info reply starts with (a
/// big-endian u32), read without decoding the records: the load generator
/// shares the machine with the controller, and a full decode of 100,000 jobs
/// per reply would take CPU from what is measured.
pub fn listing_count(body: &[u8]) -> Result<usize, String> {
    match body.get(..4) {
        Some(b) => Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize),
        None => Err(format!("listing reply of {} bytes", body.len())),
    }
}
