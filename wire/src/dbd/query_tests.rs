//! The queries of sacct and of the controller's start-up (jobs, TRES, QOS, federations) against
//! layouts written out field by field from `slurmdb_pack.c` of every release branch (and
//! `_pack_cond_msg` / `slurmdbd_pack_list_msg`), not from our encoder.

use super::acct_tests::{check, frame};
use super::tests::{be16, be32, be64, packstr};
use super::*;
use crate::msg::slurmdb::*;
use crate::pack::NO_VAL;
use crate::types::{BitStr, Double, StepId};
use crate::{DecodeErrorKind, ProtocolVersion as V};

pub(super) fn s(x: &str) -> Option<String> {
    Some(x.into())
}

/// `slurm_pack_list` of `packstr_func`.
pub(super) fn strlist(b: &mut Vec<u8>, items: &[&str]) {
    be32(b, items.len() as u32);
    for x in items {
        packstr(b, x);
    }
}

pub(super) fn list(items: &[&str]) -> StrList {
    Some(items.iter().map(|x| s(x)).collect())
}

fn job_cond_body(v: V) -> Vec<u8> {
    let b = &mut Vec::new();
    strlist(b, &["research"]); // acct_list
    be32(b, NO_VAL); // associd_list
    strlist(b, &["c1"]); // cluster_list
    be32(b, NO_VAL); // constraint_list
    be32(b, 0); // cpus_max
    be32(b, 0); // cpus_min
    be32(b, 0); // db_flags
    be32(b, 0); // exitcode
    be32(b, 0x0000_0001); // flags: JOBCOND_FLAG_DUP
    be32(b, NO_VAL); // format_list
    be32(b, 0); // groupid_list: an empty list
    be32(b, NO_VAL); // jobname_list
    be32(b, 0); // nodes_max
    be32(b, 0); // nodes_min
    be32(b, NO_VAL); // partition_list
    be32(b, NO_VAL); // qos_list
    be32(b, NO_VAL); // reason_list
    be32(b, NO_VAL); // resv_list
    be32(b, NO_VAL); // resvid_list
                     // step_list: one slurm_selected_step_t
    be32(b, 1);
    if v >= V::V24_11 {
        be64(b, 0); // step_id.sluid
    }
    be32(b, 12); // step_id.job_id
    be32(b, NO_VAL); // step_id.step_id
    be32(b, NO_VAL); // step_id.step_het_comp
    be32(b, NO_VAL); // array_task_id
    be32(b, NO_VAL); // het_job_offset
    if v >= V::V24_11 {
        be32(b, 4); // array_bitmap: 4 bits
        packstr(b, "0x5");
    }
    strlist(b, &["CD", "F"]); // state_list
    be32(b, 0); // timelimit_max
    be32(b, 0); // timelimit_min
    be64(b, 1_700_086_400); // usage_end
    be64(b, 1_700_000_000); // usage_start
    be32(b, 0); // used_nodes: NULL
    strlist(b, &["1000"]); // userid_list
    be32(b, NO_VAL); // wckey_list
    std::mem::take(b)
}

fn job_cond_value(v: V) -> SlurmdbJobCond {
    SlurmdbJobCond {
        acct_list: list(&["research"]),
        cluster_list: list(&["c1"]),
        flags: 1,
        groupid_list: Some(vec![]),
        step_list: Some(vec![SlurmSelectedStep {
            step_id: StepId::job(12),
            array_task_id: NO_VAL,
            het_job_offset: NO_VAL,
            array_bitmap: (v >= V::V24_11).then(|| BitStr::from_hex(4, "0x5").unwrap()),
        }]),
        state_list: list(&["CD", "F"]),
        usage_end: 1_700_086_400,
        usage_start: 1_700_000_000,
        userid_list: list(&["1000"]),
        ..Default::default()
    }
}

#[test]
fn get_jobs_cond_per_release() {
    for v in V::ALL {
        let m = DbdMessage::GetJobsCond(Box::new(job_cond_value(v)));
        check(v, 1444, &job_cond_body(v), &m);
    }
}

fn stats_body(b: &mut Vec<u8>) {
    be64(b, Double::from_value(2.5).scaled_bits); // act_cpufreq
    be64(b, 77); // consumed_energy
    for k in 0..16u32 {
        // tres_usage_{in,out}_{ave,max,max_nodeid,max_taskid,min,min_nodeid,min_taskid,tot}
        if k.is_multiple_of(2) {
            packstr(b, &format!("1={k}"));
        } else {
            be32(b, 0);
        }
    }
}

