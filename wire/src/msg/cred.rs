//! The job credential (`slurm_cred_t`, cred/munge): the fields slurmctld
//! signs, then the signature (a MUNGE credential whose payload is exactly
//! the packed field bytes).
//!
//! Layout by release: 22.05 identity inline (same bytes as `pack_identity`);
//! 23.02 adds job_end_time, job_extra, job_oversubscribe, job_start_time,
//! job_licenses and may hide the switch step info after job_partition's NUL;
//! 23.11 adds job_node_addrs; 24.11 moves switch info to a length-prefixed
//! trailer; 26.05 adds job_exclusive and job_qos.

use crate::codec::error::{named, PResult, WireError};
use crate::codec::{prim, shape, BufMut};
use crate::error::DecodeErrorKind;
use crate::pack::{encode_to_vec, Wire};
use crate::types::{BitStr, SlurmAddr, StepId};
use crate::wire;
use crate::ProtocolVersion;

use super::gres::{GresJobStateList, GresStateList};

type V = ProtocolVersion;

wire! {
    /// `identity_t` as packed by `pack_identity` (inline in 22.05/23.02 creds,
    /// same bytes). `gr_names` is either empty or as long as `gids`.
    pub struct Identity {
        pub uid: u32,
        pub gid: u32,
        pub pw_name: Option<String>,
        pub pw_gecos: Option<String>,
        pub pw_dir: Option<String>,
        pub pw_shell: Option<String>,
        pub gids: Vec<u32>,
        pub gr_names: Vec<Option<String>>,
    }
}

/// One run of `cores_per_socket`/`sockets_per_node`/`sock_core_rep_count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct SockCoreRep {
    pub cores_per_socket: u16,
    pub sockets_per_node: u16,
    pub sock_core_rep_count: u32,
}

/// One run of `cpu_array`/`cpu_array_reps`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct CpuArrayRep {
    pub cpus: u16,
    pub reps: u32,
}

/// One run of `*_mem_alloc`/`*_mem_alloc_rep_count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct MemAllocRep {
    pub mem_alloc: u64,
    pub rep_count: u32,
}

wire! {
    /// The signed part of the credential (`slurm_cred_arg_t` plus `ctime`).
    pub struct JobCredArg {
        pub step_id: StepId,
        pub id: Identity,
        pub job_gres_list: GresJobStateList,
        pub step_gres_list: GresStateList,
        pub job_core_spec: u16,
        pub job_account: Option<String>,
        #[wire(with = shape::count32, min = 2)] [V23_11..] pub job_node_addrs: Vec<SlurmAddr>,
        pub job_alias_list: Option<String>,
        pub job_comment: Option<String>,
        pub job_constraints: Option<String>,
        [V23_02..] pub job_end_time: i64,
        [V23_02..] pub job_extra: Option<String>,
        [V26_05..] pub job_exclusive: u16,
        [V23_02..] pub job_oversubscribe: u16,
        [V24_11..] pub job_partition: Option<String>,
        #[wire(ctx = hidden_switch)] [..V24_11] => job_partition,
        [V26_05..] pub job_qos: Option<String>,
        pub job_reservation: Option<String>,
        pub job_restart_cnt: u16,
        [V23_02..] pub job_start_time: i64,
        pub job_std_err: Option<String>,
        pub job_std_in: Option<String>,
        pub job_std_out: Option<String>,
        pub step_hostlist: Option<String>,
        /// `x11` before 23.11.
        pub job_x11: u16,
        pub ctime: i64,
        /// Upstream sends bit_size(job_core_bitmap) (0 without one) and ignores
        /// it on receipt; kept verbatim.
        pub tot_core_cnt: u32,
        pub job_core_bitmap: Option<BitStr>,
        pub step_core_bitmap: Option<BitStr>,
        #[wire(with = sock_core)] pub sock_core: Vec<SockCoreRep>,
        #[wire(with = cpu_array_reps)] pub cpu_array: Vec<CpuArrayRep>,
        pub job_nhosts: u32,
        pub job_ntasks: u32,
        pub job_hostlist: Option<String>,
        [V23_02..] pub job_licenses: Option<String>,
        #[wire(with = mem_alloc_reps)] pub job_mem_alloc: Vec<MemAllocRep>,
        #[wire(with = mem_alloc_reps)] pub step_mem_alloc: Vec<MemAllocRep>,
        pub job_selinux_context: Option<String>,
        /// Opaque switch step info (`switch_g_pack_stepinfo`: plugin id + data).
        /// 24.11+: a `u32` length then these bytes (None = length 0).
        /// 23.02..24.05: hidden after job_partition's NUL inside the same packstr
        /// (None = a plain string). 22.05 never sends it, but the hidden form
        /// reads the same there.
        #[wire(with = mem_or_none)] [V24_11..] pub switch_step: Option<Vec<u8>>,
    }
}

