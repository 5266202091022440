//! GRES records carried by credentials and kill-job messages
//! (src/interfaces/gres.c; 22.05 src/common/gres.c).

use crate::error::{DecodeError, DecodeErrorKind, Result};
use crate::pack::{Reader, Wire, Writer};
use crate::types::BitStr;
use crate::ProtocolVersion;

/// Upstream's `GRES_MAGIC`, leading every packed GRES record.
pub const GRES_MAGIC: u32 = 0x438a_34d4;

fn check_magic(r: &mut Reader<'_>) -> Result<()> {
    let at = r.position();
    let m = r.u32()?;
    if m != GRES_MAGIC {
        return Err(DecodeError::new(
            DecodeErrorKind::BadValue {
                what: "gres magic",
                value: m as u64,
            },
            at,
        ));
    }
    Ok(())
}

/// `gres_prep_t` (22.05: `gres_epilog_info_t`), one per GRES plugin of a
/// job, sent to slurmd for the epilog.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct GresPrep {
    pub plugin_id: u32,
    /// Only sent as such when `gres_bit_alloc` is `None`; otherwise the
    /// bitmap count is the node count.
    pub node_cnt: u32,
    pub gres_cnt_node_alloc: Option<Vec<u64>>,
    pub gres_bit_alloc: Option<Vec<Option<BitStr>>>,
}

impl Wire for GresPrep {
    fn decode(r: &mut Reader<'_>, v: ProtocolVersion) -> Result<Self> {
        check_magic(r)?;
        let plugin_id = r.u32()?;
        let at = r.position();
        let node_cnt = r.u32()?;
        let gres_cnt_node_alloc = if r.bool()? {
            Some(Vec::<u64>::decode(r, v).map_err(|e| e.within("gres_cnt_node_alloc"))?)
        } else {
            None
        };
        let gres_bit_alloc = if r.bool()? {
            // Each bitmap is at least a u32.
            let n = r.check_count(node_cnt, 4, at)?;
            let mut out = Vec::with_capacity(n.min(1024));
            for _ in 0..n {
                out.push(Option::<BitStr>::decode(r, v).map_err(|e| e.within("gres_bit_alloc"))?);
            }
            Some(out)
        } else {
            None
        };
        Ok(Self {
            plugin_id,
            node_cnt,
            gres_cnt_node_alloc,
            gres_bit_alloc,
        })
    }
    fn encode(&self, w: &mut Writer, v: ProtocolVersion) {
        w.u32(GRES_MAGIC);
        w.u32(self.plugin_id);
        match &self.gres_bit_alloc {
            Some(b) => w.count(b.len()),
            None => w.u32(self.node_cnt),
        }
        match &self.gres_cnt_node_alloc {
            Some(a) => {
                w.u8(1);
                a.encode(w, v);
            }
            None => w.u8(0),
        }
        match &self.gres_bit_alloc {
            Some(b) => {
                w.u8(1);
                for x in b {
                    x.encode(w, v);
                }
            }
            None => w.u8(0),
        }
    }
}

/// The kill-job GRES list: before 25.05 a `u16` record count (0 for none);
/// from 25.05 a `slurm_pack_list` (NO_VAL for none).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct GresPrepList(pub Option<Vec<GresPrep>>);

impl Wire for GresPrepList {
    fn decode(r: &mut Reader<'_>, v: ProtocolVersion) -> Result<Self> {
        if v >= ProtocolVersion::V25_05 {
            return Ok(Self(Option::<Vec<GresPrep>>::decode(r, v)?));
        }
        let at = r.position();
        let n = r.u16()?;
        if n == 0 {
            return Ok(Self(None));
        }
        let n = r.check_count(u32::from(n), 13, at)?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(GresPrep::decode(r, v)?);
        }
        Ok(Self(Some(out)))
    }
    fn encode(&self, w: &mut Writer, v: ProtocolVersion) {
        if v >= ProtocolVersion::V25_05 {
            return self.0.encode(w, v);
        }
        let items = self.0.as_deref().unwrap_or_default();
        let n = items.len().min(usize::from(u16::MAX));
        w.u16(n as u16);
        for it in items.iter().take(n) {
            it.encode(w, v);
        }
    }
}

/// Upstream's `gres_build_id`: a GRES name's plugin id (bytes shifted by
/// 0, 8, 16, 24, 0 ... bits and summed).
pub fn gres_plugin_id(name: &str) -> u32 {
    let mut id = 0u32;
    for (i, b) in name.bytes().enumerate() {
        id = id.wrapping_add(u32::from(b) << ((i * 8) % 32));
    }
    id
}

