//! A message-number catalogue per protocol release: one enum of every type
//! known in any release, and per release a table of (number, type) sorted by
//! number. The RPC namespace (`MsgType`) and the DBD namespace (`DbdMsgType`)
//! are both declared with it.

use crate::ProtocolVersion;

/// Declares the enum, `ALL`, `name()` (upstream's enumerator name) and
/// `Display`; the generated table files invoke it.
macro_rules! catalogue_enum {
    ($(#[$m:meta])* $T:ident { $($v:ident => $name:literal,)* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        pub enum $T { $($v,)* }

        impl $T {
            pub const ALL: &'static [$T] = &[$($T::$v,)*];

            /// Upstream's enumerator name.
            pub fn name(self) -> &'static str {
                match self { $($T::$v => $name,)* }
            }
        }

        impl std::fmt::Display for $T {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}
pub(crate) use catalogue_enum;

/// One table per release, in `ProtocolVersion::ALL` order.
pub(crate) type Tables<T> = [&'static [(u16, T)]; ProtocolVersion::ALL.len()];

/// The table of release `v`.
pub(crate) fn table<T>(tables: &Tables<T>, v: ProtocolVersion) -> &'static [(u16, T)] {
    let i = ProtocolVersion::ALL
        .iter()
        .position(|&x| x == v)
        .unwrap_or(ProtocolVersion::ALL.len() - 1);
    tables.get(i).copied().unwrap_or(&[])
}

/// The type a number denotes in release `v`, if any.
pub(crate) fn from_wire<T: Copy>(tables: &Tables<T>, v: ProtocolVersion, number: u16) -> Option<T> {
    let t = table(tables, v);
    t.binary_search_by_key(&number, |&(n, _)| n)
        .ok()
        .and_then(|i| t.get(i))
        .map(|&(_, m)| m)
}

/// The number of `m` in release `v`, if it exists there.
pub(crate) fn to_wire<T: Copy + PartialEq>(
    tables: &Tables<T>,
    m: T,
    v: ProtocolVersion,
) -> Option<u16> {
    table(tables, v)
        .iter()
        .find(|&&(_, x)| x == m)
        .map(|&(n, _)| n)
}

/// Every table is sorted by number (binary search) and maps each number to one type and back.
#[cfg(test)]
pub(crate) fn check_tables<T: Copy + PartialEq + std::fmt::Debug>(tables: &Tables<T>) {
    for v in ProtocolVersion::ALL {
        let t = table(tables, v);
        assert!(!t.is_empty(), "{v}");
        assert!(t.windows(2).all(|w| w[0].0 < w[1].0), "{v}");
        for &(n, m) in t {
            assert_eq!(to_wire(tables, m, v), Some(n), "{m:?} in {v}");
            assert_eq!(from_wire(tables, v, n), Some(m), "{n} in {v}");
        }
    }
}
