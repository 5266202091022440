//! The job credential (`slurm_cred_t`, cred/munge): the fields slurmctld
//! signs, then the signature (a MUNGE credential whose payload is exactly
//! the packed field bytes).
//!
//! Layout by release: 22.05 identity inline (same bytes as `pack_identity`);
//! 23.02 adds job_end_time, job_extra, job_oversubscribe, job_start_time,
//! job_licenses and may hide the switch step info after job_partition's NUL;
//! 23.11 adds job_node_addrs; 24.11 moves switch info to a length-prefixed
//! trailer; 26.05 adds job_exclusive and job_qos.

use crate::error::{DecodeError, DecodeErrorKind, Result};
use crate::pack::{Reader, Wire, Writer};
use crate::types::{BitStr, SlurmAddr, StepId};
use crate::wire_struct;
use crate::ProtocolVersion;

use super::gres::{GresJobStateList, GresStateList};

type V = ProtocolVersion;

wire_struct! {
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

/// The signed part of the credential (`slurm_cred_arg_t` plus `ctime`).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct JobCredArg {
    pub step_id: StepId,
    pub id: Identity,
    pub job_gres_list: GresJobStateList,
    pub step_gres_list: GresStateList,
    pub job_core_spec: u16,
    pub job_account: Option<String>,
    /// 23.11+.
    pub job_node_addrs: Vec<SlurmAddr>,
    pub job_alias_list: Option<String>,
    pub job_comment: Option<String>,
    pub job_constraints: Option<String>,
    /// 23.02+.
    pub job_end_time: i64,
    /// 23.02+.
    pub job_extra: Option<String>,
    /// 26.05+.
    pub job_exclusive: u16,
    /// 23.02+.
    pub job_oversubscribe: u16,
    pub job_partition: Option<String>,
    /// 26.05+.
    pub job_qos: Option<String>,
    pub job_reservation: Option<String>,
    pub job_restart_cnt: u16,
    /// 23.02+.
    pub job_start_time: i64,
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
    pub sock_core: Vec<SockCoreRep>,
    pub cpu_array: Vec<CpuArrayRep>,
    pub job_nhosts: u32,
    pub job_ntasks: u32,
    pub job_hostlist: Option<String>,
    /// 23.02+.
    pub job_licenses: Option<String>,
    pub job_mem_alloc: Vec<MemAllocRep>,
    pub step_mem_alloc: Vec<MemAllocRep>,
    pub job_selinux_context: Option<String>,
    /// Opaque switch step info (`switch_g_pack_stepinfo`: plugin id + data).
    /// 24.11+: a `u32` length then these bytes (None = length 0).
    /// 23.02..24.05: hidden after job_partition's NUL inside the same packstr
    /// (None = a plain string). 22.05 never sends it, but the hidden form
    /// reads the same there.
    pub switch_step: Option<Vec<u8>>,
}

fn bad(what: &'static str, value: u64, at: usize) -> DecodeError {
    DecodeError::new(DecodeErrorKind::BadValue { what, value }, at)
}

/// A u16-or-u32 count then parallel arrays, each with its own u32 count that
/// must match (upstream rejects a mismatch).
fn decode_len_check(r: &mut Reader<'_>, want: usize, elem: usize) -> Result<usize> {
    let at = r.position();
    let n = r.count(elem)?;
    if n != want {
        return Err(bad("array length differs from its count", n as u64, at));
    }
    Ok(n)
}

