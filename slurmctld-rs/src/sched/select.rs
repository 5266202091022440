//! Node selection, cons_tres-like: CPUs (and memory when it is a consumable
//! resource) are counted per node. Pure functions over the state.

use crate::constraint::{Constraint, ParseError};
use crate::gres::GresReq;
use crate::state::config::ClusterConf;
use crate::state::job::{Job, NodeAlloc};
use crate::state::table::Nodes;

/// What a job needs, normalised from its description.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request<'a> {
    pub min_nodes: u32,
    pub max_nodes: u32,
    /// CPUs in all.
    pub cpus: u32,
    pub cpus_per_task: u16,
    /// MiB, per node or (with `mem_per_cpu`) per CPU; 0 = unset.
    pub mem: u64,
    pub mem_per_cpu: bool,
    /// GRES wanted on each node.
    pub gres: &'a [GresReq],
    /// CPUs each node must give (`--ntasks-per-node` x cpus-per-task);
    /// 0 = any split of `cpus`.
    pub pn_cpus: u32,
    /// `--exclusive`: whole nodes, shared with no other job.
    pub exclusive: bool,
    /// `--oversubscribe`: may share cores where the partition allows.
    pub oversubscribe: bool,
    /// `--exclusive=user`: nodes shared only with the user's own jobs.
    pub exclusive_user: bool,
    /// The job's user (ExclusiveUser keeps other users off its nodes).
    pub uid: u32,
    /// `--nodelist`: nodes that must all be in the allocation.
    pub req_nodes: Option<&'a str>,
    /// `--exclude`: nodes it may not use.
    pub exc_nodes: Option<&'a str>,
    /// `--constraint` (see [`crate::constraint`]).
    pub features: Option<&'a str>,
}

/// Names one hostlist from a client may hold: the cluster's nodes, with
/// room for repeats (`-w n1,n1`); more could name no allocation anyway.
pub fn client_hostlist_cap(conf: &ClusterConf) -> usize {
    conf.nodes.len().saturating_mul(2).max(64)
}

/// Why a hostlist from a client is refused (stock: ESLURM_INVALID_NODE_NAME).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostsError {
    #[error(transparent)]
    Syntax(#[from] slurm_conf::hostlist::HostlistError),
    #[error("{count} names, more than the {cap} this cluster allows")]
    TooMany { count: usize, cap: usize },
}

/// The names of hostlist `expr` from a client, counted (from its ranges)
/// before they are expanded.
pub fn client_hosts(conf: &ClusterConf, expr: &str) -> Result<Vec<String>, HostsError> {
    let hl = slurm_conf::hostlist::Hostlist::parse(expr)?;
    let cap = client_hostlist_cap(conf);
    if hl.len() > cap {
        return Err(HostsError::TooMany {
            count: hl.len(),
            cap,
        });
    }
    Ok(hl.expand())
}

/// Node indexes of hostlist `expr` (None: a name that is not a node,
/// or a bad or oversized expression).
pub fn node_indexes(conf: &ClusterConf, expr: &str) -> Option<Vec<usize>> {
    let names = client_hosts(conf, expr).ok()?;
    let mut idx: Vec<usize> = names
        .iter()
        .map(|n| conf.node_index.get(n).copied())
        .collect::<Option<_>>()?;
    // Sorted and unique, as stock's node bitmap: membership tests in
    // selection are then binary searches, not scans.
    idx.sort_unstable();
    idx.dedup();
    Some(idx)
}

/// Why a `--constraint` is refused at submit (stock: ESLURM_INVALID_FEATURE).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeatureError {
    #[error("invalid constraint: {0}")]
    Syntax(#[from] ParseError),
    #[error("feature {0} is not usable on any node")]
    Unknown(String),
}

/// Checks constraint `want` as stock does at submit: the syntax always,
/// and (unless SchedulerParameters has ignore_constraint_validation)
/// that every feature it names is on some node. `outer_counts`: the
/// client is 22.05, whose controller took `a*2&b*2`.
pub fn validate_constraint(
    conf: &ClusterConf,
    want: &str,
    outer_counts: bool,
) -> Result<Constraint, FeatureError> {
    let c = Constraint::parse_with(want, outer_counts)?;
    let skip = conf
        .raw
        .scheduler_parameters
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("ignore_constraint_validation"));
    if !skip {
        let known = |f: &str| {
            conf.nodes.iter().any(|d| {
                d.features
                    .as_deref()
                    .is_some_and(|have| have.split(',').any(|h| h.trim() == f))
            })
        };
        if let Some(f) = c.names().into_iter().find(|f| !known(f)) {
            return Err(FeatureError::Unknown(f.to_string()));
        }
    }
    Ok(c)
}

