//! `job_desc_msg_t`: what sbatch, salloc, srun and `scontrol update job` send
//! (REQUEST_SUBMIT_BATCH_JOB, REQUEST_RESOURCE_ALLOCATION, REQUEST_UPDATE_JOB,
//! REQUEST_JOB_WILL_RUN), plus the pieces of it other job messages reuse:
//! the 22.05 select-plugin blob and the crontab entry.
//!
//! Layouts for 22.05, 24.11 and 26.05 are checked against captures; the
//! gates for 23.02..24.05 and 25.05/25.11 follow the upstream release
//! branches' pack functions (UNVERIFIED by capture).

use crate::codec::error::{PResult, WireError};
use crate::codec::{prim, shape, BufMut};
use crate::error::DecodeErrorKind;
use crate::pack::Wire;
use crate::types::{BitStr, StepId};
use crate::{wire, ProtocolVersion};

/// The 22.05 `select_g_select_jobinfo_pack` blob: the select plugin id,
/// then plugin data. The linear and cons_* plugins send no data; the Cray
/// plugins (which do) are rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum SelectJobinfo {
    /// SELECT_PLUGIN_CONS_RES
    ConsRes,
    /// SELECT_PLUGIN_LINEAR
    Linear,
    /// SELECT_PLUGIN_CONS_TRES, the 22.05 default.
    #[default]
    ConsTres,
}

impl SelectJobinfo {
    pub const CONS_RES: u32 = 101;
    pub const LINEAR: u32 = 102;
    pub const CONS_TRES: u32 = 109;

    pub fn plugin_id(self) -> u32 {
        match self {
            Self::ConsRes => Self::CONS_RES,
            Self::Linear => Self::LINEAR,
            Self::ConsTres => Self::CONS_TRES,
        }
    }
}

// irregular: a closed enum of plugin ids, not a sequence of fields.
impl Wire for SelectJobinfo {
    fn parse<'a>(i: &'a [u8], _: ProtocolVersion) -> PResult<'a, Self> {
        match prim::u32(i)? {
            (r, Self::CONS_RES) => Ok((r, Self::ConsRes)),
            (r, Self::LINEAR) => Ok((r, Self::Linear)),
            (r, Self::CONS_TRES) => Ok((r, Self::ConsTres)),
            (_, id) => WireError::fail(
                DecodeErrorKind::BadValue {
                    what: "select plugin id (only linear/cons_res/cons_tres)",
                    value: u64::from(id),
                },
                i,
            ),
        }
    }
    fn put<B: BufMut>(&self, b: &mut B, _: ProtocolVersion) {
        b.put_u32(self.plugin_id())
    }
}

wire! {
    /// `cron_entry_t` as `pack_cron_entry` sends it after its presence byte
    /// (the command is never packed). Same in every release. UNVERIFIED:
    /// the captures only carry the absent form (`u8 0`).
    pub struct CronEntry {
        pub flags: u32,
        pub minute: Option<BitStr>,
        pub hour: Option<BitStr>,
        pub day_of_month: Option<BitStr>,
        pub month: Option<BitStr>,
        pub day_of_week: Option<BitStr>,
        pub cronspec: Option<String>,
        pub line_start: u32,
        pub line_end: u32,
    }
}

