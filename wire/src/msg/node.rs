//! TODO(family): filled in by the family owner.
use crate::wire_struct;
wire_struct! { pub struct SlurmNodeRegistrationStatusMsg {} }
wire_struct! { pub struct NodeRegistrationRespMsg {} }
wire_struct! { pub struct NodeInfoRequestMsg {} }
wire_struct! { pub struct NodeInfoMsg {} }
wire_struct! { pub struct UpdateNodeMsg {} }
