//! The snapshot's steps section (format 2 on): running srun steps and the
//! srun callback addresses of interactive allocations. Without it a
//! snapshot forgot every step, and a restart after one lost them (their
//! completions then named steps the controller did not know).

use super::shared::{bad, DecResult};
use crate::state::step::{JobSteps, SrunAddr, Step};
use crate::state::Controller;
use slurm_wire::pack::{Reader, Writer};
use slurm_wire::ProtocolVersion;

fn put_version(w: &mut Writer, v: ProtocolVersion) {
    w.u16(v.to_wire());
}

fn get_version(r: &mut Reader<'_>) -> DecResult<ProtocolVersion> {
    let raw = r.u16()?;
    ProtocolVersion::from_wire(raw).ok_or_else(|| bad(r, "protocol version", u64::from(raw)))
}

pub(super) fn put_steps(w: &mut Writer, c: &Controller) {
    let node_name = |i: usize| c.nodes().get(i).map(|n| n.name().to_string());
    w.count(c.steps().len());
    for (job_id, js) in c.steps() {
        w.u32(*job_id);
        w.u32(js.next_step_id);
        w.bool(js.grant_pending);
        match &js.srun {
            None => w.bool(false),
            Some(s) => {
                w.bool(true);
                w.str(Some(&s.host));
                w.u16(s.alloc_resp_port);
                w.u16(s.other_port);
                put_version(w, s.version);
                w.u32(s.uid);
            }
        }
        w.count(js.steps.len());
        for st in js.steps.values() {
            w.u32(st.step_id);
            w.str(st.name.as_deref());
            w.count(st.nodes.len());
            for &i in &st.nodes {
                w.str(node_name(i).as_deref());
            }
            w.count(st.tids.len());
            for t in &st.tids {
                w.count(t.len());
                for x in t {
                    w.u32(*x);
                }
            }
            w.u32(st.num_tasks);
            w.u32(st.task_dist);
            w.u16(st.cpus_per_task);
            w.time(st.start_time);
            put_version(w, st.start_protocol_ver);
            w.str(st.srun_host.as_deref());
            w.u16(st.srun_port);
            w.u32(st.srun_pid);
            w.str(st.submit_line.as_deref());
            w.count(st.done.len());
            for d in &st.done {
                w.bool(*d);
            }
            w.u32(st.exit_code);
        }
    }
}

/// Reads the section (node names resolved against `c`'s configuration).
/// A step on a node that left the configuration is dropped.
pub(super) fn get_steps(r: &mut Reader<'_>, c: &Controller) -> DecResult<Vec<(u32, JobSteps)>> {
    let n = r.count(13)?;
    let mut all = Vec::with_capacity(n);
    for _ in 0..n {
        let job_id = r.u32()?;
        let next_step_id = r.u32()?;
        let grant_pending = r.bool()?;
        let srun = if r.bool()? {
            let host = r.str()?.unwrap_or_default();
            Some(SrunAddr {
                host,
                alloc_resp_port: r.u16()?,
                other_port: r.u16()?,
                version: get_version(r)?,
                uid: r.u32()?,
            })
        } else {
            None
        };
        let ns = r.count(40)?;
        let mut js = JobSteps {
            next_step_id,
            srun,
            grant_pending,
            ..Default::default()
        };
        for _ in 0..ns {
            let step_id = r.u32()?;
            let name = r.str()?;
            let nn = r.count(4)?;
            let mut nodes = Vec::with_capacity(nn);
            let mut lost = false;
            for _ in 0..nn {
                match r.str()?.and_then(|n| c.node_index(&n)) {
                    Some(i) => nodes.push(i),
                    None => lost = true,
                }
            }
            let nt = r.count(4)?;
            let mut tids = Vec::with_capacity(nt);
            for _ in 0..nt {
                let k = r.count(4)?;
                tids.push((0..k).map(|_| r.u32()).collect::<DecResult<Vec<u32>>>()?);
            }
            let num_tasks = r.u32()?;
            let task_dist = r.u32()?;
            let cpus_per_task = r.u16()?;
            let start_time = r.time()?;
            let start_protocol_ver = get_version(r)?;
            let srun_host = r.str()?;
            let srun_port = r.u16()?;
            let srun_pid = r.u32()?;
            let submit_line = r.str()?;
            let nd = r.count(1)?;
            let done = (0..nd)
                .map(|_| r.bool())
                .collect::<DecResult<Vec<bool>>>()?;
            let exit_code = r.u32()?;
            if lost {
                tracing::warn!(job_id, step_id, "step dropped: one of its nodes is gone");
                continue;
            }
            js.steps.insert(
                step_id,
                Step {
                    step_id,
                    name,
                    nodes,
                    tids,
                    num_tasks,
                    task_dist,
                    cpus_per_task,
                    start_time,
                    start_protocol_ver,
                    srun_host,
                    srun_port,
                    srun_pid,
                    submit_line,
                    done,
                    exit_code,
                },
            );
        }
        all.push((job_id, js));
    }
    Ok(all)
}

/// Sets the steps read by [`get_steps`] of the jobs `c` holds (those of
/// others are dropped).
pub(super) fn apply_steps(all: Vec<(u32, JobSteps)>, c: &mut Controller) {
    for (job_id, js) in all {
        if c.jobs().contains_key(&job_id) {
            c.restore_steps(job_id, js);
        }
    }
}
