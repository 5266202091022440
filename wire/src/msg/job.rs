//! Job submission replies, allocation, job queries and kill requests.
//!
//! `JobInfo` is the canonical job record (the 24.11+ `job_info_t`, with
//! every field any release sends); it is written in the 22.05 order for
//! 22.05..24.05 and in the reordered 24.11 layout from 24.11 on.

use super::job_desc::SelectJobinfo;
use crate::codec::error::{named, PResult, WireError};
use crate::codec::{prim, shape, BufMut};
use crate::error::DecodeErrorKind;
use crate::pack::{Wire, NO_VAL};
use crate::types::{BitStr, Double, SlurmAddr, StepId};
use crate::{wire, ProtocolVersion};

type V = ProtocolVersion;

// ---------------------------------------------------------------------------
// Small requests and replies

wire! {
    /// `submit_response_msg_t` (RESPONSE_SUBMIT_BATCH_JOB). Before 25.11 only
    /// the job id and step number of `step_id` are sent.
    pub struct SubmitResponseMsg {
        [V25_11..] pub step_id: StepId,
        #[wire(with = shape::job_id32)] [..V25_11] => step_id,
        #[wire(with = shape::step_num32)] [..V25_11] => step_id,
        pub error_code: u32,
        pub job_submit_user_msg: Option<String>,
    }
}

wire! {
    /// `job_alloc_info_msg_t` (REQUEST_JOB_ALLOCATION_INFO).
    pub struct JobAllocInfoMsg {
        [V25_11..] pub step_id: StepId,
        #[wire(with = shape::job_id32)] [..V25_11] => step_id,
        pub req_cluster: Option<String>,
    }
}

wire! {
    /// `requeue_msg_t` (REQUEST_JOB_REQUEUE: `scontrol requeue[hold]`). From
    /// 25.11 the whole step id goes first, before only the job id.
    pub struct RequeueMsg {
        [V25_11..] pub step_id: StepId,
        #[wire(with = shape::job_id32)] [..V25_11] => step_id,
        pub job_id_str: Option<String>,
        pub flags: u32,
    }
}

wire! {
    /// `kill_jobs_msg_t` (REQUEST_KILL_JOBS: `scancel --ctld`, 23.11+); the
    /// controller filters and signals. 25.11 added `admin_comment`.
    pub struct KillJobsMsg {
        pub account: Option<String>,
        [V25_11..] pub admin_comment: Option<String>,
        pub flags: u16,
        pub job_name: Option<String>,
        pub jobs_array: Vec<Option<String>>,
        pub partition: Option<String>,
        pub qos: Option<String>,
        pub reservation: Option<String>,
        pub signal: u16,
        pub state: u32,
        pub user_id: u32,
        pub user_name: Option<String>,
        pub wckey: Option<String>,
        pub nodelist: Option<String>,
    }
}

wire! {
    /// `slurm_selected_step_t` (`slurm_pack_selected_step`); the array
    /// bitmap is sent from 24.11 on.
    pub struct SelectedStep {
        pub step_id: StepId,
        pub array_task_id: u32,
        pub het_job_offset: u32,
        [V24_11..] pub array_bitmap: Option<BitStr>,
    }
}

wire! {
    /// One job's answer in RESPONSE_KILL_JOBS.
    pub struct KillJobsRespJob {
        pub error_code: u32,
        pub error_msg: Option<String>,
        pub id: SelectedStep,
        pub real_job_id: u32,
        pub sibling_name: Option<String>,
    }
}

wire! {
    /// `kill_jobs_resp_msg_t` (RESPONSE_KILL_JOBS): u32 count, then the jobs.
    pub struct KillJobsRespMsg(#[wire(with = kill_jobs_resp)] pub Vec<KillJobsRespJob>);
}

/// `count32` with the least size of one answer (36 bytes), checked before allocation.
mod kill_jobs_resp {
    use super::{KillJobsRespJob, V};
    use crate::codec::error::PResult;
    use crate::codec::{shape::count32, BufMut};

    pub fn parse<'a>(i: &'a [u8], v: V, f: &mut Vec<KillJobsRespJob>) -> PResult<'a, ()> {
        count32::parse_min(i, v, f, 36)
    }
    pub fn put<B: BufMut>(b: &mut B, v: V, f: &[KillJobsRespJob]) {
        count32::put(b, v, f)
    }
}

wire! {
    /// One entry of RESPONSE_JOB_ARRAY_ERRORS: the tasks (`12_1-3,5`) that
    /// got one return code.
    pub struct JobArrayRespEntry {
        pub error_code: u32,
        pub job_array_id: Option<String>,
        [V23_02..] pub err_msg: Option<String>,
    }
}

wire! {
    /// `job_array_resp_msg_t` (RESPONSE_JOB_ARRAY_ERRORS): the answer to an
    /// update or requeue of array tasks, one entry per return code.
    pub struct JobArrayRespMsg(#[wire(with = job_array_resp)] pub Vec<JobArrayRespEntry>);
}

/// `count32` with the least size of one entry: 8 bytes, 12 from 23.02 (`err_msg`).
// irregular: the per-entry minimum follows the entry's own 23.02 gate, and a newtype has no `min` key.
mod job_array_resp {
    use super::{JobArrayRespEntry, V};
    use crate::codec::error::PResult;
    use crate::codec::{shape::count32, BufMut};

    pub fn parse<'a>(i: &'a [u8], v: V, f: &mut Vec<JobArrayRespEntry>) -> PResult<'a, ()> {
        count32::parse_min(i, v, f, if v >= V::V23_02 { 12 } else { 8 })
    }
    pub fn put<B: BufMut>(b: &mut B, v: V, f: &[JobArrayRespEntry]) {
        count32::put(b, v, f)
    }
}

wire! {
    /// `job_id_msg_t` as `_pack_job_ready_msg` sends it (REQUEST_JOB_READY,
    /// REQUEST_JOB_INFO_SINGLE).
    pub struct JobIdMsg {
        [V25_11..] pub step_id: StepId,
        #[wire(with = shape::job_id32)] [..V25_11] => step_id,
        pub show_flags: u16,
    }
}

wire! {
    /// `job_info_request_msg_t` (REQUEST_JOB_INFO); `job_ids` None is the
    /// NO_VAL count (all jobs).
    pub struct JobInfoRequestMsg {
        pub last_update: i64,
        pub show_flags: u16,
        pub job_ids: Option<Vec<u32>>,
    }
}

wire! {
    /// `job_user_id_msg_t` (REQUEST_JOB_USER_INFO: `squeue -u`); unchanged
    /// since 22.05. UNVERIFIED against a capture.
    pub struct JobUserIdMsg {
        pub user_id: u32,
        pub show_flags: u16,
    }
}

wire! {
    /// `job_step_kill_msg_t` (REQUEST_KILL_JOB, REQUEST_CANCEL_JOB_STEP);
    /// unchanged since 22.05 apart from the step id's sluid.
    pub struct JobStepKillMsg {
        pub step_id: StepId,
        pub sjob_id: Option<String>,
        pub sibling: Option<String>,
        pub signal: u16,
        pub flags: u16,
    }
}

// ---------------------------------------------------------------------------
// RESPONSE_RESOURCE_ALLOCATION / RESPONSE_JOB_ALLOCATION_INFO

