//! Task and batch launch (ctld/srun -> slurmd) and their replies.

use crate::codec::error::{named, PResult, WireError};
use crate::codec::{prim, BufMut};
use crate::error::DecodeErrorKind;
use crate::pack::{Wire, NO_VAL};
use crate::types::{SlurmAddr, StepId};
use crate::wire;
use crate::ProtocolVersion;

use super::cred::{self, CpuArrayRep, VersionedCred};

type V = ProtocolVersion;

wire! {
    /// One `job_option_info` (SPANK plugin option).
    pub struct JobOption {
        pub r#type: u32,
        pub option: Option<String>,
        pub optarg: Option<String>,
    }
}

wire! {
    /// `job_options_pack`: the tag `"job_options"`, then a u32-counted list.
    pub struct JobOptions(#[wire(with = job_options)] pub Vec<JobOption>);
}

/// A tag string ahead of the count.
mod job_options {
    use super::*;

    const TAG: &str = "job_options";

    pub fn parse<'a>(i: &'a [u8], v: V, f: &mut Vec<JobOption>) -> PResult<'a, ()> {
        let (r, tag) = prim::str(i)?;
        if tag.as_deref() != Some(TAG) {
            let kind = DecodeErrorKind::BadValue {
                what: "job_options tag",
                value: 0,
            };
            return WireError::fail(kind, i);
        }
        let (r, n) = prim::count(r, 12)?;
        let (r, x) = prim::items(r, n, |i| JobOption::parse(i, v))?;
        *f = x;
        Ok((r, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, v: V, f: &[JobOption]) {
        prim::put_str(b, Some(TAG));
        prim::put_count(b, f.len());
        for o in f {
            o.put(b, v);
        }
    }
}

/// A `u16` count then that many `u16` (resp_port, io_port); the encoder sends at most u16::MAX.
mod u16_list {
    use super::*;

    pub fn parse<'a>(i: &'a [u8], _: V, f: &mut Vec<u16>) -> PResult<'a, ()> {
        let (r, n) = prim::u16(i)?;
        let n = prim::check_count(i, r, u64::from(n), 2)?;
        let (r, x) = prim::items(r, n, prim::u16)?;
        *f = x;
        Ok((r, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, _: V, f: &[u16]) {
        let f = f
            .get(..f.len().min(usize::from(u16::MAX)))
            .unwrap_or_default();
        b.put_u16(f.len() as u16);
        f.iter().for_each(|&x| b.put_u16(x));
    }
}

/// `nnodes`: the count of `global_task_ids`, sent well ahead of them. It is checked where the ids
/// start but reported where it was read, so the slot keeps its place in the input.
#[derive(Debug, Clone, Copy, Default)]
struct NodeCount {
    n: u32,
    /// Input bytes left at the count.
    remaining: usize,
}

// irregular: a slot that remembers where it was read, for an error raised later at its list.
impl Wire for NodeCount {
    fn parse<'a>(i: &'a [u8], _: V) -> PResult<'a, Self> {
        let (r, n) = prim::u32(i)?;
        let remaining = i.len();
        Ok((r, Self { n, remaining }))
    }
    fn put<B: BufMut>(&self, b: &mut B, _: V) {
        b.put_u32(self.n)
    }
}

impl NodeCount {
    fn of(ids: &[Vec<u32>]) -> Self {
        Self {
            n: prim::count32(ids.len()),
            remaining: 0,
        }
    }
}

/// Per node: `u16 tasks_to_launch` then the u32-counted ids, whose count must agree.
mod task_ids {
    use super::*;

    pub fn parse_len<'a>(
        i: &'a [u8],
        v: V,
        f: &mut Vec<Vec<u32>>,
        n: &NodeCount,
    ) -> PResult<'a, ()> {
        // Each node is at least a u16 and a u32 count.
        let count = prim::check_count(i, i, u64::from(n.n), 6).map_err(|e| {
            e.map(|mut e| {
                e.remaining = n.remaining;
                e.path.push("nnodes");
                e
            })
        })?;
        let (r, x) = prim::items(i, count, |i| node(i, v))?;
        *f = x;
        Ok((r, ()))
    }
    fn node(i: &[u8], v: V) -> PResult<'_, Vec<u32>> {
        let (r, tasks) = named(prim::u16(i), "tasks_to_launch")?;
        let (r, ids) = Vec::<u32>::parse(r, v)?;
        if ids.len() != usize::from(tasks) {
            let kind = DecodeErrorKind::BadValue {
                what: "global_task_ids length",
                value: ids.len() as u64,
            };
            return WireError::fail(kind, i);
        }
        Ok((r, ids))
    }
    pub fn put<B: BufMut>(b: &mut B, _: V, f: &[Vec<u32>]) {
        for ids in f {
            let ids = ids
                .get(..ids.len().min(usize::from(u16::MAX)))
                .unwrap_or_default();
            b.put_u16(ids.len() as u16);
            prim::put_count(b, ids.len());
            ids.iter().for_each(|&x| b.put_u32(x));
        }
    }
}

/// `has_job_ptr`: the stepmgr form (1, then a whole job record) is refused; 0 is always sent.
#[derive(Debug, Clone, Copy, Default)]
struct NoJobPtr;

