//! `scontrol show config`: RESPONSE_BUILD_INFO carries the whole
//! `slurm_ctl_conf_t` (`slurm_conf_t` in 26.05), packed by
//! `_pack_slurm_ctl_conf_msg` (26.05: `_pack_slurm_conf`).
//!
//! Every release between 22.05 and 26.05 only inserted or dropped fields (no
//! reordering), so one gated field list covers all eight layouts. The gates
//! were derived from the top branch of each release's pack function.

use crate::error::Result;
use crate::pack::{Reader, Wire, Writer};
use crate::wire_struct;
use crate::ProtocolVersion;

wire_struct! {
    /// `config_key_pair_t`: one `Key=Value` line of a plugin's config file.
    pub struct ConfigKeyPair {
        pub name: Option<String>,
        pub value: Option<String>,
    }
}

wire_struct! {
    /// `config_plugin_params_t`: a plugin name and its key-value pairs.
    pub struct ConfigPluginParams {
        pub name: Option<String>,
        pub key_pairs: Option<Vec<ConfigKeyPair>>,
    }
}

wire_struct! {
    /// `job_defaults_t` (`JobDefaults=` / partition `DefMemPer*`).
    pub struct JobDefaults {
        pub r#type: u16,
        pub value: u64,
    }
}

wire_struct! {
    /// `srun_port_range[2]`: first and last port.
    pub struct SrunPortRange {
        pub min: u16,
        pub max: u16,
    }
}

/// Prolog/Epilog script paths: one `packstr` before 24.05, a
/// `packstr_array` from 24.05 on (when multiple `Prolog=` lines were allowed).
///
/// Before 24.05 only the first entry is sent (empty list = NULL), so a list
/// decoded from an old peer re-encodes to the same bytes.
#[derive(Debug, Clone, PartialEq, Default, arbitrary::Arbitrary)]
pub struct ScriptList(pub Vec<Option<String>>);

impl Wire for ScriptList {
    fn decode(r: &mut Reader<'_>, v: ProtocolVersion) -> Result<Self> {
        if v >= ProtocolVersion::V24_05 {
            return Ok(Self(Vec::<Option<String>>::decode(r, v)?));
        }
        Ok(Self(r.str()?.map(|s| vec![Some(s)]).unwrap_or_default()))
    }
    fn encode(&self, w: &mut Writer, v: ProtocolVersion) {
        if v >= ProtocolVersion::V24_05 {
            self.0.encode(w, v);
        } else {
            w.str(self.0.first().and_then(|s| s.as_deref()));
        }
    }
}

