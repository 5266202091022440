//! Task and batch launch (ctld/srun -> slurmd) and their replies.

use crate::error::{DecodeError, DecodeErrorKind, Result};
use crate::pack::{Reader, Wire, Writer, NO_VAL};
use crate::types::{SlurmAddr, StepId};
use crate::wire_struct;
use crate::ProtocolVersion;

use super::cred::VersionedCred;

type V = ProtocolVersion;

/// `u16 n` then n × u16 (resp_port, io_port).
pub(crate) fn decode_u16_list(r: &mut Reader<'_>) -> Result<Vec<u16>> {
    let at = r.position();
    let n = r.u16()?;
    let n = r.check_count(u32::from(n), 2, at)?;
    (0..n).map(|_| r.u16()).collect()
}

pub(crate) fn encode_u16_list(w: &mut Writer, l: &[u16]) {
    let n = l.len().min(usize::from(u16::MAX));
    w.u16(n as u16);
    l.iter().take(n).for_each(|&x| w.u16(x));
}

fn bad(what: &'static str, value: u64, at: usize) -> DecodeError {
    DecodeError::new(DecodeErrorKind::BadValue { what, value }, at)
}

wire_struct! {
    /// One `job_option_info` (SPANK plugin option).
    pub struct JobOption {
        pub r#type: u32,
        pub option: Option<String>,
        pub optarg: Option<String>,
    }
}

/// `job_options_pack`: the tag `"job_options"`, then a u32-counted list.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct JobOptions(pub Vec<JobOption>);

const JOB_OPTIONS_TAG: &str = "job_options";

impl Wire for JobOptions {
    fn decode(r: &mut Reader<'_>, v: V) -> Result<Self> {
        let at = r.position();
        if r.str()?.as_deref() != Some(JOB_OPTIONS_TAG) {
            return Err(bad("job_options tag", 0, at));
        }
        let n = r.count(12)?;
        let mut out = Vec::with_capacity(n.min(1024));
        for _ in 0..n {
            out.push(JobOption::decode(r, v)?);
        }
        Ok(Self(out))
    }
    fn encode(&self, w: &mut Writer, v: V) {
        w.str(Some(JOB_OPTIONS_TAG));
        w.count(self.0.len());
        for o in &self.0 {
            o.encode(w, v);
        }
    }
}

/// `launch_tasks_request_msg_t`: REQUEST_LAUNCH_TASKS 6001.
///
/// The stepmgr form (`has_job_ptr` = 1, followed by a whole job record) is
/// rejected on decode and never produced.
///
/// UNVERIFIED: 23.11/24.05 assume no switch plugin is configured (then
/// upstream packs no switch info at all).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct LaunchTasksRequestMsg {
    pub step_id: StepId,
    /// Before 23.11.
    pub uid: u32,
    /// Before 23.11.
    pub gid: u32,
    /// Before 23.11.
    pub user_name: Option<String>,
    pub gids: Vec<u32>,
    pub het_job_node_offset: u32,
    pub het_job_id: u32,
    /// `het_job_nnodes` arrays of task ids; None = NO_VAL (not a het job).
    pub het_job_tids: Option<Vec<Vec<u32>>>,
    /// None = NO_VAL.
    pub het_job_tid_offsets: Option<Vec<u32>>,
    pub het_job_offset: u32,
    pub het_job_step_cnt: u32,
    /// 25.05+, sent only when het_job_offset < NO_VAL and het_job_step_cnt > 0.
    pub het_job_step_task_cnts: Vec<u32>,
    pub het_job_task_offset: u32,
    pub het_job_node_list: Option<String>,
    pub mpi_plugin_id: u32,
    pub ntasks: u32,
    pub ntasks_per_board: u16,
    pub ntasks_per_core: u16,
    pub ntasks_per_tres: u16,
    pub ntasks_per_socket: u16,
    pub job_mem_lim: u64,
    pub step_mem_lim: u64,
    pub cpus_per_task: u16,
    /// 23.11+.
    pub cpt_compact_array: Vec<u16>,
    /// 23.11+.
    pub cpt_compact_reps: Vec<u32>,
    pub tres_per_task: Option<String>,
    pub threads_per_core: u16,
    pub task_dist: u32,
    pub node_cpus: u16,
    pub job_core_spec: u16,
    pub accel_bind_type: u16,
    pub cred: VersionedCred,
    /// Per node (`nnodes` on the wire is its length): the global task ids
    /// (`tasks_to_launch[i]` is each one's length).
    pub global_task_ids: Vec<Vec<u32>>,
    pub resp_port: Vec<u16>,
    pub orig_addr: SlurmAddr,
    pub env: Vec<Option<String>>,
    pub spank_job_env: Vec<Option<String>>,
    pub container: Option<String>,
    pub cwd: Option<String>,
    pub cpu_bind_type: u16,
    pub cpu_bind: Option<String>,
    pub mem_bind_type: u16,
    pub mem_bind: Option<String>,
    pub argv: Vec<Option<String>>,
    pub flags: u32,
    pub ofname: Option<String>,
    pub efname: Option<String>,
    pub ifname: Option<String>,
    pub io_port: Vec<u16>,
    /// 25.05+.
    pub alloc_tls_cert: Option<String>,
    pub profile: u32,
    pub task_prolog: Option<String>,
    pub task_epilog: Option<String>,
    pub slurmd_debug: u16,
    /// Before 23.11: the switch jobinfo plugin id (switch/none: nothing more).
    pub switch_plugin_id: u32,
    pub options: JobOptions,
    /// Before 25.05 (23.11..24.11 upstream always sends NULL).
    pub alias_list: Option<String>,
    pub complete_nodelist: Option<String>,
    pub open_mode: u8,
    pub acctg_freq: Option<String>,
    pub cpu_freq_min: u32,
    pub cpu_freq_max: u32,
    pub cpu_freq_gov: u32,
    /// 22.05 only: select jobinfo plugin id (cons_tres/linear send nothing more).
    pub select_plugin_id: u32,
    pub tres_bind: Option<String>,
    pub tres_freq: Option<String>,
    pub x11: u16,
    pub x11_alloc_host: Option<String>,
    pub x11_alloc_port: u16,
    pub x11_magic_cookie: Option<String>,
    pub x11_target: Option<String>,
    pub x11_target_port: u16,
    /// 24.05+.
    pub stepmgr: Option<String>,
    /// 24.11+.
    pub oom_kill_step: bool,
}

