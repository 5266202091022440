//! The snapshot's records in their current shape: jobs, nodes' state, the
//! jobs in special exit and the cores jobs hold. Decoding gives values
//! (names resolved against the configuration); applying them to the
//! controller is a separate step, so that older shapes can be lifted in
//! between ([`super::migrate`]).

use super::shared::{bad, get_user, put_user, req_str, version, DecResult};
use crate::state::job::{Job, JobCtl, JobState, NodeAlloc};
use crate::state::node::{Base, DownCause, GresAlloc, Node};
use crate::state::req::JobReq;
use crate::state::{Controller, Time};
use slurm_wire::pack::{Reader, Writer};
use slurm_wire::ProtocolVersion;

fn job_state_code(s: JobState) -> u8 {
    match s {
        JobState::Pending => 0,
        JobState::Running => 1,
        JobState::Complete => 2,
        JobState::Cancelled => 3,
        JobState::Failed => 4,
        JobState::Timeout => 5,
        JobState::NodeFail => 6,
        JobState::OutOfMemory => 7,
    }
}

fn job_state_of(c: u8) -> Option<JobState> {
    Some(match c {
        0 => JobState::Pending,
        1 => JobState::Running,
        2 => JobState::Complete,
        3 => JobState::Cancelled,
        4 => JobState::Failed,
        5 => JobState::Timeout,
        6 => JobState::NodeFail,
        7 => JobState::OutOfMemory,
        _ => return None,
    })
}

