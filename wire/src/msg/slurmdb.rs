//! Accounting records (`slurmdb_*_rec_t`, `slurmdb_pack.c`) and the conditions (`slurmdb_*_cond_t`)
//! that select them; some also travel in controller RPCs.

use crate::codec::error::{named, PResult, WireError};
use crate::codec::{prim, shape, BufMut};
use crate::error::DecodeErrorKind;
use crate::pack::Wire;
use crate::types::{BitStr, Double, StepId};
use crate::{wire, ProtocolVersion};

wire! {
    /// `slurmdb_tres_rec_t` as packed by `slurmdb_pack_tres_rec`; the same
    /// in every release 22.05..26.05.
    pub struct SlurmdbTresRec {
        pub alloc_secs: u64,
        pub count: u64,
        pub id: u32,
        pub name: Option<String>,
        pub r#type: Option<String>,
    }
}

/// A `List` of strings (`slurm_pack_list` of `packstr_func`): NO_VAL for no list.
pub type StrList = Option<Vec<Option<String>>>;

wire! {
    /// `slurm_selected_step_t` (`slurm_pack_selected_step`): a job, step or array task to select.
    pub struct SlurmSelectedStep {
        pub step_id: StepId,
        pub array_task_id: u32,
        pub het_job_offset: u32,
        [V24_11..] pub array_bitmap: Option<BitStr>,
    }
}

wire! {
    /// `slurmdb_job_cond_t` (`slurmdb_pack_job_cond`), what sacct asks for. Upstream packs a NULL
    /// cond as one with no lists, `db_flags` SLURMDB_JOB_FLAG_NOTSET and zeros.
    pub struct SlurmdbJobCond {
        pub acct_list: StrList,
        pub associd_list: StrList,
        pub cluster_list: StrList,
        pub constraint_list: StrList,
        pub cpus_max: u32,
        pub cpus_min: u32,
        pub db_flags: u32,
        pub exitcode: u32,
        /// `JOBCOND_FLAG_*`.
        pub flags: u32,
        pub format_list: StrList,
        pub groupid_list: StrList,
        pub jobname_list: StrList,
        pub nodes_max: u32,
        pub nodes_min: u32,
        pub partition_list: StrList,
        pub qos_list: StrList,
        pub reason_list: StrList,
        pub resv_list: StrList,
        pub resvid_list: StrList,
        pub step_list: Option<Vec<SlurmSelectedStep>>,
        pub state_list: StrList,
        pub timelimit_max: u32,
        pub timelimit_min: u32,
        pub usage_end: i64,
        pub usage_start: i64,
        pub used_nodes: Option<String>,
        pub userid_list: StrList,
        pub wckey_list: StrList,
    }
}

wire! {
    /// `slurmdb_stats_t` (`_pack_slurmdb_stats`): a step's usage as TRES strings.
    pub struct SlurmdbStats {
        pub act_cpufreq: Double,
        pub consumed_energy: u64,
        pub tres_usage_in_ave: Option<String>,
        pub tres_usage_in_max: Option<String>,
        pub tres_usage_in_max_nodeid: Option<String>,
        pub tres_usage_in_max_taskid: Option<String>,
        pub tres_usage_in_min: Option<String>,
        pub tres_usage_in_min_nodeid: Option<String>,
        pub tres_usage_in_min_taskid: Option<String>,
        pub tres_usage_in_tot: Option<String>,
        pub tres_usage_out_ave: Option<String>,
        pub tres_usage_out_max: Option<String>,
        pub tres_usage_out_max_nodeid: Option<String>,
        pub tres_usage_out_max_taskid: Option<String>,
        pub tres_usage_out_min: Option<String>,
        pub tres_usage_out_min_nodeid: Option<String>,
        pub tres_usage_out_min_taskid: Option<String>,
        pub tres_usage_out_tot: Option<String>,
    }
}

