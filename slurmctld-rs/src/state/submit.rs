//! A job's submission (sbatch, and the job of salloc/srun): the request is
//! checked and its size worked out with the partition's defaults
//! ([`Controller::submit_shape`]), the record built ([`new_job`]), then
//! placed in the tables with its array and dependencies
//! ([`Controller::place_job`]). Refusals follow stock's order of checks.

use super::array::ArraySpec;
use super::command::{Reply, Time, MEM_PER_CPU};
use super::config::{ClusterConf, PartDef};
use super::controller::Controller;
use super::deps::Dep;
use super::error::StateError;
use super::job::{self, Job, JobState, UserInfo};
use super::{control, mem_limit, partition, req};
use crate::gres::GresReq;
use crate::sched;
use slurm_wire::msg::job_desc::JobDescMsg;
use slurm_wire::pack::{INFINITE, NO_VAL, NO_VAL16, NO_VAL64};
use slurm_wire::ProtocolVersion;

/// A submitted job's size and limits: the partition's defaults filled in,
/// every count checked.
struct Shape {
    part: usize,
    time_limit: u32,
    /// Why it waits from the start (a partition limit), else
    /// WAIT_NO_REASON.
    reason: u32,
    min_nodes: u32,
    max_nodes: u32,
    num_tasks: u32,
    cpus_per_task: u16,
    min_cpus: u32,
    mem: u64,
    mem_per_cpu: bool,
    gres_req: Vec<GresReq>,
}

/// The node, task and CPU counts of a request (stock's defaults).
struct Counts {
    min_nodes: u32,
    max_nodes: u32,
    num_tasks: u32,
    cpus_per_task: u16,
    min_cpus: u32,
}

impl Controller {
    /// Submits `desc` for `user` (already resolved in the shell).
    pub(super) fn submit(
        &mut self,
        now: Time,
        user: UserInfo,
        desc: Box<JobDescMsg>,
        version: ProtocolVersion,
    ) -> Reply {
        let shape = match self.submit_shape(&user, &desc, version) {
            Ok(s) => s,
            Err(e) => return Reply::Err(e),
        };
        let ext = match self.submit_ext_check(&desc, version) {
            Ok(x) => x,
            Err(e) => return Reply::Err(e),
        };
        let job_id = self.next_job_id;
        self.next_job_id = self.next_job_id.wrapping_add(1).max(1);
        let j = new_job(now, job_id, user, desc, version, shape);
        self.place_job(now, j, ext);
        Reply::Submitted { job_id }
    }

    /// Every check of a submit but `--array` and `--dependency`, in
    /// stock's order, and the job's shape.
    fn submit_shape(
        &self,
        user: &UserInfo,
        desc: &JobDescMsg,
        version: ProtocolVersion,
    ) -> Result<Shape, StateError> {
        let part = self.submit_partition(user, desc, version)?;
        let pdef = &self.conf.partitions[part];
        let counted_nodes = self.constraint_nodes(desc, version)?;
        let enforce = enforce_part_limits(&self.conf);
        let (time_limit, mut reason) = time_limit(pdef, desc, enforce)?;
        let counts = counts(pdef, desc)?;
        let (mem, mem_per_cpu) = if desc.pn_min_memory == NO_VAL64 {
            partition::default_mem(pdef, self.conf.raw.def_mem).unwrap_or((0, false))
        } else if desc.pn_min_memory & MEM_PER_CPU != 0 {
            (desc.pn_min_memory & !MEM_PER_CPU, true)
        } else {
            (desc.pn_min_memory, false)
        };
        let fit = mem_limit::fit_max_mem_per_cpu(
            pdef.conf.max_mem,
            self.conf.raw.max_mem,
            mem_per_cpu,
            counts.num_tasks,
            mem_limit::Shape {
                mem,
                cpus_per_task: counts.cpus_per_task,
                min_cpus: counts.min_cpus,
            },
        );
        let shape = Shape {
            part,
            time_limit,
            reason,
            min_nodes: counts.min_nodes,
            max_nodes: counts.max_nodes,
            num_tasks: counts.num_tasks,
            cpus_per_task: fit.cpus_per_task,
            min_cpus: fit.min_cpus,
            mem: fit.mem,
            mem_per_cpu,
            gres_req: self.gres_request(desc)?,
        };
        if let Some(r) = self.fit_reason(&shape, user.uid, desc, version, counted_nodes)? {
            reason = r;
        }
        if (pdef.conf.max_nodes != INFINITE && shape.min_nodes > pdef.conf.max_nodes)
            || shape.min_nodes < pdef.conf.min_nodes
        {
            if enforce {
                return Err(StateError::InvalidNodeCount);
            }
            reason = job::reason::WAIT_PART_NODE_LIMIT;
        }
        self.check_node_lists(desc)?;
        Ok(Shape { reason, ..shape })
    }

