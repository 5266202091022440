//! Benchmark support for slurm-rs: `slurm-load`, a load generator that
//! speaks real, munge-authenticated Slurm RPCs (built with slurm-wire and
//! slurm-rpc) to a controller, stock or ours, from many connections at once,
//! so that client start-up costs drop out of what is measured.
//!
//! `scripts/bench` drives it, together with the real clients.

pub mod load;
pub mod requests;
pub mod stats;