wire! {
    /// `resource_allocation_response_msg_t`.
    ///
    /// `working_cluster_rec` (a `slurmdb_cluster_rec_t`) is not modelled: the
    /// encoder always sends "absent" and the decoder rejects a present one
    /// with a `BadValue` error. UNVERIFIED beyond the captures, which only
    /// carry the absent form.
    pub struct ResourceAllocationResponseMsg {
        pub account: Option<String>,
        /// 23.11+ servers send NULL.
        [..V25_05] pub alias_list: Option<String>,
        pub batch_host: Option<String>,
        pub environment: Vec<Option<String>>,
        pub error_code: u32,
        [V23_02..] pub gid: u32,
        [V23_02..] pub group_name: Option<String>,
        pub job_submit_user_msg: Option<String>,
        /// Only `job_id` before 25.11 (here); the whole step id later.
        #[wire(with = shape::job_id32)] [..V25_11] pub step_id: StepId,
        pub node_cnt: u32,
        /// Sent only when it has exactly `node_cnt` entries.
        #[wire(ctx = node_addr)] [..V25_05] pub node_addr: Option<Vec<SlurmAddr>>,
        pub node_list: Option<String>,
        pub ntasks_per_board: u16,
        pub ntasks_per_core: u16,
        pub ntasks_per_tres: u16,
        pub ntasks_per_socket: u16,
        /// `num_cpu_groups` is the length of this and `cpu_count_reps`; the
        /// encoder sends the shorter length if they differ.
        #[wire(ctx = cpu_groups)] pub cpus_per_node: Vec<u16>,
        #[wire(with = cpu_groups::reps)] pub cpu_count_reps: Vec<u32>,
        pub partition: Option<String>,
        pub pn_min_memory: u64,
        pub qos: Option<String>,
        pub resv_name: Option<String>,
        [..V23_02] pub select_jobinfo: SelectJobinfo,
        [V25_11..] pub segment_size: u16,
        [V25_11..] pub start_protocol_ver: u16,
        [V25_11..] => step_id,
        [V23_02..] pub tres_per_node: Option<String>,
        [V25_05..] pub tres_per_task: Option<String>,
        [V23_02..] pub uid: u32,
        [V23_02..] pub user_name: Option<String>,
        let has_working_cluster_rec: NoClusterRec = (|_| NoClusterRec),
    }
}

/// `u8` presence flag, then `node_cnt` addresses behind a u32 count that must equal `node_cnt`.
mod node_addr {
    use super::ResourceAllocationResponseMsg as Msg;
    use super::{prim, BufMut, DecodeErrorKind, PResult, SlurmAddr, Wire, WireError, V};

    pub fn parse<'a>(i: &'a [u8], v: V, t: &mut Msg) -> PResult<'a, ()> {
        let (at, present) = prim::bool(i)?;
        if !present {
            t.node_addr = None;
            return Ok((at, ()));
        }
        let (r, n) = prim::count(at, 2)?;
        if n as u64 != u64::from(t.node_cnt) {
            return WireError::fail(
                DecodeErrorKind::BadValue {
                    what: "node_addr count differs from node_cnt",
                    value: n as u64,
                },
                at,
            );
        }
        let (r, addrs) = prim::items(r, n, |i| SlurmAddr::parse(i, v))?;
        t.node_addr = Some(addrs);
        Ok((r, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, v: V, t: &Msg) {
        match &t.node_addr {
            Some(a) if a.len() as u64 == u64::from(t.node_cnt) => {
                b.put_u8(1);
                prim::put_count(b, a.len());
                for x in a {
                    x.put(b, v);
                }
            }
            _ => b.put_u8(0),
        }
    }
}

/// `num_cpu_groups`, then (when non-zero) `cpus_per_node[]` and `cpu_count_reps[]`, each with its own
/// count that must equal it.
mod cpu_groups {
    use super::ResourceAllocationResponseMsg as Msg;
    use super::{prim, BufMut, DecodeErrorKind, PResult, Wire, WireError, V};

    pub fn parse<'a>(i: &'a [u8], v: V, t: &mut Msg) -> PResult<'a, ()> {
        let (r, n) = prim::u32(i)?;
        if n == 0 {
            return Ok((r, ()));
        }
        let (at2, cpus) = Vec::<u16>::parse(r, v)?;
        let (rest, reps) = Vec::<u32>::parse(at2, v)?;
        for (len, at) in [(cpus.len(), r), (reps.len(), at2)] {
            if len as u64 != u64::from(n) {
                return WireError::fail(
                    DecodeErrorKind::BadValue {
                        what: "cpu group array length differs from num_cpu_groups",
                        value: len as u64,
                    },
                    at,
                );
            }
        }
        t.cpus_per_node = cpus;
        t.cpu_count_reps = reps;
        Ok((rest, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, _: V, t: &Msg) {
        let n = t.cpus_per_node.len().min(t.cpu_count_reps.len());
        prim::put_count(b, n);
        if n > 0 {
            prim::put_count(b, n);
            t.cpus_per_node.iter().take(n).for_each(|&x| b.put_u16(x));
            prim::put_count(b, n);
            t.cpu_count_reps.iter().take(n).for_each(|&x| b.put_u32(x));
        }
    }

    /// `cpu_count_reps` travels with `cpus_per_node` (above).
    pub mod reps {
        use super::{BufMut, PResult, V};
        pub fn parse<'a>(i: &'a [u8], _: V, _: &mut Vec<u32>) -> PResult<'a, ()> {
            Ok((i, ()))
        }
        pub fn put<B: BufMut>(_: &mut B, _: V, _: &[u32]) {}
    }
}

/// `working_cluster_rec`'s presence flag: only "absent" (0) is modelled.
#[derive(Debug, Clone, Copy, Default)]
struct NoClusterRec;

// irregular: a record this decoder does not model; any presence flag but 0 is refused.
impl Wire for NoClusterRec {
    fn parse<'a>(i: &'a [u8], _: V) -> PResult<'a, Self> {
        match prim::u8(i)? {
            (r, 0) => Ok((r, Self)),
            (_, b) => WireError::fail(
                DecodeErrorKind::BadValue {
                    what: "working_cluster_rec present (slurmdb_cluster_rec_t unsupported)",
                    value: u64::from(b),
                },
                i,
            ),
        }
    }
    fn put<B: BufMut>(&self, b: &mut B, _: V) {
        b.put_u8(0)
    }
}

// ---------------------------------------------------------------------------
// RESPONSE_JOB_INFO

wire! {
    /// `multi_core_data_t` after its 0xff presence byte.
    pub struct MultiCoreData {
        pub boards_per_node: u16,
        pub sockets_per_board: u16,
        pub sockets_per_node: u16,
        pub cores_per_socket: u16,
        pub threads_per_core: u16,
        pub ntasks_per_board: u16,
        pub ntasks_per_socket: u16,
        pub ntasks_per_core: u16,
        pub plane_size: u16,
    }
}

/// `pack_multi_core_data` (`u8` 0 for none, 0xff then the data): `shape::flag_ff`, with this
/// record's name for a bad flag, as logs have always shown it.
mod multi_core {
    use super::{shape::flag_ff, BufMut, DecodeErrorKind, MultiCoreData, PResult, V};