    /// A valid `--constraint` (an empty one is none): the nodes its
    /// counts need at least.
    fn constraint_nodes(
        &self,
        desc: &JobDescMsg,
        version: ProtocolVersion,
    ) -> Result<u32, StateError> {
        let Some(f) = desc.features.as_deref().filter(|f| !f.is_empty()) else {
            return Ok(0);
        };
        let outer_counts = version < ProtocolVersion::V23_02;
        match sched::validate_constraint(&self.conf, f, outer_counts) {
            Ok(c) => Ok(c.counted_nodes()),
            Err(e) => {
                tracing::info!(constraint = f, "job refused: {e}");
                Err(StateError::InvalidFeature)
            }
        }
    }

    /// `--nodelist` and `--exclude` name nodes that exist, counted before
    /// anything expands them (selection does so on every pass).
    fn check_node_lists(&self, desc: &JobDescMsg) -> Result<(), StateError> {
        for list in [&desc.req_nodes, &desc.exc_nodes] {
            if let Some(l) = list.as_deref().filter(|l| !l.is_empty()) {
                if let Err(e) = sched::client_hosts(&self.conf, l) {
                    tracing::info!("job refused: node list: {e}");
                    return Err(StateError::InvalidNodeName);
                }
            }
        }
        Ok(())
    }

    /// The partition asked for (else the default), if `user` may submit
    /// to it from where the request came.
    fn submit_partition(
        &self,
        user: &UserInfo,
        desc: &JobDescMsg,
        version: ProtocolVersion,
    ) -> Result<usize, StateError> {
        let part = match desc.partition.as_deref() {
            Some(p) if !p.is_empty() => self
                .conf
                .partition_index(p)
                .ok_or(StateError::InvalidPartitionName)?,
            _ => self.conf.default_partition.ok_or(StateError::NoPartition)?,
        };
        let pdef = &self.conf.partitions[part];
        if let Some(rc) =
            partition::access_refused(&self.conf, pdef, user.uid, desc.reservation.as_deref())
        {
            return Err(rc);
        }
        if let Some(rc) = partition::alloc_node_refused(pdef, desc.alloc_node.as_deref()) {
            tracing::info!(
                partition = %pdef.conf.name,
                alloc_node = desc.alloc_node.as_deref(),
                "job refused: submitting host not in AllocNodes"
            );
            return Err(rc);
        }
        if let Some(rc) =
            partition::refuses_submit(&self.conf, pdef, user, desc.account.as_deref(), version)
        {
            return Err(rc);
        }
        Ok(part)
    }

    /// `--gres`/`--tres-per-node`: a GRES name no node in the cluster has
    /// is invalid (an unknown type of a known name is merely
    /// unsatisfiable, as in stock).
    fn gres_request(&self, desc: &JobDescMsg) -> Result<Vec<GresReq>, StateError> {
        let gres_req = match desc
            .tres_per_node
            .as_deref()
            .map(crate::gres::parse_per_node)
        {
            None => Vec::new(),
            Some(Ok(g)) => g,
            Some(Err(e)) => {
                tracing::info!("submit refused: {e}");
                return Err(StateError::InvalidGres);
            }
        };
        let known = |g: &GresReq| {
            self.conf
                .nodes
                .iter()
                .any(|d| d.gres_list.iter().any(|x| x.name == g.name))
        };
        if !gres_req.iter().all(known) {
            return Err(StateError::InvalidGres);
        }
        Ok(gres_req)
    }

