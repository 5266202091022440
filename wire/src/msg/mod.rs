//! Message bodies, one module per family, and the `Message` enum that ties a
//! message type to its body struct.

pub mod common;
pub mod config;
pub mod cred;
pub mod energy;
pub mod gres;
pub mod job;
pub mod job_desc;
pub mod jobacct;
pub mod kill;
pub mod launch;
pub mod node;
pub mod partition;
pub mod slurmdb;
pub mod stats;
pub mod step;
pub mod step_info;
pub mod update_part;

use crate::error::{DecodeError, DecodeErrorKind, Result};
use crate::msg_type::MsgType;
use crate::pack::{Reader, Wire, Writer};
use crate::ProtocolVersion;

macro_rules! messages {
    ($($variant:ident($body:ty),)*) => {
        /// A typed message body; the variant names its message type.
        #[derive(Debug, Clone, PartialEq)]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        pub enum Message {
            $($variant($body),)*
        }

        impl Message {
            pub fn msg_type(&self) -> MsgType {
                match self {
                    $(Message::$variant(_) => MsgType::$variant,)*
                }
            }

            /// Reads one body of type `ty` from `r`, leaving what follows.
            pub fn decode_from(r: &mut Reader<'_>, v: ProtocolVersion, ty: MsgType) -> Result<Self> {
                match ty {
                    $(MsgType::$variant => Ok(Message::$variant(
                        <$body as Wire>::decode(r, v).map_err(|e| e.within(ty.name()))?,
                    )),)*
                    _ => Err(DecodeError::new(
                        DecodeErrorKind::UnsupportedBody(ty.name(), v),
                        r.position(),
                    )),
                }
            }

            pub fn encode_body(&self, w: &mut Writer, v: ProtocolVersion) {
                match self {
                    $(Message::$variant(b) => b.encode(w, v),)*
                }
            }

            /// Message types that have a body codec.
            pub const SUPPORTED: &'static [MsgType] = &[$(MsgType::$variant,)*];
        }
    };
}

