//! Persisted shapes and the chain between them (after garage's `Migrate`).
//!
//! Each on-disk shape that differs from the one after it is its own type;
//! [`Migrate::migrate`] lifts it to the next. Decoding a file of format `f`
//! walks back from the newest shape to the first whose `SINCE` is at most
//! `f`, decodes that, and migrates forward; so the code of the current
//! shape knows only the current shape.

use super::shared::{bad, DecResult};
use slurm_wire::pack::Reader;
use std::convert::Infallible;
use std::marker::PhantomData;

pub(super) trait Migrate: Sized {
    /// The first format version laid out this way.
    const SINCE: u32;
    /// The shape before this one ([`Before`] for the first).
    type Previous: Migrate<Cx = Self::Cx>;
    /// What decoding reads besides the bytes (the configuration, ...).
    type Cx: ?Sized;

    /// Decodes this shape's own layout.
    fn decode_own(r: &mut Reader<'_>, cx: &Self::Cx) -> DecResult<Self>;

    fn migrate(previous: Self::Previous) -> Self;

    /// Decodes a body of `format` (no newer than this shape) as this shape.
    fn decode(format: u32, r: &mut Reader<'_>, cx: &Self::Cx) -> DecResult<Self> {
        if format >= Self::SINCE {
            Self::decode_own(r, cx)
        } else {
            Self::Previous::decode(format, r, cx).map(Self::migrate)
        }
    }
}

/// What precedes the first shape: no format decodes as it.
pub(super) struct Before<C: ?Sized>(Infallible, PhantomData<fn(&C)>);

impl<C: ?Sized> Before<C> {
    /// The first shape's `migrate`: never called.
    pub(super) fn never<T>(self) -> T {
        match self.0 {}
    }
}

impl<C: ?Sized> Migrate for Before<C> {
    const SINCE: u32 = 0;
    type Previous = Before<C>;
    type Cx = C;

    fn decode_own(r: &mut Reader<'_>, _: &C) -> DecResult<Self> {
        Err(bad(r, "format version", 0))
    }

    fn migrate(previous: Self) -> Self {
        previous
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slurm_wire::pack::Writer;

    /// A count in a u8, then (format 3) in a u32 with a flag after.
    #[derive(Debug, PartialEq)]
    struct V1(u32);
    #[derive(Debug, PartialEq)]
    struct V3(u32, bool);

    impl Migrate for V1 {
        const SINCE: u32 = 1;
        type Previous = Before<()>;
        type Cx = ();
        fn decode_own(r: &mut Reader<'_>, _: &()) -> DecResult<Self> {
            Ok(V1(u32::from(r.u8()?)))
        }
        fn migrate(p: Before<()>) -> Self {
            p.never()
        }
    }

    impl Migrate for V3 {
        const SINCE: u32 = 3;
        type Previous = V1;
        type Cx = ();
        fn decode_own(r: &mut Reader<'_>, _: &()) -> DecResult<Self> {
            Ok(V3(r.u32()?, r.bool()?))
        }
        fn migrate(p: V1) -> Self {
            V3(p.0, false)
        }
    }

    #[test]
    fn decoding_walks_back_to_the_shape_of_the_format_and_forward_again() {
        let old = [7u8];
        let mut w = Writer::new();
        w.u32(300);
        w.bool(true);
        let new = w.into_vec();
        for (format, b, want) in [(1, &old[..], V3(7, false)), (2, &old[..], V3(7, false))]
            .into_iter()
            .chain([(3, &new[..], V3(300, true)), (4, &new[..], V3(300, true))])
        {
            let mut r = Reader::new(b);
            assert_eq!(V3::decode(format, &mut r, &()).unwrap(), want, "{format}");
            assert_eq!(r.remaining(), 0);
        }
        assert!(V3::decode(0, &mut Reader::new(&old), &()).is_err());
    }
}
