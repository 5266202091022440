//! The DBD message-type catalogue (`slurmdbd_msg_type_t`), per protocol release.
//!
//! A namespace of its own, separate from [`crate::MsgType`]: it is what the
//! `u16` after the length prefix means on a slurmdbd persistent connection.
//! Like the RPC numbers, these moved between releases (26.05 put
//! DBD_GOT_CONFIG_KEYPAIRS at 1467, where DBD_GOT_CONFIG used to be), so a
//! number only means something together with a version.

use crate::catalogue::{self, Tables};
use crate::ProtocolVersion;

#[path = "msg_type_table.rs"]
mod table;
pub use table::DbdMsgType;

static TABLES: Tables<DbdMsgType> = [
    table::V22_05,
    table::V23_02,
    table::V23_11,
    table::V24_05,
    table::V24_11,
    table::V25_05,
    table::V25_11,
    table::V26_05,
];

impl DbdMsgType {
    /// The type a number denotes in release `v`, if any.
    pub fn from_wire(v: ProtocolVersion, number: u16) -> Option<Self> {
        catalogue::from_wire(&TABLES, v, number)
    }

    /// The number of this type in release `v`, if it exists there.
    pub fn to_wire(self, v: ProtocolVersion) -> Option<u16> {
        catalogue::to_wire(&TABLES, self, v)
    }

    /// Upstream's name for a number in release `v` (for logs), if any.
    pub fn name_of(v: ProtocolVersion, number: u16) -> Option<&'static str> {
        Self::from_wire(v, number).map(Self::name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ProtocolVersion as V;

    #[test]
    fn tables_are_sorted_and_one_to_one() {
        catalogue::check_tables(&TABLES);
    }

    #[test]
    fn fixed_points_of_the_namespace() {
        for v in V::ALL {
            assert_eq!(DbdMsgType::Fini.to_wire(v), Some(1401), "{v}");
            assert_eq!(DbdMsgType::PersistRc.to_wire(v), Some(1433), "{v}");
            assert_eq!(DbdMsgType::PersistInit.to_wire(v), Some(6500), "{v}");
            assert_eq!(DbdMsgType::from_wire(v, 1400), None, "marker, {v}");
            assert_eq!(DbdMsgType::from_wire(v, 2000), None, "marker, {v}");
            // The RPC namespace agrees on the two numbers they share.
            assert_eq!(crate::MsgType::PersistRc.to_wire(v), Some(1433));
            assert_eq!(crate::MsgType::RequestPersistInit.to_wire(v), Some(6500));
        }
        assert_eq!(DbdMsgType::Fini.name(), "DBD_FINI");
        assert_eq!(DbdMsgType::PersistRc.name(), "SLURM_PERSIST_RC");
    }

    #[test]
    fn numbers_depend_on_the_release() {
        assert_eq!(
            DbdMsgType::from_wire(V::V25_11, 1467),
            Some(DbdMsgType::GotConfig)
        );
        assert_eq!(
            DbdMsgType::from_wire(V::V26_05, 1467),
            Some(DbdMsgType::GotConfigKeypairs)
        );
        assert_eq!(DbdMsgType::GotConfig.to_wire(V::V26_05), Some(1508));
        assert_eq!(DbdMsgType::GotConfigKeypairs.to_wire(V::V25_11), None);
        assert_eq!(DbdMsgType::PersistInitTls.to_wire(V::V23_11), None);
        assert_eq!(DbdMsgType::PersistInitTls.to_wire(V::V24_05), Some(6501));
        assert_eq!(DbdMsgType::from_wire(V::V22_05, 1499), None);
        assert_eq!(
            DbdMsgType::from_wire(V::V23_02, 1499),
            Some(DbdMsgType::GotJobEnv)
        );
        assert_eq!(DbdMsgType::JobStart.to_wire(V::V24_11), Some(1425));
        assert_eq!(DbdMsgType::from_wire(V::V24_11, 1443), None, "defunct");
    }
}