impl JobCredArg {
    fn decode_partition(&mut self, r: &mut Reader<'_>, v: V) -> Result<()> {
        if v >= V::V24_11 {
            self.job_partition = r.str()?;
            return Ok(());
        }
        let at = r.position();
        let raw = r.mem()?;
        let Some((&last, body)) = raw.split_last() else {
            return Ok(());
        };
        if last != 0 {
            return Err(DecodeError::new(DecodeErrorKind::StringNotTerminated, at));
        }
        let (name, hidden) = match body.iter().position(|&b| b == 0) {
            None => (body, None),
            Some(i) => (
                body.get(..i).unwrap_or_default(),
                Some(body.get(i + 1..).unwrap_or_default().to_vec()),
            ),
        };
        let name = std::str::from_utf8(name)
            .map_err(|_| DecodeError::new(DecodeErrorKind::InvalidUtf8, at))?;
        self.job_partition = Some(name.to_owned());
        self.switch_step = hidden;
        Ok(())
    }

    fn encode_partition(&self, w: &mut Writer, v: V) {
        match (&self.switch_step, v >= V::V24_11) {
            (Some(sw), false) => {
                let name = self.job_partition.as_deref().unwrap_or("");
                // A NUL inside the name would end it early on decode; the
                // tail then reads as part of the hidden data, which
                // re-encodes to the same bytes.
                w.count(name.len() + 1 + sw.len() + 1);
                w.bytes(name.as_bytes());
                w.u8(0);
                w.bytes(sw);
                w.u8(0);
            }
            _ => w.str(self.job_partition.as_deref()),
        }
    }

    /// Exactly the bytes the credential signature covers.
    pub fn signed_bytes(&self, v: V) -> Vec<u8> {
        let mut w = Writer::new();
        self.encode(&mut w, v);
        w.into_vec()
    }
}

impl Wire for JobCredArg {
    fn decode(r: &mut Reader<'_>, v: V) -> Result<Self> {
        let mut c = Self {
            step_id: field!(StepId::decode(r, v), "step_id"),
            id: field!(Identity::decode(r, v), "id"),
            job_gres_list: field!(GresJobStateList::decode(r, v), "job_gres_list"),
            step_gres_list: field!(GresStateList::decode(r, v), "step_gres_list"),
            job_core_spec: field!(r.u16(), "job_core_spec"),
            job_account: field!(r.str(), "job_account"),
            ..Default::default()
        };
        if v >= V::V23_11 {
            let n = field!(r.count(2), "job_node_addrs");
            let mut a = Vec::with_capacity(n.min(1024));
            for _ in 0..n {
                a.push(field!(SlurmAddr::decode(r, v), "job_node_addrs"));
            }
            c.job_node_addrs = a;
        }
        c.job_alias_list = field!(r.str(), "job_alias_list");
        c.job_comment = field!(r.str(), "job_comment");
        c.job_constraints = field!(r.str(), "job_constraints");
        if v >= V::V23_02 {
            c.job_end_time = field!(r.time(), "job_end_time");
            c.job_extra = field!(r.str(), "job_extra");
            if v >= V::V26_05 {
                c.job_exclusive = field!(r.u16(), "job_exclusive");
            }
            c.job_oversubscribe = field!(r.u16(), "job_oversubscribe");
        }
        field!(c.decode_partition(r, v), "job_partition");
        if v >= V::V26_05 {
            c.job_qos = field!(r.str(), "job_qos");
        }
        c.job_reservation = field!(r.str(), "job_reservation");
        c.job_restart_cnt = field!(r.u16(), "job_restart_cnt");
        if v >= V::V23_02 {
            c.job_start_time = field!(r.time(), "job_start_time");
        }
        c.job_std_err = field!(r.str(), "job_std_err");
        c.job_std_in = field!(r.str(), "job_std_in");
        c.job_std_out = field!(r.str(), "job_std_out");
        c.step_hostlist = field!(r.str(), "step_hostlist");
        c.job_x11 = field!(r.u16(), "job_x11");
        c.ctime = field!(r.time(), "ctime");
        c.tot_core_cnt = field!(r.u32(), "tot_core_cnt");
        c.job_core_bitmap = field!(Option::<BitStr>::decode(r, v), "job_core_bitmap");
        c.step_core_bitmap = field!(Option::<BitStr>::decode(r, v), "step_core_bitmap");

        let n = usize::from(field!(r.u16(), "core_array_size"));
        if n > 0 {
            let cps = field!(decode_u16s(r, n), "cores_per_socket");
            let spn = field!(decode_u16s(r, n), "sockets_per_node");
            let reps = field!(decode_u32s(r, n), "sock_core_rep_count");
            c.sock_core = cps
                .into_iter()
                .zip(spn)
                .zip(reps)
                .map(|((a, b), c)| SockCoreRep {
                    cores_per_socket: a,
                    sockets_per_node: b,
                    sock_core_rep_count: c,
                })
                .collect();
        }
        let n = field!(r.u32(), "cpu_array_count") as usize;
        if n > 0 {
            let cpus = field!(decode_u16s(r, n), "cpu_array");
            let reps = field!(decode_u32s(r, n), "cpu_array_reps");
            c.cpu_array = cpus
                .into_iter()
                .zip(reps)
                .map(|(cpus, reps)| CpuArrayRep { cpus, reps })
                .collect();
        }
        c.job_nhosts = field!(r.u32(), "job_nhosts");
        c.job_ntasks = field!(r.u32(), "job_ntasks");
        c.job_hostlist = field!(r.str(), "job_hostlist");
        if v >= V::V23_02 {
            c.job_licenses = field!(r.str(), "job_licenses");
        }
        c.job_mem_alloc = field!(decode_mem(r), "job_mem_alloc");
        c.step_mem_alloc = field!(decode_mem(r), "step_mem_alloc");
        c.job_selinux_context = field!(r.str(), "job_selinux_context");
        if v >= V::V24_11 {
            let sw = field!(r.mem(), "switch_step");
            c.switch_step = (!sw.is_empty()).then(|| sw.to_vec());
        }
        Ok(c)
    }

