//! The node daemon: environment, output files, isolation, signals, limits, prolog/epilog.

use super::Scenario;

pub fn all() -> Vec<Scenario> {
    vec![]
}
