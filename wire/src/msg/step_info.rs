//! REQUEST_JOB_STEP_INFO / RESPONSE_JOB_STEP_INFO (`squeue -s`,
//! `scontrol show step`): `job_step_info_request_msg_t` and
//! `job_step_info_response_msg_t` with its `job_step_info_t` records.

use crate::codec::prim::count32;
use crate::msg::job_desc::SelectJobinfo;
use crate::types::{BitStr, StepId};
use crate::wire;

wire! {
    /// `job_step_info_request_msg_t`.
    pub struct JobStepInfoRequestMsg {
        pub last_update: i64,
        pub step_id: StepId,
        pub show_flags: u16,
    }
}

wire! {
    /// One `job_step_info_t` as the controller packs it.
    pub struct JobStepInfo {
        pub array_job_id: u32,
        pub array_task_id: u32,
        pub step_id: StepId,
        pub user_id: u32,
        pub num_cpus: u32,
        pub cpu_freq_min: u32,
        pub cpu_freq_max: u32,
        pub cpu_freq_gov: u32,
        pub num_tasks: u32,
        pub task_dist: u32,
        pub time_limit: u32,
        pub state: u32,
        pub srun_pid: u32,
        pub start_time: i64,
        pub run_time: i64,
        pub cluster: Option<String>,
        pub container: Option<String>,
        [V23_11..] pub container_id: Option<String>,
        [V26_05..] pub container_type: Option<String>,
        pub partition: Option<String>,
        pub srun_host: Option<String>,
        pub resv_ports: Option<String>,
        pub nodes: Option<String>,
        pub name: Option<String>,
        pub network: Option<String>,
        pub node_inx: Option<BitStr>,
        [..V23_11] pub select_jobinfo: SelectJobinfo,
        /// `tres_fmt_alloc_str` from 25.05 on.
        pub tres_alloc_str: Option<String>,
        pub start_protocol_ver: u16,
        pub cpus_per_tres: Option<String>,
        pub mem_per_tres: Option<String>,
        [V25_05..] pub job_name: Option<String>,
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
    }
}

wire! {
    /// `job_step_info_response_msg_t`. The stepmgr job list (24.05+) is sent
    /// empty: this controller manages every step itself.
    pub struct JobStepInfoResponseMsg {
        // A record is far larger than 64 bytes in every release.
        #[wire(min = 64)] let job_step_count: u32 = (|s| count32(s.job_steps.len())),
        pub last_update: i64,
        #[wire(len = job_step_count)] pub job_steps: Vec<JobStepInfo>,
        /// 24.05+: an empty `stepmgr_jobs` list was sent (count 0) rather than
        /// none (NO_VAL); kept so that a message re-encodes as it came.
        #[wire(with = stepmgr_jobs)] [V24_05..] pub stepmgr_jobs_empty: bool,
    }
}

/// `slurm_pack_list` of stepmgr jobs, which this decoder does not model: only NO_VAL (none) or an
/// empty list.
mod stepmgr_jobs {
    use crate::codec::error::{PResult, WireError};
    use crate::codec::{prim, BufMut};
    use crate::error::DecodeErrorKind;
    use crate::pack::NO_VAL;
    use crate::ProtocolVersion;

    pub fn parse<'a>(i: &'a [u8], _: ProtocolVersion, empty: &mut bool) -> PResult<'a, ()> {
        let (r, cnt) = prim::u32(i)?;
        if cnt != NO_VAL && cnt != 0 {
            // Reported after the count, as before.
            let what = "stepmgr_jobs count";
            let value = u64::from(cnt);
            return WireError::fail(DecodeErrorKind::BadValue { what, value }, r);
        }
        *empty = cnt == 0;
        Ok((r, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, _: ProtocolVersion, empty: &bool) {
        b.put_u32(if *empty { 0 } else { NO_VAL });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::{decode_exact, encode_to_vec};
    use crate::ProtocolVersion;

    /// A stepmgr list sent empty (count 0) and one sent as none (NO_VAL)
    /// both decode, and each re-encodes as it came (found by fuzz_header).
    #[test]
    fn stepmgr_list_count_re_encodes_as_sent() {
        for cnt in [0u32, crate::pack::NO_VAL] {
            let mut b = vec![0, 0, 0, 0];
            b.extend_from_slice(&7i64.to_be_bytes());
            b.extend_from_slice(&cnt.to_be_bytes());
            let m: JobStepInfoResponseMsg = decode_exact(&b, ProtocolVersion::V24_11).unwrap();
            assert_eq!(m.stepmgr_jobs_empty, cnt == 0);
            assert_eq!(encode_to_vec(&m, ProtocolVersion::V24_11), b);
        }
    }

    #[test]
    fn round_trips_and_version_gates() {
        let step = JobStepInfo {
            step_id: StepId {
                sluid: 0,
                job_id: 7,
                step_id: 0,
                step_het_comp: crate::pack::NO_VAL,
            },
            nodes: Some("n[1-2]".into()),
            container_id: Some("c".into()),
            job_name: Some("wrap".into()),
            node_inx: Some(BitStr::new(2)),
            ..Default::default()
        };
        let m = JobStepInfoResponseMsg {
            last_update: 5,
            job_steps: vec![step.clone()],
            ..Default::default()
        };
        let mut sizes = Vec::new();
        for v in [
            ProtocolVersion::V22_05,
            ProtocolVersion::V24_11,
            ProtocolVersion::V26_05,
        ] {
            let b = encode_to_vec(&m, v);
            let back: JobStepInfoResponseMsg = decode_exact(&b, v).expect("decodes");
            assert_eq!(back.job_steps[0].nodes.as_deref(), Some("n[1-2]"));
            // fields the version lacks do not travel
            assert_eq!(
                back.job_steps[0].container_id.is_some(),
                v >= ProtocolVersion::V23_11
            );
            assert_eq!(
                back.job_steps[0].job_name.is_some(),
                v >= ProtocolVersion::V25_05
            );
            sizes.push(b.len());
        }
        assert!(sizes[0] != sizes[1] && sizes[1] != sizes[2]);
        let req = JobStepInfoRequestMsg {
            last_update: 0,
            step_id: step.step_id,
            show_flags: 1,
        };
        let v = ProtocolVersion::V24_11;
        let back: JobStepInfoRequestMsg = decode_exact(&encode_to_vec(&req, v), v).expect("req");
        assert_eq!(back, req);
    }
}
