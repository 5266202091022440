//! The controller as a pure state machine: [`Command`]s in, a [`Reply`] and
//! [`Effect`]s out, time passed in. No I/O happens here, so the same
//! commands replayed give the same state (tests, simulation, and later the
//! StateSaveLocation write-ahead log, which is simply the command stream).

pub mod array;
pub mod array_ctl;
pub mod arrays;
pub mod command;
pub mod config;
pub mod control;
pub mod controller;
pub mod counters;
pub mod dep_syntax;
pub mod depend;
pub mod deps;
pub mod error;
pub mod job;
pub mod kill_jobs;
pub mod mem_limit;
pub mod msgs;
pub mod node;
pub mod outcome;
pub mod partition;
pub mod queue;
pub mod refuse;
pub mod req;
pub mod signal;
pub mod step;
pub mod steps;
pub mod submit;
pub mod table;
pub mod tasks;
#[cfg(test)]
pub(crate) mod testkit;

use crate::sched;
use config::ClusterConf;
use job::{Job, JobState, NodeAlloc};
use node::{Base, DownCause, Node, Reported};
use slurm_wire::errno::ESLURMD_PROLOG_FAILED;
use slurm_wire::msg::node::{SlurmNodeRegistrationStatusMsg, UpdateNodeMsg};
use slurm_wire::pack::{INFINITE, NO_VAL};
use slurm_wire::{Message, ProtocolVersion};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

pub use command::{
    Command, CommandMeta, Effect, Meaning, Outbound, Purpose, Reply, RpcOutcome, SignalTarget,
    Time, WhenLogDown, MEM_PER_CPU, SIGKILL,
};
pub use controller::Controller;
pub use error::StateError;

impl Controller {
    /// Stamps the listings that changed since snapshot `prev` but whose
    /// `last_*_update` was not moved by the command that changed them, so
    /// that a client polling with `last_update` (`squeue -i`, `sinfo -i`)
    /// is never told "no change" when there was one. Changes are seen by
    /// identity: while `prev` is alive, every change copies what it touches.
    pub fn stamp_changes(&mut self, prev: &Controller, now: Time) {
        let jobs_changed = !self.jobs.same_records(&prev.jobs)
            || !self.steps.ptr_eq(&prev.steps)
            || !self.arrays.recs().ptr_eq(prev.arrays.recs())
            || !self.arrays.metas.ptr_eq(&prev.arrays.metas)
            || !self.deps.ptr_eq(&prev.deps);
        if jobs_changed && self.last_job_update == prev.last_job_update {
            self.last_job_update = now;
        }
        if !self.nodes.same_records(&prev.nodes) && self.last_node_update == prev.last_node_update {
            self.last_node_update = now;
        }
        if !Arc::ptr_eq(&self.conf, &prev.conf) && self.last_part_update == prev.last_part_update {
            self.last_part_update = now;
        }
    }

    /// After a restart: ask every node whose protocol we know to register
    /// again, as stock does, so that its hardware, OS and running jobs are
    /// current (the snapshot keeps only administrative state).
    pub fn ask_nodes_to_register(&self) -> Vec<Effect> {
        self.nodes
            .iter()
            .filter_map(|n| {
                msgs::outbound(
                    n,
                    Message::RequestNodeRegistrationStatus(Default::default()),
                    Purpose::Reregister,
                )
            })
            .map(|o| Effect::Send(Box::new(o)))
            .collect()
    }

    pub fn new(conf: ClusterConf, now: Time) -> Self {
        let nodes = conf.nodes.iter().cloned().map(Node::new).collect();
        let first = conf.raw.first_job_id.max(1);
        Controller {
            conf: Arc::new(conf),
            nodes,
            jobs: table::Jobs::new(),
            next_job_id: first,
            boot_time: now,
            last_node_update: now,
            last_part_update: now,
            last_job_update: now,
            last_ping: now,
            steps: table::Table::new(),
            sched: sched::SchedState::default(),
            counters: Default::default(),
            arrays: Default::default(),
            deps: Default::default(),
        }
    }