wire! {
    /// `slurmdb_step_rec_t` (`slurmdb_pack_step_rec`), a step of a [`SlurmdbJobRec`].
    pub struct SlurmdbStepRec {
        pub container: Option<String>,
        pub elapsed: u32,
        pub end: i64,
        pub exitcode: u32,
        pub nnodes: u32,
        pub nodes: Option<String>,
        pub ntasks: u32,
        pub req_cpufreq_min: u32,
        pub req_cpufreq_max: u32,
        pub req_cpufreq_gov: u32,
        pub requid: u32,
        pub stats: SlurmdbStats,
        pub start: i64,
        pub state: u16,
        pub step_id: StepId,
        pub stepname: Option<String>,
        [V25_05..] pub cwd: Option<String>,
        [V25_05..] pub std_err: Option<String>,
        [V25_05..] pub std_in: Option<String>,
        [V25_05..] pub std_out: Option<String>,
        pub submit_line: Option<String>,
        pub suspended: u32,
        pub sys_cpu_sec: u64,
        pub sys_cpu_usec: u32,
        pub task_dist: u32,
        [V25_05..] pub timelimit: u32,
        pub tot_cpu_sec: u64,
        pub tot_cpu_usec: u32,
        pub tres_alloc_str: Option<String>,
        pub user_cpu_sec: u64,
        pub user_cpu_usec: u32,
    }
}

wire! {
    /// `slurmdb_job_rec_t` (`slurmdb_pack_job_rec`), a job as sacct shows it.
    pub struct SlurmdbJobRec {
        pub account: Option<String>,
        pub admin_comment: Option<String>,
        pub alloc_nodes: u32,
        pub array_job_id: u32,
        pub array_max_tasks: u32,
        pub array_task_id: u32,
        pub array_task_str: Option<String>,
        pub associd: u32,
        pub blockid: Option<String>,
        pub cluster: Option<String>,
        pub constraints: Option<String>,
        pub container: Option<String>,
        pub db_index: u64,
        pub derived_ec: u32,
        pub derived_es: Option<String>,
        pub elapsed: u32,
        pub eligible: i64,
        pub end: i64,
        pub env: Option<String>,
        [V26_05..] pub exclusive: Option<String>,
        pub exitcode: u32,
        [V23_02..] pub extra: Option<String>,
        [V23_02..] pub failed_node: Option<String>,
        pub flags: u32,
        pub gid: u32,
        pub jobid: u32,
        pub jobname: Option<String>,
        [..V23_11] pub lft: u32,
        [V23_02..] pub licenses: Option<String>,
        [V23_11..] pub lineage: Option<String>,
        pub mcs_label: Option<String>,
        pub nodes: Option<String>,
        pub het_job_id: u32,
        pub het_job_offset: u32,
        [V26_05..] pub oversubscribe: Option<String>,
        pub partition: Option<String>,
        pub priority: u32,
        pub qosid: u32,
        [V24_11..] pub qos_req: Option<String>,
        pub req_cpus: u32,
        pub req_mem: u64,
        pub requid: u32,
        [V24_11..] pub restart_cnt: u16,
        pub resv_name: Option<String>,
        pub resvid: u32,
        [V25_05..] pub resv_req: Option<String>,
        pub script: Option<String>,
        [V26_05..] pub sluid: u64,
        pub show_full: u32,
        pub start: i64,
        pub state: u32,
        pub state_reason_prev: u32,
        /// A plain count (0 for none), then the steps.
        #[wire(with = shape::count32, min = 4)]
        pub steps: Vec<SlurmdbStepRec>,
        [V25_05..] pub segment_size: u16,
        [V24_05..] pub std_err: Option<String>,
        [V24_05..] pub std_in: Option<String>,
        [V24_05..] pub std_out: Option<String>,
        pub submit: i64,
        pub submit_line: Option<String>,
        pub suspended: u32,
        pub system_comment: Option<String>,
        pub sys_cpu_sec: u64,
        pub sys_cpu_usec: u64,
        pub timelimit: u32,
        pub tot_cpu_sec: u64,
        pub tot_cpu_usec: u64,
        pub tres_alloc_str: Option<String>,
        pub tres_req_str: Option<String>,
        pub uid: u32,
        pub user: Option<String>,
        pub user_cpu_sec: u64,
        pub user_cpu_usec: u64,
        pub wckey: Option<String>,
        pub wckeyid: u32,
        pub work_dir: Option<String>,
    }
}

wire! {
    /// `slurmdb_tres_cond_t` (`slurmdb_pack_tres_cond`). A NULL cond goes out as `count` NO_VAL
    /// (in a u64), no lists and 0.
    pub struct SlurmdbTresCond {
        pub count: u64,
        pub format_list: StrList,
        pub id_list: StrList,
        pub name_list: StrList,
        pub type_list: StrList,
        pub with_deleted: u16,
    }
}

