//! Job control: hold/release, requeue, update, begin times, time limits, scancel filters.

use super::Scenario;

pub fn all() -> Vec<Scenario> {
    vec![]
}
