//! The message-type catalogue, per protocol release.
//!
//! Numbers were reused between releases (see PROTOCOL-MAP §4.1), so a number
//! only means something together with a version.

use crate::ProtocolVersion;

macro_rules! msg_type_enum {
    ($($v:ident => $name:literal,)*) => {
        /// Every RPC message type known in any supported release.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        pub enum MsgType { $($v,)* }

        impl MsgType {
            pub const ALL: &'static [MsgType] = &[$(MsgType::$v,)*];

            /// Upstream's name, as `rpc_num2string` prints it.
            pub fn name(self) -> &'static str {
                match self { $(MsgType::$v => $name,)* }
            }
        }
    };
}

#[path = "msg_type_table.rs"]
mod table;
pub use table::*;

fn table(v: ProtocolVersion) -> &'static [(u16, MsgType)] {
    match v {
        ProtocolVersion::V22_05 => table::V22_05,
        ProtocolVersion::V23_02 => table::V23_02,
        ProtocolVersion::V23_11 => table::V23_11,
        ProtocolVersion::V24_05 => table::V24_05,
        ProtocolVersion::V24_11 => table::V24_11,
        ProtocolVersion::V25_05 => table::V25_05,
        ProtocolVersion::V25_11 => table::V25_11,
        _ => table::V26_05,
    }
}

impl MsgType {
    /// The type a number denotes in release `v`, if any.
    pub fn from_wire(v: ProtocolVersion, number: u16) -> Option<Self> {
        let t = table(v);
        t.binary_search_by_key(&number, |&(n, _)| n)
            .ok()
            .and_then(|i| t.get(i))
            .map(|&(_, m)| m)
    }

    /// The number of this type in release `v`, if it exists there.
    pub fn to_wire(self, v: ProtocolVersion) -> Option<u16> {
        table(v).iter().find(|&&(_, m)| m == self).map(|&(n, _)| n)
    }

    /// The number in the newest release that has it (for display).
    pub fn number(self) -> u16 {
        ProtocolVersion::ALL
            .iter()
            .rev()
            .find_map(|&v| self.to_wire(v))
            .unwrap_or(0)
    }
}

impl std::fmt::Display for MsgType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ProtocolVersion as V;

    #[test]
    fn numbers_depend_on_the_release() {
        assert_eq!(
            MsgType::from_wire(V::V24_11, 1008),
            Some(MsgType::RequestPing)
        );
        assert_eq!(
            MsgType::from_wire(V::V22_05, 2031),
            Some(MsgType::RequestFrontEndInfo)
        );
        assert_eq!(MsgType::from_wire(V::V26_05, 2031), None);
        assert_eq!(
            MsgType::from_wire(V::V26_05, 2041),
            Some(MsgType::RequestHostlistExpansion)
        );
        assert_eq!(MsgType::from_wire(V::V22_05, 2041), None);
        assert_eq!(MsgType::from_wire(V::V22_05, 5041), None);
        assert_eq!(
            MsgType::from_wire(V::V24_11, 5041),
            Some(MsgType::RequestKillJobs)
        );
        assert_eq!(MsgType::ResponseSlurmRc.to_wire(V::V22_05), Some(8001));
    }

    #[test]
    fn tables_are_sorted_for_binary_search() {
        for v in V::ALL {
            assert!(table(v).windows(2).all(|w| w[0].0 < w[1].0), "{v}");
        }
    }
}