    /// A request no set of the partition's nodes could ever satisfy: the
    /// refusal, or the reason it waits with (Some) for the releases that
    /// queue it.
    fn fit_reason(
        &self,
        s: &Shape,
        uid: u32,
        desc: &JobDescMsg,
        version: ProtocolVersion,
        counted_nodes: u32,
    ) -> Result<Option<u32>, StateError> {
        let req = sched::Request {
            gres: &s.gres_req,
            min_nodes: s.min_nodes,
            max_nodes: s.max_nodes,
            cpus: s.min_cpus,
            cpus_per_task: s.cpus_per_task,
            mem: s.mem,
            mem_per_cpu: s.mem_per_cpu,
            pn_cpus: 0,
            exclusive: false,
            oversubscribe: false,
            exclusive_user: false,
            uid,
            req_nodes: None,
            exc_nodes: None,
            features: None,
        };
        let fits = |r: &sched::Request| sched::could_ever_fit(&self.conf, s.part, r);
        // A --constraint no set of the partition's nodes satisfies (too
        // few with the features, counts beyond the job's node limit) is a
        // flaw in the request for every release: stock's node selection
        // answers it, after the partition limits passed.
        let features = desc.features.as_deref().filter(|f| !f.is_empty());
        // 26.05 takes a task count without a node count as the most
        // nodes too (JOB_IMPLICIT_MAX_NODES).
        let implicit_max = version >= ProtocolVersion::V26_05
            && (desc.max_nodes == NO_VAL || desc.max_nodes == 0)
            && desc.num_tasks != NO_VAL
            && desc.num_tasks != 0;
        let count_limit = if implicit_max {
            s.max_nodes.min(desc.num_tasks)
        } else {
            s.max_nodes
        };
        if features.is_some()
            && fits(&req)
            && (counted_nodes > count_limit || !fits(&sched::Request { features, ..req }))
        {
            return Err(StateError::NodeConfigUnavailable);
        }
        if fits(&req) {
            return Ok(None);
        }
        // What no single node can hold (memory, GRES) is refused by every
        // release; more CPUs or nodes than the partition has only by 24.x,
        // while 22.05 and 26.05 queue the job with a partition reason.
        let one_task = fits(&sched::Request {
            min_nodes: 1,
            max_nodes: 1,
            cpus: u32::from(s.cpus_per_task),
            ..req
        });
        let v24 = version >= ProtocolVersion::V24_05 && version < ProtocolVersion::V25_05;
        if !one_task || v24 {
            return Err(StateError::NodeConfigUnavailable);
        }
        let pdef = &self.conf.partitions[s.part];
        Ok(Some(
            if version >= ProtocolVersion::V25_05 && s.min_nodes as usize > pdef.nodes.len() {
                job::reason::WAIT_PART_NODE_LIMIT
            } else {
                job::reason::WAIT_PART_CONFIG
            },
        ))
    }

    /// Puts a new record in the tables, with its array and dependencies.
    fn place_job(&mut self, now: Time, j: Job, ext: (Option<ArraySpec>, Vec<Dep>)) {
        let job_id = j.job_id;
        tracing::info!(
            job_id,
            uid = j.user.uid,
            part = self.conf.partitions[j.part].name(),
            "job submitted"
        );
        self.jobs.insert(job_id, j);
        self.counters.submitted();
        self.submit_ext_attach(job_id, ext);
        self.last_job_update = now;
    }
}

/// Whether EnforcePartLimits refuses what breaks a partition limit
/// (otherwise the job waits).
fn enforce_part_limits(conf: &ClusterConf) -> bool {
    conf.raw
        .raw("EnforcePartLimits")
        .map(|s| !s.eq_ignore_ascii_case("NO"))
        .unwrap_or(false)
}

