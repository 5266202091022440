//! Wire value types shared by many messages.

use crate::codec::error::{PResult, WireError};
use crate::codec::prim;
use crate::error::DecodeErrorKind;
use crate::pack::{Wire, NO_VAL};
use crate::ProtocolVersion;
use bytes::BufMut;
use std::net::{Ipv4Addr, Ipv6Addr};

/// `packdouble`: the value times 1e6, sent as IEEE-754 bits.
///
/// The scaled bits are kept as received so that re-encoding is exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Double {
    pub scaled_bits: u64,
}

impl Double {
    const MULT: f64 = 1_000_000.0;

    pub fn from_value(x: f64) -> Self {
        Self {
            scaled_bits: (x * Self::MULT).to_bits(),
        }
    }

    pub fn value(self) -> f64 {
        f64::from_bits(self.scaled_bits) / Self::MULT
    }
}

// irregular: hand-written rather than `wire!` only so that an error keeps its path (no "scaled_bits").
impl Wire for Double {
    fn parse<'a>(i: &'a [u8], _: ProtocolVersion) -> PResult<'a, Self> {
        let (i, scaled_bits) = prim::u64(i)?;
        Ok((i, Self { scaled_bits }))
    }
    fn put<B: BufMut>(&self, b: &mut B, _: ProtocolVersion) {
        b.put_u64(self.scaled_bits)
    }
}

/// A Slurm bitstring (`bitstr_t`), sent as a bit count and an upper-case
/// hex mask with exactly one digit per four bits, most significant first.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct BitStr {
    nbits: u32,
    words: Vec<u64>,
}

impl BitStr {
    /// Largest bitmap accepted from the wire (upstream nodes/cores scale).
    const MAX_BITS: u32 = 1 << 26;

    pub fn new(nbits: u32) -> Self {
        Self {
            nbits,
            words: vec![0; (nbits as usize).div_ceil(64)],
        }
    }
    pub fn len(&self) -> u32 {
        self.nbits
    }
    pub fn is_empty(&self) -> bool {
        self.nbits == 0
    }
    pub fn get(&self, i: u32) -> bool {
        i < self.nbits
            && self
                .words
                .get((i / 64) as usize)
                .is_some_and(|w| w >> (i % 64) & 1 == 1)
    }
    pub fn set(&mut self, i: u32, on: bool) {
        if i >= self.nbits {
            return;
        }
        if let Some(w) = self.words.get_mut((i / 64) as usize) {
            if on {
                *w |= 1 << (i % 64);
            } else {
                *w &= !(1 << (i % 64));
            }
        }
    }
    pub fn iter_ones(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.nbits).filter(|&i| self.get(i))
    }
    pub fn count_ones(&self) -> u32 {
        self.words.iter().map(|w| w.count_ones()).sum()
    }

    fn nibble(&self, n: u32) -> u8 {
        let mut v = 0;
        for b in 0..4 {
            if self.get(n * 4 + b) {
                v |= 1 << b;
            }
        }
        v
    }

    /// Upstream's `bit_fmt_hexmask`: "0x" plus ceil(nbits/4) digits; "0x0" when empty.
    pub fn to_hex(&self) -> String {
        if self.nbits == 0 {
            return "0x0".to_string();
        }
        let digits = self.nbits.div_ceil(4);
        let mut s = String::with_capacity(digits as usize + 2);
        s.push_str("0x");
        for n in (0..digits).rev() {
            s.push(
                char::from_digit(u32::from(self.nibble(n)), 16)
                    .map_or('0', |c| c.to_ascii_uppercase()),
            );
        }
        s
    }

    /// Parses a hex mask for a bitmap of `nbits`; strict so that the
    /// re-encoded text is identical.
    pub fn from_hex(nbits: u32, hex: &str) -> std::result::Result<Self, &'static str> {
        if nbits > Self::MAX_BITS {
            return Err("bit count too large");
        }
        let digits = hex.strip_prefix("0x").ok_or("hex mask lacks 0x")?;
        let mut b = Self::new(nbits);
        if nbits == 0 {
            return if digits == "0" {
                Ok(b)
            } else {
                Err("empty bitmap must be 0x0")
            };
        }
        if digits.len() != nbits.div_ceil(4) as usize {
            return Err("hex mask length does not match the bit count");
        }
        for (n, c) in digits.bytes().rev().enumerate() {
            let val = match c {
                b'0'..=b'9' => c - b'0',
                b'A'..=b'F' => c - b'A' + 10,
                _ => return Err("not an upper-case hex digit"),
            };
            for bit in 0..4u32 {
                if val >> bit & 1 == 1 {
                    let i = n as u32 * 4 + bit;
                    if i >= nbits {
                        return Err("bit set beyond the bitmap size");
                    }
                    b.set(i, true);
                }
            }
        }
        Ok(b)
    }
}

