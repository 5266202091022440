//! The packing primitives (upstream `pack.c`), byte-exact.
//!
//! Integers are big-endian; `time_t` is a signed 64-bit integer; strings carry
//! their trailing NUL in the length, and a NULL string is a zero length.

use crate::codec::error::{named, unwrap_err, PResult, WireError};
use crate::codec::prim;
use crate::error::{DecodeError, DecodeErrorKind, Result};
use crate::ProtocolVersion;
use bytes::BufMut;

/// `NO_VAL`: marks "no list" in list counts and "unset" in many u32 fields.
pub const NO_VAL: u32 = 0xffff_fffe;
pub const NO_VAL8: u8 = 0xfe;
pub const NO_VAL16: u16 = 0xfffe;
pub const NO_VAL64: u64 = 0xffff_ffff_ffff_fffe;
pub const INFINITE8: u8 = 0xff;
pub const INFINITE16: u16 = 0xffff;
pub const INFINITE: u32 = 0xffff_ffff;
pub const INFINITE64: u64 = 0xffff_ffff_ffff_ffff;
/// Upstream's cap on a single frame and on one packed memory block.
pub const MAX_MSG_SIZE: usize = 1 << 30;

/// A cursor over untrusted bytes: the compatibility façade over the nom parsers in `codec::prim`.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    pub fn rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or_default()
    }

    pub fn error(&self, kind: DecodeErrorKind) -> DecodeError {
        DecodeError::new(kind, self.pos)
    }

    /// Runs a nom parser over the rest of the buffer and advances past what it consumed; its error's
    /// position becomes an offset into this buffer.
    pub fn parse<T>(&mut self, f: impl FnOnce(&'a [u8]) -> PResult<'a, T>) -> Result<T> {
        let i = self.rest();
        match f(i) {
            Ok((rest, x)) => {
                self.pos = self.buf.len().saturating_sub(rest.len());
                Ok(x)
            }
            Err(e) => Err(unwrap_err(e, i).into_decode(self.buf.len())),
        }
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        self.parse(|i| prim::take(i, n))
    }

    pub fn u8(&mut self) -> Result<u8> {
        self.parse(prim::u8)
    }
    pub fn u16(&mut self) -> Result<u16> {
        self.parse(prim::u16)
    }
    pub fn u32(&mut self) -> Result<u32> {
        self.parse(prim::u32)
    }
    pub fn u64(&mut self) -> Result<u64> {
        self.parse(prim::u64)
    }
    /// `pack_time`: signed 64-bit.
    pub fn time(&mut self) -> Result<i64> {
        self.parse(prim::time)
    }

    /// `packbool`: strictly 0 or 1, so that re-encoding is byte-identical.
    pub fn bool(&mut self) -> Result<bool> {
        self.parse(prim::bool)
    }

    /// A u32 element count, checked against the bytes left so that no
    /// allocation is sized by an untrusted number.
    pub fn count(&mut self, min_elem_size: usize) -> Result<usize> {
        self.parse(|i| prim::count(i, min_elem_size))
    }

    /// Checks a count read at byte `at` against the bytes left.
    pub fn check_count(&self, n: u32, min_elem_size: usize, at: usize) -> Result<usize> {
        let rest = self.rest();
        prim::check_count(rest, rest, u64::from(n), min_elem_size)
            .map_err(|e| DecodeError::new(unwrap_err(e, rest).kind, at))
    }

    /// `packmem`: u32 length then raw bytes.
    pub fn mem(&mut self) -> Result<&'a [u8]> {
        self.parse(prim::mem)
    }

    /// `packstr`: `None` for length 0; otherwise the bytes must end in NUL.
    pub fn str(&mut self) -> Result<Option<String>> {
        self.parse(prim::str)
    }

    /// Fails unless every byte was consumed (rustls-style strictness).
    pub fn finish(&self) -> Result<()> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(self.error(DecodeErrorKind::TrailingBytes(n))),
        }
    }
}

/// An append-only output buffer (a `Vec<u8>`, which is the `BufMut` the codec writes into).
#[derive(Debug, Default, Clone)]
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn with_capacity(n: usize) -> Self {
        Self {
            buf: Vec::with_capacity(n),
        }
    }
    pub fn len(&self) -> usize {
        self.buf.len()
    }
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
    pub fn into_vec(self) -> Vec<u8> {
        self.buf
    }
    pub fn as_slice(&self) -> &[u8] {
        &self.buf
    }
    pub fn bytes(&mut self, b: &[u8]) {
        self.buf.put_slice(b);
    }
    pub fn u8(&mut self, v: u8) {
        self.buf.put_u8(v);
    }
    pub fn u16(&mut self, v: u16) {
        self.buf.put_u16(v);
    }
    pub fn u32(&mut self, v: u32) {
        self.buf.put_u32(v);
    }
    pub fn u64(&mut self, v: u64) {
        self.buf.put_u64(v);
    }
    pub fn time(&mut self, v: i64) {
        self.buf.put_i64(v);
    }
    pub fn bool(&mut self, v: bool) {
        self.buf.put_u8(u8::from(v));
    }
    /// A collection length; upstream counts are u32.
    pub fn count(&mut self, n: usize) {
        prim::put_count(&mut self.buf, n);
    }
    pub fn mem(&mut self, b: &[u8]) {
        prim::put_mem(&mut self.buf, b);
    }
    pub fn str(&mut self, s: Option<&str>) {
        prim::put_str(&mut self.buf, s);
    }
    /// Overwrites a u32 written earlier at `at` (used for length prefixes).
    pub fn patch_u32(&mut self, at: usize, v: u32) {
        if let Some(dst) = at.checked_add(4).and_then(|end| self.buf.get_mut(at..end)) {
            dst.copy_from_slice(&v.to_be_bytes());
        }
    }
}

