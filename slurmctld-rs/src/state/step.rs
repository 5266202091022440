//! Job steps (what srun creates inside an allocation) and interactive
//! allocations (srun/salloc without a batch script): the state, the task
//! layout, and the commands that change them. Pure, like the rest of
//! `state`: the daemon signs the step credential and does the sending.

use super::command::{Effect, Outbound, Purpose, Reply, Time, MEM_PER_CPU};
use super::controller::Controller;
use super::error::StateError;
use super::job::{Job, JobState};
pub use super::steps::{JobSteps, SrunAddr, Step};
use slurm_wire::msg::job::ResourceAllocationResponseMsg;
use slurm_wire::msg::step::{JobStepCreateRequestMsg, StepCompleteMsg};
use slurm_wire::pack::{NO_VAL, NO_VAL16};
use slurm_wire::types::StepId;
use slurm_wire::{Message, ProtocolVersion};

use super::refuse::SLURM_AUTH_NOBODY;

/// `task_dist_states` base values (slurm.h).
pub mod dist {
    pub const CYCLIC: u32 = 0x0001;
    pub const BLOCK: u32 = 0x0002;
    pub const ARBITRARY: u32 = 0x0003;
    pub const PLANE: u32 = 0x0004;
    pub const UNKNOWN: u32 = 0x2000;
    /// The node-level part of a distribution (`SLURM_DIST_STATE_BASE`).
    pub const STATE_BASE: u32 = 0x00ff;
}

/// The task layout of a step: how many tasks on each node, and which.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Global task ids per node.
    pub tids: Vec<Vec<u32>>,
    /// The distribution actually used (UNKNOWN becomes BLOCK).
    pub task_dist: u32,
}

/// Lays out `ntasks` over nodes with `slots[i]` tasks' worth of CPUs
/// (CPUs / cpus-per-task), as upstream's block and cyclic layouts do:
/// counts come from a round-robin over the slots (spilling round-robin
/// onto every node once all slots are used); block numbers tasks
/// consecutively per node, cyclic deals them out one per node in turn.
pub fn layout(slots: &[u32], ntasks: u32, task_dist: u32) -> Layout {
    let n = slots.len();
    let base = task_dist & dist::STATE_BASE;
    let task_dist = if task_dist == dist::UNKNOWN || base == 0 {
        (task_dist & !(dist::UNKNOWN | dist::STATE_BASE)) | dist::BLOCK
    } else {
        task_dist
    };
    if n == 0 {
        return Layout {
            tids: Vec::new(),
            task_dist,
        };
    }
    let mut counts = vec![0u32; n];
    let mut placed = 0u32;
    let mut over = false;
    let mut round = 0u32;
    while placed < ntasks {
        let mut room_left = false;
        for (i, c) in counts.iter_mut().enumerate() {
            if placed >= ntasks {
                break;
            }
            if round < slots[i] || over {
                *c += 1;
                placed += 1;
                if round + 1 < slots[i] {
                    room_left = true;
                }
            }
        }
        if !room_left {
            over = true;
        }
        round += 1;
    }
    let mut tids: Vec<Vec<u32>> = counts
        .iter()
        .map(|&c| Vec::with_capacity(c as usize))
        .collect();
    if task_dist & dist::STATE_BASE == dist::CYCLIC {
        let mut t = 0u32;
        while t < ntasks {
            for (i, ids) in tids.iter_mut().enumerate() {
                if (ids.len() as u32) < counts[i] && t < ntasks {
                    ids.push(t);
                    t += 1;
                }
            }
        }
    } else {
        let mut t = 0u32;
        for (i, ids) in tids.iter_mut().enumerate() {
            for _ in 0..counts[i] {
                ids.push(t);
                t += 1;
            }
        }
    }
    Layout { tids, task_dist }
}

/// `a[1-2]`: node names of `idx` as a hostlist expression.
pub fn nodelist(nodes: &super::table::Nodes, idx: &[usize]) -> String {
    let names: Vec<&str> = idx.iter().map(|&i| nodes[i].name()).collect();
    slurm_conf::compress(&names).unwrap_or_else(|_| names.join(","))
}

/// Upstream's `READY_*` bits of RESPONSE_JOB_READY.
pub const READY_NODE_STATE: u32 = 0x01;
pub const READY_JOB_STATE: u32 = 0x02;
pub const READY_PROLOG_STATE: u32 = 0x04;

