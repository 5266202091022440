//! The controller's accounting messages against layouts written out field by field from
//! upstream's pack functions (`slurmdbd_pack.c` of every release branch, with `pack_step_id`,
//! `jobacctinfo_pack`, `slurm_pack_list`), not from our encoder.
//!
//! [`check`] is the one assertion: a frame decodes to the value in its release and the value
//! encodes back to the frame. A golden capture of a message takes the same path.

use super::acct::*;
use super::tests::{be16, be32, be64, packstr, prefixed};
use super::*;
use crate::msg::jobacct::{JobAcctInfo, JobAcctInfoData};
use crate::msg::slurmdb::SlurmdbTresRec;
use crate::pack::NO_VAL;
use crate::types::StepId;
use crate::{DecodeErrorKind, ProtocolVersion as V};
use arbitrary::Unstructured;
use proptest::prelude::*;
use std::collections::BTreeSet;

fn s(x: &str) -> Option<String> {
    Some(x.into())
}

/// `u16 number | body` with its length prefix.
pub(super) fn frame(number: u16, body: &[u8]) -> Vec<u8> {
    let mut p = Vec::new();
    be16(&mut p, number);
    p.extend_from_slice(body);
    prefixed(p)
}

/// The frame of `number` and `body` decodes to `want` in `v`, and `want` encodes to it.
pub(super) fn check(v: V, number: u16, body: &[u8], want: &DbdMessage) {
    let f = frame(number, body);
    let got = DbdMessage::decode_framed(v, &f).unwrap_or_else(|e| panic!("{v}: {e}"));
    assert_eq!(&got, want, "{v}");
    assert_eq!(want.encode(v).unwrap(), f, "{v}");
}

#[test]
fn register_ctld_per_release() {
    for v in V::ALL {
        let mut b = Vec::new();
        be16(&mut b, 0); // dimensions
        be32(&mut b, 0x4); // flags
        if v < V::V24_05 {
            be32(&mut b, NO_VAL); // plugin_id_select, as a 24.05+ controller packs it
        }
        be16(&mut b, 6817); // port
        if v >= V::V25_11 {
            be32(&mut b, 3); // cluster_id
        }
        let want = DbdRegisterCtldMsg {
            dimensions: 0,
            flags: 0x4,
            plugin_id_select: if v < V::V24_05 { NO_VAL } else { 0 },
            port: 6817,
            cluster_id: if v >= V::V25_11 { 3 } else { 0 },
        };
        let len = match v {
            _ if v < V::V24_05 => 12,
            _ if v < V::V25_11 => 8,
            _ => 12,
        };
        assert_eq!(b.len(), len, "{v}");
        check(v, 1434, &b, &DbdMessage::RegisterCtld(want));
    }
    // A 22.05 controller sends its select plugin's id (cons_tres: 109).
    let m = DbdMessage::decode_framed(
        V::V22_05,
        &frame(1434, &[0, 0, 0, 0, 0, 0, 0, 0, 0, 109, 0x1a, 0xa1]),
    )
    .unwrap();
    let DbdMessage::RegisterCtld(r) = m else {
        panic!("{m:?}")
    };
    assert_eq!((r.plugin_id_select, r.port), (109, 6817));
}

#[test]
fn cluster_tres_and_flush_jobs_share_a_body() {
    for v in V::ALL {
        let mut b = Vec::new();
        packstr(&mut b, "n[1-4]"); // cluster_nodes
        be64(&mut b, 1_700_000_000); // event_time
        packstr(&mut b, "1=16,2=64000,3=0,4=4,5=16"); // tres_str
        let m = DbdClusterTresMsg {
            cluster_nodes: s("n[1-4]"),
            event_time: 1_700_000_000,
            tres_str: s("1=16,2=64000,3=0,4=4,5=16"),
        };
        check(v, 1407, &b, &DbdMessage::ClusterTres(m.clone()));
        check(v, 1408, &b, &DbdMessage::FlushJobs(m));
    }
}

#[test]
fn node_state_per_release() {
    for v in V::ALL {
        let mut b = Vec::new();
        packstr(&mut b, "n1"); // hostlist
        if v >= V::V23_11 {
            packstr(&mut b, "extra"); // extra
            packstr(&mut b, "i-0abc"); // instance_id
            be32(&mut b, 0); // instance_type: NULL
        }
        packstr(&mut b, "disk"); // reason
        be32(&mut b, 1000); // reason_uid
        be16(&mut b, node_state::DOWN); // new_state
        be64(&mut b, 1_700_000_001); // event_time
        be32(&mut b, 0x0000_0201); // state: DOWN + DRAIN
        packstr(&mut b, "1=4,2=8000"); // tres_str
        let new = v >= V::V23_11;
        let want = DbdNodeStateMsg {
            hostlist: s("n1"),
            extra: if new { s("extra") } else { None },
            instance_id: if new { s("i-0abc") } else { None },
            instance_type: None,
            reason: s("disk"),
            reason_uid: 1000,
            new_state: 1,
            event_time: 1_700_000_001,
            state: 0x201,
            tres_str: s("1=4,2=8000"),
        };
        check(v, 1432, &b, &DbdMessage::NodeState(want));
    }
}