impl JobCredArg {
    /// Exactly the bytes the credential signature covers.
    pub fn signed_bytes(&self, v: V) -> Vec<u8> {
        encode_to_vec(self, v)
    }
}

/// Before 24.11 the switch step info may follow job_partition's NUL inside the same packstr.
// irregular: one packstr carries two fields (job_partition and switch_step).
mod hidden_switch {
    use super::*;

    pub fn parse<'a>(i: &'a [u8], _: V, s: &mut JobCredArg) -> PResult<'a, ()> {
        let (r, raw) = prim::mem(i)?;
        let Some((&last, body)) = raw.split_last() else {
            return Ok((r, ()));
        };
        if last != 0 {
            return WireError::fail(DecodeErrorKind::StringNotTerminated, i);
        }
        let (name, hidden) = match body.iter().position(|&b| b == 0) {
            None => (body, None),
            Some(n) => (
                body.get(..n).unwrap_or_default(),
                Some(body.get(n + 1..).unwrap_or_default().to_vec()),
            ),
        };
        let Ok(name) = std::str::from_utf8(name) else {
            return WireError::fail(DecodeErrorKind::InvalidUtf8, i);
        };
        s.job_partition = Some(name.to_owned());
        s.switch_step = hidden;
        Ok((r, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, _: V, s: &JobCredArg) {
        let Some(sw) = &s.switch_step else {
            return prim::put_str(b, s.job_partition.as_deref());
        };
        let name = s.job_partition.as_deref().unwrap_or("");
        // A NUL inside the name would end it early on decode; the tail then
        // reads as part of the hidden data, which re-encodes to the same bytes.
        prim::put_count(b, name.len() + 1 + sw.len() + 1);
        b.put_slice(name.as_bytes());
        b.put_u8(0);
        b.put_slice(sw);
        b.put_u8(0);
    }
}

/// `packmem` of the bytes, None for length 0.
mod mem_or_none {
    use super::*;

    pub fn parse<'a>(i: &'a [u8], _: V, f: &mut Option<Vec<u8>>) -> PResult<'a, ()> {
        let (r, m) = prim::mem(i)?;
        *f = (!m.is_empty()).then(|| m.to_vec());
        Ok((r, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, _: V, f: &Option<Vec<u8>>) {
        prim::put_mem(b, f.as_deref().unwrap_or_default())
    }
}

/// One array of a run-length table: its own u32 count, which must equal the table's.
fn column<'a, T>(
    i: &'a [u8],
    want: usize,
    size: usize,
    item: fn(&'a [u8]) -> PResult<'a, T>,
) -> PResult<'a, Vec<T>> {
    let (r, n) = prim::count(i, size)?;
    if n != want {
        let kind = DecodeErrorKind::BadValue {
            what: "array length differs from its count",
            value: n as u64,
        };
        return WireError::fail(kind, i);
    }
    prim::items(r, n, item)
}

fn put_column<B: BufMut, T>(b: &mut B, f: &[T], mut item: impl FnMut(&mut B, &T)) {
    prim::put_count(b, f.len());
    f.iter().for_each(|x| item(b, x));
}

/// `u16 core_array_size`, then (when non-zero) three counted arrays.
mod sock_core {
    use super::*;