messages! {
    RequestNodeRegistrationStatus(common::Empty),
    MessageNodeRegistrationStatus(node::SlurmNodeRegistrationStatusMsg),
    RequestReconfigure(common::Empty),
    RequestShutdown(common::ShutdownMsg),
    RequestPing(common::Empty),
    RequestHealthCheck(common::Empty),
    ResponsePingSlurmd(common::PingSlurmdRespMsg),
    ResponseNodeRegistration(node::NodeRegistrationRespMsg),
    RequestBuildInfo(common::LastUpdateMsg),
    ResponseBuildInfo(config::SlurmCtlConfInfoMsg),
    RequestJobInfo(job::JobInfoRequestMsg),
    ResponseJobInfo(job::JobInfoMsg),
    RequestNodeInfo(node::NodeInfoRequestMsg),
    ResponseNodeInfo(node::NodeInfoMsg),
    RequestPartitionInfo(partition::PartInfoRequestMsg),
    RequestNodeInfoSingle(node::NodeInfoSingleMsg),
    ResponsePartitionInfo(partition::PartitionInfoMsg),
    RequestUpdatePartition(update_part::UpdatePartMsg),
    RequestDeletePartition(update_part::DeletePartMsg),
    RequestJobInfoSingle(job::JobIdMsg),
    RequestJobUserInfo(job::JobUserIdMsg),
    RequestUpdateJob(job_desc::JobDescMsg),
    RequestUpdateNode(node::UpdateNodeMsg),
    RequestResourceAllocation(job_desc::JobDescMsg),
    ResponseResourceAllocation(job::ResourceAllocationResponseMsg),
    RequestSubmitBatchJob(job_desc::JobDescMsg),
    ResponseSubmitBatchJob(job::SubmitResponseMsg),
    RequestBatchJobLaunch(launch::BatchJobLaunchMsg),
    RequestJobWillRun(job_desc::JobDescMsg),
    RequestJobAllocationInfo(job::JobAllocInfoMsg),
    ResponseJobAllocationInfo(job::ResourceAllocationResponseMsg),
    RequestHetJobAllocInfo(job::JobAllocInfoMsg),
    ResponseHetJobAllocation(job::HetJobAllocationMsg),
    RequestJobReady(job::JobIdMsg),
    ResponseJobReady(common::ReturnCodeMsg),
    RequestJobStepCreate(step::JobStepCreateRequestMsg),
    ResponseJobStepCreate(step::JobStepCreateResponseMsg),
    RequestJobStepInfo(step_info::JobStepInfoRequestMsg),
    ResponseJobStepInfo(step_info::JobStepInfoResponseMsg),
    RequestCancelJobStep(job::JobStepKillMsg),
    RequestKillJob(job::JobStepKillMsg),
    RequestJobRequeue(job::RequeueMsg),
    RequestKillJobs(job::KillJobsMsg),
    ResponseKillJobs(job::KillJobsRespMsg),
    ResponseJobArrayErrors(job::JobArrayRespMsg),
    RequestFedInfo(common::Empty),
    ResponseFedInfo(common::NoFederation),
    RequestStepComplete(step::StepCompleteMsg),
    RequestCompleteJobAllocation(step::CompleteJobAllocationMsg),
    RequestCompleteBatchScript(step::CompleteBatchScriptMsg),
    RequestLaunchTasks(launch::LaunchTasksRequestMsg),
    RequestSignalTasks(common::SignalTasksMsg),
    RequestTerminateTasks(common::SignalTasksMsg),
    ResponseLaunchTasks(launch::LaunchTasksResponseMsg),
    MessageTaskExit(launch::TaskExitMsg),
    RequestKillTimelimit(kill::KillJobMsg),
    RequestTerminateJob(kill::KillJobMsg),
    MessageEpilogComplete(kill::EpilogCompleteMsg),
    RequestAbortJob(kill::KillJobMsg),
    RequestKillPreempted(kill::KillJobMsg),
    SrunJobComplete(step::SrunJobCompleteMsg),
    // A ret_list entry for a node a forwarded message did not reach; no body.
    ResponseForwardFailed(common::Empty),
    ResponseSlurmRc(common::ReturnCodeMsg),
    ResponseSlurmRcMsg(common::ReturnCodeMsgWithText),
    AccountingUpdateMsg(slurmdb::AccountingUpdateMsg),
    RequestStatsInfo(stats::StatsInfoRequestMsg),
    ResponseStatsInfo(stats::StatsInfoResponseMsg),
}

impl Message {
    /// Decodes a whole body, rejecting trailing bytes.
    pub fn decode(v: ProtocolVersion, ty: MsgType, body: &[u8]) -> Result<Self> {
        let mut r = Reader::new(body);
        let m = Self::decode_from(&mut r, v, ty)?;
        r.finish().map_err(|e| e.within(ty.name()))?;
        Ok(m)
    }

    pub fn encode_to_vec(&self, v: ProtocolVersion) -> Vec<u8> {
        let mut w = Writer::new();
        self.encode_body(&mut w, v);
        w.into_vec()
    }
}

/// Helpers shared by the family tests.
#[cfg(test)]
pub(crate) mod test_util {
    use crate::pack::{decode_exact, encode_to_vec, Wire};
    use crate::ProtocolVersion;

    pub fn s(x: &str) -> Option<String> {
        Some(x.to_string())
    }

    /// Encodes, decodes and re-encodes `x` in every release.
    pub fn round_trip_all<T: Wire + std::fmt::Debug>(x: &T) {
        for v in ProtocolVersion::ALL {
            let b = encode_to_vec(x, v);
            let back: T = decode_exact(&b, v).unwrap_or_else(|e| panic!("{v:?}: {e}"));
            assert_eq!(encode_to_vec(&back, v), b, "{v:?}");
        }
    }
}