impl LaunchTasksRequestMsg {
    fn sends_step_task_cnts(&self, v: V) -> bool {
        v >= V::V25_05 && self.het_job_offset < NO_VAL && self.het_job_step_cnt > 0
    }
}

impl Wire for LaunchTasksRequestMsg {
    fn decode(r: &mut Reader<'_>, v: V) -> Result<Self> {
        let mut m = Self {
            step_id: field!(StepId::decode(r, v), "step_id"),
            ..Default::default()
        };
        if v < V::V23_11 {
            m.uid = field!(r.u32(), "uid");
            m.gid = field!(r.u32(), "gid");
            m.user_name = field!(r.str(), "user_name");
        }
        m.gids = field!(Vec::<u32>::decode(r, v), "gids");
        m.het_job_node_offset = field!(r.u32(), "het_job_node_offset");
        m.het_job_id = field!(r.u32(), "het_job_id");
        m.het_job_tids = field!(Option::<Vec<Vec<u32>>>::decode(r, v), "het_job_tids");
        m.het_job_tid_offsets = field!(Option::<Vec<u32>>::decode(r, v), "het_job_tid_offsets");
        m.het_job_offset = field!(r.u32(), "het_job_offset");
        m.het_job_step_cnt = field!(r.u32(), "het_job_step_cnt");
        if m.sends_step_task_cnts(v) {
            m.het_job_step_task_cnts = field!(Vec::<u32>::decode(r, v), "het_job_step_task_cnts");
        }
        m.het_job_task_offset = field!(r.u32(), "het_job_task_offset");
        m.het_job_node_list = field!(r.str(), "het_job_node_list");
        m.mpi_plugin_id = field!(r.u32(), "mpi_plugin_id");
        m.ntasks = field!(r.u32(), "ntasks");
        m.ntasks_per_board = field!(r.u16(), "ntasks_per_board");
        m.ntasks_per_core = field!(r.u16(), "ntasks_per_core");
        m.ntasks_per_tres = field!(r.u16(), "ntasks_per_tres");
        m.ntasks_per_socket = field!(r.u16(), "ntasks_per_socket");
        m.job_mem_lim = field!(r.u64(), "job_mem_lim");
        m.step_mem_lim = field!(r.u64(), "step_mem_lim");
        let nnodes_at = r.position();
        let nnodes = field!(r.u32(), "nnodes");
        m.cpus_per_task = field!(r.u16(), "cpus_per_task");
        if v >= V::V23_11 {
            m.cpt_compact_array = field!(Vec::<u16>::decode(r, v), "cpt_compact_array");
            m.cpt_compact_reps = field!(Vec::<u32>::decode(r, v), "cpt_compact_reps");
        }
        m.tres_per_task = field!(r.str(), "tres_per_task");
        m.threads_per_core = field!(r.u16(), "threads_per_core");
        m.task_dist = field!(r.u32(), "task_dist");
        m.node_cpus = field!(r.u16(), "node_cpus");
        m.job_core_spec = field!(r.u16(), "job_core_spec");
        m.accel_bind_type = field!(r.u16(), "accel_bind_type");
        m.cred = field!(VersionedCred::decode(r, v), "cred");
        // Each node is at least a u16 and a u32 count.
        let nnodes = field!(r.check_count(nnodes, 6, nnodes_at), "nnodes");
        let mut g = Vec::with_capacity(nnodes.min(1024));
        for _ in 0..nnodes {
            let at = r.position();
            let tasks = field!(r.u16(), "tasks_to_launch");
            let ids = field!(Vec::<u32>::decode(r, v), "global_task_ids");
            if ids.len() != usize::from(tasks) {
                return Err(bad("global_task_ids length", ids.len() as u64, at));
            }
            g.push(ids);
        }
        m.global_task_ids = g;
        m.resp_port = field!(decode_u16_list(r), "resp_port");
        m.orig_addr = field!(SlurmAddr::decode(r, v), "orig_addr");
        m.env = field!(Vec::<Option<String>>::decode(r, v), "env");
        m.spank_job_env = field!(Vec::<Option<String>>::decode(r, v), "spank_job_env");
        m.container = field!(r.str(), "container");
        m.cwd = field!(r.str(), "cwd");
        m.cpu_bind_type = field!(r.u16(), "cpu_bind_type");
        m.cpu_bind = field!(r.str(), "cpu_bind");
        m.mem_bind_type = field!(r.u16(), "mem_bind_type");
        m.mem_bind = field!(r.str(), "mem_bind");
        m.argv = field!(Vec::<Option<String>>::decode(r, v), "argv");
        m.flags = field!(r.u32(), "flags");
        m.ofname = field!(r.str(), "ofname");
        m.efname = field!(r.str(), "efname");
        m.ifname = field!(r.str(), "ifname");
        m.io_port = field!(decode_u16_list(r), "io_port");
        if v >= V::V25_05 {
            m.alloc_tls_cert = field!(r.str(), "alloc_tls_cert");
        }
        m.profile = field!(r.u32(), "profile");
        m.task_prolog = field!(r.str(), "task_prolog");
        m.task_epilog = field!(r.str(), "task_epilog");
        m.slurmd_debug = field!(r.u16(), "slurmd_debug");
        if v < V::V23_11 {
            m.switch_plugin_id = field!(r.u32(), "switch_plugin_id");
        }
        m.options = field!(JobOptions::decode(r, v), "options");
        if v < V::V25_05 {
            m.alias_list = field!(r.str(), "alias_list");
        }
        m.complete_nodelist = field!(r.str(), "complete_nodelist");
        m.open_mode = field!(r.u8(), "open_mode");
        m.acctg_freq = field!(r.str(), "acctg_freq");
        m.cpu_freq_min = field!(r.u32(), "cpu_freq_min");
        m.cpu_freq_max = field!(r.u32(), "cpu_freq_max");
        m.cpu_freq_gov = field!(r.u32(), "cpu_freq_gov");
        if v < V::V23_02 {
            m.select_plugin_id = field!(r.u32(), "select_plugin_id");
        }
        m.tres_bind = field!(r.str(), "tres_bind");
        m.tres_freq = field!(r.str(), "tres_freq");
        m.x11 = field!(r.u16(), "x11");
        m.x11_alloc_host = field!(r.str(), "x11_alloc_host");
        m.x11_alloc_port = field!(r.u16(), "x11_alloc_port");
        m.x11_magic_cookie = field!(r.str(), "x11_magic_cookie");
        m.x11_target = field!(r.str(), "x11_target");
        m.x11_target_port = field!(r.u16(), "x11_target_port");
        if v >= V::V24_05 {
            m.stepmgr = field!(r.str(), "stepmgr");
            if v >= V::V24_11 {
                m.oom_kill_step = field!(r.bool(), "oom_kill_step");
            }
            let at = r.position();
            if field!(r.bool(), "has_job_ptr") {
                return Err(
                    bad("has_job_ptr (stepmgr job record is not supported)", 1, at)
                        .within("has_job_ptr"),
                );
            }
        }
        Ok(m)
    }

