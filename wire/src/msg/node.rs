//! Nodes: slurmd registration, node info queries and `scontrol update node`.

use super::energy::AcctGatherEnergy;
use super::slurmdb::SlurmdbTresRec;
use crate::codec::error::{named, PResult, WireError};
use crate::codec::{prim, BufMut};
use crate::error::DecodeErrorKind;
use crate::pack::{encode_to_vec, Wire};
use crate::types::{BitStr, Double, StepId};
use crate::{wire, ProtocolVersion};

/// Upstream's hard limit on the node table (`MAX_SLURM_NODES`).
pub const MAX_SLURM_NODES: u32 = 65536;

wire! {
    /// `slurm_node_registration_status_msg_t`: MESSAGE_NODE_REGISTRATION_STATUS,
    /// sent by slurmd at start-up and in reply to REQUEST_NODE_REGISTRATION_STATUS.
    pub struct SlurmNodeRegistrationStatusMsg {
        pub timestamp: i64,
        pub slurmd_start_time: i64,
        pub status: u32,
        [V23_11..] pub extra: Option<String>,
        pub features_active: Option<String>,
        pub features_avail: Option<String>,
        pub hostname: Option<String>,
        [V23_11..] pub instance_id: Option<String>,
        [V23_11..] pub instance_type: Option<String>,
        pub node_name: Option<String>,
        pub arch: Option<String>,
        pub cpu_spec_list: Option<String>,
        [V25_05..] pub mem_spec_limit: u64,
        pub os: Option<String>,
        [V25_11..] pub parameters: Option<String>,
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
        #[wire(with = reg_step_ids)] pub step_id: Vec<StepId>,
        pub flags: u16,
        /// The packed `gres_node_config_pack` buffer (starts with u16 protocol
        /// version, u16 record count), kept opaque. Empty means "no buffer";
        /// a non-empty buffer is sent as its size followed by a packmem of it, so
        /// the length appears twice.
        #[wire(with = reg_gres_info)] pub gres_info: Vec<u8>,
        pub energy: AcctGatherEnergy,
        pub version: Option<String>,
        pub dynamic_type: u8,
        pub dynamic_conf: Option<String>,
        pub dynamic_feature: Option<String>,
    }
}

/// The running steps: a `job_count`, then that many step ids (each at least an
/// empty step id's size in the release).
mod reg_step_ids {
    use super::*;
    pub fn parse<'a>(i: &'a [u8], v: ProtocolVersion, f: &mut Vec<StepId>) -> PResult<'a, ()> {
        let min = encode_to_vec(&StepId::default(), v).len();
        let (r, n) = named(prim::count(i, min), "job_count")?;
        let (r, x) = prim::items(r, n, |i| StepId::parse(i, v))?;
        *f = x;
        Ok((r, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, v: ProtocolVersion, f: &[StepId]) {
        prim::put_count(b, f.len());
        for s in f {
            s.put(b, v);
        }
    }
}

/// The GRES buffer: its size, then (when not empty) a packmem of it, whose
/// length must be that size.
mod reg_gres_info {
    use super::*;
    pub fn parse<'a>(i: &'a [u8], _: ProtocolVersion, f: &mut Vec<u8>) -> PResult<'a, ()> {
        let (r, size) = prim::u32(i)?;
        if size == 0 {
            f.clear();
            return Ok((r, ()));
        }
        let (rest, blob) = prim::mem(r)?;
        if blob.len() != size as usize {
            let what = "gres_info packmem length differs from its size";
            let value = blob.len() as u64;
            return WireError::fail(DecodeErrorKind::BadValue { what, value }, r);
        }
        *f = blob.to_vec();
        Ok((rest, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, _: ProtocolVersion, f: &[u8]) {
        prim::put_count(b, f.len());
        if !f.is_empty() {
            prim::put_mem(b, f);
        }
    }
}

wire! {
    /// `slurm_node_reg_resp_msg_t`: RESPONSE_NODE_REGISTRATION, slurmctld's
    /// TRES table for slurmd.
    pub struct NodeRegistrationRespMsg {
        pub tres_list: Option<Vec<SlurmdbTresRec>>,
        pub node_name: Option<String>,
    }
}

