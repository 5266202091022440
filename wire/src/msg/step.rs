//! TODO(family): filled in by the family owner.
use crate::wire_struct;
wire_struct! { pub struct JobStepCreateRequestMsg {} }
wire_struct! { pub struct JobStepCreateResponseMsg {} }
wire_struct! { pub struct StepCompleteMsg {} }
wire_struct! { pub struct CompleteJobAllocationMsg {} }
wire_struct! { pub struct CompleteBatchScriptMsg {} }
pub type SrunJobCompleteMsg = super::common::StepIdMsg;
