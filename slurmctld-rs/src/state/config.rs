//! The parts of slurm.conf the controller's state machine needs, resolved
//! once (node lists expanded, partitions pointing at node indexes).

use slurm_conf::{PartitionConf, PartitionState, SlurmConf};
use slurm_wire::pack::NO_VAL;
use std::collections::HashMap;
use std::sync::Arc;

/// Why a configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{0}")]
    Conf(#[from] slurm_conf::ConfError),
    #[error("partition {part}: node {node} is not defined")]
    UnknownNode { part: String, node: String },
    #[error("partition {0}: bad node list: {1}")]
    BadNodeList(String, String),
    #[error("node {0} is defined twice")]
    DuplicateNode(String),
}

/// One configured node, with its hardware as slurm.conf declares it.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeDef {
    pub name: String,
    pub hostname: String,
    pub addr: String,
    pub port: u16,
    pub cpus: u16,
    pub boards: u16,
    pub sockets: u16,
    pub cores: u16,
    pub threads: u16,
    pub real_memory: u64,
    pub tmp_disk: u32,
    pub weight: u32,
    pub features: Option<String>,
    pub gres: Option<String>,
    /// `gres` parsed, in line order.
    pub gres_list: Vec<crate::gres::NodeGres>,
    /// `State=` from the config (FUTURE, DOWN, DRAIN, ...), upper-cased.
    pub state: Option<String>,
    pub reason: Option<String>,
}

/// One configured partition.
#[derive(Debug, Clone)]
pub struct PartDef {
    pub conf: PartitionConf,
    /// Indexes into `ClusterConf::nodes`, in config order.
    pub nodes: Vec<usize>,
    /// AllowGroups resolved to gids by the daemon (None: everyone).
    /// Unresolved names allow no one but administrators, as in stock.
    pub allow_gids: Option<Vec<u32>>,
}

impl PartDef {
    pub fn name(&self) -> &str {
        &self.conf.name
    }
    /// MaxTime in minutes, `INFINITE` when unlimited.
    pub fn max_time(&self) -> u32 {
        self.conf.max_time.as_u32()
    }
    /// DefaultTime in minutes, `NO_VAL` when unset.
    pub fn default_time(&self) -> u32 {
        self.conf.default_time.map(|t| t.as_u32()).unwrap_or(NO_VAL)
    }
    pub fn is_up(&self) -> bool {
        self.conf.state == PartitionState::Up
    }
}

/// Everything the state machine reads from the configuration.
#[derive(Debug, Clone)]
pub struct ClusterConf {
    pub raw: Arc<SlurmConf>,
    pub nodes: Vec<NodeDef>,
    pub node_index: HashMap<String, usize>,
    pub partitions: Vec<PartDef>,
    pub default_partition: Option<usize>,
    pub slurm_user_uid: u32,
    /// `SlurmdParameters=config_overrides`: trust the config over what slurmd finds.
    pub config_overrides: bool,
    /// `gres/...` TRES counted in TRES strings (AccountingStorageTRES).
    pub tracked_gres: Vec<String>,
}

