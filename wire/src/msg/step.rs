//! Step creation and job/step completion.

use crate::codec::error::{named, PResult, WireError};
use crate::codec::shape;
use crate::codec::{prim, BufMut};
use crate::error::DecodeErrorKind;
use crate::pack::Wire;
use crate::types::StepId;
use crate::wire;
use crate::ProtocolVersion;

use super::cred::JobCred;
use super::jobacct::JobAcctInfo;

type V = ProtocolVersion;

wire! {
    /// A bare `u32 job_id` before 25.11, a whole `step_id` from 25.11 on (the
    /// release that replaced job ids with step ids in many RPCs). Before 25.11
    /// only `job_id` travels.
    #[derive(Copy, Eq)]
    pub struct JobIdOrStepId(#[wire(with = job_or_step_id)] pub StepId);
}

/// The whole step id from 25.11, a bare job id before.
// irregular: one slot whose type depends on the release, kept as one public type for its users.
mod job_or_step_id {
    use super::V;
    use crate::codec::error::PResult;
    use crate::codec::{shape, BufMut};
    use crate::pack::Wire;
    use crate::types::StepId;

    pub fn parse<'a>(i: &'a [u8], v: V, f: &mut StepId) -> PResult<'a, ()> {
        if v < V::V25_11 {
            return shape::job_id32::parse(i, v, f);
        }
        let (i, s) = StepId::parse(i, v)?;
        *f = s;
        Ok((i, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, v: V, f: &StepId) {
        if v < V::V25_11 {
            shape::job_id32::put(b, v, f)
        } else {
            f.put(b, v)
        }
    }
}

wire! {
    /// `slurm_step_launch_params_t` as sent by 26.05 srun for the async
    /// (stepmgr) launch path (`_pack_launch_params`).
    pub struct SlurmStepLaunchParams {
        pub argv: Vec<Option<String>>,
        pub env: Vec<Option<String>>,
        pub container: Option<String>,
        pub cwd: Option<String>,
        pub msg_timeout: u32,
        pub ntasks_per_board: u16,
        pub ntasks_per_core: u16,
        pub ntasks_per_tres: u16,
        pub ntasks_per_socket: u16,
        pub buffered_stdio: bool,
        pub labelio: bool,
        pub output_filename: Option<String>,
        pub error_filename: Option<String>,
        pub input_filename: Option<String>,
        pub multi_prog: bool,
        pub no_alloc: bool,
        pub slurmd_debug: u32,
        pub het_job_node_offset: u32,
        pub het_job_id: u32,
        pub het_job_nnodes: u32,
        pub het_job_ntasks: u32,
        pub het_job_step_cnt: u32,
        pub het_job_offset: u32,
        pub het_job_task_offset: u32,
        pub het_job_node_list: Option<String>,
        pub parallel_debug: bool,
        pub profile: u32,
        pub task_prolog: Option<String>,
        pub task_epilog: Option<String>,
        pub cpu_bind_type: u16,
        pub cpu_bind: Option<String>,
        pub cpu_freq_min: u32,
        pub cpu_freq_max: u32,
        pub cpu_freq_gov: u32,
        pub mem_bind_type: u16,
        pub mem_bind: Option<String>,
        pub accel_bind_type: u16,
        pub max_sockets: u16,
        pub max_cores: u16,
        pub max_threads: u16,
        pub cpus_per_task: u16,
        pub cpt_compact_array: Vec<u16>,
        pub cpt_compact_reps: Vec<u32>,
        pub threads_per_core: u16,
        pub task_dist: u32,
        pub tree_width: u16,
        pub preserve_env: bool,
        pub mpi_plugin_name: Option<String>,
        pub open_mode: u8,
        pub acctg_freq: Option<String>,
        pub pty: bool,
        pub spank_job_env: Vec<Option<String>>,
        pub tres_bind: Option<String>,
        pub tres_freq: Option<String>,
        pub oom_kill_step: u16,
    }
}

wire! {
    /// `bool present` then the launch parameters.
    pub struct LaunchParamsOpt(#[wire(with = shape::flag8)] pub Option<SlurmStepLaunchParams>);
}

wire! {
    /// `job_step_create_request_msg_t`: REQUEST_JOB_STEP_CREATE 5001.
    pub struct JobStepCreateRequestMsg {
        pub step_id: StepId,
        [V23_02..] pub array_task_id: u32,
        pub user_id: u32,
        pub min_nodes: u32,
        pub max_nodes: u32,
        pub container: Option<String>,
        [V23_02..] pub container_id: Option<String>,
        [V26_05..] pub container_type: Option<String>,
        pub cpu_count: u32,
        pub cpu_freq_min: u32,
        pub cpu_freq_max: u32,
        pub cpu_freq_gov: u32,
        pub num_tasks: u32,
        pub pn_min_memory: u64,
        pub time_limit: u32,
        pub threads_per_core: u16,
        [V23_02..] pub ntasks_per_core: u16,
        pub relative: u16,
        pub task_dist: u32,
        pub plane_size: u16,
        pub port: u16,
        pub immediate: u16,
        pub resv_port_cnt: u16,
        pub srun_pid: u32,
        pub flags: u32,
        pub host: Option<String>,
        pub name: Option<String>,
        pub network: Option<String>,
        pub node_list: Option<String>,
        pub exc_nodes: Option<String>,
        pub features: Option<String>,
        pub step_het_comp_cnt: u32,
        pub step_het_grps: Option<String>,
        pub cpus_per_tres: Option<String>,
        pub mem_per_tres: Option<String>,
        pub ntasks_per_tres: u16,
        [V25_05..] pub cwd: Option<String>,
        [V25_05..] pub std_err: Option<String>,
        [V25_05..] pub std_in: Option<String>,
        [V25_05..] pub std_out: Option<String>,
        pub submit_line: Option<String>,
        pub tres_bind: Option<String>,
        pub tres_freq: Option<String>,
        pub tres_per_step: Option<String>,
        pub tres_per_node: Option<String>,
        pub tres_per_socket: Option<String>,
        pub tres_per_task: Option<String>,
        [V26_05..] pub launch_params: LaunchParamsOpt,
    }
}

/// `slurm_step_layout_t` as packed by `pack_slurm_step_layout`.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct SlurmStepLayout {
    /// 26.05 always sends NULL here.
    pub front_end: Option<String>,
    pub node_list: Option<String>,
    pub start_protocol_ver: u16,
    pub task_cnt: u32,
    pub task_dist: u32,
    /// One task-id array per node; `node_cnt` on the wire is its length.
    pub tids: Vec<Vec<u32>>,
    /// 23.11+.
    pub cpt_compact_array: Vec<u16>,
    /// 23.11+.
    pub cpt_compact_reps: Vec<u32>,
    /// 23.11+: network credential for alias addresses (NULL without).
    pub net_cred: Option<String>,
}

/// `u16 present` (0/1) then the layout.
// irregular: the node count precedes three other fields and sizes the tids after them; it is checked
// there but reported at the count, as upstream's unpack reads it.
impl Wire for Option<SlurmStepLayout> {
    fn parse<'a>(i: &'a [u8], v: V) -> PResult<'a, Self> {
        let (r, flag) = prim::u16(i)?;
        match flag {
            0 => return Ok((r, None)),
            1 => {}
            n => {
                let what = "step layout present flag";
                let value = u64::from(n);
                return WireError::fail(DecodeErrorKind::BadValue { what, value }, i);
            }
        }
        let (r, front_end) = named(prim::str(r), "front_end")?;
        let (r, node_list) = named(prim::str(r), "node_list")?;
        let cnt_at = r;
        let (r, node_cnt) = named(prim::u32(r), "node_cnt")?;
        let (r, start_protocol_ver) = named(prim::u16(r), "start_protocol_ver")?;
        let (r, task_cnt) = named(prim::u32(r), "task_cnt")?;
        let (r, task_dist) = named(prim::u32(r), "task_dist")?;
        let checked = prim::check_count(cnt_at, r, u64::from(node_cnt), 4).map(|n| (r, n));
        let (r, n) = named(checked, "node_cnt")?;
        let (mut r, tids) = named(prim::items(r, n, |i| Vec::<u32>::parse(i, v)), "tids")?;
        let mut l = SlurmStepLayout {
            front_end,
            node_list,
            start_protocol_ver,
            task_cnt,
            task_dist,
            tids,
            ..Default::default()
        };
        if v >= V::V23_11 {
            (r, l.cpt_compact_array) = named(Vec::<u16>::parse(r, v), "cpt_compact_array")?;
            (r, l.cpt_compact_reps) = named(Vec::<u32>::parse(r, v), "cpt_compact_reps")?;
            (r, l.net_cred) = named(prim::str(r), "net_cred")?;
        }
        Ok((r, Some(l)))
    }
    fn put<B: BufMut>(&self, b: &mut B, v: V) {
        let Some(l) = self else {
            return b.put_u16(0);
        };
        b.put_u16(1);
        prim::put_str(b, l.front_end.as_deref());
        prim::put_str(b, l.node_list.as_deref());
        prim::put_count(b, l.tids.len());
        b.put_u16(l.start_protocol_ver);
        b.put_u32(l.task_cnt);
        b.put_u32(l.task_dist);
        for t in &l.tids {
            t.put(b, v);
        }
        if v >= V::V23_11 {
            l.cpt_compact_array.put(b, v);
            l.cpt_compact_reps.put(b, v);
            prim::put_str(b, l.net_cred.as_deref());
        }
    }
}