/// One `gres_job_state_t` as `gres_job_state_pack` writes it (the job's
/// allocated GRES of one name and type; `node_cnt` entries per-node).
/// 23.11 added the per-bit counts (shared GRES) after each bitmap set.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GresJobState {
    pub plugin_id: u32,
    pub cpus_per_gres: u16,
    pub flags: u16,
    pub gres_per_job: u64,
    pub gres_per_node: u64,
    pub gres_per_socket: u64,
    pub gres_per_task: u64,
    pub mem_per_gres: u64,
    pub ntasks_per_gres: u16,
    pub total_gres: u64,
    pub type_name: Option<String>,
    pub node_cnt: u32,
    pub gres_cnt_node_alloc: Option<Vec<u64>>,
    /// `node_cnt` bitmaps of the node's devices of this name.
    pub gres_bit_alloc: Option<Vec<Option<BitStr>>>,
    /// 23.11+: `node_cnt` entries, each a count per bit (shared GRES).
    pub gres_per_bit_alloc: Vec<Option<Vec<u64>>>,
    pub gres_bit_step_alloc: Option<Vec<Option<BitStr>>>,
    pub gres_cnt_step_alloc: Option<Vec<u64>>,
    /// 23.11+, like `gres_per_bit_alloc`.
    pub gres_per_bit_step_alloc: Vec<Option<Vec<u64>>>,
}

/// Values as the decoder can produce them: the per-node arrays hold
/// `node_cnt` entries, and `node_cnt` is small (the decoder refuses counts
/// larger than the bytes left).
#[cfg(feature = "arbitrary")]
impl<'a> arbitrary::Arbitrary<'a> for GresJobState {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        let n = u.int_in_range(0..=3u32)?;
        let per_node_bits = |u: &mut arbitrary::Unstructured<'a>| -> arbitrary::Result<_> {
            Ok(if u.arbitrary()? {
                Some(
                    (0..n)
                        .map(|_| u.arbitrary())
                        .collect::<arbitrary::Result<Vec<Option<BitStr>>>>()?,
                )
            } else {
                None
            })
        };
        let per_bit = |u: &mut arbitrary::Unstructured<'a>| -> arbitrary::Result<_> {
            (0..n)
                .map(|_| u.arbitrary())
                .collect::<arbitrary::Result<Vec<Option<Vec<u64>>>>>()
        };
        Ok(Self {
            plugin_id: u.arbitrary()?,
            cpus_per_gres: u.arbitrary()?,
            flags: u.arbitrary()?,
            gres_per_job: u.arbitrary()?,
            gres_per_node: u.arbitrary()?,
            gres_per_socket: u.arbitrary()?,
            gres_per_task: u.arbitrary()?,
            mem_per_gres: u.arbitrary()?,
            ntasks_per_gres: u.arbitrary()?,
            total_gres: u.arbitrary()?,
            type_name: u.arbitrary()?,
            node_cnt: n,
            gres_cnt_node_alloc: u.arbitrary()?,
            gres_bit_alloc: per_node_bits(u)?,
            gres_per_bit_alloc: per_bit(u)?,
            gres_bit_step_alloc: per_node_bits(u)?,
            gres_cnt_step_alloc: if u.arbitrary()? {
                Some(
                    (0..n)
                        .map(|_| u.arbitrary())
                        .collect::<arbitrary::Result<_>>()?,
                )
            } else {
                None
            },
            gres_per_bit_step_alloc: per_bit(u)?,
        })
    }
}

fn bitmaps(
    r: &mut Reader<'_>,
    v: ProtocolVersion,
    n: usize,
    what: &'static str,
) -> Result<Option<Vec<Option<BitStr>>>> {
    if !r.bool()? {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        out.push(Option::<BitStr>::decode(r, v).map_err(|e| e.within(what))?);
    }
    Ok(Some(out))
}

fn put_bitmaps(w: &mut Writer, v: ProtocolVersion, b: &Option<Vec<Option<BitStr>>>, n: usize) {
    match b {
        Some(b) => {
            w.u8(1);
            for i in 0..n {
                b.get(i).cloned().flatten().encode(w, v);
            }
        }
        None => w.u8(0),
    }
}

