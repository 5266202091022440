//! RESPONSE_JOB_STEP_INFO (`squeue -s`, `scontrol show step`) from a
//! snapshot: the steps srun created, and the batch step stock keeps for a
//! running batch job (`N.batch` on its batch host, one task).

use crate::state::job::{Job, JobState};
use crate::state::step::{nodelist, Step};
use crate::state::Controller;
use slurm_wire::errno::{ESLURM_INVALID_JOB_ID, SLURM_NO_CHANGE_IN_DATA};
use slurm_wire::msg::step_info::{JobStepInfo, JobStepInfoRequestMsg, JobStepInfoResponseMsg};
use slurm_wire::pack::{INFINITE, NO_VAL};
use slurm_wire::types::{BitStr, StepId};
use slurm_wire::ProtocolVersion as V;

/// `SLURM_BATCH_SCRIPT`: the batch step's id.
const BATCH_SCRIPT: u32 = StepId::BATCH_SCRIPT;
/// `SLURM_DIST_BLOCK`, the layout of the batch step.
const DIST_BLOCK: u32 = 0x0002;
/// `JOB_RUNNING`: every step listed is running.
const STEP_RUNNING: u32 = 1;

fn node_bitmap(c: &Controller, idx: &[usize]) -> BitStr {
    let mut b = BitStr::new(c.nodes().len() as u32);
    for &i in idx {
        if i < c.nodes().len() {
            b.set(i as u32, true);
        }
    }
    b
}

/// The fields every step of `j` shares.
fn base(c: &Controller, j: &Job, step_id: u32, now: i64, start: i64, v: V) -> JobStepInfo {
    let (array_job_id, array_task_id) = match c.arrays().task_of(j.job_id) {
        Some(r) => (r.array_job_id, r.task_id),
        None => (0, NO_VAL),
    };
    JobStepInfo {
        array_job_id,
        array_task_id,
        step_id: StepId {
            sluid: 0,
            job_id: j.job_id,
            step_id,
            step_het_comp: NO_VAL,
        },
        user_id: j.user.uid,
        cpu_freq_min: NO_VAL,
        cpu_freq_max: NO_VAL,
        cpu_freq_gov: NO_VAL,
        time_limit: INFINITE,
        state: STEP_RUNNING,
        start_time: start,
        run_time: (now - start).max(0),
        cluster: c.conf().raw.cluster_name.clone(),
        partition: c
            .conf()
            .partitions
            .get(j.part)
            .map(|p| p.name().to_string()),
        start_protocol_ver: v.to_wire(),
        ..Default::default()
    }
}

fn batch_step(c: &Controller, j: &Job, now: i64, v: V) -> Option<JobStepInfo> {
    j.req.has_script().then_some(())?;
    let host = j.batch_host.filter(|&i| i < c.nodes().len())?;
    let cpus = j
        .alloc
        .iter()
        .find(|a| a.node == host)
        .map_or(1, |a| u32::from(a.cpus));
    let mut s = base(c, j, BATCH_SCRIPT, now, j.start_time, v);
    s.num_cpus = cpus;
    s.num_tasks = 1;
    s.task_dist = DIST_BLOCK;
    s.nodes = Some(c.nodes()[host].def.name.clone());
    s.name = Some("batch".into());
    s.node_inx = Some(node_bitmap(c, &[host]));
    s.tres_alloc_str = Some(format!("cpu={cpus},node=1"));
    Some(s)
}

fn srun_step(c: &Controller, j: &Job, st: &Step, now: i64, v: V) -> JobStepInfo {
    let mut s = base(c, j, st.step_id, now, st.start_time, v);
    let cpus = st
        .num_tasks
        .saturating_mul(u32::from(st.cpus_per_task.max(1)));
    s.num_cpus = cpus;
    s.num_tasks = st.num_tasks;
    s.task_dist = st.task_dist;
    s.srun_pid = st.srun_pid;
    s.srun_host = st.srun_host.clone();
    s.nodes = Some(nodelist(c.nodes(), &st.nodes));
    s.name = st.name.clone();
    s.node_inx = Some(node_bitmap(c, &st.nodes));
    s.tres_alloc_str = Some(format!("cpu={cpus},node={}", st.nodes.len()));
    s.start_protocol_ver = st.start_protocol_ver.to_wire();
    s.submit_line = st.submit_line.clone();
    if v >= V::V25_05 {
        s.job_name = j.req.name().map(str::to_string);
        s.cwd = j.req.work_dir().map(str::to_string);
    }
    s
}

