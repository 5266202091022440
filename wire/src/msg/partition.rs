//! Partitions: REQUEST_PARTITION_INFO / RESPONSE_PARTITION_INFO.

use crate::error::Result;
use crate::pack::{encode_to_vec, Reader, Wire, Writer};
use crate::types::BitStr;
use crate::{wire_struct, ProtocolVersion};

wire_struct! {
    /// `part_info_request_msg_t`: REQUEST_PARTITION_INFO.
    pub struct PartInfoRequestMsg {
        pub last_update: i64,
        pub show_flags: u16,
    }
}

/// `partition_info_t.flags` (`PART_FLAG_*`): a u16 on the wire before
/// 24.05, a u32 since. Bits above 16 cannot be sent to older clients and are
/// dropped for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, arbitrary::Arbitrary)]
pub struct PartFlags(pub u32);

impl Wire for PartFlags {
    fn decode(r: &mut Reader<'_>, v: ProtocolVersion) -> Result<Self> {
        if v >= ProtocolVersion::V24_05 {
            Ok(Self(r.u32()?))
        } else {
            Ok(Self(u32::from(r.u16()?)))
        }
    }
    fn encode(&self, w: &mut Writer, v: ProtocolVersion) {
        if v >= ProtocolVersion::V24_05 {
            w.u32(self.0)
        } else {
            w.u16(self.0 as u16)
        }
    }
}

wire_struct! {
    /// `job_defaults_t` (`job_defaults_pack`): a partition's DefMemPerCPU and
    /// friends.
    pub struct JobDefaults {
        pub r#type: u16,
        pub value: u64,
    }
}

wire_struct! {
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

/// `partition_info_msg_t`: RESPONSE_PARTITION_INFO.
#[derive(Debug, Clone, PartialEq, Default, arbitrary::Arbitrary)]
pub struct PartitionInfoMsg {
    pub last_update: i64,
    /// The wire `record_count` is its length.
    pub partition_array: Vec<PartitionInfo>,
}

impl Wire for PartitionInfoMsg {
    fn decode(r: &mut Reader<'_>, v: ProtocolVersion) -> Result<Self> {
        let min = encode_to_vec(&PartitionInfo::default(), v).len();
        let n = r.count(min).map_err(|e| e.within("record_count"))?;
        let last_update = r.time().map_err(|e| e.within("last_update"))?;
        let partition_array = (0..n)
            .map(|_| PartitionInfo::decode(r, v))
            .collect::<Result<_>>()
            .map_err(|e| e.within("partition_array"))?;
        Ok(Self {
            last_update,
            partition_array,
        })
    }
    fn encode(&self, w: &mut Writer, v: ProtocolVersion) {
        w.count(self.partition_array.len());
        w.time(self.last_update);
        for p in &self.partition_array {
            p.encode(w, v);
        }
    }
}