/// The job's constraint for placement (already validated at submit, so
/// 22.05's wider form is taken here); Err when it cannot be parsed, and
/// then no node fits.
pub fn placement_constraint(want: Option<&str>) -> Result<Option<Constraint>, ParseError> {
    want.map(|w| Constraint::parse_with(w, true)).transpose()
}

/// Whether a node with features `have` (comma-separated) satisfies the
/// constraint `want` on its own (some matching-OR alternative; counts
/// are the placement's business).
pub fn features_match(want: &str, have: Option<&str>) -> bool {
    Constraint::parse_with(want, true).is_ok_and(|c| c.node_ok_any(have))
}

/// `JOB_SHARED_NONE`: the `shared` of a job submitted with `--exclusive`.
pub const JOB_SHARED_NONE: u16 = 0;
/// `JOB_SHARED_OK`: `--oversubscribe`.
pub const JOB_SHARED_OK: u16 = 1;
/// `JOB_SHARED_USER`: `--exclusive=user`.
pub const JOB_SHARED_USER: u16 = 2;
/// `JOB_SHARED_MCS`: `--exclusive=mcs`.
pub const JOB_SHARED_MCS: u16 = 3;

/// How a job may use a node's cores, from its partition's OverSubscribe
/// and its own request (cons_tres' node_req).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoreUse {
    /// Whole nodes with no other job (OverSubscribe=EXCLUSIVE, `--exclusive`).
    Whole,
    /// Idle cores only, on nodes where no job shares cores.
    Own,
    /// Cores that up to this many jobs use at once (FORCE[:N], or YES[:N]
    /// with `--oversubscribe`), on nodes where every job shares.
    Shared(u16),
}

/// Whether job `j` asked for whole nodes (`--exclusive`). (Not
/// `--exclusive=mcs`: with no MCS plugin stock shows it and does nothing
/// else with it.)
pub fn whole_node(j: &Job) -> bool {
    j.req.shared == JOB_SHARED_NONE
}

/// [`CoreUse`] of a job with request `req` in partition `p`.
pub fn core_use(p: &crate::state::config::PartDef, req: &Request) -> CoreUse {
    use slurm_conf::OverSubscribe;
    match p.conf.over_subscribe {
        OverSubscribe::Exclusive => CoreUse::Whole,
        _ if req.exclusive => CoreUse::Whole,
        OverSubscribe::Force(n) => CoreUse::Shared(n.max(1)),
        OverSubscribe::Yes(n) if n > 1 && req.oversubscribe => CoreUse::Shared(n),
        _ => CoreUse::Own,
    }
}

/// Whether running job `j` counts as sharing cores on its nodes.
pub fn shares_cores(conf: &ClusterConf, j: &Job) -> bool {
    conf.partitions
        .get(j.part)
        .is_some_and(|p| matches!(core_use(p, &Request::of(j)), CoreUse::Shared(_)))
}

/// Whether jobs of `p` may share cores at all (more than one per core).
fn part_shares(p: &crate::state::config::PartDef) -> bool {
    use slurm_conf::OverSubscribe;
    matches!(p.conf.over_subscribe, OverSubscribe::Force(n) | OverSubscribe::Yes(n) if n > 1)
}

/// `--ntasks-per-node` x cpus-per-task when the job asked for a task
/// count per node, else 0.
fn pn_cpus_of(j: &Job) -> u32 {
    let ntpn = j.req.ntasks_per_node;
    if ntpn == 0 || ntpn == u16::MAX - 1 || ntpn == u16::MAX {
        0
    } else {
        u32::from(ntpn) * u32::from(j.cpus_per_task.max(1))
    }
}