impl Controller {
    /// The job's steps (created on first use).
    fn job_steps(&mut self, job_id: u32) -> &mut JobSteps {
        self.steps.entry_or_default(job_id)
    }

    /// An interactive allocation was submitted and (maybe) started: remember
    /// srun; if it is still pending, the grant goes out when it starts.
    pub(super) fn note_interactive(&mut self, job_id: u32, srun: SrunAddr) {
        let running = self
            .jobs
            .get(&job_id)
            .is_some_and(|j| j.state == JobState::Running);
        let js = self.job_steps(job_id);
        js.srun = Some(srun);
        js.grant_pending = !running;
    }

    /// Called when a job starts: a deferred interactive grant goes to srun.
    pub(super) fn on_job_started(&mut self, job_id: u32, fx: &mut Vec<Effect>) {
        let Some(js) = self.steps.get_mut(&job_id) else {
            return;
        };
        if !js.grant_pending {
            return;
        }
        js.grant_pending = false;
        let Some(s) = js.srun.clone() else {
            return;
        };
        let Some(j) = self.jobs.get(&job_id) else {
            return;
        };
        let msg = Message::ResponseResourceAllocation(alloc_response(self, j, s.version));
        fx.push(Effect::Send(Box::new(srun_outbound(
            &s,
            s.alloc_resp_port,
            msg,
        ))));
    }

    /// Called when a job ends: its steps are gone and an interactive srun
    /// is told (SRUN_JOB_COMPLETE).
    pub(super) fn on_job_ended(&mut self, job_id: u32, fx: &mut Vec<Effect>) {
        let Some(js) = self.steps.remove(&job_id) else {
            return;
        };
        let steps = &js.steps;
        if let Some(s) = js.srun.clone() {
            let msg = Message::SrunJobComplete(slurm_wire::msg::common::StepIdMsg {
                step_id: StepId::job(job_id),
            });
            fx.push(Effect::Send(Box::new(srun_outbound(&s, s.other_port, msg))));
        }
        // An srun running a step elsewhere (inside a batch job) learns it too.
        for st in steps.values() {
            if let (Some(host), port) = (st.srun_host.clone(), st.srun_port) {
                if port == 0 || js.srun.as_ref().is_some_and(|s| s.host == host) {
                    continue;
                }
                let s = SrunAddr {
                    host,
                    alloc_resp_port: 0,
                    other_port: port,
                    version: st.start_protocol_ver,
                    uid: self.jobs.get(&job_id).map(|j| j.user.uid).unwrap_or(0),
                };
                let msg = Message::SrunJobComplete(slurm_wire::msg::common::StepIdMsg {
                    step_id: StepId {
                        sluid: 0,
                        job_id,
                        step_id: st.step_id,
                        step_het_comp: NO_VAL,
                    },
                });
                fx.push(Effect::Send(Box::new(srun_outbound(&s, port, msg))));
            }
        }
    }

    /// REQUEST_RESOURCE_ALLOCATION: submit an interactive job and try to
    /// start it now.
    pub(super) fn allocate(
        &mut self,
        now: Time,
        user: super::job::UserInfo,
        mut desc: Box<slurm_wire::msg::job_desc::JobDescMsg>,
        version: ProtocolVersion,
        resp_host: String,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        if super::refuse::allocate_checks_identity(version) {
            let admin = self.conf.is_admin(user.uid);
            if let Err(rc) = super::refuse::submit_identity(admin, &user, &desc, version) {
                return Reply::Err(rc);
            }
        }
        // An allocation has no script, whatever the request says.
        desc.script = None;
        let immediate = desc.immediate != 0;
        // Callbacks go to the host that asked: a user naming another host
        // would have the controller call it for them. (Stock also takes
        // the body's host, for federated siblings; only SlurmUser and
        // root may do that here.)
        let trusted = self.conf.is_admin(user.uid);
        let srun = SrunAddr {
            host: desc
                .resp_host
                .clone()
                .filter(|h| trusted && !h.is_empty())
                .unwrap_or(resp_host),
            alloc_resp_port: desc.alloc_resp_port,
            other_port: desc.other_port,
            version,
            uid: user.uid,
        };
        let r = self.submit(now, user, desc, version);
        let Reply::Submitted { job_id } = r else {
            return r;
        };
        self.schedule(now, fx);
        let running = self
            .jobs
            .get(&job_id)
            .is_some_and(|j| j.state == JobState::Running);
        if !running && immediate {
            self.jobs.remove(&job_id);
            self.last_job_update = now;
            return Reply::Err(StateError::CannotStartNow);
        }
        self.note_interactive(job_id, srun);
        r
    }