// irregular: a slot of one accepted value (the stepmgr job record is not modelled).
impl Wire for NoJobPtr {
    fn parse<'a>(i: &'a [u8], _: V) -> PResult<'a, Self> {
        match prim::bool(i)? {
            (r, false) => Ok((r, Self)),
            (_, true) => {
                let kind = DecodeErrorKind::BadValue {
                    what: "has_job_ptr (stepmgr job record is not supported)",
                    value: 1,
                };
                WireError::fail(kind, i)
            }
        }
    }
    fn put<B: BufMut>(&self, b: &mut B, _: V) {
        b.put_u8(0)
    }
}

wire! {
    /// `launch_tasks_request_msg_t`: REQUEST_LAUNCH_TASKS 6001.
    ///
    /// The stepmgr form (`has_job_ptr` = 1, followed by a whole job record) is
    /// rejected on decode and never produced.
    ///
    /// UNVERIFIED: 23.11/24.05 assume no switch plugin is configured (then
    /// upstream packs no switch info at all).
    pub struct LaunchTasksRequestMsg {
        pub step_id: StepId,
        [..V23_11] pub uid: u32,
        [..V23_11] pub gid: u32,
        [..V23_11] pub user_name: Option<String>,
        pub gids: Vec<u32>,
        pub het_job_node_offset: u32,
        pub het_job_id: u32,
        /// `het_job_nnodes` arrays of task ids; None = NO_VAL (not a het job).
        pub het_job_tids: Option<Vec<Vec<u32>>>,
        /// None = NO_VAL.
        pub het_job_tid_offsets: Option<Vec<u32>>,
        pub het_job_offset: u32,
        pub het_job_step_cnt: u32,
        /// Sent only when het_job_offset < NO_VAL and het_job_step_cnt > 0.
        #[wire(if = |s| s.het_job_offset < NO_VAL && s.het_job_step_cnt > 0)]
        [V25_05..] pub het_job_step_task_cnts: Vec<u32>,
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
        let nnodes: NodeCount = (|s| NodeCount::of(&s.global_task_ids)),
        pub cpus_per_task: u16,
        [V23_11..] pub cpt_compact_array: Vec<u16>,
        [V23_11..] pub cpt_compact_reps: Vec<u32>,
        pub tres_per_task: Option<String>,
        pub threads_per_core: u16,
        pub task_dist: u32,
        pub node_cpus: u16,
        pub job_core_spec: u16,
        pub accel_bind_type: u16,
        pub cred: VersionedCred,
        /// Per node (`nnodes` on the wire is its length): the global task ids
        /// (`tasks_to_launch[i]` is each one's length).
        #[wire(with = task_ids, len = nnodes)]
        pub global_task_ids: Vec<Vec<u32>>,
        #[wire(with = u16_list)] pub resp_port: Vec<u16>,
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
        #[wire(with = u16_list)] pub io_port: Vec<u16>,
        [V25_05..] pub alloc_tls_cert: Option<String>,
        pub profile: u32,
        pub task_prolog: Option<String>,
        pub task_epilog: Option<String>,
        pub slurmd_debug: u16,
        /// The switch jobinfo plugin id (switch/none: nothing more).
        [..V23_11] pub switch_plugin_id: u32,
        pub options: JobOptions,
        /// 23.11..24.11 upstream always sends NULL.
        [..V25_05] pub alias_list: Option<String>,
        pub complete_nodelist: Option<String>,
        pub open_mode: u8,
        pub acctg_freq: Option<String>,
        pub cpu_freq_min: u32,
        pub cpu_freq_max: u32,
        pub cpu_freq_gov: u32,
        /// Select jobinfo plugin id (cons_tres/linear send nothing more).
        [..V23_02] pub select_plugin_id: u32,
        pub tres_bind: Option<String>,
        pub tres_freq: Option<String>,
        pub x11: u16,
        pub x11_alloc_host: Option<String>,
        pub x11_alloc_port: u16,
        pub x11_magic_cookie: Option<String>,
        pub x11_target: Option<String>,
        pub x11_target_port: u16,
        [V24_05..] pub stepmgr: Option<String>,
        [V24_11..] pub oom_kill_step: bool,
        [V24_05..] let has_job_ptr: NoJobPtr = (|_| NoJobPtr),
    }
}

