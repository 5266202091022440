//! Partitions: REQUEST_PARTITION_INFO / RESPONSE_PARTITION_INFO.

use crate::codec::prim;
use crate::pack::encode_to_vec;
use crate::types::BitStr;
use crate::wire;

wire! {
    /// `part_info_request_msg_t`: REQUEST_PARTITION_INFO.
    pub struct PartInfoRequestMsg {
        pub last_update: i64,
        pub show_flags: u16,
    }
}

wire! {
    /// `partition_info_t.flags` (`PART_FLAG_*`): a u16 on the wire before
    /// 24.05, a u32 since. Bits above 16 cannot be sent to older clients and are
    /// dropped for them.
    #[derive(Copy, Eq)]
    pub struct PartFlags(#[wire(with = narrow16)] pub u32);
}

/// A u32 that older releases send as a u16 (the high bits dropped).
mod narrow16 {
    use crate::codec::error::PResult;
    use crate::codec::{prim, BufMut};
    use crate::ProtocolVersion;

    // irregular: the slot's width is the release's, not the field's.
    pub fn parse<'a>(i: &'a [u8], v: ProtocolVersion, f: &mut u32) -> PResult<'a, ()> {
        let (i, x) = if v >= ProtocolVersion::V24_05 {
            prim::u32(i)?
        } else {
            let (i, x) = prim::u16(i)?;
            (i, u32::from(x))
        };
        *f = x;
        Ok((i, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, v: ProtocolVersion, f: &u32) {
        if v >= ProtocolVersion::V24_05 {
            b.put_u32(*f)
        } else {
            b.put_u16(*f as u16)
        }
    }
}

wire! {
    /// `job_defaults_t` (`job_defaults_pack`): a partition's DefMemPerCPU and
    /// friends.
    pub struct JobDefaults {
        pub r#type: u16,
        pub value: u64,
    }
}

wire! {
    /// `partition_info_t`, one record of RESPONSE_PARTITION_INFO
    /// (`pack_part` in slurmctld). Upstream clients turn a NULL `name` into "".
    pub struct PartitionInfo {
        pub name: Option<String>,
        pub cpu_bind: u32,
        pub grace_time: u32,
        pub max_time: u32,
        pub default_time: u32,
        pub max_nodes: u32,
        pub min_nodes: u32,
        pub total_nodes: u32,
        pub total_cpus: u32,
        pub def_mem_per_cpu: u64,
        pub max_cpus_per_node: u32,
        [V23_02..]
        pub max_cpus_per_socket: u32,
        pub max_mem_per_cpu: u64,
        pub flags: PartFlags,
        pub max_share: u16,
        pub over_time_limit: u16,
        pub preempt_mode: u16,
        pub priority_job_factor: u16,
        pub priority_tier: u16,
        pub state_up: u16,
        pub cr_type: u16,
        pub resume_timeout: u16,
        pub suspend_timeout: u16,
        pub suspend_time: u32,
        pub allow_accounts: Option<String>,
        pub allow_groups: Option<String>,
        pub allow_alloc_nodes: Option<String>,
        pub allow_qos: Option<String>,
        pub qos_char: Option<String>,
        pub alternate: Option<String>,
        pub deny_accounts: Option<String>,
        pub deny_qos: Option<String>,
        pub nodes: Option<String>,
        pub nodesets: Option<String>,
        /// Node table indexes of the partition's nodes; clients turn it
        /// into index ranges (`unpack_bit_str_hex_as_inx`).
        pub node_inx: Option<BitStr>,
        pub billing_weights_str: Option<String>,
        [V25_05..]
        pub topology_name: Option<String>,
        pub tres_fmt_str: Option<String>,
        pub job_defaults_list: Option<Vec<JobDefaults>>,
    }
}

wire! {
    /// `partition_info_msg_t`: RESPONSE_PARTITION_INFO.
    pub struct PartitionInfoMsg {
        // The least bytes of a record: an empty one in the release.
        #[wire(min = |v| encode_to_vec(&PartitionInfo::default(), v).len())]
        let record_count: u32 = (|s| prim::count32(s.partition_array.len())),
        pub last_update: i64,
        #[wire(len = record_count)] pub partition_array: Vec<PartitionInfo>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::test_util::{round_trip_all, s};
    use crate::pack::{decode_exact, encode_to_vec, NO_VAL};
    use crate::ProtocolVersion;

    fn part() -> PartitionInfo {
        let mut inx = BitStr::new(4);
        inx.set(0, true);
        inx.set(1, true);
        PartitionInfo {
            name: s("debug"),
            max_time: crate::pack::INFINITE,
            max_nodes: crate::pack::INFINITE,
            min_nodes: 1,
            total_nodes: 2,
            total_cpus: 8,
            max_cpus_per_node: crate::pack::INFINITE,
            max_cpus_per_socket: crate::pack::INFINITE,
            flags: PartFlags(0x1),
            max_share: 1,
            state_up: 3,
            suspend_time: NO_VAL,
            allow_groups: None,
            allow_alloc_nodes: None,
            allow_qos: s("ALL"),
            nodes: s("n[1-2]"),
            node_inx: Some(inx),
            topology_name: s("default"),
            tres_fmt_str: s("cpu=8"),
            job_defaults_list: Some(vec![JobDefaults {
                r#type: 1,
                value: 1024,
            }]),
            ..Default::default()
        }
    }

    #[test]
    fn partition_info_round_trips() {
        let m = PartitionInfoMsg {
            last_update: 1_700_000_000,
            partition_array: vec![part(), PartitionInfo::default()],
        };
        round_trip_all(&m);
        round_trip_all(&PartitionInfoMsg::default());
        round_trip_all(&PartInfoRequestMsg {
            last_update: 5,
            show_flags: 1,
        });
    }

    #[test]
    fn partition_fields_gated_by_release() {
        let p = part();
        let len = |v| encode_to_vec(&p, v).len();
        use ProtocolVersion as P;
        assert_eq!(len(P::V23_02) - len(P::V22_05), 4, "max_cpus_per_socket");
        assert_eq!(len(P::V23_11), len(P::V23_02));
        assert_eq!(len(P::V24_05) - len(P::V23_11), 2, "flags u16 -> u32");
        assert_eq!(len(P::V25_05) - len(P::V24_11), 4 + 8, "topology_name");
        assert_eq!(len(P::V26_05), len(P::V25_05));
    }

    #[test]
    fn wide_flags_are_dropped_for_old_clients() {
        let p = PartitionInfo {
            flags: PartFlags(0x0001_0002),
            ..part()
        };
        let v = ProtocolVersion::V23_11;
        let back: PartitionInfo = decode_exact(&encode_to_vec(&p, v), v).unwrap();
        assert_eq!(back.flags, PartFlags(2));
        let v = ProtocolVersion::V24_05;
        let back: PartitionInfo = decode_exact(&encode_to_vec(&p, v), v).unwrap();
        assert_eq!(back.flags, PartFlags(0x0001_0002));
    }

    #[test]
    fn job_defaults_list_null_and_present() {
        let v = ProtocolVersion::V26_05;
        let with = encode_to_vec(&part(), v);
        // NO_VAL count for a NULL list; count + (u16, u64) per element.
        let without = encode_to_vec(
            &PartitionInfo {
                job_defaults_list: None,
                ..part()
            },
            v,
        );
        assert_eq!(&without[without.len() - 4..], &[0xff, 0xff, 0xff, 0xfe]);
        assert_eq!(with.len(), without.len() + 10);
        assert_eq!(
            &with[with.len() - 14..],
            &[0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 4, 0]
        );
        let back: PartitionInfo = decode_exact(&with, v).unwrap();
        assert_eq!(back, part());
    }

    #[test]
    fn hostile_partition_count_is_refused() {
        let v = ProtocolVersion::V24_11;
        let mut b = vec![0x7f, 0xff, 0xff, 0xff];
        b.extend_from_slice(&[0; 8]);
        assert!(decode_exact::<PartitionInfoMsg>(&b, v).is_err());
    }

    #[test]
    fn arbitrary_values_round_trip() {
        use arbitrary::{Arbitrary, Unstructured};
        let mut seed = 0x0fed_cba9_8765_4321u64;
        for _ in 0..200 {
            let bytes: Vec<u8> = (0..4096)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    seed as u8
                })
                .collect();
            let mut u = Unstructured::new(&bytes);
            let m = PartitionInfoMsg::arbitrary(&mut u).unwrap_or_default();
            round_trip_all(&m);
            let q = PartInfoRequestMsg::arbitrary(&mut u).unwrap_or_default();
            round_trip_all(&q);
        }
    }
}