wire! {
    /// `node_info_request_msg_t`: REQUEST_NODE_INFO.
    pub struct NodeInfoRequestMsg {
        pub last_update: i64,
        pub show_flags: u16,
    }
}

wire! {
    /// `node_info_single_msg_t`: REQUEST_NODE_INFO_SINGLE (2040).
    /// UNVERIFIED against a capture; layout from the upstream branches.
    pub struct NodeInfoSingleMsg {
        pub node_name: Option<String>,
        pub show_flags: u16,
    }
}

wire! {
    /// `ext_sensors_data_t`, sent in node records before 24.05.
    pub struct ExtSensorsData {
        pub consumed_energy: u64,
        pub temperature: u32,
        pub energy_update_time: i64,
        pub current_watts: u32,
    }
}

wire! {
    /// `power_mgmt_data_t`, sent in node records before 24.05; a NULL
    /// pointer is `cap_watts = NO_VAL`.
    pub struct PowerMgmtData {
        pub cap_watts: u32,
    }
}

wire! {
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
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
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

// irregular: from 24.11 the `hidden_nodes` bitmap removes slots from the stream, so the record count
// covers slots that take no bytes; only the visible ones are bounded by the bytes left.
impl Wire for NodeInfoMsg {
    fn parse<'a>(i: &'a [u8], v: ProtocolVersion) -> PResult<'a, Self> {
        let at = i;
        let (i, n) = named(prim::u32(i), "record_count")?;
        let (i, last_update) = named(prim::time(i), "last_update")?;
        let (i, hidden_nodes) = if v >= ProtocolVersion::V24_11 {
            named(Option::<BitStr>::parse(i, v), "hidden_nodes")?
        } else {
            (i, None)
        };
        let hidden = hidden_nodes
            .as_ref()
            .map_or(0, |b| b.iter_ones().take_while(|&k| k < n).count() as u32);
        if hidden > MAX_SLURM_NODES {
            let what = "hidden node count";
            let value = u64::from(hidden);
            return named(
                WireError::fail(DecodeErrorKind::BadValue { what, value }, at),
                "hidden_nodes",
            );
        }
        let min = encode_to_vec(&NodeInfo::default(), v).len();
        named(
            prim::check_count(at, i, u64::from(n - hidden), min).map(|_| (i, ())),
            "record_count",
        )?;
        let mut node_array = prim::vec_n(n as usize);
        let mut i = i;
        for k in 0..n {
            if hidden_nodes.as_ref().is_some_and(|b| b.get(k)) {
                node_array.push(NodeInfo::default());
            } else {
                let (r, rec) = named(NodeInfo::parse(i, v), "node_array")?;
                node_array.push(rec);
                i = r;
            }
        }
        let m = Self {
            last_update,
            hidden_nodes,
            node_array,
        };
        Ok((i, m))
    }

    fn put<B: BufMut>(&self, b: &mut B, v: ProtocolVersion) {
        prim::put_count(b, self.node_array.len());
        b.put_i64(self.last_update);
        let new = v >= ProtocolVersion::V24_11;
        if new {
            self.hidden_nodes.put(b, v);
        }
        for (k, rec) in self.node_array.iter().enumerate() {
            if !(new && self.is_hidden(k)) {
                rec.put(b, v);
            }
        }
    }
}