/// The answer to REQUEST_JOB_STEP_INFO at `now`: the records, or the
/// error code stock replies with.
pub fn step_info_msg(
    c: &Controller,
    req: &JobStepInfoRequestMsg,
    now: i64,
    v: V,
) -> Result<JobStepInfoResponseMsg, i32> {
    if req.last_update.saturating_sub(1) >= c.last_job_update() {
        return Err(SLURM_NO_CHANGE_IN_DATA);
    }
    let want_job = req.step_id.job_id;
    let want_step = req.step_id.step_id;
    let mut valid_job = false;
    let mut job_steps = Vec::new();
    for j in c.jobs().values() {
        let array_job = c.arrays().task_of(j.job_id).map(|r| r.array_job_id);
        if want_job != NO_VAL && want_job != j.job_id && Some(want_job) != array_job {
            continue;
        }
        valid_job = true;
        if j.state != JobState::Running {
            continue;
        }
        if want_step == NO_VAL || want_step == BATCH_SCRIPT {
            job_steps.extend(batch_step(c, j, now, v));
        }
        if let Some(js) = c.steps().get(&j.job_id) {
            for st in js.steps.values() {
                if want_step == NO_VAL || want_step == st.step_id {
                    job_steps.push(srun_step(c, j, st, now, v));
                }
            }
        }
    }
    if !c.jobs().is_empty() && !valid_job && job_steps.is_empty() {
        return Err(ESLURM_INVALID_JOB_ID);
    }
    Ok(JobStepInfoResponseMsg {
        last_update: now,
        job_steps,
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::testkit::{
        allocate, apply_all, controller, job_id, reg_bare, sparse_desc, step_req, user,
    };
    use crate::state::{Command, Reply};
    use slurm_wire::msg::job_desc::JobDescMsg;
    use slurm_wire::msg::step::JobStepCreateRequestMsg;
    use slurm_wire::pack::NO_VAL16;

    /// Two nodes, an interactive allocation on both, one 2-task step.
    fn running_step() -> (Controller, u32) {
        let text = "ClusterName=t\nSlurmctldHost=ctl\nSlurmUser=root\n\
            NodeName=n[1-2] CPUs=4 RealMemory=1000\n\
            PartitionName=debug Nodes=n[1-2] Default=YES State=UP\n";
        let mut c = controller(text);
        apply_all(
            &mut c,
            1000,
            ["n1", "n2"].map(|n| reg_bare(n, 4, 1000, V::V24_11)),
        );
        let desc = JobDescMsg {
            min_nodes: 2,
            max_nodes: 2,
            requeue: NO_VAL16,
            alloc_resp_port: 4000,
            other_port: 4001,
            ..sparse_desc()
        };
        let (r, _) = allocate(&mut c, 1001, user(1000, 1000), desc);
        let job_id = job_id(r);
        let req = JobStepCreateRequestMsg {
            name: Some("sleep".into()),
            ..step_req(job_id, 2, 2)
        };
        let (r, _) = c.apply(
            1002,
            Command::StepCreate {
                uid: 1000,
                req: Box::new(req),
                version: V::V24_11,
            },
        );
        assert_eq!(r, Reply::Step { job_id, step_id: 0 });
        (c, job_id)
    }

    fn ask(job_id: u32, step_id: u32) -> JobStepInfoRequestMsg {
        JobStepInfoRequestMsg {
            last_update: 0,
            step_id: StepId {
                sluid: 0,
                job_id,
                step_id,
                step_het_comp: NO_VAL,
            },
            show_flags: 0,
        }
    }

    #[test]
    fn lists_running_steps_with_their_layout() {
        let (c, job_id) = running_step();
        let m = step_info_msg(&c, &ask(NO_VAL, NO_VAL), 1010, V::V24_11).unwrap();
        // an allocation without a batch script has no batch step
        assert_eq!(m.job_steps.len(), 1);
        let s = &m.job_steps[0];
        assert_eq!(s.step_id.job_id, job_id);
        assert_eq!(s.step_id.step_id, 0);
        assert_eq!(s.nodes.as_deref(), Some("n[1-2]"));
        assert_eq!(s.num_tasks, 2);
        assert_eq!(s.name.as_deref(), Some("sleep"));
        assert_eq!(s.user_id, 1000);
        assert_eq!(s.partition.as_deref(), Some("debug"));
        assert_eq!(s.run_time, 8);
        assert_eq!(s.node_inx.as_ref().map(|b| b.count_ones()), Some(2));
        // one step by id; another id of the job answers no records
        let m = step_info_msg(&c, &ask(job_id, 0), 1010, V::V24_11).unwrap();
        assert_eq!(m.job_steps.len(), 1);
        let m = step_info_msg(&c, &ask(job_id, 7), 1010, V::V24_11).unwrap();
        assert!(m.job_steps.is_empty());
        // an unknown job is an error, as is asking with nothing new
        assert_eq!(
            step_info_msg(&c, &ask(job_id + 100, NO_VAL), 1010, V::V24_11),
            Err(ESLURM_INVALID_JOB_ID)
        );
        let mut req = ask(NO_VAL, NO_VAL);
        req.last_update = c.last_job_update() + 1;
        assert_eq!(
            step_info_msg(&c, &req, 1010, V::V24_11),
            Err(SLURM_NO_CHANGE_IN_DATA)
        );
    }

    #[test]
    fn a_running_batch_job_has_its_batch_step() {
        let (mut c, job_id) = running_step();
        let host = c.jobs()[&job_id].alloc[0].node;
        let m = step_info_msg(&c, &ask(job_id, BATCH_SCRIPT), 1010, V::V22_05).unwrap();
        assert!(m.job_steps.is_empty(), "an allocation has no batch step");
        let j = c.jobs_mut().get_mut(&job_id).unwrap();
        j.batch_host = Some(host);
        j.req
            .modify(|d| d.script = Some("#!/bin/sh\n".into()))
            .unwrap();
        let m = step_info_msg(&c, &ask(job_id, BATCH_SCRIPT), 1010, V::V22_05).unwrap();
        assert_eq!(m.job_steps.len(), 1);
        let s = &m.job_steps[0];
        assert_eq!(s.name.as_deref(), Some("batch"));
        assert_eq!(s.nodes.as_deref(), Some("n1"));
        assert_eq!(s.num_tasks, 1);
    }
}