fn stats_value() -> SlurmdbStats {
    let t = |k: u32| k.is_multiple_of(2).then(|| format!("1={k}"));
    SlurmdbStats {
        act_cpufreq: Double::from_value(2.5),
        consumed_energy: 77,
        tres_usage_in_ave: t(0),
        tres_usage_in_max: t(1),
        tres_usage_in_max_nodeid: t(2),
        tres_usage_in_max_taskid: t(3),
        tres_usage_in_min: t(4),
        tres_usage_in_min_nodeid: t(5),
        tres_usage_in_min_taskid: t(6),
        tres_usage_in_tot: t(7),
        tres_usage_out_ave: t(8),
        tres_usage_out_max: t(9),
        tres_usage_out_max_nodeid: t(10),
        tres_usage_out_max_taskid: t(11),
        tres_usage_out_min: t(12),
        tres_usage_out_min_nodeid: t(13),
        tres_usage_out_min_taskid: t(14),
        tres_usage_out_tot: t(15),
    }
}

fn step_rec_body(b: &mut Vec<u8>, v: V) {
    be32(b, 0); // container: NULL
    be32(b, 5); // elapsed
    be64(b, 1_700_000_035); // end
    be32(b, 0); // exitcode
    be32(b, 1); // nnodes
    packstr(b, "n1"); // nodes
    be32(b, 1); // ntasks
    be32(b, NO_VAL); // req_cpufreq_min
    be32(b, NO_VAL); // req_cpufreq_max
    be32(b, NO_VAL); // req_cpufreq_gov
    be32(b, 1000); // requid
    stats_body(b); // stats
    be64(b, 1_700_000_030); // start
    be16(b, 3); // state
    if v >= V::V24_11 {
        be64(b, 0x51); // step_id.sluid
    }
    be32(b, 12); // step_id.job_id
    be32(b, 0); // step_id.step_id
    be32(b, NO_VAL); // step_id.step_het_comp
    packstr(b, "hostname"); // stepname
    if v >= V::V25_05 {
        packstr(b, "/tmp"); // cwd
        be32(b, 0); // std_err: NULL
        packstr(b, "/dev/null"); // std_in
        packstr(b, "o"); // std_out
    }
    packstr(b, "srun hostname"); // submit_line
    be32(b, 0); // suspended
    be64(b, 1); // sys_cpu_sec
    be32(b, 2); // sys_cpu_usec
    be32(b, 0x2); // task_dist
    if v >= V::V25_05 {
        be32(b, 60); // timelimit
    }
    be64(b, 3); // tot_cpu_sec
    be32(b, 4); // tot_cpu_usec
    packstr(b, "1=1"); // tres_alloc_str
    be64(b, 2); // user_cpu_sec
    be32(b, 2); // user_cpu_usec
}

fn step_rec_value(v: V) -> SlurmdbStepRec {
    let new = v >= V::V25_05;
    SlurmdbStepRec {
        container: None,
        elapsed: 5,
        end: 1_700_000_035,
        exitcode: 0,
        nnodes: 1,
        nodes: s("n1"),
        ntasks: 1,
        req_cpufreq_min: NO_VAL,
        req_cpufreq_max: NO_VAL,
        req_cpufreq_gov: NO_VAL,
        requid: 1000,
        stats: stats_value(),
        start: 1_700_000_030,
        state: 3,
        step_id: StepId {
            sluid: if v >= V::V24_11 { 0x51 } else { 0 },
            job_id: 12,
            step_id: 0,
            step_het_comp: NO_VAL,
        },
        stepname: s("hostname"),
        cwd: if new { s("/tmp") } else { None },
        std_err: None,
        std_in: if new { s("/dev/null") } else { None },
        std_out: if new { s("o") } else { None },
        submit_line: s("srun hostname"),
        suspended: 0,
        sys_cpu_sec: 1,
        sys_cpu_usec: 2,
        task_dist: 2,
        timelimit: if new { 60 } else { 0 },
        tot_cpu_sec: 3,
        tot_cpu_usec: 4,
        tres_alloc_str: s("1=1"),
        user_cpu_sec: 2,
        user_cpu_usec: 2,
    }
}

