//! Storage: stock's schema in MariaDB (see docs/dev/DBD-PLAN.md, 2).
//!
//! * [`tables`]: stock 26.05's tables as data.
//! * [`schema`]: creating them, per cluster too, as stock does.
//! * [`pool`]: the pool, session settings and the retry wrapper.

pub mod pool;
pub mod schema;
pub mod tables;

pub use pool::{BoxFut, Db, DbError, DbOpts, Endpoint};
