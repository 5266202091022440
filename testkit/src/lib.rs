//! Test support shared by the workspace's tests.
//!
//! * [`munged`]: a private munged with a throwaway key; [`munged::FakeAuth`]
//!   for tests that need no munged.
//! * [`mariadb`]: a private MariaDB server (socket, or 127.0.0.1) for
//!   storage tests.
//! * [`mock`]: fake peers over real sockets: a slurmd that records what the
//!   controller sends, a controller that slurmd registers with.
//! * [`builders`]: wire messages as stock daemons and clients send them.
//! * [`cluster`]: the controller's state machine with fake node daemons
//!   under a virtual clock: every [`Effect`](slurmctld::state::Effect) is
//!   delivered to the node it names, which answers as a slurmd would, and
//!   what it answers goes back in as the daemon's agent would feed it.
#![forbid(unsafe_code)]

pub mod builders;
pub mod cluster;
pub mod mariadb;
pub mod mock;
pub mod munged;
