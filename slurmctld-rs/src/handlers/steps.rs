//! The srun side of the controller: interactive allocations, allocation
//! info, job ready, step creation (with its signed credential), step and
//! allocation completion, and one-way messages to srun.

use super::caller::Caller;
use super::reply::rc_of;
use crate::agent::sign_cred;
use crate::shared::{now, Shared};
use crate::state::job::{Job, JobState};
use crate::state::step::{self, Step};
use crate::state::{Command, Controller, Reply};
use crate::users::{lookup_user, name_group};
use slurm_rpc::rc_message;
use slurm_wire::errno::*;
use slurm_wire::msg::common::ReturnCodeMsg;
use slurm_wire::msg::cred::{JobCred, MemAllocRep};
use slurm_wire::msg::job::{HetJobAllocationMsg, JobAllocInfoMsg, JobIdMsg};
use slurm_wire::msg::job_desc::JobDescMsg;
use slurm_wire::msg::step::{
    CompleteJobAllocationMsg, JobStepCreateRequestMsg, JobStepCreateResponseMsg, SlurmStepLayout,
    StepCompleteMsg,
};
use slurm_wire::pack::NO_VAL;
use slurm_wire::types::StepId;
use slurm_wire::{Message, ProtocolVersion};

/// select/cons_tres and switch/none plugin ids, which 22.05 peers expect.
const SELECT_CONS_TRES: u32 = 109;
const SWITCH_NONE: u32 = 100;

/// REQUEST_RESOURCE_ALLOCATION (salloc, srun without an allocation).
pub async fn allocate(sh: &Shared, who: &Caller, mut desc: JobDescMsg) -> Message {
    let v = who.version;
    crate::alloc_host::settle(sh.snapshot().conf(), who.peer.ip(), &mut desc);
    let cmd = Command::Allocate {
        user: lookup_user(who.uid, who.gid),
        desc: Box::new(desc),
        version: v,
        resp_host: who.peer.ip().to_string(),
    };
    match sh.exec(cmd).await {
        Reply::Submitted { job_id } => {
            let snap = sh.snapshot();
            match snap.jobs().get(&job_id) {
                Some(j) if j.state == JobState::Running => {
                    tracing::info!(job_id, "allocation granted");
                    let mut m = step::alloc_response(&snap, j, v);
                    name_group(&mut m);
                    Message::ResponseResourceAllocation(m)
                }
                _ => Message::ResponseResourceAllocation(step::alloc_pending_response(job_id, v)),
            }
        }
        Reply::Ok => rc_message(SLURM_SUCCESS),
        Reply::Err(e) => rc_message(e.errno()),
        _ => rc_message(SLURM_ERROR),
    }
}

/// REQUEST_JOB_ALLOCATION_INFO (srun inside an allocation).
pub fn alloc_info(sh: &Shared, who: &Caller, m: JobAllocInfoMsg) -> Message {
    match running_alloc(&sh.snapshot(), m.step_id.job_id, who.uid, who.version) {
        Ok(a) => Message::ResponseJobAllocationInfo(a),
        Err(rc) => rc_message(rc),
    }
}

/// REQUEST_HET_JOB_ALLOC_INFO: 22.05 srun inside an allocation; a list of
/// one for a plain job.
pub fn het_alloc_info(sh: &Shared, who: &Caller, m: JobAllocInfoMsg) -> Message {
    match running_alloc(&sh.snapshot(), m.step_id.job_id, who.uid, who.version) {
        Ok(a) => Message::ResponseHetJobAllocation(HetJobAllocationMsg(vec![a])),
        Err(rc) => rc_message(rc),
    }
}

/// REQUEST_JOB_READY (salloc and srun wait for the nodes).
pub fn job_ready(sh: &Shared, m: JobIdMsg) -> Message {
    let snap = sh.snapshot();
    let Some(j) = snap.jobs().get(&m.step_id.job_id) else {
        return rc_message(ESLURM_INVALID_JOB_ID);
    };
    let rc = match j.state {
        JobState::Running => {
            step::READY_NODE_STATE | step::READY_JOB_STATE | step::READY_PROLOG_STATE
        }
        _ => 0,
    };
    Message::ResponseJobReady(ReturnCodeMsg { return_code: rc })
}

/// REQUEST_JOB_STEP_CREATE (srun).
pub async fn step_create(sh: &Shared, who: &Caller, m: JobStepCreateRequestMsg) -> Message {
    let v = who.version;
    let cmd = Command::StepCreate {
        uid: who.uid,
        req: Box::new(m),
        version: v,
    };
    match sh.exec(cmd).await {
        Reply::Step { job_id, step_id } => step_response(sh, job_id, step_id, v).await,
        Reply::Ok => rc_message(SLURM_SUCCESS),
        Reply::Err(e) => rc_message(e.errno()),
        _ => rc_message(SLURM_ERROR),
    }
}

/// REQUEST_STEP_COMPLETE (slurmd or srun: a step ended on some nodes).
pub async fn step_complete(sh: &Shared, who: &Caller, m: StepCompleteMsg) -> Message {
    rc_of(
        sh.exec(Command::StepComplete {
            uid: who.uid,
            msg: Box::new(m),
        })
        .await,
    )
}

/// REQUEST_COMPLETE_JOB_ALLOCATION (salloc or srun releases its job).
pub async fn complete_allocation(
    sh: &Shared,
    who: &Caller,
    m: CompleteJobAllocationMsg,
) -> Message {
    rc_of(
        sh.exec(Command::CompleteAllocation {
            uid: who.uid,
            job_id: m.step_id.0.job_id,
            job_rc: m.job_rc,
        })
        .await,
    )
}