    /// REQUEST_COMPLETE_JOB_ALLOCATION.
    pub(super) fn complete_allocation(
        &mut self,
        now: Time,
        uid: u32,
        job_id: u32,
        job_rc: u32,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        use super::job;
        let Some(j) = self.jobs.get_mut(&job_id) else {
            return Reply::Err(StateError::InvalidJobId);
        };
        if !self.conf.owner_or_operator(uid, j.user.uid) {
            return Reply::Err(StateError::InvalidUserId);
        }
        if j.state.is_finished() {
            return Reply::Err(StateError::AlreadyDone);
        }
        j.exit_code = job_rc;
        let state = if j.state == JobState::Pending {
            j.cancelled_by = Some(uid);
            JobState::Cancelled
        } else if job_rc == 0 {
            JobState::Complete
        } else {
            j.state_reason = job::reason::FAIL_EXIT_CODE;
            JobState::Failed
        };
        tracing::info!(job_id, job_rc, "allocation complete");
        self.end_job(now, job_id, state, fx);
        self.schedule(now, fx);
        Reply::Ok
    }

    /// REQUEST_JOB_STEP_CREATE.
    pub(super) fn step_create(
        &mut self,
        now: Time,
        uid: u32,
        req: &JobStepCreateRequestMsg,
        version: ProtocolVersion,
    ) -> Result<(u32, u32), StateError> {
        let job_id = req.step_id.job_id;
        // Stock: the body names the sender (or nobody, meaning the
        // sender), and only the job's owner runs steps in it, root and
        // SlurmUser included.
        if req.user_id != SLURM_AUTH_NOBODY && req.user_id != uid {
            return Err(StateError::InvalidUserId);
        }
        let j = self.jobs.get(&job_id).ok_or(StateError::InvalidJobId)?;
        if j.user.uid != uid {
            return Err(StateError::AccessDenied);
        }
        match j.state {
            JobState::Running => {}
            JobState::Pending => return Err(StateError::JobPending),
            _ => return Err(StateError::AlreadyDone),
        }
        if !j.completing.is_empty() {
            return Err(StateError::AlreadyDone);
        }
        // Which of the job's nodes: those named, else the first ones.
        let alloc: Vec<(usize, u32)> = j
            .alloc
            .iter()
            .map(|a| (a.node, u32::from(a.cpus)))
            .collect();
        let mut chosen: Vec<(usize, u32)> = match req.node_list.as_deref().filter(|s| !s.is_empty())
        {
            Some(list) => {
                let names = crate::sched::client_hosts(&self.conf, list)
                    .map_err(|_| StateError::InvalidNodeName)?;
                let mut out = Vec::new();
                for n in names {
                    let i = self.node_index(&n).ok_or(StateError::InvalidNodeName)?;
                    let a = alloc
                        .iter()
                        .find(|a| a.0 == i)
                        .ok_or(StateError::NodeConfigUnavailable)?;
                    if !out.contains(a) {
                        out.push(*a);
                    }
                }
                out
            }
            None => {
                let skip = if req.relative != NO_VAL16 {
                    usize::from(req.relative)
                } else {
                    0
                };
                alloc.iter().skip(skip).copied().collect()
            }
        };
        if chosen.is_empty() {
            return Err(StateError::NodeConfigUnavailable);
        }
        let min_nodes = if req.min_nodes == NO_VAL || req.min_nodes == 0 {
            1
        } else {
            req.min_nodes
        } as usize;
        if min_nodes > chosen.len() {
            return Err(StateError::NodeConfigUnavailable);
        }
        let num_tasks = if req.num_tasks == NO_VAL || req.num_tasks == 0 {
            min_nodes as u32
        } else {
            req.num_tasks
        };
        // Upstream's MaxTasksPerNode default; also bounds the layout's work.
        if num_tasks > 512u32.saturating_mul(chosen.len() as u32) {
            return Err(StateError::BadTaskCount);
        }
        let cpt = if req.cpu_count != NO_VAL && req.cpu_count > 0 && num_tasks > 0 {
            (req.cpu_count / num_tasks).max(1)
        } else {
            1
        };
        // As few nodes as asked for, more (up to max_nodes) only if the
        // tasks need their CPUs. A node list names exactly the nodes.
        if req.node_list.as_deref().is_none_or(str::is_empty) {
            let max_nodes = if req.max_nodes == NO_VAL || req.max_nodes == 0 {
                chosen.len()
            } else {
                (req.max_nodes as usize).clamp(min_nodes, chosen.len())
            };
            let mut k = min_nodes;
            while k < max_nodes && chosen[..k].iter().map(|a| a.1 / cpt).sum::<u32>() < num_tasks {
                k += 1;
            }
            chosen.truncate(k);
        }
        let slots: Vec<u32> = chosen.iter().map(|a| (a.1 / cpt).max(1)).collect();
        let lay = layout(&slots, num_tasks, req.task_dist);
        let nodes: Vec<usize> = chosen.iter().map(|a| a.0).collect();
        // The oldest protocol among srun and the step's slurmds.
        let start_protocol_ver = nodes
            .iter()
            .filter_map(|&i| self.nodes[i].protocol_version)
            .fold(version, |a, b| a.min(b));
        let js = self.job_steps(job_id);
        let step_id = js.next_step_id;
        js.next_step_id += 1;
        let step = Step {
            step_id,
            name: req.name.clone(),
            done: vec![false; nodes.len()],
            nodes,
            tids: lay.tids,
            num_tasks,
            task_dist: lay.task_dist,
            cpus_per_task: u16::try_from(cpt).unwrap_or(u16::MAX),
            start_time: now,
            start_protocol_ver,
            srun_host: req.host.clone(),
            srun_port: req.port,
            srun_pid: req.srun_pid,
            submit_line: req.submit_line.clone(),
            exit_code: 0,
        };
        let names = nodelist(&self.nodes, &step.nodes);
        tracing::info!(job_id, step_id, nodes = %names, tasks = num_tasks, "step created");
        self.job_steps(job_id).steps.insert(step_id, step);
        self.last_job_update = now;
        Ok((job_id, step_id))
    }

