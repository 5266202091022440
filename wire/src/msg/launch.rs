//! TODO(family): filled in by the family owner.
use crate::wire_struct;
wire_struct! { pub struct BatchJobLaunchMsg {} }
wire_struct! { pub struct LaunchTasksRequestMsg {} }
wire_struct! { pub struct LaunchTasksResponseMsg {} }
wire_struct! { pub struct TaskExitMsg {} }