    pub fn parse<'a>(i: &'a [u8], v: V, f: &mut Option<MultiCoreData>) -> PResult<'a, ()> {
        flag_ff::parse(i, v, f).map_err(|e| {
            e.map(|mut e| {
                if let DecodeErrorKind::BadValue { what, .. } = &mut e.kind {
                    if e.remaining == i.len() {
                        *what = "multi_core_data flag";
                    }
                }
                e
            })
        })
    }
    pub fn put<B: BufMut>(b: &mut B, v: V, f: &Option<MultiCoreData>) {
        flag_ff::put(b, v, f)
    }
}

/// `job_resources_t` as `pack_job_resources` sends it when non-NULL.
///
/// `nhosts` is `cpus.len()`: upstream's unpacker insists that they agree,
/// as it does for `cpu_array_value` against `cpu_array_reps` (the encoder
/// trims that pair to the shorter length).
/// UNVERIFIED against captures (squeue only shows the NULL form).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct JobResources {
    pub ncpus: u32,
    /// 24.11+
    pub next_step_node_inx: u32,
    pub node_req: u32,
    pub nodes: Option<String>,
    pub whole_node: u8,
    pub threads_per_core: u16,
    pub cr_type: u16,
    pub cpu_array_reps: Vec<u32>,
    pub cpu_array_value: Vec<u16>,
    pub cpus: Vec<u16>,
    pub cpus_used: Vec<u16>,
    pub memory_allocated: Vec<u64>,
    pub memory_used: Vec<u64>,
    pub sockets_per_node: Vec<u16>,
    pub cores_per_socket: Vec<u16>,
    pub sock_core_rep_count: Vec<u32>,
    pub core_bitmap: Option<BitStr>,
    pub core_bitmap_used: Option<BitStr>,
    /// 24.05..25.11
    pub node_bitmap: Option<BitStr>,
    /// 26.05+
    pub node_ranks: Vec<u32>,
}

/// One element of a `JobResources`: parsed, stored, and named in the error path when `name` is set.
fn get<T: Wire>(i: &mut &[u8], v: V, name: Option<&'static str>) -> Result<T, nom::Err<WireError>> {
    let r = T::parse(i, v);
    let (rest, x) = match name {
        Some(n) => named(r, n)?,
        None => r?,
    };
    *i = rest;
    Ok(x)
}

fn bad_len<T>(what: &'static str, len: usize, at: &[u8]) -> Result<T, nom::Err<WireError>> {
    WireError::fail(
        DecodeErrorKind::BadValue {
            what,
            value: len as u64,
        },
        at,
    )
}

/// `pack_job_resources`: NO_VAL for NULL.
// irregular: `nhosts` is both the NULL sentinel and the length `cpus` must have, and the cpu_array pair
// must agree; both are checked where the array ends (the encoder derives nhosts and trims the pair).
impl Wire for Option<JobResources> {
    fn parse<'a>(i: &'a [u8], v: V) -> PResult<'a, Self> {
        let (mut i, nhosts) = prim::u32(i)?;
        if nhosts == NO_VAL {
            return Ok((i, None));
        }
        let i = &mut i;
        let mut j = JobResources {
            ncpus: get(i, v, None)?,
            ..Default::default()
        };
        if crate::gate!(v; V24_11..) {
            j.next_step_node_inx = get(i, v, None)?;
        }
        j.node_req = get(i, v, None)?;
        j.nodes = get(i, v, Some("nodes"))?;
        j.whole_node = get(i, v, None)?;
        j.threads_per_core = get(i, v, None)?;
        j.cr_type = get(i, v, None)?;
        j.cpu_array_reps = get(i, v, Some("cpu_array_reps"))?;
        let at = *i;
        j.cpu_array_value = get(i, v, Some("cpu_array_value"))?;
        if j.cpu_array_value.len() != j.cpu_array_reps.len() {
            return bad_len("cpu_array_value length", j.cpu_array_value.len(), at);
        }
        let at = *i;
        j.cpus = get(i, v, Some("cpus"))?;
        if j.cpus.len() as u64 != u64::from(nhosts) {
            return bad_len("cpus length differs from nhosts", j.cpus.len(), at);
        }
        j.cpus_used = get(i, v, Some("cpus_used"))?;
        j.memory_allocated = get(i, v, Some("memory_allocated"))?;
        j.memory_used = get(i, v, Some("memory_used"))?;
        j.sockets_per_node = get(i, v, Some("sockets_per_node"))?;
        j.cores_per_socket = get(i, v, Some("cores_per_socket"))?;
        j.sock_core_rep_count = get(i, v, Some("sock_core_rep_count"))?;
        j.core_bitmap = get(i, v, Some("core_bitmap"))?;
        j.core_bitmap_used = get(i, v, Some("core_bitmap_used"))?;
        if crate::gate!(v; V24_05..V26_05) {
            j.node_bitmap = get(i, v, Some("node_bitmap"))?;
        }
        if crate::gate!(v; V26_05..) {
            j.node_ranks = get(i, v, Some("node_ranks"))?;
        }
        Ok((*i, Some(j)))
    }

    fn put<B: BufMut>(&self, b: &mut B, v: V) {
        let Some(j) = self else {
            b.put_u32(NO_VAL);
            return;
        };
        prim::put_count(b, j.cpus.len());
        b.put_u32(j.ncpus);
        if crate::gate!(v; V24_11..) {
            b.put_u32(j.next_step_node_inx);
        }
        b.put_u32(j.node_req);
        j.nodes.put(b, v);
        b.put_u8(j.whole_node);
        b.put_u16(j.threads_per_core);
        b.put_u16(j.cr_type);
        let n = j.cpu_array_reps.len().min(j.cpu_array_value.len());
        prim::put_count(b, n);
        j.cpu_array_reps.iter().take(n).for_each(|&x| b.put_u32(x));
        prim::put_count(b, n);
        j.cpu_array_value.iter().take(n).for_each(|&x| b.put_u16(x));
        j.cpus.put(b, v);
        j.cpus_used.put(b, v);
        j.memory_allocated.put(b, v);
        j.memory_used.put(b, v);
        j.sockets_per_node.put(b, v);
        j.cores_per_socket.put(b, v);
        j.sock_core_rep_count.put(b, v);
        j.core_bitmap.put(b, v);
        j.core_bitmap_used.put(b, v);
        if crate::gate!(v; V24_05..V26_05) {
            j.node_bitmap.put(b, v);
        }
        if crate::gate!(v; V26_05..) {
            j.node_ranks.put(b, v);
        }
    }
}

wire! {
    /// The federation block of a job record (`job_record_pack_fed_details`);
    /// behind a presence flag from 24.11 on, always sent before.
    pub struct JobFedDetails {
        pub fed_origin_str: Option<String>,
        pub fed_siblings_active: u64,
        pub fed_siblings_active_str: Option<String>,
        pub fed_siblings_viable: u64,
        pub fed_siblings_viable_str: Option<String>,
    }
}

