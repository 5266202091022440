//! Nodes: slurmd registration, node info queries and `scontrol update node`.

use super::energy::AcctGatherEnergy;
use crate::error::{DecodeError, DecodeErrorKind, Result};
use crate::pack::{encode_to_vec, Reader, Wire, Writer};
use crate::types::{BitStr, Double, StepId};
use crate::{wire_struct, ProtocolVersion};

/// Upstream's hard limit on the node table (`MAX_SLURM_NODES`).
pub const MAX_SLURM_NODES: u32 = 65536;

/// Decodes one field, naming it in the error path.
fn field<T: Wire>(r: &mut Reader<'_>, v: ProtocolVersion, name: &'static str) -> Result<T> {
    T::decode(r, v).map_err(|e| e.within(name))
}

/// Reads `self.$f` for each listed field (`@ V23_11..` gates the group).
macro_rules! rd {
    ($r:ident, $v:ident, $s:ident; $($f:ident),*) => {
        $( $s.$f = field($r, $v, stringify!($f))?; )*
    };
}
macro_rules! wr {
    ($w:ident, $v:ident, $s:ident; $($f:ident),*) => {
        $( $s.$f.encode($w, $v); )*
    };
}

/// `slurm_node_registration_status_msg_t`: MESSAGE_NODE_REGISTRATION_STATUS,
/// sent by slurmd at start-up and in reply to REQUEST_NODE_REGISTRATION_STATUS.
#[derive(Debug, Clone, PartialEq, Default, arbitrary::Arbitrary)]
pub struct SlurmNodeRegistrationStatusMsg {
    pub timestamp: i64,
    pub slurmd_start_time: i64,
    pub status: u32,
    /// 23.11+.
    pub extra: Option<String>,
    pub features_active: Option<String>,
    pub features_avail: Option<String>,
    pub hostname: Option<String>,
    /// 23.11+.
    pub instance_id: Option<String>,
    /// 23.11+.
    pub instance_type: Option<String>,
    pub node_name: Option<String>,
    pub arch: Option<String>,
    pub cpu_spec_list: Option<String>,
    /// 25.05+.
    pub mem_spec_limit: u64,
    pub os: Option<String>,
    /// 25.11+.
    pub parameters: Option<String>,
    pub cpus: u16,
    pub boards: u16,
    pub sockets: u16,
    pub cores: u16,
    pub threads: u16,
    pub real_memory: u64,
    pub tmp_disk: u32,
    pub up_time: u32,
    /// Hash of slurm.conf, compared by slurmctld.
    pub hash_val: u32,
    pub cpu_load: u32,
    pub free_mem: u64,
    /// Steps running on the node; the wire count is `job_count`.
    pub step_id: Vec<StepId>,
    pub flags: u16,
    /// The packed `gres_node_config_pack` buffer (starts with u16 protocol
    /// version, u16 record count), kept opaque. Empty means "no buffer";
    /// a non-empty buffer is sent as its size followed by a packmem of it, so
    /// the length appears twice.
    pub gres_info: Vec<u8>,
    pub energy: AcctGatherEnergy,
    pub version: Option<String>,
    pub dynamic_type: u8,
    pub dynamic_conf: Option<String>,
    pub dynamic_feature: Option<String>,
}