/// A value with a wire form that may depend on the protocol version.
///
/// `parse` is nom over `&[u8]` and `put` writes into any `BufMut`; `decode`/`encode` are the `Reader`
/// and `Writer` façade over them, for framing code and the other crates.
pub trait Wire: Sized {
    fn parse<'a>(i: &'a [u8], v: ProtocolVersion) -> PResult<'a, Self>;

    fn put<B: BufMut>(&self, b: &mut B, v: ProtocolVersion);

    fn decode(r: &mut Reader<'_>, v: ProtocolVersion) -> Result<Self> {
        r.parse(|i| Self::parse(i, v))
    }

    fn encode(&self, w: &mut Writer, v: ProtocolVersion) {
        self.put(&mut w.buf, v)
    }
}

macro_rules! wire_int {
    ($($t:ty => $parse:ident, $put:ident;)*) => {$(
        impl Wire for $t {
            #[inline]
            fn parse<'a>(i: &'a [u8], _: ProtocolVersion) -> PResult<'a, Self> {
                prim::$parse(i)
            }
            #[inline]
            fn put<B: BufMut>(&self, b: &mut B, _: ProtocolVersion) {
                b.$put(*self)
            }
        }
    )*};
}
// `i64` is only ever a `time_t` in Slurm's protocol.
wire_int! {
    u8 => u8, put_u8;
    u16 => u16, put_u16;
    u32 => u32, put_u32;
    u64 => u64, put_u64;
    i64 => time, put_i64;
}

impl Wire for bool {
    #[inline]
    fn parse<'a>(i: &'a [u8], _: ProtocolVersion) -> PResult<'a, Self> {
        prim::bool(i)
    }
    #[inline]
    fn put<B: BufMut>(&self, b: &mut B, _: ProtocolVersion) {
        b.put_u8(u8::from(*self))
    }
}

/// `packstr`, NULL-aware.
impl Wire for Option<String> {
    fn parse<'a>(i: &'a [u8], _: ProtocolVersion) -> PResult<'a, Self> {
        prim::str(i)
    }
    fn put<B: BufMut>(&self, b: &mut B, _: ProtocolVersion) {
        prim::put_str(b, self.as_deref())
    }
}

/// `packmem`.
impl Wire for Vec<u8> {
    fn parse<'a>(i: &'a [u8], _: ProtocolVersion) -> PResult<'a, Self> {
        prim::mem_vec(i)
    }
    fn put<B: BufMut>(&self, b: &mut B, _: ProtocolVersion) {
        prim::put_mem(b, self)
    }
}

/// `packstr_array`: u32 count then strings (a NULL array is count 0).
impl Wire for Vec<Option<String>> {
    fn parse<'a>(i: &'a [u8], _: ProtocolVersion) -> PResult<'a, Self> {
        let (i, n) = prim::count(i, 4)?;
        prim::items(i, n, prim::str)
    }
    fn put<B: BufMut>(&self, b: &mut B, _: ProtocolVersion) {
        prim::put_count(b, self.len());
        for s in self {
            prim::put_str(b, s.as_deref());
        }
    }
}

macro_rules! wire_int_array {
    ($($t:ty => $parse:ident, $put:ident, $size:expr;)*) => {$(
        /// `pack*_array`: u32 count then elements.
        impl Wire for Vec<$t> {
            fn parse<'a>(i: &'a [u8], _: ProtocolVersion) -> PResult<'a, Self> {
                let (i, n) = prim::count(i, $size)?;
                prim::items(i, n, prim::$parse)
            }
            fn put<B: BufMut>(&self, b: &mut B, _: ProtocolVersion) {
                prim::put_count(b, self.len());
                for x in self {
                    b.$put(*x);
                }
            }
        }
    )*};
}
wire_int_array! {
    u16 => u16, put_u16, 2;
    u32 => u32, put_u32, 4;
    u64 => u64, put_u64, 8;
}

