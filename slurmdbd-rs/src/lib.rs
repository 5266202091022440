//! slurmdbd-rs, the accounting daemon: persistent connections from
//! controllers and clients, authenticated with munge, answered in the
//! release each speaks, stored in MariaDB in stock 26.05's schema. The
//! controller's accounting messages are stored; queries and sacctmgr's
//! messages are answered with an error for now.
//!
//! * [`daemon`]: start-up checks, the listener, becoming SlurmUser.
//! * [`server`]: the accept loop, one task per connection.
//! * [`conn`]: one connection: handshake, then framed messages.
//! * [`dispatch`]: the one match over received messages.
//! * [`handlers`]: what each family of messages stores.
//! * [`db`]: the schema, the pool and the retry wrapper.
//! * [`reply`]: the answers handlers build.
//! * [`session`]: what a connection knows after its handshake.
#![forbid(unsafe_code)]

pub mod conn;
pub mod daemon;
pub mod db;
pub mod dispatch;
pub mod error;
pub mod handlers;
pub mod reply;
pub mod server;
pub mod session;

pub use error::StartError;