/// The job-details fields of a record (`job_record_pack_details_common`
/// and friends); behind `has_details` from 24.11 on, always sent before.
/// `nice`, `num_cpus` and `num_nodes` are sent either way and live in
/// [`JobInfo`].
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct JobDetails {
    pub accrue_time: i64,
    pub eligible_time: i64,
    pub cluster_features: Option<String>,
    pub cpu_freq_gov: u32,
    pub cpu_freq_max: u32,
    pub cpu_freq_min: u32,
    pub dependency: Option<String>,
    /// 23.02+
    pub job_size_str: Option<BitStr>,
    pub ntasks_per_node: u16,
    pub ntasks_per_tres: u16,
    pub requeue: u16,
    /// 25.05+
    pub segment_size: u16,
    pub submit_time: i64,
    pub work_dir: Option<String>,
    pub features: Option<String>,
    pub prefer: Option<String>,
    pub command: Option<String>,
    /// 25.11+
    pub submit_line: Option<String>,
    pub max_cpus: u32,
    pub max_nodes: u32,
    pub num_tasks: u32,
    /// 26.05+
    pub exclusive: u16,
    pub shared: u16,
    /// 26.05+
    pub oversubscribe: u16,
    pub cronspec: Option<String>,
    /// 26.05+
    pub mem_update_delay: u16,
    /// 26.05+
    pub mem_update_margin: u16,
}

/// `job_info_t`, one record of RESPONSE_JOB_INFO.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct JobInfo {
    /// Only `job_id` before 25.11.
    pub step_id: StepId,
    pub account: Option<String>,
    pub admin_comment: Option<String>,
    pub alloc_node: Option<String>,
    pub alloc_sid: u32,
    pub array_job_id: u32,
    pub array_task_id: u32,
    pub assoc_id: u32,
    pub batch_features: Option<String>,
    pub batch_flag: u16,
    pub batch_host: Option<String>,
    pub bitflags: u64,
    pub burst_buffer: Option<String>,
    pub burst_buffer_state: Option<String>,
    pub billable_tres: Double,
    pub comment: Option<String>,
    pub container: Option<String>,
    /// 23.02+
    pub container_id: Option<String>,
    /// 26.05+
    pub container_type: Option<String>,
    pub cpus_per_tres: Option<String>,
    pub deadline: i64,
    pub delay_boot: u32,
    pub derived_ec: u32,
    pub exit_code: u32,
    /// 23.02+
    pub extra: Option<String>,
    /// 23.02+
    pub failed_node: Option<String>,
    pub fed: Option<JobFedDetails>,
    pub gres_total: Option<String>,
    pub group_id: u32,
    pub het_job_id: u32,
    pub het_job_id_set: Option<String>,
    pub het_job_offset: u32,
    pub job_state: u32,
    pub last_sched_eval: i64,
    pub licenses: Option<String>,
    /// 25.05+
    pub licenses_allocated: Option<String>,
    pub mail_type: u16,
    pub mail_user: Option<String>,
    pub mcs_label: Option<String>,
    pub mem_per_tres: Option<String>,
    pub name: Option<String>,
    pub network: Option<String>,
    pub preempt_time: i64,
    pub pre_sus_time: i64,
    pub priority: u32,
    pub profile: u32,
    pub reboot: u8,
    pub req_switch: u32,
    pub resize_time: i64,
    pub restart_cnt: u16,
    pub resv_name: Option<String>,
    /// 24.05+
    pub resv_ports: Option<String>,
    pub selinux_context: Option<String>,
    pub site_factor: u32,
    pub start_protocol_ver: u16,
    pub state_desc: Option<String>,
    /// A u16 on the 22.05 wire.
    pub state_reason: u32,
    pub suspend_time: i64,
    pub system_comment: Option<String>,
    pub time_min: u32,
    pub tres_bind: Option<String>,
    pub tres_alloc_str: Option<String>,
    pub tres_req_str: Option<String>,
    pub tres_freq: Option<String>,
    pub tres_per_job: Option<String>,
    pub tres_per_node: Option<String>,
    pub tres_per_socket: Option<String>,
    pub tres_per_task: Option<String>,
    pub user_id: u32,
    pub user_name: Option<String>,
    pub wait4switch: u32,
    pub wckey: Option<String>,
    pub array_task_str: Option<String>,
    pub array_max_tasks: u32,
    pub time_limit: u32,
    pub start_time: i64,
    pub end_time: i64,
    /// 24.05+
    pub priority_array: Vec<u32>,
    /// 24.05+ (`priority_array_parts` in 24.05)
    pub priority_array_names: Option<String>,
    pub cluster: Option<String>,
    pub nodes: Option<String>,
    pub sched_nodes: Option<String>,
    pub partition: Option<String>,
    pub qos: Option<String>,
    pub preemptable_time: i64,
    pub job_resrcs: Option<JobResources>,
    pub gres_detail_str: Vec<Option<String>>,
    pub node_inx: Option<BitStr>,
    pub details: Option<JobDetails>,
    pub nice: u32,
    pub num_cpus: u32,
    pub num_nodes: u32,
    pub contiguous: u16,
    pub core_spec: u16,
    pub cpus_per_task: u16,
    pub pn_min_cpus: u16,
    pub pn_min_memory: u64,
    pub pn_min_tmp_disk: u32,
    /// 24.11+
    pub oom_kill_step: u16,
    pub req_nodes: Option<String>,
    pub req_node_inx: Option<BitStr>,
    pub exc_nodes: Option<String>,
    pub exc_node_inx: Option<BitStr>,
    pub std_err: Option<String>,
    pub std_in: Option<String>,
    pub std_out: Option<String>,
    pub multi_core: Option<MultiCoreData>,
    /// Before 24.11 only.
    pub show_flags: u16,
    /// Before 24.11 only (24.05 always sends 0).
    pub power_flags: u8,
    /// 22.05 only.
    pub select_jobinfo: SelectJobinfo,
}

/// Before 24.11 the record carries `container` twice (the second copy
/// wins upstream); both copies must agree for an exact re-encoding.
mod container_again {
    use super::{prim, BufMut, DecodeErrorKind, PResult, WireError, V};

    pub fn parse<'a>(i: &'a [u8], _: V, f: &mut Option<String>) -> PResult<'a, ()> {
        let (r, s) = prim::str(i)?;
        if s != *f {
            return WireError::fail(
                DecodeErrorKind::BadValue {
                    what: "second copy of container differs from the first",
                    value: s.map_or(0, |s| s.len() as u64),
                },
                i,
            );
        }
        Ok((r, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, _: V, f: &Option<String>) {
        prim::put_str(b, f.as_deref())
    }
}

/// 22.05's u16 `state_reason`.
mod state_reason16 {
    use super::{prim, BufMut, PResult, V};

    pub fn parse<'a>(i: &'a [u8], _: V, f: &mut u32) -> PResult<'a, ()> {
        let (r, x) = prim::u16(i)?;
        *f = u32::from(x);
        Ok((r, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, _: V, f: &u32) {
        b.put_u16(*f as u16)
    }
}