wire! {
    /// `job_desc_msg_t`. The job id lives in `step_id` (25.11 made the step id
    /// the first field; earlier releases send only `step_id.job_id`).
    pub struct JobDescMsg {
        [V25_11..] pub step_id: StepId,
        pub site_factor: u32,
        pub batch_features: Option<String>,
        pub cluster_features: Option<String>,
        pub clusters: Option<String>,
        pub contiguous: u16,
        pub container: Option<String>,
        [V23_02..] pub container_id: Option<String>,
        [V26_05..] pub container_type: Option<String>,
        pub core_spec: u16,
        pub task_dist: u32,
        pub kill_on_node_fail: u16,
        pub features: Option<String>,
        pub fed_siblings_active: u64,
        pub fed_siblings_viable: u64,
        #[wire(with = shape::job_id32)] [..V25_11] => step_id,
        pub job_id_str: Option<String>,
        pub name: Option<String>,
        pub alloc_node: Option<String>,
        pub alloc_sid: u32,
        pub array_inx: Option<String>,
        pub burst_buffer: Option<String>,
        pub pn_min_cpus: u16,
        pub pn_min_memory: u64,
        [V26_05..] pub mem_update_delay: u16,
        [V26_05..] pub mem_update_margin: u16,
        [V24_11..] pub oom_kill_step: u16,
        pub pn_min_tmp_disk: u32,
        /// 24.05 always sends 0.
        [..V24_11] pub power_flags: u8,
        pub prefer: Option<String>,
        pub cpu_freq_min: u32,
        pub cpu_freq_max: u32,
        pub cpu_freq_gov: u32,
        pub partition: Option<String>,
        pub priority: u32,
        pub dependency: Option<String>,
        pub account: Option<String>,
        pub admin_comment: Option<String>,
        pub comment: Option<String>,
        pub nice: u32,
        pub profile: u32,
        pub qos: Option<String>,
        pub mcs_label: Option<String>,
        pub origin_cluster: Option<String>,
        pub open_mode: u8,
        pub overcommit: u8,
        pub acctg_freq: Option<String>,
        pub num_tasks: u32,
        pub req_context: Option<String>,
        pub req_nodes: Option<String>,
        pub exc_nodes: Option<String>,
        pub environment: Vec<Option<String>>,
        pub spank_job_env: Vec<Option<String>>,
        pub script: Option<String>,
        pub argv: Vec<Option<String>>,
        pub std_err: Option<String>,
        pub std_in: Option<String>,
        pub std_out: Option<String>,
        pub submit_line: Option<String>,
        pub work_dir: Option<String>,
        pub immediate: u16,
        pub reboot: u16,
        pub requeue: u16,
        pub shared: u16,
        pub cpus_per_task: u16,
        pub ntasks_per_node: u16,
        pub ntasks_per_board: u16,
        pub ntasks_per_socket: u16,
        pub ntasks_per_core: u16,
        pub ntasks_per_tres: u16,
        pub plane_size: u16,
        pub cpu_bind_type: u16,
        pub mem_bind_type: u16,
        pub cpu_bind: Option<String>,
        pub mem_bind: Option<String>,
        pub time_limit: u32,
        pub time_min: u32,
        pub min_cpus: u32,
        pub max_cpus: u32,
        pub min_nodes: u32,
        pub max_nodes: u32,
        [V23_02..] pub job_size_str: Option<String>,
        pub boards_per_node: u16,
        pub sockets_per_board: u16,
        pub sockets_per_node: u16,
        pub cores_per_socket: u16,
        pub threads_per_core: u16,
        /// 24.11+ clients send SLURM_AUTH_NOBODY here; trust the credential.
        pub user_id: u32,
        pub group_id: u32,
        pub alloc_resp_port: u16,
        [V25_05..] pub alloc_tls_cert: Option<String>,
        pub resp_host: Option<String>,
        pub other_port: u16,
        [V24_05..] pub resv_port_cnt: u16,
        pub network: Option<String>,
        pub begin_time: i64,
        pub end_time: i64,
        pub deadline: i64,
        pub licenses: Option<String>,
        pub mail_type: u16,
        pub mail_user: Option<String>,
        pub reservation: Option<String>,
        pub restart_cnt: u16,
        pub warn_flags: u16,
        pub warn_signal: u16,
        pub warn_time: u16,
        pub wckey: Option<String>,
        pub req_switch: u32,
        pub wait4switch: u32,
        [..V23_02] pub select_jobinfo: SelectJobinfo,
        pub wait_all_nodes: u16,
        pub bitflags: u64,
        pub delay_boot: u32,
        pub extra: Option<String>,
        pub x11: u16,
        pub x11_magic_cookie: Option<String>,
        pub x11_target: Option<String>,
        pub x11_target_port: u16,
        pub cpus_per_tres: Option<String>,
        pub mem_per_tres: Option<String>,
        pub tres_bind: Option<String>,
        pub tres_freq: Option<String>,
        pub tres_per_job: Option<String>,
        pub tres_per_node: Option<String>,
        pub tres_per_socket: Option<String>,
        pub tres_per_task: Option<String>,
        #[wire(with = shape::flag8)] pub crontab_entry: Option<CronEntry>,
        [V24_05..] pub segment_size: u16,
    }
}