wire! {
    /// `slurmdb_qos_cond_t` (`slurmdb_pack_qos_cond`, without the presence flag 24.11 put in
    /// front: see `dbd::query::DbdQosCondMsg`). 24.11 replaced `with_deleted` by `flags`
    /// (QOS_COND_FLAG_WITH_DELETED) and moved it.
    pub struct SlurmdbQosCond {
        pub description_list: StrList,
        [V24_11..] pub flags: u16,
        pub format_list: StrList,
        pub id_list: StrList,
        pub name_list: StrList,
        pub preempt_mode: u16,
        [..V24_11] pub with_deleted: u16,
    }
}

wire! {
    /// `slurmdb_qos_rec_t` (`slurmdb_pack_qos_rec`); the same in every release 22.05..26.05.
    pub struct SlurmdbQosRec {
        pub description: Option<String>,
        pub id: u32,
        /// `QOS_FLAG_*`.
        pub flags: u32,
        pub grace_time: u32,
        pub grp_tres_mins: Option<String>,
        pub grp_tres_run_mins: Option<String>,
        pub grp_tres: Option<String>,
        pub grp_jobs: u32,
        pub grp_jobs_accrue: u32,
        pub grp_submit_jobs: u32,
        pub grp_wall: u32,
        pub max_tres_mins_pj: Option<String>,
        pub max_tres_run_mins_pa: Option<String>,
        pub max_tres_run_mins_pu: Option<String>,
        pub max_tres_pa: Option<String>,
        pub max_tres_pj: Option<String>,
        pub max_tres_pn: Option<String>,
        pub max_tres_pu: Option<String>,
        pub max_jobs_pa: u32,
        pub max_jobs_pu: u32,
        pub max_jobs_accrue_pa: u32,
        pub max_jobs_accrue_pu: u32,
        pub min_prio_thresh: u32,
        pub max_submit_jobs_pa: u32,
        pub max_submit_jobs_pu: u32,
        pub max_wall_pj: u32,
        pub min_tres_pj: Option<String>,
        pub name: Option<String>,
        pub preempt_bitstr: Option<BitStr>,
        pub preempt_list: StrList,
        pub preempt_mode: u16,
        pub preempt_exempt_time: u32,
        pub priority: u32,
        pub usage_factor: Double,
        pub usage_thres: Double,
        pub limit_factor: Double,
    }
}

wire! {
    /// `slurmdb_federation_cond_t` (`slurmdb_pack_federation_cond`); the same 22.05..26.05.
    pub struct SlurmdbFederationCond {
        pub cluster_list: StrList,
        pub federation_list: StrList,
        pub format_list: StrList,
        pub with_deleted: u16,
    }
}

wire! {
    /// `slurmdb_accounting_rec_t` (`slurmdb_pack_accounting_rec`): usage of one TRES in one period.
    pub struct SlurmdbAccountingRec {
        pub alloc_secs: u64,
        pub tres_rec: SlurmdbTresRec,
        pub id: u32,
        [V24_11..] pub id_alt: u32,
        pub period_start: i64,
    }
}

wire! {
    /// `slurmdb_assoc_rec_t` (`slurmdb_pack_assoc_rec`). Upstream packs a NULL association as one
    /// with no lists, NO_VAL limits and zeros.
    pub struct SlurmdbAssocRec {
        pub accounting_list: Option<Vec<SlurmdbAccountingRec>>,
        pub acct: Option<String>,
        pub cluster: Option<String>,
        [V23_02..] pub comment: Option<String>,
        pub def_qos_id: u32,
        /// `ASSOC_FLAG_*`; a `u16` before 24.05.
        [V24_05..] pub flags: u32,
        #[wire(with = shape::low16)] [..V24_05] => flags,
        pub shares_raw: u32,
        pub grp_tres_mins: Option<String>,
        pub grp_tres_run_mins: Option<String>,
        pub grp_tres: Option<String>,
        pub grp_jobs: u32,
        pub grp_jobs_accrue: u32,
        pub grp_submit_jobs: u32,
        pub grp_wall: u32,
        pub id: u32,
        pub is_def: u16,
        [..V23_11] pub lft: u32,
        [V23_11..] pub lineage: Option<String>,
        pub max_tres_mins_pj: Option<String>,
        pub max_tres_run_mins: Option<String>,
        pub max_tres_pj: Option<String>,
        pub max_tres_pn: Option<String>,
        pub max_jobs: u32,
        pub max_jobs_accrue: u32,
        pub min_prio_thresh: u32,
        pub max_submit_jobs: u32,
        pub max_wall_pj: u32,
        pub parent_acct: Option<String>,
        pub parent_id: u32,
        pub partition: Option<String>,
        pub priority: u32,
        pub qos_list: StrList,
        [..V23_11] pub rgt: u32,
        pub uid: u32,
        pub user: Option<String>,
    }
}

