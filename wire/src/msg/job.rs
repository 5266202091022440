//! TODO(family): filled in by the family owner.
use crate::wire_struct;
wire_struct! { pub struct JobInfoRequestMsg {} }
wire_struct! { pub struct JobInfoMsg {} }
wire_struct! { pub struct JobIdMsg {} }
wire_struct! { pub struct ResourceAllocationResponseMsg {} }
wire_struct! { pub struct SubmitResponseMsg {} }
wire_struct! { pub struct JobAllocInfoMsg {} }
wire_struct! { pub struct JobStepKillMsg {} }
