//! The codec on nom: parsers over `&[u8]`, encoders into `bytes::BufMut`.
//!
//! - `error`: `WireError`, the parser error (kind, bytes remaining, field path), and `PResult`;
//! - `prim`: the primitives, the only code that touches bytes or sizes an allocation;
//! - `macros`: `wire!`, which declares a body once as a field list with its version gates, and the
//!   helpers its expansion calls;
//! - `shape`: small field codecs for the common irregular slots (`#[wire(with = shape::flag8)]`).
//!
//! `pack` keeps the `Reader`/`Writer` façade and the `Wire` trait on top of this, for the framing and
//! the other crates.

pub mod error;
pub mod macros;
pub mod prim;
pub mod shape;

pub use bytes::BufMut;