/// One of `JobInfo`'s field lists in one direction: `dec i, v; ..` parses into the record `s`, its
/// details `d` and its federation block `f`; `enc b, v; ..` writes them. An entry is
/// `[gate] obj.field` (the field's own codec) or `[gate] obj.field (codec)` (a field codec,
/// `parse(i, v, &mut field)` / `put(b, v, &field)`); errors are named after the field.
macro_rules! record {
    (dec $i:ident, $v:ident; $( $([$($g:tt)*])? $o:ident . $f:ident $(($c:path))? ),* $(,)?) => {
        $( if $crate::gate!($v; $($($g)*)?) { record!(@d $i, $v, $o.$f $(, $c)?); } )*
    };
    (enc $b:ident, $v:ident; $( $([$($g:tt)*])? $o:ident . $f:ident $(($c:path))? ),* $(,)?) => {
        $( if $crate::gate!($v; $($($g)*)?) { record!(@e $b, $v, $o.$f $(, $c)?); } )*
    };
    (@d $i:ident, $v:ident, $o:ident . $f:ident) => {
        let (r, x) = named(Wire::parse($i, $v), stringify!($f))?;
        $o.$f = x;
        $i = r;
    };
    (@d $i:ident, $v:ident, $o:ident . $f:ident, $c:path) => {
        use $c as c;
        let (r, ()) = named(c::parse($i, $v, &mut $o.$f), stringify!($f))?;
        $i = r;
    };
    (@e $b:ident, $v:ident, $o:ident . $f:ident) => {
        Wire::put(&$o.$f, $b, $v);
    };
    (@e $b:ident, $v:ident, $o:ident . $f:ident, $c:path) => {
        use $c as c;
        c::put($b, $v, &$o.$f);
    };
}

/// 22.05..24.05 record order (`_unpack_job_info_members`, 22.05 layout).
macro_rules! job_info_legacy {
    ($m:ident $x:ident, $v:ident, $s:ident, $d:ident, $f:ident) => {
        record!($m $x, $v;
            $s.array_job_id,
            $s.array_task_id,
            $s.array_task_str,
            $s.array_max_tasks,
            $s.assoc_id,
            $s.container,
            [V23_02..] $s.container_id,
            $s.delay_boot,
            [V23_02..] $s.failed_node,
            $s.step_id (shape::job_id32),
            $s.user_id,
            $s.group_id,
            $s.het_job_id,
            $s.het_job_id_set,
            $s.het_job_offset,
            $s.profile,
            $s.job_state,
            $s.batch_flag,
            [..V23_02] $s.state_reason (state_reason16),
            [V23_02..] $s.state_reason,
            $s.power_flags,
            $s.reboot,
            $s.restart_cnt,
            $s.show_flags,
            $s.deadline,
            $s.alloc_sid,
            $s.time_limit,
            $s.time_min,
            $s.nice,
            $d.submit_time,
            $d.eligible_time,
            $d.accrue_time,
            $s.start_time,
            $s.end_time,
            $s.suspend_time,
            $s.pre_sus_time,
            $s.resize_time,
            $s.last_sched_eval,
            $s.preempt_time,
            $s.priority,
            [V24_05..] $s.priority_array,
            [V24_05..] $s.priority_array_names,
            $s.billable_tres,
            $s.cluster,
            $s.nodes,
            $s.sched_nodes,
            $s.partition,
            $s.account,
            $s.admin_comment,
            $s.site_factor,
            $s.network,
            $s.comment,
            [V23_02..] $s.extra,
            $s.container (container_again),
            $s.batch_features,
            $s.batch_host,
            $s.burst_buffer,
            $s.burst_buffer_state,
            $s.system_comment,
            $s.qos,
            $s.preemptable_time,
            $s.licenses,
            $s.state_desc,
            $s.resv_name,
            [V24_05..] $s.resv_ports,
            $s.mcs_label,
            $s.exit_code,
            $s.derived_ec,
            $s.gres_total,
            $s.job_resrcs,
            $s.gres_detail_str,
            $s.name,
            $s.user_name,
            $s.wckey,
            $s.req_switch,
            $s.wait4switch,
            $s.alloc_node,
            $s.node_inx,
            [..V23_02] $s.select_jobinfo,
            $d.features,
            $d.prefer,
            $d.cluster_features,
            $d.work_dir,
            $d.dependency,
            $d.command,
            $s.num_cpus,
            $d.max_cpus,
            $s.num_nodes,
            $d.max_nodes,
            [V23_02..] $d.job_size_str,
            $d.requeue,
            $d.ntasks_per_node,
            $d.ntasks_per_tres,
            $d.num_tasks,
            $d.shared,
            $d.cpu_freq_min,
            $d.cpu_freq_max,
            $d.cpu_freq_gov,
            $d.cronspec,
            $s.contiguous,
            $s.core_spec,
            $s.cpus_per_task,
            $s.pn_min_cpus,
            $s.pn_min_memory,
            $s.pn_min_tmp_disk,
            $s.req_nodes,
            $s.req_node_inx,
            $s.exc_nodes,
            $s.exc_node_inx,
            $s.std_err,
            $s.std_in,
            $s.std_out,
            $s.multi_core (multi_core),
            $s.bitflags,
            $s.tres_alloc_str,
            $s.tres_req_str,
            $s.start_protocol_ver,
            $f.fed_origin_str,
            $f.fed_siblings_active,
            $f.fed_siblings_active_str,
            $f.fed_siblings_viable,
            $f.fed_siblings_viable_str,
            $s.cpus_per_tres,
            $s.mem_per_tres,
            $s.tres_bind,
            $s.tres_freq,
            $s.tres_per_job,
            $s.tres_per_node,
            $s.tres_per_socket,
            $s.tres_per_task,
            $s.mail_type,
            $s.mail_user,
            $s.selinux_context,
        )
    };
}

/// 24.11+ record, up to the `has_details` flag.
macro_rules! job_info_head {
    ($m:ident $x:ident, $v:ident, $s:ident) => {
        record!($m $x, $v;
            [V25_11..] $s.step_id,
            $s.account,
            $s.admin_comment,
            $s.alloc_node,
            $s.alloc_sid,
            $s.array_job_id,
            $s.array_task_id,
            $s.assoc_id,
            $s.batch_features,
            $s.batch_flag,
            $s.batch_host,
            $s.bitflags,
            $s.burst_buffer,
            $s.burst_buffer_state,
            $s.billable_tres,
            $s.comment,
            $s.container,
            $s.container_id,
            [V26_05..] $s.container_type,
            $s.cpus_per_tres,
            $s.deadline,
            $s.delay_boot,
            $s.derived_ec,
            $s.exit_code,
            $s.extra,
            $s.failed_node,
            $s.fed (shape::flag8),
            $s.gres_total,
            $s.group_id,
            $s.het_job_id,
            $s.het_job_id_set,
            $s.het_job_offset,
            [..V25_11] $s.step_id (shape::job_id32),
            $s.job_state,
            $s.last_sched_eval,
            $s.licenses,
            [V25_05..] $s.licenses_allocated,
            $s.mail_type,
            $s.mail_user,
            $s.mcs_label,
            $s.mem_per_tres,
            $s.name,
            $s.network,
            $s.preempt_time,
            $s.pre_sus_time,
            $s.priority,
            $s.profile,
            $s.reboot,
            $s.req_switch,
            $s.resize_time,
            $s.restart_cnt,
            $s.resv_name,
            $s.resv_ports,
            $s.selinux_context,
            $s.site_factor,
            $s.start_protocol_ver,
            $s.state_desc,
            $s.state_reason,
            $s.suspend_time,
            $s.system_comment,
            $s.time_min,
            $s.tres_bind,
            $s.tres_alloc_str,
            $s.tres_req_str,
            $s.tres_freq,
            $s.tres_per_job,
            $s.tres_per_node,
            $s.tres_per_socket,
            $s.tres_per_task,
            $s.user_id,
            $s.user_name,
            $s.wait4switch,
            $s.wckey,
            $s.array_task_str,
            $s.array_max_tasks,
            $s.time_limit,
            $s.start_time,
            $s.end_time,
            $s.priority_array,
            $s.priority_array_names,
            $s.cluster,
            $s.nodes,
            $s.sched_nodes,
            $s.partition,
            $s.qos,
            $s.preemptable_time,
            $s.job_resrcs,
            $s.gres_detail_str,
            $s.node_inx,
        )
    };
}