    pub fn parse<'a>(i: &'a [u8], _: V, f: &mut Vec<SockCoreRep>) -> PResult<'a, ()> {
        let (r, n) = named(prim::u16(i), "core_array_size")?;
        let n = usize::from(n);
        if n == 0 {
            return Ok((r, ()));
        }
        let (r, cps) = named(column(r, n, 2, prim::u16), "cores_per_socket")?;
        let (r, spn) = named(column(r, n, 2, prim::u16), "sockets_per_node")?;
        let (r, reps) = named(column(r, n, 4, prim::u32), "sock_core_rep_count")?;
        *f = cps
            .into_iter()
            .zip(spn)
            .zip(reps)
            .map(|((a, b), c)| SockCoreRep {
                cores_per_socket: a,
                sockets_per_node: b,
                sock_core_rep_count: c,
            })
            .collect();
        Ok((r, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, _: V, f: &[SockCoreRep]) {
        let f = f
            .get(..f.len().min(usize::from(u16::MAX)))
            .unwrap_or_default();
        b.put_u16(f.len() as u16);
        if !f.is_empty() {
            put_column(b, f, |b, x| b.put_u16(x.cores_per_socket));
            put_column(b, f, |b, x| b.put_u16(x.sockets_per_node));
            put_column(b, f, |b, x| b.put_u32(x.sock_core_rep_count));
        }
    }
}

/// `u32 cpu_array_count`, then (when non-zero) the counted `cpu_array` and `cpu_array_reps`
/// (also the bytes of the batch launch's cpu groups).
pub mod cpu_array_reps {
    use super::*;

    pub fn parse<'a>(i: &'a [u8], _: V, f: &mut Vec<CpuArrayRep>) -> PResult<'a, ()> {
        let (r, n) = named(prim::u32(i), "cpu_array_count")?;
        let n = n as usize;
        if n == 0 {
            return Ok((r, ()));
        }
        let (r, cpus) = named(column(r, n, 2, prim::u16), "cpu_array")?;
        let (r, reps) = named(column(r, n, 4, prim::u32), "cpu_array_reps")?;
        *f = cpus
            .into_iter()
            .zip(reps)
            .map(|(cpus, reps)| CpuArrayRep { cpus, reps })
            .collect();
        Ok((r, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, _: V, f: &[CpuArrayRep]) {
        prim::put_count(b, f.len());
        if !f.is_empty() {
            put_column(b, f, |b, x| b.put_u16(x.cpus));
            put_column(b, f, |b, x| b.put_u32(x.reps));
        }
    }
}

/// `u32` count, then (when non-zero) the counted `*_mem_alloc` and `*_mem_alloc_rep_count`.
mod mem_alloc_reps {
    use super::*;

    pub fn parse<'a>(i: &'a [u8], _: V, f: &mut Vec<MemAllocRep>) -> PResult<'a, ()> {
        let (r, n) = prim::u32(i)?;
        let n = n as usize;
        if n == 0 {
            return Ok((r, ()));
        }
        let (r, mem) = column(r, n, 8, prim::u64)?;
        let (r, reps) = column(r, n, 4, prim::u32)?;
        *f = mem
            .into_iter()
            .zip(reps)
            .map(|(mem_alloc, rep_count)| MemAllocRep {
                mem_alloc,
                rep_count,
            })
            .collect();
        Ok((r, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, _: V, f: &[MemAllocRep]) {
        prim::put_count(b, f.len());
        if !f.is_empty() {
            put_column(b, f, |b, x| b.put_u64(x.mem_alloc));
            put_column(b, f, |b, x| b.put_u32(x.rep_count));
        }
    }
}

wire! {
    /// A job credential as sent: the signed fields, then `str signature`
    /// (22.05 packs it with packmem of strlen+1 bytes, the same bytes).
    pub struct JobCred {
        pub arg: JobCredArg,
        /// The MUNGE credential text (`MUNGE:...:`) whose payload is
        /// `signed_bytes`.
        pub signature: Option<String>,
    }
}

impl JobCred {
    /// Exactly the packed bytes that the munge signature covers, for version
    /// `v` (the credential's own version, `cred_version` in launch messages).
    pub fn signed_bytes(&self, v: V) -> Vec<u8> {
        self.arg.signed_bytes(v)
    }
}

/// `u16 cred_version` then the credential packed at that version, as in
/// REQUEST_LAUNCH_TASKS and REQUEST_BATCH_JOB_LAUNCH.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct VersionedCred {
    /// The raw version number; one outside the supported releases is sent as
    /// the message's own version.
    pub cred_version: u16,
    pub cred: Box<JobCred>,
}

