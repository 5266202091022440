//! slurmctld-rs: the Slurm controller.
//!
//! * [`state`]: the cluster as a pure state machine (commands in, effects out).
//! * [`sched`]: the scheduling policy layer over that state (priority, queue
//!   order, node selection, backfill), pure.
//! * [`gres`], [`tres`]: generic resources; TRES strings as stock prints them.
//! * [`views`]: wire replies (node/partition/job info, build info) from a snapshot.
//! * [`reply_cache`]: encoded job/node/partition listings, shared per snapshot.
//! * [`private_data`]: slurm.conf's PrivateData, who may see what.
//! * [`handlers`]: the one RPC dispatch, and a handler per family of RPCs.
//! * [`agent`]: outbound RPCs to slurmd (effects), results fed back as commands.
//! * [`shared`]: what the daemon, handlers and agent share (snapshot, command queue).
//! * [`stats`]: sdiag counters kept by the daemon shell.
//! * [`persist`]: StateSaveLocation: snapshot plus write-ahead command log.
//! * [`daemon`]: the tokio shell: listener, actor, timers, signals.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod agent;
pub mod alloc_host;
pub mod build_info;
pub mod constraint;
pub mod daemon;
pub mod gres;
pub mod handlers;
pub mod job_resrcs;
pub mod persist;
pub mod private_data;
pub mod reply_cache;
pub mod sched;
pub mod shared;
pub mod state;
pub mod stats;
pub mod step_info;
pub mod tres;
pub mod users;
pub mod views;
pub mod visibility;