/// 24.11+ record, the details block when `has_details` is true.
macro_rules! job_info_details {
    ($m:ident $x:ident, $v:ident, $s:ident, $d:ident) => {
        record!($m $x, $v;
            $d.accrue_time,
            $d.eligible_time,
            $d.cluster_features,
            $d.cpu_freq_gov,
            $d.cpu_freq_max,
            $d.cpu_freq_min,
            $d.dependency,
            $d.job_size_str,
            $s.nice,
            $d.ntasks_per_node,
            $d.ntasks_per_tres,
            $d.requeue,
            [V25_05..] $d.segment_size,
            $d.submit_time,
            $d.work_dir,
            $d.features,
            $d.prefer,
            $d.command,
            [V25_11..] $d.submit_line,
            $s.num_cpus,
            $d.max_cpus,
            $s.num_nodes,
            $d.max_nodes,
            $d.num_tasks,
            [V26_05..] $d.exclusive,
            $d.shared,
            [V26_05..] $d.oversubscribe,
            $d.cronspec,
            [V26_05..] $d.mem_update_delay,
            [V26_05..] $d.mem_update_margin,
        )
    };
}

/// 24.11+ record, after the details.
macro_rules! job_info_tail {
    ($m:ident $x:ident, $v:ident, $s:ident) => {
        record!($m $x, $v;
            $s.contiguous,
            $s.core_spec,
            $s.cpus_per_task,
            $s.pn_min_cpus,
            $s.pn_min_memory,
            $s.pn_min_tmp_disk,
            $s.oom_kill_step,
            $s.req_nodes,
            $s.req_node_inx,
            $s.exc_nodes,
            $s.exc_node_inx,
            $s.std_err,
            $s.std_in,
            $s.std_out,
            $s.multi_core (multi_core),
        )
    };
}

// irregular: two field orders. 22.05..24.05 flatten the details and the federation block into the
// record; 24.11 puts them behind presence flags and interleaves nice/num_cpus/num_nodes with the
// details. A gated list cannot express the permutation, so each order is its own list (`record!`).
impl Wire for JobInfo {
    fn parse<'a>(mut i: &'a [u8], v: V) -> PResult<'a, Self> {
        let mut s = Self::default();
        let mut d = JobDetails::default();
        if v < V::V24_11 {
            let mut f = JobFedDetails::default();
            job_info_legacy!(dec i, v, s, d, f);
            s.fed = Some(f);
            s.details = Some(d);
            return Ok((i, s));
        }
        job_info_head!(dec i, v, s);
        let (r, has_details) = named(prim::bool(i), "has_details")?;
        i = r;
        if has_details {
            job_info_details!(dec i, v, s, d);
            s.details = Some(d);
        } else {
            record!(dec i, v; s.num_cpus, s.num_nodes, s.nice);
        }
        job_info_tail!(dec i, v, s);
        Ok((i, s))
    }

    fn put<B: BufMut>(&self, b: &mut B, v: V) {
        let s = self;
        let no_details = JobDetails::default();
        let d = s.details.as_ref().unwrap_or(&no_details);
        if v < V::V24_11 {
            let no_fed = JobFedDetails::default();
            let f = s.fed.as_ref().unwrap_or(&no_fed);
            job_info_legacy!(enc b, v, s, d, f);
            return;
        }
        job_info_head!(enc b, v, s);
        b.put_u8(u8::from(s.details.is_some()));
        if s.details.is_some() {
            job_info_details!(enc b, v, s, d);
        } else {
            record!(enc b, v; s.num_cpus, s.num_nodes, s.nice);
        }
        job_info_tail!(enc b, v, s);
    }
}