impl ClusterConf {
    /// Resolves `conf`; `slurm_user_uid` is SlurmUser's uid (looked up by the caller).
    pub fn new(conf: SlurmConf, slurm_user_uid: u32) -> Result<Self, ConfigError> {
        let mut nodes = Vec::new();
        let mut node_index = HashMap::new();
        for nc in &conf.nodes {
            for e in nc.expand()? {
                if e.name.eq_ignore_ascii_case("DEFAULT") {
                    continue;
                }
                if node_index.insert(e.name.clone(), nodes.len()).is_some() {
                    return Err(ConfigError::DuplicateNode(e.name));
                }
                let threads = nc.threads_per_core.max(1);
                let mut sockets = nc.sockets.max(1);
                let mut cores = nc.cores_per_socket.max(1);
                let cpus = if nc.cpus > 0 {
                    nc.cpus
                } else {
                    nc.boards.max(1) * sockets * cores * threads
                };
                // Only CPUs= given: stock spreads them as one core per socket.
                if nc.sockets == 0 && nc.cores_per_socket == 0 {
                    sockets = (cpus / threads).max(1);
                    cores = 1;
                }
                nodes.push(NodeDef {
                    name: e.name,
                    hostname: e.hostname,
                    addr: e.addr,
                    port: e.port.unwrap_or(conf.slurmd_port),
                    cpus,
                    boards: nc.boards.max(1),
                    sockets,
                    cores,
                    threads,
                    real_memory: nc.real_memory.max(1),
                    tmp_disk: nc.tmp_disk,
                    weight: nc.weight.max(1),
                    features: nc.features.clone(),
                    gres: nc.gres.clone(),
                    gres_list: crate::gres::parse_node_gres(nc.gres.as_deref().unwrap_or("")),
                    state: nc.state.as_ref().map(|s| s.to_ascii_uppercase()),
                    reason: nc.reason.clone(),
                });
            }
        }
        let mut partitions = Vec::new();
        let mut default_partition = None;
        for p in &conf.partitions {
            if p.name.eq_ignore_ascii_case("DEFAULT") {
                continue;
            }
            let mut idx = Vec::new();
            match p.nodes.as_deref() {
                Some(list) if list.eq_ignore_ascii_case("ALL") => idx = (0..nodes.len()).collect(),
                Some(list) if !list.is_empty() => {
                    let names = slurm_conf::expand(list)
                        .map_err(|e| ConfigError::BadNodeList(p.name.clone(), e.to_string()))?;
                    for n in names {
                        let i = *node_index.get(&n).ok_or_else(|| ConfigError::UnknownNode {
                            part: p.name.clone(),
                            node: n.clone(),
                        })?;
                        if !idx.contains(&i) {
                            idx.push(i);
                        }
                    }
                }
                _ => {}
            }
            if p.default {
                default_partition = Some(partitions.len());
            }
            let allow_gids = match p.allow_groups.as_deref() {
                None => None,
                Some(g) if g.eq_ignore_ascii_case("ALL") => None,
                Some(_) => Some(Vec::new()),
            };
            partitions.push(PartDef {
                conf: p.clone(),
                nodes: idx,
                allow_gids,
            });
        }
        let config_overrides = conf.slurmd_parameters.has("config_overrides");
        let tracked_gres = crate::tres::tracked_gres(&conf);
        Ok(Self {
            tracked_gres,
            raw: Arc::new(conf),
            nodes,
            node_index,
            partitions,
            default_partition,
            slurm_user_uid,
            config_overrides,
        })
    }

    /// Fills each partition's `allow_gids` from its AllowGroups names
    /// with `gid_of` (a group database lookup, done by the daemon shell).
    pub fn resolve_allow_groups(&mut self, gid_of: impl Fn(&str) -> Option<u32>) {
        for p in &mut self.partitions {
            let Some(gids) = p.allow_gids.as_mut() else {
                continue;
            };
            gids.clear();
            for name in p.conf.allow_groups.iter().flat_map(|g| g.split(',')) {
                match gid_of(name.trim()) {
                    Some(g) => gids.push(g),
                    None => {
                        tracing::warn!(partition = %p.conf.name, "AllowGroups: unknown group {name}")
                    }
                }
            }
        }
    }

    pub fn partition_index(&self, name: &str) -> Option<usize> {
        self.partitions.iter().position(|p| p.name() == name)
    }

    /// SlurmdTimeout in seconds; 0 disables node timeouts.
    pub fn slurmd_timeout(&self) -> i64 {
        i64::from(self.raw.slurmd_timeout)
    }

    pub fn is_admin(&self, uid: u32) -> bool {
        uid == 0 || uid == self.slurm_user_uid
    }

    /// Whether `uid` may act on what `owner` owns (a job, an array): the
    /// owner, root or SlurmUser. The one ownership rule of job requests;
    /// each caller answers a refusal with its RPC's own errno.
    pub fn owner_or_operator(&self, uid: u32, owner: u32) -> bool {
        uid == owner || self.is_admin(uid)
    }
}

#[cfg(test)]
mod tests {
    use crate::state::testkit::cluster_conf;

    #[test]
    fn only_the_owner_root_and_slurm_user_act_on_what_a_user_owns() {
        let mut c = cluster_conf(crate::state::testkit::SMALL_CLUSTER);
        c.slurm_user_uid = 64030;
        assert!(c.owner_or_operator(2001, 2001), "the owner");
        assert!(c.owner_or_operator(0, 2001), "root");
        assert!(c.owner_or_operator(64030, 2001), "SlurmUser");
        assert!(!c.owner_or_operator(2002, 2001), "another user");
        assert!(
            !c.owner_or_operator(2001, 2002),
            "the owner of something else"
        );
    }
}