impl<'a> Request<'a> {
    pub fn of(j: &'a Job) -> Self {
        Request {
            min_nodes: j.min_nodes,
            max_nodes: j.max_nodes,
            cpus: j.min_cpus,
            cpus_per_task: j.cpus_per_task,
            mem: j.mem,
            mem_per_cpu: j.mem_per_cpu,
            gres: &j.gres_req,
            pn_cpus: pn_cpus_of(j),
            exclusive: whole_node(j),
            oversubscribe: j.req.shared == JOB_SHARED_OK,
            exclusive_user: j.req.shared == JOB_SHARED_USER,
            uid: j.user.uid,
            req_nodes: j.req.req_nodes().filter(|s| !s.is_empty()),
            exc_nodes: j.req.exc_nodes().filter(|s| !s.is_empty()),
            features: j.req.features().filter(|s| !s.is_empty()),
        }
    }

    pub fn mem_on(&self, cpus: u16) -> u64 {
        if self.mem_per_cpu {
            self.mem.saturating_mul(u64::from(cpus))
        } else {
            self.mem
        }
    }
}

/// `SelectTypeParameters=CR_*_Memory`: memory is allocated, not just checked.
pub fn memory_is_consumable(conf: &ClusterConf) -> bool {
    conf.raw
        .select_type_parameters
        .iter()
        .any(|(k, _)| k.to_ascii_uppercase().ends_with("MEMORY"))
}

/// Memory a job asked for in all, as stock's `job_get_tres_mem` counts it
/// before allocation: no request means the whole memory of the
/// partition's first node, per node.
pub fn requested_mem(conf: &ClusterConf, j: &Job) -> u64 {
    let per = if j.mem == 0 {
        conf.partitions
            .get(j.part)
            .and_then(|p| p.nodes.first())
            .and_then(|&i| conf.nodes.get(i))
            .map(|d| d.real_memory)
            .unwrap_or(0)
    } else {
        j.mem
    };
    if j.mem != 0 && j.mem_per_cpu {
        per.saturating_mul(u64::from(j.min_cpus))
    } else {
        per.saturating_mul(u64::from(j.min_nodes))
    }
}

/// Whether the partition's configured nodes could ever run `req`, idle.
/// With a `--constraint`, only nodes that satisfy it count (some
/// matching-OR alternative, its counted sets included), as stock's node
/// sets hold only such nodes.
pub fn could_ever_fit(conf: &ClusterConf, part: usize, req: &Request) -> bool {
    let Some(p) = conf.partitions.get(part) else {
        return false;
    };
    let Ok(cons) = placement_constraint(req.features) else {
        return false;
    };
    let alts = cons.as_ref().map_or(1, Constraint::alternatives);
    (0..alts).any(|alt| could_fit_alt(conf, p, req, cons.as_ref(), alt))
}

fn could_fit_alt(
    conf: &ClusterConf,
    p: &crate::state::config::PartDef,
    req: &Request,
    cons: Option<&Constraint>,
    alt: usize,
) -> bool {
    let cpt = u32::from(req.cpus_per_task.max(1));
    let fits: Vec<usize> = p
        .nodes
        .iter()
        .copied()
        .filter(|&i| {
            conf.nodes.get(i).is_some_and(|d| {
                u32::from(d.cpus) >= cpt
                    && req.mem_on(req.cpus_per_task.max(1)) <= d.real_memory
                    && req
                        .gres
                        .iter()
                        .all(|g| g.available_in(&d.gres_list) >= g.count)
                    && cons.is_none_or(|c| c.node_ok(d.features.as_deref(), alt))
            })
        })
        .collect();
    let feats = |i: usize| conf.nodes.get(i).and_then(|d| d.features.as_deref());
    let Some(counted) = counted_nodes(cons, &fits, &feats) else {
        return false;
    };
    let min_nodes = req.min_nodes.max(counted.len() as u32);
    if (fits.len() as u32) < min_nodes {
        return false;
    }
    let mut usable: Vec<u32> = fits
        .iter()
        .filter_map(|&i| conf.nodes.get(i))
        .map(|d| u32::from(d.cpus) / cpt * cpt)
        .collect();
    usable.sort_unstable_by(|a, b| b.cmp(a));
    let total: u32 = usable
        .iter()
        .take(req.max_nodes.max(min_nodes) as usize)
        .sum();
    total >= req.cpus
}

/// Picks nodes for `req` among the partition's free resources, or None.
pub fn select(
    conf: &ClusterConf,
    nodes: &Nodes,
    part: usize,
    req: &Request,
) -> Option<Vec<NodeAlloc>> {
    select_excluding(conf, nodes, part, req, &|_| false)
}