impl std::fmt::Debug for BitStr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BitStr({}:{})", self.nbits, self.to_hex())
    }
}

#[cfg(feature = "arbitrary")]
impl<'a> arbitrary::Arbitrary<'a> for BitStr {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        let nbits = u.int_in_range(0..=300u32)?;
        let mut b = Self::new(nbits);
        for i in 0..nbits {
            if u.arbitrary()? {
                b.set(i, true);
            }
        }
        Ok(b)
    }
}

/// `pack_bit_str_hex`: NO_VAL for a NULL bitmap.
// irregular: the text after the bit count must be its canonical upper-case hex form.
impl Wire for Option<BitStr> {
    fn parse<'a>(i: &'a [u8], _: ProtocolVersion) -> PResult<'a, Self> {
        let (r, nbits) = prim::u32(i)?;
        if nbits == NO_VAL {
            return Ok((r, None));
        }
        let (r, hex) = prim::str(r)?;
        match BitStr::from_hex(nbits, hex.as_deref().unwrap_or_default()) {
            Ok(b) => Ok((r, Some(b))),
            Err(e) => WireError::fail(DecodeErrorKind::BadBitstr(e), i),
        }
    }
    fn put<B: BufMut>(&self, b: &mut B, _: ProtocolVersion) {
        match self {
            None => b.put_u32(NO_VAL),
            Some(bits) => {
                b.put_u32(bits.nbits);
                prim::put_str(b, Some(&bits.to_hex()));
            }
        }
    }
}

/// `slurm_addr_t` as packed by `slurm_pack_addr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum SlurmAddr {
    #[default]
    Unspec,
    V4(Ipv4Addr, u16),
    V6(Ipv6Addr, u16),
}

const AF_UNSPEC: u16 = 0;
const AF_INET: u16 = 2;
const AF_INET6: u16 = 10;

// irregular: an enum chosen by the address family. Upstream passes network-order values through
// pack32/pack16 again, so on the little-endian hosts that exist the IPv4 address and both ports are
// byte-reversed on the wire.
impl Wire for SlurmAddr {
    fn parse<'a>(i: &'a [u8], _: ProtocolVersion) -> PResult<'a, Self> {
        let (r, family) = prim::u16(i)?;
        match family {
            AF_UNSPEC => Ok((r, Self::Unspec)),
            AF_INET => {
                let (r, a) = prim::u32(r)?;
                let (r, p) = prim::u16(r)?;
                Ok((r, Self::V4(Ipv4Addr::from(a.to_le_bytes()), p.swap_bytes())))
            }
            AF_INET6 => {
                let (r, raw) = prim::mem(r)?;
                let Ok(a) = <[u8; 16]>::try_from(raw) else {
                    return WireError::fail(
                        DecodeErrorKind::BadValue {
                            what: "IPv6 address length",
                            value: raw.len() as u64,
                        },
                        i,
                    );
                };
                let (r, p) = prim::u16(r)?;
                Ok((r, Self::V6(Ipv6Addr::from(a), p.swap_bytes())))
            }
            f => WireError::fail(DecodeErrorKind::BadAddrFamily(f), i),
        }
    }
    fn put<B: BufMut>(&self, b: &mut B, _: ProtocolVersion) {
        match self {
            Self::Unspec => b.put_u16(AF_UNSPEC),
            Self::V4(a, p) => {
                b.put_u16(AF_INET);
                b.put_u32(u32::from_le_bytes(a.octets()));
                b.put_u16(p.swap_bytes());
            }
            Self::V6(a, p) => {
                b.put_u16(AF_INET6);
                prim::put_mem(b, &a.octets());
                b.put_u16(p.swap_bytes());
            }
        }
    }
}