wire! {
    /// `job_info_msg_t` (RESPONSE_JOB_INFO).
    pub struct JobInfoMsg {
        // A record is far larger than 64 bytes in every release.
        #[wire(min = 64)] let record_count: u32 = (|s| prim::count32(s.job_array.len())),
        pub last_update: i64,
        pub last_backfill: i64,
        #[wire(len = record_count)] pub job_array: Vec<JobInfo>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::job_desc::JobDescMsg;
    use crate::pack::{decode_exact, encode_to_vec};
    use std::net::Ipv4Addr;

    fn round_trip<T: Wire + std::fmt::Debug>(t: &T, v: ProtocolVersion) -> T {
        let b = encode_to_vec(t, v);
        let d: T = decode_exact(&b, v).unwrap_or_else(|e| panic!("{v:?}: {e} in {t:?}"));
        assert_eq!(encode_to_vec(&d, v), b, "{v:?}: re-encoding differs");
        d
    }

    fn job_resources() -> JobResources {
        let mut core = BitStr::new(8);
        core.set(3, true);
        JobResources {
            ncpus: 4,
            next_step_node_inx: 1,
            node_req: 1,
            nodes: Some("n[1-2]".into()),
            whole_node: 1,
            threads_per_core: 1,
            cr_type: 0x11,
            cpu_array_reps: vec![2],
            cpu_array_value: vec![2],
            cpus: vec![2, 2],
            cpus_used: vec![0, 0],
            memory_allocated: vec![100, 100],
            memory_used: vec![0, 0],
            sockets_per_node: vec![1],
            cores_per_socket: vec![4],
            sock_core_rep_count: vec![2],
            core_bitmap: Some(core.clone()),
            core_bitmap_used: Some(BitStr::new(8)),
            node_bitmap: Some(BitStr::new(2)),
            node_ranks: vec![0, 1],
        }
    }

    fn job(details: bool) -> JobInfo {
        JobInfo {
            step_id: StepId::job(17),
            account: Some("acct".into()),
            container: Some("c".into()),
            fed: Some(JobFedDetails {
                fed_origin_str: Some("fed".into()),
                fed_siblings_active: 1,
                ..Default::default()
            }),
            state_reason: 35,
            priority_array: vec![1, 2],
            job_resrcs: Some(job_resources()),
            gres_detail_str: vec![Some("gpu:1".into())],
            node_inx: Some(BitStr::new(4)),
            details: details.then(|| JobDetails {
                submit_time: 1_700_000_000,
                job_size_str: Some(BitStr::new(3)),
                command: Some("/bin/sleep".into()),
                cronspec: Some("* * * * *".into()),
                ..Default::default()
            }),
            nice: 0x8000_0000,
            num_cpus: 4,
            num_nodes: 2,
            multi_core: Some(MultiCoreData {
                plane_size: 0xfffe,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn small_messages_round_trip() {
        for v in ProtocolVersion::ALL {
            let s = round_trip(
                &SubmitResponseMsg {
                    step_id: StepId {
                        sluid: 0,
                        job_id: 5,
                        step_id: StepId::BATCH_SCRIPT,
                        step_het_comp: NO_VAL,
                    },
                    error_code: 0,
                    job_submit_user_msg: Some("hi".into()),
                },
                v,
            );
            assert_eq!(s.step_id.job_id, 5);
            assert_eq!(s.step_id.step_id, StepId::BATCH_SCRIPT);
            let a = round_trip(
                &JobAllocInfoMsg {
                    step_id: StepId::job(9),
                    req_cluster: Some("c".into()),
                },
                v,
            );
            assert_eq!(a.step_id.job_id, 9);
            let j = round_trip(
                &JobIdMsg {
                    step_id: StepId::job(9),
                    show_flags: 1,
                },
                v,
            );
            assert_eq!(j.step_id.job_id, 9);
            round_trip(
                &JobInfoRequestMsg {
                    last_update: 1,
                    show_flags: 2,
                    job_ids: Some(vec![1, 2, 3]),
                },
                v,
            );
            round_trip(&JobInfoRequestMsg::default(), v);
            round_trip(
                &JobStepKillMsg {
                    step_id: StepId::job(3),
                    sjob_id: Some("3".into()),
                    sibling: None,
                    signal: 9,
                    flags: 0,
                },
                v,
            );
        }
    }

    #[test]
    fn job_ids_none_is_no_val() {
        let b = encode_to_vec(&JobInfoRequestMsg::default(), ProtocolVersion::V24_11);
        assert_eq!(&b[10..], &[0xff, 0xff, 0xff, 0xfe]);
    }

    #[test]
    fn allocation_response_round_trips_with_arrays() {
        let m = ResourceAllocationResponseMsg {
            account: Some("a".into()),
            alias_list: Some("n1:10.0.0.1".into()),
            step_id: StepId::job(77),
            node_cnt: 2,
            node_addr: Some(vec![
                SlurmAddr::V4(Ipv4Addr::new(10, 0, 0, 1), 6818),
                SlurmAddr::V4(Ipv4Addr::new(10, 0, 0, 2), 6818),
            ]),
            node_list: Some("n[1-2]".into()),
            cpus_per_node: vec![4, 2],
            cpu_count_reps: vec![1, 1],
            tres_per_task: Some("cpu=1".into()),
            ..Default::default()
        };
        for v in ProtocolVersion::ALL {
            let d = round_trip(&m, v);
            assert_eq!(d.step_id.job_id, 77);
            assert_eq!(d.cpus_per_node, m.cpus_per_node);
            if v < ProtocolVersion::V25_05 {
                assert_eq!(d.node_addr, m.node_addr);
            }
        }
    }

    #[test]
    fn allocation_response_rejects_mismatched_counts() {
        let v = ProtocolVersion::V22_05;
        let m = ResourceAllocationResponseMsg {
            node_cnt: 1,
            node_addr: Some(vec![SlurmAddr::Unspec]),
            ..Default::default()
        };
        let mut b = encode_to_vec(&m, v);
        // node_cnt sits after account, alias, batch_host (3 NULL strings),
        // an empty env array, error_code, job_submit_user_msg, job_id.
        let at = 4 * 3 + 4 + 4 + 4 + 4;
        assert_eq!(&b[at..at + 4], &[0, 0, 0, 1]);
        b[at + 3] = 2;
        let e = decode_exact::<ResourceAllocationResponseMsg>(&b, v).unwrap_err();
        // Reported at the address count, after node_cnt and the presence flag.
        assert_eq!((e.offset, e.path()), (at + 5, "node_addr".to_string()));
        assert!(
            matches!(e.kind, DecodeErrorKind::BadValue { value: 1, .. }),
            "{e}"
        );
        // Inconsistent values are sent without the array rather than wrongly.
        let m = ResourceAllocationResponseMsg {
            node_cnt: 3,
            node_addr: Some(vec![SlurmAddr::Unspec]),
            cpus_per_node: vec![1, 2],
            cpu_count_reps: vec![1],
            ..Default::default()
        };
        let d = round_trip(&m, v);
        assert_eq!(d.node_addr, None);
        assert_eq!(d.cpus_per_node, vec![1]);
    }

    #[test]
    fn working_cluster_rec_is_a_typed_error() {
        let v = ProtocolVersion::V24_11;
        let mut b = encode_to_vec(&ResourceAllocationResponseMsg::default(), v);
        *b.last_mut().unwrap() = 1;
        let e = decode_exact::<ResourceAllocationResponseMsg>(&b, v).unwrap_err();
        assert!(matches!(e.kind, DecodeErrorKind::BadValue { .. }), "{e}");
    }

    #[test]
    fn job_info_round_trips_in_every_version() {
        for v in ProtocolVersion::ALL {
            for details in [true, false] {
                let m = JobInfoMsg {
                    last_update: 5,
                    last_backfill: 6,
                    job_array: vec![job(details), JobInfo::default()],
                };
                let d = round_trip(&m, v);
                let j = &d.job_array[0];
                assert_eq!(j.step_id.job_id, 17);
                assert_eq!(j.num_cpus, 4);
                assert_eq!(j.nice, 0x8000_0000);
                assert_eq!(j.fed, job(details).fed);
                assert_eq!(j.multi_core, job(details).multi_core);
                let jr = j.job_resrcs.as_ref().unwrap();
                assert_eq!(jr.cpus, vec![2, 2]);
                assert_eq!(
                    jr.node_bitmap.is_some(),
                    v >= ProtocolVersion::V24_05 && v < ProtocolVersion::V26_05
                );
                if details {
                    let dd = j.details.as_ref().unwrap();
                    assert_eq!(dd.command.as_deref(), Some("/bin/sleep"));
                } else if v < ProtocolVersion::V24_11 {
                    // Before 24.11 the details are always on the wire.
                    assert_eq!(j.details, Some(JobDetails::default()));
                } else {
                    assert_eq!(j.details, None);
                }
            }
        }
    }

    #[test]
    fn job_info_legacy_container_copies_must_agree() {
        let v = ProtocolVersion::V22_05;
        let b = encode_to_vec(&job(true), v);
        let needle = [0, 0, 0, 2, b'c', 0];
        let second = b
            .windows(6)
            .enumerate()
            .filter(|(_, w)| *w == needle)
            .map(|(i, _)| i)
            .nth(1)
            .unwrap();
        let mut bad = b.clone();
        bad[second + 4] = b'd';
        assert!(decode_exact::<JobInfo>(&bad, v).is_err());
        assert!(decode_exact::<JobInfo>(&b, v).is_ok());
    }

    #[test]
    fn job_resources_empty_and_bad_counts() {
        let v = ProtocolVersion::V24_11;
        assert_eq!(
            encode_to_vec(&None::<JobResources>, v),
            [0xff, 0xff, 0xff, 0xfe]
        );
        let mut b = encode_to_vec(&Some(job_resources()), v);
        b[3] = 3; // nhosts 3 but two cpus entries
        assert!(decode_exact::<Option<JobResources>>(&b, v).is_err());
    }

    #[test]
    fn multi_core_flag_is_strict() {
        let v = ProtocolVersion::V24_11;
        let mut f = Some(MultiCoreData::default());
        assert_eq!(multi_core::parse(&[0], v, &mut f), Ok((&[][..], ())));
        assert_eq!(f, None);
        let Err(nom::Err::Error(e)) = multi_core::parse(&[1], v, &mut f) else {
            panic!("flag 1 accepted")
        };
        assert_eq!(
            e.kind,
            DecodeErrorKind::BadValue {
                what: "multi_core_data flag",
                value: 1
            }
        );
        let m = Some(MultiCoreData {
            plane_size: 7,
            ..Default::default()
        });
        let mut b = Vec::new();
        multi_core::put(&mut b, v, &m);
        assert_eq!((b.len(), b[0], b[18]), (19, 0xff, 7));
        assert_eq!(multi_core::parse(&b, v, &mut f), Ok((&[][..], ())));
        assert_eq!(f, m);
    }

    /// The crate-wide invariant on arbitrary values, for this family.
    #[test]
    fn arbitrary_values_re_encode_identically() {
        fn check<T>(seed: &[u8])
        where
            T: Wire + std::fmt::Debug + for<'a> arbitrary::Arbitrary<'a>,
        {
            let mut u = arbitrary::Unstructured::new(seed);
            let Ok(t) = T::arbitrary(&mut u) else { return };
            for v in ProtocolVersion::ALL {
                round_trip(&t, v);
            }
        }
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for len in (0..64).map(|i| 64 + i * 97) {
            let seed: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            check::<JobDescMsg>(&seed);
            check::<SubmitResponseMsg>(&seed);
            check::<ResourceAllocationResponseMsg>(&seed);
            check::<JobAllocInfoMsg>(&seed);
            check::<JobIdMsg>(&seed);
            check::<JobInfoRequestMsg>(&seed);
            check::<JobInfoMsg>(&seed);
            check::<JobInfo>(&seed);
            check::<JobStepKillMsg>(&seed);
        }
    }
}

wire! {
    /// RESPONSE_HET_JOB_ALLOCATION: `u16 count` then that many allocation
    /// responses (`_pack_job_info_list_msg`, same layout 22.05..26.05). 22.05
    /// srun asks for it (REQUEST_HET_JOB_ALLOC_INFO) even for a plain job.
    pub struct HetJobAllocationMsg(#[wire(with = het_job_allocs)] pub Vec<ResourceAllocationResponseMsg>);
}

/// `count16`; each response is well over 16 bytes. A longer list is cut at the u16 count.
mod het_job_allocs {
    use super::{ResourceAllocationResponseMsg as Msg, V};
    use crate::codec::error::PResult;
    use crate::codec::{shape::count16, BufMut};

    pub fn parse<'a>(i: &'a [u8], v: V, f: &mut Vec<Msg>) -> PResult<'a, ()> {
        count16::parse_min(i, v, f, 16)
    }
    pub fn put<B: BufMut>(b: &mut B, v: V, f: &[Msg]) {
        count16::put(b, v, f)
    }
}

#[cfg(test)]
mod het_tests {
    use super::*;
    use crate::msg::test_util::round_trip_all;

    #[test]
    fn het_job_allocation_round_trips() {
        round_trip_all(&HetJobAllocationMsg::default());
        let one = ResourceAllocationResponseMsg {
            node_cnt: 1,
            node_list: Some("n1".into()),
            cpus_per_node: vec![4],
            cpu_count_reps: vec![1],
            ..Default::default()
        };
        round_trip_all(&HetJobAllocationMsg(vec![one.clone(), one]));
    }
}

#[cfg(test)]
mod requeue_tests {
    use super::*;
    use crate::msg::test_util::round_trip_all;
    use crate::pack::encode_to_vec;

    #[test]
    fn requeue_msg_layouts() {
        let m = RequeueMsg {
            step_id: StepId {
                sluid: 0,
                job_id: 7,
                step_id: NO_VAL,
                step_het_comp: NO_VAL,
            },
            job_id_str: Some("7".into()),
            flags: 0,
        };
        round_trip_all(&m);
        // Before 25.11: job id, then the string (length 2 incl. NUL), flags.
        let b = encode_to_vec(&m, ProtocolVersion::V24_11);
        assert_eq!(b, [0, 0, 0, 7, 0, 0, 0, 2, b'7', 0, 0, 0, 0, 0]);
    }
}

#[cfg(test)]
mod kill_jobs_tests {
    use super::*;
    use crate::msg::test_util::{round_trip_all, s};

    #[test]
    fn kill_jobs_round_trip() {
        round_trip_all(&KillJobsMsg {
            account: None,
            admin_comment: None,
            flags: 1,
            job_name: s("a1"),
            jobs_array: vec![s("12"), s("13_2")],
            partition: s("debug"),
            signal: 9,
            state: 0,
            user_id: 2001,
            user_name: s("alice"),
            ..Default::default()
        });
        round_trip_all(&KillJobsRespMsg(vec![KillJobsRespJob {
            error_code: 2017,
            error_msg: None,
            id: SelectedStep {
                step_id: StepId {
                    sluid: 0,
                    job_id: 12,
                    step_id: NO_VAL,
                    step_het_comp: NO_VAL,
                },
                array_task_id: NO_VAL,
                het_job_offset: NO_VAL,
                array_bitmap: None,
            },
            real_job_id: 12,
            sibling_name: None,
        }]));
    }

    #[test]
    fn job_array_resp_layout() {
        let m = JobArrayRespMsg(vec![JobArrayRespEntry {
            error_code: 2017,
            job_array_id: s("12_1-3"),
            err_msg: None,
        }]);
        // count, rc, "12_1-3\0" as a packstr (u32 length + bytes).
        let b = crate::pack::encode_to_vec(&m, ProtocolVersion::V22_05);
        assert_eq!(b.len(), 4 + 4 + 4 + 7);
        assert_eq!(&b[..8], &[0, 0, 0, 1, 0, 0, 0x07, 0xe1]);
        // 23.02+ adds err_msg (NULL: a zero length).
        let b = crate::pack::encode_to_vec(&m, ProtocolVersion::V24_11);
        assert_eq!(b.len(), 4 + 4 + 4 + 7 + 4);
        round_trip_all(&m);
    }

    #[test]
    fn kill_jobs_layout_24_11() {
        let m = KillJobsMsg {
            flags: 0x100,
            signal: 9,
            state: 4,
            user_id: 7,
            ..Default::default()
        };
        let b = crate::pack::encode_to_vec(&m, ProtocolVersion::V24_11);
        // account(NULL) flags name(NULL) jobs(0) part qos resv signal state uid
        // user_name wckey nodelist: 4+2+4+4+4+4+4+2+4+4+4+4+4 bytes.
        assert_eq!(b.len(), 48);
        assert_eq!(&b[4..6], &[1, 0]);
        // 25.11+ adds admin_comment after account.
        let b26 = crate::pack::encode_to_vec(&m, ProtocolVersion::V26_05);
        assert_eq!(b26.len(), 52);
    }
}
