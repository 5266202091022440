//! Scheduling: priority order, backfill, squeue --start.

use super::Scenario;

pub fn all() -> Vec<Scenario> {
    vec![]
}
