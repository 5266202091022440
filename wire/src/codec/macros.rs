//! `wire!`: a body declared once, as its fields in wire order with the version gates beside them.
//!
//! ```text
//! wire! { $(#[struct attrs])* pub struct Name { entry, * } }     // every entry ends in a comma
//! wire! { $(#[struct attrs])* pub struct Name(pub Inner); }      // newtype, Inner's own codec
//! wire! { $(#[struct attrs])* pub struct Name(#[wire(with = m)] pub Inner); }
//!
//! entry := (/// doc)* (#[wire(key = value, ..)])? (gate)?
//!          ( pub field: Type          a field, in wire order (the struct's field order)
//!          | => field                 the same field placed again, under another gate or codec
//!          | let local: Type = (|s| expr) )
//!                                     a slot that is not a field (a count ahead of other fields): decoded
//!                                     into `local`, encoded as `expr` of the value being encoded
//! gate  := [Lo..] | [..Hi] | [Lo..Hi]  (ProtocolVersion constants: from Lo on, before Hi)
//! keys  := with = path     field codec: path::parse(i, v, &mut T) -> PResult<()>, path::put(b, v, &T);
//!                          with `min = N` also: path::parse_min(i, v, &mut T, N)
//!        | ctx = path      codec that sees the whole struct: parse(i, v, &mut Self), put(b, v, &Self)
//!        | if = |s| cond   data-dependent presence, on the fields decoded so far / the value encoded;
//!                          may be followed by one other key (`if = |s| s.n > 0, with = m`)
//!        | len = local     a Vec<T> of `local` elements with no count of its own
//!                          (`with = m, len = local`: m::parse_len(i, v, &mut T, &local) gets the slot,
//!                          e.g. a count that must be checked, and reported, where it was read)
//!        | min = N | |v| N the least bytes per element, checked against the input before anything is
//!                          allocated (for `len` and `with`); `|v| ..` may depend on the version. On a
//!                          `let` u32 slot: the count is checked where it is read, against all the bytes
//!                          after it (as `Reader::count` does)
//! ```
//!
//! The struct derives Debug, Clone, PartialEq, Default (and Arbitrary with the `arbitrary` feature); an
//! absent field decodes to its default. Field errors are named after the field (or the `let` slot).
//! Docs go first and before `#[wire(..)]`; `=>` and `let` entries take no docs. `if`/`let` closures are
//! coerced to `fn` pointers, so they cannot capture.
//!
//! Examples:
//! ```text
//! wire! {
//!     /// `job_alloc_info_msg_t`.
//!     pub struct JobAllocInfoMsg {
//!         [V25_11..] pub step_id: StepId,
//!         #[wire(with = shape::job_id32)] [..V25_11] => step_id,
//!         pub req_cluster: Option<String>,
//!     }
//! }
//! wire! {
//!     pub struct ListMsg {
//!         let n: u32 = (|s| s.items.len() as u32),
//!         pub last_update: i64,
//!         #[wire(len = n, min = 8)] pub items: Vec<Item>,
//!         #[wire(if = |s| s.last_update != 0)] [V24_11..] pub extra: u32,
//!     }
//! }
//! ```

use super::error::{named, PResult};
use super::prim;
use crate::pack::Wire;
use crate::ProtocolVersion;

/// `len = local`: `n` elements of `T` without a count of their own; `n` is checked against the input
/// (at least `min` bytes each) before the vector is allocated.
pub fn counted_by<'a, T: Wire>(
    i: &'a [u8],
    n: u64,
    min: usize,
    v: ProtocolVersion,
) -> PResult<'a, Vec<T>> {
    let n = prim::check_count(i, i, n, min)?;
    prim::items(i, n, |i| T::parse(i, v))
}

/// A `let` slot with `min`: a u32 count, checked where it is read against the bytes after it.
#[inline]
pub fn count_slot(i: &[u8], min: usize) -> PResult<'_, u32> {
    let (r, n) = prim::u32(i)?;
    prim::check_count(i, r, u64::from(n), min)?;
    Ok((r, n))
}

/// The value of a `let` slot, as a `Wire` parse named after the slot.
#[inline]
pub fn slot<'a, T: Wire>(i: &'a [u8], v: ProtocolVersion, name: &'static str) -> PResult<'a, T> {
    named(T::parse(i, v), name)
}