wire! {
    /// `slurmdb_cluster_accounting_rec_t` (`slurmdb_pack_cluster_accounting_rec`).
    pub struct SlurmdbClusterAccountingRec {
        pub alloc_secs: u64,
        pub tres_rec: SlurmdbTresRec,
        pub down_secs: u64,
        pub idle_secs: u64,
        pub over_secs: u64,
        pub pdown_secs: u64,
        pub period_start: i64,
        pub plan_secs: u64,
    }
}

wire! {
    /// `slurmdb_cluster_fed_t` as the cluster record carries it (its connections go separately).
    pub struct SlurmdbClusterFed {
        pub feature_list: StrList,
        pub name: Option<String>,
        pub id: u32,
        pub state: u32,
        pub sync_recvd: u8,
        pub sync_sent: u8,
    }
}

wire! {
    /// `slurmdb_cluster_rec_t` (`slurmdb_pack_cluster_rec`; see [`OptClusterRec`] for the flag
    /// 24.11 put in front). Before 24.05 a sender of 24.05+ packs `plugin_id_select` as NO_VAL.
    pub struct SlurmdbClusterRec {
        pub accounting_list: Option<Vec<SlurmdbClusterAccountingRec>>,
        pub classification: u16,
        pub control_host: Option<String>,
        pub control_port: u32,
        pub dimensions: u16,
        pub fed: SlurmdbClusterFed,
        pub flags: u32,
        [V24_11..] pub id: u16,
        pub name: Option<String>,
        pub nodes: Option<String>,
        [..V24_05] pub plugin_id_select: u32,
        pub root_assoc: Box<SlurmdbAssocRec>,
        pub rpc_version: u16,
        /// 1 while the sender has a federation connection from / to this cluster.
        pub fed_recv: u8,
        pub fed_send: u8,
        pub tres_str: Option<String>,
    }
}

wire! {
    /// A cluster record as `slurmdb_pack_cluster_rec` packs it: from 24.11 behind a presence flag
    /// (`None`: NULL); before, a NULL record went out as an empty one and decodes as one.
    pub struct OptClusterRec {
        #[wire(with = shape::flag8)] [V24_11..] pub rec: Option<SlurmdbClusterRec>,
        #[wire(with = shape::some)] [..V24_11] => rec,
    }
}

wire! {
    /// `slurmdb_federation_rec_t` (`slurmdb_pack_federation_rec`, after its presence flag).
    pub struct SlurmdbFederationRec {
        pub name: Option<String>,
        pub flags: u32,
        pub cluster_list: Option<Vec<OptClusterRec>>,
    }
}