/// A job record up to its steps.
fn job_rec_head(b: &mut Vec<u8>, v: V) {
    packstr(b, "research"); // account
    be32(b, 0); // admin_comment: NULL
    be32(b, 1); // alloc_nodes
    be32(b, 0); // array_job_id
    be32(b, 0); // array_max_tasks
    be32(b, NO_VAL); // array_task_id
    be32(b, 0); // array_task_str: NULL
    be32(b, 7); // associd
    be32(b, 0); // blockid: NULL
    packstr(b, "c1"); // cluster
    be32(b, 0); // constraints: NULL
    be32(b, 0); // container: NULL
    be64(b, 900); // db_index
    be32(b, 0); // derived_ec
    be32(b, 0); // derived_es: NULL
    be32(b, 10); // elapsed
    be64(b, 1_700_000_026); // eligible
    be64(b, 1_700_000_040); // end
    be32(b, 0); // env: NULL
    if v >= V::V26_05 {
        packstr(b, "user"); // exclusive
    }
    be32(b, 0); // exitcode
    if v >= V::V23_02 {
        packstr(b, "x"); // extra
        be32(b, 0); // failed_node: NULL
    }
    be32(b, 0); // flags
    be32(b, 1000); // gid
    be32(b, 12); // jobid
    packstr(b, "job"); // jobname
    if v < V::V23_11 {
        be32(b, 3); // lft
    }
    if v >= V::V23_02 {
        be32(b, 0); // licenses: NULL
    }
    if v >= V::V23_11 {
        packstr(b, "/1/"); // lineage
    }
    be32(b, 0); // mcs_label: NULL
    packstr(b, "n1"); // nodes
    be32(b, 0); // het_job_id
    be32(b, NO_VAL); // het_job_offset
    if v >= V::V26_05 {
        packstr(b, "ok"); // oversubscribe
    }
    packstr(b, "debug"); // partition
    be32(b, 100); // priority
    be32(b, 1); // qosid
    if v >= V::V24_11 {
        packstr(b, "normal"); // qos_req
    }
    be32(b, 1); // req_cpus
    be64(b, 500); // req_mem
    be32(b, NO_VAL); // requid
    if v >= V::V24_11 {
        be16(b, 1); // restart_cnt
    }
    be32(b, 0); // resv_name: NULL
    be32(b, 0); // resvid
    if v >= V::V25_05 {
        be32(b, 0); // resv_req: NULL
    }
    be32(b, 0); // script: NULL
    if v >= V::V26_05 {
        be64(b, 0x51); // sluid
    }
    be32(b, 0); // show_full
    be64(b, 1_700_000_030); // start
    be32(b, 3); // state: JOB_COMPLETE
    be32(b, 0); // state_reason_prev
}

fn job_rec_body(b: &mut Vec<u8>, v: V) {
    job_rec_head(b, v);
    be32(b, 1); // steps: a plain count
    step_rec_body(b, v);
    if v >= V::V25_05 {
        be16(b, 0); // segment_size
    }
    if v >= V::V24_05 {
        be32(b, 0); // std_err: NULL
        be32(b, 0); // std_in: NULL
        packstr(b, "slurm-12.out"); // std_out
    }
    be64(b, 1_700_000_025); // submit
    packstr(b, "sbatch j.sh"); // submit_line
    be32(b, 0); // suspended
    be32(b, 0); // system_comment: NULL
    be64(b, 1); // sys_cpu_sec
    be64(b, 2); // sys_cpu_usec
    be32(b, 60); // timelimit
    be64(b, 3); // tot_cpu_sec
    be64(b, 4); // tot_cpu_usec
    packstr(b, "1=1,2=500"); // tres_alloc_str
    packstr(b, "1=1,2=500"); // tres_req_str
    be32(b, 1000); // uid
    packstr(b, "alice"); // user
    be64(b, 2); // user_cpu_sec
    be64(b, 2); // user_cpu_usec
    be32(b, 0); // wckey: NULL
    be32(b, 0); // wckeyid
    packstr(b, "/home/alice"); // work_dir
}