wire! {
    /// `job_step_create_response_msg_t`: RESPONSE_JOB_STEP_CREATE 5002.
    ///
    /// UNVERIFIED: 23.11/24.05 assume no switch plugin (then no switch info is
    /// sent); 22.05/23.02 assume switch/none and (22.05) a select plugin that
    /// packs nothing beyond its id, as cons_tres does.
    pub struct JobStepCreateResponseMsg {
        pub def_cpu_bind_type: u32,
        pub resv_ports: Option<String>,
        /// Before 25.11 only job_id (23.02+) and step_id travel; 22.05 sends
        /// only step_id.
        [V25_11..] pub step_id: StepId,
        #[wire(with = job_id_only)] [V23_02..V25_11] => step_id,
        #[wire(with = shape::step_num32)] [..V25_11] => step_id,
        pub step_layout: Option<SlurmStepLayout>,
        /// 24.05+.
        [V24_05..] pub stepmgr: Option<String>,
        /// Optional (bool flag) from 26.05; before, always sent (None is sent as
        /// an empty credential).
        #[wire(with = shape::flag8)] [V26_05..] pub cred: Option<Box<JobCred>>,
        #[wire(with = cred_always)] [..V26_05] => cred,
        /// 22.05 only.
        [..V23_02] pub select_plugin_id: u32,
        /// Before 23.11.
        [..V23_11] pub switch_plugin_id: u32,
        /// Before 25.11.
        [..V25_11] pub use_protocol_ver: u16,
        /// 26.05+.
        [V26_05..] pub state: u32,
    }
}

