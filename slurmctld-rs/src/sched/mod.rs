//! The scheduling policy layer, pure (no I/O, the time is an argument, no
//! access to the controller: each function takes the state it reads). The
//! state machine's passes (`state/queue.rs`) call into it.
//!
//! * [`priority`]: priority policies, chosen by `PriorityType`.
//! * [`order`]: queue order (PriorityTier, priority, age, id).
//! * [`select`]: node selection, cons_tres-like.
//! * [`backfill`]: the backfill planner.
//! * [`params`]: cadence and depths (SchedulerParameters).
//! * [`cycle`]: what the scheduler keeps between passes.

pub mod backfill;
pub mod cycle;
pub mod order;
pub mod params;
pub mod priority;
pub mod select;

pub use cycle::SchedState;
pub use select::*;
