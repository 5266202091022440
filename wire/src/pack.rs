//! The packing primitives (upstream `pack.c`), byte-exact.
//!
//! Integers are big-endian; `time_t` is a signed 64-bit integer; strings carry
//! their trailing NUL in the length, and a NULL string is a zero length.

use crate::error::{DecodeError, DecodeErrorKind, Result};
use crate::ProtocolVersion;

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

/// A cursor over untrusted bytes. Every read is bounds-checked.
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

    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        match end.and_then(|e| self.buf.get(self.pos..e).map(|s| (e, s))) {
            Some((e, s)) => {
                self.pos = e;
                Ok(s)
            }
            None => Err(self.error(DecodeErrorKind::Truncated {
                needed: n,
                remaining: self.remaining(),
            })),
        }
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    pub fn u8(&mut self) -> Result<u8> {
        Ok(u8::from_be_bytes(self.array()?))
    }
    pub fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_be_bytes(self.array()?))
    }
    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_be_bytes(self.array()?))
    }
    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_be_bytes(self.array()?))
    }
    /// `pack_time`: signed 64-bit.
    pub fn time(&mut self) -> Result<i64> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    /// `packbool`: strictly 0 or 1, so that re-encoding is byte-identical.
    pub fn bool(&mut self) -> Result<bool> {
        let at = self.pos;
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(DecodeError::new(DecodeErrorKind::BadBool(b), at)),
        }
    }

    /// A u32 element count, checked against the bytes left so that no
    /// allocation is sized by an untrusted number.
    pub fn count(&mut self, min_elem_size: usize) -> Result<usize> {
        let at = self.pos;
        let n = self.u32()?;
        self.check_count(n, min_elem_size, at)
    }

    pub fn check_count(&self, n: u32, min_elem_size: usize, at: usize) -> Result<usize> {
        let need = (n as u64).saturating_mul(min_elem_size.max(1) as u64);
        if need > self.remaining() as u64 {
            return Err(DecodeError::new(
                DecodeErrorKind::CountTooLarge {
                    count: n as u64,
                    remaining: self.remaining(),
                },
                at,
            ));
        }
        Ok(n as usize)
    }

    /// `packmem`: u32 length then raw bytes.
    pub fn mem(&mut self) -> Result<&'a [u8]> {
        let n = self.count(1)?;
        self.take(n)
    }

    /// `packstr`: `None` for length 0; otherwise the bytes must end in NUL.
    pub fn str(&mut self) -> Result<Option<String>> {
        let at = self.pos;
        let raw = self.mem()?;
        let Some((&last, body)) = raw.split_last() else {
            return Ok(None);
        };
        if last != 0 {
            return Err(DecodeError::new(DecodeErrorKind::StringNotTerminated, at));
        }
        match std::str::from_utf8(body) {
            Ok(s) => Ok(Some(s.to_owned())),
            Err(_) => Err(DecodeError::new(DecodeErrorKind::InvalidUtf8, at)),
        }
    }

    /// Fails unless every byte was consumed (rustls-style strictness).
    pub fn finish(&self) -> Result<()> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(self.error(DecodeErrorKind::TrailingBytes(n))),
        }
    }
}

/// An append-only output buffer.
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
        self.buf.extend_from_slice(b);
    }
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    pub fn u16(&mut self, v: u16) {
        self.bytes(&v.to_be_bytes());
    }
    pub fn u32(&mut self, v: u32) {
        self.bytes(&v.to_be_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.bytes(&v.to_be_bytes());
    }
    pub fn time(&mut self, v: i64) {
        self.bytes(&v.to_be_bytes());
    }
    pub fn bool(&mut self, v: bool) {
        self.u8(v as u8);
    }
    /// A collection length; upstream counts are u32.
    pub fn count(&mut self, n: usize) {
        self.u32(u32::try_from(n).unwrap_or(u32::MAX));
    }
    pub fn mem(&mut self, b: &[u8]) {
        self.count(b.len());
        self.bytes(b);
    }
    pub fn str(&mut self, s: Option<&str>) {
        match s {
            None => self.u32(0),
            Some(s) => {
                self.count(s.len() + 1);
                self.bytes(s.as_bytes());
                self.u8(0);
            }
        }
    }
    /// Overwrites a u32 written earlier at `at` (used for length prefixes).
    pub fn patch_u32(&mut self, at: usize, v: u32) {
        if let Some(dst) = self.buf.get_mut(at..at + 4) {
            dst.copy_from_slice(&v.to_be_bytes());
        }
    }
}

