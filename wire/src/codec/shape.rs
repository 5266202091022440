//! Field codecs for slots whose wire form is not the field's own (`#[wire(with = shape::flag8)]`).
//!
//! Each has `parse(i, v, &mut field) -> PResult<()>` and `put(b, v, &field)`; counted ones also
//! `parse_min(.., min)`, the least bytes per element checked before anything is allocated.

use super::error::{named, PResult, WireError};
use super::prim;
use crate::error::DecodeErrorKind;
use crate::pack::Wire;
use crate::types::StepId;
use crate::ProtocolVersion;
use bytes::BufMut;

/// `Option<T>` behind a `u8` presence flag, strictly 0 or 1 (upstream reads any non-zero as present;
/// 0/1 keeps re-encoding exact).
pub mod flag8 {
    use super::*;
    pub fn parse<'a, T: Wire>(
        i: &'a [u8],
        v: ProtocolVersion,
        f: &mut Option<T>,
    ) -> PResult<'a, ()> {
        let (i, present) = named(prim::bool(i), "present")?;
        if !present {
            *f = None;
            return Ok((i, ()));
        }
        let (i, x) = T::parse(i, v)?;
        *f = Some(x);
        Ok((i, ()))
    }
    pub fn put<B: BufMut, T: Wire>(b: &mut B, v: ProtocolVersion, f: &Option<T>) {
        match f {
            None => b.put_u8(0),
            Some(x) => {
                b.put_u8(1);
                x.put(b, v);
            }
        }
    }
}

/// `Option<T>` behind a `u8` that is 0 for none and 0xff for present (`pack_multi_core_data`).
pub mod flag_ff {
    use super::*;
    pub fn parse<'a, T: Wire>(
        i: &'a [u8],
        v: ProtocolVersion,
        f: &mut Option<T>,
    ) -> PResult<'a, ()> {
        match prim::u8(i)? {
            (r, 0) => {
                *f = None;
                Ok((r, ()))
            }
            (r, 0xff) => {
                let (r, x) = T::parse(r, v)?;
                *f = Some(x);
                Ok((r, ()))
            }
            (_, b) => WireError::fail(
                DecodeErrorKind::BadValue {
                    what: "presence flag",
                    value: u64::from(b),
                },
                i,
            ),
        }
    }
    pub fn put<B: BufMut, T: Wire>(b: &mut B, v: ProtocolVersion, f: &Option<T>) {
        match f {
            None => b.put_u8(0),
            Some(x) => {
                b.put_u8(0xff);
                x.put(b, v);
            }
        }
    }
}

/// `Option<T>` with no presence flag: always on the wire, a missing record going out as the default
/// record's bytes (a NULL cond before upstream gave it a flag); it decodes as `Some`.
pub mod some {
    use super::*;
    pub fn parse<'a, T: Wire>(
        i: &'a [u8],
        v: ProtocolVersion,
        f: &mut Option<T>,
    ) -> PResult<'a, ()> {
        let (i, x) = T::parse(i, v)?;
        *f = Some(x);
        Ok((i, ()))
    }
    pub fn put<B: BufMut, T: Wire + Default>(b: &mut B, v: ProtocolVersion, f: &Option<T>) {
        match f {
            Some(x) => x.put(b, v),
            None => T::default().put(b, v),
        }
    }
}

/// `Option<T>` behind a `u32` that is NO_VAL for none and 0 for present (`slurmdb_pack_res_rec`'s
/// `clus_res_rec`; upstream reads anything but NO_VAL as present, 0 keeps re-encoding exact).
pub mod nv32 {
    use super::*;
    use crate::pack::NO_VAL;
    pub fn parse<'a, T: Wire>(
        i: &'a [u8],
        v: ProtocolVersion,
        f: &mut Option<T>,
    ) -> PResult<'a, ()> {
        match prim::u32(i)? {
            (r, NO_VAL) => {
                *f = None;
                Ok((r, ()))
            }
            (r, 0) => {
                let (r, x) = T::parse(r, v)?;
                *f = Some(x);
                Ok((r, ()))
            }
            (_, x) => WireError::fail(
                DecodeErrorKind::BadValue {
                    what: "presence word (NO_VAL or 0)",
                    value: u64::from(x),
                },
                i,
            ),
        }
    }
    pub fn put<B: BufMut, T: Wire>(b: &mut B, v: ProtocolVersion, f: &Option<T>) {
        match f {
            None => b.put_u32(NO_VAL),
            Some(x) => {
                b.put_u32(0);
                x.put(b, v);
            }
        }
    }
}

