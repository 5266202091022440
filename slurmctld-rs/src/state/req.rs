//! A job's request as the controller keeps it: the wire struct
//! (`JobDescMsg`, ~1.8 KB inline, nearly all of it unset) split into
//!
//! * the fields read while the job waits or is listed (scheduling, squeue,
//!   scontrol show job, kill filters), kept decoded: the strings in one
//!   allocation, the numbers inline; and
//! * everything else (script, environment, argv, spank env, the many
//!   options only the launch or a restart needs), kept as one sparse
//!   encoding: a tag and the value for each field that differs from
//!   `JobDescMsg::unset()`, decoded when a launch needs it (snapshots
//!   save it as it is).
//!
//! `to_desc` gives back the request exactly as it was handed to `new`.

use slurm_wire::msg::job_desc::{CronEntry, JobDescMsg};
use slurm_wire::pack::{Reader, Wire, Writer};
use slurm_wire::types::StepId;
use slurm_wire::{DecodeError, ProtocolVersion};

/// The version the sparse values are packed in. Only plain values are
/// packed this way (integers, strings, string arrays, the select plugin
/// id, the crontab entry), whose layout is the same in every release.
/// The encoding (this, the tags, the hot lists' order) is saved in state
/// snapshots: changing it needs a persist FORMAT_VERSION bump.
const PACK_V: ProtocolVersion = ProtocolVersion::V24_11;

/// Tags of the two fields packed by hand (after the plain fields' tags).
const TAG_STEP_ID: u8 = 250;
const TAG_CRONTAB: u8 = 251;

/// Hot strings, kept in one buffer: `ends[i]` is where string `i` ends in
/// `buf` (it starts where the previous one ends), `set` has bit `i` when
/// the string is present (an empty string and no string differ).
#[derive(Clone, Default, PartialEq, Eq)]
struct Strs {
    buf: Box<str>,
    ends: [u32; HOT_STRS],
    set: u32,
}

impl Strs {
    fn from_parts(parts: &[Option<String>; HOT_STRS]) -> Strs {
        let total: usize = parts.iter().flatten().map(String::len).sum();
        let mut buf = String::with_capacity(total);
        let mut ends = [0u32; HOT_STRS];
        let mut set = 0u32;
        for (i, p) in parts.iter().enumerate() {
            if let Some(s) = p {
                buf.push_str(s);
                set |= 1 << i;
            }
            // Requests are capped far below 4 GiB (MAX_MSG_SIZE is 1 GiB).
            ends[i] = u32::try_from(buf.len()).unwrap_or(u32::MAX);
        }
        Strs {
            buf: buf.into_boxed_str(),
            ends,
            set,
        }
    }

    fn get(&self, i: usize) -> Option<&str> {
        if self.set & (1 << i) == 0 {
            return None;
        }
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        self.buf.get(start..self.ends[i] as usize)
    }

    fn parts(&self) -> [Option<String>; HOT_STRS] {
        std::array::from_fn(|i| self.get(i).map(str::to_string))
    }
}

impl std::fmt::Debug for Strs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries((0..HOT_STRS).map(|i| self.get(i)))
            .finish()
    }
}

/// The request a job was submitted with (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub struct JobReq {
    strs: Strs,
    pub alloc_sid: u32,
    pub begin_time: i64,
    pub cpu_freq_min: u32,
    pub cpu_freq_max: u32,
    pub cpu_freq_gov: u32,
    pub max_nodes: u32,
    pub min_nodes: u32,
    pub num_tasks: u32,
    pub priority: u32,
    pub time_limit: u32,
    pub mail_type: u16,
    pub ntasks_per_node: u16,
    pub requeue: u16,
    pub shared: u16,
    /// Whether the request carries a script (a batch job).
    has_script: bool,
    /// The other fields, sparse (see the module doc).
    rest: Box<[u8]>,
}

// The hot strings: accessors, and moving them out of / into a request.
macro_rules! hot_strs {
    ($($f:ident),* $(,)?) => {
        const HOT_STRS: usize = [$(stringify!($f)),*].len();

        /// One of the hot strings (for [`JobReq::set_str`]).
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum HotStr { $($f),* }

        impl JobReq {
            $(
                pub fn $f(&self) -> Option<&str> {
                    self.strs.get(HotStr::$f as usize)
                }
            )*
        }

        fn take_strs(d: &mut JobDescMsg) -> [Option<String>; HOT_STRS] {
            [$(d.$f.take()),*]
        }

        fn put_strs(parts: [Option<String>; HOT_STRS], d: &mut JobDescMsg) {
            let [$($f),*] = parts;
            $(d.$f = $f;)*
        }
    };
}