/// [`select`] leaving out the nodes `exclude` names (those the backfill
/// plan holds for higher-priority jobs).
pub fn select_excluding(
    conf: &ClusterConf,
    nodes: &Nodes,
    part: usize,
    req: &Request,
    exclude: &dyn Fn(usize) -> bool,
) -> Option<Vec<NodeAlloc>> {
    let p = conf.partitions.get(part)?;
    match core_use(p, req) {
        // Sharing jobs take idle cores when they can, as cons_tres
        // tries idle resources before shared rows.
        CoreUse::Shared(n) => pick(conf, nodes, p, req, exclude, Mode::Idle)
            .or_else(|| pick(conf, nodes, p, req, exclude, Mode::Shared(n))),
        CoreUse::Whole => pick(conf, nodes, p, req, exclude, Mode::Whole),
        CoreUse::Own => pick(conf, nodes, p, req, exclude, Mode::Own),
    }
}

/// What a [`pick`] may use on a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// A whole node with nothing on it.
    Whole,
    /// Idle cores of a node no sharing job of another partition uses.
    Own,
    /// Idle cores, for a sharing job (not beside non-sharing jobs).
    Idle,
    /// Core slots shared by up to this many jobs a core.
    Shared(u16),
}

fn pick(
    conf: &ClusterConf,
    nodes: &Nodes,
    p: &crate::state::config::PartDef,
    req: &Request,
    exclude: &dyn Fn(usize) -> bool,
    mode: Mode,
) -> Option<Vec<NodeAlloc>> {
    let cons = placement_constraint(req.features).ok()?;
    // `[a|b]`: each alternative in turn, the first that fits wins.
    let alts = cons.as_ref().map_or(1, Constraint::alternatives);
    (0..alts).find_map(|alt| pick_alt(conf, nodes, p, req, exclude, mode, cons.as_ref(), alt))
}

/// Nodes for the counted sets of `cons` (`a*2`, `[a*2&b*4]`), taken in
/// `cand` order; a bracket's sets each take nodes no earlier set took,
/// as stock's XAND does. None when a set runs short.
pub fn counted_nodes<'a>(
    cons: Option<&Constraint>,
    cand: &[usize],
    have: &dyn Fn(usize) -> Option<&'a str>,
) -> Option<Vec<usize>> {
    let mut out: Vec<usize> = Vec::new();
    for set in cons.map(Constraint::counts).unwrap_or_default() {
        let mut got = 0;
        for &i in cand {
            if got >= set.count {
                break;
            }
            let taken = out.contains(&i);
            if (!set.distinct || !taken) && set.atom.matches(have(i)) {
                if !taken {
                    out.push(i);
                }
                got += 1;
            }
        }
        if got < set.count {
            return None;
        }
    }
    Some(out)
}