    /// REQUEST_STEP_COMPLETE (from a slurmd, or srun for nodes that failed).
    pub(super) fn step_complete(
        &mut self,
        now: Time,
        uid: u32,
        m: &StepCompleteMsg,
    ) -> Result<(), StateError> {
        let job_id = m.step_id.job_id;
        let Some(j) = self.jobs.get(&job_id) else {
            return Err(StateError::InvalidJobId);
        };
        if !self.conf.owner_or_operator(uid, j.user.uid) {
            return Err(StateError::InvalidUserId);
        }
        let Some(js) = self.steps.get_mut(&job_id) else {
            return Ok(()); // the step is already gone
        };
        let Some(st) = js.steps.get_mut(&m.step_id.step_id) else {
            return Ok(());
        };
        let last = (m.range_last as usize).min(st.done.len().saturating_sub(1));
        for d in st
            .done
            .iter_mut()
            .take(last + 1)
            .skip(m.range_first as usize)
        {
            *d = true;
        }
        st.exit_code = st.exit_code.max(m.step_rc);
        if st.done.iter().all(|&d| d) {
            tracing::info!(
                job_id,
                step_id = st.step_id,
                rc = st.exit_code,
                "step complete"
            );
            js.steps.remove(&m.step_id.step_id);
            self.last_job_update = now;
        }
        Ok(())
    }
}