/// `slurm_pack_list` and hand-rolled lists: `NO_VAL` means no list at all.
impl<T: Wire> Wire for Option<Vec<T>> {
    fn parse<'a>(i: &'a [u8], v: ProtocolVersion) -> PResult<'a, Self> {
        let (mut r, n) = prim::u32(i)?;
        if n == NO_VAL {
            return Ok((r, None));
        }
        if n > NO_VAL {
            return WireError::fail(
                DecodeErrorKind::BadValue {
                    what: "list count",
                    value: u64::from(n),
                },
                i,
            );
        }
        let n = prim::check_count(i, r, u64::from(n), 1)?;
        let mut out = prim::vec_n(n);
        for k in 0..n {
            let (rest, x) = named(T::parse(r, v), list_index(k))?;
            out.push(x);
            r = rest;
        }
        Ok((r, Some(out)))
    }
    fn put<B: BufMut>(&self, b: &mut B, v: ProtocolVersion) {
        match self {
            None => b.put_u32(NO_VAL),
            Some(items) => {
                prim::put_count(b, items.len());
                for it in items {
                    it.put(b, v);
                }
            }
        }
    }
}

/// A boxed value travels as the value (large records kept off the stack).
impl<T: Wire> Wire for Box<T> {
    fn parse<'a>(i: &'a [u8], v: ProtocolVersion) -> PResult<'a, Self> {
        let (i, x) = T::parse(i, v)?;
        Ok((i, Box::new(x)))
    }
    fn put<B: BufMut>(&self, b: &mut B, v: ProtocolVersion) {
        T::put(self, b, v)
    }
}

fn list_index(i: usize) -> &'static str {
    const NAMES: [&str; 8] = ["[0]", "[1]", "[2]", "[3]", "[4]", "[5]", "[6]", "[7]"];
    NAMES.get(i).copied().unwrap_or("[..]")
}

/// `gate!(v; V24_11..)`: is a field present in version `v`?
#[macro_export]
#[doc(hidden)]
macro_rules! gate {
    ($v:expr;) => {
        true
    };
    ($v:expr; $lo:ident ..) => {
        $v >= $crate::ProtocolVersion::$lo
    };
    ($v:expr; .. $hi:ident) => {
        $v < $crate::ProtocolVersion::$hi
    };
    ($v:expr; $lo:ident .. $hi:ident) => {
        $v >= $crate::ProtocolVersion::$lo && $v < $crate::ProtocolVersion::$hi
    };
}

/// Decodes a whole body as `T`, rejecting trailing bytes.
pub fn decode_exact<T: Wire>(bytes: &[u8], v: ProtocolVersion) -> Result<T> {
    let mut r = Reader::new(bytes);
    let t = T::decode(&mut r, v)?;
    r.finish()?;
    Ok(t)
}

pub fn encode_to_vec<T: Wire>(t: &T, v: ProtocolVersion) -> Vec<u8> {
    let mut w = Writer::new();
    t.encode(&mut w, v);
    w.into_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    const V: ProtocolVersion = ProtocolVersion::V24_11;

    #[test]
    fn strings_count_the_nul() {
        assert_eq!(encode_to_vec(&Some(String::new()), V), [0, 0, 0, 1, 0]);
        assert_eq!(encode_to_vec(&None::<String>, V), [0, 0, 0, 0]);
        assert_eq!(
            encode_to_vec(&Some("ab".to_string()), V),
            [0, 0, 0, 3, b'a', b'b', 0]
        );
        assert_eq!(
            decode_exact::<Option<String>>(&[0, 0, 0, 1, 0], V),
            Ok(Some(String::new()))
        );
        assert_eq!(decode_exact::<Option<String>>(&[0, 0, 0, 0], V), Ok(None));
        let e = decode_exact::<Option<String>>(&[0, 0, 0, 2, b'a', b'b'], V).unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::StringNotTerminated);
    }

    #[test]
    fn hostile_counts_do_not_allocate() {
        let e = decode_exact::<Vec<u64>>(&[0x7f, 0xff, 0xff, 0xff], V).unwrap_err();
        assert!(matches!(e.kind, DecodeErrorKind::CountTooLarge { .. }));
        let e = decode_exact::<Option<Vec<u32>>>(&[0xff, 0xff, 0xff, 0xff], V).unwrap_err();
        assert!(matches!(e.kind, DecodeErrorKind::BadValue { .. }));
        assert_eq!(
            decode_exact::<Option<Vec<u32>>>(&[0xff, 0xff, 0xff, 0xfe], V),
            Ok(None)
        );
    }

    #[test]
    fn time_is_signed() {
        assert_eq!(encode_to_vec(&-1i64, V), [0xff; 8]);
    }

    #[test]
    fn trailing_bytes_are_an_error() {
        let e = decode_exact::<u16>(&[0, 1, 2], V).unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::TrailingBytes(1));
    }

    #[test]
    fn bools_are_strict() {
        assert_eq!(decode_exact::<bool>(&[1], V), Ok(true));
        assert!(decode_exact::<bool>(&[2], V).is_err());
    }
}
