//! REQUEST_UPDATE_PARTITION 3005 (`scontrol update partitionname=...`):
//! `update_part_msg_t`, packed as `_pack_update_partition_msg`; and
//! REQUEST_DELETE_PARTITION 3004 (`scontrol delete partition=...`):
//! `delete_part_msg_t`, its name alone in every release.
//!
//! 22.05: `flags` u16, no `max_cpus_per_socket`. 23.02, 23.11: adds
//! `max_cpus_per_socket`. 24.05 on: `flags` u32. 25.05 on: `topology_name`
//! at the end.

use super::partition::PartFlags;
use crate::wire;

wire! {
    /// `update_part_msg_t`. Fields the client did not set carry NO_VAL,
    /// NO_VAL16, NO_VAL64 or NULL.
    pub struct UpdatePartMsg {
        pub allow_accounts: Option<String>,
        pub allow_alloc_nodes: Option<String>,
        pub allow_groups: Option<String>,
        pub allow_qos: Option<String>,
        pub alternate: Option<String>,
        pub billing_weights_str: Option<String>,
        pub cpu_bind: u32,
        pub def_mem_per_cpu: u64,
        pub default_time: u32,
        pub deny_accounts: Option<String>,
        pub deny_qos: Option<String>,
        pub flags: PartFlags,
        pub job_defaults_str: Option<String>,
        pub grace_time: u32,
        pub max_cpus_per_node: u32,
        [V23_02..] pub max_cpus_per_socket: u32,
        pub max_mem_per_cpu: u64,
        pub max_nodes: u32,
        pub max_share: u16,
        pub max_time: u32,
        pub min_nodes: u32,
        pub name: Option<String>,
        pub nodes: Option<String>,
        pub over_time_limit: u16,
        pub preempt_mode: u16,
        pub priority_job_factor: u16,
        pub priority_tier: u16,
        pub qos_char: Option<String>,
        pub state_up: u16,
        [V25_05..] pub topology_name: Option<String>,
    }
}

/// `state_up` values (`PARTITION_*` in slurm.h).
pub mod state {
    pub const INACTIVE: u16 = 0x00;
    /// PARTITION_SUBMIT
    pub const DOWN: u16 = 0x01;
    /// PARTITION_SCHED
    pub const DRAIN: u16 = 0x02;
    pub const UP: u16 = 0x03;
}

wire! {
    /// `delete_part_msg_t`.
    pub struct DeletePartMsg {
        pub name: Option<String>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::test_util::{round_trip_all, s};
    use crate::pack::encode_to_vec;
    use crate::ProtocolVersion;

    #[test]
    fn layouts_by_release() {
        let m = UpdatePartMsg {
            name: s("debug"),
            state_up: state::DOWN,
            flags: PartFlags(0x10),
            topology_name: s("t"),
            ..Default::default()
        };
        round_trip_all(&m);
        let len = |v| encode_to_vec(&m, v).len();
        // + max_cpus_per_socket
        assert_eq!(
            len(ProtocolVersion::V23_02),
            len(ProtocolVersion::V22_05) + 4
        );
        // flags widen
        assert_eq!(
            len(ProtocolVersion::V24_05),
            len(ProtocolVersion::V23_11) + 2
        );
        // + topology_name ("t\0" with its length)
        assert_eq!(
            len(ProtocolVersion::V25_05),
            len(ProtocolVersion::V24_11) + 4 + 2
        );
        // state_up is the last field before 25.05
        let b = encode_to_vec(&m, ProtocolVersion::V24_11);
        assert_eq!(&b[b.len() - 2..], &[0, 1]);
    }

    #[test]
    fn delete_carries_the_name_alone() {
        let m = DeletePartMsg {
            name: Some("p1".into()),
        };
        round_trip_all(&m);
        for v in ProtocolVersion::ALL {
            assert_eq!(encode_to_vec(&m, v), [0, 0, 0, 3, b'p', b'1', 0]);
        }
    }
}