fn job_rec_value(v: V) -> SlurmdbJobRec {
    let mut j = SlurmdbJobRec {
        account: s("research"),
        alloc_nodes: 1,
        array_task_id: NO_VAL,
        associd: 7,
        cluster: s("c1"),
        db_index: 900,
        elapsed: 10,
        eligible: 1_700_000_026,
        end: 1_700_000_040,
        exclusive: s("user"),
        extra: s("x"),
        gid: 1000,
        jobid: 12,
        jobname: s("job"),
        lft: 3,
        lineage: s("/1/"),
        nodes: s("n1"),
        het_job_offset: NO_VAL,
        oversubscribe: s("ok"),
        partition: s("debug"),
        priority: 100,
        qosid: 1,
        qos_req: s("normal"),
        req_cpus: 1,
        req_mem: 500,
        requid: NO_VAL,
        restart_cnt: 1,
        sluid: 0x51,
        start: 1_700_000_030,
        state: 3,
        steps: vec![step_rec_value(v)],
        std_out: s("slurm-12.out"),
        submit: 1_700_000_025,
        submit_line: s("sbatch j.sh"),
        sys_cpu_sec: 1,
        sys_cpu_usec: 2,
        timelimit: 60,
        tot_cpu_sec: 3,
        tot_cpu_usec: 4,
        tres_alloc_str: s("1=1,2=500"),
        tres_req_str: s("1=1,2=500"),
        uid: 1000,
        user: s("alice"),
        user_cpu_sec: 2,
        user_cpu_usec: 2,
        work_dir: s("/home/alice"),
        ..Default::default()
    };
    if v < V::V26_05 {
        (j.exclusive, j.oversubscribe, j.sluid) = (None, None, 0);
    }
    if v < V::V24_11 {
        (j.qos_req, j.restart_cnt) = (None, 0);
    }
    if v < V::V24_05 {
        j.std_out = None;
    }
    if v < V::V23_02 {
        j.extra = None;
    }
    if v >= V::V23_11 {
        j.lft = 0;
    } else {
        j.lineage = None;
    }
    j
}

#[test]
fn got_jobs_per_release() {
    let mut sizes = Vec::new();
    for v in V::ALL {
        let mut b = Vec::new();
        be32(&mut b, 1); // slurmdbd_pack_list_msg: one job
        job_rec_body(&mut b, v);
        be32(&mut b, 0); // return_code
        sizes.push(b.len());
        let m = DbdListMsg {
            my_list: Some(vec![job_rec_value(v)]),
            return_code: 0,
        };
        check(v, 1421, &b, &DbdMessage::GotJobs(m));
    }
    // 23.11 swapped lft for lineage; 25.11 changed nothing.
    let same: Vec<bool> = sizes.windows(2).map(|w| w[0] == w[1]).collect();
    assert_eq!(same, [false, false, false, false, false, true, false]);
}

#[test]
fn a_job_list_is_bounded_by_the_bytes_left() {
    let v = V::V24_11;
    let mut b = Vec::new();
    be32(&mut b, 1);
    job_rec_head(&mut b, v);
    let at = b.len();
    be32(&mut b, 0x0100_0000); // steps: far more than the bytes left
    b.extend([0; 64]);
    let e = DbdMessage::decode_framed(v, &frame(1421, &b)).unwrap_err();
    assert_eq!(
        e.kind,
        DecodeErrorKind::CountTooLarge {
            count: 0x0100_0000,
            remaining: 64
        }
    );
    assert_eq!(e.offset, at, "{e}");
    assert_eq!(e.path(), "DBD_GOT_JOBS.my_list.[0].steps");
}

