//! Protocol versions: every release from 22.05 to 26.05.

use std::fmt;

/// A Slurm RPC protocol version as it appears in the message header.
///
/// Only the releases this project speaks can be constructed; anything else is
/// rejected at the header, as upstream rejects versions outside its window.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProtocolVersion(u16);

impl ProtocolVersion {
    pub const V22_05: Self = Self(0x2600);
    pub const V23_02: Self = Self(0x2700);
    pub const V23_11: Self = Self(0x2800);
    pub const V24_05: Self = Self(0x2900);
    pub const V24_11: Self = Self(0x2A00);
    pub const V25_05: Self = Self(0x2B00);
    pub const V25_11: Self = Self(0x2C00);
    pub const V26_05: Self = Self(0x2D00);

    pub const ALL: [Self; 8] = [
        Self::V22_05,
        Self::V23_02,
        Self::V23_11,
        Self::V24_05,
        Self::V24_11,
        Self::V25_05,
        Self::V25_11,
        Self::V26_05,
    ];
    pub const OLDEST: Self = Self::V22_05;
    pub const NEWEST: Self = Self::V26_05;

    /// Accepts exactly the supported releases.
    pub fn from_wire(raw: u16) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.0 == raw)
    }

    pub fn to_wire(self) -> u16 {
        self.0
    }

    /// "24.11" style release name.
    pub fn release(self) -> &'static str {
        match self.0 {
            0x2600 => "22.05",
            0x2700 => "23.02",
            0x2800 => "23.11",
            0x2900 => "24.05",
            0x2A00 => "24.11",
            0x2B00 => "25.05",
            0x2C00 => "25.11",
            _ => "26.05",
        }
    }

    /// Parses "24.11" (as printed by `release`).
    pub fn from_release(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.release() == s)
    }
}

impl fmt::Debug for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.release())
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.release())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_is_exact() {
        assert_eq!(ProtocolVersion::from_wire(0x2500), None);
        assert_eq!(ProtocolVersion::from_wire(0x2E00), None);
        assert_eq!(ProtocolVersion::from_wire(0x2A01), None);
        for v in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::from_wire(v.to_wire()), Some(v));
            assert_eq!(ProtocolVersion::from_release(v.release()), Some(v));
        }
        assert!(ProtocolVersion::V22_05 < ProtocolVersion::V26_05);
    }
}