/// How a shape writes a job's request.
pub(super) type PutReq = fn(&mut Writer, &Job);
/// How a shape reads a job's request, given the job's submit version.
pub(super) type ReadReq = fn(&mut Reader<'_>, ProtocolVersion) -> DecResult<JobReq>;

pub(super) fn put_job(w: &mut Writer, c: &Controller, j: &Job, put_req: PutReq) {
    let node_name = |i: usize| c.nodes().get(i).map(|n| n.name().to_string());
    w.u32(j.job_id);
    put_user(w, &j.user);
    w.str(c.conf().partitions.get(j.part).map(|p| p.name()));
    w.u8(job_state_code(j.state));
    w.count(j.completing.len());
    for &i in &j.completing {
        w.str(node_name(i).as_deref());
    }
    w.u32(j.state_reason);
    w.str(j.state_desc.as_deref());
    for t in [j.submit_time, j.eligible_time, j.start_time, j.end_time] {
        w.time(t);
    }
    w.u32(j.time_limit);
    w.u32(j.priority);
    w.u32(j.min_nodes);
    w.u32(j.max_nodes);
    w.u32(j.num_tasks);
    w.u16(j.cpus_per_task);
    w.u32(j.min_cpus);
    w.u64(j.mem);
    w.bool(j.mem_per_cpu);
    w.count(j.alloc.len());
    for a in &j.alloc {
        w.str(node_name(a.node).as_deref());
        w.u16(a.cpus);
        w.u64(a.mem);
        w.count(a.gres.len());
        for g in &a.gres {
            w.str(Some(&g.name));
            w.str(g.type_name.as_deref());
            w.u32(g.total);
            w.count(g.indices.len());
            for i in &g.indices {
                w.u32(*i);
            }
        }
    }
    w.str(j.batch_host.and_then(node_name).as_deref());
    w.u32(j.exit_code);
    w.u32(j.derived_ec);
    w.u16(j.submit_version.to_wire());
    put_req(w, j);
    w.bool(j.launch_failed);
    w.u32(j.cancelled_by.unwrap_or(u32::MAX));
    w.u16(j.ctl.restart_cnt);
}

/// A job record; None for one whose partition is gone (dropped).
pub(super) fn get_job(
    r: &mut Reader<'_>,
    c: &Controller,
    read_req: ReadReq,
) -> DecResult<Option<Job>> {
    let node = |n: Option<String>| n.and_then(|n| c.node_index(&n));
    let job_id = r.u32()?;
    let user = get_user(r)?;
    let part_name = r.str()?;
    let code = r.u8()?;
    let state = job_state_of(code).ok_or_else(|| bad(r, "job state", u64::from(code)))?;
    let n = r.count(4)?;
    let mut completing = Vec::with_capacity(n);
    for _ in 0..n {
        if let Some(i) = node(r.str()?) {
            completing.push(i);
        }
    }
    let state_reason = r.u32()?;
    let state_desc = r.str()?;
    let submit_time = r.time()?;
    let eligible_time = r.time()?;
    let start_time = r.time()?;
    let end_time = r.time()?;
    let time_limit = r.u32()?;
    let priority = r.u32()?;
    let min_nodes = r.u32()?;
    let max_nodes = r.u32()?;
    let num_tasks = r.u32()?;
    let cpus_per_task = r.u16()?;
    let min_cpus = r.u32()?;
    let mem = r.u64()?;
    let mem_per_cpu = r.bool()?;
    let n = r.count(14)?;
    let mut alloc = Vec::with_capacity(n);
    let mut lost_node = false;
    for _ in 0..n {
        let name = r.str()?;
        let cpus = r.u16()?;
        let amem = r.u64()?;
        let g = r.count(12)?;
        let mut gres = Vec::with_capacity(g);
        for _ in 0..g {
            let gname = req_str(r)?;
            let type_name = r.str()?;
            let total = r.u32()?;
            let k = r.count(4)?;
            let mut indices = Vec::with_capacity(k);
            for _ in 0..k {
                indices.push(r.u32()?);
            }
            gres.push(GresAlloc {
                name: gname,
                type_name,
                indices,
                total,
            });
        }
        match node(name) {
            Some(i) => alloc.push(NodeAlloc {
                node: i,
                cpus,
                mem: amem,
                gres,
                cores: Vec::new(),
            }),
            None => lost_node = true,
        }
    }
    let batch_host = node(r.str()?);
    let exit_code = r.u32()?;
    let derived_ec = r.u32()?;
    let submit_version = version(r)?;
    let req = read_req(r, submit_version)?;
    let launch_failed = r.bool()?;
    let cancelled_by = Some(r.u32()?).filter(|u| *u != u32::MAX);
    let ctl = JobCtl {
        restart_cnt: r.u16()?,
        special_exit: false,
    };
    let gres_req = req
        .tres_per_node()
        .and_then(|t| crate::gres::parse_per_node(t).ok())
        .unwrap_or_default();
    let part = part_name
        .and_then(|p| c.conf().partition_index(&p))
        .or(c.conf().default_partition);
    let Some(part) = part else {
        tracing::error!(
            job_id,
            "saved job's partition is gone and there is no default: dropped"
        );
        return Ok(None);
    };
    let mut j = Job {
        job_id,
        user: user.into(),
        part,
        state,
        completing,
        state_reason,
        state_desc,
        submit_time,
        eligible_time,
        start_time,
        end_time,
        time_limit,
        priority,
        min_nodes,
        max_nodes,
        num_tasks,
        cpus_per_task,
        min_cpus,
        mem,
        mem_per_cpu,
        gres_req,
        alloc,
        batch_host,
        exit_code,
        derived_ec,
        req,
        submit_version,
        launch_failed,
        cancelled_by,
        ctl,
    };
    if lost_node && j.state == JobState::Running {
        tracing::error!(
            job_id,
            "a node of the saved job is no longer configured: NODE_FAIL"
        );
        j.state = JobState::NodeFail;
        j.state_reason = crate::state::job::reason::FAIL_DOWN_NODE;
    }
    Ok(Some(j))
}

fn base_code(b: Base) -> u8 {
    match b {
        Base::Unknown => 0,
        Base::Up => 1,
        Base::Down => 2,
        Base::Future => 3,
    }
}

fn cause_code(c: Option<DownCause>) -> u8 {
    match c {
        None => 0,
        Some(DownCause::NotResponding) => 1,
        Some(DownCause::Admin) => 2,
        Some(DownCause::InvalidRegistration) => 3,
        Some(DownCause::Config) => 4,
    }
}

fn put_node(w: &mut Writer, n: &Node) {
    w.str(Some(n.name()));
    w.u8(base_code(n.base));
    w.u8(cause_code(n.down_cause));
    w.bool(n.drain);
    w.str(n.reason.as_deref());
    w.u32(n.reason_uid);
    w.time(n.reason_time);
    w.u16(n.protocol_version.map(|v| v.to_wire()).unwrap_or(0));
    w.time(n.last_busy);
}

/// A node's saved administrative state; `index` None for a node no longer
/// configured (forgotten).
pub(super) struct SavedNode {
    index: Option<usize>,
    base: Base,
    down_cause: Option<DownCause>,
    drain: bool,
    reason: Option<String>,
    reason_uid: u32,
    reason_time: Time,
    protocol_version: Option<ProtocolVersion>,
    last_busy: Time,
}

fn get_node(r: &mut Reader<'_>, c: &Controller) -> DecResult<SavedNode> {
    let name = r.str()?;
    let b = r.u8()?;
    let base = match b {
        0 => Base::Unknown,
        1 => Base::Up,
        2 => Base::Down,
        3 => Base::Future,
        _ => return Err(bad(r, "node base state", u64::from(b))),
    };
    let down_cause = match r.u8()? {
        0 => None,
        1 => Some(DownCause::NotResponding),
        2 => Some(DownCause::Admin),
        3 => Some(DownCause::InvalidRegistration),
        _ => Some(DownCause::Config),
    };
    Ok(SavedNode {
        index: name.and_then(|n| c.node_index(&n)),
        base,
        down_cause,
        drain: r.bool()?,
        reason: r.str()?,
        reason_uid: r.u32()?,
        reason_time: r.time()?,
        protocol_version: ProtocolVersion::from_wire(r.u16()?),
        last_busy: r.time()?,
    })
}

impl SavedNode {
    fn apply(self, c: &mut Controller) {
        if let Some(n) = self.index.and_then(|i| c.nodes_mut().get_mut(i)) {
            n.base = self.base;
            n.down_cause = self.down_cause;
            n.drain = self.drain;
            n.reason = self.reason;
            n.reason_uid = self.reason_uid;
            n.reason_time = self.reason_time;
            n.protocol_version = self.protocol_version;
            n.last_busy = self.last_busy;
        }
    }
}

/// What every format's body starts with: the next job id, the nodes'
/// state and the jobs.
pub(super) struct Common {
    next_job_id: u32,
    nodes: Vec<SavedNode>,
    jobs: Vec<Job>,
}

pub(super) fn put_common(w: &mut Writer, c: &Controller, put_req: PutReq) {
    w.u32(c.next_job_id());
    w.count(c.nodes().len());
    for n in c.nodes().iter() {
        put_node(w, n);
    }
    w.count(c.jobs().len());
    for j in c.jobs().values() {
        put_job(w, c, j, put_req);
    }
}

pub(super) fn get_common(
    r: &mut Reader<'_>,
    c: &Controller,
    read_req: ReadReq,
) -> DecResult<Common> {
    let next_job_id = r.u32()?.max(1);
    let n = r.count(8)?;
    let nodes = (0..n)
        .map(|_| get_node(r, c))
        .collect::<DecResult<Vec<_>>>()?;
    let n = r.count(64)?;
    let mut jobs = Vec::with_capacity(n);
    for _ in 0..n {
        jobs.extend(get_job(r, c, read_req)?);
    }
    Ok(Common {
        next_job_id,
        nodes,
        jobs,
    })
}

impl Common {
    pub(super) fn apply(self, c: &mut Controller) {
        c.set_next_job_id(self.next_job_id);
        for n in self.nodes {
            n.apply(c);
        }
        for j in self.jobs {
            c.jobs_mut().insert(j.job_id, j);
        }
    }
}

/// Job control state beyond the job record: the jobs held in the special
/// exit state.
pub(super) fn put_special_exit(w: &mut Writer, c: &Controller) {
    let special: Vec<u32> = c
        .jobs()
        .values()
        .filter(|j| j.ctl.special_exit)
        .map(|j| j.job_id)
        .collect();
    w.count(special.len());
    for id in special {
        w.u32(id);
    }
}

pub(super) fn get_special_exit(r: &mut Reader<'_>) -> DecResult<Vec<u32>> {
    let n = r.count(4)?;
    (0..n).map(|_| r.u32()).collect()
}

pub(super) fn apply_special_exit(ids: Vec<u32>, c: &mut Controller) {
    for id in ids {
        if let Some(j) = c.jobs_mut().get_mut(&id) {
            j.ctl.special_exit = true;
        }
    }
}

/// The cores a job holds (or held) on each of its nodes, in the order of
/// its allocation.
pub(super) struct JobCores {
    job_id: u32,
    per_node: Vec<Vec<u16>>,
}

pub(super) fn put_cores(w: &mut Writer, c: &Controller) {
    let running: Vec<&Job> = c
        .jobs()
        .values()
        .filter(|j| j.alloc.iter().any(|a| !a.cores.is_empty()))
        .collect();
    w.count(running.len());
    for j in running {
        w.u32(j.job_id);
        w.count(j.alloc.len());
        for a in &j.alloc {
            w.count(a.cores.len());
            for &core in &a.cores {
                w.u16(core);
            }
        }
    }
}

pub(super) fn get_cores(r: &mut Reader<'_>) -> DecResult<Vec<JobCores>> {
    let n = r.count(8)?;
    let mut all = Vec::with_capacity(n);
    for _ in 0..n {
        let job_id = r.u32()?;
        let nodes = r.count(4)?;
        let mut per_node = Vec::with_capacity(nodes);
        for _ in 0..nodes {
            let k = r.count(2)?;
            let mut cores = Vec::with_capacity(k);
            for _ in 0..k {
                cores.push(r.u16()?);
            }
            per_node.push(cores);
        }
        all.push(JobCores { job_id, per_node });
    }
    Ok(all)
}

pub(super) fn apply_cores(all: Vec<JobCores>, c: &mut Controller) {
    for JobCores { job_id, per_node } in all {
        // An allocation that lost a node since (reconfigured away) no
        // longer lines up: its cores are chosen again.
        if let Some(j) = c.jobs_mut().get_mut(&job_id) {
            if j.alloc.len() == per_node.len() {
                for (a, cores) in j.alloc.iter_mut().zip(per_node) {
                    a.cores = cores;
                }
            }
        }
    }
}
