//! `job_desc_msg_t`: what sbatch, salloc, srun and `scontrol update job` send
//! (REQUEST_SUBMIT_BATCH_JOB, REQUEST_RESOURCE_ALLOCATION, REQUEST_UPDATE_JOB,
//! REQUEST_JOB_WILL_RUN), plus the pieces of it other job messages reuse:
//! the 22.05 select-plugin blob and the crontab entry.
//!
//! Layouts for 22.05, 24.11 and 26.05 are checked against captures; the
//! gates for 23.02..24.05 and 25.05/25.11 follow the upstream release
//! branches' pack functions (UNVERIFIED by capture).

use crate::error::{DecodeError, DecodeErrorKind, Result};
use crate::pack::wire_seq;
use crate::pack::{Reader, Wire, Writer};
use crate::types::{BitStr, StepId};
use crate::{wire_struct, ProtocolVersion};

/// A presence byte (`u8` 0/1) followed by the value when 1.
pub(crate) fn dec_flagged<T: Wire>(r: &mut Reader<'_>, v: ProtocolVersion) -> Result<Option<T>> {
    if r.bool()? {
        Ok(Some(T::decode(r, v)?))
    } else {
        Ok(None)
    }
}

pub(crate) fn enc_flagged<T: Wire>(w: &mut Writer, v: ProtocolVersion, t: &Option<T>) {
    match t {
        None => w.u8(0),
        Some(t) => {
            w.u8(1);
            t.encode(w, v);
        }
    }
}

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

impl Wire for SelectJobinfo {
    fn decode(r: &mut Reader<'_>, _: ProtocolVersion) -> Result<Self> {
        let at = r.position();
        match r.u32()? {
            Self::CONS_RES => Ok(Self::ConsRes),
            Self::LINEAR => Ok(Self::Linear),
            Self::CONS_TRES => Ok(Self::ConsTres),
            id => Err(DecodeError::new(
                DecodeErrorKind::BadValue {
                    what: "select plugin id (only linear/cons_res/cons_tres)",
                    value: u64::from(id),
                },
                at,
            )),
        }
    }
    fn encode(&self, w: &mut Writer, _: ProtocolVersion) {
        w.u32(self.plugin_id())
    }
}

wire_struct! {
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

/// Codecs for slots that are not a plain field.
pub(crate) mod slot {
    use super::*;

    /// Before 25.11 a bare `u32 job_id` where 25.11+ sends a step id.
    pub(crate) trait HasStepId {
        fn step_id_mut(&mut self) -> &mut StepId;
        fn step_id_ref(&self) -> &StepId;
    }

    pub(crate) mod job_id32 {
        use super::*;
        pub(crate) fn dec<T: HasStepId>(
            r: &mut Reader<'_>,
            _: ProtocolVersion,
            t: &mut T,
        ) -> Result<()> {
            *t.step_id_mut() = StepId::job(r.u32()?);
            Ok(())
        }
        pub(crate) fn enc<T: HasStepId>(w: &mut Writer, _: ProtocolVersion, t: &T) {
            w.u32(t.step_id_ref().job_id)
        }
    }

    /// The step number that followed `job_id` before 25.11.
    pub(crate) mod step_num32 {
        use super::*;
        pub(crate) fn dec<T: HasStepId>(
            r: &mut Reader<'_>,
            _: ProtocolVersion,
            t: &mut T,
        ) -> Result<()> {
            t.step_id_mut().step_id = r.u32()?;
            Ok(())
        }
        pub(crate) fn enc<T: HasStepId>(w: &mut Writer, _: ProtocolVersion, t: &T) {
            w.u32(t.step_id_ref().step_id)
        }
    }

    macro_rules! has_step_id {
        ($($t:ty),*) => {$(
            impl HasStepId for $t {
                fn step_id_mut(&mut self) -> &mut StepId { &mut self.step_id }
                fn step_id_ref(&self) -> &StepId { &self.step_id }
            }
        )*};
    }
    pub(crate) use has_step_id;
}
use slot::{job_id32, HasStepId};

slot::has_step_id!(JobDescMsg);

mod crontab {
    use super::*;
    pub(super) fn dec(r: &mut Reader<'_>, v: ProtocolVersion, t: &mut JobDescMsg) -> Result<()> {
        t.crontab_entry = dec_flagged(r, v)?;
        Ok(())
    }
    pub(super) fn enc(w: &mut Writer, v: ProtocolVersion, t: &JobDescMsg) {
        enc_flagged(w, v, &t.crontab_entry)
    }
}

/// `job_desc_msg_t`. The job id lives in `step_id` (25.11 made the step id
/// the first field; earlier releases send only `step_id.job_id`).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct JobDescMsg {
    pub step_id: StepId,
    pub site_factor: u32,
    pub batch_features: Option<String>,
    pub cluster_features: Option<String>,
    pub clusters: Option<String>,
    pub contiguous: u16,
    pub container: Option<String>,
    /// 23.02+
    pub container_id: Option<String>,
    /// 26.05+
    pub container_type: Option<String>,
    pub core_spec: u16,
    pub task_dist: u32,
    pub kill_on_node_fail: u16,
    pub features: Option<String>,
    pub fed_siblings_active: u64,
    pub fed_siblings_viable: u64,
    pub job_id_str: Option<String>,
    pub name: Option<String>,
    pub alloc_node: Option<String>,
    pub alloc_sid: u32,
    pub array_inx: Option<String>,
    pub burst_buffer: Option<String>,
    pub pn_min_cpus: u16,
    pub pn_min_memory: u64,
    /// 26.05+
    pub mem_update_delay: u16,
    /// 26.05+
    pub mem_update_margin: u16,
    /// 24.11+
    pub oom_kill_step: u16,
    pub pn_min_tmp_disk: u32,
    /// Before 24.11 only (24.05 always sends 0).
    pub power_flags: u8,
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
    /// 23.02+
    pub job_size_str: Option<String>,
    pub boards_per_node: u16,
    pub sockets_per_board: u16,
    pub sockets_per_node: u16,
    pub cores_per_socket: u16,
    pub threads_per_core: u16,
    /// 24.11+ clients send SLURM_AUTH_NOBODY here; trust the credential.
    pub user_id: u32,
    pub group_id: u32,
    pub alloc_resp_port: u16,
    /// 25.05+
    pub alloc_tls_cert: Option<String>,
    pub resp_host: Option<String>,
    pub other_port: u16,
    /// 24.05+
    pub resv_port_cnt: u16,
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
    /// 22.05 only.
    pub select_jobinfo: SelectJobinfo,
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
    pub crontab_entry: Option<CronEntry>,
    /// 24.05+
    pub segment_size: u16,
}

