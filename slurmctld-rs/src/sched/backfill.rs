//! The backfill planner: pure functions over a model of the nodes' free
//! resources in time. Running jobs free what they hold at their time limit
//! (start + TimeLimit); each pending job that cannot start now gets the
//! earliest start where it fits, and holds the nodes it would use from then
//! until its own time limit (a reservation). A lower-priority job may start
//! now only on nodes no reservation holds during its run, so it never delays
//! the jobs ahead of it.

use super::select::{self, Request};
use crate::constraint::Constraint;
use crate::state::command::Time;
use crate::state::config::{ClusterConf, NodeDef};
use crate::state::job::{Job, JobState};
use crate::state::node::Node;
use crate::state::table::{Jobs, Nodes};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Node indexes hash to themselves (SipHash dominated the planner's profile).
#[derive(Default)]
pub struct IdHasher(u64);
impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, b: &[u8]) {
        for &x in b {
            self.0 = self.0.rotate_left(8) ^ u64::from(x);
        }
    }
    fn write_usize(&mut self, i: usize) {
        self.0 = i as u64;
    }
}
type NodeMap<V> = HashMap<usize, V, BuildHasherDefault<IdHasher>>;

/// How far ahead starts are planned (stock's `bf_window` default, 1 day).
pub const BF_WINDOW: Time = 24 * 3600;
/// Fit checks per job before it is left without a planned start.
pub const MAX_CHECKS_PER_JOB: usize = 16;
/// Node looks one backfill pass may spend in all (like stock's
/// `bf_max_time`, but counted, so that the plan stays deterministic).
pub const WORK_BUDGET: u64 = 16_000_000;

/// What a node has free at some moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Avail {
    pub cpus: u32,
    pub mem: u64,
    /// Free devices per entry of the node's `gres_list`.
    pub gres: Vec<u64>,
}

/// Resources a running job gives back at `time`.
#[derive(Debug, Clone, PartialEq)]
pub struct Release {
    pub time: Time,
    pub node: usize,
    pub avail: Avail,
}

/// Nodes held for a planned job during `[start, end)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Reservation {
    pub job_id: u32,
    pub start: Time,
    pub end: Time,
    pub nodes: Vec<usize>,
}

/// A pending job's place in the backfill plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// Expected start (`squeue --start`, StartTime).
    pub start: Time,
    /// Nodes it is expected to run on (SchedNodeList).
    pub nodes: Vec<usize>,
}

/// The seconds a job may run (a year for unlimited, as stock shows).
pub fn duration(j: &Job) -> Time {
    j.limit_end(0)
}

/// The model: free resources now, what running jobs release and when, and
/// the reservations made so far in this plan.
#[derive(Debug, Clone)]
pub struct Planner {
    pub now: Time,
    track_mem: bool,
    /// Free now; None for nodes that cannot take jobs (down, drained ...).
    base: Vec<Option<Avail>>,
    /// Sorted by time.
    releases: Vec<Release>,
    pub reservations: Vec<Reservation>,
    /// Per node: the windows reservations hold it.
    held: NodeMap<Vec<(Time, Time)>>,
    /// Work left to this pass (node looks and releases walked).
    pub budget: u64,
    /// Partition nodes by (weight, index), the order select uses.
    order: HashMap<usize, Vec<usize>>,
}

/// Device index `idx` of GRES `name` → the node's `gres_list` entry.
fn gres_entry(def: &NodeDef, name: &str, idx: u32) -> Option<usize> {
    let mut left = u64::from(idx);
    for (e, g) in def.gres_list.iter().enumerate() {
        if g.name != name {
            continue;
        }
        if left < g.count {
            return Some(e);
        }
        left -= g.count;
    }
    None
}

impl Planner {
    pub fn new(conf: &ClusterConf, nodes: &Nodes, jobs: &Jobs, now: Time) -> Self {
        let track_mem = select::memory_is_consumable(conf);
        let base = nodes
            .iter()
            .map(|n| n.schedulable().then(|| Self::avail_of(n, track_mem)))
            .collect();
        let mut releases = Vec::new();
        for j in jobs.values().filter(|j| j.state == JobState::Running) {
            // A job past its limit is about to be killed: it frees soon.
            let t = j.end_time.max(now + 1);
            for a in &j.alloc {
                let Some(n) = nodes.get(a.node) else { continue };
                let mut gres = vec![0; n.def.gres_list.len()];
                for g in &a.gres {
                    for &i in &g.indices {
                        if let Some(e) = gres_entry(&n.def, &g.name, i) {
                            gres[e] += 1;
                        }
                    }
                }
                releases.push(Release {
                    time: t,
                    node: a.node,
                    avail: Avail {
                        cpus: u32::from(a.cpus),
                        mem: if track_mem { a.mem } else { 0 },
                        gres,
                    },
                });
            }
        }
        releases.sort_by_key(|r| (r.time, r.node));
        Planner {
            now,
            track_mem,
            base,
            releases,
            reservations: Vec::new(),
            held: NodeMap::default(),
            budget: WORK_BUDGET,
            order: HashMap::new(),
        }
    }

