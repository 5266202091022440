//! The message-type catalogue, per protocol release.
//!
//! Numbers were reused between releases (see PROTOCOL-MAP §4.1), so a number
//! only means something together with a version.

use crate::catalogue::{self, Tables};
use crate::ProtocolVersion;

#[path = "msg_type_table.rs"]
mod table;
pub use table::*;

static TABLES: Tables<MsgType> = [
    table::V22_05,
    table::V23_02,
    table::V23_11,
    table::V24_05,
    table::V24_11,
    table::V25_05,
    table::V25_11,
    table::V26_05,
];

impl MsgType {
    /// The type a number denotes in release `v`, if any.
    pub fn from_wire(v: ProtocolVersion, number: u16) -> Option<Self> {
        catalogue::from_wire(&TABLES, v, number)
    }

    /// The number of this type in release `v`, if it exists there.
    pub fn to_wire(self, v: ProtocolVersion) -> Option<u16> {
        catalogue::to_wire(&TABLES, self, v)
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
    fn tables_are_sorted_and_one_to_one() {
        catalogue::check_tables(&TABLES);
    }
}
