//! The bodies the controller sends slurmdbd to account for its cluster, jobs and steps, and the
//! dbd's answers to them (upstream `slurmdbd_pack.c`).
//!
//! The layout follows the connection's negotiated release, not the sender's own: a 24.11
//! controller talking to a 23.11 dbd packs the 23.11 layout (and its `plugin_id_select` as
//! NO_VAL). Fields absent in a release decode to their default; where upstream's unpacker
//! fills in another value (a step's `state` before 26.05 is JOB_RUNNING) that is the reader's
//! business, not the codec's.

use super::list::DbdListMsg;
use crate::msg::jobacct::JobAcctInfo;
use crate::types::StepId;
use crate::wire;

/// `DBD_NODE_STATE_*`, the values of [`DbdNodeStateMsg::new_state`].
pub mod node_state {
    pub const DOWN: u16 = 1;
    pub const UP: u16 = 2;
    pub const UPDATE: u16 = 3;
}

wire! {
    /// `dbd_register_ctld_msg_t`, DBD_REGISTER_CTLD.
    pub struct DbdRegisterCtldMsg {
        pub dimensions: u16,
        pub flags: u32,
        /// Gone in 24.05; a newer sender packs NO_VAL here for an older peer.
        [..V24_05] pub plugin_id_select: u32,
        pub port: u16,
        [V25_11..] pub cluster_id: u32,
    }
}

wire! {
    /// `dbd_cluster_tres_msg_t`, DBD_CLUSTER_TRES and DBD_FLUSH_JOBS.
    pub struct DbdClusterTresMsg {
        pub cluster_nodes: Option<String>,
        pub event_time: i64,
        pub tres_str: Option<String>,
    }
}

wire! {
    /// `dbd_node_state_msg_t`, DBD_NODE_STATE.
    pub struct DbdNodeStateMsg {
        pub hostlist: Option<String>,
        [V23_11..] pub extra: Option<String>,
        [V23_11..] pub instance_id: Option<String>,
        [V23_11..] pub instance_type: Option<String>,
        pub reason: Option<String>,
        pub reason_uid: u32,
        /// A [`node_state`] value.
        pub new_state: u16,
        pub event_time: i64,
        pub state: u32,
        pub tres_str: Option<String>,
    }
}

wire! {
    /// `dbd_job_start_msg_t`, DBD_JOB_START (and the items of DBD_SEND_MULT_JOB_START).
    pub struct DbdJobStartMsg {
        pub account: Option<String>,
        pub alloc_nodes: u32,
        pub array_job_id: u32,
        pub array_max_tasks: u32,
        pub array_task_id: u32,
        pub array_task_str: Option<String>,
        pub array_task_pending: u32,
        pub assoc_id: u32,
        pub constraints: Option<String>,
        pub container: Option<String>,
        pub db_flags: u32,
        pub db_index: u64,
        pub eligible_time: i64,
        [V26_05..] pub exclusive: u8,
        pub gid: u32,
        pub gres_used: Option<String>,
        pub job_id: u32,
        pub job_state: u32,
        pub state_reason_prev: u32,
        [V23_02..] pub licenses: Option<String>,
        pub mcs_label: Option<String>,
        pub name: Option<String>,
        pub nodes: Option<String>,
        pub node_inx: Option<String>,
        pub het_job_id: u32,
        pub het_job_offset: u32,
        [V26_05..] pub oversubscribe: u8,
        pub partition: Option<String>,
        pub priority: u32,
        pub qos_id: u32,
        [V24_11..] pub qos_req: Option<String>,
        pub req_cpus: u32,
        pub req_mem: u64,
        [V24_11..] pub restart_cnt: u16,
        pub resv_id: u32,
        [V25_05..] pub resv_req: Option<String>,
        [V25_05..] pub segment_size: u16,
        [V26_05..] pub sluid: u64,
        pub start_time: i64,
        [V24_05..] pub std_err: Option<String>,
        [V24_05..] pub std_in: Option<String>,
        [V24_05..] pub std_out: Option<String>,
        pub submit_line: Option<String>,
        pub submit_time: i64,
        pub timelimit: u32,
        pub tres_alloc_str: Option<String>,
        pub tres_req_str: Option<String>,
        pub uid: u32,
        pub wckey: Option<String>,
        pub work_dir: Option<String>,
        pub env_hash: Option<String>,
        pub script_hash: Option<String>,
    }
}