impl Wire for SlurmNodeRegistrationStatusMsg {
    fn decode(r: &mut Reader<'_>, v: ProtocolVersion) -> Result<Self> {
        use ProtocolVersion as P;
        let mut m = Self::default();
        rd!(r, v, m; timestamp, slurmd_start_time, status);
        if v >= P::V23_11 {
            rd!(r, v, m; extra);
        }
        rd!(r, v, m; features_active, features_avail, hostname);
        if v >= P::V23_11 {
            rd!(r, v, m; instance_id, instance_type);
        }
        rd!(r, v, m; node_name, arch, cpu_spec_list);
        if v >= P::V25_05 {
            rd!(r, v, m; mem_spec_limit);
        }
        rd!(r, v, m; os);
        if v >= P::V25_11 {
            rd!(r, v, m; parameters);
        }
        rd!(r, v, m; cpus, boards, sockets, cores, threads, real_memory, tmp_disk,
            up_time, hash_val, cpu_load, free_mem);

        let min = encode_to_vec(&StepId::default(), v).len();
        let n = r.count(min).map_err(|e| e.within("job_count"))?;
        m.step_id = (0..n)
            .map(|_| StepId::decode(r, v))
            .collect::<Result<_>>()
            .map_err(|e| e.within("step_id"))?;

        rd!(r, v, m; flags);
        m.gres_info = decode_gres_info(r).map_err(|e| e.within("gres_info"))?;
        rd!(r, v, m; energy, version, dynamic_type, dynamic_conf, dynamic_feature);
        Ok(m)
    }

    fn encode(&self, w: &mut Writer, v: ProtocolVersion) {
        use ProtocolVersion as P;
        let m = self;
        wr!(w, v, m; timestamp, slurmd_start_time, status);
        if v >= P::V23_11 {
            wr!(w, v, m; extra);
        }
        wr!(w, v, m; features_active, features_avail, hostname);
        if v >= P::V23_11 {
            wr!(w, v, m; instance_id, instance_type);
        }
        wr!(w, v, m; node_name, arch, cpu_spec_list);
        if v >= P::V25_05 {
            wr!(w, v, m; mem_spec_limit);
        }
        wr!(w, v, m; os);
        if v >= P::V25_11 {
            wr!(w, v, m; parameters);
        }
        wr!(w, v, m; cpus, boards, sockets, cores, threads, real_memory, tmp_disk,
            up_time, hash_val, cpu_load, free_mem);
        w.count(m.step_id.len());
        for s in &m.step_id {
            s.encode(w, v);
        }
        wr!(w, v, m; flags);
        w.count(m.gres_info.len());
        if !m.gres_info.is_empty() {
            w.mem(&m.gres_info);
        }
        wr!(w, v, m; energy, version, dynamic_type, dynamic_conf, dynamic_feature);
    }
}

/// `u32 size`, then, only when non-zero, a packmem of exactly that size.
fn decode_gres_info(r: &mut Reader<'_>) -> Result<Vec<u8>> {
    let size = r.u32()?;
    if size == 0 {
        return Ok(Vec::new());
    }
    let at = r.position();
    let blob = r.mem()?;
    if blob.len() != size as usize {
        return Err(DecodeError::new(
            DecodeErrorKind::BadValue {
                what: "gres_info packmem length differs from its size",
                value: blob.len() as u64,
            },
            at,
        ));
    }
    Ok(blob.to_vec())
}

wire_struct! {
    /// `slurmdb_tres_rec_t` as packed by `slurmdb_pack_tres_rec`.
    pub struct SlurmdbTresRec {
        pub alloc_secs: u64,
        pub count: u64,
        pub id: u32,
        pub name: Option<String>,
        pub r#type: Option<String>,
    }
}

wire_struct! {
    /// `slurm_node_reg_resp_msg_t`: RESPONSE_NODE_REGISTRATION, slurmctld's
    /// TRES table for slurmd.
    pub struct NodeRegistrationRespMsg {
        pub tres_list: Option<Vec<SlurmdbTresRec>>,
        pub node_name: Option<String>,
    }
}

wire_struct! {
    /// `node_info_request_msg_t`: REQUEST_NODE_INFO.
    pub struct NodeInfoRequestMsg {
        pub last_update: i64,
        pub show_flags: u16,
    }
}

wire_struct! {
    /// `node_info_single_msg_t`: REQUEST_NODE_INFO_SINGLE (2040).
    pub struct NodeInfoSingleMsg {
        pub node_name: Option<String>,
        pub show_flags: u16,
    }
}

wire_struct! {
    /// `ext_sensors_data_t`, sent in node records before 24.05.
    pub struct ExtSensorsData {
        pub consumed_energy: u64,
        pub temperature: u32,
        pub energy_update_time: i64,
        pub current_watts: u32,
    }
}