#[allow(clippy::too_many_arguments)]
fn pick_alt(
    conf: &ClusterConf,
    nodes: &Nodes,
    p: &crate::state::config::PartDef,
    req: &Request,
    exclude: &dyn Fn(usize) -> bool,
    mode: Mode,
    cons: Option<&Constraint>,
    alt: usize,
) -> Option<Vec<NodeAlloc>> {
    let track_mem = memory_is_consumable(conf);
    let cpt = req.cpus_per_task.max(1);
    let exclusive = mode == Mode::Whole;
    let exclusive_user = p.conf.exclusive_user || req.exclusive_user;
    let own_part_shares = part_shares(p);
    // --nodelist must all be usable and taken; --exclude never.
    let mut required = match req.req_nodes {
        Some(r) => node_indexes(conf, r)?,
        None => Vec::new(),
    };
    let excluded = match req.exc_nodes {
        Some(x) => node_indexes(conf, x).unwrap_or_default(),
        None => Vec::new(),
    };
    // CPUs this job may use on a node, by mode.
    let usable = |n: &crate::state::node::Node| -> u16 {
        match mode {
            Mode::Whole if n.jobs.is_empty() && n.alloc_cpus == 0 => n.def.cpus,
            Mode::Whole => 0,
            // Beside sharing jobs only in a partition that shares itself.
            Mode::Own if n.shared_cpus > 0 && !own_part_shares => 0,
            Mode::Own => n.free_cpus(),
            Mode::Idle | Mode::Shared(_) if n.solo_cpus > 0 => 0,
            Mode::Idle => n.free_cpus(),
            Mode::Shared(k) => n.shareable_cpus(k),
        }
    };
    let mut cand: Vec<usize> = p
        .nodes
        .iter()
        .copied()
        .filter(|&i| {
            let n = &nodes[i];
            !exclude(i)
                && excluded.binary_search(&i).is_err()
                && cons.is_none_or(|c| c.node_ok(n.def.features.as_deref(), alt))
                && n.open_to(req.uid)
                // ExclusiveUser: only nodes empty or held by this user
                && (!exclusive_user || n.jobs.is_empty() || n.owner == Some(req.uid))
                && n.schedulable()
                // As stock (cg_node_bitmap): nothing new on a node whose
                // last job's epilog has not reported yet.
                && n.completing.is_empty()
                && usable(n) >= cpt
                && (!track_mem || req.mem_on(cpt) <= n.free_memory())
                && req.mem_on(cpt) <= n.def.real_memory
                && req.gres.iter().all(|g| n.free_gres(g) >= g.count)
        })
        .collect();
    let mut in_cand = vec![false; conf.nodes.len()];
    for &i in &cand {
        if let Some(x) = in_cand.get_mut(i) {
            *x = true;
        }
    }
    if required
        .iter()
        .any(|&r| !in_cand.get(r).copied().unwrap_or(false))
    {
        return None;
    }
    // Required nodes first; then lowest weight, then config order
    // (stock's default).
    cand.sort_by_key(|&i| (required.binary_search(&i).is_err(), nodes[i].def.weight, i));
    // Counted sets become required nodes too, and the job at least that
    // many nodes (stock adds them to the required bitmap); more than
    // the job's node limit cannot run.
    let counted = counted_nodes(cons, &cand, &|i| nodes[i].def.features.as_deref())?;
    if counted.len() as u32 > req.max_nodes {
        return None;
    }
    for i in counted {
        if let Err(at) = required.binary_search(&i) {
            required.insert(at, i);
        }
    }
    let min_nodes = req.min_nodes.max(required.len() as u32);
    let max_nodes = req.max_nodes.max(min_nodes);
    cand.sort_by_key(|&i| (required.binary_search(&i).is_err(), nodes[i].def.weight, i));
    let mut out = Vec::new();
    let mut remaining = req.cpus;
    for i in cand {
        if out.len() as u32 >= max_nodes {
            break;
        }
        let n = &nodes[i];
        let k = out.len() as u32;
        // Leave one task's worth for each node still needed to reach min_nodes.
        let reserve = u32::from(cpt).saturating_mul(min_nodes.saturating_sub(k + 1));
        let want = remaining.saturating_sub(reserve).max(u32::from(cpt));
        let mut free = u32::from(usable(n)) / u32::from(cpt) * u32::from(cpt);
        if track_mem && req.mem > 0 && req.mem_per_cpu {
            let by_mem =
                (n.free_memory() / req.mem.max(1)) as u32 / u32::from(cpt) * u32::from(cpt);
            free = free.min(by_mem);
        }
        let take = if exclusive {
            // the whole node, whatever the tasks need
            u32::from(n.def.cpus)
        } else if req.pn_cpus > 0 {
            // a task count per node: exactly that many on every node
            if free < req.pn_cpus {
                continue;
            }
            req.pn_cpus
        } else {
            want.min(free)
        };
        if take == 0 {
            continue;
        }
        let take = take.div_ceil(u32::from(cpt)) * u32::from(cpt);
        let Some(gres) = n.pick_gres(req.gres) else {
            continue;
        };
        let cpus = u16::try_from(take).unwrap_or(u16::MAX);
        let mem = if (req.mem == 0 || exclusive) && track_mem {
            n.free_memory()
        } else {
            req.mem_on(cpus)
        };
        out.push(NodeAlloc {
            node: i,
            cpus,
            mem,
            gres,
            cores: Vec::new(),
        });
        remaining = remaining.saturating_sub(take);
        if remaining == 0 && out.len() as u32 >= min_nodes {
            // (Required nodes come first: one left out is not coming.)
            let all_required = required.iter().all(|r| out.iter().any(|a| a.node == *r));
            return all_required.then_some(out);
        }
    }
    None
}