// irregular: the version read from the input, not the message's, decodes the rest.
impl Wire for VersionedCred {
    fn parse<'a>(i: &'a [u8], _: V) -> PResult<'a, Self> {
        let (r, raw) = named(prim::u16(i), "cred_version")?;
        let Some(cv) = V::from_wire(raw) else {
            let e = WireError::fail(DecodeErrorKind::UnsupportedVersion(raw), i);
            return named(e, "cred_version");
        };
        let (r, cred) = named(JobCred::parse(r, cv), "cred")?;
        let cred = Box::new(cred);
        Ok((
            r,
            Self {
                cred_version: raw,
                cred,
            },
        ))
    }
    fn put<B: BufMut>(&self, b: &mut B, v: V) {
        let cv = V::from_wire(self.cred_version).unwrap_or(v);
        b.put_u16(cv.to_wire());
        self.cred.put(b, cv);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::pack::{decode_exact, encode_to_vec};

    pub(crate) fn sample_cred() -> JobCred {
        let mut bm = BitStr::new(8);
        bm.set(0, true);
        JobCred {
            arg: JobCredArg {
                step_id: StepId {
                    sluid: 0,
                    job_id: 5,
                    step_id: 0,
                    step_het_comp: crate::pack::NO_VAL,
                },
                id: Identity {
                    uid: 1000,
                    gid: 1000,
                    pw_name: Some("alice".into()),
                    gids: vec![1000, 10],
                    gr_names: vec![Some("alice".into()), Some("wheel".into())],
                    ..Default::default()
                },
                job_node_addrs: vec![SlurmAddr::V4([10, 0, 0, 1].into(), 6818)],
                job_partition: Some("debug".into()),
                job_qos: Some("normal".into()),
                tot_core_cnt: 8,
                job_core_bitmap: Some(bm.clone()),
                step_core_bitmap: Some(bm),
                sock_core: vec![SockCoreRep {
                    cores_per_socket: 4,
                    sockets_per_node: 2,
                    sock_core_rep_count: 1,
                }],
                cpu_array: vec![CpuArrayRep { cpus: 8, reps: 1 }],
                job_nhosts: 1,
                job_ntasks: 1,
                job_mem_alloc: vec![MemAllocRep {
                    mem_alloc: 100,
                    rep_count: 1,
                }],
                step_mem_alloc: vec![MemAllocRep {
                    mem_alloc: 50,
                    rep_count: 1,
                }],
                ..Default::default()
            },
            signature: Some("MUNGE:xyz:".into()),
        }
    }

    #[test]
    fn cred_roundtrips_all_versions() {
        let c = sample_cred();
        for v in V::ALL {
            let b = encode_to_vec(&c, v);
            let d = decode_exact::<JobCred>(&b, v).unwrap();
            assert_eq!(encode_to_vec(&d, v), b, "{v}");
            assert!(b.starts_with(&c.signed_bytes(v)));
        }
    }

    #[test]
    fn hidden_switch_info_in_partition() {
        let mut c = sample_cred();
        c.arg.switch_step = Some(vec![0, 0, 0, 100, 1, 2]);
        for v in V::ALL {
            let b = encode_to_vec(&c, v);
            let d = decode_exact::<JobCred>(&b, v).unwrap();
            assert_eq!(d.arg.switch_step, c.arg.switch_step, "{v}");
            assert_eq!(d.arg.job_partition.as_deref(), Some("debug"));
        }
    }

    #[test]
    fn versioned_cred_uses_its_own_version() {
        let vc = VersionedCred {
            cred_version: V::V23_02.to_wire(),
            cred: Box::new(sample_cred()),
        };
        let b = encode_to_vec(&vc, V::V24_11);
        assert_eq!(
            decode_exact::<VersionedCred>(&b, V::V24_11)
                .unwrap()
                .cred_version,
            0x2700
        );
        let bad = VersionedCred {
            cred_version: 7,
            ..vc
        };
        let b = encode_to_vec(&bad, V::V24_11);
        assert_eq!(&b[..2], &[0x2a, 0]);
    }
}
