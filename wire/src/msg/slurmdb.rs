//! Accounting records (`slurmdb_*_rec_t`) that also travel in controller RPCs.

use crate::wire;

wire! {
    /// `slurmdb_tres_rec_t` as packed by `slurmdb_pack_tres_rec`; the same
    /// in every release 22.05..26.05.
    pub struct SlurmdbTresRec {
        pub alloc_secs: u64,
        pub count: u64,
        pub id: u32,
        pub name: Option<String>,
        pub r#type: Option<String>,
    }
}