/// Declares a wire body; see the module docs for the grammar.
#[macro_export]
macro_rules! wire {
    (
        $(#[$sm:meta])*
        pub struct $name:ident ( #[wire(with = $m:path)] pub $ty:ty );
    ) => {
        $(#[$sm])*
        #[derive(Debug, Clone, PartialEq, Default)]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        pub struct $name(pub $ty);

        impl $crate::pack::Wire for $name {
            fn parse<'a>(
                i: &'a [u8],
                v: $crate::ProtocolVersion,
            ) -> $crate::codec::error::PResult<'a, Self> {
                use $m as m;
                let mut s = Self::default();
                let (i, ()) = m::parse(i, v, &mut s.0)?;
                Ok((i, s))
            }
            fn put<B: $crate::codec::BufMut>(&self, b: &mut B, v: $crate::ProtocolVersion) {
                use $m as m;
                m::put(b, v, &self.0)
            }
        }
    };
    (
        $(#[$sm:meta])*
        pub struct $name:ident ( pub $ty:ty );
    ) => {
        $(#[$sm])*
        #[derive(Debug, Clone, PartialEq, Default)]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        pub struct $name(pub $ty);

        impl $crate::pack::Wire for $name {
            fn parse<'a>(
                i: &'a [u8],
                v: $crate::ProtocolVersion,
            ) -> $crate::codec::error::PResult<'a, Self> {
                let (i, x) = <$ty as $crate::pack::Wire>::parse(i, v)?;
                Ok((i, Self(x)))
            }
            fn put<B: $crate::codec::BufMut>(&self, b: &mut B, v: $crate::ProtocolVersion) {
                $crate::pack::Wire::put(&self.0, b, v)
            }
        }
    };
    (
        $(#[$sm:meta])*
        pub struct $name:ident {
            $(
                $(#[doc = $doc:literal])*
                $(#[wire($($w:tt)*)])?
                $([$($g:tt)*])?
                $(let $l:ident : $lt:ty = ($($le:tt)*))?
                $(pub $f:ident : $ty:ty)?
                $(=> $p:ident)?
                ,
            )*
        }
    ) => {
        $(#[$sm])*
        #[derive(Debug, Clone, PartialEq, Default)]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        pub struct $name {
            $( $(#[doc = $doc])* $( pub $f: $ty, )? )*
        }

        impl $crate::pack::Wire for $name {
            #[allow(unused_mut, unused_variables, unused_assignments)]
            fn parse<'a>(
                mut i: &'a [u8],
                v: $crate::ProtocolVersion,
            ) -> $crate::codec::error::PResult<'a, Self> {
                let mut s = Self::default();
                $( $( let mut $l: $lt = ::core::default::Default::default(); )? )*
                $(
                    $crate::__wire_step!(dec i v s; [$($($g)*)?] {$($($w)*)?}
                        $($f)? $($p)? $(@let $l ($lt) ($($le)*))?);
                )*
                Ok((i, s))
            }

            #[allow(unused_variables)]
            fn put<B: $crate::codec::BufMut>(&self, b: &mut B, v: $crate::ProtocolVersion) {
                let s = self;
                $(
                    $crate::__wire_step!(enc b v s; [$($($g)*)?] {$($($w)*)?}
                        $($f)? $($p)? $(@let $l ($lt) ($($le)*))?);
                )*
            }
        }
    };
}

/// One entry of a `wire!` body in one direction: the gate and `if` first, then the codec.
#[doc(hidden)]
#[macro_export]
macro_rules! __wire_step {
    // ---- the codec of an entry (after its gate) ----
    (@go dec $i:ident $v:ident $s:ident; {} @let $l:ident ($lt:ty) ($($e:tt)*)) => {
        let (r, x) = $crate::codec::macros::slot::<$lt>($i, $v, stringify!($l))?;
        $l = x;
        $i = r;
    };
    (@go dec $i:ident $v:ident $s:ident; {min = $($m:tt)+} @let $l:ident ($lt:ty) ($($e:tt)*)) => {
        let (r, x) = $crate::codec::error::named(
            $crate::codec::macros::count_slot($i, $crate::__wire_min!($v; $($m)+)),
            stringify!($l),
        )?;
        $l = x;
        $i = r;
    };
    (@go enc $b:ident $v:ident $s:ident; {$(min = $($m:tt)+)?} @let $l:ident ($lt:ty) ($($e:tt)*)) => {
        let f: fn(&Self) -> $lt = $($e)*;
        let this: &Self = &$s;
        $crate::pack::Wire::put(&f(this), $b, $v);
    };
    (@go dec $i:ident $v:ident $s:ident; {len = $n:ident $(, min = $($m:tt)+)?} $f:ident) => {
        let (r, x) = $crate::codec::error::named(
            $crate::codec::macros::counted_by(
                $i,
                ::core::primitive::u64::from($n),
                $crate::__wire_min!($v; $($($m)+)?),
                $v,
            ),
            stringify!($f),
        )?;
        $s.$f = x;
        $i = r;
    };
    (@go enc $b:ident $v:ident $s:ident; {len = $n:ident $(, min = $($m:tt)+)?} $f:ident) => {
        for x in &$s.$f {
            $crate::pack::Wire::put(x, $b, $v);
        }
    };
    (@go dec $i:ident $v:ident $s:ident; {with = $m:path, len = $n:ident} $f:ident) => {
        use $m as m;
        let (r, ()) = $crate::codec::error::named(m::parse_len($i, $v, &mut $s.$f, &$n), stringify!($f))?;
        $i = r;
    };
    (@go enc $b:ident $v:ident $s:ident; {with = $m:path, len = $n:ident} $f:ident) => {
        use $m as m;
        m::put($b, $v, &$s.$f);
    };
    (@go dec $i:ident $v:ident $s:ident; {with = $m:path, min = $($mn:tt)+} $f:ident) => {
        use $m as m;
        let (r, ()) = $crate::codec::error::named(
            m::parse_min($i, $v, &mut $s.$f, $crate::__wire_min!($v; $($mn)+)),
            stringify!($f),
        )?;
        $i = r;
    };
    (@go dec $i:ident $v:ident $s:ident; {with = $m:path} $f:ident) => {
        use $m as m;
        let (r, ()) = $crate::codec::error::named(m::parse($i, $v, &mut $s.$f), stringify!($f))?;
        $i = r;
    };
    (@go enc $b:ident $v:ident $s:ident; {with = $m:path $(, min = $($mn:tt)+)?} $f:ident) => {
        use $m as m;
        m::put($b, $v, &$s.$f);
    };
    (@go dec $i:ident $v:ident $s:ident; {ctx = $m:path} $f:ident) => {
        use $m as m;
        let (r, ()) = $crate::codec::error::named(m::parse($i, $v, &mut $s), stringify!($f))?;
        $i = r;
    };
    (@go enc $b:ident $v:ident $s:ident; {ctx = $m:path} $f:ident) => {
        use $m as m;
        m::put($b, $v, $s);
    };
    (@go dec $i:ident $v:ident $s:ident; {} $f:ident) => {
        let (r, x) = $crate::codec::error::named($crate::pack::Wire::parse($i, $v), stringify!($f))?;
        $s.$f = x;
        $i = r;
    };
    (@go enc $b:ident $v:ident $s:ident; {} $f:ident) => {
        $crate::pack::Wire::put(&$s.$f, $b, $v);
    };
    // ---- the gate and data-dependent presence ----
    ($d:ident $x:ident $v:ident $s:ident; [$($g:tt)*] {if = $c:expr $(, $($k:tt)*)?} $($t:tt)*) => {
        if $crate::gate!($v; $($g)*) && {
            let c: fn(&Self) -> bool = $c;
            let this: &Self = &$s;
            c(this)
        } {
            $crate::__wire_step!(@go $d $x $v $s; {$($($k)*)?} $($t)*);
        }
    };
    ($d:ident $x:ident $v:ident $s:ident; [$($g:tt)*] {$($k:tt)*} $($t:tt)*) => {
        if $crate::gate!($v; $($g)*) {
            $crate::__wire_step!(@go $d $x $v $s; {$($k)*} $($t)*);
        }
    };
}

/// The `min` of an entry: 1 when absent, a constant, or `|v| expr` of the version.
#[doc(hidden)]
#[macro_export]
macro_rules! __wire_min {
    ($v:ident;) => {
        1usize
    };
    ($v:ident; |$mv:ident| $e:expr) => {{
        let $mv = $v;
        $e
    }};
    ($v:ident; $e:expr) => {
        $e
    };
}

#[cfg(test)]
mod tests {
    use crate::codec::shape;
    use crate::pack::{decode_exact, encode_to_vec};
    use crate::types::StepId;
    use crate::{DecodeErrorKind, ProtocolVersion as V};

    crate::wire! {
        /// Every kind of entry.
        pub struct Sample {
            /// The whole step id from 25.11.
            [V25_11..] pub step_id: StepId,
            pub flags: u32,
            #[wire(with = shape::job_id32)] [..V25_11] => step_id,
            #[wire(if = |s| s.flags != 0)] [V23_02..] pub extra: u16,
            let n: u32 = (|s| s.items.len() as u32),
            [..V24_11] pub old: u8,
            #[wire(len = n, min = 4)] pub items: Vec<u32>,
            #[wire(with = shape::flag8)] pub opt: Option<u64>,
            #[wire(if = |s| s.flags & 2 != 0, with = shape::count16, min = |v| if v >= V::V24_11 { 2 } else { 64 })]
            pub narrow: Vec<u16>,
        }
    }

    crate::wire! {
        pub struct Wrapped(pub u16);
    }

    crate::wire! {
        pub struct Flagged(#[wire(with = shape::flag_ff)] pub Option<u8>);
    }

    fn sample() -> Sample {
        Sample {
            step_id: StepId::job(7),
            flags: 3,
            extra: 9,
            old: 1,
            items: vec![5, 6],
            opt: Some(8),
            narrow: vec![1],
        }
    }

    #[test]
    fn entries_follow_their_gates() {
        let s = sample();
        let b = encode_to_vec(&s, V::V24_05);
        #[rustfmt::skip]
        let want: Vec<u8> = [
            &[0, 0, 0, 3][..],      // flags
            &[0, 0, 0, 7],          // job_id32 before 25.11
            &[0, 9],                // extra (flags != 0)
            &[0, 0, 0, 2],          // let n
            &[1],                   // old before 24.11
            &[0, 0, 0, 5, 0, 0, 0, 6],
            &[1, 0, 0, 0, 0, 0, 0, 0, 8],
            &[0, 1, 0, 1],          // count16 then one u16
        ]
        .concat();
        assert_eq!(b, want);
        // The version-dependent min: 64 bytes per element before 24.11 refuses the one u16.
        let e = decode_exact::<Sample>(&b, V::V24_05).unwrap_err();
        assert_eq!((e.offset, e.path()), (32, "narrow".to_string()));
        assert_eq!(
            e.kind,
            DecodeErrorKind::CountTooLarge {
                count: 1,
                remaining: 2
            }
        );
        let b = encode_to_vec(
            &Sample {
                flags: 1,
                ..s.clone()
            },
            V::V24_05,
        );
        assert_eq!(b.len(), want.len() - 4, "narrow absent (flags & 2 == 0)");
        let back: Sample = decode_exact(&b, V::V24_05).unwrap();
        assert_eq!(
            back,
            Sample {
                flags: 1,
                narrow: vec![],
                ..s.clone()
            }
        );

        let b = encode_to_vec(&s, V::V25_11);
        let back: Sample = decode_exact(&b, V::V25_11).unwrap();
        assert_eq!(
            back,
            Sample {
                old: 0,
                ..s.clone()
            },
            "old is absent in 25.11"
        );
        assert_eq!(b.len(), 20 + 4 + 2 + 4 + 8 + 9 + 4);

        let none = Sample {
            flags: 0,
            extra: 0,
            narrow: vec![],
            ..s
        };
        let b = encode_to_vec(&none, V::V22_05);
        assert_eq!(decode_exact::<Sample>(&b, V::V22_05), Ok(none));
    }

    #[test]
    fn errors_name_the_field_and_point_at_it() {
        let b = encode_to_vec(&sample(), V::V24_05);
        // Cut inside `opt`: offset of the item that failed, path through the field.
        let e = decode_exact::<Sample>(&b[..28], V::V24_05).unwrap_err();
        assert_eq!((e.offset, e.path()), (24, "opt".to_string()));
        assert_eq!(
            e.kind,
            DecodeErrorKind::Truncated {
                needed: 8,
                remaining: 4
            }
        );
        // A `len` count larger than the input is refused before allocation, at the list.
        let mut big = b.clone();
        big[13] = 0xff;
        let e = decode_exact::<Sample>(&big, V::V24_05).unwrap_err();
        assert!(
            matches!(e.kind, DecodeErrorKind::CountTooLarge { .. }),
            "{e}"
        );
        assert_eq!((e.offset, e.path()), (15, "items".to_string()));
        // A bad presence flag names the flag inside its field.
        let mut bad = b;
        bad[23] = 2;
        let e = decode_exact::<Sample>(&bad, V::V24_05).unwrap_err();
        assert_eq!((e.offset, e.path()), (23, "opt.present".into()));
        assert_eq!(e.kind, DecodeErrorKind::BadBool(2));
    }

    #[test]
    fn newtypes() {
        assert_eq!(encode_to_vec(&Wrapped(0x102), V::V24_11), [1, 2]);
        assert_eq!(encode_to_vec(&Flagged(Some(4)), V::V24_11), [0xff, 4]);
        assert_eq!(decode_exact::<Flagged>(&[0], V::V24_11), Ok(Flagged(None)));
        let e = decode_exact::<Flagged>(&[7], V::V24_11).unwrap_err();
        assert!(matches!(e.kind, DecodeErrorKind::BadValue { .. }));
    }
}
