//! A node's runtime state: what slurmd reported, what is allocated on it,
//! and the DOWN/DRAIN/... bits that `sinfo` shows.

use super::config::NodeDef;
use slurm_wire::ProtocolVersion;
use std::collections::BTreeSet;

/// `node_states` from slurm.h: the base state in the low 4 bits.
pub mod bits {
    pub const UNKNOWN: u32 = 0;
    pub const DOWN: u32 = 1;
    pub const IDLE: u32 = 2;
    pub const ALLOCATED: u32 = 3;
    pub const MIXED: u32 = 5;
    pub const FUTURE: u32 = 6;
    pub const BASE: u32 = 0xf;
    pub const UNDRAIN: u32 = 1 << 6;
    pub const RESUME: u32 = 1 << 8;
    pub const DRAIN: u32 = 1 << 9;
    pub const COMPLETING: u32 = 1 << 10;
    pub const NO_RESPOND: u32 = 1 << 11;
    pub const FAIL: u32 = 1 << 13;
    pub const INVALID_REG: u32 = 1 << 22;
}

/// The administrative base state; ALLOCATED/MIXED follow from allocations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// Never registered since the controller started.
    Unknown,
    /// Usable (IDLE, ALLOCATED or MIXED depending on its jobs).
    Up,
    Down,
    Future,
}

/// Why a node is DOWN, which decides whether ReturnToService brings it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DownCause {
    NotResponding,
    Admin,
    /// Registered with less hardware than configured.
    InvalidRegistration,
    Config,
}

/// What slurmd said about itself at its last registration.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reported {
    pub cpus: u16,
    pub boards: u16,
    pub sockets: u16,
    pub cores: u16,
    pub threads: u16,
    pub real_memory: u64,
    pub tmp_disk: u32,
    pub arch: Option<String>,
    pub os: Option<String>,
    /// slurmd's release string ("24.11.5").
    pub version: Option<String>,
    pub boot_time: i64,
    pub slurmd_start_time: i64,
}

#[derive(Debug, Clone)]
pub struct Node {
    pub def: NodeDef,
    pub base: Base,
    pub down_cause: Option<DownCause>,
    pub drain: bool,
    pub no_respond: bool,
    pub reason: Option<String>,
    pub reason_uid: u32,
    pub reason_time: i64,
    pub reported: Option<Reported>,
    /// The protocol version slurmd registered with: RPCs to it use it.
    pub protocol_version: Option<ProtocolVersion>,
    pub cpu_load: u32,
    pub free_mem: u64,
    pub last_response: i64,
    pub last_busy: i64,
    /// CPUs in use by any job (what sinfo shows): the non-sharing jobs'
    /// CPUs plus the cores the sharing jobs cover (at most all of them).
    pub alloc_cpus: u16,
    /// CPUs of jobs that do not share cores (cons_tres' one-row and
    /// exclusive jobs).
    pub solo_cpus: u16,
    /// CPU slots of jobs that share cores (OverSubscribe=FORCE, or YES
    /// with `--oversubscribe`): up to CPUs x the partition's count.
    pub shared_cpus: u32,
    /// The running jobs counted in `shared_cpus`.
    pub sharing_jobs: BTreeSet<u32>,
    pub alloc_mem: u64,
    /// Per item of `def.gres_list`: which devices are allocated.
    pub gres_used: Vec<Vec<bool>>,
    /// Per core (socket-major, the order of a job credential's core
    /// bitmap): how many running jobs hold it.
    pub core_use: Vec<u16>,
    /// Jobs running here.
    pub jobs: BTreeSet<u32>,
    /// Jobs whose epilog has not completed here yet.
    pub completing: BTreeSet<u32>,
    /// ExclusiveUser: the user whose job holds the node (meaningful only
    /// while `jobs` is not empty; see [`Node::take_for`]).
    pub owner: Option<u32>,
    /// When to ask the node to register again: a batch job started here
    /// was not in its last registration, too soon to call it lost.
    pub recheck_at: Option<i64>,
}

/// GRES devices of one name held on one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GresAlloc {
    pub name: String,
    /// The type the job asked for (None: any).
    pub type_name: Option<String>,
    /// Device indexes among the node's GRES of this name (all types).
    pub indices: Vec<u32>,
    /// How many of this name the node has (the bitmap size).
    pub total: u32,
}

/// Largest GRES count tracked device by device; bigger counts (shared
/// GRES like mps) are not allocated by index.
pub const MAX_GRES_BITS: u64 = 4096;

