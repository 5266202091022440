//! Slurm's RPC wire protocol, from 22.05 to 26.05, without I/O.
//!
//! Bytes in, typed messages out, and back, for a given [`ProtocolVersion`].
//! Daemons wrap this with sockets; nothing here touches the network or the
//! clock (the munge plugin talks to munged, which is the one exception and
//! sits behind the `munge` feature).
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

pub mod auth;
mod catalogue;
pub mod codec;
pub mod dbd;
pub mod errno;
pub mod error;
pub mod frame;
pub mod header;
pub mod msg;
pub mod msg_type;
pub mod pack;
pub mod types;
mod version;

pub use error::{DecodeError, DecodeErrorKind};
pub use frame::Frame;
pub use header::Header;
pub use msg::Message;
pub use msg_type::MsgType;
pub use version::ProtocolVersion;