    fn encode(&self, w: &mut Writer, v: V) {
        self.step_id.encode(w, v);
        if v < V::V23_11 {
            w.u32(self.uid);
            w.u32(self.gid);
            w.str(self.user_name.as_deref());
        }
        self.gids.encode(w, v);
        w.u32(self.het_job_node_offset);
        w.u32(self.het_job_id);
        self.het_job_tids.encode(w, v);
        self.het_job_tid_offsets.encode(w, v);
        w.u32(self.het_job_offset);
        w.u32(self.het_job_step_cnt);
        if self.sends_step_task_cnts(v) {
            self.het_job_step_task_cnts.encode(w, v);
        }
        w.u32(self.het_job_task_offset);
        w.str(self.het_job_node_list.as_deref());
        w.u32(self.mpi_plugin_id);
        w.u32(self.ntasks);
        w.u16(self.ntasks_per_board);
        w.u16(self.ntasks_per_core);
        w.u16(self.ntasks_per_tres);
        w.u16(self.ntasks_per_socket);
        w.u64(self.job_mem_lim);
        w.u64(self.step_mem_lim);
        w.count(self.global_task_ids.len());
        w.u16(self.cpus_per_task);
        if v >= V::V23_11 {
            self.cpt_compact_array.encode(w, v);
            self.cpt_compact_reps.encode(w, v);
        }
        w.str(self.tres_per_task.as_deref());
        w.u16(self.threads_per_core);
        w.u32(self.task_dist);
        w.u16(self.node_cpus);
        w.u16(self.job_core_spec);
        w.u16(self.accel_bind_type);
        self.cred.encode(w, v);
        for ids in &self.global_task_ids {
            let ids = ids
                .get(..ids.len().min(usize::from(u16::MAX)))
                .unwrap_or_default();
            w.u16(ids.len() as u16);
            w.count(ids.len());
            ids.iter().for_each(|&x| w.u32(x));
        }
        encode_u16_list(w, &self.resp_port);
        self.orig_addr.encode(w, v);
        self.env.encode(w, v);
        self.spank_job_env.encode(w, v);
        w.str(self.container.as_deref());
        w.str(self.cwd.as_deref());
        w.u16(self.cpu_bind_type);
        w.str(self.cpu_bind.as_deref());
        w.u16(self.mem_bind_type);
        w.str(self.mem_bind.as_deref());
        self.argv.encode(w, v);
        w.u32(self.flags);
        w.str(self.ofname.as_deref());
        w.str(self.efname.as_deref());
        w.str(self.ifname.as_deref());
        encode_u16_list(w, &self.io_port);
        if v >= V::V25_05 {
            w.str(self.alloc_tls_cert.as_deref());
        }
        w.u32(self.profile);
        w.str(self.task_prolog.as_deref());
        w.str(self.task_epilog.as_deref());
        w.u16(self.slurmd_debug);
        if v < V::V23_11 {
            w.u32(self.switch_plugin_id);
        }
        self.options.encode(w, v);
        if v < V::V25_05 {
            w.str(self.alias_list.as_deref());
        }
        w.str(self.complete_nodelist.as_deref());
        w.u8(self.open_mode);
        w.str(self.acctg_freq.as_deref());
        w.u32(self.cpu_freq_min);
        w.u32(self.cpu_freq_max);
        w.u32(self.cpu_freq_gov);
        if v < V::V23_02 {
            w.u32(self.select_plugin_id);
        }
        w.str(self.tres_bind.as_deref());
        w.str(self.tres_freq.as_deref());
        w.u16(self.x11);
        w.str(self.x11_alloc_host.as_deref());
        w.u16(self.x11_alloc_port);
        w.str(self.x11_magic_cookie.as_deref());
        w.str(self.x11_target.as_deref());
        w.u16(self.x11_target_port);
        if v >= V::V24_05 {
            w.str(self.stepmgr.as_deref());
            if v >= V::V24_11 {
                w.bool(self.oom_kill_step);
            }
            w.bool(false);
        }
    }
}

