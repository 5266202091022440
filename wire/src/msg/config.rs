//! `scontrol show config`: RESPONSE_BUILD_INFO carries the whole
//! `slurm_ctl_conf_t` (`slurm_conf_t` in 26.05), packed by
//! `_pack_slurm_ctl_conf_msg` (26.05: `_pack_slurm_conf`).
//!
//! Every release between 22.05 and 26.05 only inserted or dropped fields (no
//! reordering), so one gated field list covers all eight layouts. The gates
//! were derived from the top branch of each release's pack function.

use crate::wire;

wire! {
    /// `config_key_pair_t`: one `Key=Value` line of a plugin's config file.
    pub struct ConfigKeyPair {
        pub name: Option<String>,
        pub value: Option<String>,
    }
}

wire! {
    /// `config_plugin_params_t`: a plugin name and its key-value pairs.
    pub struct ConfigPluginParams {
        pub name: Option<String>,
        pub key_pairs: Option<Vec<ConfigKeyPair>>,
    }
}

pub use super::partition::JobDefaults;

wire! {
    /// `srun_port_range[2]`: first and last port.
    pub struct SrunPortRange {
        pub min: u16,
        pub max: u16,
    }
}

wire! {
    /// Prolog/Epilog script paths: one `packstr` before 24.05, a
    /// `packstr_array` from 24.05 on (when multiple `Prolog=` lines were allowed).
    ///
    /// Before 24.05 only the first entry is sent (empty list = NULL), so a list
    /// decoded from an old peer re-encodes to the same bytes.
    pub struct ScriptList(#[wire(with = script_list)] pub Vec<Option<String>>);
}

mod script_list {
    use crate::codec::error::PResult;
    use crate::codec::{prim, BufMut};
    use crate::pack::Wire;
    use crate::ProtocolVersion;

    // irregular: the slot's type is the release's (one string, then a string array).
    pub fn parse<'a>(
        i: &'a [u8],
        v: ProtocolVersion,
        f: &mut Vec<Option<String>>,
    ) -> PResult<'a, ()> {
        let (i, x) = if v >= ProtocolVersion::V24_05 {
            Vec::<Option<String>>::parse(i, v)?
        } else {
            let (i, s) = prim::str(i)?;
            (i, s.map(|s| vec![Some(s)]).unwrap_or_default())
        };
        *f = x;
        Ok((i, ()))
    }
    #[allow(clippy::ptr_arg)] // the field's own type, so that its `Wire` impl writes it
    pub fn put<B: BufMut>(b: &mut B, v: ProtocolVersion, f: &Vec<Option<String>>) {
        if v >= ProtocolVersion::V24_05 {
            f.put(b, v);
        } else {
            prim::put_str(b, f.first().and_then(|s| s.as_deref()));
        }
    }
}

wire! {
    /// RESPONSE_BUILD_INFO body. Boxed: the configuration is several KiB and
    /// would otherwise set the size of every `Message`.
    pub struct SlurmCtlConfInfoMsg(pub Box<SlurmConf>);
}

impl std::ops::Deref for SlurmCtlConfInfoMsg {
    type Target = SlurmConf;
    fn deref(&self) -> &SlurmConf {
        &self.0
    }
}

impl std::ops::DerefMut for SlurmCtlConfInfoMsg {
    fn deref_mut(&mut self) -> &mut SlurmConf {
        &mut self.0
    }
}

impl From<SlurmConf> for SlurmCtlConfInfoMsg {
    fn from(c: SlurmConf) -> Self {
        Self(Box::new(c))
    }
}

