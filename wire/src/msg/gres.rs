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
#[derive(Debug, Clone, PartialEq, Default, arbitrary::Arbitrary)]
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
#[derive(Debug, Clone, PartialEq, Default, arbitrary::Arbitrary)]
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

/// A job's or step's GRES state list inside the job credential
/// (`gres_job_state_pack` / `gres_step_state_pack`): a `u16` record count.
///
/// Only the empty form (count 0: no GRES on the job) is supported; a
/// non-empty list is rejected with a typed error rather than misread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, arbitrary::Arbitrary)]
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