wire! {
    /// `update_node_msg_t`: REQUEST_UPDATE_NODE (`scontrol update node`).
    /// UNVERIFIED against a capture (no fixture has one); every gate is from
    /// the upstream branches.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::test_util::{round_trip_all, s};
    use crate::pack::{decode_exact, encode_to_vec};
    use crate::types::{BitStr, StepId};

    fn registration() -> SlurmNodeRegistrationStatusMsg {
        SlurmNodeRegistrationStatusMsg {
            timestamp: 1_700_000_000,
            slurmd_start_time: 1_699_999_000,
            status: 0,
            extra: s("x"),
            features_active: s("a"),
            features_avail: s("a,b"),
            hostname: s("n1"),
            instance_id: s("i-1"),
            instance_type: s("t"),
            node_name: s("n1"),
            arch: s("x86_64"),
            cpu_spec_list: None,
            mem_spec_limit: 512,
            os: s("Linux"),
            parameters: s("p"),
            cpus: 4,
            boards: 1,
            sockets: 1,
            cores: 2,
            threads: 2,
            real_memory: 8000,
            tmp_disk: 100,
            up_time: 42,
            hash_val: 0xdead_beef,
            cpu_load: 7,
            free_mem: 4000,
            step_id: vec![
                StepId::job(5),
                StepId {
                    sluid: 9,
                    job_id: 6,
                    step_id: 0,
                    step_het_comp: crate::pack::NO_VAL,
                },
            ],
            flags: 3,
            gres_info: vec![0x2a, 0x00, 0x00, 0x00],
            energy: AcctGatherEnergy::default(),
            version: s("24.11.0"),
            dynamic_type: 0,
            dynamic_conf: None,
            dynamic_feature: None,
        }
    }

    #[test]
    fn registration_round_trips() {
        round_trip_all(&registration());
        round_trip_all(&SlurmNodeRegistrationStatusMsg::default());
    }

    #[test]
    fn registration_gres_length_appears_twice() {
        let m = registration();
        let v = ProtocolVersion::V26_05;
        let b = encode_to_vec(&m, v);
        let pat = [0, 0, 0, 4, 0, 0, 0, 4, 0x2a, 0, 0, 0];
        assert!(b.windows(pat.len()).any(|w| w == pat));
        let back: SlurmNodeRegistrationStatusMsg = decode_exact(&b, v).unwrap();
        assert_eq!(back, m);

        // Without GRES only the size goes out.
        let none = SlurmNodeRegistrationStatusMsg {
            gres_info: vec![],
            ..m.clone()
        };
        assert_eq!(
            encode_to_vec(&none, v).len() + 4 + 4,
            b.len(),
            "the packmem (length word + 4 bytes) is dropped"
        );

        // A packmem that disagrees with the announced size is rejected.
        let at = b.windows(pat.len()).position(|w| w == pat).unwrap();
        let mut bad = b.clone();
        bad[at + 3] = 5;
        assert!(decode_exact::<SlurmNodeRegistrationStatusMsg>(&bad, v).is_err());
    }

    #[test]
    fn registration_fields_gated_by_release() {
        let m = registration();
        let len = |v| encode_to_vec(&m, v).len();
        use ProtocolVersion as P;
        assert_eq!(len(P::V23_02), len(P::V22_05));
        // extra, instance_id, instance_type: 2 + 4 + 2 bytes plus 3 length words.
        assert_eq!(len(P::V23_11) - len(P::V23_02), 3 * 4 + 2 + 4 + 2);
        assert_eq!(len(P::V24_05), len(P::V23_11));
        // sluid on both steps, energy's slurmd_start_time.
        assert_eq!(len(P::V24_11) - len(P::V24_05), 2 * 8 + 8);
        assert_eq!(len(P::V25_05) - len(P::V24_11), 8);
        assert_eq!(len(P::V25_11) - len(P::V25_05), 4 + 2);
        assert_eq!(len(P::V26_05), len(P::V25_11));
        // Steps decode back in a pre-sluid release.
        let b = encode_to_vec(&m, P::V22_05);
        let back: SlurmNodeRegistrationStatusMsg = decode_exact(&b, P::V22_05).unwrap();
        assert_eq!(back.step_id.len(), 2);
        assert_eq!(back.step_id[1].job_id, 6);
        assert_eq!(back.extra, None);
    }

    #[test]
    fn registration_response_round_trips() {
        let m = NodeRegistrationRespMsg {
            tres_list: Some(vec![
                SlurmdbTresRec {
                    alloc_secs: 0,
                    count: 4,
                    id: 1,
                    name: None,
                    r#type: s("cpu"),
                },
                SlurmdbTresRec {
                    alloc_secs: 0,
                    count: 2,
                    id: 1001,
                    name: s("gpu"),
                    r#type: s("gres"),
                },
            ]),
            node_name: s("n1"),
        };
        round_trip_all(&m);
        round_trip_all(&NodeRegistrationRespMsg::default());
    }

    #[test]
    fn requests_round_trip() {
        round_trip_all(&NodeInfoRequestMsg {
            last_update: 0,
            show_flags: 0x3,
        });
        let single = NodeInfoSingleMsg {
            node_name: s("n1"),
            show_flags: 1,
        };
        round_trip_all(&single);
        assert_eq!(
            encode_to_vec(&single, ProtocolVersion::V22_05),
            [0, 0, 0, 3, b'n', b'1', 0, 0, 1]
        );
    }

    fn node(name: &str) -> NodeInfo {
        NodeInfo {
            name: s(name),
            node_hostname: s(name),
            node_addr: s("10.0.0.1"),
            cert_flags: 1,
            port: 6818,
            node_state: 1,
            version: s("24.11.0"),
            cpus: 4,
            boards: 1,
            sockets: 1,
            cores: 2,
            threads: 2,
            real_memory: 8000,
            gpu_spec: s("g"),
            cpus_efctv: 4,
            weight: 1,
            res_cores_per_gpu: 1,
            suspend_time: 9,
            boot_time: 100,
            resume_after: 5,
            slurmd_start_time: 200,
            cert_last_renewal: 300,
            select_plugin_id: NodeInfo::SELECT_PLUGIN_CONS_TRES,
            alloc_cpus: 2,
            alloc_memory: 1024,
            alloc_tres_fmt_str: s("cpu=2"),
            tres_alloc_weighted: Double::from_value(2.0),
            arch: s("x86_64"),
            os: s("Linux"),
            instance_id: s("i"),
            parameters: s("p"),
            reason: s("r"),
            energy: AcctGatherEnergy {
                slurmd_start_time: 200,
                ..Default::default()
            },
            ext_sensors: ExtSensorsData {
                temperature: 30,
                ..Default::default()
            },
            power: PowerMgmtData {
                cap_watts: crate::pack::NO_VAL,
            },
            tres_fmt_str: s("cpu=4,mem=8000M"),
            resv_name: s("maint"),
            topology_str: s("t"),
            ..Default::default()
        }
    }

    #[test]
    fn node_info_round_trips() {
        let m = NodeInfoMsg {
            last_update: 1_700_000_000,
            hidden_nodes: Some(BitStr::new(2)),
            node_array: vec![node("n1"), node("n2")],
        };
        round_trip_all(&m);
        round_trip_all(&NodeInfoMsg::default());
    }

    #[test]
    fn node_record_fields_gated_by_release() {
        let n = node("n1");
        let len = |v| encode_to_vec(&n, v).len();
        use ProtocolVersion as P;
        // resume_after, resv_name ("maint").
        assert_eq!(len(P::V23_02) - len(P::V22_05), 8 + 4 + 6);
        // instance_id ("i"), instance_type (NULL).
        assert_eq!(len(P::V23_11) - len(P::V23_02), 4 + 2 + 4);
        // +gpu_spec ("g"), +res_cores_per_gpu, -ext_sensors (24), -power (4).
        assert_eq!(len(P::V24_05) + 24 + 4, len(P::V23_11) + 4 + 2 + 2);
        // energy's slurmd_start_time.
        assert_eq!(len(P::V24_11) - len(P::V24_05), 8);
        // +cert_flags, +cert_last_renewal, +topology_str ("t"),
        // -plugin id, -weighted double.
        assert_eq!(len(P::V25_05) + 4 + 8, len(P::V24_11) + 2 + 8 + 4 + 2);
        // parameters ("p").
        assert_eq!(len(P::V25_11) - len(P::V25_05), 4 + 2);
        // suspend_time.
        assert_eq!(len(P::V26_05) - len(P::V25_11), 4);
    }

    #[test]
    fn hidden_nodes_are_skipped_from_24_11_only() {
        let mut hidden = BitStr::new(3);
        hidden.set(1, true);
        let m = NodeInfoMsg {
            last_update: 7,
            hidden_nodes: Some(hidden),
            node_array: vec![node("n1"), NodeInfo::default(), node("n3")],
        };
        round_trip_all(&m);
        assert_eq!(m.visible().count(), 2);

        let v = ProtocolVersion::V24_11;
        let b = encode_to_vec(&m, v);
        let rec = encode_to_vec(&node("n1"), v).len();
        // count, time, bitmap (nbits + "0x2\0"), two records.
        assert_eq!(b.len(), 4 + 8 + 4 + 8 + 2 * rec - 2 * 2 + 2 * 2);
        let back: NodeInfoMsg = decode_exact(&b, v).unwrap();
        assert_eq!(back.hidden_nodes, m.hidden_nodes);
        let names: Vec<_> = back.visible().filter_map(|n| n.name.as_deref()).collect();
        assert_eq!(names, ["n1", "n3"]);
        assert_eq!(back.node_array[1], NodeInfo::default());

        // Before 24.11 the hidden slot travels as a (blank) record.
        let v = ProtocolVersion::V24_05;
        let b = encode_to_vec(&m, v);
        let back: NodeInfoMsg = decode_exact(&b, v).unwrap();
        assert_eq!(back.node_array.len(), 3);
        assert_eq!(back.hidden_nodes, None);
        assert_eq!(back.node_array[1], NodeInfo::default());

        // A NULL bitmap (the single-node reply) hides nothing.
        let single = NodeInfoMsg {
            last_update: 7,
            hidden_nodes: None,
            node_array: vec![node("n1")],
        };
        round_trip_all(&single);
    }

    #[test]
    fn hostile_node_counts_are_refused() {
        let v = ProtocolVersion::V24_11;
        let mut b = vec![0xff, 0xff, 0xff, 0xf0];
        b.extend_from_slice(&[0; 8]);
        b.extend_from_slice(&encode_to_vec(&None::<BitStr>, v));
        assert!(decode_exact::<NodeInfoMsg>(&b, v).is_err());

        // A bitmap hiding more nodes than any node table holds.
        let mut all = BitStr::new(MAX_SLURM_NODES + 4);
        for i in 0..all.len() {
            all.set(i, true);
        }
        let mut b = vec![0xff, 0xff, 0xff, 0xf0];
        b.extend_from_slice(&[0; 8]);
        b.extend_from_slice(&encode_to_vec(&Some(all), v));
        assert!(decode_exact::<NodeInfoMsg>(&b, v).is_err());
    }

    #[test]
    fn update_node_round_trips() {
        let m = UpdateNodeMsg {
            cert_token: s("tok"),
            comment: s("c"),
            cpu_bind: 0,
            extra: None,
            features: s("f"),
            features_act: None,
            gres: None,
            instance_id: s("i"),
            instance_type: s("t"),
            node_addr: None,
            node_hostname: None,
            node_names: s("n[1-2]"),
            node_state: 0x0400,
            power_action_name: s("off"),
            reason: s("maint"),
            reason_uid: 1000,
            resume_after: 60,
            topology_str: s("sw1"),
            weight: crate::pack::NO_VAL,
        };
        round_trip_all(&m);
        use ProtocolVersion as P;
        let len = |v| encode_to_vec(&m, v).len();
        // reason_uid becomes resume_after: same size.
        assert_eq!(len(P::V23_02), len(P::V22_05));
        let old: UpdateNodeMsg = decode_exact(&encode_to_vec(&m, P::V22_05), P::V22_05).unwrap();
        assert_eq!((old.reason_uid, old.resume_after), (1000, 0));
        let new: UpdateNodeMsg = decode_exact(&encode_to_vec(&m, P::V23_02), P::V23_02).unwrap();
        assert_eq!((new.reason_uid, new.resume_after), (0, 60));
        assert_eq!(len(P::V23_11) - len(P::V23_02), 4 + 2 + 4 + 2);
        assert_eq!(len(P::V24_11) - len(P::V24_05), 4 + 4);
        assert_eq!(len(P::V25_05) - len(P::V24_11), 4 + 4);
        assert_eq!(len(P::V26_05) - len(P::V25_11), 4 + 4);
    }

    #[test]
    fn arbitrary_values_round_trip() {
        use arbitrary::{Arbitrary, Unstructured};
        let mut seed = 0x1234_5678_9abc_def0u64;
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
            let reg = SlurmNodeRegistrationStatusMsg::arbitrary(&mut u).unwrap();
            let info = NodeInfoMsg::arbitrary(&mut u).unwrap_or_default();
            let upd = UpdateNodeMsg::arbitrary(&mut u).unwrap_or_default();
            let resp = NodeRegistrationRespMsg::arbitrary(&mut u).unwrap_or_default();
            round_trip_all(&reg);
            round_trip_all(&info);
            round_trip_all(&upd);
            round_trip_all(&resp);
        }
    }
}