wire_struct! {
    /// `launch_tasks_response_msg_t`: RESPONSE_LAUNCH_TASKS 6002.
    ///
    /// `count_of_pids` is sent explicitly and then again as the count of each
    /// array; upstream does not cross-check them, so all are kept.
    pub struct LaunchTasksResponseMsg {
        pub step_id: StepId,
        pub return_code: u32,
        pub node_name: Option<String>,
        pub count_of_pids: u32,
        pub local_pids: Vec<u32>,
        pub task_ids: Vec<u32>,
    }
}

wire_struct! {
    /// `task_exit_msg_t`: MESSAGE_TASK_EXIT 6003. `num_tasks` is sent apart
    /// from the array's own count and kept verbatim.
    pub struct TaskExitMsg {
        pub return_code: u32,
        pub num_tasks: u32,
        pub task_id_list: Vec<u32>,
        pub step_id: StepId,
    }
}

/// `batch_job_launch_msg_t`: REQUEST_BATCH_JOB_LAUNCH 4005.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct BatchJobLaunchMsg {
    /// Before 25.11 (then slurmd takes it from the credential's step id).
    pub job_id: u32,
    pub het_job_id: u32,
    /// Before 23.11.
    pub uid: u32,
    /// Before 23.11.
    pub gid: u32,
    /// Before 23.11.
    pub user_name: Option<String>,
    pub gids: Vec<u32>,
    pub partition: Option<String>,
    pub ntasks: u32,
    pub pn_min_memory: u64,
    pub open_mode: u8,
    pub overcommit: u8,
    pub array_job_id: u32,
    pub array_task_id: u32,
    pub acctg_freq: Option<String>,
    pub container: Option<String>,
    pub cpu_bind_type: u16,
    pub cpus_per_task: u16,
    pub restart_cnt: u16,
    pub job_core_spec: u16,
    /// `num_cpu_groups` runs of (cpus_per_node, cpu_count_reps).
    pub cpu_groups: Vec<super::cred::CpuArrayRep>,
    /// Before 24.11 (23.11/24.05 upstream always sends NULL).
    pub alias_list: Option<String>,
    pub cpu_bind: Option<String>,
    pub nodes: Option<String>,
    pub script: Option<String>,
    pub work_dir: Option<String>,
    pub std_err: Option<String>,
    pub std_in: Option<String>,
    pub std_out: Option<String>,
    /// Preceded on the wire by a separate `u32 argc` equal to its length.
    pub argv: Vec<Option<String>>,
    pub spank_job_env: Vec<Option<String>>,
    /// Preceded on the wire by a separate `u32 envc` equal to its length.
    pub environment: Vec<Option<String>>,
    pub job_mem: u64,
    pub cred: VersionedCred,
    /// 22.05 only: select jobinfo plugin id.
    pub select_plugin_id: u32,
    pub account: Option<String>,
    pub qos: Option<String>,
    pub resv_name: Option<String>,
    pub profile: u32,
    pub tres_bind: Option<String>,
    pub tres_freq: Option<String>,
    /// 25.05+.
    pub tres_per_task: Option<String>,
    /// 24.11+.
    pub cpu_freq_min: u32,
    /// 24.11+.
    pub cpu_freq_max: u32,
    /// 24.11+.
    pub cpu_freq_gov: u32,
    /// 24.11+.
    pub oom_kill_step: bool,
}

