//! Job termination (ctld -> slurmd) and the epilog's reply.

use crate::error::Result;
use crate::pack::{Reader, Wire, Writer};
use crate::types::StepId;
use crate::wire_struct;
use crate::ProtocolVersion;

use super::cred::JobCred;
use super::gres::GresPrepList;
use super::step::JobIdOrStepId;

/// `u8 has_cred` then the credential at the message's version.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct OptCred(pub Option<Box<JobCred>>);

impl Wire for OptCred {
    fn decode(r: &mut Reader<'_>, v: ProtocolVersion) -> Result<Self> {
        if r.bool()? {
            Ok(Self(Some(Box::new(JobCred::decode(r, v)?))))
        } else {
            Ok(Self(None))
        }
    }
    fn encode(&self, w: &mut Writer, v: ProtocolVersion) {
        w.bool(self.0.is_some());
        if let Some(c) = &self.0 {
            c.encode(w, v);
        }
    }
}

wire_struct! {
    /// `kill_job_msg_t`: REQUEST_TERMINATE_JOB 6011, REQUEST_KILL_TIMELIMIT
    /// 6009, REQUEST_ABORT_JOB 6013, REQUEST_KILL_PREEMPTED 6016.
    pub struct KillJobMsg {
        pub cred: OptCred,
        pub details: Option<String>,
        pub derived_ec: u32,
        pub exit_code: u32,
        /// 22.05 `gres_job_alloc_pack`, 23.02+ `gres_prep_pack`; a u16-counted
        /// list before 25.05, a `slurm_pack_list` from 25.05.
        pub job_gres_prep: GresPrepList,
        pub step_id: StepId,
        pub het_job_id: u32,
        pub job_state: u32,
        pub job_uid: u32,
        pub job_gid: u32,
        pub nodes: Option<String>,
        /// 22.05 only: select jobinfo plugin id (cons_tres packs nothing more).
        [..V23_02] pub select_plugin_id: u32,
        pub spank_job_env: Vec<Option<String>>,
        pub start_time: i64,
        pub time: i64,
        pub work_dir: Option<String>,
    }
}

wire_struct! {
    /// `epilog_complete_msg_t`: MESSAGE_EPILOG_COMPLETE 6012 (job id before
    /// 25.11, step id from 25.11).
    pub struct EpilogCompleteMsg {
        pub step_id: JobIdOrStepId,
        pub return_code: u32,
        pub node_name: Option<String>,
    }
}
