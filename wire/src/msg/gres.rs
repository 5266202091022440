//! GRES records carried by credentials and kill-job messages
//! (src/interfaces/gres.c; 22.05 src/common/gres.c).

use crate::codec::error::{named, PResult, WireError};
use crate::codec::{prim, shape, BufMut};
use crate::error::DecodeErrorKind;
use crate::pack::Wire;
use crate::types::BitStr;
use crate::wire;
use crate::ProtocolVersion;

type V = ProtocolVersion;

/// Upstream's `GRES_MAGIC`, leading every packed GRES record.
pub const GRES_MAGIC: u32 = 0x438a_34d4;

fn magic(i: &[u8]) -> PResult<'_, ()> {
    match prim::u32(i)? {
        (r, GRES_MAGIC) => Ok((r, ())),
        (_, m) => {
            let kind = DecodeErrorKind::BadValue {
                what: "gres magic",
                value: u64::from(m),
            };
            WireError::fail(kind, i)
        }
    }
}

/// A `u8` flag then `T`.
fn flagged<'a, T: Wire>(i: &'a [u8], v: V, what: &'static str) -> PResult<'a, Option<T>> {
    let (r, present) = prim::bool(i)?;
    if !present {
        return Ok((r, None));
    }
    let (r, x) = named(T::parse(r, v), what)?;
    Ok((r, Some(x)))
}

fn put_flagged<B: BufMut, T: Wire>(b: &mut B, v: V, x: &Option<T>) {
    match x {
        Some(x) => {
            b.put_u8(1);
            x.put(b, v);
        }
        None => b.put_u8(0),
    }
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

// irregular: node_cnt is also the length of the uncounted bitmap array after the next field; the
// encoder sends the array's length there.
impl Wire for GresPrep {
    fn parse<'a>(i: &'a [u8], v: V) -> PResult<'a, Self> {
        let (r, ()) = magic(i)?;
        let (r, plugin_id) = prim::u32(r)?;
        let cnt_at = r;
        let (r, node_cnt) = prim::u32(r)?;
        let (r, gres_cnt_node_alloc) = flagged(r, v, "gres_cnt_node_alloc")?;
        let (mut r, present) = prim::bool(r)?;
        let mut gres_bit_alloc = None;
        if present {
            // Each bitmap is at least a u32.
            let n = prim::check_count(cnt_at, r, u64::from(node_cnt), 4)?;
            let (rest, x) = prim::items(r, n, |i| {
                named(Option::<BitStr>::parse(i, v), "gres_bit_alloc")
            })?;
            gres_bit_alloc = Some(x);
            r = rest;
        }
        let p = Self {
            plugin_id,
            node_cnt,
            gres_cnt_node_alloc,
            gres_bit_alloc,
        };
        Ok((r, p))
    }
    fn put<B: BufMut>(&self, b: &mut B, v: V) {
        b.put_u32(GRES_MAGIC);
        b.put_u32(self.plugin_id);
        match &self.gres_bit_alloc {
            Some(x) => prim::put_count(b, x.len()),
            None => b.put_u32(self.node_cnt),
        }
        put_flagged(b, v, &self.gres_cnt_node_alloc);
        match &self.gres_bit_alloc {
            Some(x) => {
                b.put_u8(1);
                x.iter().for_each(|m| m.put(b, v));
            }
            None => b.put_u8(0),
        }
    }
}

wire! {
    /// The kill-job GRES list: before 25.05 a `u16` record count (0 for none);
    /// from 25.05 a `slurm_pack_list` (NO_VAL for none).
    pub struct GresPrepList(#[wire(with = prep_list)] pub Option<Vec<GresPrep>>);
}

/// 25.05 changed the framing (u16 count with 0 = none, then `slurm_pack_list`).
// irregular: the framing depends on the release.
mod prep_list {
    use super::*;

    pub fn parse<'a>(i: &'a [u8], v: V, f: &mut Option<Vec<GresPrep>>) -> PResult<'a, ()> {
        if v >= V::V25_05 {
            let (r, x) = Option::<Vec<GresPrep>>::parse(i, v)?;
            *f = x;
            return Ok((r, ()));
        }
        let (r, n) = prim::u16(i)?;
        if n == 0 {
            *f = None;
            return Ok((r, ()));
        }
        let n = prim::check_count(i, r, u64::from(n), 13)?;
        let (r, x) = prim::items(r, n, |i| GresPrep::parse(i, v))?;
        *f = Some(x);
        Ok((r, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, v: V, f: &Option<Vec<GresPrep>>) {
        if v >= V::V25_05 {
            return f.put(b, v);
        }
        shape::count16::put(b, v, f.as_deref().unwrap_or_default());
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

/// `n` entries behind one `u8` flag.
fn per_node<'a, T>(
    i: &'a [u8],
    n: usize,
    what: &'static str,
    item: impl FnMut(&'a [u8]) -> PResult<'a, T>,
) -> PResult<'a, Option<Vec<T>>> {
    let (r, present) = prim::bool(i)?;
    if !present {
        return Ok((r, None));
    }
    let (r, x) = prim::items(r, n, item).map_err(|e| {
        e.map(|mut e| {
            if !what.is_empty() {
                e.path.push(what);
            }
            e
        })
    })?;
    Ok((r, Some(x)))
}

fn bitmaps<'a>(
    i: &'a [u8],
    v: V,
    n: usize,
    what: &'static str,
) -> PResult<'a, Option<Vec<Option<BitStr>>>> {
    per_node(i, n, what, |i| Option::<BitStr>::parse(i, v))
}

