//! `acct_gather_energy_t` as packed by `acct_gather_energy_pack`.
//!
//! Shared by node registration, node info and (in other families) job
//! accounting records.

use crate::wire;

wire! {
    /// `acct_gather_energy_t`. A NULL energy pointer is packed as all zeros,
    /// which is what `Default` encodes.
    pub struct AcctGatherEnergy {
        pub base_consumed_energy: u64,
        pub ave_watts: u32,
        pub consumed_energy: u64,
        pub current_watts: u32,
        pub previous_consumed_energy: u64,
        pub poll_time: i64,
        /// 24.11 appended it; the older block is 40 bytes, not 48.
        [V24_11..]
        pub slurmd_start_time: i64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::{decode_exact, encode_to_vec};
    use crate::ProtocolVersion;

    #[test]
    fn energy_block_grew_in_24_11() {
        let e = AcctGatherEnergy {
            base_consumed_energy: 1,
            ave_watts: 2,
            consumed_energy: 3,
            current_watts: 4,
            previous_consumed_energy: 5,
            poll_time: 6,
            slurmd_start_time: 7,
        };
        for v in ProtocolVersion::ALL {
            let b = encode_to_vec(&e, v);
            let want = if v >= ProtocolVersion::V24_11 { 48 } else { 40 };
            assert_eq!(b.len(), want, "{v:?}");
            let back: AcctGatherEnergy = decode_exact(&b, v).unwrap();
            assert_eq!(encode_to_vec(&back, v), b);
        }
    }
}