fn job_start_body(v: V) -> Vec<u8> {
    let b = &mut Vec::new();
    packstr(b, "research"); // account
    be32(b, 2); // alloc_nodes
    be32(b, 3); // array_job_id
    be32(b, 4); // array_max_tasks
    be32(b, 5); // array_task_id
    packstr(b, "0x1e"); // array_task_str
    be32(b, 6); // array_task_pending
    be32(b, 7); // assoc_id
    packstr(b, "fast"); // constraints
    be32(b, 0); // container: NULL
    be32(b, 8); // db_flags
    be64(b, 9); // db_index
    be64(b, 1_700_000_010); // eligible_time
    if v >= V::V26_05 {
        b.push(1); // exclusive
    }
    be32(b, 11); // gid
    packstr(b, "gpu:2"); // gres_used
    be32(b, 12); // job_id
    be32(b, 1); // job_state
    be32(b, 13); // state_reason_prev
    if v >= V::V23_02 {
        packstr(b, "lic:1"); // licenses
    }
    packstr(b, "mcs"); // mcs_label
    packstr(b, "job"); // name
    packstr(b, "n[1-2]"); // nodes
    packstr(b, "0-1"); // node_inx
    be32(b, 14); // het_job_id
    be32(b, 15); // het_job_offset
    if v >= V::V26_05 {
        b.push(2); // oversubscribe
    }
    packstr(b, "debug"); // partition
    be32(b, 16); // priority
    be32(b, 17); // qos_id
    if v >= V::V24_11 {
        packstr(b, "normal"); // qos_req
    }
    be32(b, 18); // req_cpus
    be64(b, 19); // req_mem
    if v >= V::V24_11 {
        be16(b, 20); // restart_cnt
    }
    be32(b, 21); // resv_id
    if v >= V::V25_05 {
        packstr(b, "maint"); // resv_req
        be16(b, 22); // segment_size
    }
    if v >= V::V26_05 {
        be64(b, 23); // sluid
    }
    be64(b, 1_700_000_024); // start_time
    if v >= V::V24_05 {
        packstr(b, "err"); // std_err
        packstr(b, "in"); // std_in
        packstr(b, "out"); // std_out
    }
    packstr(b, "sbatch job.sh"); // submit_line
    be64(b, 1_700_000_025); // submit_time
    be32(b, 26); // timelimit
    packstr(b, "1=2,2=2000,4=2"); // tres_alloc_str
    packstr(b, "1=2,2=2000,4=1"); // tres_req_str
    be32(b, 27); // uid
    be32(b, 0); // wckey: NULL
    packstr(b, "/home/alice"); // work_dir
    packstr(b, "eh"); // env_hash
    packstr(b, "sh"); // script_hash
    std::mem::take(b)
}

/// What `job_start_body(v)` carries; the fields `v` does not have stay at their default.
fn job_start_value(v: V) -> DbdJobStartMsg {
    let mut m = DbdJobStartMsg {
        account: s("research"),
        alloc_nodes: 2,
        array_job_id: 3,
        array_max_tasks: 4,
        array_task_id: 5,
        array_task_str: s("0x1e"),
        array_task_pending: 6,
        assoc_id: 7,
        constraints: s("fast"),
        container: None,
        db_flags: 8,
        db_index: 9,
        eligible_time: 1_700_000_010,
        exclusive: 1,
        gid: 11,
        gres_used: s("gpu:2"),
        job_id: 12,
        job_state: 1,
        state_reason_prev: 13,
        licenses: s("lic:1"),
        mcs_label: s("mcs"),
        name: s("job"),
        nodes: s("n[1-2]"),
        node_inx: s("0-1"),
        het_job_id: 14,
        het_job_offset: 15,
        oversubscribe: 2,
        partition: s("debug"),
        priority: 16,
        qos_id: 17,
        qos_req: s("normal"),
        req_cpus: 18,
        req_mem: 19,
        restart_cnt: 20,
        resv_id: 21,
        resv_req: s("maint"),
        segment_size: 22,
        sluid: 23,
        start_time: 1_700_000_024,
        std_err: s("err"),
        std_in: s("in"),
        std_out: s("out"),
        submit_line: s("sbatch job.sh"),
        submit_time: 1_700_000_025,
        timelimit: 26,
        tres_alloc_str: s("1=2,2=2000,4=2"),
        tres_req_str: s("1=2,2=2000,4=1"),
        uid: 27,
        wckey: None,
        work_dir: s("/home/alice"),
        env_hash: s("eh"),
        script_hash: s("sh"),
    };
    if v < V::V26_05 {
        (m.exclusive, m.oversubscribe, m.sluid) = (0, 0, 0);
    }
    if v < V::V25_05 {
        (m.resv_req, m.segment_size) = (None, 0);
    }
    if v < V::V24_11 {
        (m.qos_req, m.restart_cnt) = (None, 0);
    }
    if v < V::V24_05 {
        (m.std_err, m.std_in, m.std_out) = (None, None, None);
    }
    if v < V::V23_02 {
        m.licenses = None;
    }
    m
}

#[test]
fn job_start_per_release() {
    let mut sizes = Vec::new();
    for v in V::ALL {
        let b = job_start_body(v);
        sizes.push(b.len());
        check(
            v,
            1425,
            &b,
            &DbdMessage::JobStart(Box::new(job_start_value(v))),
        );
    }
    // 23.11 and 25.11 changed nothing here; every other release added fields.
    let same: Vec<bool> = sizes.windows(2).map(|w| w[0] == w[1]).collect();
    assert_eq!(same, [false, true, false, false, false, true, false]);
}

