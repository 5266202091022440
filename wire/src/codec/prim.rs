//! The primitives (upstream `pack.c`): the only code that touches bytes or sizes an allocation.
//!
//! Integers are big-endian, `time_t` is a signed 64-bit integer, strings carry their NUL in the length
//! and a NULL string is a zero length. nom does the reading; every failure is mapped here to an exact
//! kind (`Truncated{needed, remaining}` for a short input), so the error is the same as the old
//! `Reader`'s. Not used on purpose: nom's `multi::{count, length_count, many*}`, `alt` and `opt`, which
//! preallocate from the count or swallow errors.

use super::error::{PResult, WireError};
use crate::error::DecodeErrorKind;
use bytes::BufMut;

/// `n` bytes, or `Truncated{needed: n, remaining}`.
#[inline]
pub fn take(i: &[u8], n: usize) -> PResult<'_, &[u8]> {
    nom::bytes::complete::take::<usize, &[u8], WireError>(n)(i).map_err(|_| truncated(i, n))
}

fn truncated(i: &[u8], needed: usize) -> nom::Err<WireError> {
    nom::Err::Error(WireError::at(
        DecodeErrorKind::Truncated {
            needed,
            remaining: i.len(),
        },
        i,
    ))
}

macro_rules! be {
    ($($name:ident: $t:ty = $nom:ident, $n:expr;)*) => {$(
        #[inline]
        pub fn $name(i: &[u8]) -> PResult<'_, $t> {
            nom::number::complete::$nom::<&[u8], WireError>(i).map_err(|_| truncated(i, $n))
        }
    )*};
}
be! {
    u8: u8 = be_u8, 1;
    u16: u16 = be_u16, 2;
    u32: u32 = be_u32, 4;
    u64: u64 = be_u64, 8;
    // `pack_time`
    time: i64 = be_i64, 8;
}

/// `packbool`: strictly 0 or 1, so that re-encoding is byte-identical.
#[inline]
pub fn bool(i: &[u8]) -> PResult<'_, bool> {
    match u8(i)? {
        (r, 0) => Ok((r, false)),
        (r, 1) => Ok((r, true)),
        (_, b) => WireError::fail(DecodeErrorKind::BadBool(b), i),
    }
}

/// Checks that `n` elements of at least `min_elem_size` bytes fit in `rest`; the error points at `at`
/// (where the count was read). Nothing may be allocated from a count before this.
#[inline]
pub fn check_count(
    at: &[u8],
    rest: &[u8],
    n: u64,
    min_elem_size: usize,
) -> Result<usize, nom::Err<WireError>> {
    let need = n.saturating_mul(min_elem_size.max(1) as u64);
    if need > rest.len() as u64 {
        return WireError::fail(
            DecodeErrorKind::CountTooLarge {
                count: n,
                remaining: rest.len(),
            },
            at,
        );
    }
    usize::try_from(n).map_err(|_| {
        nom::Err::Error(WireError::at(
            DecodeErrorKind::CountTooLarge {
                count: n,
                remaining: rest.len(),
            },
            at,
        ))
    })
}

/// A u32 element count, checked against the bytes left after it.
#[inline]
pub fn count(i: &[u8], min_elem_size: usize) -> PResult<'_, usize> {
    let (r, n) = u32(i)?;
    let n = check_count(i, r, u64::from(n), min_elem_size)?;
    Ok((r, n))
}

/// The vector for `n` checked elements; capacity is capped so a count never sizes the allocation.
#[inline]
pub fn vec_n<T>(n: usize) -> Vec<T> {
    Vec::with_capacity(n.min(1024))
}

/// `packmem`: u32 length then raw bytes.
#[inline]
pub fn mem(i: &[u8]) -> PResult<'_, &[u8]> {
    let (r, n) = count(i, 1)?;
    take(r, n)
}

/// `packmem` as an owned buffer.
#[inline]
pub fn mem_vec(i: &[u8]) -> PResult<'_, Vec<u8>> {
    let (r, m) = mem(i)?;
    Ok((r, m.to_vec()))
}

/// `packstr`: `None` for length 0; otherwise the bytes must end in NUL and be UTF-8.
#[inline]
pub fn str(i: &[u8]) -> PResult<'_, Option<String>> {
    let (r, raw) = mem(i)?;
    let Some((&last, body)) = raw.split_last() else {
        return Ok((r, None));
    };
    if last != 0 {
        return WireError::fail(DecodeErrorKind::StringNotTerminated, i);
    }
    match std::str::from_utf8(body) {
        Ok(s) => Ok((r, Some(s.to_owned()))),
        Err(_) => WireError::fail(DecodeErrorKind::InvalidUtf8, i),
    }
}

/// `n` items of `item`, after the caller checked `n`.
#[inline]
pub fn items<'a, T>(
    mut i: &'a [u8],
    n: usize,
    mut item: impl FnMut(&'a [u8]) -> PResult<'a, T>,
) -> PResult<'a, Vec<T>> {
    let mut out = vec_n(n);
    for _ in 0..n {
        let (r, x) = item(i)?;
        out.push(x);
        i = r;
    }
    Ok((i, out))
}

/// A collection length as the u32 that is sent (saturating).
#[inline]
pub fn count32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// A collection length; upstream counts are u32 (saturating, as the old `Writer` did).
#[inline]
pub fn put_count<B: BufMut>(b: &mut B, n: usize) {
    b.put_u32(count32(n));
}

#[inline]
pub fn put_mem<B: BufMut>(b: &mut B, m: &[u8]) {
    put_count(b, m.len());
    b.put_slice(m);
}

#[inline]
pub fn put_str<B: BufMut>(b: &mut B, s: Option<&str>) {
    match s {
        None => b.put_u32(0),
        Some(s) => {
            put_count(b, s.len().saturating_add(1));
            b.put_slice(s.as_bytes());
            b.put_u8(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_is_exact() {
        let e = u32(&[1, 2]).unwrap_err();
        let nom::Err::Error(e) = e else { panic!() };
        assert_eq!(
            e.kind,
            DecodeErrorKind::Truncated {
                needed: 4,
                remaining: 2
            }
        );
        assert_eq!(e.remaining, 2);
    }

    #[test]
    fn counts_are_checked_before_allocation() {
        let nom::Err::Error(e) = count(&[0, 0, 0, 9, 1, 2], 1).unwrap_err() else {
            panic!()
        };
        assert_eq!(
            e.kind,
            DecodeErrorKind::CountTooLarge {
                count: 9,
                remaining: 2
            }
        );
        assert_eq!(e.remaining, 6, "points at the count");
        assert_eq!(count(&[0, 0, 0, 2, 1, 2], 1), Ok((&[1u8, 2][..], 2)));
        assert_eq!(vec_n::<u64>(u32::MAX as usize).capacity(), 1024);
    }

    #[test]
    fn strings_point_at_their_length() {
        let nom::Err::Error(e) = str(&[0, 0, 0, 2, b'a', b'b']).unwrap_err() else {
            panic!()
        };
        assert_eq!(
            (e.kind, e.remaining),
            (DecodeErrorKind::StringNotTerminated, 6)
        );
        let nom::Err::Error(e) = str(&[0, 0, 0, 2, 0xff, 0]).unwrap_err() else {
            panic!()
        };
        assert_eq!((e.kind, e.remaining), (DecodeErrorKind::InvalidUtf8, 6));
        assert_eq!(str(&[0, 0, 0, 0]), Ok((&[][..], None)));
        let mut b = Vec::new();
        put_str(&mut b, Some("ab"));
        assert_eq!(b, [0, 0, 0, 3, b'a', b'b', 0]);
    }
}