    fn avail_of(n: &Node, track_mem: bool) -> Avail {
        Avail {
            cpus: u32::from(n.free_cpus()),
            mem: if track_mem {
                n.free_memory()
            } else {
                n.def.real_memory
            },
            gres: n
                .def
                .gres_list
                .iter()
                .zip(&n.gres_used)
                .map(|(_, used)| used.iter().filter(|u| !**u).count() as u64)
                .collect(),
        }
    }

    /// After a job started on `idx`: their free resources now, from the nodes.
    pub fn refresh(&mut self, nodes: &Nodes, idx: &[usize]) {
        for &i in idx {
            if let (Some(slot), Some(n)) = (self.base.get_mut(i), nodes.get(i)) {
                *slot = n.schedulable().then(|| Self::avail_of(n, self.track_mem));
            }
        }
    }

    /// A job just started: it frees its nodes at `end`.
    pub fn add_release(&mut self, end: Time, j: &Job, nodes: &Nodes) {
        for a in &j.alloc {
            let Some(n) = nodes.get(a.node) else { continue };
            let mut gres = vec![0; n.def.gres_list.len()];
            for g in &a.gres {
                for &i in &g.indices {
                    if let Some(e) = gres_entry(&n.def, &g.name, i) {
                        gres[e] += 1;
                    }
                }
            }
            let r = Release {
                time: end,
                node: a.node,
                avail: Avail {
                    cpus: u32::from(a.cpus),
                    mem: if self.track_mem { a.mem } else { 0 },
                    gres,
                },
            };
            let at = self
                .releases
                .partition_point(|x| (x.time, x.node) <= (end, a.node));
            self.releases.insert(at, r);
        }
    }

    /// Whether a reservation holds node `i` during any of `[start, start+dur)`.
    pub fn reserved(&self, i: usize, start: Time, dur: Time) -> bool {
        let end = start.saturating_add(dur);
        self.held
            .get(&i)
            .is_some_and(|w| w.iter().any(|&(s, e)| s < end && start < e))
    }

    pub fn reserve(&mut self, job_id: u32, start: Time, dur: Time, nodes: Vec<usize>) {
        let end = start.saturating_add(dur);
        for &i in &nodes {
            self.held.entry(i).or_default().push((start, end));
        }
        self.reservations.push(Reservation {
            job_id,
            start,
            end,
            nodes,
        });
    }

    fn order_of(&mut self, conf: &ClusterConf, part: usize) -> Vec<usize> {
        self.order
            .entry(part)
            .or_insert_with(|| {
                let mut v: Vec<usize> = conf
                    .partitions
                    .get(part)
                    .map(|p| p.nodes.clone())
                    .unwrap_or_default();
                v.sort_by_key(|&i| (conf.nodes.get(i).map(|d| d.weight).unwrap_or(0), i));
                v
            })
            .clone()
    }

    /// The earliest time `req` (running `dur` seconds) fits in partition
    /// `part` without touching reserved nodes, and the nodes it would use;
    /// None when that is beyond [`BF_WINDOW`] or the check budget.
    pub fn earliest(
        &mut self,
        conf: &ClusterConf,
        part: usize,
        req: &Request,
        dur: Time,
    ) -> Option<(Time, Vec<usize>)> {
        let cons = select::placement_constraint(req.features).ok()?;
        let order = self.order_of(conf, part);
        let walked = order.len() as u64 + self.releases.len() as u64;
        if self.budget < walked {
            self.budget = 0;
            return None;
        }
        self.budget -= walked;
        let in_part: NodeMap<()> = order.iter().map(|&i| (i, ())).collect();
        let mut cur: NodeMap<Avail> = order
            .iter()
            .filter_map(|&i| self.base.get(i).cloned().flatten().map(|a| (i, a)))
            .collect();
        let mut t = self.now;
        let mut next = 0;
        let mut checks = 0;
        // Reservation ends are times too: nodes come back from them.
        let mut res_ends: Vec<Time> = self.reservations.iter().map(|r| r.end).collect();
        res_ends.sort_unstable();
        // CPUs free in the partition in all (reserved or not): when even
        // that is short, no node choice can work and the check is skipped.
        let mut total: u64 = cur.values().map(|a| u64::from(a.cpus)).sum();
        loop {
            while next < self.releases.len() && self.releases[next].time <= t {
                let r = &self.releases[next];
                if let Some(a) = cur.get_mut(&r.node) {
                    total += u64::from(r.avail.cpus);
                    a.cpus += r.avail.cpus;
                    a.mem += r.avail.mem;
                    for (x, y) in a.gres.iter_mut().zip(&r.avail.gres) {
                        *x += y;
                    }
                }
                next += 1;
            }
            if total >= u64::from(req.cpus) {
                checks += 1;
                self.budget = self.budget.saturating_sub(order.len() as u64);
                // `[a|b]`: the first alternative that fits at `t`.
                let alts = cons.as_ref().map_or(1, Constraint::alternatives);
                let fit = (0..alts).find_map(|alt| {
                    let c = cons.as_ref().map(|c| (c, alt));
                    self.fits(conf, &order, &cur, req, c, t, dur)
                });
                if let Some(nodes) = fit {
                    return Some((t, nodes));
                }
            }
            if checks >= MAX_CHECKS_PER_JOB {
                return None;
            }
            // The next moment anything in this partition changes.
            let mut nt = None;
            while next < self.releases.len() {
                if in_part.contains_key(&self.releases[next].node) {
                    nt = Some(self.releases[next].time);
                    break;
                }
                next += 1;
            }
            let re = res_ends.iter().copied().find(|&e| e > t);
            t = match (nt, re) {
                (Some(a), Some(b)) => a.min(b),
                (Some(a), None) | (None, Some(a)) => a,
                (None, None) => return None,
            };
            if t > self.now + BF_WINDOW {
                return None;
            }
        }
    }