fn id_rc_body(job_id: u32, db_index: u64, rc: u32) -> Vec<u8> {
    let mut b = Vec::new();
    be32(&mut b, job_id); // job_id
    be64(&mut b, db_index); // db_index
    be64(&mut b, 0x2); // flags
    be32(&mut b, rc); // return_code
    b
}

fn id_rc_value(job_id: u32, db_index: u64, rc: u32) -> DbdIdRcMsg {
    DbdIdRcMsg {
        job_id,
        db_index,
        flags: 0x2,
        return_code: rc,
    }
}

#[test]
fn id_rc_job_heavy_and_suspend_are_the_same_everywhere() {
    for v in V::ALL {
        check(
            v,
            1426,
            &id_rc_body(12, 900, 0),
            &DbdMessage::IdRc(id_rc_value(12, 900, 0)),
        );

        let mut b = Vec::new();
        packstr(&mut b, "PATH=/bin\n"); // env
        packstr(&mut b, "eh"); // env_hash
        packstr(&mut b, "#!/bin/sh\ntrue\n"); // script
        packstr(&mut b, "sh"); // script_hash
        let m = DbdJobHeavyMsg {
            env: s("PATH=/bin\n"),
            env_hash: s("eh"),
            script: s("#!/bin/sh\ntrue\n"),
            script_hash: s("sh"),
        };
        check(v, 1498, &b, &DbdMessage::JobHeavy(m));

        let mut b = Vec::new();
        be32(&mut b, 7); // assoc_id
        be64(&mut b, 900); // db_index
        be32(&mut b, 12); // job_id
        be32(&mut b, 2); // job_state: JOB_SUSPENDED
        be64(&mut b, 1_700_000_000); // submit_time
        be64(&mut b, 1_700_000_100); // suspend_time
        let m = DbdJobSuspendMsg {
            assoc_id: 7,
            db_index: 900,
            job_id: 12,
            job_state: 2,
            submit_time: 1_700_000_000,
            suspend_time: 1_700_000_100,
        };
        check(v, 1427, &b, &DbdMessage::JobSuspend(m));
    }
}

#[test]
fn job_complete_per_release() {
    for v in V::ALL {
        let mut b = Vec::new();
        be32(&mut b, 0); // admin_comment: NULL
        be32(&mut b, 7); // assoc_id
        packstr(&mut b, "c"); // comment
        be64(&mut b, 900); // db_index
        be32(&mut b, 256); // derived_ec
        be64(&mut b, 1_700_000_200); // end_time
        be32(&mut b, 9); // exit_code
        if v >= V::V23_02 {
            packstr(&mut b, "x"); // extra
            packstr(&mut b, "n2"); // failed_node
        }
        be32(&mut b, 12); // job_id
        be32(&mut b, 7); // job_state: JOB_NODE_FAIL
        packstr(&mut b, "n[1-2]"); // nodes
        be32(&mut b, 0); // req_uid
        be64(&mut b, 1_700_000_024); // start_time
        be64(&mut b, 1_700_000_025); // submit_time
        packstr(&mut b, "sys"); // system_comment
        packstr(&mut b, "1=2"); // tres_alloc_str
        let new = v >= V::V23_02;
        let m = DbdJobCompMsg {
            admin_comment: None,
            assoc_id: 7,
            comment: s("c"),
            db_index: 900,
            derived_ec: 256,
            end_time: 1_700_000_200,
            exit_code: 9,
            extra: if new { s("x") } else { None },
            failed_node: if new { s("n2") } else { None },
            job_id: 12,
            job_state: 7,
            nodes: s("n[1-2]"),
            req_uid: 0,
            start_time: 1_700_000_024,
            submit_time: 1_700_000_025,
            system_comment: s("sys"),
            tres_alloc_str: s("1=2"),
        };
        check(v, 1424, &b, &DbdMessage::JobComplete(Box::new(m)));
    }
}

/// `pack_step_id`: the sluid leads from 24.11.
fn step_id_bytes(b: &mut Vec<u8>, v: V, id: &StepId) {
    if v >= V::V24_11 {
        be64(b, id.sluid);
    }
    be32(b, id.job_id);
    be32(b, id.step_id);
    be32(b, id.step_het_comp);
}

fn step_id() -> StepId {
    StepId {
        sluid: 0x51,
        job_id: 12,
        step_id: 0,
        step_het_comp: NO_VAL,
    }
}