wire! {
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

wire! {
    /// `task_exit_msg_t`: MESSAGE_TASK_EXIT 6003. `num_tasks` is sent apart
    /// from the array's own count and kept verbatim.
    pub struct TaskExitMsg {
        pub return_code: u32,
        pub num_tasks: u32,
        pub task_id_list: Vec<u32>,
        pub step_id: StepId,
    }
}

wire! {
    /// `batch_job_launch_msg_t`: REQUEST_BATCH_JOB_LAUNCH 4005.
    pub struct BatchJobLaunchMsg {
        /// Before 25.11 (then slurmd takes it from the credential's step id).
        [..V25_11] pub job_id: u32,
        pub het_job_id: u32,
        [..V23_11] pub uid: u32,
        [..V23_11] pub gid: u32,
        [..V23_11] pub user_name: Option<String>,
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
        #[wire(with = cpu_groups)] pub cpu_groups: Vec<CpuArrayRep>,
        /// 23.11/24.05 upstream always sends NULL.
        [..V24_11] pub alias_list: Option<String>,
        pub cpu_bind: Option<String>,
        pub nodes: Option<String>,
        pub script: Option<String>,
        pub work_dir: Option<String>,
        pub std_err: Option<String>,
        pub std_in: Option<String>,
        pub std_out: Option<String>,
        /// Preceded on the wire by a separate `u32 argc` equal to its length.
        #[wire(with = counted_twice)] pub argv: Vec<Option<String>>,
        pub spank_job_env: Vec<Option<String>>,
        /// Preceded on the wire by a separate `u32 envc` equal to its length.
        #[wire(with = counted_twice)] pub environment: Vec<Option<String>>,
        pub job_mem: u64,
        pub cred: VersionedCred,
        /// Select jobinfo plugin id.
        [..V23_02] pub select_plugin_id: u32,
        pub account: Option<String>,
        pub qos: Option<String>,
        pub resv_name: Option<String>,
        pub profile: u32,
        pub tres_bind: Option<String>,
        pub tres_freq: Option<String>,
        [V25_05..] pub tres_per_task: Option<String>,
        [V24_11..] pub cpu_freq_min: u32,
        [V24_11..] pub cpu_freq_max: u32,
        [V24_11..] pub cpu_freq_gov: u32,
        [V24_11..] pub oom_kill_step: bool,
    }
}

/// A u32 count, then a string array that carries the same count again (argc/envc).
mod counted_twice {
    use super::*;

    pub fn parse<'a>(i: &'a [u8], v: V, f: &mut Vec<Option<String>>) -> PResult<'a, ()> {
        let (r, n) = prim::u32(i)?;
        let (r, a) = Vec::<Option<String>>::parse(r, v)?;
        if a.len() as u64 != u64::from(n) {
            let kind = DecodeErrorKind::BadValue {
                what: "string array count",
                value: u64::from(n),
            };
            return WireError::fail(kind, i);
        }
        *f = a;
        Ok((r, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, v: V, f: &Vec<Option<String>>) {
        prim::put_count(b, f.len());
        f.put(b, v);
    }
}

/// The batch form of `cred::cpu_array_reps` (same bytes): both arrays are read whole, then their
/// lengths compared with the count, the error at the first array.
mod cpu_groups {
    use super::*;
    pub use cred::cpu_array_reps::put;

    pub fn parse<'a>(i: &'a [u8], v: V, f: &mut Vec<CpuArrayRep>) -> PResult<'a, ()> {
        let (at, n) = named(prim::u32(i), "num_cpu_groups")?;
        if n == 0 {
            return Ok((at, ()));
        }
        let (r, cpus) = named(Vec::<u16>::parse(at, v), "cpus_per_node")?;
        let (r, reps) = named(Vec::<u32>::parse(r, v), "cpu_count_reps")?;
        let n = n as usize;
        if cpus.len() != n || reps.len() != n {
            let kind = DecodeErrorKind::BadValue {
                what: "cpu group array length",
                value: cpus.len() as u64,
            };
            return WireError::fail(kind, at);
        }
        *f = cpus
            .into_iter()
            .zip(reps)
            .map(|(cpus, reps)| CpuArrayRep { cpus, reps })
            .collect();
        Ok((r, ()))
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
        let e = decode_exact::<LaunchTasksRequestMsg>(&b, V::V24_11).unwrap_err();
        assert_eq!((e.offset, e.path()), (b.len() - 1, "has_job_ptr".into()));
        assert!(matches!(e.kind, DecodeErrorKind::BadValue { value: 1, .. }));
    }

    #[test]
    fn node_count_is_checked_at_the_ids_and_reported_where_it_was_read() {
        let one = LaunchTasksRequestMsg {
            cred: vc(),
            global_task_ids: vec![vec![0]],
            ..Default::default()
        };
        let two = LaunchTasksRequestMsg {
            global_task_ids: vec![vec![0], vec![1]],
            ..one.clone()
        };
        let v = V::V24_11;
        let (a, b) = (encode_to_vec(&one, v), encode_to_vec(&two, v));
        // The first byte that differs is the low byte of nnodes.
        let at = a.iter().zip(&b).position(|(x, y)| x != y).unwrap() - 3;
        let mut bad = a.clone();
        bad[at..at + 4].copy_from_slice(&[0, 1, 0, 0]);
        let e = decode_exact::<LaunchTasksRequestMsg>(&bad, v).unwrap_err();
        assert_eq!(e.offset, at);
        assert!(e.path().contains("nnodes"), "{}", e.path());
        // The common suffix is what follows the ids; one node is 10 bytes (u16, count, one id).
        let tail = a
            .iter()
            .rev()
            .zip(b.iter().rev())
            .take_while(|(x, y)| x == y)
            .count();
        assert_eq!(
            e.kind,
            DecodeErrorKind::CountTooLarge {
                count: 0x10000,
                remaining: tail + 10
            }
        );
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