    fn encode(&self, w: &mut Writer, v: V) {
        self.step_id.encode(w, v);
        self.id.encode(w, v);
        self.job_gres_list.encode(w, v);
        self.step_gres_list.encode(w, v);
        w.u16(self.job_core_spec);
        w.str(self.job_account.as_deref());
        if v >= V::V23_11 {
            w.count(self.job_node_addrs.len());
            for a in &self.job_node_addrs {
                a.encode(w, v);
            }
        }
        w.str(self.job_alias_list.as_deref());
        w.str(self.job_comment.as_deref());
        w.str(self.job_constraints.as_deref());
        if v >= V::V23_02 {
            w.time(self.job_end_time);
            w.str(self.job_extra.as_deref());
            if v >= V::V26_05 {
                w.u16(self.job_exclusive);
            }
            w.u16(self.job_oversubscribe);
        }
        self.encode_partition(w, v);
        if v >= V::V26_05 {
            w.str(self.job_qos.as_deref());
        }
        w.str(self.job_reservation.as_deref());
        w.u16(self.job_restart_cnt);
        if v >= V::V23_02 {
            w.time(self.job_start_time);
        }
        w.str(self.job_std_err.as_deref());
        w.str(self.job_std_in.as_deref());
        w.str(self.job_std_out.as_deref());
        w.str(self.step_hostlist.as_deref());
        w.u16(self.job_x11);
        w.time(self.ctime);
        w.u32(self.tot_core_cnt);
        self.job_core_bitmap.encode(w, v);
        self.step_core_bitmap.encode(w, v);

        let sc = self
            .sock_core
            .get(..self.sock_core.len().min(usize::from(u16::MAX)))
            .unwrap_or_default();
        w.u16(sc.len() as u16);
        if !sc.is_empty() {
            w.count(sc.len());
            sc.iter().for_each(|x| w.u16(x.cores_per_socket));
            w.count(sc.len());
            sc.iter().for_each(|x| w.u16(x.sockets_per_node));
            w.count(sc.len());
            sc.iter().for_each(|x| w.u32(x.sock_core_rep_count));
        }
        w.count(self.cpu_array.len());
        if !self.cpu_array.is_empty() {
            w.count(self.cpu_array.len());
            self.cpu_array.iter().for_each(|x| w.u16(x.cpus));
            w.count(self.cpu_array.len());
            self.cpu_array.iter().for_each(|x| w.u32(x.reps));
        }
        w.u32(self.job_nhosts);
        w.u32(self.job_ntasks);
        w.str(self.job_hostlist.as_deref());
        if v >= V::V23_02 {
            w.str(self.job_licenses.as_deref());
        }
        encode_mem(w, &self.job_mem_alloc);
        encode_mem(w, &self.step_mem_alloc);
        w.str(self.job_selinux_context.as_deref());
        if v >= V::V24_11 {
            w.mem(self.switch_step.as_deref().unwrap_or_default());
        }
    }
}

