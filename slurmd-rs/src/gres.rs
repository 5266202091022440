//! The node's generic resources as registration reports them: the
//! gres.conf records for this node (else slurm.conf's `Gres=`), packed as
//! stock's `gres_node_config_pack` (same layout 22.05..26.05).

use slurm_conf::{GresConf, NodeConf};
use slurm_wire::ProtocolVersion;

pub const GRES_MAGIC: u32 = 0x438a_34d4;
const HAS_FILE: u32 = 1 << 1;
const HAS_TYPE: u32 = 1 << 2;
const COUNT_ONLY: u32 = 1 << 3;
/// NVML | RSMI | OPENCL | ONEAPI, plus "set to defaults".
const ENV_DEFAULTS: u32 = 0x0000_08E0 | (1 << 8);

/// One record of `gres_slurmd_conf_t` as packed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GresRec {
    pub count: u64,
    pub cpu_cnt: u32,
    pub config_flags: u32,
    pub name: String,
    pub type_name: Option<String>,
    pub cpus: Option<String>,
    pub links: Option<String>,
}

/// `gres_build_id`: the plugin id is a hash of the name.
pub fn plugin_id(name: &str) -> u32 {
    let mut id: u32 = 0;
    let mut shift = 0u32;
    for b in name.bytes() {
        id = id.wrapping_add(u32::from(b) << shift);
        shift = (shift + 8) % 32;
    }
    id
}

fn has_plugin(name: &str) -> bool {
    matches!(name, "gpu" | "mps" | "shard" | "nic")
}

/// Records for `node`: gres.conf lines that apply to it; for GRES named in
/// slurm.conf's `Gres=` but absent there, a count-only record.
pub fn node_records(
    gres: Option<&GresConf>,
    nc: Option<&NodeConf>,
    node: &str,
    cpus: u16,
) -> Vec<GresRec> {
    let mut out: Vec<GresRec> = Vec::new();
    if let Some(g) = gres {
        for r in g.records.iter().filter(|r| r.applies_to(node)) {
            let mut flags = 0;
            if !r.files.is_empty() {
                flags |= HAS_FILE;
            }
            if r.type_name.is_some() {
                flags |= HAS_TYPE;
            }
            if !has_plugin(&r.name) {
                flags |= COUNT_ONLY;
            } else if r.name == "gpu" && r.flags.is_empty() {
                flags |= ENV_DEFAULTS;
            }
            out.push(GresRec {
                count: if r.files.is_empty() {
                    r.count
                } else {
                    r.files.len() as u64
                },
                cpu_cnt: u32::from(cpus),
                config_flags: flags,
                name: r.name.clone(),
                type_name: r.type_name.clone(),
                cpus: None,
                links: r.links.clone(),
            });
        }
    }
    for spec in nc
        .and_then(|n| n.gres.as_deref())
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let parts: Vec<&str> = spec.split(':').collect();
        let name = parts.first().copied().unwrap_or_default().to_string();
        if out.iter().any(|r| r.name == name) {
            continue;
        }
        let (type_name, count) = match parts.as_slice() {
            [_] => (None, 1),
            [_, c] if c.parse::<u64>().is_ok() => (None, c.parse().unwrap_or(1)),
            [_, t] => (Some(t.to_string()), 1),
            [_, t, c, ..] => (Some(t.to_string()), c.parse().unwrap_or(1)),
            [] => continue,
        };
        out.push(GresRec {
            count,
            cpu_cnt: u32::from(cpus),
            config_flags: COUNT_ONLY | if type_name.is_some() { HAS_TYPE } else { 0 },
            name,
            type_name,
            cpus: None,
            links: None,
        });
    }
    out
}

/// The registration's GRES buffer for protocol `v`.
pub fn pack(recs: &[GresRec], v: ProtocolVersion) -> Vec<u8> {
    let mut w = slurm_wire::pack::Writer::new();
    w.u16(v.to_wire());
    w.u16(recs.len().min(u16::MAX as usize) as u16);
    for r in recs.iter().take(u16::MAX as usize) {
        w.u32(GRES_MAGIC);
        w.u64(r.count);
        w.u32(r.cpu_cnt);
        w.u32(r.config_flags);
        w.u32(plugin_id(&r.name));
        w.str(r.cpus.as_deref());
        w.str(r.links.as_deref());
        w.str(Some(&r.name));
        w.str(r.type_name.as_deref());
        w.str(None); // unique_id
    }
    w.into_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_match_stock() {
        // gres_build_id("gpu") = 'g' + ('p' << 8) + ('u' << 16)
        assert_eq!(plugin_id("gpu"), 0x0075_7067);
        assert_eq!(plugin_id("nic"), 0x0063_696e);
    }

    #[test]
    fn records_from_gres_conf_and_slurm_conf() {
        let g = GresConf::parse_str(
            "NodeName=n[1-2] Name=gpu Type=a100 File=/dev/nvidia[0-3]\nNodeName=n9 Name=gpu File=/dev/x\n",
            "/etc/slurm/gres.conf",
        )
        .unwrap();
        let c = slurm_conf::SlurmConf::parse_str(
            "ClusterName=c\nSlurmctldHost=x\nGresTypes=gpu,bandwidth\nNodeName=n[1-2] CPUs=4 Gres=gpu:a100:4,bandwidth:100\n",
            "/etc/slurm/slurm.conf",
        )
        .unwrap();
        let r = node_records(Some(&g), c.node("n1"), "n1", 4);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].count, 4);
        assert_eq!(r[0].type_name.as_deref(), Some("a100"));
        assert_eq!(r[0].config_flags, HAS_FILE | HAS_TYPE | ENV_DEFAULTS);
        assert_eq!((r[1].name.as_str(), r[1].count), ("bandwidth", 100));
        assert_ne!(r[1].config_flags & COUNT_ONLY, 0);
        let b = pack(&r, ProtocolVersion::V24_11);
        assert_eq!(&b[..4], &[0x2a, 0, 0, 2]);
        assert_eq!(&b[4..8], &GRES_MAGIC.to_be_bytes());
        assert_eq!(pack(&[], ProtocolVersion::V22_05), vec![0x26, 0, 0, 0]);
    }
}