#[test]
fn step_start_per_release() {
    for v in V::ALL {
        let mut b = Vec::new();
        be32(&mut b, 7); // assoc_id
        be64(&mut b, 900); // db_index
        be32(&mut b, 0); // container: NULL
        packstr(&mut b, "hostname"); // name
        packstr(&mut b, "n1"); // nodes
        packstr(&mut b, "0"); // node_inx
        be32(&mut b, 1); // node_cnt
        be64(&mut b, 1_700_000_030); // start_time
        be64(&mut b, 1_700_000_025); // job_submit_time
        be32(&mut b, NO_VAL); // req_cpufreq_min
        be32(&mut b, NO_VAL); // req_cpufreq_max
        be32(&mut b, NO_VAL); // req_cpufreq_gov
        step_id_bytes(&mut b, v, &step_id());
        if v >= V::V25_05 {
            packstr(&mut b, "/tmp"); // cwd
        }
        if v >= V::V26_05 {
            be32(&mut b, 1); // state: JOB_RUNNING
        }
        if v >= V::V25_05 {
            be32(&mut b, 0); // std_err: NULL
            packstr(&mut b, "/dev/null"); // std_in
            packstr(&mut b, "slurm-12.out"); // std_out
        }
        packstr(&mut b, "srun hostname"); // submit_line
        be32(&mut b, 0x2); // task_dist
        if v >= V::V25_05 {
            be32(&mut b, 60); // time_limit
        }
        be32(&mut b, 1); // total_tasks
        packstr(&mut b, "1=1"); // tres_alloc_str
        let new = v >= V::V25_05;
        let m = DbdStepStartMsg {
            assoc_id: 7,
            db_index: 900,
            container: None,
            name: s("hostname"),
            nodes: s("n1"),
            node_inx: s("0"),
            node_cnt: 1,
            start_time: 1_700_000_030,
            job_submit_time: 1_700_000_025,
            req_cpufreq_min: NO_VAL,
            req_cpufreq_max: NO_VAL,
            req_cpufreq_gov: NO_VAL,
            step_id: StepId {
                sluid: if v >= V::V24_11 { 0x51 } else { 0 },
                ..step_id()
            },
            cwd: if new { s("/tmp") } else { None },
            state: if v >= V::V26_05 { 1 } else { 0 },
            std_err: None,
            std_in: if new { s("/dev/null") } else { None },
            std_out: if new { s("slurm-12.out") } else { None },
            submit_line: s("srun hostname"),
            task_dist: 0x2,
            time_limit: if new { 60 } else { 0 },
            total_tasks: 1,
            tres_alloc_str: s("1=1"),
        };
        check(v, 1442, &b, &DbdMessage::StepStart(Box::new(m)));
    }
}

#[test]
fn step_complete_carries_the_usage_sample() {
    for v in V::ALL {
        let mut b = Vec::new();
        be32(&mut b, 7); // assoc_id
        be64(&mut b, 900); // db_index
        be64(&mut b, 1_700_000_090); // end_time
        be32(&mut b, 0); // exit_code
                         // jobacctinfo_pack, PROTOCOL_TYPE_DBD
        b.push(1); // present
        be64(&mut b, 3); // user_cpu_sec
        be32(&mut b, 4); // user_cpu_usec
        be64(&mut b, 5); // sys_cpu_sec
        be32(&mut b, 6); // sys_cpu_usec
        be32(&mut b, 0); // act_cpufreq
        be64(&mut b, NO_VAL as u64); // consumed_energy
        be32(&mut b, 2); // tres_ids: count
        be32(&mut b, 1);
        be32(&mut b, 2);
        be32(&mut b, 1); // tres_list: one slurmdb_tres_rec_t
        be64(&mut b, 0); // alloc_secs
        be64(&mut b, 1); // count
        be32(&mut b, 1); // id
        packstr(&mut b, "cpu"); // name
        be32(&mut b, 0); // type: NULL
        for k in 0..14u64 {
            // the tres_usage_* arrays, tres_count (2) values each
            be32(&mut b, 2);
            be64(&mut b, 100 + k);
            be64(&mut b, 200 + k);
        }
        be64(&mut b, 1_700_000_025); // job_submit_time
        packstr(&mut b, "1=2,3=500"); // job_tres_alloc_str
        be32(&mut b, 0); // req_uid
        be64(&mut b, 1_700_000_030); // start_time
        be16(&mut b, 3); // state: JOB_COMPLETE
        step_id_bytes(&mut b, v, &step_id());
        be32(&mut b, 1); // total_tasks

        let arr = |k: u64| vec![100 + k, 200 + k];
        let m = DbdStepCompMsg {
            assoc_id: 7,
            db_index: 900,
            end_time: 1_700_000_090,
            exit_code: 0,
            jobacct: JobAcctInfo(Some(JobAcctInfoData {
                user_cpu_sec: 3,
                user_cpu_usec: 4,
                sys_cpu_sec: 5,
                sys_cpu_usec: 6,
                act_cpufreq: 0,
                consumed_energy: NO_VAL as u64,
                tres_ids: vec![1, 2],
                tres_list: Some(vec![SlurmdbTresRec {
                    alloc_secs: 0,
                    count: 1,
                    id: 1,
                    name: s("cpu"),
                    r#type: None,
                }]),
                tres_usage_in_max: arr(0),
                tres_usage_in_max_nodeid: arr(1),
                tres_usage_in_max_taskid: arr(2),
                tres_usage_in_min: arr(3),
                tres_usage_in_min_nodeid: arr(4),
                tres_usage_in_min_taskid: arr(5),
                tres_usage_in_tot: arr(6),
                tres_usage_out_max: arr(7),
                tres_usage_out_max_nodeid: arr(8),
                tres_usage_out_max_taskid: arr(9),
                tres_usage_out_min: arr(10),
                tres_usage_out_min_nodeid: arr(11),
                tres_usage_out_min_taskid: arr(12),
                tres_usage_out_tot: arr(13),
            })),
            job_submit_time: 1_700_000_025,
            job_tres_alloc_str: s("1=2,3=500"),
            req_uid: 0,
            start_time: 1_700_000_030,
            state: 3,
            step_id: StepId {
                sluid: if v >= V::V24_11 { 0x51 } else { 0 },
                ..step_id()
            },
            total_tasks: 1,
        };
        check(v, 1441, &b, &DbdMessage::StepComplete(Box::new(m)));
    }
}