/// Cores of a node as configured (sockets x cores per socket).
pub fn cores_of(def: &NodeDef) -> usize {
    usize::from(def.sockets.max(1)) * usize::from(def.cores.max(1))
}

/// Empty allocation bitmaps for a node's GRES items.
pub fn gres_slots(def: &NodeDef) -> Vec<Vec<bool>> {
    def.gres_list
        .iter()
        .map(|g| vec![false; g.count.min(MAX_GRES_BITS) as usize])
        .collect()
}

impl Node {
    pub fn new(def: NodeDef) -> Self {
        let (base, down_cause, drain) = match def.state.as_deref() {
            Some("FUTURE") => (Base::Future, None, false),
            Some("DOWN") => (Base::Down, Some(DownCause::Config), false),
            Some("DRAIN") => (Base::Unknown, None, true),
            _ => (Base::Unknown, None, false),
        };
        let gres_used = gres_slots(&def);
        let core_use = vec![0; cores_of(&def)];
        Node {
            gres_used,
            core_use,
            reason: def.reason.clone(),
            def,
            base,
            down_cause,
            drain,
            no_respond: false,
            reason_uid: 0,
            reason_time: 0,
            reported: None,
            protocol_version: None,
            cpu_load: 0,
            free_mem: 0,
            last_response: 0,
            last_busy: 0,
            alloc_cpus: 0,
            solo_cpus: 0,
            shared_cpus: 0,
            sharing_jobs: BTreeSet::new(),
            alloc_mem: 0,
            jobs: BTreeSet::new(),
            completing: BTreeSet::new(),
            owner: None,
            recheck_at: None,
        }
    }

    /// Whether a job of `uid` may share this node: not while another
    /// user's ExclusiveUser job runs here.
    pub fn open_to(&self, uid: u32) -> bool {
        self.jobs.is_empty() || self.owner.is_none_or(|o| o == uid)
    }

    /// Records the owner as a job of `uid` starts here (before it joins
    /// `jobs`): an ExclusiveUser job makes `uid` the owner; another job
    /// on an empty node clears a stale one.
    pub fn take_for(&mut self, uid: u32, exclusive_user: bool) {
        if exclusive_user {
            self.owner = Some(uid);
        } else if self.jobs.is_empty() {
            self.owner = None;
        }
    }

    pub fn name(&self) -> &str {
        &self.def.name
    }

    /// `node_state` as the wire carries it.
    pub fn state_word(&self) -> u32 {
        let base = match self.base {
            Base::Unknown if self.jobs.is_empty() => bits::UNKNOWN,
            Base::Down => bits::DOWN,
            Base::Future => bits::FUTURE,
            Base::Unknown | Base::Up => {
                if self.alloc_cpus == 0 && self.jobs.is_empty() {
                    bits::IDLE
                } else if self.alloc_cpus >= self.def.cpus {
                    bits::ALLOCATED
                } else {
                    bits::MIXED
                }
            }
        };
        let mut w = base;
        if self.drain {
            w |= bits::DRAIN;
        }
        if !self.completing.is_empty() {
            w |= bits::COMPLETING;
        }
        if self.no_respond {
            w |= bits::NO_RESPOND;
        }
        w
    }

    /// Whether new work may be placed here.
    pub fn schedulable(&self) -> bool {
        self.base == Base::Up && !self.drain && !self.no_respond && self.protocol_version.is_some()
    }

    /// Counts `cpus` of job `job_id` as taken here (`sharing`: in a
    /// core-sharing way).
    pub fn take_cpus(&mut self, job_id: u32, cpus: u16, sharing: bool) {
        if sharing {
            self.shared_cpus = self.shared_cpus.saturating_add(u32::from(cpus));
            self.sharing_jobs.insert(job_id);
        } else {
            self.solo_cpus = self.solo_cpus.saturating_add(cpus);
        }
        self.recount_cpus();
    }

    /// Gives back what [`Node::take_cpus`] took for `job_id`.
    pub fn release_cpus(&mut self, job_id: u32, cpus: u16) {
        if self.sharing_jobs.remove(&job_id) {
            self.shared_cpus = self.shared_cpus.saturating_sub(u32::from(cpus));
        } else {
            self.solo_cpus = self.solo_cpus.saturating_sub(cpus);
        }
        self.recount_cpus();
    }

    /// Forgets every allocation (before they are counted again).
    pub fn clear_cpus(&mut self) {
        self.core_use = vec![0; cores_of(&self.def)];
        self.solo_cpus = 0;
        self.shared_cpus = 0;
        self.sharing_jobs.clear();
        self.recount_cpus();
    }

