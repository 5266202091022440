//! Job termination (ctld -> slurmd) and the epilog's reply.

use crate::codec::shape;
use crate::types::StepId;
use crate::wire;

use super::cred::JobCred;
use super::gres::GresPrepList;
use super::step::JobIdOrStepId;

wire! {
    /// `u8 has_cred` then the credential at the message's version.
    pub struct OptCred(#[wire(with = shape::flag8)] pub Option<Box<JobCred>>);
}

wire! {
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

wire! {
    /// `epilog_complete_msg_t`: MESSAGE_EPILOG_COMPLETE 6012 (job id before
    /// 25.11, step id from 25.11).
    pub struct EpilogCompleteMsg {
        pub step_id: JobIdOrStepId,
        pub return_code: u32,
        pub node_name: Option<String>,
    }
}