/// A `u32` that went out as a `u16` before a release widened it (`=> field` under the older gate);
/// a value above `u16::MAX` is cut, as upstream's cast did.
pub mod low16 {
    use super::*;
    pub fn parse<'a>(i: &'a [u8], _: ProtocolVersion, f: &mut u32) -> PResult<'a, ()> {
        let (i, x) = prim::u16(i)?;
        *f = u32::from(x);
        Ok((i, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, _: ProtocolVersion, f: &u32) {
        b.put_u16(*f as u16)
    }
}

fn counted<'a, T: Wire>(
    at: &'a [u8],
    rest: &'a [u8],
    n: u64,
    min: usize,
    v: ProtocolVersion,
) -> PResult<'a, Vec<T>> {
    let n = prim::check_count(at, rest, n, min)?;
    prim::items(rest, n, |i| T::parse(i, v))
}

/// `Vec<T>` behind a `u16` count.
pub mod count16 {
    use super::*;
    pub fn parse<'a, T: Wire>(i: &'a [u8], v: ProtocolVersion, f: &mut Vec<T>) -> PResult<'a, ()> {
        parse_min(i, v, f, 1)
    }
    pub fn parse_min<'a, T: Wire>(
        i: &'a [u8],
        v: ProtocolVersion,
        f: &mut Vec<T>,
        min: usize,
    ) -> PResult<'a, ()> {
        let (r, n) = prim::u16(i)?;
        let (r, x) = counted(i, r, u64::from(n), min, v)?;
        *f = x;
        Ok((r, ()))
    }
    /// A list longer than a u16 can count is cut there, so that count and items agree.
    pub fn put<B: BufMut, T: Wire>(b: &mut B, v: ProtocolVersion, f: &[T]) {
        let f = f
            .get(..f.len().min(usize::from(u16::MAX)))
            .unwrap_or_default();
        b.put_u16(f.len() as u16);
        for x in f {
            x.put(b, v);
        }
    }
}

/// `Vec<T>` behind a `u32` count (a count with a per-element minimum other than `Vec<T>`'s own).
pub mod count32 {
    use super::*;
    pub fn parse<'a, T: Wire>(i: &'a [u8], v: ProtocolVersion, f: &mut Vec<T>) -> PResult<'a, ()> {
        parse_min(i, v, f, 1)
    }
    pub fn parse_min<'a, T: Wire>(
        i: &'a [u8],
        v: ProtocolVersion,
        f: &mut Vec<T>,
        min: usize,
    ) -> PResult<'a, ()> {
        let (r, n) = prim::u32(i)?;
        let (r, x) = counted(i, r, u64::from(n), min, v)?;
        *f = x;
        Ok((r, ()))
    }
    pub fn put<B: BufMut, T: Wire>(b: &mut B, v: ProtocolVersion, f: &[T]) {
        prim::put_count(b, f.len());
        for x in f {
            x.put(b, v);
        }
    }
}

/// Before 25.11 a bare `u32` job id where 25.11 sends a whole step id (`[..V25_11] => step_id`).
pub mod job_id32 {
    use super::*;
    pub fn parse<'a>(i: &'a [u8], _: ProtocolVersion, f: &mut StepId) -> PResult<'a, ()> {
        let (i, j) = prim::u32(i)?;
        *f = StepId::job(j);
        Ok((i, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, _: ProtocolVersion, f: &StepId) {
        b.put_u32(f.job_id)
    }
}

/// The step number that followed a bare job id before 25.11.
pub mod step_num32 {
    use super::*;
    pub fn parse<'a>(i: &'a [u8], _: ProtocolVersion, f: &mut StepId) -> PResult<'a, ()> {
        let (i, s) = prim::u32(i)?;
        f.step_id = s;
        Ok((i, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, _: ProtocolVersion, f: &StepId) {
        b.put_u32(f.step_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count16_cuts_a_list_it_cannot_count() {
        let v = ProtocolVersion::V24_11;
        let long: Vec<u8> = (0..70_000u32).map(|x| x as u8).collect();
        let mut b = Vec::new();
        count16::put(&mut b, v, &long);
        assert_eq!(b.len(), 2 + usize::from(u16::MAX));
        assert_eq!(b.get(..2), Some(&[0xff, 0xff][..]));
        let mut back = Vec::<u8>::new();
        let (rest, ()) = count16::parse(&b, v, &mut back).unwrap();
        assert!(rest.is_empty());
        assert_eq!(back.as_slice(), long.get(..usize::from(u16::MAX)).unwrap());
    }
}