wire_struct! {
    /// `slurm_ctl_conf_t` as sent in RESPONSE_BUILD_INFO.
    pub struct SlurmCtlConfInfoMsg {
        pub last_update: i64,
        pub accounting_storage_enforce: u16,
        pub accounting_storage_backup_host: Option<String>,
        pub accounting_storage_host: Option<String>,
        pub accounting_storage_ext_host: Option<String>,
        pub accounting_storage_params: Option<String>,
        pub accounting_storage_port: u16,
        pub accounting_storage_tres: Option<String>,
        pub accounting_storage_type: Option<String>,
        [..V25_11] pub accounting_storage_user: Option<String>,
        /// Before 24.05 packed by hand (InfluxDB credentials left out), same bytes as a key-pair list.
        pub acct_gather_conf: Option<Vec<ConfigKeyPair>>,
        pub acct_gather_energy_type: Option<String>,
        pub acct_gather_filesystem_type: Option<String>,
        pub acct_gather_interconnect_type: Option<String>,
        pub acct_gather_node_freq: u16,
        pub acct_gather_profile_type: Option<String>,
        pub authalttypes: Option<String>,
        pub authalt_params: Option<String>,
        pub authinfo: Option<String>,
        pub authtype: Option<String>,
        pub batch_start_timeout: u16,
        pub boot_time: i64,
        pub bb_type: Option<String>,
        pub bcast_exclude: Option<String>,
        pub bcast_parameters: Option<String>,
        [V25_05..] pub certmgr_params: Option<String>,
        [V25_05..] pub certmgr_type: Option<String>,
        pub cgroup_conf: Option<Vec<ConfigKeyPair>>,
        [V25_11..] pub cli_filter_params: Option<String>,
        pub cli_filter_plugins: Option<String>,
        pub cluster_name: Option<String>,
        pub comm_params: Option<String>,
        pub complete_wait: u16,
        pub conf_flags: u32,
        pub control_addr: Vec<Option<String>>,
        pub control_machine: Vec<Option<String>>,
        [..V24_05] pub core_spec_plugin: Option<String>,
        pub cpu_freq_def: u32,
        pub cpu_freq_govs: u32,
        pub cred_type: Option<String>,
        [V24_11..] pub data_parser_parameters: Option<String>,
        pub def_mem_per_cpu: u64,
        pub debug_flags: u64,
        pub dependency_params: Option<String>,
        pub eio_timeout: u16,
        pub enforce_part_limits: u16,
        /// A single string before 24.05, a string array after.
        pub epilog: ScriptList,
        pub epilog_msg_time: u32,
        /// A single string before 24.05, a string array after.
        pub epilog_slurmctld: ScriptList,
        [..V24_05] pub ext_sensors_conf: Option<Vec<ConfigKeyPair>>,
        [..V24_05] pub ext_sensors_type: Option<String>,
        [..V24_05] pub ext_sensors_freq: u16,
        [V25_05..] pub epilog_timeout: u16,
        pub fed_params: Option<String>,
        pub first_job_id: u32,
        pub fs_dampening_factor: u16,
        [..V25_05] pub get_env_timeout: u16,
        pub gres_plugins: Option<String>,
        pub group_time: u16,
        pub group_force: u16,
        pub gpu_freq_def: Option<String>,
        [V24_05..] pub hash_plugin: Option<String>,
        pub hash_val: u32,
        pub health_check_interval: u16,
        pub health_check_node_state: u16,
        pub health_check_program: Option<String>,
        [V26_05..] pub health_check_timeout: u16,
        [V25_11..] pub http_parser_type: Option<String>,
        pub inactive_limit: u16,
        pub interactive_step_opts: Option<String>,
        pub job_acct_gather_freq: Option<String>,
        pub job_acct_gather_type: Option<String>,
        pub job_acct_gather_params: Option<String>,
        pub job_comp_host: Option<String>,
        pub job_comp_loc: Option<String>,
        pub job_comp_params: Option<String>,
        /// Sent as u32 although the C field is wider.
        pub job_comp_port: u32,
        pub job_comp_type: Option<String>,
        pub job_comp_user: Option<String>,
        /// `namespace_plugin` from 25.11 on (same slot).
        pub job_container_plugin: Option<String>,
        [..V23_11] pub job_credential_private_key: Option<String>,
        [..V23_11] pub job_credential_public_certificate: Option<String>,
        pub job_defaults_list: Option<Vec<JobDefaults>>,
        pub job_file_append: u16,
        pub job_requeue: u16,
        pub job_submit_plugins: Option<String>,
        pub kill_on_bad_exit: u16,
        pub kill_wait: u16,
        pub launch_params: Option<String>,
        [..V23_02] pub launch_type: Option<String>,
        [V26_05..] pub license_params: Option<String>,
        pub licenses: Option<String>,
        pub log_fmt: u16,
        pub max_array_sz: u32,
        [V23_02..] pub max_batch_requeue: u32,
        pub max_dbd_msgs: u32,
        pub mail_domain: Option<String>,
        pub mail_prog: Option<String>,
        pub max_job_cnt: u32,
        pub max_job_id: u32,
        pub max_mem_per_cpu: u64,
        pub max_node_cnt: u32,
        pub max_step_cnt: u32,
        pub max_tasks_per_node: u16,
        pub mcs_plugin: Option<String>,
        pub mcs_plugin_params: Option<String>,
        [V26_05..] pub metrics_auth_users: Option<String>,
        [V26_05..] pub metrics_params: Option<String>,
        [V25_11..] pub metrics_type: Option<String>,
        pub min_job_age: u32,
        pub mpi_conf: Option<Vec<ConfigKeyPair>>,
        pub mpi_default: Option<String>,
        pub mpi_params: Option<String>,
        pub msg_timeout: u16,
        pub next_job_id: u32,
        pub node_features_conf: Option<Vec<ConfigPluginParams>>,
        pub node_features_plugins: Option<String>,
        [..V25_05] pub node_prefix: Option<String>,
        pub over_time_limit: u16,
        pub plugindir: Option<String>,
        pub plugstack: Option<String>,
        [..V24_05] pub power_parameters: Option<String>,
        [..V24_05] pub power_plugin: Option<String>,
        pub preempt_mode: u16,
        [V23_02..] pub preempt_params: Option<String>,
        pub preempt_type: Option<String>,
        pub preempt_exempt_time: u32,
        pub prep_params: Option<String>,
        pub prep_plugins: Option<String>,
        pub priority_decay_hl: u32,
        pub priority_calc_period: u32,
        pub priority_favor_small: u16,
        pub priority_flags: u16,
        pub priority_max_age: u32,
        pub priority_params: Option<String>,
        pub priority_reset_period: u16,
        pub priority_type: Option<String>,
        pub priority_weight_age: u32,
        pub priority_weight_assoc: u32,
        pub priority_weight_fs: u32,
        pub priority_weight_js: u32,
        pub priority_weight_part: u32,
        pub priority_weight_qos: u32,
        pub priority_weight_tres: Option<String>,
        pub private_data: u16,
        pub proctrack_type: Option<String>,
        /// A single string before 24.05, a string array after.
        pub prolog: ScriptList,
        [..V25_05] pub prolog_epilog_timeout: u16,
        /// A single string before 24.05, a string array after.
        pub prolog_slurmctld: ScriptList,
        [V25_05..] pub prolog_timeout: u16,
        pub prolog_flags: u16,
        pub propagate_prio_process: u16,
        pub propagate_rlimits: Option<String>,
        pub propagate_rlimits_except: Option<String>,
        pub reboot_program: Option<String>,
        pub reconfig_flags: u16,
        pub requeue_exit: Option<String>,
        pub requeue_exit_hold: Option<String>,
        pub resume_fail_program: Option<String>,
        pub resume_program: Option<String>,
        pub resume_rate: u16,
        pub resume_timeout: u16,
        pub resv_epilog: Option<String>,
        pub resv_over_run: u16,
        pub resv_prolog: Option<String>,
        pub ret2service: u16,
        [..V23_11] pub route_plugin: Option<String>,
        pub sched_params: Option<String>,
        pub sched_logfile: Option<String>,
        pub sched_log_level: u16,
        pub sched_time_slice: u16,
        pub schedtype: Option<String>,
        pub scron_params: Option<String>,
        pub select_type: Option<String>,
        pub select_conf_key_pairs: Option<Vec<ConfigKeyPair>>,
        pub select_type_param: u16,
        pub slurm_conf: Option<String>,
        pub slurm_user_id: u32,
        pub slurm_user_name: Option<String>,
        pub slurmd_user_id: u32,
        pub slurmd_user_name: Option<String>,
        pub slurmctld_addr: Option<String>,
        pub slurmctld_debug: u16,
        [V26_05..] pub slurmctld_http_auth_params: Option<String>,
        pub slurmctld_logfile: Option<String>,
        pub slurmctld_params: Option<String>,
        pub slurmctld_pidfile: Option<String>,
        [..V23_02] pub slurmctld_plugstack: Option<String>,
        [..V23_02] pub slurmctld_plugstack_conf: Option<Vec<ConfigPluginParams>>,
        pub slurmctld_port: u32,
        pub slurmctld_port_count: u16,
        pub slurmctld_primary_off_prog: Option<String>,
        pub slurmctld_primary_on_prog: Option<String>,
        pub slurmctld_syslog_debug: u16,
        pub slurmctld_timeout: u16,
        pub slurmd_debug: u16,
        [V26_05..] pub slurmd_http_auth_params: Option<String>,
        pub slurmd_logfile: Option<String>,
        pub slurmd_params: Option<String>,
        pub slurmd_pidfile: Option<String>,
        pub slurmd_port: u32,
        pub slurmd_spooldir: Option<String>,
        pub slurmd_syslog_debug: u16,
        pub slurmd_timeout: u16,
        pub srun_epilog: Option<String>,
        /// `srun_port_range[2]`: two u16s.
        pub srun_port_range: SrunPortRange,
        pub srun_prolog: Option<String>,
        pub state_save_location: Option<String>,
        pub suspend_exc_nodes: Option<String>,
        pub suspend_exc_parts: Option<String>,
        [V23_02..] pub suspend_exc_states: Option<String>,
        pub suspend_program: Option<String>,
        pub suspend_rate: u16,
        pub suspend_time: u32,
        pub suspend_timeout: u16,
        pub switch_param: Option<String>,
        pub switch_type: Option<String>,
        pub task_epilog: Option<String>,
        pub task_prolog: Option<String>,
        pub task_plugin: Option<String>,
        pub task_plugin_param: u32,
        pub tcp_timeout: u16,
        [V25_05..] pub tls_params: Option<String>,
        [V24_05..] pub tls_type: Option<String>,
        pub tmp_fs: Option<String>,
        pub topology_param: Option<String>,
        pub topology_plugin: Option<String>,
        pub tree_width: u16,
        pub unkillable_program: Option<String>,
        pub unkillable_timeout: u16,
        [V25_11..] pub url_parser_type: Option<String>,
        pub version: Option<String>,
        pub vsize_factor: u16,
        pub wait_time: u16,
        pub x11_params: Option<String>,
    }
}