#[test]
fn mult_job_start_and_its_answers() {
    for v in V::ALL {
        // slurm_pack_list of two job starts, then return_code
        let mut b = Vec::new();
        be32(&mut b, 2);
        b.extend(job_start_body(v));
        b.extend(job_start_body(v));
        be32(&mut b, 0);
        let start = job_start_value(v);
        let m = DbdListMsg {
            my_list: Some(vec![start.clone(), start]),
            return_code: 0,
        };
        check(v, 1472, &b, &DbdMessage::SendMultJobStart(m));

        let mut b = Vec::new();
        be32(&mut b, 2);
        b.extend(id_rc_body(12, 900, 0));
        b.extend(id_rc_body(13, 901, 0));
        be32(&mut b, 0);
        let m = DbdListMsg {
            my_list: Some(vec![id_rc_value(12, 900, 0), id_rc_value(13, 901, 0)]),
            return_code: 0,
        };
        check(v, 1473, &b, &DbdMessage::GotMultJobStart(m));

        // No list at all: NO_VAL, and the return code says why.
        let mut b = Vec::new();
        be32(&mut b, NO_VAL);
        be32(&mut b, 2017); // ESLURM_RESULT_TOO_LARGE
        let m = DbdListMsg {
            my_list: None,
            return_code: 2017,
        };
        check(v, 1473, &b, &DbdMessage::GotMultJobStart(m));
    }
}

/// `packmem` of `u16 number | body`, an item of a multiple-message list.
fn item(b: &mut Vec<u8>, number: u16, body: &[u8]) {
    be32(b, body.len() as u32 + 2);
    be16(b, number);
    b.extend_from_slice(body);
}

fn persist_rc_body(rc: u32, ret_info: u16) -> Vec<u8> {
    let mut b = Vec::new();
    be32(&mut b, 0); // comment: NULL
    be16(&mut b, 0); // flags
    be32(&mut b, rc); // rc
    be16(&mut b, ret_info); // ret_info: the type answered
    b
}

fn persist_rc(rc: u32, ret_info: u16) -> DbdMessage {
    DbdMessage::PersistRc(PersistRcMsg {
        comment: None,
        flags: 0,
        rc,
        ret_info,
    })
}

#[test]
fn mult_msg_carries_whole_messages() {
    for v in V::ALL {
        let mut suspend = Vec::new();
        be32(&mut suspend, 7);
        be64(&mut suspend, 900);
        be32(&mut suspend, 12);
        be32(&mut suspend, 2);
        be64(&mut suspend, 1);
        be64(&mut suspend, 2);
        let mut b = Vec::new();
        be32(&mut b, 3); // three packed messages
        item(&mut b, 1425, &job_start_body(v)); // DBD_JOB_START
        item(&mut b, 1427, &suspend); // DBD_JOB_SUSPEND
        item(&mut b, 1401, &[0, 0, 0, 1]); // DBD_FINI
        be32(&mut b, 0); // return_code
        let m = DbdMultMsg {
            my_list: Some(vec![
                DbdMessage::JobStart(Box::new(job_start_value(v))),
                DbdMessage::JobSuspend(DbdJobSuspendMsg {
                    assoc_id: 7,
                    db_index: 900,
                    job_id: 12,
                    job_state: 2,
                    submit_time: 1,
                    suspend_time: 2,
                }),
                DbdMessage::Fini(DbdFiniMsg {
                    close_conn: 0,
                    commit: 1,
                }),
            ]),
            return_code: 0,
        };
        check(v, 1474, &b, &DbdMessage::SendMultMsg(m));

        // The answers: an ID_RC for the start, a PERSIST_RC for the suspend.
        let mut b = Vec::new();
        be32(&mut b, 2);
        item(&mut b, 1426, &id_rc_body(12, 900, 0));
        item(&mut b, 1433, &persist_rc_body(0, 1427));
        be32(&mut b, 0);
        let m = DbdMultMsg {
            my_list: Some(vec![
                DbdMessage::IdRc(id_rc_value(12, 900, 0)),
                persist_rc(0, 1427),
            ]),
            return_code: 0,
        };
        check(v, 1475, &b, &DbdMessage::GotMultMsg(m));
    }
}