wire_struct! {
    /// `power_mgmt_data_t`, sent in node records before 24.05; a NULL
    /// pointer is `cap_watts = NO_VAL`.
    pub struct PowerMgmtData {
        pub cap_watts: u32,
    }
}

wire_struct! {
    /// `node_info_t`, one record of RESPONSE_NODE_INFO (`_pack_node` in
    /// slurmctld, `_unpack_node_info_members` in the clients).
    ///
    /// Before 25.05 the allocation fields travel in the select plugin's
    /// nodeinfo blob (`u32 plugin_id`, then the cons_tres/linear layout, which
    /// also carries `tres_alloc_weighted`); from 25.05 they are plain fields.
    pub struct NodeInfo {
        pub name: Option<String>,
        pub node_hostname: Option<String>,
        pub node_addr: Option<String>,
        pub bcast_address: Option<String>,
        [V25_05..]
        pub cert_flags: u16,
        pub port: u16,
        pub next_state: u32,
        pub node_state: u32,
        pub version: Option<String>,
        pub cpus: u16,
        pub boards: u16,
        pub sockets: u16,
        pub cores: u16,
        pub threads: u16,
        pub real_memory: u64,
        pub tmp_disk: u32,
        [V24_05..]
        pub gpu_spec: Option<String>,
        pub mcs_label: Option<String>,
        pub owner: u32,
        pub core_spec_cnt: u16,
        pub cpu_bind: u32,
        pub mem_spec_limit: u64,
        pub cpu_spec_list: Option<String>,
        pub cpus_efctv: u16,
        pub cpu_load: u32,
        pub free_mem: u64,
        pub weight: u32,
        [V24_05..]
        pub res_cores_per_gpu: u16,
        pub reason_uid: u32,
        [V26_05..]
        pub suspend_time: u32,
        pub boot_time: i64,
        pub last_busy: i64,
        pub reason_time: i64,
        [V23_02..]
        pub resume_after: i64,
        pub slurmd_start_time: i64,
        [V25_05..]
        pub cert_last_renewal: i64,
        /// Select plugin id of the nodeinfo blob (109 = cons_tres).
        [..V25_05]
        pub select_plugin_id: u32,
        pub alloc_cpus: u16,
        pub alloc_memory: u64,
        pub alloc_tres_fmt_str: Option<String>,
        [..V25_05]
        pub tres_alloc_weighted: Double,
        pub arch: Option<String>,
        pub features: Option<String>,
        pub features_act: Option<String>,
        pub gres: Option<String>,
        pub gres_drain: Option<String>,
        pub gres_used: Option<String>,
        pub os: Option<String>,
        pub comment: Option<String>,
        pub extra: Option<String>,
        [V23_11..]
        pub instance_id: Option<String>,
        [V23_11..]
        pub instance_type: Option<String>,
        [V25_11..]
        pub parameters: Option<String>,
        pub reason: Option<String>,
        pub energy: AcctGatherEnergy,
        [..V24_05]
        pub ext_sensors: ExtSensorsData,
        [..V24_05]
        pub power: PowerMgmtData,
        pub tres_fmt_str: Option<String>,
        [V23_02..]
        pub resv_name: Option<String>,
        [V25_05..]
        pub topology_str: Option<String>,
    }
}

impl NodeInfo {
    /// `SELECT_PLUGIN_CONS_TRES`, the nodeinfo blob id stock slurmctld sends.
    pub const SELECT_PLUGIN_CONS_TRES: u32 = 109;
}

/// `node_info_msg_t`: RESPONSE_NODE_INFO.
///
/// `node_array` has one slot per node table entry (the wire `record_count`).
/// From 24.11 a slot whose bit is set in `hidden_nodes` is not sent and
/// decodes as `NodeInfo::default()`; before 24.11 every slot is sent (stock
/// slurmctld packs a blank record with a NULL name for a hidden node) and
/// `hidden_nodes` is not on the wire. Stock slurmctld sends a bitmap sized to
/// the node table from the full dump and a NULL one for a single node.
#[derive(Debug, Clone, PartialEq, Default, arbitrary::Arbitrary)]
pub struct NodeInfoMsg {
    pub last_update: i64,
    /// 24.11+.
    pub hidden_nodes: Option<BitStr>,
    pub node_array: Vec<NodeInfo>,
}