/// The job id alone, leaving the rest of the step id as it is (23.02..25.11 send job id and step number).
mod job_id_only {
    use super::V;
    use crate::codec::error::PResult;
    use crate::codec::{prim, BufMut};
    use crate::types::StepId;

    pub fn parse<'a>(i: &'a [u8], _: V, f: &mut StepId) -> PResult<'a, ()> {
        let (i, j) = prim::u32(i)?;
        f.job_id = j;
        Ok((i, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, _: V, f: &StepId) {
        b.put_u32(f.job_id)
    }
}

/// Before 26.05 the credential is always there; a missing one is sent as an empty credential.
mod cred_always {
    use super::{JobCred, V};
    use crate::codec::error::PResult;
    use crate::codec::BufMut;
    use crate::pack::Wire;

    pub fn parse<'a>(i: &'a [u8], v: V, f: &mut Option<Box<JobCred>>) -> PResult<'a, ()> {
        let (i, c) = JobCred::parse(i, v)?;
        *f = Some(Box::new(c));
        Ok((i, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, v: V, f: &Option<Box<JobCred>>) {
        match f {
            Some(c) => c.put(b, v),
            None => JobCred::default().put(b, v),
        }
    }
}

wire! {
    /// `step_complete_msg_t`: REQUEST_STEP_COMPLETE 5016.
    pub struct StepCompleteMsg {
        pub step_id: StepId,
        pub range_first: u32,
        pub range_last: u32,
        pub step_rc: u32,
        pub jobacct: JobAcctInfo,
        [V24_05..] pub send_to_stepmgr: bool,
    }
}

wire! {
    /// `complete_job_allocation_msg_t`: REQUEST_COMPLETE_JOB_ALLOCATION 5017.
    pub struct CompleteJobAllocationMsg {
        pub step_id: JobIdOrStepId,
        pub job_rc: u32,
    }
}

wire! {
    /// `complete_batch_script_msg_t`: REQUEST_COMPLETE_BATCH_SCRIPT 5018.
    /// Before 25.11 a `u32 job_id` follows jobacct; from 25.11 a step id
    /// follows slurm_rc instead.
    pub struct CompleteBatchScriptMsg {
        pub jobacct: JobAcctInfo,
        #[wire(with = shape::job_id32)] [..V25_11] => step_id,
        pub job_rc: u32,
        pub slurm_rc: u32,
        [V25_11..] pub step_id: StepId,
        pub user_id: u32,
        pub node_name: Option<String>,
    }
}

/// `srun_job_complete_msg_t` is a bare step id.
pub type SrunJobCompleteMsg = super::common::StepIdMsg;