#[test]
fn tres_and_federation_conds_are_the_same_everywhere() {
    for v in V::ALL {
        let mut b = Vec::new();
        be64(&mut b, u64::from(NO_VAL)); // count
        be32(&mut b, NO_VAL); // format_list
        strlist(&mut b, &["1", "2"]); // id_list
        be32(&mut b, NO_VAL); // name_list
        strlist(&mut b, &["gres"]); // type_list
        be16(&mut b, 1); // with_deleted
        let m = SlurmdbTresCond {
            count: u64::from(NO_VAL),
            id_list: list(&["1", "2"]),
            type_list: list(&["gres"]),
            with_deleted: 1,
            ..Default::default()
        };
        check(v, 1486, &b, &DbdMessage::GetTres(m));

        let mut b = Vec::new();
        strlist(&mut b, &["c1"]); // cluster_list
        be32(&mut b, NO_VAL); // federation_list
        be32(&mut b, NO_VAL); // format_list
        be16(&mut b, 0); // with_deleted
        let m = SlurmdbFederationCond {
            cluster_list: list(&["c1"]),
            ..Default::default()
        };
        check(v, 1494, &b, &DbdMessage::GetFederations(m));

        // GOT_TRES: slurmdb_pack_tres_rec items
        let mut b = Vec::new();
        be32(&mut b, 1);
        be64(&mut b, 0); // alloc_secs
        be64(&mut b, 4); // count
        be32(&mut b, 1001); // id
        packstr(&mut b, "gpu"); // name
        packstr(&mut b, "gres"); // type
        be32(&mut b, 0); // return_code
        let m = DbdListMsg {
            my_list: Some(vec![SlurmdbTresRec {
                alloc_secs: 0,
                count: 4,
                id: 1001,
                name: s("gpu"),
                r#type: s("gres"),
            }]),
            return_code: 0,
        };
        check(v, 1487, &b, &DbdMessage::GotTres(m));
    }
}

#[test]
fn qos_cond_gained_a_presence_flag_in_24_11() {
    for v in V::ALL {
        let mut b = Vec::new();
        let new = v >= V::V24_11;
        if new {
            b.push(1); // a cond follows
        }
        be32(&mut b, NO_VAL); // description_list
        if new {
            be16(&mut b, 0x1); // flags: QOS_COND_FLAG_WITH_DELETED
        }
        be32(&mut b, NO_VAL); // format_list
        be32(&mut b, NO_VAL); // id_list
        strlist(&mut b, &["normal"]); // name_list
        be16(&mut b, 0); // preempt_mode
        if !new {
            be16(&mut b, 1); // with_deleted
        }
        let cond = SlurmdbQosCond {
            flags: if new { 1 } else { 0 },
            name_list: list(&["normal"]),
            with_deleted: if new { 0 } else { 1 },
            ..Default::default()
        };
        let m = DbdQosCondMsg { cond: Some(cond) };
        check(v, 1448, &b, &DbdMessage::GetQos(m));
    }
    // A NULL cond: the flag alone from 24.11; an empty cond before.
    check(
        V::V24_11,
        1448,
        &[0],
        &DbdMessage::GetQos(DbdQosCondMsg { cond: None }),
    );
    let mut b = Vec::new();
    for _ in 0..4 {
        be32(&mut b, NO_VAL);
    }
    be16(&mut b, 0);
    be16(&mut b, 0);
    let null = DbdMessage::GetQos(DbdQosCondMsg { cond: None });
    assert_eq!(null.encode(V::V23_11).unwrap(), frame(1448, &b));
    check(
        V::V23_11,
        1448,
        &b,
        &DbdMessage::GetQos(DbdQosCondMsg {
            cond: Some(SlurmdbQosCond::default()),
        }),
    );
}

#[test]
fn got_qos_is_the_same_everywhere() {
    for v in V::ALL {
        let mut b = Vec::new();
        be32(&mut b, 1);
        packstr(&mut b, "Normal QOS default"); // description
        be32(&mut b, 1); // id
        be32(&mut b, 0); // flags
        be32(&mut b, 0); // grace_time
        for _ in 0..3 {
            be32(&mut b, 0); // grp_tres_mins, grp_tres_run_mins, grp_tres: NULL
        }
        for _ in 0..4 {
            be32(&mut b, INF); // grp_jobs, grp_jobs_accrue, grp_submit_jobs, grp_wall
        }
        for _ in 0..6 {
            be32(&mut b, 0); // max_tres_mins_pj .. max_tres_pn: NULL
        }
        packstr(&mut b, "1=4"); // max_tres_pu
        for _ in 0..8 {
            be32(&mut b, INF); // max_jobs_pa .. max_wall_pj
        }
        be32(&mut b, 0); // min_tres_pj: NULL
        packstr(&mut b, "normal"); // name
        be32(&mut b, NO_VAL); // preempt_bitstr: NULL
        be32(&mut b, NO_VAL); // preempt_list
        be16(&mut b, 0); // preempt_mode
        be32(&mut b, NO_VAL); // preempt_exempt_time
        be32(&mut b, 0); // priority
        be64(&mut b, Double::from_value(1.0).scaled_bits); // usage_factor
        be64(&mut b, Double::from_value(-1.0).scaled_bits); // usage_thres
        be64(&mut b, Double::from_value(-1.0).scaled_bits); // limit_factor
        be32(&mut b, 0); // return_code
        let q = SlurmdbQosRec {
            description: s("Normal QOS default"),
            id: 1,
            grp_jobs: INF,
            grp_jobs_accrue: INF,
            grp_submit_jobs: INF,
            grp_wall: INF,
            max_tres_pu: s("1=4"),
            max_jobs_pa: INF,
            max_jobs_pu: INF,
            max_jobs_accrue_pa: INF,
            max_jobs_accrue_pu: INF,
            min_prio_thresh: INF,
            max_submit_jobs_pa: INF,
            max_submit_jobs_pu: INF,
            max_wall_pj: INF,
            name: s("normal"),
            preempt_exempt_time: NO_VAL,
            usage_factor: Double::from_value(1.0),
            usage_thres: Double::from_value(-1.0),
            limit_factor: Double::from_value(-1.0),
            ..Default::default()
        };
        let m = DbdListMsg {
            my_list: Some(vec![q]),
            return_code: 0,
        };
        check(v, 1449, &b, &DbdMessage::GotQos(m));
    }
}

