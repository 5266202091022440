//! What the controller's messages store, one module per family:
//!
//! * [`ctld`]: registration, cluster TRES, node state events.
//! * [`jobs`]: job start (and the starts other messages imply), heavy
//!   data, completion, suspension.
//! * [`steps`]: step start and completion with its usage.
//! * [`common`]: what they share (stock's constants, the outcome type,
//!   table names, the job lookup).

pub mod common;
pub mod ctld;
pub mod jobs;
pub mod steps;