#[test]
fn mult_msg_nests_one_level_only() {
    let v = V::V24_11;
    let inner = {
        let mut b = Vec::new();
        be32(&mut b, 0); // an empty list
        be32(&mut b, 0);
        b
    };
    for nested in [1474u16, 1475] {
        let mut b = Vec::new();
        be32(&mut b, 1);
        item(&mut b, nested, &inner);
        be32(&mut b, 0);
        let e = DbdMessage::decode_framed(v, &frame(1474, &b)).unwrap_err();
        assert_eq!(
            e.kind,
            DecodeErrorKind::BadValue {
                what: "message type inside a multiple-message list",
                value: nested.into()
            }
        );
        // At the item's body, as a type error on the connection is at the body's start.
        assert_eq!(e.offset, 4 + 4 + 2, "{e}");
        assert!(e.path().starts_with("DBD_SEND_MULT_MSG.my_list"), "{e}");
    }
    // Nor may an item be an init.
    let mut b = Vec::new();
    be32(&mut b, 1);
    item(&mut b, 6500, &[]);
    be32(&mut b, 0);
    let e = DbdMessage::decode_framed(v, &frame(1475, &b)).unwrap_err();
    assert!(matches!(e.kind, DecodeErrorKind::BadValue { .. }), "{e}");
    // And we do not build one.
    let bad = DbdMessage::SendMultMsg(DbdMultMsg {
        my_list: Some(vec![DbdMessage::GotMultMsg(DbdMultMsg::default())]),
        return_code: 0,
    });
    assert_eq!(
        bad.encode(v),
        Err(EncodeError::NotAnItem("DBD_GOT_MULT_MSG"))
    );
}

#[test]
fn mult_msg_is_bounded_by_the_bytes_left() {
    let v = V::V26_05;
    // Each item takes at least 6 bytes (packmem length and type): 2 items need 12.
    let mut b = Vec::new();
    be32(&mut b, 2);
    b.extend([0; 8]);
    let e = DbdMessage::decode_framed(v, &frame(1474, &b)).unwrap_err();
    assert_eq!(
        e.kind,
        DecodeErrorKind::CountTooLarge {
            count: 2,
            remaining: 8
        }
    );
    assert_eq!(e.offset, 0);
    // A count past NO_VAL is no list count at all.
    let e = DbdMessage::decode_framed(v, &frame(1475, &[0xff; 8])).unwrap_err();
    assert!(matches!(e.kind, DecodeErrorKind::BadValue { .. }), "{e}");
    // NO_VAL is no list.
    let mut b = Vec::new();
    be32(&mut b, NO_VAL);
    be32(&mut b, 1);
    check(
        v,
        1475,
        &b,
        &DbdMessage::GotMultMsg(DbdMultMsg {
            my_list: None,
            return_code: 1,
        }),
    );
    // An item with bytes after its body: the offset is in the outer body.
    let mut b = Vec::new();
    be32(&mut b, 1);
    let mut fini = vec![0, 1, 0, 1];
    fini.push(0xaa);
    item(&mut b, 1401, &fini);
    be32(&mut b, 0);
    let e = DbdMessage::decode_framed(v, &frame(1474, &b)).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::TrailingBytes(1));
    assert_eq!(e.offset, 4 + 4 + 2 + 4, "{e}");
    // An item's type that the release does not know.
    let mut b = Vec::new();
    be32(&mut b, 1);
    item(&mut b, 1443, &[]); // DBD_DEFUNCT_RPC_1443
    be32(&mut b, 0);
    let e = DbdMessage::decode_framed(v, &frame(1474, &b)).unwrap_err();
    assert!(
        matches!(e.kind, DecodeErrorKind::UnknownMsgType { number: 1443, .. }),
        "{e}"
    );
}