hot_strs!(
    name,
    account,
    wckey,
    qos,
    reservation,
    comment,
    features,
    req_nodes,
    exc_nodes,
    work_dir,
    std_in,
    std_out,
    std_err,
    submit_line,
    alloc_node,
    mail_user,
    tres_per_node,
    tres_per_job,
    tres_per_socket,
    tres_per_task,
    tres_bind,
    tres_freq,
);

// The hot numbers, moved out of / into a request.
macro_rules! hot_nums {
    ($($f:ident),* $(,)?) => {
        fn split_nums(d: &JobDescMsg, strs: Strs, rest: Box<[u8]>) -> JobReq {
            JobReq {
                strs,
                $($f: d.$f,)*
                has_script: d.script.is_some(),
                rest,
            }
        }
        fn put_nums(r: &JobReq, d: &mut JobDescMsg) {
            $(d.$f = r.$f;)*
        }
        fn save_nums(r: &JobReq, w: &mut Writer) {
            $(r.$f.encode(w, PACK_V);)*
        }
        fn load_nums(r: &mut Reader<'_>, d: &mut JobDescMsg) -> Result<(), DecodeError> {
            $(d.$f = Wire::decode(r, PACK_V)?;)*
            Ok(())
        }
    };
}

hot_nums!(
    alloc_sid,
    begin_time,
    cpu_freq_min,
    cpu_freq_max,
    cpu_freq_gov,
    max_nodes,
    min_nodes,
    num_tasks,
    priority,
    time_limit,
    mail_type,
    ntasks_per_node,
    requeue,
    shared,
);

// The cold fields of plain wire types, tagged by their place in this list
// (saved in snapshots: add at the end, or bump the snapshot format).
// `listed` names every field of `JobDescMsg` once (hot, cold, by hand), so
// a field added to the struct and not placed here fails to compile.
macro_rules! cold {
    (cold: [$($f:ident),* $(,)?], by_hand: [$($h:ident),*], hot: [$($x:ident),* $(,)?]) => {
        #[allow(dead_code)]
        fn listed(d: JobDescMsg) {
            let JobDescMsg { $($f: _,)* $($h: _,)* $($x: _,)* } = d;
        }

        fn put_cold(w: &mut Writer, d: &JobDescMsg, t: &JobDescMsg) {
            let mut tag: u8 = 0;
            $(
                if d.$f != t.$f {
                    w.u8(tag);
                    d.$f.encode(w, PACK_V);
                }
                tag += 1;
            )*
            let _ = tag;
        }

        fn get_cold(tag: u8, r: &mut Reader<'_>, d: &mut JobDescMsg) -> Result<bool, DecodeError> {
            let mut i: u8 = 0;
            $(
                if tag == i {
                    d.$f = Wire::decode(r, PACK_V)?;
                    return Ok(true);
                }
                i += 1;
            )*
            let _ = i;
            Ok(false)
        }
    };
}

cold!(
    cold: [
        site_factor, batch_features, cluster_features, clusters, contiguous,
        container, container_id, container_type, core_spec, task_dist,
        kill_on_node_fail, fed_siblings_active, fed_siblings_viable, job_id_str,
        array_inx, burst_buffer, pn_min_cpus, pn_min_memory, mem_update_delay,
        mem_update_margin, oom_kill_step, pn_min_tmp_disk, power_flags, prefer,
        partition, dependency, admin_comment, nice, profile, mcs_label,
        origin_cluster, open_mode, overcommit, acctg_freq, req_context,
        environment, spank_job_env, script, argv, immediate, reboot,
        cpus_per_task, ntasks_per_board, ntasks_per_socket, ntasks_per_core,
        ntasks_per_tres, plane_size, cpu_bind_type, mem_bind_type, cpu_bind,
        mem_bind, time_min, min_cpus, max_cpus, job_size_str, boards_per_node,
        sockets_per_board, sockets_per_node, cores_per_socket, threads_per_core,
        user_id, group_id, alloc_resp_port, alloc_tls_cert, resp_host,
        other_port, resv_port_cnt, network, end_time, deadline, licenses,
        restart_cnt, warn_flags, warn_signal, warn_time, req_switch, wait4switch,
        select_jobinfo, wait_all_nodes, bitflags, delay_boot, extra, x11,
        x11_magic_cookie, x11_target, x11_target_port, cpus_per_tres,
        mem_per_tres, segment_size,
    ],
    by_hand: [step_id, crontab_entry],
    hot: [
        name, account, wckey, qos, reservation, comment, features, req_nodes,
        exc_nodes, work_dir, std_in, std_out, std_err, submit_line, alloc_node,
        mail_user, tres_per_node, tres_per_job, tres_per_socket, tres_per_task,
        tres_bind, tres_freq, alloc_sid, begin_time, cpu_freq_min, cpu_freq_max,
        cpu_freq_gov, max_nodes, min_nodes, num_tasks, priority, time_limit,
        mail_type, ntasks_per_node, requeue, shared,
    ]
);