    /// Greedy node choice as [`select::select`] makes it, on the model;
    /// `cons`: the constraint and the matching-OR alternative tried.
    #[allow(clippy::too_many_arguments)]
    fn fits(
        &self,
        conf: &ClusterConf,
        order: &[usize],
        cur: &NodeMap<Avail>,
        req: &Request,
        cons: Option<(&Constraint, usize)>,
        t: Time,
        dur: Time,
    ) -> Option<Vec<usize>> {
        let cpt = u32::from(req.cpus_per_task.max(1));
        // --nodelist first (all of it, or no fit), never --exclude, and
        // only nodes with the --constraint features.
        let required = match req.req_nodes {
            Some(r) => select::node_indexes(conf, r)?,
            None => Vec::new(),
        };
        let excluded = req
            .exc_nodes
            .and_then(|x| select::node_indexes(conf, x))
            .unwrap_or_default();
        let feats = |i: usize| conf.nodes.get(i).and_then(|d| d.features.as_deref());
        let one = req.mem_on(cpt as u16);
        // Nodes the job could use at `t` at all.
        let usable = |i: usize| {
            let (Some(a), Some(def)) = (cur.get(&i), conf.nodes.get(i)) else {
                return false;
            };
            cons.is_none_or(|(c, alt)| c.node_ok(def.features.as_deref(), alt))
                && a.cpus >= cpt
                && (!self.track_mem || one <= a.mem)
                && one <= def.real_memory
                && !self.reserved(i, t, dur)
                && req.gres.iter().all(|g| {
                    def.gres_list
                        .iter()
                        .zip(&a.gres)
                        .filter(|(d, _)| g.matches(d))
                        .map(|(_, f)| *f)
                        .sum::<u64>()
                        >= g.count
                })
        };
        let mut required = required;
        let mut order: Vec<usize> = order
            .iter()
            .copied()
            .filter(|&i| !excluded.contains(&i) && usable(i))
            .collect();
        order.sort_by_key(|i| !required.contains(i));
        // Counted sets (`[a*2&b*4]`) are required nodes, as in sched.
        let counted = select::counted_nodes(cons.map(|(c, _)| c), &order, &feats)?;
        if counted.len() as u32 > req.max_nodes {
            return None;
        }
        for i in counted {
            if !required.contains(&i) {
                required.push(i);
            }
        }
        order.sort_by_key(|i| !required.contains(i));
        let min_nodes = req.min_nodes.max(required.len() as u32);
        let mut out = Vec::new();
        let mut remaining = req.cpus;
        for i in order {
            if out.len() as u32 >= req.max_nodes.max(min_nodes) {
                break;
            }
            let Some(a) = cur.get(&i) else {
                continue;
            };
            let k = out.len() as u32;
            let reserve = cpt.saturating_mul(min_nodes.saturating_sub(k + 1));
            let want = remaining.saturating_sub(reserve).max(cpt);
            let mut free = a.cpus / cpt * cpt;
            if self.track_mem && req.mem > 0 && req.mem_per_cpu {
                free = free.min((a.mem / req.mem.max(1)) as u32 / cpt * cpt);
            }
            let take = want.min(free);
            if take == 0 {
                continue;
            }
            out.push(i);
            remaining = remaining.saturating_sub(take.div_ceil(cpt) * cpt);
            if remaining == 0 && out.len() as u32 >= min_nodes {
                return required.iter().all(|r| out.contains(r)).then_some(out);
            }
        }
        None
    }
}