/// One message of any type that may be an item of a multiple-message list.
fn any_item(u: &mut Unstructured<'_>) -> arbitrary::Result<DbdMessage> {
    use DbdMessage as M;
    type Make = fn(&mut Unstructured<'_>) -> arbitrary::Result<DbdMessage>;
    const MAKE: &[Make] = &[
        |u| Ok(M::PersistRc(u.arbitrary()?)),
        |u| Ok(M::Fini(u.arbitrary()?)),
        |u| Ok(M::RegisterCtld(u.arbitrary()?)),
        |u| Ok(M::ClusterTres(u.arbitrary()?)),
        |u| Ok(M::FlushJobs(u.arbitrary()?)),
        |u| Ok(M::NodeState(u.arbitrary()?)),
        |u| Ok(M::JobStart(u.arbitrary()?)),
        |u| Ok(M::IdRc(u.arbitrary()?)),
        |u| Ok(M::JobHeavy(u.arbitrary()?)),
        |u| Ok(M::JobComplete(u.arbitrary()?)),
        |u| Ok(M::JobSuspend(u.arbitrary()?)),
        |u| Ok(M::StepStart(u.arbitrary()?)),
        |u| Ok(M::StepComplete(u.arbitrary()?)),
        |u| Ok(M::SendMultJobStart(u.arbitrary()?)),
        |u| Ok(M::GotMultJobStart(u.arbitrary()?)),
        |u| Ok(M::GetJobsCond(u.arbitrary()?)),
        |u| Ok(M::GotJobs(u.arbitrary()?)),
        |u| Ok(M::GetTres(u.arbitrary()?)),
        |u| Ok(M::GotTres(u.arbitrary()?)),
        |u| Ok(M::GetQos(u.arbitrary()?)),
        |u| Ok(M::GotQos(u.arbitrary()?)),
        |u| Ok(M::GetFederations(u.arbitrary()?)),
        |u| Ok(M::GotFederations(u.arbitrary()?)),
        |u| Ok(M::GetClusters(u.arbitrary()?)),
        |u| Ok(M::GotClusters(u.arbitrary()?)),
        |u| Ok(M::AddClusters(u.arbitrary()?)),
        |u| Ok(M::ModifyClusters(u.arbitrary()?)),
        |u| Ok(M::RemoveClusters(u.arbitrary()?)),
        |u| Ok(M::GetAccounts(u.arbitrary()?)),
        |u| Ok(M::GotAccounts(u.arbitrary()?)),
        |u| Ok(M::AddAccounts(u.arbitrary()?)),
        |u| Ok(M::AddAccountsCond(u.arbitrary()?)),
        |u| Ok(M::ModifyAccounts(u.arbitrary()?)),
        |u| Ok(M::RemoveAccounts(u.arbitrary()?)),
        |u| Ok(M::GetUsers(u.arbitrary()?)),
        |u| Ok(M::GotUsers(u.arbitrary()?)),
        |u| Ok(M::AddUsers(u.arbitrary()?)),
        |u| Ok(M::AddUsersCond(u.arbitrary()?)),
        |u| Ok(M::ModifyUsers(u.arbitrary()?)),
        |u| Ok(M::RemoveUsers(u.arbitrary()?)),
        |u| Ok(M::AddAccountCoords(u.arbitrary()?)),
        |u| Ok(M::RemoveAccountCoords(u.arbitrary()?)),
        |u| Ok(M::GetAssocs(u.arbitrary()?)),
        |u| Ok(M::GotAssocs(u.arbitrary()?)),
        |u| Ok(M::AddAssocs(u.arbitrary()?)),
        |u| Ok(M::ModifyAssocs(u.arbitrary()?)),
        |u| Ok(M::RemoveAssocs(u.arbitrary()?)),
        |u| Ok(M::AddQos(u.arbitrary()?)),
        |u| Ok(M::ModifyQos(u.arbitrary()?)),
        |u| Ok(M::RemoveQos(u.arbitrary()?)),
        |u| Ok(M::AddTres(u.arbitrary()?)),
        |u| Ok(M::GetWckeys(u.arbitrary()?)),
        |u| Ok(M::GotWckeys(u.arbitrary()?)),
        |u| Ok(M::AddWckeys(u.arbitrary()?)),
        |u| Ok(M::RemoveWckeys(u.arbitrary()?)),
        |u| Ok(M::GetRes(u.arbitrary()?)),
        |u| Ok(M::GotRes(u.arbitrary()?)),
        |u| Ok(M::AddRes(u.arbitrary()?)),
        |u| Ok(M::ModifyRes(u.arbitrary()?)),
        |u| Ok(M::RemoveRes(u.arbitrary()?)),
        |u| Ok(M::GotList(u.arbitrary()?)),
        |u| Ok(M::GetStats(u.arbitrary()?)),
        |u| Ok(M::GotStats(u.arbitrary()?)),
        |u| Ok(M::ClearStats(u.arbitrary()?)),
        |u| Ok(M::GetProbs(u.arbitrary()?)),
        |u| Ok(M::GotProbs(u.arbitrary()?)),
        |u| Ok(M::GetConfig(u.arbitrary()?)),
        |u| Ok(M::GotConfig(u.arbitrary()?)),
        |u| Ok(M::GotConfigKeypairs(u.arbitrary()?)),
        |u| Ok(M::GetTxn(u.arbitrary()?)),
        |u| Ok(M::GotTxn(u.arbitrary()?)),
        |u| Ok(M::RollUsage(u.arbitrary()?)),
    ];
    MAKE[u.choose_index(MAKE.len())?](u)
}

/// Whether every item of `m` (and `m` itself) has a number in `v`.
fn exists_in(m: &DbdMessage, v: V) -> bool {
    let items = match m {
        DbdMessage::SendMultMsg(l) | DbdMessage::GotMultMsg(l) => l.my_list.as_deref(),
        _ => None,
    };
    m.msg_type().to_wire(v).is_some()
        && items
            .unwrap_or_default()
            .iter()
            .all(|i| i.msg_type().to_wire(v).is_some())
}

/// Any message but the init (tests.rs covers it), multiple-message lists included.
fn any_message(u: &mut Unstructured<'_>) -> arbitrary::Result<DbdMessage> {
    if u.ratio(1, 5)? {
        let my_list = if u.ratio(1, 10)? {
            None
        } else {
            let n = u.int_in_range(0..=4usize)?;
            Some(
                (0..n)
                    .map(|_| any_item(u))
                    .collect::<arbitrary::Result<_>>()?,
            )
        };
        let m = DbdMultMsg {
            my_list,
            return_code: u.arbitrary()?,
        };
        return Ok(if u.arbitrary()? {
            DbdMessage::SendMultMsg(m)
        } else {
            DbdMessage::GotMultMsg(m)
        });
    }
    any_item(u)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 600,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Every value encodes in every release; what that decodes to re-encodes to the same bytes
    /// and decodes to itself, and no strict prefix of the body decodes.
    #[test]
    fn accounting_messages_round_trip_in_every_release(
        data in prop::collection::vec(any::<u8>(), 0..3000),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut u = Unstructured::new(&data);
        let Ok(m) = any_message(&mut u) else { return Ok(()) };
        for v in V::ALL {
            if !exists_in(&m, v) {
                prop_assert!(m.encode(v).is_err());
                continue;
            }
            let bytes = m.encode(v).unwrap();
            let back = DbdMessage::decode_framed(v, &bytes)
                .unwrap_or_else(|e| panic!("{v}: {e}\n{m:?}"));
            prop_assert_eq!(back.msg_type(), m.msg_type());
            let again = back.encode(v).unwrap();
            prop_assert_eq!(&again, &bytes);
            prop_assert_eq!(DbdMessage::decode_framed(v, &again).unwrap(), back);
            let (number, body) = (u16::from_be_bytes([bytes[4], bytes[5]]), &bytes[6..]);
            if !body.is_empty() {
                let raw = RawMsg { msg_type: number, body: &body[..cut.index(body.len())] };
                prop_assert!(DbdMessage::decode(v, raw).is_err());
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 400,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Damaged encodings never panic the decoder; what still decodes re-encodes to exactly the
    /// damaged bytes (the fuzz target's property, here over well-formed starting points).
    #[test]
    fn damaged_encodings_fail_cleanly_or_round_trip(
        data in prop::collection::vec(any::<u8>(), 0..2000),
        v in prop::sample::select(V::ALL.to_vec()),
        flips in prop::collection::vec((any::<prop::sample::Index>(), 0..8u8), 1..4),
    ) {
        let mut u = Unstructured::new(&data);
        let Ok(m) = any_message(&mut u) else { return Ok(()) };
        let Ok(mut bytes) = m.encode(v) else {
            prop_assert!(!exists_in(&m, v));
            return Ok(());
        };
        let n = bytes.len() - 6;
        if n == 0 {
            return Ok(());
        }
        for (at, bit) in &flips {
            bytes[6 + at.index(n)] ^= 1 << bit;
        }
        let raw = RawMsg { msg_type: u16::from_be_bytes([bytes[4], bytes[5]]), body: &bytes[6..] };
        if let Ok(back) = DbdMessage::decode(v, raw) {
            prop_assert_eq!(back.encode(v).unwrap(), bytes);
        }
    }
}

#[test]
fn the_generator_reaches_every_accounting_type() {
    let mut seen = BTreeSet::new();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..2000 {
        let data: Vec<u8> = (0..256)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        if let Ok(m) = any_message(&mut Unstructured::new(&data)) {
            seen.insert(m.msg_type().name());
        }
    }
    let missing: Vec<_> = DbdMessage::SUPPORTED
        .iter()
        .filter(|t| !matches!(t, DbdMsgType::PersistInit | DbdMsgType::PersistInitTls))
        .filter(|t| !seen.contains(t.name()))
        .collect();
    assert!(missing.is_empty(), "never generated: {missing:?}");
}

#[test]
fn every_accounting_type_exists_in_every_release() {
    // 24.05 added the TLS init, 23.11 the add-with-associations forms, 26.05 the key pairs'
    // own type.
    let newer = [
        (DbdMsgType::PersistInitTls, V::V24_05),
        (DbdMsgType::AddAccountsCond, V::V23_11),
        (DbdMsgType::AddUsersCond, V::V23_11),
        (DbdMsgType::GotConfigKeypairs, V::V26_05),
    ];
    for (ty, from) in newer {
        let have: Vec<bool> = V::ALL.iter().map(|&v| ty.to_wire(v).is_some()).collect();
        let want: Vec<bool> = V::ALL.iter().map(|&v| v >= from).collect();
        assert_eq!(have, want, "{}", ty.name());
    }
    for ty in DbdMessage::SUPPORTED {
        if newer.iter().any(|(t, _)| t == ty) {
            continue;
        }
        for v in V::ALL {
            assert!(ty.to_wire(v).is_some(), "{} in {v}", ty.name());
        }
    }
    // The numbers every layout above was written for.
    let numbers: Vec<u16> = [
        DbdMsgType::RegisterCtld,
        DbdMsgType::ClusterTres,
        DbdMsgType::FlushJobs,
        DbdMsgType::NodeState,
        DbdMsgType::JobStart,
        DbdMsgType::IdRc,
        DbdMsgType::JobHeavy,
        DbdMsgType::JobComplete,
        DbdMsgType::JobSuspend,
        DbdMsgType::StepStart,
        DbdMsgType::StepComplete,
        DbdMsgType::SendMultJobStart,
        DbdMsgType::GotMultJobStart,
        DbdMsgType::SendMultMsg,
        DbdMsgType::GotMultMsg,
    ]
    .iter()
    .map(|t| t.to_wire(V::V22_05).unwrap())
    .collect();
    assert_eq!(
        numbers,
        [
            1434, 1407, 1408, 1432, 1425, 1426, 1498, 1424, 1427, 1442, 1441, 1472, 1473, 1474,
            1475
        ]
    );
    // 26.05 moved DBD_GOT_CONFIG to a new number, its old one naming the key pairs.
    let got_config: Vec<u16> = V::ALL
        .iter()
        .map(|&v| DbdMsgType::GotConfig.to_wire(v).unwrap())
        .collect();
    assert_eq!(got_config, [1467, 1467, 1467, 1467, 1467, 1467, 1467, 1508]);
    assert_eq!(DbdMsgType::GotConfigKeypairs.to_wire(V::V26_05), Some(1467));
}
