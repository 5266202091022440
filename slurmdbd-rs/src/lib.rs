//! slurmdbd-rs, the accounting daemon: persistent connections from
//! controllers and clients, authenticated with munge, answered in the
//! release each speaks. Storage (MariaDB) is not there yet: every message
//! but the handshake and DBD_FINI is answered with an error.
//!
//! * [`daemon`]: start-up checks, the listener, becoming SlurmUser.
//! * [`server`]: the accept loop, one task per connection.
//! * [`conn`]: one connection: handshake, then framed messages.
//! * [`dispatch`]: the one match over received messages.
//! * [`session`]: what a connection knows after its handshake.
#![forbid(unsafe_code)]

pub mod conn;
pub mod daemon;
pub mod db;
pub mod dispatch;
pub mod error;
pub mod server;
pub mod session;

pub use error::StartError;