fn put_step_id(w: &mut Writer, s: &StepId) {
    w.u64(s.sluid);
    w.u32(s.job_id);
    w.u32(s.step_id);
    w.u32(s.step_het_comp);
}

fn get_step_id(r: &mut Reader<'_>) -> Result<StepId, DecodeError> {
    Ok(StepId {
        sluid: r.u64()?,
        job_id: r.u32()?,
        step_id: r.u32()?,
        step_het_comp: r.u32()?,
    })
}

impl JobReq {
    pub fn new(mut d: JobDescMsg) -> JobReq {
        let strs = Strs::from_parts(&take_strs(&mut d));
        let t = JobDescMsg::unset();
        let mut w = Writer::new();
        put_cold(&mut w, &d, &t);
        if d.step_id != t.step_id {
            w.u8(TAG_STEP_ID);
            put_step_id(&mut w, &d.step_id);
        }
        if let Some(c) = &d.crontab_entry {
            w.u8(TAG_CRONTAB);
            c.encode(&mut w, PACK_V);
        }
        split_nums(&d, strs, w.into_vec().into_boxed_slice())
    }

    /// The whole request, as it was handed to [`JobReq::new`] (with the
    /// changes made since through this type).
    pub fn to_desc(&self) -> Result<JobDescMsg, DecodeError> {
        let mut d = JobDescMsg::unset();
        let mut r = Reader::new(&self.rest);
        while r.remaining() > 0 {
            let at = r.position();
            let tag = r.u8()?;
            match tag {
                TAG_STEP_ID => d.step_id = get_step_id(&mut r)?,
                TAG_CRONTAB => d.crontab_entry = Some(CronEntry::decode(&mut r, PACK_V)?),
                _ => {
                    if !get_cold(tag, &mut r, &mut d)? {
                        return Err(DecodeError::new(
                            slurm_wire::DecodeErrorKind::BadValue {
                                what: "job request field tag",
                                value: u64::from(tag),
                            },
                            at,
                        ));
                    }
                }
            }
        }
        put_strs(self.strs.parts(), &mut d);
        put_nums(self, &mut d);
        Ok(d)
    }

    /// The hot fields alone, the rest unset: what is left to save of a
    /// request whose encoded rest does not decode.
    pub fn hot_desc(&self) -> JobDescMsg {
        let mut d = JobDescMsg::unset();
        put_strs(self.strs.parts(), &mut d);
        put_nums(self, &mut d);
        d
    }

    /// Whether the request carries a batch script.
    pub fn has_script(&self) -> bool {
        self.has_script
    }

    /// Replaces one hot string.
    pub fn set_str(&mut self, f: HotStr, v: Option<&str>) {
        let mut parts = self.strs.parts();
        parts[f as usize] = v.map(str::to_string);
        self.strs = Strs::from_parts(&parts);
    }

    /// Changes fields kept encoded (rare: array environment, tests): the
    /// request is decoded, changed and split again.
    pub fn modify(&mut self, f: impl FnOnce(&mut JobDescMsg)) -> Result<(), DecodeError> {
        let mut d = self.to_desc()?;
        f(&mut d);
        *self = JobReq::new(d);
        Ok(())
    }

    /// The saved form (state snapshots, format 5+): the hot fields, then
    /// the encoded rest as it is, so a save decodes nothing.
    pub fn save(&self, w: &mut Writer) {
        for i in 0..HOT_STRS {
            w.str(self.strs.get(i));
        }
        save_nums(self, w);
        w.bool(self.has_script);
        w.mem(&self.rest);
    }