    /// Recomputes what nodes hold (CPUs, memory, GRES, job sets) from the
    /// jobs, after they were restored from saved state.
    pub fn rebuild_node_usage(&mut self) {
        let track_mem = sched::memory_is_consumable(&self.conf);
        for n in &mut self.nodes {
            n.clear_cpus();
            n.alloc_mem = 0;
            n.jobs.clear();
            n.completing.clear();
            n.gres_used = node::gres_slots(&n.def);
        }
        // Jobs saved before cores were recorded get theirs now.
        let unplaced: Vec<u32> = self
            .jobs
            .values()
            .filter(|j| j.state == JobState::Running && j.alloc.iter().any(|a| a.cores.is_empty()))
            .map(|j| j.job_id)
            .collect();
        for j in self.jobs.values() {
            if j.state == JobState::Running {
                for a in &j.alloc {
                    self.nodes[a.node].hold_cores(&a.cores, true);
                }
            }
        }
        for id in unplaced {
            let Some(j) = self.jobs.get_mut(&id) else {
                continue;
            };
            for a in j.alloc.iter_mut().filter(|a| a.cores.is_empty()) {
                let n = &mut self.nodes[a.node];
                a.cores = n.pick_cores(a.cpus);
                n.hold_cores(&a.cores, true);
            }
        }
        for j in self.jobs.values() {
            if j.state == JobState::Running {
                let sharing = sched::shares_cores(&self.conf, j);
                for a in &j.alloc {
                    let n = &mut self.nodes[a.node];
                    n.take_cpus(j.job_id, a.cpus, sharing);
                    if track_mem {
                        n.alloc_mem = n.alloc_mem.saturating_add(a.mem);
                    }
                    n.mark_gres(&a.gres, true);
                    n.take_for(j.user.uid, excl_user(&self.conf, j));
                    n.jobs.insert(j.job_id);
                }
            }
            for &i in &j.completing {
                self.nodes[i].completing.insert(j.job_id);
            }
        }
    }

