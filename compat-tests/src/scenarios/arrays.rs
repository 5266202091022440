//! Job arrays and dependencies.

use super::Scenario;

pub fn all() -> Vec<Scenario> {
    vec![]
}