    /// Reads what [`JobReq::save`] wrote; the rest is checked to decode.
    pub fn load(r: &mut Reader<'_>) -> Result<JobReq, DecodeError> {
        let mut parts: [Option<String>; HOT_STRS] = Default::default();
        for p in parts.iter_mut() {
            *p = r.str()?;
        }
        let mut d = JobDescMsg::unset();
        load_nums(r, &mut d)?;
        let mut req = split_nums(&d, Strs::from_parts(&parts), Box::default());
        req.has_script = r.bool()?;
        req.rest = r.mem()?.into();
        req.to_desc()?;
        Ok(req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbitrary::{Arbitrary, Unstructured};

    fn full() -> JobDescMsg {
        JobDescMsg {
            name: Some("wrap".into()),
            account: Some(String::new()),
            tres_freq: Some("gpu:high".into()),
            script: Some("#!/bin/sh\ntrue\n".into()),
            environment: vec![Some("A=1".into()), None, Some("B=".into())],
            argv: vec![Some("x".into())],
            spank_job_env: vec![Some("S=2".into())],
            step_id: StepId::job(42),
            crontab_entry: Some(CronEntry {
                flags: 3,
                cronspec: Some("* * * * *".into()),
                ..Default::default()
            }),
            min_nodes: 2,
            shared: 1,
            begin_time: -5,
            power_flags: 7,
            ..JobDescMsg::unset()
        }
    }

    #[test]
    fn round_trip_keeps_every_field() {
        let d = full();
        let r = JobReq::new(d.clone());
        assert_eq!(r.to_desc().unwrap(), d);
        assert_eq!(r.name(), Some("wrap"));
        assert_eq!(r.account(), Some(""));
        assert_eq!(r.wckey(), None);
        assert_eq!(r.tres_freq(), Some("gpu:high"));
        assert!(r.has_script());
        assert_eq!(r.min_nodes, 2);
    }

    #[test]
    fn round_trip_of_arbitrary_requests() {
        // Random requests (xorshift bytes shaped by `arbitrary`), every
        // field in play, the version-gated ones included.
        let mut seed = 0x1234_5678_u64;
        let mut checked = 0;
        for _ in 0..300 {
            let bytes: Vec<u8> = (0..4096)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    seed as u8
                })
                .collect();
            let Ok(d) = JobDescMsg::arbitrary(&mut Unstructured::new(&bytes)) else {
                continue;
            };
            assert_eq!(JobReq::new(d.clone()).to_desc().unwrap(), d);
            checked += 1;
        }
        assert!(checked > 50, "only {checked} requests checked");
    }

    #[test]
    fn unset_request_keeps_nothing_encoded() {
        let r = JobReq::new(JobDescMsg::unset());
        assert!(r.rest.is_empty());
        assert_eq!(r.to_desc().unwrap(), JobDescMsg::unset());
    }

    #[test]
    fn set_str_and_modify() {
        let mut r = JobReq::new(full());
        r.set_str(HotStr::wckey, Some("wk"));
        r.set_str(HotStr::name, None);
        assert_eq!((r.wckey(), r.name()), (Some("wk"), None));
        assert_eq!(r.tres_freq(), Some("gpu:high"));
        r.modify(|d| d.environment.push(Some("C=3".into())))
            .unwrap();
        let d = r.to_desc().unwrap();
        assert_eq!(d.environment.len(), 4);
        assert_eq!(d.wckey.as_deref(), Some("wk"));
    }

    #[test]
    fn save_and_load_round_trip() {
        let r = JobReq::new(full());
        let mut w = Writer::new();
        r.save(&mut w);
        let b = w.into_vec();
        let mut rd = Reader::new(&b);
        assert_eq!(JobReq::load(&mut rd).unwrap(), r);
        assert_eq!(rd.remaining(), 0);
        // A rest that does not decode is refused at load.
        let mut bad = JobReq::new(full());
        bad.rest = vec![TAG_CRONTAB].into_boxed_slice();
        let mut w = Writer::new();
        bad.save(&mut w);
        let b = w.into_vec();
        assert!(JobReq::load(&mut Reader::new(&b)).is_err());
    }

    #[test]
    fn corrupt_rest_is_an_error() {
        let mut r = JobReq::new(full());
        r.rest = vec![200u8].into_boxed_slice();
        assert!(r.to_desc().is_err());
        r.rest = vec![TAG_STEP_ID, 1].into_boxed_slice();
        assert!(r.to_desc().is_err());
    }
}