/// `slurm_step_id_t`; 24.11 added the leading `sluid`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct StepId {
    pub sluid: u64,
    pub job_id: u32,
    pub step_id: u32,
    pub step_het_comp: u32,
}

impl StepId {
    pub const PENDING_STEP: u32 = 0xffff_fffd;
    pub const EXTERN_CONT: u32 = 0xffff_fffc;
    pub const BATCH_SCRIPT: u32 = 0xffff_fffb;
    pub const INTERACTIVE_STEP: u32 = 0xffff_fffa;

    pub fn job(job_id: u32) -> Self {
        Self {
            sluid: 0,
            job_id,
            step_id: NO_VAL,
            step_het_comp: NO_VAL,
        }
    }
}

// irregular: hand-written rather than `wire!` only so that an error keeps its path (no field names
// inside a step id); the gate is the one of upstream's pack_step_id.
impl Wire for StepId {
    fn parse<'a>(i: &'a [u8], v: ProtocolVersion) -> PResult<'a, Self> {
        let (i, sluid) = if v >= ProtocolVersion::V24_11 {
            prim::u64(i)?
        } else {
            (i, 0)
        };
        let (i, job_id) = prim::u32(i)?;
        let (i, step_id) = prim::u32(i)?;
        let (i, step_het_comp) = prim::u32(i)?;
        let s = Self {
            sluid,
            job_id,
            step_id,
            step_het_comp,
        };
        Ok((i, s))
    }
    fn put<B: BufMut>(&self, b: &mut B, v: ProtocolVersion) {
        if v >= ProtocolVersion::V24_11 {
            b.put_u64(self.sluid);
        }
        b.put_u32(self.job_id);
        b.put_u32(self.step_id);
        b.put_u32(self.step_het_comp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::{decode_exact, encode_to_vec};
    const V: ProtocolVersion = ProtocolVersion::V24_11;

    #[test]
    fn ipv4_is_byte_reversed() {
        let a = SlurmAddr::V4(Ipv4Addr::new(10, 0, 0, 1), 6818);
        let b = encode_to_vec(&a, V);
        assert_eq!(b, [0, 2, 1, 0, 0, 10, 0xa2, 0x1a]);
        assert_eq!(decode_exact::<SlurmAddr>(&b, V), Ok(a));
    }

    #[test]
    fn bitstr_hex_matches_upstream() {
        let mut b = BitStr::new(10);
        b.set(0, true);
        b.set(9, true);
        assert_eq!(b.to_hex(), "0x201");
        assert_eq!(BitStr::from_hex(10, "0x201"), Ok(b.clone()));
        assert!(
            BitStr::from_hex(10, "0x601").is_err(),
            "bit 10 is beyond size"
        );
        assert!(BitStr::from_hex(10, "0x0201").is_err());
        assert_eq!(BitStr::new(0).to_hex(), "0x0");
        let enc = encode_to_vec(&Some(b.clone()), V);
        assert_eq!(&enc[..4], &[0, 0, 0, 10]);
        assert_eq!(decode_exact::<Option<BitStr>>(&enc, V), Ok(Some(b)));
        assert_eq!(encode_to_vec(&None::<BitStr>, V), [0xff, 0xff, 0xff, 0xfe]);
    }

    #[test]
    fn step_id_grew_sluid_in_24_11() {
        let s = StepId::job(7);
        assert_eq!(encode_to_vec(&s, ProtocolVersion::V24_05).len(), 12);
        assert_eq!(encode_to_vec(&s, ProtocolVersion::V24_11).len(), 20);
    }

    #[test]
    fn double_is_scaled() {
        let d = Double::from_value(1.5);
        assert_eq!(f64::from_bits(d.scaled_bits), 1_500_000.0);
        assert_eq!(d.value(), 1.5);
    }
}