    /// After a restart with saved state, under slurm.conf as it reads now:
    /// partitions are slurm.conf's again (stock restores scontrol's
    /// partition changes only with ReconfigFlags=KeepPartInfo/KeepPartState),
    /// jobs follow their partitions and nodes by name, and nodes get a
    /// fresh SlurmdTimeout to register again (running jobs re-attach then).
    pub fn restarted(&mut self, now: Time, conf: ClusterConf) {
        self.reconfigure(now, conf);
        for n in &mut self.nodes {
            if n.protocol_version.is_some() {
                n.last_response = now;
            }
        }
        self.boot_time = now;
        self.last_ping = now;
        self.last_node_update = now;
        self.last_job_update = now;
        self.last_part_update = now;
    }

    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.conf.node_index.get(name).copied()
    }

    /// Applies one command at time `now`.
    pub fn apply(&mut self, now: Time, cmd: Command) -> (Reply, Vec<Effect>) {
        let mut fx = Vec::new();
        self.sched.note_command(&cmd);
        let reply = match cmd {
            Command::Tick => {
                self.tick(now, &mut fx);
                Reply::Ok
            }
            Command::Register { msg, version, uid } => {
                self.register(now, &msg, version, uid, &mut fx)
            }
            Command::RpcDone {
                node,
                purpose,
                outcome,
            } => self.rpc_done(now, &node, command::meaning(&purpose, &outcome), &mut fx),
            Command::UpdateNode { uid, msg } => self.update_node(now, uid, &msg, &mut fx),
            Command::Submit {
                user,
                desc,
                version,
            } => {
                let admin = self.conf.is_admin(user.uid);
                let r = match refuse::submit_identity(admin, &user, &desc, version) {
                    Ok(()) => self.submit(now, user, desc, version),
                    Err(e) => Reply::Err(e),
                };
                if matches!(r, Reply::Submitted { .. }) {
                    self.schedule(now, &mut fx);
                }
                r
            }
            Command::Signal {
                uid,
                target,
                signal,
                flags,
                version,
            } => self.signal(now, uid, target, signal, flags, version, &mut fx),
            Command::KillJobs { uid, filter } => self.kill_jobs(now, uid, &filter, &mut fx),
            Command::BatchComplete {
                uid,
                job_id,
                job_rc,
                slurm_rc,
                node,
            } => self.batch_complete(now, uid, job_id, job_rc, slurm_rc, node.as_deref(), &mut fx),
            Command::EpilogComplete {
                uid,
                job_id,
                node,
                rc,
            } => self.epilog_complete(now, uid, job_id, node.as_deref(), rc, &mut fx),
            Command::Reconfigure(conf) => {
                self.reconfigure(now, *conf);
                self.schedule(now, &mut fx);
                Reply::Ok
            }
            Command::Allocate {
                user,
                desc,
                version,
                resp_host,
            } => self.allocate(now, user, desc, version, resp_host, &mut fx),
            Command::StepCreate { uid, req, version } => {
                match self.step_create(now, uid, &req, version) {
                    Ok((job_id, step_id)) => Reply::Step { job_id, step_id },
                    Err(e) => Reply::Err(e),
                }
            }
            Command::StepComplete { uid, msg } => Reply::from(self.step_complete(now, uid, &msg)),
            Command::CompleteAllocation {
                uid,
                job_id,
                job_rc,
            } => self.complete_allocation(now, uid, job_id, job_rc, &mut fx),
            // A plain id naming an array is every record of it (stock's
            // update_job_str and job_requeue2).
            Command::UpdateJob {
                uid, job_id, desc, ..
            } => {
                if self.names_whole_array(job_id) {
                    self.update_array(now, uid, job_id, None, &desc, &mut fx)
                } else {
                    self.update_job(now, uid, job_id, &desc, &mut fx)
                }
            }
            Command::Requeue { uid, job_id, flags } => {
                if self.names_whole_array(job_id) {
                    self.requeue_array(now, uid, job_id, None, flags, &mut fx)
                } else {
                    self.requeue_request(now, uid, job_id, flags, &mut fx)
                }
            }
            Command::UpdatePartition { uid, msg } => self.update_partition(now, uid, &msg, &mut fx),
            Command::UpdateArray {
                uid,
                array_job_id,
                tasks,
                desc,
                ..
            } if tasks.as_ref().is_none_or(|t| self.tasks_in_bounds(t)) => {
                let tasks: Option<BTreeSet<u32>> = tasks.map(|t| t.into_iter().collect());
                self.update_array(now, uid, array_job_id, tasks.as_ref(), &desc, &mut fx)
            }
            Command::RequeueArray {
                uid,
                array_job_id,
                tasks,
                flags,
            } if tasks.as_ref().is_none_or(|t| self.tasks_in_bounds(t)) => {
                let tasks: Option<BTreeSet<u32>> = tasks.map(|t| t.into_iter().collect());
                self.requeue_array(now, uid, array_job_id, tasks.as_ref(), flags, &mut fx)
            }
            Command::DeletePartition { uid, name } => {
                self.delete_partition(now, uid, &name, &mut fx)
            }
            // Task lists past MaxArraySize (the handlers refuse them
            // before they are logged; this is for a log from elsewhere).
            Command::UpdateArray { .. } | Command::RequeueArray { .. } => {
                Reply::Err(StateError::InvalidJobId)
            }
        };
        (reply, fx)
    }

    /// What an outbound RPC's outcome changes.
    fn rpc_done(&mut self, now: Time, node: &str, m: Meaning, fx: &mut Vec<Effect>) -> Reply {
        match m {
            Meaning::Alive { load } => {
                // A ping answered without a load keeps the last known.
                let last = || {
                    let n = &self.nodes[self.node_index(node)?];
                    Some((n.cpu_load, n.free_mem))
                };
                let (cpu_load, free_mem) = load.or_else(last).unwrap_or((0, 0));
                return self.node_responded(now, node, cpu_load, free_mem, fx);
            }
            Meaning::Unreachable => {
                if let Some(i) = self.node_index(node) {
                    if !self.nodes[i].no_respond {
                        self.nodes[i].no_respond = true;
                        self.last_node_update = now;
                    }
                }
            }
            Meaning::TerminateDone { job_id } => {
                if let Some(i) = self.node_index(node) {
                    self.epilog_done_on(now, job_id, i);
                    self.schedule(now, fx);
                }
            }
            Meaning::LaunchFailed { job_id, rc } => {
                tracing::warn!(job_id, node, rc, "batch launch failed");
                if rc == ESLURMD_PROLOG_FAILED {
                    self.prolog_failed(now, job_id, Some(node), fx);
                    return Reply::Ok;
                }
                if let Some(j) = self.jobs.get_mut(&job_id) {
                    if j.state == JobState::Running {
                        j.launch_failed = true;
                        j.state_reason = job::reason::FAIL_LAUNCH;
                        self.end_job(now, job_id, JobState::NodeFail, fx);
                    }
                }
            }
            Meaning::Nothing => {}
        }
        Reply::Ok
    }

    /// Whether a task list from a client stays within MaxArraySize.
    pub(crate) fn tasks_in_bounds(&self, tasks: &[u32]) -> bool {
        let max = self.max_array_size();
        tasks.len() <= max as usize && tasks.iter().all(|&t| t < max)
    }

    // ------------------------------------------------------------ nodes

    fn register(
        &mut self,
        now: Time,
        m: &SlurmNodeRegistrationStatusMsg,
        version: ProtocolVersion,
        uid: u32,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        if !self.conf.is_admin(uid) {
            return Reply::Err(StateError::InvalidUserId);
        }
        let Some(i) = m.node_name.as_deref().and_then(|n| self.node_index(n)) else {
            tracing::error!(node = ?m.node_name, "registration from unknown node");
            return Reply::Err(StateError::InvalidNodeName);
        };
        let overrides = self.conf.config_overrides;
        let rts = self.conf.raw.return_to_service;
        let n = &mut self.nodes[i];
        n.reported = Some(Reported {
            cpus: m.cpus,
            boards: m.boards,
            sockets: m.sockets,
            cores: m.cores,
            threads: m.threads,
            real_memory: m.real_memory,
            tmp_disk: m.tmp_disk,
            arch: m.arch.clone(),
            os: m.os.clone(),
            version: m.version.clone(),
            boot_time: now - i64::from(m.up_time),
            slurmd_start_time: m.slurmd_start_time,
        });
        n.protocol_version = Some(version);
        n.cpu_load = m.cpu_load;
        n.free_mem = m.free_mem;
        n.last_response = now;
        n.no_respond = false;
        if n.last_busy == 0 {
            n.last_busy = now;
        }
        // Hardware check: less than configured is refused unless the site
        // said to trust the configuration.
        let problem = if overrides {
            None
        } else if m.cpus < n.def.cpus {
            Some(format!(
                "Low CPUs (reported:{} < configured:{})",
                m.cpus, n.def.cpus
            ))
        } else if m.real_memory < n.def.real_memory {
            Some(format!(
                "Low RealMemory (reported:{} < 100.00% of configured:{})",
                m.real_memory, n.def.real_memory
            ))
        } else if m.tmp_disk < n.def.tmp_disk {
            Some(format!(
                "Low TmpDisk (reported:{} < configured:{})",
                m.tmp_disk, n.def.tmp_disk
            ))
        } else {
            None
        };
        if let Some(why) = problem {
            tracing::error!(node = n.name(), "{why}");
            n.drain = true;
            n.down_cause = Some(DownCause::InvalidRegistration);
            n.set_reason(Some(why), 0, now);
            if n.base == Base::Unknown {
                n.base = Base::Up;
            }
        } else {
            match n.base {
                Base::Unknown => n.base = Base::Up,
                Base::Down => {
                    let back = matches!(
                        (rts, n.down_cause),
                        (_, Some(DownCause::InvalidRegistration))
                            | (1, Some(DownCause::NotResponding))
                            | (2, _)
                    );
                    if back {
                        tracing::info!(node = n.name(), "node returned to service");
                        n.base = Base::Up;
                        n.down_cause = None;
                        if !n.drain {
                            n.set_reason(None, 0, now);
                        }
                    }
                }
                Base::Up | Base::Future => {}
            }
            if n.down_cause == Some(DownCause::InvalidRegistration) && n.drain {
                n.drain = false;
                n.down_cause = None;
                n.set_reason(None, 0, now);
            }
        }
        if m.status == ESLURMD_PROLOG_FAILED as u32 {
            self.drain_for_prolog(now, i);
        }
        self.last_node_update = now;
        let reported: Vec<u32> = m.step_id.iter().map(|s| s.job_id).collect();
        self.purge_missing_batch_jobs(now, i, &reported, fx);
        // Epilogs we wait for on jobs slurmd no longer knows ended while we
        // did not hear (e.g. slurmd restarted).
        let stale: Vec<u32> = self.nodes[i]
            .completing
            .iter()
            .copied()
            .filter(|j| !reported.contains(j))
            .collect();
        for job_id in stale {
            self.epilog_done_on(now, job_id, i);
        }
        self.schedule(now, fx);
        Reply::Registered { node: i }
    }

    /// Stock's rule for a batch job whose node registers without it: once
    /// it started more than BatchStartTimeout (+ message time) ago it is
    /// lost (a launch that never arrived, a node that rebooted), and is
    /// requeued, or ends NODE_FAIL when it may not be. A younger one is
    /// looked for again at the next registration, which is asked for then.
    fn purge_missing_batch_jobs(
        &mut self,
        now: Time,
        i: usize,
        reported: &[u32],
        fx: &mut Vec<Effect>,
    ) {
        let raw = &self.conf.raw;
        let grace = i64::from(raw.batch_start_timeout) + i64::from(raw.message_timeout.min(10));
        let mut lost = Vec::new();
        let mut young = false;
        for &job_id in &self.nodes[i].jobs {
            let Some(j) = self.jobs.get(&job_id) else {
                continue;
            };
            if j.state != JobState::Running
                || !j.req.has_script()
                || j.batch_host != Some(i)
                || reported.contains(&job_id)
            {
                continue;
            }
            if j.start_time < now - grace {
                lost.push(job_id);
            } else {
                young = true;
            }
        }
        let recheck = young.then_some(now + grace + 1);
        if self.nodes[i].recheck_at != recheck {
            self.nodes[i].recheck_at = recheck;
        }
        for job_id in lost {
            tracing::info!(
                job_id,
                node = self.nodes[i].name(),
                "batch job missing from its batch node (not found BatchStartTimeout after start)"
            );
            if let Some(j) = self.jobs.get_mut(&job_id) {
                j.exit_code = 1;
            }
            if self.requeue_on_node_fail(now, job_id, fx) {
                continue;
            }
            if let Some(j) = self.jobs.get_mut(&job_id) {
                j.state_reason = job::reason::FAIL_DOWN_NODE;
            }
            self.end_job(now, job_id, JobState::NodeFail, fx);
        }
    }

    fn node_responded(
        &mut self,
        now: Time,
        name: &str,
        cpu_load: u32,
        free_mem: u64,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        let Some(i) = self.node_index(name) else {
            return Reply::Err(StateError::InvalidNodeName);
        };
        let n = &mut self.nodes[i];
        n.last_response = now;
        n.cpu_load = cpu_load;
        n.free_mem = free_mem;
        if n.no_respond {
            n.no_respond = false;
            self.last_node_update = now;
        }
        // Back from a timeout: registration decides ReturnToService.
        if n.base == Base::Down && n.down_cause == Some(DownCause::NotResponding) {
            if let Some(o) = msgs::outbound(
                n,
                Message::RequestNodeRegistrationStatus(Default::default()),
                Purpose::Reregister,
            ) {
                fx.push(Effect::Send(Box::new(o)));
            }
        }
        Reply::Ok
    }

    fn set_node_down(
        &mut self,
        now: Time,
        i: usize,
        cause: DownCause,
        reason: String,
        uid: u32,
        fx: &mut Vec<Effect>,
    ) {
        let n = &mut self.nodes[i];
        n.base = Base::Down;
        n.down_cause = Some(cause);
        n.set_reason(Some(reason), uid, now);
        self.last_node_update = now;
        let jobs: Vec<u32> = n.jobs.iter().copied().collect();
        for job_id in jobs {
            if self.requeue_on_node_fail(now, job_id, fx) {
                continue;
            }
            if let Some(j) = self.jobs.get_mut(&job_id) {
                j.state_reason = job::reason::FAIL_DOWN_NODE;
            }
            self.end_job(now, job_id, JobState::NodeFail, fx);
        }
    }

    fn update_node(
        &mut self,
        now: Time,
        uid: u32,
        m: &UpdateNodeMsg,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        if !self.conf.is_admin(uid) {
            tracing::error!(uid, "REQUEST_UPDATE_NODE from non-admin");
            return Reply::Err(StateError::InvalidUserId);
        }
        let Some(names) = m.node_names.as_deref() else {
            return Reply::Err(StateError::InvalidNodeName);
        };
        let Ok(names) = sched::client_hosts(&self.conf, names) else {
            return Reply::Err(StateError::InvalidNodeName);
        };
        let mut idx = Vec::new();
        for n in &names {
            match self.node_index(n) {
                Some(i) => idx.push(i),
                None => return Reply::Err(StateError::InvalidNodeName),
            }
        }
        let reason = m.reason.clone().filter(|r| !r.is_empty());
        let reason_uid = if m.reason_uid == NO_VAL {
            uid
        } else {
            m.reason_uid
        };
        let state = m.node_state;
        for i in idx {
            if state == NO_VAL || state == INFINITE {
                if reason.is_some() {
                    self.nodes[i].set_reason(reason.clone(), reason_uid, now);
                }
                continue;
            }
            if state & node::bits::DRAIN != 0 {
                let Some(r) = reason.clone() else {
                    return Reply::Err(StateError::InvalidNodeState);
                };
                let n = &mut self.nodes[i];
                n.drain = true;
                n.set_reason(Some(r), reason_uid, now);
            } else if state == node::bits::RESUME || state & node::bits::UNDRAIN != 0 {
                let n = &mut self.nodes[i];
                // Like stock, a resumed node must prove it is alive: it is
                // not-responding until it registers again.
                if state == node::bits::RESUME
                    && (n.drain || n.base == Base::Down)
                    && n.protocol_version.is_some()
                {
                    n.no_respond = true;
                    n.last_response = now;
                    if let Some(o) = msgs::outbound(
                        n,
                        Message::RequestNodeRegistrationStatus(Default::default()),
                        Purpose::Reregister,
                    ) {
                        fx.push(Effect::Send(Box::new(o)));
                    }
                }
                n.drain = false;
                if state == node::bits::RESUME && n.base == Base::Down {
                    n.base = if n.protocol_version.is_some() {
                        Base::Up
                    } else {
                        Base::Unknown
                    };
                    n.down_cause = None;
                    n.last_response = now;
                }
                n.set_reason(None, 0, now);
            } else if state & node::bits::BASE == node::bits::DOWN {
                let Some(r) = reason.clone() else {
                    return Reply::Err(StateError::InvalidNodeState);
                };
                self.set_node_down(now, i, DownCause::Admin, r, reason_uid, fx);
            } else if state & node::bits::BASE == node::bits::IDLE {
                let n = &mut self.nodes[i];
                if n.base == Base::Down {
                    n.base = Base::Up;
                    n.down_cause = None;
                    n.set_reason(None, 0, now);
                }
            } else {
                return Reply::Err(StateError::InvalidNodeState);
            }
        }
        self.last_node_update = now;
        self.schedule(now, fx);
        Reply::Ok
    }

    // ------------------------------------------------------------ jobs

    pub(crate) fn start_job(
        &mut self,
        now: Time,
        job_id: u32,
        alloc: Vec<NodeAlloc>,
        fx: &mut Vec<Effect>,
    ) {
        let track_mem = sched::memory_is_consumable(&self.conf);
        let owner = self.jobs.get(&job_id).map(|j| {
            (
                j.user.uid,
                excl_user(&self.conf, j),
                sched::shares_cores(&self.conf, j),
            )
        });
        let mut alloc = alloc;
        for a in &mut alloc {
            let n = &mut self.nodes[a.node];
            if let Some((uid, excl, _)) = owner {
                n.take_for(uid, excl);
            }
            let sharing = owner.is_some_and(|(_, _, s)| s);
            n.take_cpus(job_id, a.cpus, sharing);
            if a.cores.is_empty() {
                a.cores = n.pick_cores(a.cpus);
            }
            n.hold_cores(&a.cores, true);
            if track_mem {
                n.alloc_mem = n.alloc_mem.saturating_add(a.mem);
            }
            n.mark_gres(&a.gres, true);
            n.jobs.insert(job_id);
            n.last_busy = now;
        }
        let Some(j) = self.jobs.get_mut(&job_id) else {
            return;
        };
        j.state = JobState::Running;
        j.state_reason = job::reason::WAIT_NO_REASON;
        j.state_desc = None;
        j.start_time = now;
        self.counters.started();
        j.end_time = j.limit_end(now);
        j.batch_host = alloc.first().map(|a| a.node);
        j.alloc = alloc;
        tracing::info!(job_id, nodes = %msgs::job_nodelist(&self.nodes, j), "job started");
        self.last_job_update = now;
        self.last_node_update = now;
        let j = &self.jobs[&job_id];
        if !j.req.has_script() {
            // Interactive: srun launches the tasks itself.
            self.on_job_started(job_id, fx);
            return;
        }
        match msgs::batch_launch(&self.conf, &self.nodes, j, now) {
            Ok(Some(mut o)) => {
                self.patch_launch(job_id, &mut o);
                fx.push(Effect::Send(Box::new(o)));
            }
            Ok(None) => {}
            Err(e) => {
                // Our own encoding: cannot happen, but never launch half a
                // request; the job fails as a refused launch does.
                tracing::error!(job_id, "job request unreadable, launch failed: {e}");
                if let Some(j) = self.jobs.get_mut(&job_id) {
                    j.launch_failed = true;
                    j.state_reason = job::reason::FAIL_LAUNCH;
                }
                self.end_job(now, job_id, JobState::NodeFail, fx);
            }
        }
    }

    /// Ends a running (or pending) job: frees its nodes and asks them to clean up.
    fn end_job(&mut self, now: Time, job_id: u32, state: JobState, fx: &mut Vec<Effect>) {
        self.sched.freed += 1;
        let track_mem = sched::memory_is_consumable(&self.conf);
        let Some(j) = self.jobs.get_mut(&job_id) else {
            return;
        };
        let was_running = j.state == JobState::Running;
        j.state = state;
        j.end_time = now;
        self.counters.ended(state);
        self.note_array_end(job_id);
        self.on_job_ended(job_id, fx);
        let Some(j) = self.jobs.get_mut(&job_id) else {
            return;
        };
        if !was_running {
            if j.start_time == 0 {
                j.start_time = now;
            }
            self.last_job_update = now;
            return;
        }
        j.completing = j.alloc.iter().map(|a| a.node).collect();
        for a in &j.alloc {
            let n = &mut self.nodes[a.node];
            n.release_cpus(job_id, a.cpus);
            n.hold_cores(&a.cores, false);
            if track_mem {
                n.alloc_mem = n.alloc_mem.saturating_sub(a.mem);
            }
            n.mark_gres(&a.gres, false);
            n.jobs.remove(&job_id);
            n.completing.insert(job_id);
            n.last_busy = now;
        }
        self.last_job_update = now;
        self.last_node_update = now;
        let j = &self.jobs[&job_id];
        for o in msgs::terminate(&self.conf, &self.nodes, j, now) {
            fx.push(Effect::Send(Box::new(o)));
        }
        // Nodes that cannot answer (down) will never send an epilog.
        let dead: Vec<usize> = j
            .completing
            .iter()
            .copied()
            .filter(|&i| {
                self.nodes[i].base == Base::Down || self.nodes[i].protocol_version.is_none()
            })
            .collect();
        // (Not epilog_done_on: a requeue ending the run finishes the
        // requeue itself once it has reset the job.)
        for i in dead {
            self.clear_completing(now, job_id, i);
        }
    }

    fn kill(
        &mut self,
        now: Time,
        uid: u32,
        job_id: u32,
        signal: u16,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        let Some(j) = self.jobs.get_mut(&job_id) else {
            return Reply::Err(StateError::InvalidJobId);
        };
        if !self.conf.owner_or_operator(uid, j.user.uid) {
            tracing::error!(uid, job_id, "kill refused: not the owner");
            return Reply::Err(StateError::AccessDenied);
        }
        if j.state.is_finished() {
            return Reply::Err(StateError::AlreadyDone);
        }
        if signal != SIGKILL && j.state == JobState::Running {
            // Delivering other signals needs REQUEST_SIGNAL_TASKS (later).
            return Reply::Err(StateError::NotSupported);
        }
        j.cancelled_by = Some(uid);
        tracing::info!(job_id, uid, "job cancelled");
        self.end_job(now, job_id, JobState::Cancelled, fx);
        self.schedule(now, fx);
        Reply::Ok
    }

    #[allow(clippy::too_many_arguments)]
    fn batch_complete(
        &mut self,
        now: Time,
        uid: u32,
        job_id: u32,
        job_rc: u32,
        slurm_rc: u32,
        node: Option<&str>,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        if !self.conf.is_admin(uid) {
            return Reply::Err(StateError::InvalidUserId);
        }
        let Some(j) = self.jobs.get_mut(&job_id) else {
            return Reply::Err(StateError::InvalidJobId);
        };
        if j.state != JobState::Running {
            // Already ended (cancelled, timed out): nothing more to do.
            return Reply::Ok;
        }
        tracing::info!(job_id, job_rc, slurm_rc, node, "batch script complete");
        if slurm_rc == ESLURMD_PROLOG_FAILED as u32 {
            self.prolog_failed(now, job_id, node, fx);
            return Reply::Ok;
        }
        j.exit_code = job_rc;
        let state = if slurm_rc != 0 {
            j.launch_failed = true;
            j.state_reason = job::reason::FAIL_LAUNCH;
            JobState::Failed
        } else if job_rc & 0xff == job::SIG_OOM {
            // stock checks OOM before the exit status
            j.state_reason = job::reason::FAIL_OOM;
            j.state_desc = None;
            JobState::OutOfMemory
        } else if job_rc == 0 {
            JobState::Complete
        } else {
            j.state_reason = job::reason::FAIL_EXIT_CODE;
            JobState::Failed
        };
        self.end_job(now, job_id, state, fx);
        self.schedule(now, fx);
        Reply::Ok
    }

    fn epilog_complete(
        &mut self,
        now: Time,
        uid: u32,
        job_id: u32,
        node: Option<&str>,
        rc: u32,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        if !self.conf.is_admin(uid) {
            return Reply::Err(StateError::InvalidUserId);
        }
        let Some(i) = node.and_then(|n| self.node_index(n)) else {
            return Reply::Err(StateError::InvalidNodeName);
        };
        if rc != 0 {
            let n = &mut self.nodes[i];
            n.drain = true;
            n.set_reason(Some("Epilog error".into()), 0, now);
        }
        self.epilog_done_on(now, job_id, i);
        self.schedule(now, fx);
        Reply::Ok
    }

    fn epilog_done_on(&mut self, now: Time, job_id: u32, node: usize) {
        if self.clear_completing(now, job_id, node) {
            self.requeue_fini(now, job_id);
        }
    }

    /// Node `node` is done with job `job_id`; true when that was the last
    /// node of a requeued (pending) job.
    fn clear_completing(&mut self, now: Time, job_id: u32, node: usize) -> bool {
        self.nodes[node].completing.remove(&job_id);
        let mut requeued = false;
        if let Some(j) = self.jobs.get_mut(&job_id) {
            let was = !j.completing.is_empty();
            j.completing.retain(|&i| i != node);
            requeued = was && j.completing.is_empty() && j.state == JobState::Pending;
        }
        self.last_node_update = now;
        self.last_job_update = now;
        requeued
    }

    // ------------------------------------------------------------ time

    fn tick(&mut self, now: Time, fx: &mut Vec<Effect>) {
        // Indexed, so that only a node that is due is copied on write.
        for i in 0..self.nodes.len() {
            if self.nodes[i].recheck_at.is_none_or(|t| now < t) {
                continue;
            }
            self.nodes[i].recheck_at = None;
            if let Some(o) = msgs::outbound(
                &self.nodes[i],
                Message::RequestNodeRegistrationStatus(Default::default()),
                Purpose::Reregister,
            ) {
                fx.push(Effect::Send(Box::new(o)));
            }
        }
        let timeout = self.conf.slurmd_timeout();
        if timeout > 0 {
            for i in 0..self.nodes.len() {
                let n = &self.nodes[i];
                if n.base == Base::Up && n.last_response > 0 && now - n.last_response > timeout {
                    tracing::error!(node = n.name(), "node not responding, setting DOWN");
                    self.nodes[i].no_respond = true;
                    self.set_node_down(
                        now,
                        i,
                        DownCause::NotResponding,
                        "Not responding".into(),
                        0,
                        fx,
                    );
                }
            }
            // Stock pings every SlurmdTimeout/3.
            let every = (timeout / 3).max(1);
            if now - self.last_ping >= every {
                self.last_ping = now;
                for n in &self.nodes {
                    if n.base != Base::Future {
                        if let Some(o) = msgs::outbound(
                            n,
                            Message::RequestPing(Default::default()),
                            Purpose::Ping,
                        ) {
                            fx.push(Effect::Send(Box::new(o)));
                        }
                    }
                }
            }
        }
        // Time limits (OverTimeLimit minutes of grace).
        let over = i64::from(self.conf.raw.over_time_limit) * 60;
        let expired: Vec<u32> = self
            .jobs
            .values()
            .filter(|j| {
                j.state == JobState::Running && j.time_limit != INFINITE && j.time_limit != NO_VAL
            })
            .filter(|j| now >= j.end_time + over)
            .map(|j| j.job_id)
            .collect();
        for job_id in expired {
            tracing::info!(job_id, "time limit reached");
            if let Some(j) = self.jobs.get_mut(&job_id) {
                j.state_reason = job::reason::FAIL_TIMEOUT;
            }
            self.end_job(now, job_id, JobState::Timeout, fx);
        }
        // Forget finished jobs after MinJobAge.
        let age = i64::from(self.conf.raw.min_job_age);
        let before = self.jobs.len();
        self.jobs.retain(|_, j| {
            !(j.state.is_finished() && j.completing.is_empty() && now - j.end_time >= age)
        });
        if self.jobs.len() != before {
            self.last_job_update = now;
            let jobs = &self.jobs;
            let _ = self.steps.retain(|id, _| jobs.contains_key(id));
            self.purge_ext();
        }
        self.schedule_tick(now, fx);
    }

    fn reconfigure(&mut self, now: Time, conf: ClusterConf) {
        let old: BTreeMap<String, Node> = self
            .nodes
            .take_all()
            .into_iter()
            .map(|n| (n.def.name.clone(), n))
            .collect();
        let mut old = old;
        self.nodes = conf
            .nodes
            .iter()
            .cloned()
            .map(|d| match old.remove(&d.name) {
                Some(mut n) => {
                    if n.def.gres_list != d.gres_list {
                        // Devices changed: start from free; running jobs'
                        // devices are marked again below.
                        n.gres_used = node::gres_slots(&d);
                    } else {
                        n.gres_used.resize_with(d.gres_list.len(), Vec::new);
                    }
                    n.def = d;
                    n
                }
                None => Node::new(d),
            })
            .collect();
        // Jobs keep their partition by name; allocations by node name.
        let old_parts: Vec<String> = self
            .conf
            .partitions
            .iter()
            .map(|p| p.name().to_string())
            .collect();
        let old_names: Vec<String> = self.conf.nodes.iter().map(|n| n.name.clone()).collect();
        self.jobs.for_each_mut(|j| {
            // A partition that is gone leaves its jobs (finished ones too,
            // until MinJobAge purges them) in the default one: no job may
            // keep an index past the new table.
            j.part = old_parts
                .get(j.part)
                .and_then(|n| conf.partition_index(n))
                .unwrap_or_else(|| conf.default_partition.unwrap_or(0));
            let remap = |i: usize| {
                old_names
                    .get(i)
                    .and_then(|n| conf.node_index.get(n))
                    .copied()
            };
            j.alloc.retain_mut(|a| match remap(a.node) {
                Some(x) => {
                    a.node = x;
                    true
                }
                None => false,
            });
            j.completing = j.completing.iter().filter_map(|&i| remap(i)).collect();
            j.batch_host = j.batch_host.and_then(remap);
        });
        for j in self.jobs.values() {
            if j.state == JobState::Running {
                for a in &j.alloc {
                    if let Some(n) = self.nodes.get_mut(a.node) {
                        n.mark_gres(&a.gres, true);
                    }
                }
            }
        }
        self.conf = Arc::new(conf);
        // Per-partition scheduler memory is indexed like the table.
        self.sched.blocked_at.clear();
        self.last_node_update = now;
        self.last_part_update = now;
    }
}

/// Whether job `j` keeps other users off its nodes: its partition has
/// ExclusiveUser=YES, or it asked for `--exclusive=user`.
fn excl_user(conf: &ClusterConf, j: &Job) -> bool {
    j.req.shared == sched::JOB_SHARED_USER
        || conf
            .partitions
            .get(j.part)
            .is_some_and(|p| p.conf.exclusive_user)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
#[path = "bounds_tests.rs"]
mod bounds_tests;
