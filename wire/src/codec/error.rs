//! The parser error: what went wrong, how many bytes were left where it went wrong, and the field path.
//!
//! A parser only sees the suffix of the buffer it works on, so the position is kept as the number of
//! bytes remaining; the boundary (`Reader::parse`, `decode_exact`) turns it back into today's
//! `DecodeError{kind, offset, path}` with `offset = total - remaining`.

use crate::error::{DecodeError, DecodeErrorKind};

/// A parse failure; `remaining` is the input length at the start of the failing item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError {
    pub kind: DecodeErrorKind,
    pub remaining: usize,
    /// Innermost field first (pushed while unwinding), as in `DecodeError`.
    pub path: Vec<&'static str>,
}

/// The result of every parser: nom's, over bytes, with our error.
pub type PResult<'a, T> = nom::IResult<&'a [u8], T, WireError>;

impl WireError {
    /// An error at the start of `at` (the input as the failing item saw it).
    pub fn at(kind: DecodeErrorKind, at: &[u8]) -> Self {
        Self {
            kind,
            remaining: at.len(),
            path: Vec::new(),
        }
    }

    /// The error as a nom failure, ready to return.
    pub fn fail<T>(kind: DecodeErrorKind, at: &[u8]) -> Result<T, nom::Err<Self>> {
        Err(nom::Err::Error(Self::at(kind, at)))
    }

    /// Back to a `DecodeError` for a buffer of `total` bytes.
    pub fn into_decode(self, total: usize) -> DecodeError {
        DecodeError::from_parts(self.kind, total.saturating_sub(self.remaining), self.path)
    }
}

/// Flattens nom's wrapper. Our parsers are complete and only raise `Error`; `Incomplete` cannot occur
/// and is reported as truncation defensively.
pub fn unwrap_err(e: nom::Err<WireError>, input: &[u8]) -> WireError {
    match e {
        nom::Err::Error(e) | nom::Err::Failure(e) => e,
        nom::Err::Incomplete(n) => WireError::at(
            DecodeErrorKind::Truncated {
                needed: match n {
                    nom::Needed::Size(s) => s.get(),
                    nom::Needed::Unknown => 1,
                },
                remaining: input.len(),
            },
            input,
        ),
    }
}

/// Names the field a parse step belongs to, for the error path.
#[inline]
pub fn named<'a, T>(r: PResult<'a, T>, field: &'static str) -> PResult<'a, T> {
    r.map_err(|e| {
        e.map(|mut e| {
            e.path.push(field);
            e
        })
    })
}

impl<'a> nom::error::ParseError<&'a [u8]> for WireError {
    // Only reached if a nom combinator fails on its own; prim maps every primitive's failure to an exact
    // kind first, so this is the fallback for an unexpected end of input.
    fn from_error_kind(input: &'a [u8], _kind: nom::error::ErrorKind) -> Self {
        Self::at(
            DecodeErrorKind::Truncated {
                needed: 1,
                remaining: input.len(),
            },
            input,
        )
    }

    fn append(_: &'a [u8], _: nom::error::ErrorKind, other: Self) -> Self {
        other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_count_from_the_start() {
        let e = WireError {
            kind: DecodeErrorKind::InvalidUtf8,
            remaining: 3,
            path: vec!["inner", "outer"],
        };
        let d = e.clone().into_decode(10);
        assert_eq!(d.offset, 7);
        assert_eq!(d.path(), "outer.inner");
    }
}