wire! {
    /// `slurm_ctl_conf_t` (22.05..25.11), `slurm_conf_t` (26.05).
    pub struct SlurmConf {
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

impl SlurmConf {
    /// The values a stock slurmctld reports for keys that slurm.conf leaves
    /// unset, where 22.05, 24.11 and 26.05 agree (read off the captures).
    ///
    /// Not covered, because they differ by release: 22.05 names its "none"
    /// plugins (`accounting_storage/none`, `jobcomp/none`, `switch/none`, ...)
    /// where 24.11 sends NULL (upstream dropped `DEFAULT_ACCOUNTING_STORAGE_TYPE`
    /// in 23.11; the others UNVERIFIED between 23.02 and 24.11); per
    /// read_config.h `priority_type` is `priority/basic` up to 23.02 and
    /// `priority/multifactor` from 23.11, `tree_width` 50 then 16 from 23.11,
    /// and `topology_plugin` `topology/flat` from 25.05 (`topology/default` in
    /// 24.11, `topology/none` in 22.05); `max_batch_requeue` is 5 from 23.02;
    /// `hash_plugin` `hash/k12` and `tls_type` `tls/none` appear in 24.11;
    /// 26.05 sends `prolog_timeout`/`epilog_timeout` as NO_VAL16 and
    /// `health_check_node_state` 255 (15 before). Site values (names, paths,
    /// anything slurm.conf sets, times) are the caller's too.
    pub fn with_defaults() -> Self {
        use crate::pack::{INFINITE, NO_VAL};
        let s = |x: &str| Some(x.to_owned());
        Self {
            accounting_storage_host: s("localhost"),
            acct_gather_conf: Some(Vec::new()),
            batch_start_timeout: 10,
            bcast_exclude: s("/lib,/usr/lib,/lib64,/usr/lib64"),
            conf_flags: 64,
            cpu_freq_def: NO_VAL,
            cpu_freq_govs: 0x8680_0000,
            cred_type: s("cred/munge"),
            eio_timeout: 60,
            epilog_msg_time: 2000,
            first_job_id: 1,
            fs_dampening_factor: 1,
            group_time: 600,
            group_force: 1,
            interactive_step_opts: s("--interactive --preserve-env --pty $SHELL"),
            job_acct_gather_freq: s("30"),
            job_comp_host: s("localhost"),
            job_requeue: 1,
            kill_wait: 30,
            max_array_sz: 1001,
            mail_prog: s("/bin/mail"),
            max_job_cnt: 10_000,
            max_job_id: 0x03ff_0000,
            max_step_cnt: 40_000,
            max_tasks_per_node: 512,
            min_job_age: 300,
            msg_timeout: 10,
            next_job_id: 1,
            prep_plugins: s("prep/script"),
            priority_decay_hl: 604_800,
            priority_calc_period: 300,
            priority_flags: 32,
            priority_max_age: 604_800,
            propagate_rlimits: s("ALL"),
            resume_rate: 300,
            resume_timeout: 60,
            sched_time_slice: 30,
            schedtype: s("sched/backfill"),
            slurmctld_port: 6817,
            slurmctld_port_count: 1,
            slurmctld_syslog_debug: 10,
            slurmctld_timeout: 120,
            slurmd_port: 6818,
            slurmd_syslog_debug: 10,
            slurmd_timeout: 300,
            suspend_rate: 60,
            suspend_time: INFINITE,
            suspend_timeout: 30,
            tcp_timeout: 2,
            tmp_fs: s("/tmp"),
            unkillable_timeout: 60,
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::{decode_exact, encode_to_vec, Wire, NO_VAL, NO_VAL16};
    use crate::ProtocolVersion;

    fn kp(name: &str, value: &str) -> ConfigKeyPair {
        ConfigKeyPair {
            name: Some(name.into()),
            value: Some(value.into()),
        }
    }

    fn sample() -> SlurmConf {
        SlurmConf {
            last_update: 1_796_003_422,
            accounting_storage_host: Some("localhost".into()),
            accounting_storage_user: Some("slurm".into()),
            acct_gather_conf: Some(vec![kp("EnergyIPMIFrequency", "30")]),
            boot_time: -1,
            certmgr_type: Some("certmgr/script".into()),
            cgroup_conf: Some(vec![kp("CgroupPlugin", "autodetect"), kp("", "")]),
            cli_filter_params: Some(String::new()),
            cluster_name: Some("mv26".into()),
            control_addr: vec![Some("10.0.0.1".into()), None],
            control_machine: vec![Some("ctl".into()), Some("ctl2".into())],
            core_spec_plugin: Some("core_spec/none".into()),
            data_parser_parameters: Some("v0.0.42".into()),
            epilog: ScriptList(vec![Some("/etc/slurm/epilog".into())]),
            epilog_slurmctld: ScriptList(vec![Some("/a".into()), Some("/b".into())]),
            epilog_timeout: NO_VAL16,
            ext_sensors_conf: Some(vec![kp("JobData", "energy")]),
            ext_sensors_freq: 7,
            get_env_timeout: 2,
            health_check_timeout: 60,
            job_credential_private_key: Some("/key".into()),
            job_defaults_list: Some(vec![
                JobDefaults {
                    r#type: 1,
                    value: 4096,
                },
                JobDefaults {
                    r#type: 2,
                    value: u64::MAX,
                },
            ]),
            launch_type: Some("launch/slurm".into()),
            max_batch_requeue: 5,
            max_job_cnt: 10_000,
            metrics_type: Some("metrics/none".into()),
            mpi_conf: Some(vec![]),
            node_features_conf: Some(vec![ConfigPluginParams {
                name: Some("node_features/helpers".into()),
                key_pairs: Some(vec![kp("Feature", "a,b")]),
            }]),
            node_prefix: Some("n".into()),
            preempt_params: Some("reclaim".into()),
            prolog: ScriptList(vec![]),
            prolog_epilog_timeout: 3,
            prolog_timeout: 4,
            route_plugin: Some("route/default".into()),
            select_conf_key_pairs: None,
            slurmctld_plugstack: Some("plug".into()),
            slurmctld_plugstack_conf: Some(vec![ConfigPluginParams {
                name: None,
                key_pairs: None,
            }]),
            slurmd_http_auth_params: Some("x".into()),
            srun_port_range: SrunPortRange {
                min: 60001,
                max: 63000,
            },
            suspend_exc_states: Some("down".into()),
            suspend_time: NO_VAL,
            tls_type: Some("tls/none".into()),
            url_parser_type: Some("url_parser/libcurl".into()),
            version: Some("26.05.0".into()),
            x11_params: Some("home_xauthority".into()),
            ..Default::default()
        }
    }

    /// Decoding what we encode must give back the same bytes.
    fn assert_stable<T: Wire + std::fmt::Debug>(x: &T, v: ProtocolVersion) -> T {
        let b = encode_to_vec(x, v);
        let y: T = decode_exact(&b, v).unwrap_or_else(|e| panic!("{v:?}: {e}"));
        assert_eq!(encode_to_vec(&y, v), b, "{v:?}");
        y
    }

    #[test]
    fn sample_round_trips_in_every_version() {
        let x = sample();
        for v in ProtocolVersion::ALL {
            let y = assert_stable(&x, v);
            assert_eq!(y.max_job_cnt, 10_000);
            assert_eq!(y.job_defaults_list, x.job_defaults_list);
            assert_eq!(y.node_features_conf, x.node_features_conf);
            assert_eq!(y.srun_port_range, x.srun_port_range);
            assert_eq!(y.x11_params, x.x11_params);
            let boxed = SlurmCtlConfInfoMsg::from(x.clone());
            assert_eq!(encode_to_vec(&boxed, v), encode_to_vec(&x, v));
            assert_stable(&boxed, v);
        }
        // The newest release has every field that was not dropped before it.
        let y = assert_stable(&x, ProtocolVersion::V26_05);
        assert_eq!(y.epilog_slurmctld, x.epilog_slurmctld);
        assert_eq!(y.accounting_storage_user, None);
        assert_eq!(y.health_check_timeout, 60);
    }

    #[test]
    fn default_round_trips_in_every_version() {
        for v in ProtocolVersion::ALL {
            let y = assert_stable(&SlurmConf::default(), v);
            assert_eq!(y, SlurmConf::default());
        }
    }

    /// Gated fields survive exactly in the releases that carry them.
    #[test]
    fn gates_follow_upstream_releases() {
        use ProtocolVersion as P;
        let x = sample();
        type Probe = fn(&SlurmConf) -> bool;
        let probes: &[(&str, Probe, P, Option<P>)] = &[
            (
                "launch_type",
                |m| m.launch_type.is_some(),
                P::V22_05,
                Some(P::V23_02),
            ),
            (
                "slurmctld_plugstack",
                |m| m.slurmctld_plugstack.is_some(),
                P::V22_05,
                Some(P::V23_02),
            ),
            (
                "slurmctld_plugstack_conf",
                |m| m.slurmctld_plugstack_conf.is_some(),
                P::V22_05,
                Some(P::V23_02),
            ),
            (
                "max_batch_requeue",
                |m| m.max_batch_requeue == 5,
                P::V23_02,
                None,
            ),
            (
                "preempt_params",
                |m| m.preempt_params.is_some(),
                P::V23_02,
                None,
            ),
            (
                "suspend_exc_states",
                |m| m.suspend_exc_states.is_some(),
                P::V23_02,
                None,
            ),
            (
                "job_credential_private_key",
                |m| m.job_credential_private_key.is_some(),
                P::V22_05,
                Some(P::V23_11),
            ),
            (
                "route_plugin",
                |m| m.route_plugin.is_some(),
                P::V22_05,
                Some(P::V23_11),
            ),
            (
                "core_spec_plugin",
                |m| m.core_spec_plugin.is_some(),
                P::V22_05,
                Some(P::V24_05),
            ),
            (
                "ext_sensors_conf",
                |m| m.ext_sensors_conf.is_some(),
                P::V22_05,
                Some(P::V24_05),
            ),
            (
                "ext_sensors_freq",
                |m| m.ext_sensors_freq == 7,
                P::V22_05,
                Some(P::V24_05),
            ),
            ("tls_type", |m| m.tls_type.is_some(), P::V24_05, None),
            (
                "data_parser_parameters",
                |m| m.data_parser_parameters.is_some(),
                P::V24_11,
                None,
            ),
            (
                "certmgr_type",
                |m| m.certmgr_type.is_some(),
                P::V25_05,
                None,
            ),
            (
                "get_env_timeout",
                |m| m.get_env_timeout == 2,
                P::V22_05,
                Some(P::V25_05),
            ),
            (
                "node_prefix",
                |m| m.node_prefix.is_some(),
                P::V22_05,
                Some(P::V25_05),
            ),
            (
                "prolog_epilog_timeout",
                |m| m.prolog_epilog_timeout == 3,
                P::V22_05,
                Some(P::V25_05),
            ),
            ("prolog_timeout", |m| m.prolog_timeout == 4, P::V25_05, None),
            (
                "accounting_storage_user",
                |m| m.accounting_storage_user.is_some(),
                P::V22_05,
                Some(P::V25_11),
            ),
            (
                "cli_filter_params",
                |m| m.cli_filter_params.is_some(),
                P::V25_11,
                None,
            ),
            (
                "metrics_type",
                |m| m.metrics_type.is_some(),
                P::V25_11,
                None,
            ),
            (
                "url_parser_type",
                |m| m.url_parser_type.is_some(),
                P::V25_11,
                None,
            ),
            (
                "health_check_timeout",
                |m| m.health_check_timeout == 60,
                P::V26_05,
                None,
            ),
            (
                "slurmd_http_auth_params",
                |m| m.slurmd_http_auth_params.is_some(),
                P::V26_05,
                None,
            ),
        ];
        for v in P::ALL {
            let y: SlurmConf = decode_exact(&encode_to_vec(&x, v), v).unwrap();
            for (name, probe, lo, hi) in probes {
                let want = v >= *lo && hi.is_none_or(|h| v < h);
                assert_eq!(probe(&y), want, "{name} in {v:?}");
            }
        }
    }

    #[test]
    fn script_list_is_a_string_before_24_05() {
        let one = ScriptList(vec![Some("/p".into()), Some("/q".into())]);
        let old = encode_to_vec(&one, ProtocolVersion::V23_11);
        assert_eq!(old, [0, 0, 0, 3, b'/', b'p', 0]);
        assert_eq!(
            decode_exact::<ScriptList>(&old, ProtocolVersion::V23_11),
            Ok(ScriptList(vec![Some("/p".into())]))
        );
        let new = encode_to_vec(&one, ProtocolVersion::V24_05);
        assert_eq!(&new[..4], &[0, 0, 0, 2]);
        assert_eq!(
            decode_exact::<ScriptList>(&new, ProtocolVersion::V24_05),
            Ok(one)
        );
        // No script is NULL on the old form and an empty array on the new.
        let none = ScriptList::default();
        assert_eq!(encode_to_vec(&none, ProtocolVersion::V22_05), [0; 4]);
        assert_eq!(encode_to_vec(&none, ProtocolVersion::V26_05), [0; 4]);
        let null_first = ScriptList(vec![None, Some("/x".into())]);
        assert_stable(&null_first, ProtocolVersion::V22_05);
    }

    #[test]
    fn key_pair_lists_distinguish_null_from_empty() {
        let v = ProtocolVersion::V22_05;
        assert_eq!(
            encode_to_vec(&None::<Vec<ConfigKeyPair>>, v),
            [0xff, 0xff, 0xff, 0xfe]
        );
        assert_eq!(encode_to_vec(&Some(Vec::<ConfigKeyPair>::new()), v), [0; 4]);
        let l = Some(vec![kp("a", "1")]);
        let b = encode_to_vec(&l, v);
        assert_eq!(b, [0, 0, 0, 1, 0, 0, 0, 2, b'a', 0, 0, 0, 0, 2, b'1', 0]);
        let p = ConfigPluginParams {
            name: Some("n".into()),
            key_pairs: l,
        };
        let pb = encode_to_vec(&p, v);
        assert_eq!(&pb[..6], &[0, 0, 0, 2, b'n', 0]);
        assert_eq!(&pb[6..], &b[..]);
    }

    #[test]
    fn arbitrary_values_are_stable_in_every_version() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut built = 0;
        for round in 0..64 {
            let bytes: Vec<u8> = (0..4096 + round * 97)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    seed as u8
                })
                .collect();
            let mut u = arbitrary::Unstructured::new(&bytes);
            let Ok(x) = <SlurmCtlConfInfoMsg as arbitrary::Arbitrary>::arbitrary(&mut u) else {
                continue;
            };
            built += 1;
            for v in ProtocolVersion::ALL {
                assert_stable(&x, v);
            }
        }
        assert!(built > 32, "only {built} values built");
    }
}
