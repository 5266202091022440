//! Small bodies shared by many RPCs.

use crate::codec::error::{PResult, WireError};
use crate::codec::{prim, BufMut};
use crate::error::DecodeErrorKind;
use crate::types::StepId;
use crate::{wire, ProtocolVersion};

wire! {
    /// No body at all (REQUEST_PING and friends).
    pub struct Empty {}
}

wire! {
    /// `return_code_msg_t`: RESPONSE_SLURM_RC, RESPONSE_JOB_READY.
    pub struct ReturnCodeMsg {
        pub return_code: u32,
    }
}

wire! {
    /// `return_code2_msg_t`: RESPONSE_SLURM_RC_MSG.
    pub struct ReturnCodeMsgWithText {
        pub return_code: u32,
        pub err_msg: Option<String>,
    }
}

wire! {
    /// `last_update_msg_t`: REQUEST_BUILD_INFO and other "since" queries.
    pub struct LastUpdateMsg {
        pub last_update: i64,
    }
}

wire! {
    /// `shutdown_msg_t`.
    pub struct ShutdownMsg {
        pub options: u16,
    }
}

wire! {
    /// `ping_slurmd_resp_msg_t`.
    pub struct PingSlurmdRespMsg {
        pub cpu_load: u32,
        pub free_mem: u64,
        /// 26.05: the answering node names itself.
        [V26_05..]
        pub node_name: Option<String>,
    }
}

wire! {
    /// `srun_job_complete_msg_t` is a bare step id.
    pub struct StepIdMsg {
        pub step_id: StepId,
    }
}

wire! {
    /// `signal_tasks_msg_t`: REQUEST_SIGNAL_TASKS 6004 and
    /// REQUEST_TERMINATE_TASKS 6006 (same layout 22.05..26.05).
    pub struct SignalTasksMsg {
        pub step_id: StepId,
        pub flags: u16,
        pub signal: u16,
    }
}

/// RESPONSE_FED_INFO of a controller in no federation: the federation
/// record packed as NULL (a single 0 byte, same in 22.05..26.05). A
/// federation's record is not modelled; decoding one is an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct NoFederation;

// irregular: a unit record; only the NULL federation (one 0 byte) is modelled.
impl crate::pack::Wire for NoFederation {
    fn parse<'a>(i: &'a [u8], _: ProtocolVersion) -> PResult<'a, Self> {
        match prim::u8(i)? {
            (r, 0) => Ok((r, NoFederation)),
            (_, n) => {
                let what = "federation record (only NULL is modelled)";
                let value = u64::from(n);
                WireError::fail(DecodeErrorKind::BadValue { what, value }, i)
            }
        }
    }
    fn put<B: BufMut>(&self, b: &mut B, _: ProtocolVersion) {
        b.put_u8(0);
    }
}

#[cfg(test)]
mod fed_tests {
    use super::*;
    use crate::pack::{decode_exact, encode_to_vec};
    use crate::ProtocolVersion;

    #[test]
    fn no_federation_is_a_null_record() {
        for v in ProtocolVersion::ALL {
            assert_eq!(encode_to_vec(&NoFederation, v), vec![0]);
            assert_eq!(decode_exact::<NoFederation>(&[0], v).unwrap(), NoFederation);
            assert!(decode_exact::<NoFederation>(&[1], v).is_err());
        }
    }
}

#[cfg(test)]
mod ping_tests {
    use super::*;
    use crate::pack::{decode_exact, encode_to_vec};
    use crate::ProtocolVersion;

    /// 26.05 slurmctld refuses a ping answer without the node's name
    /// ("Malformed RPC of type RESPONSE_PING_SLURMD").
    #[test]
    fn ping_answer_names_its_node_from_26_05() {
        let m = PingSlurmdRespMsg {
            cpu_load: 7,
            free_mem: 9,
            node_name: Some("n1".into()),
        };
        let head = [0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 9];
        assert_eq!(encode_to_vec(&m, ProtocolVersion::V24_11), head);
        let mut with_name = head.to_vec();
        with_name.extend_from_slice(&[0, 0, 0, 3, b'n', b'1', 0]);
        assert_eq!(encode_to_vec(&m, ProtocolVersion::V26_05), with_name);
        assert_eq!(
            decode_exact::<PingSlurmdRespMsg>(&with_name, ProtocolVersion::V26_05).unwrap(),
            m
        );
    }
}