wire! {
    /// `slurmdb_pack_federation_rec`: a `u8` presence flag, then the record.
    pub struct OptFederationRec(#[wire(with = shape::flag8)] pub Option<SlurmdbFederationRec>);
}

wire! {
    /// `slurmdb_coord_rec_t` (`slurmdb_pack_coord_rec`): an account a user coordinates.
    pub struct SlurmdbCoordRec {
        pub name: Option<String>,
        /// 1 when set on this account itself, 0 when inherited from a parent.
        pub direct: u16,
    }
}

wire! {
    /// `slurmdb_wckey_rec_t` (`slurmdb_pack_wckey_rec`); the same 22.05..26.05.
    pub struct SlurmdbWckeyRec {
        pub accounting_list: Option<Vec<SlurmdbAccountingRec>>,
        pub cluster: Option<String>,
        pub flags: u32,
        pub id: u32,
        pub is_def: u16,
        pub name: Option<String>,
        pub uid: u32,
        pub user: Option<String>,
    }
}

wire! {
    /// `slurmdb_user_rec_t` (`slurmdb_pack_user_rec`; see [`OptUserRec`] for the flag 25.11 put in
    /// front). 25.11 added `def_qos_id`.
    pub struct SlurmdbUserRec {
        pub admin_level: u16,
        pub assoc_list: Option<Vec<SlurmdbAssocRec>>,
        pub coord_accts: Option<Vec<SlurmdbCoordRec>>,
        [V25_11..] pub def_qos_id: u32,
        pub default_acct: Option<String>,
        pub default_wckey: Option<String>,
        pub flags: u32,
        pub name: Option<String>,
        pub old_name: Option<String>,
        pub uid: u32,
        pub wckey_list: Option<Vec<SlurmdbWckeyRec>>,
    }
}

wire! {
    /// A user record as `slurmdb_pack_user_rec` packs it: from 25.11 behind a presence flag
    /// (`None`: NULL); before, a NULL record went out as an empty one and decodes as one.
    pub struct OptUserRec {
        #[wire(with = shape::flag8)] [V25_11..] pub rec: Option<SlurmdbUserRec>,
        #[wire(with = shape::some)] [..V25_11] => rec,
    }
}

wire! {
    /// `slurmdb_account_rec_t` (`slurmdb_pack_account_rec`); the same 22.05..26.05.
    pub struct SlurmdbAccountRec {
        pub assoc_list: Option<Vec<SlurmdbAssocRec>>,
        pub coordinators: Option<Vec<SlurmdbCoordRec>>,
        pub description: Option<String>,
        pub flags: u32,
        pub name: Option<String>,
        pub organization: Option<String>,
    }
}

wire! {
    /// `slurmdb_assoc_cond_t` (`slurmdb_pack_assoc_cond`, without the presence flag 24.11 put in
    /// front: see [`OptAssocCond`]). 24.11 folded `only_defs` and the six `with*` words into
    /// `flags` (ASSOC_COND_FLAG_*).
    pub struct SlurmdbAssocCond {
        pub acct_list: StrList,
        pub cluster_list: StrList,
        pub def_qos_id_list: StrList,
        [V24_11..] pub flags: u32,
        pub format_list: StrList,
        pub id_list: StrList,
        [..V24_11] pub only_defs: u16,
        pub partition_list: StrList,
        pub parent_acct_list: StrList,
        pub qos_list: StrList,
        pub usage_end: i64,
        pub usage_start: i64,
        pub user_list: StrList,
        [..V24_11] pub with_usage: u16,
        [..V24_11] pub with_deleted: u16,
        [..V24_11] pub with_raw_qos: u16,
        [..V24_11] pub with_sub_accts: u16,
        [..V24_11] pub without_parent_info: u16,
        [..V24_11] pub without_parent_limits: u16,
    }
}

wire! {
    /// An association cond as `slurmdb_pack_assoc_cond` packs it: from 24.11 behind a presence
    /// flag (`None`: NULL); before, a NULL cond went out as an empty one and decodes as one.
    pub struct OptAssocCond {
        #[wire(with = shape::flag8)] [V24_11..] pub cond: Option<SlurmdbAssocCond>,
        #[wire(with = shape::some)] [..V24_11] => cond,
    }
}

wire! {
    /// `slurmdb_user_cond_t` (`slurmdb_pack_user_cond`); the same 22.05..26.05 but for its
    /// association cond.
    pub struct SlurmdbUserCond {
        pub admin_level: u16,
        pub assoc_cond: OptAssocCond,
        pub def_acct_list: StrList,
        pub def_wckey_list: StrList,
        pub with_assocs: u16,
        pub with_coords: u16,
        pub with_deleted: u16,
        pub with_wckeys: u16,
    }
}

wire! {
    /// `slurmdb_account_cond_t` (`slurmdb_pack_account_cond`). 24.05 replaced the three `with_*`
    /// words by `flags` (SLURMDB_ACCT_FLAG_*) between the lists.
    pub struct SlurmdbAccountCond {
        pub assoc_cond: OptAssocCond,
        pub description_list: StrList,
        [V24_05..] pub flags: u32,
        pub organization_list: StrList,
        [..V24_05] pub with_assocs: u16,
        [..V24_05] pub with_coords: u16,
        [..V24_05] pub with_deleted: u16,
    }
}

wire! {
    /// `slurmdb_cluster_cond_t` (`slurmdb_pack_cluster_cond`); 23.11 dropped
    /// `plugin_id_select_list`.
    pub struct SlurmdbClusterCond {
        pub classification: u16,
        pub cluster_list: StrList,
        pub federation_list: StrList,
        pub flags: u32,
        pub format_list: StrList,
        [..V23_11] pub plugin_id_select_list: StrList,
        pub rpc_version_list: StrList,
        pub usage_end: i64,
        pub usage_start: i64,
        pub with_usage: u16,
        pub with_deleted: u16,
    }
}

wire! {
    /// `slurmdb_add_assoc_cond_t` (`slurmdb_pack_add_assoc_cond`, 23.11): what `sacctmgr add
    /// account/user` of 23.11+ sends, the associations to make with their shared limits.
    pub struct SlurmdbAddAssocCond {
        pub acct_list: StrList,
        pub assoc: SlurmdbAssocRec,
        pub cluster_list: StrList,
        pub partition_list: StrList,
        pub user_list: StrList,
        pub wckey_list: StrList,
    }
}

wire! {
    /// `slurmdb_wckey_cond_t` (`slurmdb_pack_wckey_cond`); the same 22.05..26.05.
    pub struct SlurmdbWckeyCond {
        pub cluster_list: StrList,
        pub format_list: StrList,
        pub id_list: StrList,
        pub name_list: StrList,
        pub only_defs: u16,
        pub usage_end: i64,
        pub usage_start: i64,
        pub user_list: StrList,
        pub with_usage: u16,
        pub with_deleted: u16,
    }
}

wire! {
    /// `slurmdb_clus_res_rec_t` (`slurmdb_pack_clus_res_rec`): a resource's share on one cluster,
    /// a percentage in a `u16` before 23.02 made it a count.
    pub struct SlurmdbClusResRec {
        pub cluster: Option<String>,
        [V23_02..] pub allowed: u32,
        #[wire(with = shape::low16)] [..V23_02] => allowed,
    }
}

wire! {
    /// `slurmdb_res_rec_t` (`slurmdb_pack_res_rec`), a license or other resource. Before 23.02
    /// `allocated` was the `u16` percent_used, and `last_consumed`, `last_update` did not exist.
    pub struct SlurmdbResRec {
        pub clus_res_list: Option<Vec<SlurmdbClusResRec>>,
        #[wire(with = shape::nv32)] pub clus_res_rec: Option<SlurmdbClusResRec>,
        pub count: u32,
        pub description: Option<String>,
        pub flags: u32,
        pub id: u32,
        pub manager: Option<String>,
        pub name: Option<String>,
        [V23_02..] pub allocated: u32,
        #[wire(with = shape::low16)] [..V23_02] => allocated,
        [V23_02..] pub last_consumed: u32,
        pub server: Option<String>,
        pub r#type: u32,
        [V23_02..] pub last_update: i64,
    }
}

wire! {
    /// `slurmdb_res_cond_t` (`slurmdb_pack_res_cond`); the same 22.05..26.05 (23.02 renamed
    /// percent_list to allowed_list).
    pub struct SlurmdbResCond {
        pub cluster_list: StrList,
        pub description_list: StrList,
        pub flags: u32,
        pub format_list: StrList,
        pub id_list: StrList,
        pub manager_list: StrList,
        pub name_list: StrList,
        pub allowed_list: StrList,
        pub server_list: StrList,
        pub type_list: StrList,
        pub with_deleted: u16,
        pub with_clusters: u16,
    }
}

wire! {
    /// `slurmdb_txn_cond_t` (`slurmdb_pack_txn_cond`); the same 22.05..26.05.
    pub struct SlurmdbTxnCond {
        pub acct_list: StrList,
        pub action_list: StrList,
        pub actor_list: StrList,
        pub cluster_list: StrList,
        pub format_list: StrList,
        pub id_list: StrList,
        pub info_list: StrList,
        pub name_list: StrList,
        pub time_end: i64,
        pub time_start: i64,
        pub user_list: StrList,
        pub with_assoc_info: u16,
    }
}

wire! {
    /// `slurmdb_txn_rec_t` (`slurmdb_pack_txn_rec`), a row of the transaction log.
    pub struct SlurmdbTxnRec {
        pub accts: Option<String>,
        /// A `DBD_*` message type of the change.
        pub action: u16,
        pub actor_name: Option<String>,
        pub clusters: Option<String>,
        pub id: u32,
        pub set_info: Option<String>,
        pub timestamp: i64,
        pub users: Option<String>,
        pub where_query: Option<String>,
    }
}

wire! {
    /// One rollup period (hour, day, month) of [`SlurmdbRollupStats`].
    pub struct SlurmdbRollupPeriod {
        pub count: u16,
        pub timestamp: i64,
        pub time_last: u64,
        pub time_max: u64,
        pub time_total: u64,
    }
}

wire! {
    /// `slurmdb_rollup_stats_t` (`slurmdb_pack_rollup_stats`): a `u16` count of periods
    /// (DBD_ROLLUP_COUNT, 3), then each period's counters.
    pub struct SlurmdbRollupStats {
        pub cluster_name: Option<String>,
        #[wire(with = shape::count16, min = 34)]
        pub periods: Vec<SlurmdbRollupPeriod>,
    }
}

wire! {
    /// `slurmdb_rpc_obj_t` (`slurmdb_pack_rpc_obj`): calls of one RPC type or one user.
    pub struct SlurmdbRpcObj {
        pub cnt: u32,
        pub id: u32,
        pub time: u64,
    }
}

wire! {
    /// `slurmdb_stats_rec_t` (`slurmdb_pack_stats_msg`), DBD_GOT_STATS: `sacctmgr show stats`.
    pub struct SlurmdbStatsRec {
        pub dbd_rollup_stats: SlurmdbRollupStats,
        pub rollup_stats: Option<Vec<SlurmdbRollupStats>>,
        pub rpc_list: Option<Vec<SlurmdbRpcObj>>,
        pub time_start: i64,
        pub user_list: Option<Vec<SlurmdbRpcObj>>,
    }
}

wire! {
    /// `config_key_pair_t` (`pack_config_key_pair`).
    pub struct ConfigKeyPair {
        pub name: Option<String>,
        pub value: Option<String>,
    }
}

wire! {
    /// `slurmdb_used_limits_t` (`slurmdb_pack_used_limits`): one user's or account's use of a
    /// QOS. The arrays carry their own counts (`pack64_array`); 24.05 renamed `tres_run_mins` to
    /// `tres_run_secs` without changing the wire.
    pub struct SlurmdbUsedLimits {
        pub accrue_cnt: u32,
        pub acct: Option<String>,
        pub jobs: u32,
        pub submit_jobs: u32,
        pub tres: Vec<u64>,
        pub tres_run_secs: Vec<u64>,
        pub uid: u32,
    }
}

wire! {
    /// `slurmdb_qos_usage_t` (`slurmdb_pack_qos_usage`): a QOS's use as the controller counts it.
    /// The arrays carry their own counts; a long double travels as its `%Lf` text
    /// (`packlongdouble`), kept here as text so that it re-encodes exactly.
    pub struct SlurmdbQosUsage {
        pub accrue_cnt: u32,
        pub grp_used_jobs: u32,
        pub grp_used_submit_jobs: u32,
        pub grp_used_tres: Vec<u64>,
        pub grp_used_tres_run_secs: Vec<u64>,
        pub grp_used_wall: Double,
        pub norm_priority: Double,
        pub usage_raw: Option<String>,
        pub usage_tres_raw: Vec<Option<String>>,
        /// NO_VAL (`None`) where upstream has no or an empty list.
        pub user_limit_list: Option<Vec<SlurmdbUsedLimits>>,
        pub acct_limit_list: Option<Vec<SlurmdbUsedLimits>>,
    }
}

wire! {
    /// The object of SLURMDB_UPDATE_QOS_USAGE (`slurmdb_pack_qos_usage_update`): from 23.11 a QOS
    /// with the controller's limit arrays and its usage (`slurmdb_pack_qos_rec_with_usage`);
    /// before, as SLURMDB_REMOVE_QOS_USAGE, the QOS alone.
    pub struct SlurmdbQosUsageUpdate {
        pub qos: SlurmdbQosRec,
        [V23_11..] pub grp_tres_mins_ctld: Vec<u64>,
        [V23_11..] pub grp_tres_run_mins_ctld: Vec<u64>,
        [V23_11..] pub grp_tres_ctld: Vec<u64>,
        [V23_11..] pub max_tres_mins_pj_ctld: Vec<u64>,
        [V23_11..] pub max_tres_run_mins_pa_ctld: Vec<u64>,
        [V23_11..] pub max_tres_run_mins_pu_ctld: Vec<u64>,
        [V23_11..] pub max_tres_pa_ctld: Vec<u64>,
        [V23_11..] pub max_tres_pj_ctld: Vec<u64>,
        [V23_11..] pub max_tres_pn_ctld: Vec<u64>,
        [V23_11..] pub max_tres_pu_ctld: Vec<u64>,
        [V23_11..] pub min_tres_pj_ctld: Vec<u64>,
        [V23_11..] pub usage: SlurmdbQosUsage,
    }
}

/// Declares [`SlurmdbUpdateObject`]: one variant per `slurmdb_update_type_t` value, with the
/// record list that type carries (`slurmdb_pack_update_object`), or none.
macro_rules! update_objects {
    (
        lists { $($(#[doc = $doc:literal])* $variant:ident = $num:literal => $rec:ty,)* }
        bare { $($(#[doc = $bdoc:literal])* $bare:ident = $bnum:literal,)* }
    ) => {
        /// `slurmdb_update_object_t`: a `u16` type, then (but for a cluster's) a list of the
        /// records that type names.
        #[derive(Debug, Clone, PartialEq)]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        pub enum SlurmdbUpdateObject {
            $($(#[doc = $doc])* $variant(Option<Vec<$rec>>),)*
            $($(#[doc = $bdoc])* $bare,)*
        }

        impl SlurmdbUpdateObject {
            /// The `slurmdb_update_type_t` on the wire.
            pub fn update_type(&self) -> u16 {
                match self {
                    $(Self::$variant(_) => $num,)*
                    $(Self::$bare => $bnum,)*
                }
            }
        }

        // irregular: the type word decides what follows.
        impl Wire for SlurmdbUpdateObject {
            fn parse<'a>(i: &'a [u8], v: ProtocolVersion) -> PResult<'a, Self> {
                let (r, ty) = named(prim::u16(i), "type")?;
                match ty {
                    $($num => {
                        let (r, l) = named(Option::<Vec<$rec>>::parse(r, v), "objects")?;
                        Ok((r, Self::$variant(l)))
                    })*
                    $($bnum => Ok((r, Self::$bare)),)*
                    other => WireError::fail(
                        DecodeErrorKind::BadValue {
                            what: "update object type",
                            value: u64::from(other),
                        },
                        i,
                    ),
                }
            }

            fn put<B: BufMut>(&self, b: &mut B, v: ProtocolVersion) {
                b.put_u16(self.update_type());
                match self {
                    $(Self::$variant(l) => l.put(b, v),)*
                    $(Self::$bare => {})*
                }
            }
        }
    };
}

update_objects! {
    lists {
        AddUser = 1 => OptUserRec,
        AddAssoc = 2 => SlurmdbAssocRec,
        AddCoord = 3 => OptUserRec,
        ModifyUser = 4 => OptUserRec,
        ModifyAssoc = 5 => SlurmdbAssocRec,
        RemoveUser = 6 => OptUserRec,
        RemoveAssoc = 7 => SlurmdbAssocRec,
        RemoveCoord = 8 => OptUserRec,
        AddQos = 9 => SlurmdbQosRec,
        RemoveQos = 10 => SlurmdbQosRec,
        ModifyQos = 11 => SlurmdbQosRec,
        AddWckey = 12 => SlurmdbWckeyRec,
        RemoveWckey = 13 => SlurmdbWckeyRec,
        ModifyWckey = 14 => SlurmdbWckeyRec,
        RemoveAssocUsage = 17 => SlurmdbAssocRec,
        AddRes = 18 => SlurmdbResRec,
        RemoveRes = 19 => SlurmdbResRec,
        ModifyRes = 20 => SlurmdbResRec,
        /// SLURMDB_REMOVE_QOS_USAGE before 23.11, SLURMDB_UPDATE_QOS_USAGE from then.
        UpdateQosUsage = 21 => SlurmdbQosUsageUpdate,
        AddTres = 22 => SlurmdbTresRec,
        UpdateFeds = 23 => OptFederationRec,
        /// The dbd's statistics, typed by the DBD message number DBD_GOT_STATS.
        GotStats = 1490 => SlurmdbStatsRec,
    }
    bare {
        AddCluster = 15,
        RemoveCluster = 16,
    }
}

wire! {
    /// `accounting_update_msg_t`, ACCOUNTING_UPDATE_MSG: the changes slurmdbd pushes to a
    /// controller (a plain count, 0 for none). Before 23.02 it came as an RPC of its own; later
    /// releases send it on the persistent connection the dbd opens to the controller.
    pub struct AccountingUpdateMsg {
        #[wire(with = shape::count32, min = 2)]
        pub update_list: Vec<SlurmdbUpdateObject>,
    }
}