fn decode_counted_strs(r: &mut Reader<'_>, v: V) -> Result<Vec<Option<String>>> {
    let at = r.position();
    let n = r.u32()?;
    let a = Vec::<Option<String>>::decode(r, v)?;
    if a.len() as u64 != u64::from(n) {
        return Err(bad("string array count", u64::from(n), at));
    }
    Ok(a)
}

fn encode_counted_strs(w: &mut Writer, a: &[Option<String>]) {
    w.count(a.len());
    w.count(a.len());
    a.iter().for_each(|s| w.str(s.as_deref()));
}

impl Wire for BatchJobLaunchMsg {
    fn decode(r: &mut Reader<'_>, v: V) -> Result<Self> {
        let mut m = Self::default();
        if v < V::V25_11 {
            m.job_id = field!(r.u32(), "job_id");
        }
        m.het_job_id = field!(r.u32(), "het_job_id");
        if v < V::V23_11 {
            m.uid = field!(r.u32(), "uid");
            m.gid = field!(r.u32(), "gid");
            m.user_name = field!(r.str(), "user_name");
        }
        m.gids = field!(Vec::<u32>::decode(r, v), "gids");
        m.partition = field!(r.str(), "partition");
        m.ntasks = field!(r.u32(), "ntasks");
        m.pn_min_memory = field!(r.u64(), "pn_min_memory");
        m.open_mode = field!(r.u8(), "open_mode");
        m.overcommit = field!(r.u8(), "overcommit");
        m.array_job_id = field!(r.u32(), "array_job_id");
        m.array_task_id = field!(r.u32(), "array_task_id");
        m.acctg_freq = field!(r.str(), "acctg_freq");
        m.container = field!(r.str(), "container");
        m.cpu_bind_type = field!(r.u16(), "cpu_bind_type");
        m.cpus_per_task = field!(r.u16(), "cpus_per_task");
        m.restart_cnt = field!(r.u16(), "restart_cnt");
        m.job_core_spec = field!(r.u16(), "job_core_spec");
        let n = field!(r.u32(), "num_cpu_groups") as usize;
        if n > 0 {
            let at = r.position();
            let cpus = field!(Vec::<u16>::decode(r, v), "cpus_per_node");
            let reps = field!(Vec::<u32>::decode(r, v), "cpu_count_reps");
            if cpus.len() != n || reps.len() != n {
                return Err(bad("cpu group array length", cpus.len() as u64, at));
            }
            m.cpu_groups = cpus
                .into_iter()
                .zip(reps)
                .map(|(cpus, reps)| super::cred::CpuArrayRep { cpus, reps })
                .collect();
        }
        if v < V::V24_11 {
            m.alias_list = field!(r.str(), "alias_list");
        }
        m.cpu_bind = field!(r.str(), "cpu_bind");
        m.nodes = field!(r.str(), "nodes");
        m.script = field!(r.str(), "script");
        m.work_dir = field!(r.str(), "work_dir");
        m.std_err = field!(r.str(), "std_err");
        m.std_in = field!(r.str(), "std_in");
        m.std_out = field!(r.str(), "std_out");
        m.argv = field!(decode_counted_strs(r, v), "argv");
        m.spank_job_env = field!(Vec::<Option<String>>::decode(r, v), "spank_job_env");
        m.environment = field!(decode_counted_strs(r, v), "environment");
        m.job_mem = field!(r.u64(), "job_mem");
        m.cred = field!(VersionedCred::decode(r, v), "cred");
        if v < V::V23_02 {
            m.select_plugin_id = field!(r.u32(), "select_plugin_id");
        }
        m.account = field!(r.str(), "account");
        m.qos = field!(r.str(), "qos");
        m.resv_name = field!(r.str(), "resv_name");
        m.profile = field!(r.u32(), "profile");
        m.tres_bind = field!(r.str(), "tres_bind");
        m.tres_freq = field!(r.str(), "tres_freq");
        if v >= V::V25_05 {
            m.tres_per_task = field!(r.str(), "tres_per_task");
        }
        if v >= V::V24_11 {
            m.cpu_freq_min = field!(r.u32(), "cpu_freq_min");
            m.cpu_freq_max = field!(r.u32(), "cpu_freq_max");
            m.cpu_freq_gov = field!(r.u32(), "cpu_freq_gov");
            m.oom_kill_step = field!(r.bool(), "oom_kill_step");
        }
        Ok(m)
    }

