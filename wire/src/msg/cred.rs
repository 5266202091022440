//! TODO(family): filled in by the family owner.
use crate::wire_struct;
wire_struct! { pub struct JobCred {} }