fn put_bitmaps<B: BufMut>(b: &mut B, v: V, x: &Option<Vec<Option<BitStr>>>, n: usize) {
    match x {
        Some(x) => {
            b.put_u8(1);
            for i in 0..n {
                x.get(i).cloned().flatten().put(b, v);
            }
        }
        None => b.put_u8(0),
    }
}

fn per_bit<'a>(
    i: &'a [u8],
    v: V,
    n: usize,
    what: &'static str,
) -> PResult<'a, Vec<Option<Vec<u64>>>> {
    prim::items(i, n, |i| flagged(i, v, what))
}

fn put_per_bit<B: BufMut>(b: &mut B, v: V, p: &[Option<Vec<u64>>], n: usize) {
    for i in 0..n {
        match p.get(i).and_then(Option::as_ref) {
            Some(a) => {
                b.put_u8(1);
                a.put(b, v);
            }
            None => b.put_u8(0),
        }
    }
}

// irregular: five per-node arrays are sized by node_cnt and have no count of their own; the encoder
// pads or cuts them to node_cnt.
impl Wire for GresJobState {
    fn parse<'a>(i: &'a [u8], v: V) -> PResult<'a, Self> {
        let (r, ()) = magic(i)?;
        let (r, plugin_id) = prim::u32(r)?;
        let (r, cpus_per_gres) = prim::u16(r)?;
        let (r, flags) = prim::u16(r)?;
        let (r, gres_per_job) = prim::u64(r)?;
        let (r, gres_per_node) = prim::u64(r)?;
        let (r, gres_per_socket) = prim::u64(r)?;
        let (r, gres_per_task) = prim::u64(r)?;
        let (r, mem_per_gres) = prim::u64(r)?;
        let (r, ntasks_per_gres) = prim::u16(r)?;
        let (r, total_gres) = prim::u64(r)?;
        let (r, type_name) = named(prim::str(r), "type_name")?;
        let cnt_at = r;
        let (r, node_cnt) = prim::u32(r)?;
        // Each per-node entry takes at least one byte.
        let n = prim::check_count(cnt_at, r, u64::from(node_cnt), 1)?;
        let (r, gres_cnt_node_alloc) = flagged(r, v, "gres_cnt_node_alloc")?;
        let (r, gres_bit_alloc) = bitmaps(r, v, n, "gres_bit_alloc")?;
        let shared = v >= V::V23_11;
        let (r, gres_per_bit_alloc) = if shared {
            per_bit(r, v, n, "gres_per_bit_alloc")?
        } else {
            (r, Vec::new())
        };
        let (r, gres_bit_step_alloc) = bitmaps(r, v, n, "gres_bit_step_alloc")?;
        let (r, gres_cnt_step_alloc) = per_node(r, n, "", prim::u64)?;
        let (r, gres_per_bit_step_alloc) = if shared {
            per_bit(r, v, n, "gres_per_bit_step_alloc")?
        } else {
            (r, Vec::new())
        };
        let s = Self {
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
        };
        Ok((r, s))
    }

    fn put<B: BufMut>(&self, b: &mut B, v: V) {
        let n = self.node_cnt as usize;
        b.put_u32(GRES_MAGIC);
        b.put_u32(self.plugin_id);
        b.put_u16(self.cpus_per_gres);
        b.put_u16(self.flags);
        b.put_u64(self.gres_per_job);
        b.put_u64(self.gres_per_node);
        b.put_u64(self.gres_per_socket);
        b.put_u64(self.gres_per_task);
        b.put_u64(self.mem_per_gres);
        b.put_u16(self.ntasks_per_gres);
        b.put_u64(self.total_gres);
        prim::put_str(b, self.type_name.as_deref());
        b.put_u32(self.node_cnt);
        put_flagged(b, v, &self.gres_cnt_node_alloc);
        put_bitmaps(b, v, &self.gres_bit_alloc, n);
        let shared = v >= V::V23_11;
        if shared {
            put_per_bit(b, v, &self.gres_per_bit_alloc, n);
        }
        put_bitmaps(b, v, &self.gres_bit_step_alloc, n);
        match &self.gres_cnt_step_alloc {
            Some(c) => {
                b.put_u8(1);
                for i in 0..n {
                    b.put_u64(c.get(i).copied().unwrap_or(0));
                }
            }
            None => b.put_u8(0),
        }
        if shared {
            put_per_bit(b, v, &self.gres_per_bit_step_alloc, n);
        }
    }
}

wire! {
    /// The job GRES list of a credential (`gres_job_state_pack` with
    /// `details=false`): a `u16` record count, then the records.
    pub struct GresJobStateList(#[wire(with = job_states)] pub Vec<GresJobState>);
}

/// `shape::count16` with a minimum per record (a newtype has no `min` key), cut at u16::MAX.
mod job_states {
    use super::*;

    pub fn parse<'a>(i: &'a [u8], v: V, f: &mut Vec<GresJobState>) -> PResult<'a, ()> {
        // magic + plugin id + the fixed fields: over 60 bytes each.
        shape::count16::parse_min(i, v, f, 60)
    }
    pub fn put<B: BufMut>(b: &mut B, v: V, f: &[GresJobState]) {
        shape::count16::put(b, v, f)
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

// irregular: only the empty list (a u16 0) is modelled.
impl Wire for GresStateList {
    fn parse<'a>(i: &'a [u8], _: V) -> PResult<'a, Self> {
        match prim::u16(i)? {
            (r, 0) => Ok((r, Self)),
            (_, n) => {
                let kind = DecodeErrorKind::BadValue {
                    what: "gres state record count (non-empty GRES state lists are not supported)",
                    value: u64::from(n),
                };
                WireError::fail(kind, i)
            }
        }
    }
    fn put<B: BufMut>(&self, b: &mut B, _: V) {
        b.put_u16(0)
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