fn per_bit(
    r: &mut Reader<'_>,
    v: ProtocolVersion,
    n: usize,
    what: &'static str,
) -> Result<Vec<Option<Vec<u64>>>> {
    let mut out = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        out.push(if r.bool()? {
            Some(Vec::<u64>::decode(r, v).map_err(|e| e.within(what))?)
        } else {
            None
        });
    }
    Ok(out)
}

fn put_per_bit(w: &mut Writer, v: ProtocolVersion, p: &[Option<Vec<u64>>], n: usize) {
    for i in 0..n {
        match p.get(i).and_then(Option::as_ref) {
            Some(a) => {
                w.u8(1);
                a.encode(w, v);
            }
            None => w.u8(0),
        }
    }
}

impl Wire for GresJobState {
    fn decode(r: &mut Reader<'_>, v: ProtocolVersion) -> Result<Self> {
        check_magic(r)?;
        let plugin_id = r.u32()?;
        let cpus_per_gres = r.u16()?;
        let flags = r.u16()?;
        let gres_per_job = r.u64()?;
        let gres_per_node = r.u64()?;
        let gres_per_socket = r.u64()?;
        let gres_per_task = r.u64()?;
        let mem_per_gres = r.u64()?;
        let ntasks_per_gres = r.u16()?;
        let total_gres = r.u64()?;
        let type_name = Option::<String>::decode(r, v).map_err(|e| e.within("type_name"))?;
        let at = r.position();
        let node_cnt = r.u32()?;
        // Each per-node entry takes at least one byte.
        let n = r.check_count(node_cnt, 1, at)?;
        let gres_cnt_node_alloc = if r.bool()? {
            Some(Vec::<u64>::decode(r, v).map_err(|e| e.within("gres_cnt_node_alloc"))?)
        } else {
            None
        };
        let gres_bit_alloc = bitmaps(r, v, n, "gres_bit_alloc")?;
        let shared = v >= ProtocolVersion::V23_11;
        let gres_per_bit_alloc = if shared {
            per_bit(r, v, n, "gres_per_bit_alloc")?
        } else {
            Vec::new()
        };
        let gres_bit_step_alloc = bitmaps(r, v, n, "gres_bit_step_alloc")?;
        let gres_cnt_step_alloc = if r.bool()? {
            let mut c = Vec::with_capacity(n.min(1024));
            for _ in 0..n {
                c.push(r.u64()?);
            }
            Some(c)
        } else {
            None
        };
        let gres_per_bit_step_alloc = if shared {
            per_bit(r, v, n, "gres_per_bit_step_alloc")?
        } else {
            Vec::new()
        };
        Ok(Self {
            plugin_id,
            cpus_per_gres,
            flags,
            gres_per_job,
            gres_per_node,
            gres_per_socket,
            gres_per_task,
            mem_per_gres,
            ntasks_per_gres,
            total_gres,
            type_name,
            node_cnt,
            gres_cnt_node_alloc,
            gres_bit_alloc,
            gres_per_bit_alloc,
            gres_bit_step_alloc,
            gres_cnt_step_alloc,
            gres_per_bit_step_alloc,
        })
    }

    fn encode(&self, w: &mut Writer, v: ProtocolVersion) {
        let n = self.node_cnt as usize;
        w.u32(GRES_MAGIC);
        w.u32(self.plugin_id);
        w.u16(self.cpus_per_gres);
        w.u16(self.flags);
        w.u64(self.gres_per_job);
        w.u64(self.gres_per_node);
        w.u64(self.gres_per_socket);
        w.u64(self.gres_per_task);
        w.u64(self.mem_per_gres);
        w.u16(self.ntasks_per_gres);
        w.u64(self.total_gres);
        self.type_name.encode(w, v);
        w.u32(self.node_cnt);
        match &self.gres_cnt_node_alloc {
            Some(a) => {
                w.u8(1);
                a.encode(w, v);
            }
            None => w.u8(0),
        }
        put_bitmaps(w, v, &self.gres_bit_alloc, n);
        let shared = v >= ProtocolVersion::V23_11;
        if shared {
            put_per_bit(w, v, &self.gres_per_bit_alloc, n);
        }
        put_bitmaps(w, v, &self.gres_bit_step_alloc, n);
        match &self.gres_cnt_step_alloc {
            Some(c) => {
                w.u8(1);
                for i in 0..n {
                    w.u64(c.get(i).copied().unwrap_or(0));
                }
            }
            None => w.u8(0),
        }
        if shared {
            put_per_bit(w, v, &self.gres_per_bit_step_alloc, n);
        }
    }
}