    // Sharing jobs take idle cores first, so the cores they cover are
    // their slot count up to the node's size.
    fn recount_cpus(&mut self) {
        let shared = u16::try_from(self.shared_cpus).unwrap_or(u16::MAX);
        self.alloc_cpus = self
            .solo_cpus
            .saturating_add(shared)
            .min(self.def.cpus.max(self.solo_cpus));
    }

    /// CPU slots a core-sharing job of a partition allowing `per_core`
    /// jobs a core may still take here (at most the node's CPUs).
    pub fn shareable_cpus(&self, per_core: u16) -> u16 {
        let slots = u32::from(self.def.cpus) * u32::from(per_core.max(1));
        let left = slots.saturating_sub(self.shared_cpus);
        u16::try_from(left).unwrap_or(u16::MAX).min(self.def.cpus)
    }

    /// The cores a job taking `cpus` CPUs here gets: the least used,
    /// lowest first (so idle cores before shared ones), in ascending order.
    pub fn pick_cores(&self, cpus: u16) -> Vec<u16> {
        let n = cores_of(&self.def);
        let k = usize::from(cpus)
            .div_ceil(usize::from(self.def.threads.max(1)))
            .min(n);
        let mut ids: Vec<u16> = (0..n).filter_map(|c| u16::try_from(c).ok()).collect();
        ids.sort_by_key(|&c| (self.core_use.get(usize::from(c)).copied().unwrap_or(0), c));
        ids.truncate(k);
        ids.sort_unstable();
        ids
    }

    /// Counts a job on `cores` (`take`) or off them.
    pub fn hold_cores(&mut self, cores: &[u16], take: bool) {
        let n = cores_of(&self.def);
        if self.core_use.len() != n {
            self.core_use.resize(n, 0);
        }
        for &c in cores {
            if let Some(u) = self.core_use.get_mut(usize::from(c)) {
                *u = if take {
                    u.saturating_add(1)
                } else {
                    u.saturating_sub(1)
                };
            }
        }
    }

    /// Idle CPUs: those no job uses.
    pub fn free_cpus(&self) -> u16 {
        self.def.cpus.saturating_sub(self.alloc_cpus)
    }

    pub fn free_memory(&self) -> u64 {
        self.def.real_memory.saturating_sub(self.alloc_mem)
    }

    /// Free devices that could serve `r`.
    pub fn free_gres(&self, r: &crate::gres::GresReq) -> u64 {
        self.def
            .gres_list
            .iter()
            .zip(&self.gres_used)
            .filter(|(g, _)| r.matches(g))
            .map(|(_, used)| used.iter().filter(|u| !**u).count() as u64)
            .sum()
    }

    /// Picks free devices for each request (None if any falls short).
    pub fn pick_gres(&self, reqs: &[crate::gres::GresReq]) -> Option<Vec<GresAlloc>> {
        let mut out = Vec::new();
        for r in reqs {
            let mut need = r.count;
            let mut indices = Vec::new();
            let mut offset = 0u32;
            let mut total = 0u32;
            for (g, used) in self.def.gres_list.iter().zip(&self.gres_used) {
                if g.name != r.name {
                    continue;
                }
                if r.matches(g) {
                    for (b, u) in used.iter().enumerate() {
                        if need > 0 && !*u {
                            indices.push(offset + b as u32);
                            need -= 1;
                        }
                    }
                }
                offset += used.len() as u32;
                total += used.len() as u32;
            }
            if need > 0 {
                return None;
            }
            out.push(GresAlloc {
                name: r.name.clone(),
                type_name: r.type_name.clone(),
                indices,
                total,
            });
        }
        Some(out)
    }

    /// Marks (or frees) the devices of `allocs`.
    pub fn mark_gres(&mut self, allocs: &[GresAlloc], used: bool) {
        for a in allocs {
            let mut offset = 0u32;
            for (g, bits) in self.def.gres_list.iter().zip(self.gres_used.iter_mut()) {
                if g.name != a.name {
                    continue;
                }
                let len = bits.len() as u32;
                for &i in &a.indices {
                    if i >= offset && i < offset + len {
                        bits[(i - offset) as usize] = used;
                    }
                }
                offset += len;
            }
        }
    }

    pub fn set_reason(&mut self, reason: Option<String>, uid: u32, now: i64) {
        self.reason = reason;
        self.reason_uid = uid;
        self.reason_time = if self.reason.is_some() { now } else { 0 };
    }
}