impl JobDescMsg {
    /// A request with nothing set, as a client starts one
    /// (`slurm_init_job_desc_msg`): the numeric fields that mean "not
    /// given" hold NO_VAL, and a zero priority would mean `--hold`.
    pub fn unset() -> Self {
        use crate::pack::{NO_VAL, NO_VAL16, NO_VAL64, NO_VAL8};
        /// `SLURM_AUTH_NOBODY`.
        const NOBODY: u32 = 99;
        JobDescMsg {
            step_id: StepId::job(NO_VAL),
            alloc_sid: NO_VAL,
            contiguous: NO_VAL16,
            core_spec: NO_VAL16,
            cores_per_socket: NO_VAL16,
            cpu_bind_type: NO_VAL16,
            cpu_freq_min: NO_VAL,
            cpu_freq_max: NO_VAL,
            cpu_freq_gov: NO_VAL,
            cpus_per_task: NO_VAL16,
            delay_boot: NO_VAL,
            group_id: NOBODY,
            kill_on_node_fail: NO_VAL16,
            max_cpus: NO_VAL,
            max_nodes: NO_VAL,
            mem_bind_type: NO_VAL16,
            mail_type: NO_VAL16,
            min_cpus: NO_VAL,
            min_nodes: NO_VAL,
            nice: NO_VAL,
            ntasks_per_core: NO_VAL16,
            ntasks_per_tres: NO_VAL16,
            ntasks_per_node: NO_VAL16,
            ntasks_per_socket: NO_VAL16,
            num_tasks: NO_VAL,
            overcommit: NO_VAL8,
            plane_size: NO_VAL16,
            pn_min_cpus: NO_VAL16,
            pn_min_memory: NO_VAL64,
            pn_min_tmp_disk: NO_VAL,
            priority: NO_VAL,
            reboot: NO_VAL16,
            requeue: NO_VAL16,
            req_switch: NO_VAL,
            shared: NO_VAL16,
            site_factor: NO_VAL,
            sockets_per_node: NO_VAL16,
            task_dist: NO_VAL,
            threads_per_core: NO_VAL16,
            time_limit: NO_VAL,
            time_min: NO_VAL,
            user_id: NOBODY,
            wait_all_nodes: NO_VAL16,
            wait4switch: NO_VAL,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::{decode_exact, encode_to_vec};

    fn sample() -> JobDescMsg {
        JobDescMsg {
            step_id: StepId {
                sluid: 0,
                job_id: 42,
                step_id: crate::pack::NO_VAL,
                step_het_comp: crate::pack::NO_VAL,
            },
            name: Some("wrap".into()),
            environment: vec![Some("A=1".into()), None],
            argv: vec![Some("/bin/true".into())],
            script: Some("#!/bin/sh\ntrue\n".into()),
            min_nodes: 1,
            max_nodes: 1,
            user_id: 99,
            group_id: 99,
            crontab_entry: Some(CronEntry {
                flags: 3,
                minute: Some(BitStr::new(60)),
                hour: None,
                cronspec: Some("*/5 * * * *".into()),
                line_start: 1,
                line_end: 2,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn job_desc_round_trips_in_every_version() {
        for v in ProtocolVersion::ALL {
            let m = sample();
            let b = encode_to_vec(&m, v);
            let d: JobDescMsg = decode_exact(&b, v).unwrap();
            assert_eq!(encode_to_vec(&d, v), b, "{v:?}");
            assert_eq!(d.step_id.job_id, 42, "{v:?}");
            assert_eq!(d.crontab_entry, m.crontab_entry, "{v:?}");
        }
    }

    #[test]
    fn select_jobinfo_only_in_22_05() {
        let m = JobDescMsg::default();
        let a = encode_to_vec(&m, ProtocolVersion::V22_05);
        let b = encode_to_vec(&m, ProtocolVersion::V23_02);
        // 23.02 adds container_id + job_size_str (2 empty strings, 8 bytes)
        // and drops the 4-byte select plugin id.
        assert_eq!(a.len() + 4, b.len());
        assert!(a.windows(4).any(|w| w == [0, 0, 0, 109]));
    }

    #[test]
    fn unknown_select_plugin_is_an_error() {
        let e =
            decode_exact::<SelectJobinfo>(&[0, 0, 0, 107], ProtocolVersion::V22_05).unwrap_err();
        assert!(matches!(e.kind, DecodeErrorKind::BadValue { .. }));
    }

    #[test]
    fn cron_flag_must_be_0_or_1() {
        let v = ProtocolVersion::V24_11;
        let mut b = encode_to_vec(&JobDescMsg::default(), v);
        // The crontab presence byte, then segment_size (u16) end the body.
        let at = b.len() - 3;
        assert_eq!(b[at], 0);
        b[at] = 2;
        let e = decode_exact::<JobDescMsg>(&b, v).unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::BadBool(2));
        assert_eq!(
            (e.offset, e.path()),
            (at, "crontab_entry.present".to_string())
        );
    }
}