impl NodeInfoMsg {
    /// Whether slot `i` is left out of the 24.11+ stream.
    pub fn is_hidden(&self, i: usize) -> bool {
        let Ok(i) = u32::try_from(i) else {
            return false;
        };
        self.hidden_nodes.as_ref().is_some_and(|b| b.get(i))
    }

    /// The records a client shows: not hidden, and named.
    pub fn visible(&self) -> impl Iterator<Item = &NodeInfo> {
        self.node_array
            .iter()
            .enumerate()
            .filter(|(i, n)| !self.is_hidden(*i) && n.name.is_some())
            .map(|(_, n)| n)
    }
}

impl Wire for NodeInfoMsg {
    fn decode(r: &mut Reader<'_>, v: ProtocolVersion) -> Result<Self> {
        let at = r.position();
        let n = r.u32().map_err(|e| e.within("record_count"))?;
        let last_update = field(r, v, "last_update")?;
        let hidden_nodes: Option<BitStr> = if v >= ProtocolVersion::V24_11 {
            field(r, v, "hidden_nodes")?
        } else {
            None
        };
        // Hidden slots take no bytes, so bound them separately from the
        // records that must be present.
        let hidden = hidden_nodes
            .as_ref()
            .map_or(0, |b| b.iter_ones().take_while(|&i| i < n).count() as u32);
        if hidden > MAX_SLURM_NODES {
            return Err(DecodeError::new(
                DecodeErrorKind::BadValue {
                    what: "hidden node count",
                    value: u64::from(hidden),
                },
                at,
            )
            .within("hidden_nodes"));
        }
        let min = encode_to_vec(&NodeInfo::default(), v).len();
        r.check_count(n - hidden, min, at)
            .map_err(|e| e.within("record_count"))?;

        let mut node_array = Vec::with_capacity((n as usize).min(1024));
        for i in 0..n {
            if hidden_nodes.as_ref().is_some_and(|b| b.get(i)) {
                node_array.push(NodeInfo::default());
            } else {
                node_array.push(field(r, v, "node_array")?);
            }
        }
        Ok(Self {
            last_update,
            hidden_nodes,
            node_array,
        })
    }

    fn encode(&self, w: &mut Writer, v: ProtocolVersion) {
        w.count(self.node_array.len());
        w.time(self.last_update);
        let new = v >= ProtocolVersion::V24_11;
        if new {
            self.hidden_nodes.encode(w, v);
        }
        for (i, rec) in self.node_array.iter().enumerate() {
            if !(new && self.is_hidden(i)) {
                rec.encode(w, v);
            }
        }
    }
}

wire_struct! {
    /// `update_node_msg_t`: REQUEST_UPDATE_NODE (`scontrol update node`).
    pub struct UpdateNodeMsg {
        [V24_11..]
        pub cert_token: Option<String>,
        pub comment: Option<String>,
        pub cpu_bind: u32,
        pub extra: Option<String>,
        pub features: Option<String>,
        pub features_act: Option<String>,
        pub gres: Option<String>,
        [V23_11..]
        pub instance_id: Option<String>,
        [V23_11..]
        pub instance_type: Option<String>,
        pub node_addr: Option<String>,
        pub node_hostname: Option<String>,
        pub node_names: Option<String>,
        pub node_state: u32,
        [V26_05..]
        pub power_action_name: Option<String>,
        pub reason: Option<String>,
        /// 22.05 only; 23.02 sends `resume_after` in its place.
        [..V23_02]
        pub reason_uid: u32,
        [V23_02..]
        pub resume_after: u32,
        [V25_05..]
        pub topology_str: Option<String>,
        pub weight: u32,
    }
}