macro_rules! job_desc_fields {
    ($m:ident $x:ident, $v:ident, $s:ident) => {
        wire_seq!($m $x, $v;
            [V25_11..] $s.step_id,
            $s.site_factor,
            $s.batch_features,
            $s.cluster_features,
            $s.clusters,
            $s.contiguous,
            $s.container,
            [V23_02..] $s.container_id,
            [V26_05..] $s.container_type,
            $s.core_spec,
            $s.task_dist,
            $s.kill_on_node_fail,
            $s.features,
            $s.fed_siblings_active,
            $s.fed_siblings_viable,
            [..V25_11] $s.job_id (job_id32),
            $s.job_id_str,
            $s.name,
            $s.alloc_node,
            $s.alloc_sid,
            $s.array_inx,
            $s.burst_buffer,
            $s.pn_min_cpus,
            $s.pn_min_memory,
            [V26_05..] $s.mem_update_delay,
            [V26_05..] $s.mem_update_margin,
            [V24_11..] $s.oom_kill_step,
            $s.pn_min_tmp_disk,
            [..V24_11] $s.power_flags,
            $s.prefer,
            $s.cpu_freq_min,
            $s.cpu_freq_max,
            $s.cpu_freq_gov,
            $s.partition,
            $s.priority,
            $s.dependency,
            $s.account,
            $s.admin_comment,
            $s.comment,
            $s.nice,
            $s.profile,
            $s.qos,
            $s.mcs_label,
            $s.origin_cluster,
            $s.open_mode,
            $s.overcommit,
            $s.acctg_freq,
            $s.num_tasks,
            $s.req_context,
            $s.req_nodes,
            $s.exc_nodes,
            $s.environment,
            $s.spank_job_env,
            $s.script,
            $s.argv,
            $s.std_err,
            $s.std_in,
            $s.std_out,
            $s.submit_line,
            $s.work_dir,
            $s.immediate,
            $s.reboot,
            $s.requeue,
            $s.shared,
            $s.cpus_per_task,
            $s.ntasks_per_node,
            $s.ntasks_per_board,
            $s.ntasks_per_socket,
            $s.ntasks_per_core,
            $s.ntasks_per_tres,
            $s.plane_size,
            $s.cpu_bind_type,
            $s.mem_bind_type,
            $s.cpu_bind,
            $s.mem_bind,
            $s.time_limit,
            $s.time_min,
            $s.min_cpus,
            $s.max_cpus,
            $s.min_nodes,
            $s.max_nodes,
            [V23_02..] $s.job_size_str,
            $s.boards_per_node,
            $s.sockets_per_board,
            $s.sockets_per_node,
            $s.cores_per_socket,
            $s.threads_per_core,
            $s.user_id,
            $s.group_id,
            $s.alloc_resp_port,
            [V25_05..] $s.alloc_tls_cert,
            $s.resp_host,
            $s.other_port,
            [V24_05..] $s.resv_port_cnt,
            $s.network,
            $s.begin_time,
            $s.end_time,
            $s.deadline,
            $s.licenses,
            $s.mail_type,
            $s.mail_user,
            $s.reservation,
            $s.restart_cnt,
            $s.warn_flags,
            $s.warn_signal,
            $s.warn_time,
            $s.wckey,
            $s.req_switch,
            $s.wait4switch,
            [..V23_02] $s.select_jobinfo,
            $s.wait_all_nodes,
            $s.bitflags,
            $s.delay_boot,
            $s.extra,
            $s.x11,
            $s.x11_magic_cookie,
            $s.x11_target,
            $s.x11_target_port,
            $s.cpus_per_tres,
            $s.mem_per_tres,
            $s.tres_bind,
            $s.tres_freq,
            $s.tres_per_job,
            $s.tres_per_node,
            $s.tres_per_socket,
            $s.tres_per_task,
            $s.crontab_entry (crontab),
            [V24_05..] $s.segment_size,
        )
    };
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

impl Wire for JobDescMsg {
    fn decode(r: &mut Reader<'_>, v: ProtocolVersion) -> Result<Self> {
        let mut s = Self::default();
        job_desc_fields!(dec r, v, s);
        Ok(s)
    }
    fn encode(&self, w: &mut Writer, v: ProtocolVersion) {
        let s = self;
        job_desc_fields!(enc w, v, s);
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
        let mut w = Writer::new();
        enc_flagged::<CronEntry>(&mut w, ProtocolVersion::V24_11, &None);
        assert_eq!(w.as_slice(), [0]);
        let mut r = Reader::new(&[2]);
        assert!(dec_flagged::<CronEntry>(&mut r, ProtocolVersion::V24_11).is_err());
    }
}