    fn encode(&self, w: &mut Writer, v: V) {
        if v < V::V25_11 {
            w.u32(self.job_id);
        }
        w.u32(self.het_job_id);
        if v < V::V23_11 {
            w.u32(self.uid);
            w.u32(self.gid);
            w.str(self.user_name.as_deref());
        }
        self.gids.encode(w, v);
        w.str(self.partition.as_deref());
        w.u32(self.ntasks);
        w.u64(self.pn_min_memory);
        w.u8(self.open_mode);
        w.u8(self.overcommit);
        w.u32(self.array_job_id);
        w.u32(self.array_task_id);
        w.str(self.acctg_freq.as_deref());
        w.str(self.container.as_deref());
        w.u16(self.cpu_bind_type);
        w.u16(self.cpus_per_task);
        w.u16(self.restart_cnt);
        w.u16(self.job_core_spec);
        w.count(self.cpu_groups.len());
        if !self.cpu_groups.is_empty() {
            w.count(self.cpu_groups.len());
            self.cpu_groups.iter().for_each(|g| w.u16(g.cpus));
            w.count(self.cpu_groups.len());
            self.cpu_groups.iter().for_each(|g| w.u32(g.reps));
        }
        if v < V::V24_11 {
            w.str(self.alias_list.as_deref());
        }
        w.str(self.cpu_bind.as_deref());
        w.str(self.nodes.as_deref());
        w.str(self.script.as_deref());
        w.str(self.work_dir.as_deref());
        w.str(self.std_err.as_deref());
        w.str(self.std_in.as_deref());
        w.str(self.std_out.as_deref());
        encode_counted_strs(w, &self.argv);
        self.spank_job_env.encode(w, v);
        encode_counted_strs(w, &self.environment);
        w.u64(self.job_mem);
        self.cred.encode(w, v);
        if v < V::V23_02 {
            w.u32(self.select_plugin_id);
        }
        w.str(self.account.as_deref());
        w.str(self.qos.as_deref());
        w.str(self.resv_name.as_deref());
        w.u32(self.profile);
        w.str(self.tres_bind.as_deref());
        w.str(self.tres_freq.as_deref());
        if v >= V::V25_05 {
            w.str(self.tres_per_task.as_deref());
        }
        if v >= V::V24_11 {
            w.u32(self.cpu_freq_min);
            w.u32(self.cpu_freq_max);
            w.u32(self.cpu_freq_gov);
            w.bool(self.oom_kill_step);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::cred::tests::sample_cred;
    use crate::msg::cred::CpuArrayRep;
    use crate::msg::{gres, jobacct, kill, step};
    use crate::pack::{decode_exact, encode_to_vec};

    /// decode(encode(x)) re-encodes to the same bytes, for every version.
    fn stable<T: Wire + std::fmt::Debug>(x: &T) {
        for v in V::ALL {
            let b = encode_to_vec(x, v);
            let d = decode_exact::<T>(&b, v).unwrap_or_else(|e| panic!("{v}: {e} for {x:?}"));
            assert_eq!(encode_to_vec(&d, v), b, "{v}");
        }
    }

    fn vc() -> VersionedCred {
        VersionedCred {
            cred_version: 0,
            cred: Box::new(sample_cred()),
        }
    }

    #[test]
    fn launch_tasks_roundtrip() {
        let m = LaunchTasksRequestMsg {
            step_id: StepId::job(9),
            gids: vec![1, 2],
            het_job_tids: Some(vec![vec![0, 1], vec![2]]),
            het_job_tid_offsets: Some(vec![0, 2]),
            het_job_offset: 1,
            het_job_step_cnt: 2,
            het_job_step_task_cnts: vec![2, 1],
            cpt_compact_array: vec![1],
            cpt_compact_reps: vec![2],
            cred: vc(),
            global_task_ids: vec![vec![0, 1], vec![2]],
            resp_port: vec![4000, 4001],
            orig_addr: SlurmAddr::V4([127, 0, 0, 1].into(), 5000),
            env: vec![Some("A=b".into())],
            argv: vec![Some("hostname".into())],
            io_port: vec![4002],
            options: JobOptions(vec![JobOption {
                r#type: 1,
                option: Some("x".into()),
                optarg: None,
            }]),
            oom_kill_step: true,
            stepmgr: Some("n1".into()),
            ..Default::default()
        };
        for v in V::ALL {
            let b = encode_to_vec(&m, v);
            let d = decode_exact::<LaunchTasksRequestMsg>(&b, v).unwrap();
            assert_eq!(d.global_task_ids, m.global_task_ids);
            assert_eq!(
                d.het_job_step_task_cnts.is_empty(),
                v < V::V25_05,
                "step task counts only from 25.05"
            );
            assert_eq!(encode_to_vec(&d, v), b);
        }
        // Non-het job: NO_VAL counts and no step task counts.
        stable(&LaunchTasksRequestMsg {
            het_job_offset: crate::pack::NO_VAL,
            het_job_step_cnt: 3,
            cred: vc(),
            ..Default::default()
        });
    }

    #[test]
    fn stepmgr_job_record_is_rejected() {
        let m = LaunchTasksRequestMsg {
            cred: vc(),
            ..Default::default()
        };
        let mut b = encode_to_vec(&m, V::V24_11);
        *b.last_mut().unwrap() = 1;
        assert!(decode_exact::<LaunchTasksRequestMsg>(&b, V::V24_11).is_err());
    }

    #[test]
    fn batch_launch_roundtrip() {
        let m = BatchJobLaunchMsg {
            job_id: 4,
            gids: vec![5],
            cpu_groups: vec![CpuArrayRep { cpus: 2, reps: 1 }],
            argv: vec![Some("/tmp/x.sh".into())],
            environment: vec![Some("A=1".into()), None],
            script: Some("#!/bin/sh\n".into()),
            cred: vc(),
            tres_per_task: Some("cpu=1".into()),
            oom_kill_step: true,
            ..Default::default()
        };
        for v in V::ALL {
            let b = encode_to_vec(&m, v);
            let d = decode_exact::<BatchJobLaunchMsg>(&b, v).unwrap();
            assert_eq!(d.environment, m.environment);
            assert_eq!(d.job_id, if v >= V::V25_11 { 0 } else { 4 });
            assert_eq!(encode_to_vec(&d, v), b);
        }
    }

    #[test]
    fn small_bodies_roundtrip() {
        stable(&LaunchTasksResponseMsg {
            step_id: StepId::job(3),
            count_of_pids: 2,
            local_pids: vec![10, 11],
            task_ids: vec![0, 1],
            node_name: Some("n1".into()),
            ..Default::default()
        });
        stable(&TaskExitMsg {
            num_tasks: 1,
            task_id_list: vec![0],
            ..Default::default()
        });
        stable(&step::StepCompleteMsg {
            jobacct: jobacct::JobAcctInfo(Some(Default::default())),
            send_to_stepmgr: true,
            ..Default::default()
        });
        stable(&step::CompleteJobAllocationMsg {
            step_id: step::JobIdOrStepId(StepId::job(7)),
            job_rc: 1,
        });
        stable(&step::CompleteBatchScriptMsg {
            step_id: StepId::job(7),
            node_name: Some("n1".into()),
            ..Default::default()
        });
        stable(&step::SrunJobCompleteMsg::default());
        stable(&kill::EpilogCompleteMsg {
            step_id: step::JobIdOrStepId(StepId::job(7)),
            return_code: 0,
            node_name: Some("n1".into()),
        });
    }

    #[test]
    fn step_create_roundtrip() {
        stable(&step::JobStepCreateRequestMsg {
            step_id: StepId::job(3),
            name: Some("hostname".into()),
            launch_params: step::LaunchParamsOpt(Some(step::SlurmStepLaunchParams {
                argv: vec![Some("a".into())],
                cpt_compact_array: vec![1],
                ..Default::default()
            })),
            ..Default::default()
        });
        let resp = step::JobStepCreateResponseMsg {
            step_id: StepId {
                sluid: 0,
                job_id: 3,
                step_id: 0,
                step_het_comp: crate::pack::NO_VAL,
            },
            step_layout: Some(step::SlurmStepLayout {
                node_list: Some("n[1-2]".into()),
                tids: vec![vec![0], vec![1]],
                task_cnt: 2,
                cpt_compact_array: vec![1],
                cpt_compact_reps: vec![2],
                ..Default::default()
            }),
            cred: Some(Box::new(sample_cred())),
            ..Default::default()
        };
        stable(&resp);
        stable(&step::JobStepCreateResponseMsg {
            cred: None,
            step_layout: None,
            ..resp
        });
    }

    #[test]
    fn kill_job_roundtrip() {
        let mut bm = crate::types::BitStr::new(2);
        bm.set(0, true);
        stable(&kill::KillJobMsg {
            cred: kill::OptCred(Some(Box::new(sample_cred()))),
            job_gres_prep: gres::GresPrepList(Some(vec![gres::GresPrep {
                plugin_id: 1,
                node_cnt: 1,
                gres_cnt_node_alloc: Some(vec![1]),
                gres_bit_alloc: Some(vec![Some(bm)]),
            }])),
            spank_job_env: vec![Some("X=1".into())],
            nodes: Some("n1".into()),
            ..Default::default()
        });
        stable(&kill::KillJobMsg::default());
    }

    /// The arbitrary-value invariant for every body in this family.
    #[test]
    fn arbitrary_values_reencode_identically() {
        fn check<T: Wire + std::fmt::Debug + for<'a> arbitrary::Arbitrary<'a>>(seed: &[u8]) {
            let mut u = arbitrary::Unstructured::new(seed);
            if let Ok(x) = T::arbitrary(&mut u) {
                stable(&x);
            }
        }
        for i in 0..64u32 {
            let seed: Vec<u8> = (0..4096u32)
                .map(|j| (j.wrapping_mul(2654435761).wrapping_add(i * 7919) >> 13) as u8)
                .collect();
            check::<crate::msg::cred::JobCred>(&seed);
            check::<BatchJobLaunchMsg>(&seed);
            check::<LaunchTasksRequestMsg>(&seed);
            check::<LaunchTasksResponseMsg>(&seed);
            check::<TaskExitMsg>(&seed);
            check::<step::JobStepCreateRequestMsg>(&seed);
            check::<step::JobStepCreateResponseMsg>(&seed);
            check::<step::StepCompleteMsg>(&seed);
            check::<step::CompleteJobAllocationMsg>(&seed);
            check::<step::CompleteBatchScriptMsg>(&seed);
            check::<kill::KillJobMsg>(&seed);
            check::<kill::EpilogCompleteMsg>(&seed);
        }
    }
}