/// RESPONSE_RESOURCE_ALLOCATION / RESPONSE_JOB_ALLOCATION_INFO for a
/// running job, in version `v` (field values as stock sends them). The
/// group name is left for the shell to fill in as the reply leaves
/// ([`crate::users::name_group`]): the state machine does no lookups.
pub fn alloc_response(
    c: &Controller,
    j: &Job,
    v: ProtocolVersion,
) -> ResourceAllocationResponseMsg {
    let runs = super::msgs::runs(j.alloc.iter().map(|a| a.cpus));
    let start_ver = j
        .alloc
        .iter()
        .filter_map(|a| c.nodes[a.node].protocol_version)
        .fold(v, |a, b| a.min(b));
    ResourceAllocationResponseMsg {
        account: j.req.account().map(str::to_string),
        batch_host: j.batch_host.map(|i| c.nodes[i].name().to_string()),
        environment: Vec::new(),
        error_code: 0,
        gid: j.user.gid,
        step_id: StepId::job(j.job_id),
        node_cnt: j.alloc.len() as u32,
        node_list: Some(super::msgs::job_nodelist(&c.nodes, j)),
        ntasks_per_board: 0,
        ntasks_per_core: 0xffff,
        ntasks_per_tres: 0,
        ntasks_per_socket: 0xffff,
        cpus_per_node: runs.iter().map(|r| r.0).collect(),
        cpu_count_reps: runs.iter().map(|r| r.1).collect(),
        partition: Some(c.conf.partitions[j.part].name().to_string()),
        pn_min_memory: if j.mem_per_cpu {
            j.mem | MEM_PER_CPU
        } else {
            j.mem
        },
        qos: j.req.qos().map(str::to_string),
        resv_name: j.req.reservation().map(str::to_string),
        start_protocol_ver: start_ver.to_wire(),
        tres_per_node: j.req.tres_per_node().map(str::to_string),
        tres_per_task: j.req.tres_per_task().map(str::to_string),
        uid: j.user.uid,
        user_name: j.user.name.clone(),
        ..Default::default()
    }
}

/// A pending allocation's immediate answer: the job id, no nodes.
pub fn alloc_pending_response(job_id: u32, v: ProtocolVersion) -> ResourceAllocationResponseMsg {
    let _ = v;
    ResourceAllocationResponseMsg {
        step_id: StepId::job(job_id),
        ntasks_per_core: 0xffff,
        ntasks_per_socket: 0xffff,
        ..Default::default()
    }
}