pub(super) const INF: u32 = crate::pack::INFINITE;

pub(super) fn assoc_body(b: &mut Vec<u8>, v: V) {
    // accounting_list: one slurmdb_accounting_rec_t
    be32(b, 1);
    be64(b, 3600); // alloc_secs
    be64(b, 0); // tres_rec.alloc_secs
    be64(b, 0); // tres_rec.count
    be32(b, 1); // tres_rec.id
    be32(b, 0); // tres_rec.name: NULL
    be32(b, 0); // tres_rec.type: NULL
    be32(b, 2); // id
    if v >= V::V24_11 {
        be32(b, 9); // id_alt
    }
    be64(b, 1_700_000_000); // period_start
    packstr(b, "root"); // acct
    packstr(b, "c1"); // cluster
    if v >= V::V23_02 {
        be32(b, 0); // comment: NULL
    }
    be32(b, 0); // def_qos_id
    if v >= V::V24_05 {
        be32(b, 0x0001_0002); // flags
    } else {
        be16(b, 0x0002); // flags, a u16 before 24.05
    }
    be32(b, 1); // shares_raw
    for _ in 0..3 {
        be32(b, 0); // grp_tres_mins, grp_tres_run_mins, grp_tres: NULL
    }
    for _ in 0..4 {
        be32(b, INF); // grp_jobs, grp_jobs_accrue, grp_submit_jobs, grp_wall
    }
    be32(b, 1); // id
    be16(b, 0); // is_def
    if v < V::V23_11 {
        be32(b, 1); // lft
    } else {
        packstr(b, "/"); // lineage
    }
    for _ in 0..4 {
        be32(b, 0); // max_tres_mins_pj, max_tres_run_mins, max_tres_pj, max_tres_pn: NULL
    }
    for _ in 0..5 {
        be32(b, INF); // max_jobs, max_jobs_accrue, min_prio_thresh, max_submit_jobs, max_wall_pj
    }
    be32(b, 0); // parent_acct: NULL
    be32(b, 0); // parent_id
    be32(b, 0); // partition: NULL
    be32(b, 0); // priority
    strlist(b, &["normal"]); // qos_list
    if v < V::V23_11 {
        be32(b, 2); // rgt
    }
    be32(b, 0); // uid
    be32(b, 0); // user: NULL
}

pub(super) fn assoc_value(v: V) -> SlurmdbAssocRec {
    SlurmdbAssocRec {
        accounting_list: Some(vec![SlurmdbAccountingRec {
            alloc_secs: 3600,
            tres_rec: SlurmdbTresRec {
                id: 1,
                ..Default::default()
            },
            id: 2,
            id_alt: if v >= V::V24_11 { 9 } else { 0 },
            period_start: 1_700_000_000,
        }]),
        acct: s("root"),
        cluster: s("c1"),
        flags: if v >= V::V24_05 { 0x0001_0002 } else { 0x2 },
        shares_raw: 1,
        grp_jobs: INF,
        grp_jobs_accrue: INF,
        grp_submit_jobs: INF,
        grp_wall: INF,
        id: 1,
        lft: if v < V::V23_11 { 1 } else { 0 },
        lineage: (v >= V::V23_11).then(|| "/".into()),
        max_jobs: INF,
        max_jobs_accrue: INF,
        min_prio_thresh: INF,
        max_submit_jobs: INF,
        max_wall_pj: INF,
        qos_list: list(&["normal"]),
        rgt: if v < V::V23_11 { 2 } else { 0 },
        ..Default::default()
    }
}