/// The allocation of a running job the requester may use.
fn running_alloc(
    c: &Controller,
    job_id: u32,
    uid: u32,
    v: ProtocolVersion,
) -> Result<slurm_wire::msg::job::ResourceAllocationResponseMsg, i32> {
    let j = owned_job(c, job_id, uid)?;
    match j.state {
        JobState::Running => {
            let mut m = step::alloc_response(c, j, v);
            name_group(&mut m);
            Ok(m)
        }
        JobState::Pending => Err(ESLURM_JOB_PENDING),
        _ => Err(ESLURM_ALREADY_DONE),
    }
}

fn owned_job(c: &Controller, job_id: u32, uid: u32) -> Result<&Job, i32> {
    let j = c.jobs().get(&job_id).ok_or(ESLURM_INVALID_JOB_ID)?;
    if !c.conf().owner_or_operator(uid, j.user.uid) {
        return Err(ESLURM_ACCESS_DENIED);
    }
    Ok(j)
}

/// The step's credential, unsigned, packed at `v`.
pub fn step_cred(c: &Controller, j: &Job, st: &Step, now: i64, v: ProtocolVersion) -> JobCred {
    let mut arg = crate::state::msgs::cred_arg(c.conf(), c.nodes(), j, v, now, st.step_id);
    arg.step_hostlist = Some(step::nodelist(c.nodes(), &st.nodes));
    // The step's cores: the job's, on the step's nodes only.
    if let Some(bm) = &arg.job_core_bitmap {
        let mut sb = bm.clone();
        let mut off = 0u32;
        for a in &j.alloc {
            let n = &c.nodes()[a.node].def;
            let cores = u32::from(n.sockets) * u32::from(n.cores);
            if !st.nodes.contains(&a.node) {
                for b in off..off + cores {
                    sb.set(b, false);
                }
            }
            off += cores;
        }
        arg.step_core_bitmap = Some(sb);
    }
    arg.job_mem_alloc = crate::state::msgs::job_mem_runs(j);
    let step_mem = j
        .alloc
        .iter()
        .filter(|a| st.nodes.contains(&a.node))
        .map(|a| a.mem);
    arg.step_mem_alloc = crate::state::msgs::runs(step_mem)
        .into_iter()
        .map(|(mem_alloc, rep_count)| MemAllocRep {
            mem_alloc,
            rep_count,
        })
        .collect();
    JobCred {
        arg,
        signature: None,
    }
}

/// RESPONSE_JOB_STEP_CREATE for a step just created.
async fn step_response(sh: &Shared, job_id: u32, step_id: u32, v: ProtocolVersion) -> Message {
    let snap = sh.snapshot();
    let (Some(j), Some(st)) = (
        snap.jobs().get(&job_id),
        snap.steps()
            .get(&job_id)
            .and_then(|s| s.steps.get(&step_id)),
    ) else {
        return rc_message(ESLURM_ALREADY_DONE);
    };
    let mut cred = step_cred(&snap, j, st, now(), v);
    let plugin = sh.plugin.clone();
    let signed =
        tokio::task::spawn_blocking(move || sign_cred(plugin.as_ref(), &mut cred, v).map(|_| cred))
            .await;
    let cred = match signed {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => {
            tracing::error!(job_id, step_id, "cannot sign the step credential: {e}");
            return rc_message(ESLURM_INVALID_JOB_CREDENTIAL);
        }
        Err(e) => {
            tracing::error!(job_id, step_id, "credential signer failed: {e}");
            return rc_message(SLURM_ERROR);
        }
    };
    let (cpt_a, cpt_r) = if st.cpus_per_task > 1 {
        (vec![st.cpus_per_task], vec![st.nodes.len() as u32])
    } else {
        (Vec::new(), Vec::new())
    };
    Message::ResponseJobStepCreate(JobStepCreateResponseMsg {
        def_cpu_bind_type: 0,
        resv_ports: None,
        step_id: StepId {
            sluid: 0,
            job_id,
            step_id,
            step_het_comp: NO_VAL,
        },
        step_layout: Some(SlurmStepLayout {
            front_end: None,
            node_list: Some(step::nodelist(snap.nodes(), &st.nodes)),
            start_protocol_ver: st.start_protocol_ver.to_wire(),
            task_cnt: st.num_tasks,
            task_dist: st.task_dist,
            tids: st.tids.clone(),
            cpt_compact_array: cpt_a,
            cpt_compact_reps: cpt_r,
            net_cred: None,
        }),
        stepmgr: None,
        cred: Some(Box::new(cred)),
        select_plugin_id: SELECT_CONS_TRES,
        switch_plugin_id: SWITCH_NONE,
        use_protocol_ver: st.start_protocol_ver.to_wire(),
        // 26.05: the step is running (0 would mean queued as pending).
        state: 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::testkit::{allocate, controller_up, job_id, user, TWO_NODES};
    use slurm_wire::msg::job_desc::JobDescMsg;

    /// The state machine leaves the group name out; the reply srun gets
    /// names it (as it did when the state looked it up).
    #[test]
    fn allocation_info_names_the_group_of_the_job() {
        let mut c = controller_up(TWO_NODES, &["n1"], 4, 1000);
        let desc = JobDescMsg {
            min_cpus: 1,
            ..JobDescMsg::unset()
        };
        let id = job_id(allocate(&mut c, 1001, user(2001, 0), desc).0);
        let v = ProtocolVersion::V24_11;
        assert_eq!(step::alloc_response(&c, &c.jobs()[&id], v).group_name, None);
        let m = running_alloc(&c, id, 2001, v).unwrap();
        assert!(m.group_name.is_some());
        assert_eq!(m.group_name, crate::users::group_name(0));
    }
}