fn decode_u16s(r: &mut Reader<'_>, n: usize) -> Result<Vec<u16>> {
    decode_len_check(r, n, 2)?;
    (0..n).map(|_| r.u16()).collect()
}

fn decode_u32s(r: &mut Reader<'_>, n: usize) -> Result<Vec<u32>> {
    decode_len_check(r, n, 4)?;
    (0..n).map(|_| r.u32()).collect()
}

fn decode_mem(r: &mut Reader<'_>) -> Result<Vec<MemAllocRep>> {
    let n = r.u32()? as usize;
    if n == 0 {
        return Ok(Vec::new());
    }
    decode_len_check(r, n, 8)?;
    let mem: Vec<u64> = (0..n).map(|_| r.u64()).collect::<Result<_>>()?;
    let reps = decode_u32s(r, n)?;
    Ok(mem
        .into_iter()
        .zip(reps)
        .map(|(mem_alloc, rep_count)| MemAllocRep {
            mem_alloc,
            rep_count,
        })
        .collect())
}

fn encode_mem(w: &mut Writer, m: &[MemAllocRep]) {
    w.count(m.len());
    if !m.is_empty() {
        w.count(m.len());
        m.iter().for_each(|x| w.u64(x.mem_alloc));
        w.count(m.len());
        m.iter().for_each(|x| w.u32(x.rep_count));
    }
}

/// A job credential as sent: the signed fields, then `str signature`
/// (22.05 packs it with packmem of strlen+1 bytes, the same bytes).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct JobCred {
    pub arg: JobCredArg,
    /// The MUNGE credential text (`MUNGE:...:`) whose payload is
    /// `signed_bytes`.
    pub signature: Option<String>,
}

impl JobCred {
    /// Exactly the packed bytes that the munge signature covers, for version
    /// `v` (the credential's own version, `cred_version` in launch messages).
    pub fn signed_bytes(&self, v: V) -> Vec<u8> {
        self.arg.signed_bytes(v)
    }
}

impl Wire for JobCred {
    fn decode(r: &mut Reader<'_>, v: V) -> Result<Self> {
        Ok(Self {
            arg: JobCredArg::decode(r, v)?,
            signature: r.str().map_err(|e| e.within("signature"))?,
        })
    }
    fn encode(&self, w: &mut Writer, v: V) {
        self.arg.encode(w, v);
        w.str(self.signature.as_deref());
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

impl Wire for VersionedCred {
    fn decode(r: &mut Reader<'_>, _: V) -> Result<Self> {
        let at = r.position();
        let raw = r.u16().map_err(|e| e.within("cred_version"))?;
        let cv = V::from_wire(raw).ok_or_else(|| {
            DecodeError::new(DecodeErrorKind::UnsupportedVersion(raw), at).within("cred_version")
        })?;
        Ok(Self {
            cred_version: raw,
            cred: Box::new(JobCred::decode(r, cv).map_err(|e| e.within("cred"))?),
        })
    }
    fn encode(&self, w: &mut Writer, v: V) {
        let cv = V::from_wire(self.cred_version).unwrap_or(v);
        w.u16(cv.to_wire());
        self.cred.encode(w, cv);
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