pub(super) fn cluster_body(b: &mut Vec<u8>, v: V) {
    if v >= V::V24_11 {
        b.push(1); // packbool: a record follows
    }
    // accounting_list: one slurmdb_cluster_accounting_rec_t
    be32(b, 1);
    be64(b, 10); // alloc_secs
    be64(b, 0); // tres_rec.alloc_secs
    be64(b, 16); // tres_rec.count
    be32(b, 1); // tres_rec.id
    packstr(b, "cpu"); // tres_rec.name
    be32(b, 0); // tres_rec.type: NULL
    be64(b, 11); // down_secs
    be64(b, 12); // idle_secs
    be64(b, 13); // over_secs
    be64(b, 14); // pdown_secs
    be64(b, 1_700_000_000); // period_start
    be64(b, 15); // plan_secs
    be16(b, 0); // classification
    packstr(b, "ctl"); // control_host
    be32(b, 6817); // control_port
    be16(b, 1); // dimensions
    be32(b, NO_VAL); // fed.feature_list
    be32(b, 0); // fed.name: NULL
    be32(b, 0); // fed.id
    be32(b, 0); // fed.state
    b.push(0); // fed.sync_recvd
    b.push(0); // fed.sync_sent
    be32(b, 0x4); // flags
    if v >= V::V24_11 {
        be16(b, 3); // id
    }
    packstr(b, "c1"); // name
    packstr(b, "n[1-4]"); // nodes
    if v < V::V24_05 {
        be32(b, NO_VAL); // plugin_id_select
    }
    assoc_body(b, v); // root_assoc
    be16(b, v.to_wire()); // rpc_version
    b.push(0); // fed.recv connected
    b.push(0); // fed.send connected
    packstr(b, "1=16"); // tres_str
}

pub(super) fn cluster_value(v: V) -> SlurmdbClusterRec {
    SlurmdbClusterRec {
        accounting_list: Some(vec![SlurmdbClusterAccountingRec {
            alloc_secs: 10,
            tres_rec: SlurmdbTresRec {
                count: 16,
                id: 1,
                name: s("cpu"),
                ..Default::default()
            },
            down_secs: 11,
            idle_secs: 12,
            over_secs: 13,
            pdown_secs: 14,
            period_start: 1_700_000_000,
            plan_secs: 15,
        }]),
        control_host: s("ctl"),
        control_port: 6817,
        dimensions: 1,
        flags: 4,
        id: if v >= V::V24_11 { 3 } else { 0 },
        name: s("c1"),
        nodes: s("n[1-4]"),
        plugin_id_select: if v < V::V24_05 { NO_VAL } else { 0 },
        root_assoc: Box::new(assoc_value(v)),
        rpc_version: v.to_wire(),
        tres_str: s("1=16"),
        ..Default::default()
    }
}

#[test]
fn got_federations_per_release() {
    for v in V::ALL {
        let mut b = Vec::new();
        be32(&mut b, 1); // one federation
        b.push(1); // present
        packstr(&mut b, "fed1"); // name
        be32(&mut b, 0); // flags
        be32(&mut b, 1); // cluster_list: one cluster
        cluster_body(&mut b, v);
        be32(&mut b, 0); // return_code
        let fed = SlurmdbFederationRec {
            name: s("fed1"),
            flags: 0,
            cluster_list: Some(vec![OptClusterRec {
                rec: Some(cluster_value(v)),
            }]),
        };
        let m = DbdListMsg {
            my_list: Some(vec![OptFederationRec(Some(fed))]),
            return_code: 0,
        };
        check(v, 1495, &b, &DbdMessage::GotFederations(m));
    }
    // What a controller in no federation gets.
    let mut b = Vec::new();
    be32(&mut b, 0);
    be32(&mut b, 0);
    check(
        V::V26_05,
        1495,
        &b,
        &DbdMessage::GotFederations(DbdListMsg {
            my_list: Some(vec![]),
            return_code: 0,
        }),
    );
}