/// A value with a wire form that may depend on the protocol version.
pub trait Wire: Sized {
    fn decode(r: &mut Reader<'_>, v: ProtocolVersion) -> Result<Self>;
    fn encode(&self, w: &mut Writer, v: ProtocolVersion);
}

macro_rules! wire_int {
    ($($t:ty => $m:ident),*) => {$(
        impl Wire for $t {
            fn decode(r: &mut Reader<'_>, _: ProtocolVersion) -> Result<Self> {
                r.$m()
            }
            fn encode(&self, w: &mut Writer, _: ProtocolVersion) {
                w.$m(*self)
            }
        }
    )*};
}
// `i64` is only ever a `time_t` in Slurm's protocol.
wire_int!(u8 => u8, u16 => u16, u32 => u32, u64 => u64, i64 => time, bool => bool);

/// `packstr`, NULL-aware.
impl Wire for Option<String> {
    fn decode(r: &mut Reader<'_>, _: ProtocolVersion) -> Result<Self> {
        r.str()
    }
    fn encode(&self, w: &mut Writer, _: ProtocolVersion) {
        w.str(self.as_deref())
    }
}

/// `packmem`.
impl Wire for Vec<u8> {
    fn decode(r: &mut Reader<'_>, _: ProtocolVersion) -> Result<Self> {
        Ok(r.mem()?.to_vec())
    }
    fn encode(&self, w: &mut Writer, _: ProtocolVersion) {
        w.mem(self)
    }
}

/// `packstr_array`: u32 count then strings (a NULL array is count 0).
impl Wire for Vec<Option<String>> {
    fn decode(r: &mut Reader<'_>, _: ProtocolVersion) -> Result<Self> {
        let n = r.count(4)?;
        (0..n).map(|_| r.str()).collect()
    }
    fn encode(&self, w: &mut Writer, _: ProtocolVersion) {
        w.count(self.len());
        for s in self {
            w.str(s.as_deref());
        }
    }
}

macro_rules! wire_int_array {
    ($($t:ty => $m:ident, $size:expr);*) => {$(
        /// `pack*_array`: u32 count then elements.
        impl Wire for Vec<$t> {
            fn decode(r: &mut Reader<'_>, _: ProtocolVersion) -> Result<Self> {
                let n = r.count($size)?;
                (0..n).map(|_| r.$m()).collect()
            }
            fn encode(&self, w: &mut Writer, _: ProtocolVersion) {
                w.count(self.len());
                for x in self {
                    w.$m(*x);
                }
            }
        }
    )*};
}
wire_int_array!(u16 => u16, 2; u32 => u32, 4; u64 => u64, 8);

/// `slurm_pack_list` and hand-rolled lists: `NO_VAL` means no list at all.
impl<T: Wire> Wire for Option<Vec<T>> {
    fn decode(r: &mut Reader<'_>, v: ProtocolVersion) -> Result<Self> {
        let at = r.position();
        let n = r.u32()?;
        if n == NO_VAL {
            return Ok(None);
        }
        if n > NO_VAL {
            return Err(DecodeError::new(
                DecodeErrorKind::BadValue {
                    what: "list count",
                    value: n as u64,
                },
                at,
            ));
        }
        let n = r.check_count(n, 1, at)?;
        let mut out = Vec::with_capacity(n.min(1024));
        for i in 0..n {
            out.push(T::decode(r, v).map_err(|e| e.within(list_index(i)))?);
        }
        Ok(Some(out))
    }
    fn encode(&self, w: &mut Writer, v: ProtocolVersion) {
        match self {
            None => w.u32(NO_VAL),
            Some(items) => {
                w.count(items.len());
                for it in items {
                    it.encode(w, v);
                }
            }
        }
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

// The field-sequence macros used by every hand-written `Wire` impl: one
// list of fields, with version gates and per-field codecs, drives both
// directions.

/// Expands a field list into decode (`dec r, v; ...`) or encode
/// (`enc w, v; ...`) statements, so that one list drives both directions.
///
/// An entry is `[gate] obj.field` for a field read with its own `Wire`
/// impl, or `[gate] obj.label (codec)` where `codec` is a module with
/// `dec(r, v, &mut obj)` and `enc(w, v, obj)` (obj is a reference when
/// encoding) for slots whose wire form
/// is not a plain field (a job id that became a step id, a presence flag).
macro_rules! wire_seq {
    (dec $r:ident, $v:ident; $( $([$($g:tt)*])? $o:ident . $f:ident $(($c:ident))? ),* $(,)?) => {
        $( if $crate::gate!($v; $($($g)*)?) { $crate::pack::wire_seq!(@d $r, $v, $o, $f $(, $c)?); } )*
    };
    (enc $w:ident, $v:ident; $( $([$($g:tt)*])? $o:ident . $f:ident $(($c:ident))? ),* $(,)?) => {
        $( if $crate::gate!($v; $($($g)*)?) { $crate::pack::wire_seq!(@e $w, $v, $o, $f $(, $c)?); } )*
    };
    (@d $r:ident, $v:ident, $o:ident, $f:ident) => {
        $o.$f = $crate::pack::Wire::decode($r, $v).map_err(|e| e.within(stringify!($f)))?;
    };
    (@d $r:ident, $v:ident, $o:ident, $f:ident, $c:ident) => {
        $c::dec($r, $v, &mut $o).map_err(|e| e.within(stringify!($f)))?;
    };
    (@e $w:ident, $v:ident, $o:ident, $f:ident) => {
        $crate::pack::Wire::encode(&$o.$f, $w, $v);
    };
    (@e $w:ident, $v:ident, $o:ident, $f:ident, $c:ident) => {
        $c::enc($w, $v, $o);
    };
}
pub(crate) use wire_seq;

/// Implements `Wire` for a struct from one `wire_seq!` field list.
macro_rules! seq_wire {
    (@list $m:ident $x:ident, $v:ident, $s:ident; $( $([$($g:tt)*])? $f:ident $(($c:ident))? ),* $(,)?) => {
        $crate::pack::wire_seq!($m $x, $v; $( $([$($g)*])? $s.$f $(($c))? ),*)
    };
    ($t:ty; $($list:tt)*) => {
        impl $crate::pack::Wire for $t {
            fn decode(
                r: &mut $crate::pack::Reader<'_>,
                v: $crate::ProtocolVersion,
            ) -> $crate::error::Result<Self> {
                let mut s = Self::default();
                $crate::pack::seq_wire!(@list dec r, v, s; $($list)*);
                Ok(s)
            }
            fn encode(&self, w: &mut $crate::pack::Writer, v: $crate::ProtocolVersion) {
                let s = self;
                $crate::pack::seq_wire!(@list enc w, v, s; $($list)*);
            }
        }
    };
}
pub(crate) use seq_wire;

/// Declares a protocol struct whose wire form is its fields in order.
///
/// A field may carry a version gate in brackets before `pub`:
/// `[V24_11..]` (from 24.11 on), `[..V24_11]` (before 24.11) or
/// `[V23_11..V26_05]`. Absent fields decode to their `Default`.
#[macro_export]
macro_rules! wire_struct {
    (
        $(#[$smeta:meta])*
        pub struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                $([$($gate:tt)*])?
                pub $field:ident : $ty:ty
            ),* $(,)?
        }
    ) => {
        $(#[$smeta])*
        #[derive(Debug, Clone, PartialEq, Default)]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl $crate::pack::Wire for $name {
            #[allow(unused_variables, unused_mut)]
            fn decode(
                r: &mut $crate::pack::Reader<'_>,
                v: $crate::ProtocolVersion,
            ) -> $crate::error::Result<Self> {
                let mut s = Self::default();
                $(
                    if $crate::gate!(v; $($($gate)*)?) {
                        s.$field = <$ty as $crate::pack::Wire>::decode(r, v)
                            .map_err(|e| e.within(stringify!($field)))?;
                    }
                )*
                Ok(s)
            }

            #[allow(unused_variables)]
            fn encode(&self, w: &mut $crate::pack::Writer, v: $crate::ProtocolVersion) {
                $(
                    if $crate::gate!(v; $($($gate)*)?) {
                        $crate::pack::Wire::encode(&self.$field, w, v);
                    }
                )*
            }
        }
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