/// The job GRES list of a credential (`gres_job_state_pack` with
/// `details=false`): a `u16` record count, then the records.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct GresJobStateList(pub Vec<GresJobState>);

impl Wire for GresJobStateList {
    fn decode(r: &mut Reader<'_>, v: ProtocolVersion) -> Result<Self> {
        let at = r.position();
        let n = r.u16()?;
        // magic + plugin id + the fixed fields: over 60 bytes each.
        let n = r.check_count(u32::from(n), 60, at)?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(GresJobState::decode(r, v)?);
        }
        Ok(Self(out))
    }
    fn encode(&self, w: &mut Writer, v: ProtocolVersion) {
        let n = self.0.len().min(usize::from(u16::MAX));
        w.u16(n as u16);
        for g in self.0.iter().take(n) {
            g.encode(w, v);
        }
    }
}

/// A step's GRES state list inside the job credential
/// (`gres_step_state_pack`): a `u16` record count.
///
/// Only the empty form (count 0: no GRES on the job) is supported; a
/// non-empty list is rejected with a typed error rather than misread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct GresStateList;

impl Wire for GresStateList {
    fn decode(r: &mut Reader<'_>, _: ProtocolVersion) -> Result<Self> {
        let at = r.position();
        match r.u16()? {
            0 => Ok(Self),
            n => Err(DecodeError::new(
                DecodeErrorKind::BadValue {
                    what: "gres state record count (non-empty GRES state lists are not supported)",
                    value: u64::from(n),
                },
                at,
            )),
        }
    }
    fn encode(&self, w: &mut Writer, _: ProtocolVersion) {
        w.u16(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::{decode_exact, encode_to_vec};

    #[test]
    fn gres_plugin_id_of_gpu() {
        // the plugin id stock sends for gpu (fixtures: kill-job gres lists)
        assert_eq!(gres_plugin_id("gpu"), 7696487);
        assert_ne!(gres_plugin_id("mps"), gres_plugin_id("gpu"));
    }

    #[test]
    fn gres_job_state_round_trips_and_grows_in_23_11() {
        let mut bm = BitStr::new(4);
        bm.set(0, true);
        bm.set(1, true);
        let st = GresJobState {
            plugin_id: gres_plugin_id("gpu"),
            gres_per_node: 2,
            total_gres: 4,
            type_name: Some("a100".into()),
            node_cnt: 2,
            gres_cnt_node_alloc: Some(vec![2, 2]),
            gres_bit_alloc: Some(vec![Some(bm.clone()), Some(bm)]),
            ..Default::default()
        };
        let mut want = st.clone();
        let l = GresJobStateList(vec![st]);
        let old = encode_to_vec(&l, ProtocolVersion::V22_05);
        assert_eq!(
            decode_exact::<GresJobStateList>(&old, ProtocolVersion::V22_05),
            Ok(l.clone())
        );
        for v in [ProtocolVersion::V24_11, ProtocolVersion::V26_05] {
            let b = encode_to_vec(&l, v);
            // one "absent" byte per node for each of the two per-bit arrays
            assert_eq!(b.len(), old.len() + 4);
            want.gres_per_bit_alloc = vec![None, None];
            want.gres_per_bit_step_alloc = vec![None, None];
            assert_eq!(
                decode_exact::<GresJobStateList>(&b, v),
                Ok(GresJobStateList(vec![want.clone()]))
            );
        }
        let empty = encode_to_vec(&GresJobStateList::default(), ProtocolVersion::V24_11);
        assert_eq!(empty, vec![0, 0]);
    }

    #[test]
    fn gres_prep_list_both_forms() {
        let mut bm = BitStr::new(4);
        bm.set(1, true);
        let l = GresPrepList(Some(vec![GresPrep {
            plugin_id: 7696487,
            node_cnt: 2,
            gres_cnt_node_alloc: Some(vec![1, 2]),
            gres_bit_alloc: Some(vec![Some(bm), None]),
        }]));
        for v in ProtocolVersion::ALL {
            let b = encode_to_vec(&l, v);
            assert_eq!(decode_exact::<GresPrepList>(&b, v), Ok(l.clone()));
            let e = encode_to_vec(&GresPrepList(None), v);
            assert_eq!(e.len(), if v >= ProtocolVersion::V25_05 { 4 } else { 2 });
        }
        assert!(decode_exact::<GresStateList>(&[0, 1], ProtocolVersion::V24_11).is_err());
    }
}