wire! {
    /// `dbd_id_rc_msg_t`, DBD_ID_RC: the answer to a job start, with the job's `db_index`.
    pub struct DbdIdRcMsg {
        pub job_id: u32,
        pub db_index: u64,
        pub flags: u64,
        pub return_code: u32,
    }
}

wire! {
    /// `dbd_job_heavy_msg_t`, DBD_JOB_HEAVY: a job's environment and script, sent once per
    /// distinct hash.
    pub struct DbdJobHeavyMsg {
        pub env: Option<String>,
        pub env_hash: Option<String>,
        pub script: Option<String>,
        pub script_hash: Option<String>,
    }
}

wire! {
    /// `dbd_job_comp_msg_t`, DBD_JOB_COMPLETE.
    pub struct DbdJobCompMsg {
        pub admin_comment: Option<String>,
        pub assoc_id: u32,
        pub comment: Option<String>,
        pub db_index: u64,
        pub derived_ec: u32,
        pub end_time: i64,
        pub exit_code: u32,
        [V23_02..] pub extra: Option<String>,
        [V23_02..] pub failed_node: Option<String>,
        pub job_id: u32,
        pub job_state: u32,
        pub nodes: Option<String>,
        pub req_uid: u32,
        pub start_time: i64,
        pub submit_time: i64,
        pub system_comment: Option<String>,
        pub tres_alloc_str: Option<String>,
    }
}

wire! {
    /// `dbd_job_suspend_msg_t`, DBD_JOB_SUSPEND.
    pub struct DbdJobSuspendMsg {
        pub assoc_id: u32,
        pub db_index: u64,
        pub job_id: u32,
        pub job_state: u32,
        pub submit_time: i64,
        pub suspend_time: i64,
    }
}

wire! {
    /// `dbd_step_start_msg_t`, DBD_STEP_START.
    pub struct DbdStepStartMsg {
        pub assoc_id: u32,
        pub db_index: u64,
        pub container: Option<String>,
        pub name: Option<String>,
        pub nodes: Option<String>,
        pub node_inx: Option<String>,
        pub node_cnt: u32,
        pub start_time: i64,
        pub job_submit_time: i64,
        pub req_cpufreq_min: u32,
        pub req_cpufreq_max: u32,
        pub req_cpufreq_gov: u32,
        pub step_id: StepId,
        [V25_05..] pub cwd: Option<String>,
        /// Upstream's reader takes JOB_RUNNING where it is absent.
        [V26_05..] pub state: u32,
        [V25_05..] pub std_err: Option<String>,
        [V25_05..] pub std_in: Option<String>,
        [V25_05..] pub std_out: Option<String>,
        pub submit_line: Option<String>,
        pub task_dist: u32,
        [V25_05..] pub time_limit: u32,
        pub total_tasks: u32,
        pub tres_alloc_str: Option<String>,
    }
}

wire! {
    /// `dbd_step_comp_msg_t`, DBD_STEP_COMPLETE, with the step's usage.
    pub struct DbdStepCompMsg {
        pub assoc_id: u32,
        pub db_index: u64,
        pub end_time: i64,
        pub exit_code: u32,
        /// Packed as PROTOCOL_TYPE_DBD: present whenever the sender has a sample.
        pub jobacct: JobAcctInfo,
        pub job_submit_time: i64,
        pub job_tres_alloc_str: Option<String>,
        pub req_uid: u32,
        pub start_time: i64,
        pub state: u16,
        pub step_id: StepId,
        pub total_tasks: u32,
    }
}

/// DBD_SEND_MULT_JOB_START: the starts of jobs still without a `db_index`.
pub type DbdMultJobStartMsg = DbdListMsg<DbdJobStartMsg>;

/// DBD_GOT_MULT_JOB_START: one [`DbdIdRcMsg`] per start, in order.
pub type DbdMultIdRcMsg = DbdListMsg<DbdIdRcMsg>;