/// The time limit (the partition's default, else its maximum, when none
/// was asked) and the wait reason when it is past the maximum.
fn time_limit(pdef: &PartDef, desc: &JobDescMsg, enforce: bool) -> Result<(u32, u32), StateError> {
    let max_time = pdef.max_time();
    let time_limit = if desc.time_limit != NO_VAL {
        desc.time_limit
    } else if pdef.default_time() != NO_VAL {
        pdef.default_time()
    } else {
        max_time
    };
    let mut reason = job::reason::WAIT_NO_REASON;
    if max_time != INFINITE && time_limit != INFINITE && time_limit > max_time {
        if enforce {
            return Err(StateError::InvalidTimeLimit);
        }
        reason = job::reason::WAIT_PART_TIME_LIMIT;
    }
    Ok((time_limit, reason))
}

/// The request's counts with stock's defaults; counts a client sends may
/// not wrap (stock keeps them in 32 bits).
fn counts(pdef: &PartDef, desc: &JobDescMsg) -> Result<Counts, StateError> {
    let set = |n: u32| n != NO_VAL && n != 0;
    let cpus_per_task = if desc.cpus_per_task == NO_VAL16 || desc.cpus_per_task == 0 {
        1
    } else {
        desc.cpus_per_task
    };
    let min_nodes = if set(desc.min_nodes) {
        desc.min_nodes
    } else {
        1
    };
    // No node count asked: as many as the CPUs need, up to the partition's
    // nodes and MaxNodes.
    let max_nodes = if set(desc.max_nodes) {
        desc.max_nodes.max(min_nodes)
    } else if set(desc.min_nodes) {
        min_nodes
    } else {
        (pdef.nodes.len() as u32)
            .min(pdef.conf.max_nodes)
            .max(min_nodes)
    };
    let num_tasks = if set(desc.num_tasks) {
        desc.num_tasks
    } else if desc.ntasks_per_node != NO_VAL16 && desc.ntasks_per_node > 0 {
        // Like stock: one task per node when nothing else was asked.
        match u32::from(desc.ntasks_per_node).checked_mul(min_nodes) {
            Some(n) if n < NO_VAL => n,
            _ => return Err(StateError::BadTaskCount),
        }
    } else {
        min_nodes
    };
    let task_cpus = num_tasks
        .checked_mul(u32::from(cpus_per_task))
        .filter(|&n| n < NO_VAL)
        .ok_or(StateError::BadTaskCount)?;
    let asked = if desc.min_cpus == NO_VAL {
        1
    } else {
        desc.min_cpus
    };
    Ok(Counts {
        min_nodes,
        max_nodes,
        num_tasks,
        cpus_per_task,
        min_cpus: task_cpus.max(asked),
    })
}

/// The record of a new job `job_id`, pending, as `user` submitted `desc`.
fn new_job(
    now: Time,
    job_id: u32,
    user: UserInfo,
    mut desc: Box<JobDescMsg>,
    version: ProtocolVersion,
    s: Shape,
) -> Job {
    desc.user_id = user.uid;
    desc.group_id = user.gid;
    let mut j = Job {
        job_id,
        user: user.into(),
        part: s.part,
        state: JobState::Pending,
        completing: Vec::new(),
        state_reason: s.reason,
        state_desc: None,
        submit_time: now,
        eligible_time: now,
        start_time: 0,
        end_time: 0,
        time_limit: s.time_limit,
        priority: crate::sched::priority::BASIC_PRIORITY,
        min_nodes: s.min_nodes,
        max_nodes: s.max_nodes,
        num_tasks: s.num_tasks,
        cpus_per_task: s.cpus_per_task,
        min_cpus: s.min_cpus,
        mem: s.mem,
        mem_per_cpu: s.mem_per_cpu,
        gres_req: s.gres_req,
        alloc: Vec::new(),
        batch_host: None,
        exit_code: 0,
        derived_ec: 0,
        req: req::JobReq::new(*desc),
        submit_version: version,
        launch_failed: false,
        cancelled_by: None,
        ctl: Default::default(),
    };
    control::on_submit(&mut j, now);
    j
}
