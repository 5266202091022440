//! Slurm configuration files: `slurm.conf`, `gres.conf`, `cgroup.conf`,
//! `topology.conf`, `slurmdbd.conf`, and hostlist expressions. Accepts the
//! options of Slurm 22.05, 24.11 and 26.05.
#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

pub mod cgroup;
pub mod error;
mod flat;
pub mod gres;
pub mod hostlist;
pub mod keywords;
pub mod lexer;
pub mod ranges;
pub mod slurm_conf;
pub mod slurmdbd_conf;
pub mod topology;
pub mod units;

pub use cgroup::CgroupConf;
pub use error::{ConfError, Location};
pub use gres::{GresConf, GresRecord};
pub use hostlist::{compress, expand, Hostlist, HostlistError};
pub use lexer::{config_hash_update, read_file, Loader};
pub use ranges::format_ranges;
pub use slurm_conf::{
    extra_conf_path, locate_config, locate_config_with, ControllerHost, DownNodesConf, MemLimit,
    NodeConf, NodeEntry, NodeSetConf, OverSubscribe, Params, PartitionConf, PartitionState,
    PortRange, PriorityWeights, RecordLine, SlurmConf, DEFAULT_SLURM_CONF,
};
pub use slurmdbd_conf::{Purge, PurgeConf, PurgeUnit, SlurmdbdConf, SlurmdbdFile};
pub use topology::{Block, Switch, TopologyConf};
pub use units::{LogLevel, TimeLimit};
