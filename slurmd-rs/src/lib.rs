//! slurmd-rs: the Slurm node daemon. Pure logic (hardware parsing, node
//! resolution, credential checks, launch planning, environments, file name
//! patterns) lives in its own modules with unit tests; `daemon` is the thin
//! tokio shell around it.

pub mod alloc;
pub mod as_user;
pub mod batch_dir;
pub mod cgroup;
pub mod cred;
pub mod ctld;
pub mod daemon;
pub mod env;
pub mod exec;
pub mod fname;
pub mod gres;
pub mod hw;
pub mod launch;
pub mod node;
pub mod notice;
pub mod scripts;
pub mod shared;
pub mod step;
pub mod stepd;
pub mod track;