fn srun_outbound(s: &SrunAddr, port: u16, msg: Message) -> Outbound {
    Outbound {
        node: format!("srun@{}", s.host),
        addr: s.host.clone(),
        port,
        version: s.version,
        msg,
        purpose: Purpose::Srun { uid: s.uid },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(l: &Layout) -> Vec<Vec<u32>> {
        l.tids.clone()
    }

    #[test]
    fn block_fills_round_robin_counts_then_numbers_per_node() {
        // One task per node when there are as many tasks as nodes.
        assert_eq!(
            ids(&layout(&[16, 16], 2, dist::UNKNOWN)),
            vec![vec![0], vec![1]]
        );
        // Counts by round-robin over the slots, ids consecutive per node.
        assert_eq!(
            ids(&layout(&[4, 4], 5, dist::BLOCK)),
            vec![vec![0, 1, 2], vec![3, 4]]
        );
        // Heterogeneous: the small node fills up first.
        assert_eq!(
            ids(&layout(&[1, 3], 4, dist::BLOCK)),
            vec![vec![0], vec![1, 2, 3]]
        );
        // Beyond every slot: spread over all nodes.
        assert_eq!(
            ids(&layout(&[1, 1], 4, dist::BLOCK)),
            vec![vec![0, 1], vec![2, 3]]
        );
        assert_eq!(layout(&[2], 1, dist::UNKNOWN).task_dist, dist::BLOCK);
        assert!(layout(&[], 3, dist::BLOCK).tids.is_empty());
    }

    use crate::state::testkit::{self, apply_all, controller, reg_bare, user};
    use crate::state::{Command, Reply};
    use slurm_wire::msg::job_desc::JobDescMsg;

    fn cluster() -> Controller {
        let text = "ClusterName=t\nSlurmctldHost=ctl\nSlurmUser=root\n\
            NodeName=n[1-2] CPUs=4 RealMemory=1000\n\
            PartitionName=debug Nodes=n[1-2] Default=YES State=UP\n";
        let mut c = controller(text);
        let regs = [
            ("n1", ProtocolVersion::V26_05),
            ("n2", ProtocolVersion::V24_11),
        ]
        .map(|(n, v)| reg_bare(n, 4, 1000, v));
        apply_all(&mut c, 1000, regs);
        c
    }

    fn allocate(c: &mut Controller, nodes: u32, tasks: u32) -> (Reply, Vec<Effect>) {
        let desc = JobDescMsg {
            min_nodes: nodes,
            max_nodes: nodes,
            num_tasks: tasks,
            min_cpus: 1,
            alloc_resp_port: 4000,
            other_port: 4001,
            script: Some("ignored for an allocation".into()),
            // A user naming a host for the controller to call: ignored.
            resp_host: Some("192.0.2.1".into()),
            ..JobDescMsg::unset()
        };
        testkit::allocate(c, 1001, user(1000, 1000), desc)
    }

    fn step_req(job_id: u32, nodes: u32, tasks: u32) -> Box<JobStepCreateRequestMsg> {
        Box::new(testkit::step_req(job_id, nodes, tasks))
    }

    fn sends(fx: &[Effect]) -> Vec<(String, String)> {
        fx.iter()
            .map(|Effect::Send(o)| (o.node.clone(), o.msg.msg_type().name().to_string()))
            .collect()
    }

    /// `scancel 12.0`: only that step's nodes are asked to signal it, and
    /// only for its owner (or root/SlurmUser), as stock's job_step_signal.
    #[test]
    fn a_single_step_is_signalled_on_its_nodes() {
        let mut c = cluster();
        let job_id = testkit::job_id(allocate(&mut c, 2, NO_VAL).0);
        let create = Command::StepCreate {
            uid: 1000,
            req: step_req(job_id, 1, 1),
            version: ProtocolVersion::V24_11,
        };
        assert_eq!(c.apply(1002, create).0, Reply::Step { job_id, step_id: 0 });
        let on = c.steps[&job_id].steps[&0].nodes.clone();
        assert_eq!(on.len(), 1);
        let sig = |uid, step_id| {
            let target = crate::state::SignalTarget::Step { job_id, step_id };
            crate::state::testkit::signal_cmd(uid, target, 15, 0)
        };
        let (r, fx) = c.apply(1003, sig(1000, 0));
        assert_eq!(r, Reply::Ok);
        let sent: Vec<_> = fx
            .iter()
            .map(|Effect::Send(o)| match &o.msg {
                Message::RequestSignalTasks(m) => (o.node.clone(), m.step_id.step_id, m.signal),
                m => panic!("{m:?}"),
            })
            .collect();
        assert_eq!(sent, [(c.nodes[on[0]].name().to_string(), 0, 15)]);
        for (uid, step, rc) in [
            (1001, 0, StateError::InvalidUserId),
            (1000, 7, StateError::InvalidJobId),
        ] {
            let (r, fx) = c.apply(1004, sig(uid, step));
            assert_eq!(r, Reply::Err(rc), "uid {uid} step {step}");
            assert!(fx.is_empty());
        }
        // 26.05 checks access first, with another errno.
        let mut new = sig(1001, 0);
        if let Command::Signal { version, .. } = &mut new {
            *version = ProtocolVersion::V26_05;
        }
        assert_eq!(c.apply(1004, new).0, Reply::Err(StateError::AccessDenied));
        // root may; the job and its step are untouched.
        assert_eq!(c.apply(1005, sig(0, 0)).0, Reply::Ok);
        assert_eq!(c.jobs[&job_id].state, JobState::Running);
        assert!(c.steps[&job_id].steps.contains_key(&0));
    }

    /// srun -N2 hostname: allocation, step, both nodes complete, srun ends
    /// the allocation; the nodes are told to clean up and srun is told.
    #[test]
    fn interactive_allocation_and_step_life() {
        let mut c = cluster();
        let (r, fx) = allocate(&mut c, 2, NO_VAL);
        let job_id = testkit::job_id(r);
        // Granted at once: no batch launch, no deferred grant.
        assert!(sends(&fx).is_empty(), "{:?}", sends(&fx));
        assert_eq!(c.jobs[&job_id].state, JobState::Running);
        let other = alloc_response(&c, &c.jobs[&job_id], ProtocolVersion::V24_11);
        assert_eq!(other.node_list.as_deref(), Some("n[1-2]"));
        assert_eq!(other.cpus_per_node, vec![1]);
        assert_eq!(other.cpu_count_reps, vec![2]);

        let srun = c.steps[&job_id].srun.as_ref().map(|s| s.host.clone());
        assert_eq!(
            srun.as_deref(),
            Some("10.0.0.9"),
            "callbacks go to the sender"
        );

        // A stranger may not create steps in it, nor root (stock's rule),
        // nor anyone naming another user in the body.
        for (uid, user_id, rc) in [
            (1001, 99, StateError::AccessDenied),
            (0, 99, StateError::AccessDenied),
            (1000, 0, StateError::InvalidUserId),
        ] {
            let mut req = step_req(job_id, 2, 2);
            req.user_id = user_id;
            let cmd = Command::StepCreate {
                uid,
                req,
                version: ProtocolVersion::V26_05,
            };
            assert_eq!(c.apply(1002, cmd).0, Reply::Err(rc), "uid {uid}");
        }
        let (r, _) = c.apply(
            1002,
            Command::StepCreate {
                uid: 1000,
                req: step_req(job_id, 2, 2),
                version: ProtocolVersion::V26_05,
            },
        );
        assert_eq!(r, Reply::Step { job_id, step_id: 0 });
        let st = &c.steps[&job_id].steps[&0];
        assert_eq!(st.tids, vec![vec![0], vec![1]]);
        // n2 registered with 24.11: the whole step speaks it.
        assert_eq!(st.start_protocol_ver, ProtocolVersion::V24_11);

        let done = |first, last| Command::StepComplete {
            uid: 0,
            msg: Box::new(StepCompleteMsg {
                step_id: StepId {
                    sluid: 0,
                    job_id,
                    step_id: 0,
                    step_het_comp: NO_VAL,
                },
                range_first: first,
                range_last: last,
                ..Default::default()
            }),
        };
        c.apply(1003, done(1, 1));
        assert!(
            c.steps[&job_id].steps.contains_key(&0),
            "n1 has not reported yet"
        );
        c.apply(1003, done(0, 0));
        assert!(c.steps[&job_id].steps.is_empty());

        let (r, fx) = c.apply(
            1004,
            Command::CompleteAllocation {
                uid: 1000,
                job_id,
                job_rc: 0,
            },
        );
        assert_eq!(r, Reply::Ok);
        assert_eq!(c.jobs[&job_id].state, JobState::Complete);
        let s = sends(&fx);
        assert!(
            s.contains(&("srun@10.0.0.9".into(), "SRUN_JOB_COMPLETE".into())),
            "{s:?}"
        );
        assert_eq!(
            s.iter().filter(|x| x.1 == "REQUEST_TERMINATE_JOB").count(),
            2,
            "{s:?}"
        );
        // Steps of a finished job cannot be created.
        let (r, _) = c.apply(
            1005,
            Command::StepCreate {
                uid: 1000,
                req: step_req(job_id, 1, 1),
                version: ProtocolVersion::V24_11,
            },
        );
        assert_eq!(r, Reply::Err(StateError::AlreadyDone));
    }

    /// A pending allocation is granted later by a message to srun.
    #[test]
    fn deferred_grant_goes_to_srun() {
        let mut c = cluster();
        // The first takes every CPU.
        let (r1, _) = allocate(&mut c, 2, 8);
        let (r2, fx) = allocate(&mut c, 2, 2);
        let (Reply::Submitted { job_id: j1 }, Reply::Submitted { job_id: j2 }) = (r1, r2) else {
            panic!()
        };
        assert!(sends(&fx).is_empty());
        assert_eq!(c.jobs[&j2].state, JobState::Pending);
        let (_, fx) = c.apply(
            1010,
            Command::CompleteAllocation {
                uid: 1000,
                job_id: j1,
                job_rc: 0,
            },
        );
        assert!(fx
            .iter()
            .all(|Effect::Send(o)| !matches!(o.msg, Message::ResponseResourceAllocation(_))));
        // Granted once the first allocation's nodes have cleaned up.
        let fx = testkit::epilogs(&mut c, 1010, j1);
        let grant: Vec<_> = fx
            .iter()
            .filter_map(|Effect::Send(o)| match &o.msg {
                Message::ResponseResourceAllocation(m) => Some((o.port, m.node_list.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(grant, vec![(4000, Some("n[1-2]".to_string()))]);
    }

    #[test]
    fn cyclic_deals_tasks_in_turn() {
        let l = layout(&[4, 4], 5, dist::CYCLIC);
        assert_eq!(l.tids, vec![vec![0, 2, 4], vec![1, 3]]);
        assert_eq!(l.task_dist, dist::CYCLIC);
    }

    #[test]
    fn every_task_placed_once() {
        for slots in [vec![1u32], vec![2, 3, 1], vec![8, 8, 8, 8]] {
            for n in 0..40u32 {
                for d in [dist::BLOCK, dist::CYCLIC] {
                    let l = layout(&slots, n, d);
                    let mut all: Vec<u32> = l.tids.concat();
                    all.sort_unstable();
                    assert_eq!(all, (0..n).collect::<Vec<_>>(), "{slots:?} {n} {d}");
                }
            }
        }
    }
}
