//! The controller's accounting messages over a real connection into the
//! private MariaDB, in the 22.05, 24.11 and 26.05 layouts: each table's
//! rows as stock's `as_mysql_*` code writes them, column by column.

mod common;

use common::db::{count, expect, fresh, row};
use common::*;
use mysql_async::prelude::Queryable;
use slurm_testkit::mariadb::MariaDb;
use slurm_testkit::munged::FakeAuth;
use slurm_wire::dbd::acct::node_state;
use slurm_wire::dbd::{
    DbdClusterTresMsg, DbdIdRcMsg, DbdJobCompMsg, DbdJobHeavyMsg, DbdJobStartMsg, DbdJobSuspendMsg,
    DbdListMsg, DbdMessage, DbdMultMsg, DbdNodeStateMsg, DbdRegisterCtldMsg, DbdStepCompMsg,
    DbdStepStartMsg, PersistRcMsg,
};
use slurm_wire::msg::jobacct::{JobAcctInfo, JobAcctInfoData};
use slurm_wire::types::StepId;
use slurm_wire::ProtocolVersion as V;
use slurmdbd::conn::ConnConf;
use slurmdbd::db::Db;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

const NO_VAL: u32 = 0xffff_fffe;
const NO_VAL64: u64 = 0xffff_ffff_ffff_fffe;
const ACCOUNTING_FIRST_REG: u32 = 10002;
const ACCOUNTING_TRES_CHANGE_DB: u32 = 10004;
const ESLURM_ACCESS_DENIED: u32 = 2002;
const JOB_RUNNING: u32 = 1;
const JOB_SUSPENDED: u32 = 2;
const JOB_COMPLETE: u32 = 3;
const JOB_SEND_ENV: u64 = 1 << 6;
const JOB_SEND_SCRIPT: u64 = 1 << 35;
/// A 24.11+ controller's db_index (its sluid), as in the 24.11 capture.
const SLUID: u64 = 5_392_648_102_427_281_408;
const T0: i64 = 1_796_238_000;

/// A connection from the controller of cluster c1, speaking `v`.
struct Ctld {
    s: TcpStream,
    v: V,
}

impl Ctld {
    async fn open(addr: std::net::SocketAddr, v: V, uid: u32) -> Ctld {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(&init_bytes(&FakeAuth { uid }, v.to_wire(), v.to_wire()))
            .await
            .unwrap();
        assert_eq!(rc(&mut s, v).await.rc, 0);
        Ctld { s, v }
    }

    async fn send(&mut self, m: DbdMessage) -> DbdMessage {
        self.s.write_all(&m.encode(self.v).unwrap()).await.unwrap();
        recv(&mut self.s, self.v).await.expect("an answer")
    }

    async fn rc(&mut self, m: DbdMessage) -> PersistRcMsg {
        match self.send(m).await {
            DbdMessage::PersistRc(r) => r,
            other => panic!("expected SLURM_PERSIST_RC, got {other:?}"),
        }
    }

    async fn id_rc(&mut self, m: DbdJobStartMsg) -> DbdIdRcMsg {
        match self.send(DbdMessage::JobStart(Box::new(m))).await {
            DbdMessage::IdRc(r) => r,
            other => panic!("expected DBD_ID_RC, got {other:?}"),
        }
    }
}

async fn serve(db: Db) -> std::net::SocketAddr {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(slurmdbd::server::serve(
        l,
        FakeAuth::ctx(0),
        ConnConf::default(),
        Some(db),
    ));
    addr
}

fn register() -> DbdMessage {
    DbdMessage::RegisterCtld(DbdRegisterCtldMsg {
        dimensions: 1,
        flags: 0,
        plugin_id_select: NO_VAL,
        port: 6817,
        cluster_id: 0,
    })
}

fn job(v: V) -> DbdJobStartMsg {
    let new_releases = v >= V::V24_11;
    DbdJobStartMsg {
        account: Some("research".into()),
        alloc_nodes: 1,
        array_task_id: NO_VAL,
        assoc_id: 2,
        db_index: if new_releases { SLUID } else { NO_VAL64 },
        eligible_time: T0 + 10,
        exclusive: 1,
        gid: 1000,
        job_id: 5,
        job_state: JOB_RUNNING,
        name: Some("life".into()),
        nodes: Some("n1".into()),
        node_inx: Some("0".into()),
        partition: Some("debug".into()),
        priority: 100,
        qos_id: 1,
        req_cpus: 2,
        req_mem: 1000,
        restart_cnt: 0,
        sluid: if v >= V::V26_05 { SLUID } else { 0 },
        start_time: T0 + 20,
        std_out: Some("/home/alice/out".into()),
        submit_line: Some("sbatch life.sh".into()),
        submit_time: T0 + 10,
        timelimit: 10,
        tres_alloc_str: Some("1=2,2=1000,4=1".into()),
        tres_req_str: Some("1=2,2=1000,4=1".into()),
        uid: 1000,
        work_dir: Some("/home/alice".into()),
        env_hash: Some("envhash".into()),
        script_hash: Some("scripthash".into()),
        ..Default::default()
    }
}

fn step_start(db_index: u64, step: u32, v: V) -> DbdStepStartMsg {
    DbdStepStartMsg {
        assoc_id: 2,
        db_index,
        name: Some(
            if step == StepId::BATCH_SCRIPT {
                "batch"
            } else {
                "hostname"
            }
            .into(),
        ),
        nodes: Some("n1".into()),
        node_inx: Some("0".into()),
        node_cnt: 1,
        start_time: T0 + 21,
        job_submit_time: T0 + 10,
        req_cpufreq_min: NO_VAL,
        req_cpufreq_max: NO_VAL,
        req_cpufreq_gov: NO_VAL,
        step_id: StepId {
            sluid: 0,
            job_id: 5,
            step_id: step,
            step_het_comp: NO_VAL,
        },
        // Only 26.05 sends it; older layouts leave it out.
        state: if v >= V::V26_05 { JOB_RUNNING } else { 0 },
        submit_line: Some("srun hostname".into()),
        task_dist: 1,
        total_tasks: 2,
        tres_alloc_str: Some("1=2,2=1000,4=1".into()),
        ..Default::default()
    }
}

fn usage() -> JobAcctInfo {
    JobAcctInfo(Some(JobAcctInfoData {
        user_cpu_sec: 3,
        user_cpu_usec: 500,
        sys_cpu_sec: 1,
        sys_cpu_usec: 250,
        act_cpufreq: 2000,
        consumed_energy: 0,
        tres_ids: vec![1, 2, 6],
        tres_usage_in_max: vec![3000, 4_000_000, u64::MAX],
        tres_usage_in_max_nodeid: vec![0, 0, u64::MAX],
        tres_usage_in_max_taskid: vec![1, 0, u64::MAX],
        tres_usage_in_min: vec![1000, 1_000_000, u64::MAX],
        tres_usage_in_min_nodeid: vec![0, 0, u64::MAX],
        tres_usage_in_min_taskid: vec![0, 1, u64::MAX],
        tres_usage_in_tot: vec![4000, 5_000_000, 100],
        tres_usage_out_max: vec![u64::MAX, u64::MAX, 50],
        tres_usage_out_max_nodeid: vec![u64::MAX, u64::MAX, 0],
        tres_usage_out_max_taskid: vec![u64::MAX, u64::MAX, 0],
        tres_usage_out_min: vec![u64::MAX, u64::MAX, 10],
        tres_usage_out_min_nodeid: vec![u64::MAX, u64::MAX, 0],
        tres_usage_out_min_taskid: vec![u64::MAX, u64::MAX, 1],
        tres_usage_out_tot: vec![u64::MAX, u64::MAX, 60],
        ..Default::default()
    }))
}

/// Register, TRES, a node down and up, a job with a batch step and a
/// step that reports usage, the job's end: the rows each leaves.
async fn a_jobs_whole_life(server: &MariaDb, v: V) {
    let name = format!("life_{}", v.to_wire());
    let db = fresh(server, &name).await;
    let addr = serve(db.clone()).await;
    let mut c = Ctld::open(addr, v, 0).await;
    let what = |s: &str| format!("{v} {s}");

    // Registration: a new cluster, its tables and root associations.
    let r = c.rc(register()).await;
    assert_eq!(r.ret_info, 1434);
    let cl = row(&db, "select * from cluster_table where name = 'c1'").await;
    let id: u32 = cl["id"].parse().unwrap();
    assert!((2..4096).contains(&id), "{cl:?}");
    if v >= V::V24_11 {
        assert_eq!(
            r.rc,
            id | 1 << 31,
            "24.11 on, the answer carries the cluster id"
        );
    } else {
        assert_eq!(r.rc, 0);
    }
    let rpc = v.to_wire().to_string();
    expect(
        &cl,
        &[
            ("control_host", "127.0.0.1"),
            ("control_port", "6817"),
            ("last_port", "6817"),
            ("rpc_version", &rpc),
            ("dimensions", "1"),
            ("flags", "0"),
            ("deleted", "0"),
            ("federation", ""),
            ("fed_state", "0"),
            ("classification", "0"),
        ],
        &what("cluster_table"),
    );
    let root = row(&db, "select * from \"c1_assoc_table\" where user = ''").await;
    expect(
        &root,
        &[
            ("acct", "root"),
            ("parent_acct", ""),
            ("lineage", "/"),
            ("qos", ",1,"),
            ("shares", "1"),
            ("id_parent", "0"),
        ],
        &what("root association"),
    );
    let user = row(&db, "select * from \"c1_assoc_table\" where user = 'root'").await;
    expect(
        &user,
        &[
            ("acct", "root"),
            // A user's association names its account, not a parent.
            ("parent_acct", ""),
            ("partition", ""),
            ("qos", ""),
            ("flags", "131072"),
            ("shares", "1"),
            ("is_def", "1"),
            ("lineage", "/0-root/"),
            ("id_parent", &root["id_assoc"]),
        ],
        &what("root user's association"),
    );
    let txn: Vec<u16> = db
        .conn()
        .await
        .unwrap()
        .query("select action from txn_table order by id")
        .await
        .unwrap();
    assert_eq!(
        txn,
        [1405, 1404, 1430],
        "{v}: add cluster, add assoc, modify cluster"
    );
    // Their text, as stock 26.05 writes it (its own rows, read off a
    // database it made, with this cluster's times and ids).
    let txn: Vec<(String, String, String)> = db
        .conn()
        .await
        .unwrap()
        .query("select name, cluster, info from txn_table order by id")
        .await
        .unwrap();
    let t = &cl["creation_time"];
    let (root_id, user_id) = (&root["id_assoc"], &user["id_assoc"]);
    assert_eq!(
        txn[0],
        (
            "c1".into(),
            "".into(),
            format!(
                "mod_time={t}, shares=1, grp_jobs=NULL, grp_jobs_accrue=NULL, \
                 grp_submit_jobs=NULL, grp_wall=NULL, max_jobs=NULL, max_jobs_accrue=NULL, \
                 min_prio_thresh=NULL, max_submit_jobs=NULL, max_wall_pj=NULL, priority=NULL, \
                 def_qos_id=NULL, qos=',1,', federation='', fed_id=0, fed_state=0, features=''"
            )
        )
    );
    assert_eq!(
        txn[1],
        (
            format!("id_assoc={user_id}"),
            "c1".into(),
            format!(
                "mod_time={t}, acct='root', user='root', `partition`='', id_parent='{root_id}', \
                 lineage='/0-root/', shares=1, grp_jobs=NULL, grp_jobs_accrue=NULL, \
                 grp_submit_jobs=NULL, grp_wall=NULL, is_def=1, max_jobs=NULL, \
                 max_jobs_accrue=NULL, min_prio_thresh=NULL, max_submit_jobs=NULL, \
                 max_wall_pj=NULL, priority=NULL, def_qos_id=NULL, flags=131072, qos='', \
                 delta_qos=''"
            )
        )
    );
    assert_eq!(
        txn[2],
        (
            "name='c1'".into(),
            "".into(),
            format!(
                "control_host='127.0.0.1', control_port=6817, last_port=6817, \
                 rpc_version={rpc}, dimensions=1, flags=0"
            )
        )
    );
    // Registering again is a modification only.
    let again = c.rc(register()).await;
    assert_eq!(again.rc, r.rc);
    assert_eq!(count(&db, "select count(*) from cluster_table").await, 1);

    // Cluster TRES: the first time FIRST_REG, then nothing new, then a change.
    let tres = |t: &str, at: i64| {
        DbdMessage::ClusterTres(DbdClusterTresMsg {
            cluster_nodes: Some("n[1-2]".into()),
            event_time: at,
            tres_str: Some(t.into()),
        })
    };
    assert_eq!(
        c.rc(tres("1=4,2=2000,4=2", T0)).await.rc,
        ACCOUNTING_FIRST_REG
    );
    let ev = row(&db, "select * from \"c1_event_table\" where node_name = ''").await;
    expect(
        &ev,
        &[
            ("cluster_nodes", "n[1-2]"),
            ("tres", "1=4,2=2000,4=2"),
            ("time_start", &T0.to_string()),
            ("time_end", "0"),
            ("reason", "Cluster Registered TRES"),
            ("reason_uid", "4294967294"),
            ("state", "0"),
        ],
        &what("cluster event"),
    );
    assert_eq!(c.rc(tres("1=4,2=2000,4=2", T0 + 1)).await.rc, 0);
    assert_eq!(
        c.rc(tres("1=8,2=2000,4=2", T0 + 2)).await.rc,
        ACCOUNTING_TRES_CHANGE_DB
    );
    let events: Vec<(i64, i64, String)> = db
        .conn()
        .await
        .unwrap()
        .query("select time_start, time_end, tres from \"c1_event_table\" order by time_start")
        .await
        .unwrap();
    assert_eq!(
        events,
        [
            (T0, T0 + 2, "1=4,2=2000,4=2".into()),
            (T0 + 2, 0, "1=8,2=2000,4=2".into())
        ]
    );

    // A node drained, then up.
    let node = |new_state, at, reason: Option<&str>, tres: Option<&str>| {
        DbdMessage::NodeState(DbdNodeStateMsg {
            hostlist: Some("n1".into()),
            reason: reason.map(Into::into),
            reason_uid: 0,
            new_state,
            event_time: at,
            state: if new_state == node_state::DOWN {
                514
            } else {
                0
            },
            tres_str: tres.map(Into::into),
            ..Default::default()
        })
    };
    let r = c
        .rc(node(node_state::DOWN, T0 + 3, Some("maint"), Some("1=2")))
        .await;
    assert_eq!((r.rc, r.ret_info), (0, 1432));
    // The same state and reason again: no second event.
    c.rc(node(node_state::DOWN, T0 + 4, Some("MAINT"), Some("1=2")))
        .await;
    c.rc(node(node_state::UP, T0 + 5, None, None)).await;
    let n1 = row(
        &db,
        "select * from \"c1_event_table\" where node_name = 'n1'",
    )
    .await;
    let t3 = (T0 + 3).to_string();
    let t5 = (T0 + 5).to_string();
    expect(
        &n1,
        &[
            ("state", "514"),
            ("reason", "maint"),
            ("reason_uid", "0"),
            ("tres", "1=2"),
            ("time_start", &t3),
            ("time_end", &t5),
        ],
        &what("node event"),
    );
    assert_eq!(
        count(
            &db,
            "select count(*) from \"c1_event_table\" where node_name = 'n1'"
        )
        .await,
        1
    );

    // The job starts: its index, and a request for its env and script.
    let id = c.id_rc(job(v)).await;
    let db_index = if v >= V::V24_11 { SLUID } else { 1 };
    assert_eq!(
        (id.job_id, id.db_index, id.flags, id.return_code),
        (5, db_index, JOB_SEND_ENV | JOB_SEND_SCRIPT, 0),
        "{v}"
    );
    let sluid = if v >= V::V26_05 {
        SLUID.to_string()
    } else {
        "0".into()
    };
    let j = row(&db, "select * from \"c1_job_table\" where id_job = 5").await;
    let (t10, t20) = ((T0 + 10).to_string(), (T0 + 20).to_string());
    // Fields a layout lacks are stored as stock's reader leaves them.
    let exclusive = if v >= V::V26_05 { "NODE" } else { "NO" };
    let std_out = if v >= V::V24_05 {
        "/home/alice/out"
    } else {
        ""
    };
    expect(
        &j,
        &[
            ("job_db_inx", &db_index.to_string()),
            ("sluid", &sluid),
            ("account", "research"),
            ("partition", "debug"),
            ("job_name", "life"),
            ("nodelist", "n1"),
            ("node_inx", "0"),
            ("state", "1"),
            ("id_user", "1000"),
            ("id_group", "1000"),
            ("id_assoc", "2"),
            ("id_qos", "1"),
            ("id_array_job", "0"),
            ("id_array_task", "4294967294"),
            ("het_job_offset", "4294967294"),
            ("cpus_req", "2"),
            ("mem_req", "1000"),
            ("nodes_alloc", "1"),
            ("priority", "100"),
            ("timelimit", "10"),
            ("time_submit", &t10),
            ("time_eligible", &t10),
            ("time_start", &t20),
            ("time_end", "0"),
            ("flags", "16"),
            ("env_hash_inx", "1"),
            ("script_hash_inx", "1"),
            ("tres_alloc", "1=2,2=1000,4=1"),
            ("tres_req", "1=2,2=1000,4=1"),
            ("work_dir", "/home/alice"),
            ("std_out", std_out),
            ("std_err", ""),
            ("submit_line", "sbatch life.sh"),
            ("array_task_str", "NULL"),
            ("array_task_pending", "0"),
            ("exclusive", exclusive),
            ("oversubscribe", "NO"),
            ("kill_requid", "NULL"),
            ("wckey", ""),
            ("id_wckey", "0"),
        ],
        &what("job start"),
    );

    // Its environment and script, by hash.
    let r = c
        .rc(DbdMessage::JobHeavy(DbdJobHeavyMsg {
            env: Some("HOME=/home/alice".into()),
            env_hash: Some("envhash".into()),
            script: Some("#!/bin/sh\nsrun hostname\n".into()),
            script_hash: Some("scripthash".into()),
        }))
        .await;
    assert_eq!(r.rc, 0);
    let env = row(&db, "select * from \"c1_job_env_table\"").await;
    expect(
        &env,
        &[
            ("hash_inx", "1"),
            ("env_hash", "envhash"),
            ("env_vars", "HOME=/home/alice"),
        ],
        &what("env"),
    );
    let script = row(&db, "select * from \"c1_job_script_table\"").await;
    expect(
        &script,
        &[
            ("script_hash", "scripthash"),
            ("batch_script", "#!/bin/sh\nsrun hostname\n"),
        ],
        &what("script"),
    );

    // The batch step and step 0 start in one batch.
    let sent_index = if v >= V::V24_11 { SLUID } else { 1 };
    let got = c
        .send(DbdMessage::SendMultMsg(DbdMultMsg {
            my_list: Some(vec![
                DbdMessage::StepStart(Box::new(step_start(sent_index, StepId::BATCH_SCRIPT, v))),
                DbdMessage::StepStart(Box::new(step_start(sent_index, 0, v))),
            ]),
            return_code: 0,
        }))
        .await;
    let DbdMessage::GotMultMsg(got) = got else {
        panic!("expected DBD_GOT_MULT_MSG, got {got:?}")
    };
    let rcs: Vec<(u32, u16)> = got
        .my_list
        .unwrap()
        .into_iter()
        .map(|m| match m {
            DbdMessage::PersistRc(r) => (r.rc, r.ret_info),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(rcs, [(0, 1442), (0, 1442)]);
    let s0 = row(&db, "select * from \"c1_step_table\" where id_step = 0").await;
    let t21 = (T0 + 21).to_string();
    expect(
        &s0,
        &[
            ("job_db_inx", &db_index.to_string()),
            ("step_het_comp", "4294967294"),
            ("step_name", "hostname"),
            ("state", "1"),
            ("nodelist", "n1"),
            ("node_inx", "0"),
            ("nodes_alloc", "1"),
            ("task_cnt", "2"),
            ("task_dist", "1"),
            ("time_start", &t21),
            ("time_end", "0"),
            ("req_cpufreq", "4294967294"),
            ("req_cpufreq_min", "4294967294"),
            ("submit_line", "srun hostname"),
            ("tres_alloc", "1=2,2=1000,4=1"),
            ("cwd", ""),
        ],
        &what("step start"),
    );
    let batch = row(&db, "select * from \"c1_step_table\" where id_step = -5").await;
    assert_eq!(batch["step_name"], "batch");

    // Step 0 ends with its usage.
    let r = c
        .rc(DbdMessage::StepComplete(Box::new(DbdStepCompMsg {
            assoc_id: 2,
            db_index: sent_index,
            end_time: T0 + 30,
            exit_code: 0,
            jobacct: usage(),
            job_submit_time: T0 + 10,
            job_tres_alloc_str: None,
            req_uid: 1000,
            start_time: T0 + 21,
            state: JOB_RUNNING as u16,
            step_id: StepId {
                sluid: 0,
                job_id: 5,
                step_id: 0,
                step_het_comp: NO_VAL,
            },
            total_tasks: 2,
        })))
        .await;
    assert_eq!((r.rc, r.ret_info), (0, 1441));
    let s0 = row(&db, "select * from \"c1_step_table\" where id_step = 0").await;
    let t30 = (T0 + 30).to_string();
    expect(
        &s0,
        &[
            ("time_end", &t30),
            ("state", "3"),
            ("exit_code", "0"),
            // A clean end: nobody killed it.
            ("kill_requid", "NULL"),
            ("user_sec", "3"),
            ("user_usec", "500"),
            ("sys_sec", "1"),
            ("sys_usec", "250"),
            ("act_cpufreq", "2000"),
            ("tres_usage_in_max", "1=3000,2=4000000"),
            ("tres_usage_in_max_taskid", "1=1,2=0"),
            ("tres_usage_in_min", "1=1000,2=1000000"),
            ("tres_usage_in_tot", "1=4000,2=5000000,6=100"),
            ("tres_usage_in_ave", "1=2000,2=2500000,6=50"),
            ("tres_usage_out_max", "6=50"),
            ("tres_usage_out_min_taskid", "6=1"),
            ("tres_usage_out_tot", "6=60"),
            ("tres_usage_out_ave", "6=30"),
        ],
        &what("step complete"),
    );

    // The job ends.
    let r = c
        .rc(DbdMessage::JobComplete(Box::new(DbdJobCompMsg {
            assoc_id: 2,
            db_index: sent_index,
            derived_ec: 0,
            end_time: T0 + 40,
            exit_code: 0,
            job_id: 5,
            job_state: JOB_COMPLETE,
            nodes: Some("n1".into()),
            req_uid: u32::MAX,
            start_time: T0 + 20,
            submit_time: T0 + 10,
            tres_alloc_str: Some("1=2,2=1000,4=1".into()),
            ..Default::default()
        })))
        .await;
    assert_eq!((r.rc, r.ret_info), (0, 1424));
    let j = row(&db, "select * from \"c1_job_table\" where id_job = 5").await;
    let t40 = (T0 + 40).to_string();
    expect(
        &j,
        &[
            ("time_end", &t40),
            ("state", "3"),
            ("exit_code", "0"),
            ("derived_ec", "0"),
            ("kill_requid", "NULL"),
            ("tres_alloc", "1=2,2=1000,4=1"),
        ],
        &what("job complete"),
    );
    assert_eq!(count(&db, "select count(*) from \"c1_job_table\"").await, 1);
    assert_eq!(
        count(&db, "select count(*) from \"c1_step_table\"").await,
        2
    );
}

#[tokio::test]
async fn a_jobs_whole_life_in_each_layout() {
    let server = MariaDb::start();
    for v in [V::V22_05, V::V24_11, V::V26_05] {
        a_jobs_whole_life(&server, v).await;
    }
}

/// 22.05's controller sends steps before it has a db_index (the job start
/// still queued) and the starts later in DBD_SEND_MULT_JOB_START: the job
/// row is made from the step, then completed by the start, one row.
#[tokio::test]
async fn a_step_before_its_jobs_start_makes_the_row_the_start_fills() {
    let server = MariaDb::start();
    let db = fresh(&server, "early").await;
    let addr = serve(db.clone()).await;
    let v = V::V22_05;
    let mut c = Ctld::open(addr, v, 0).await;
    c.rc(register()).await;
    let r = c
        .rc(DbdMessage::StepStart(Box::new(step_start(
            0,
            StepId::BATCH_SCRIPT,
            v,
        ))))
        .await;
    assert_eq!(r.rc, 0);
    let early = row(&db, "select * from \"c1_job_table\" where id_job = 5").await;
    expect(
        &early,
        &[
            ("job_db_inx", "1"),
            ("job_name", "allocation"),
            ("state", "0"),
            ("nodelist", "n1"),
            ("id_assoc", "2"),
            ("flags", "16"),
        ],
        "job made from the step",
    );
    let got = c
        .send(DbdMessage::SendMultJobStart(DbdListMsg {
            my_list: Some(vec![job(v)]),
            return_code: 0,
        }))
        .await;
    let DbdMessage::GotMultJobStart(got) = got else {
        panic!("{got:?}")
    };
    let ids = got.my_list.unwrap();
    assert_eq!(ids.len(), 1);
    assert_eq!(
        (ids[0].job_id, ids[0].db_index, ids[0].return_code),
        (5, 1, 0)
    );
    let j = row(&db, "select * from \"c1_job_table\" where id_job = 5").await;
    expect(
        &j,
        &[
            ("job_db_inx", "1"),
            ("job_name", "life"),
            ("state", "1"),
            ("id_user", "1000"),
        ],
        "job after its start",
    );
    assert_eq!(count(&db, "select count(*) from \"c1_job_table\"").await, 1);
    let s = row(&db, "select * from \"c1_step_table\"").await;
    assert_eq!(s["job_db_inx"], "1");
}

/// A start the dbd already has (24.11 on: the START_R flag) updates the row;
/// its state never goes back.
#[tokio::test]
async fn a_start_already_recorded_updates_the_row() {
    let server = MariaDb::start();
    let db = fresh(&server, "again").await;
    let addr = serve(db.clone()).await;
    let v = V::V24_11;
    let mut c = Ctld::open(addr, v, 0).await;
    c.rc(register()).await;
    let pending = DbdJobStartMsg {
        job_state: 0,
        start_time: 0,
        nodes: None,
        ..job(v)
    };
    let id = c.id_rc(pending).await;
    assert_eq!(id.db_index, SLUID);
    let j = row(&db, "select * from \"c1_job_table\"").await;
    expect(
        &j,
        &[
            ("state", "0"),
            ("nodelist", "None assigned"),
            ("time_start", "0"),
        ],
        "pending",
    );
    // Its hashes are known now: not asked for again.
    let again = c
        .id_rc(DbdJobStartMsg {
            db_flags: 16,
            ..job(v)
        })
        .await;
    assert_eq!((again.db_index, again.flags), (SLUID, 0));
    let j = row(&db, "select * from \"c1_job_table\"").await;
    let t20 = (T0 + 20).to_string();
    expect(
        &j,
        &[
            ("state", "1"),
            ("nodelist", "n1"),
            ("time_start", &t20),
            ("flags", "16"),
        ],
        "running",
    );
    let back = c
        .id_rc(DbdJobStartMsg {
            db_flags: 16,
            job_state: 0,
            ..job(v)
        })
        .await;
    assert_eq!(back.return_code, 0);
    let j = row(&db, "select * from \"c1_job_table\"").await;
    assert_eq!(j["state"], "1", "greatest(state, ..)");
}

#[tokio::test]
async fn suspend_and_resume_are_recorded() {
    let server = MariaDb::start();
    let db = fresh(&server, "susp").await;
    let addr = serve(db.clone()).await;
    let v = V::V26_05;
    let mut c = Ctld::open(addr, v, 0).await;
    c.rc(register()).await;
    c.id_rc(job(v)).await;
    c.rc(DbdMessage::StepStart(Box::new(step_start(SLUID, 0, v))))
        .await;
    let susp = |state, at| {
        DbdMessage::JobSuspend(DbdJobSuspendMsg {
            assoc_id: 2,
            db_index: SLUID,
            job_id: 5,
            job_state: state,
            submit_time: T0 + 10,
            suspend_time: at,
        })
    };
    assert_eq!(c.rc(susp(JOB_SUSPENDED, T0 + 25)).await.rc, 0);
    let s = row(&db, "select * from \"c1_suspend_table\"").await;
    let t25 = (T0 + 25).to_string();
    expect(
        &s,
        &[("time_start", &t25), ("time_end", "0"), ("id_assoc", "2")],
        "suspended",
    );
    let j = row(&db, "select * from \"c1_job_table\"").await;
    expect(
        &j,
        &[("state", "2"), ("time_suspended", &t25)],
        "job suspended",
    );
    assert_eq!(c.rc(susp(JOB_RUNNING, T0 + 28)).await.rc, 0);
    let s = row(&db, "select * from \"c1_suspend_table\"").await;
    let t28 = (T0 + 28).to_string();
    expect(&s, &[("time_end", &t28)], "resumed");
    // time_suspended = resume - (suspend): 3 seconds in all.
    let j = row(&db, "select * from \"c1_job_table\"").await;
    expect(
        &j,
        &[("state", "1"), ("time_suspended", "3")],
        "job resumed",
    );
    let st = row(&db, "select * from \"c1_step_table\"").await;
    expect(
        &st,
        &[("time_suspended", "3"), ("state", "1")],
        "step resumed",
    );
}

/// Controller messages from a uid that is neither SlurmUser nor root are
/// refused, alone and batched, and the connection goes on.
#[tokio::test]
async fn controller_messages_from_another_uid_are_refused() {
    let server = MariaDb::start();
    let db = fresh(&server, "deny").await;
    let addr = serve(db.clone()).await;
    let v = V::V24_11;
    let mut c = Ctld::open(addr, v, 1000).await;
    let r = c.rc(register()).await;
    assert_eq!(r.rc, ESLURM_ACCESS_DENIED);
    assert_eq!(
        r.comment.as_deref(),
        Some("DBD_REGISTER_CTLD message from invalid uid")
    );
    let r = c.rc(DbdMessage::JobStart(Box::new(job(v)))).await;
    assert_eq!((r.rc, r.ret_info), (ESLURM_ACCESS_DENIED, 1425));
    let r = c
        .rc(DbdMessage::SendMultMsg(DbdMultMsg {
            my_list: Some(vec![register()]),
            return_code: 0,
        }))
        .await;
    assert_eq!((r.rc, r.ret_info), (ESLURM_ACCESS_DENIED, 1474));
    assert_eq!(count(&db, "select count(*) from cluster_table").await, 0);
    // Still served.
    let r = c
        .rc(DbdMessage::Fini(slurm_wire::dbd::DbdFiniMsg {
            close_conn: 0,
            commit: 1,
        }))
        .await;
    assert_eq!(r.rc, 0);
}

/// Messages for a cluster that never registered: its tables are missing,
/// an error is answered and nothing breaks.
#[tokio::test]
async fn a_cluster_that_never_registered_gets_errors() {
    let server = MariaDb::start();
    let db = fresh(&server, "unreg").await;
    let addr = serve(db.clone()).await;
    let v = V::V26_05;
    let mut c = Ctld::open(addr, v, 0).await;
    let id = c.id_rc(job(v)).await;
    assert_ne!(id.return_code, 0);
    let r = c
        .rc(DbdMessage::StepStart(Box::new(step_start(SLUID, 0, v))))
        .await;
    assert_ne!(r.rc, 0);
    assert_eq!(c.rc(register()).await.rc & (1 << 31), 1 << 31);
    assert_eq!(c.id_rc(job(v)).await.return_code, 0);
}

/// A controller that starts clean ends its unended jobs (DBD_FLUSH_JOBS):
/// CANCELLED at the flush's time, a suspended one with its suspension
/// counted and closed; ended jobs are left alone.
#[tokio::test]
async fn flush_jobs_ends_what_was_running() {
    let server = MariaDb::start();
    let db = fresh(&server, "flush").await;
    let addr = serve(db.clone()).await;
    let v = V::V26_05;
    let mut c = Ctld::open(addr, v, 0).await;
    c.rc(register()).await;
    for (id, inx) in [(5, SLUID), (6, SLUID + 1), (7, SLUID + 2)] {
        let r = c
            .id_rc(DbdJobStartMsg {
                job_id: id,
                db_index: inx,
                sluid: inx,
                ..job(v)
            })
            .await;
        assert_eq!(r.return_code, 0);
    }
    c.rc(DbdMessage::StepStart(Box::new(step_start(SLUID, 0, v))))
        .await;
    // 6 is suspended at T0+25; 7 has ended.
    c.rc(DbdMessage::JobSuspend(DbdJobSuspendMsg {
        assoc_id: 2,
        db_index: SLUID + 1,
        job_id: 6,
        job_state: JOB_SUSPENDED,
        submit_time: T0 + 10,
        suspend_time: T0 + 25,
    }))
    .await;
    c.rc(DbdMessage::JobComplete(Box::new(DbdJobCompMsg {
        db_index: SLUID + 2,
        end_time: T0 + 30,
        job_id: 7,
        job_state: JOB_COMPLETE,
        submit_time: T0 + 10,
        start_time: T0 + 20,
        derived_ec: NO_VAL,
        req_uid: u32::MAX,
        ..Default::default()
    })))
    .await;
    let flush = DbdMessage::FlushJobs(DbdClusterTresMsg {
        event_time: T0 + 100,
        ..Default::default()
    });
    let r = c.rc(flush).await;
    assert_eq!((r.rc, r.ret_info), (0, 1408));
    let t100 = (T0 + 100).to_string();
    let j5 = row(&db, "select * from \"c1_job_table\" where id_job = 5").await;
    expect(&j5, &[("state", "4"), ("time_end", &t100)], "running job");
    let s5 = row(&db, "select * from \"c1_step_table\"").await;
    expect(&s5, &[("state", "4"), ("time_end", &t100)], "its step");
    let j6 = row(&db, "select * from \"c1_job_table\" where id_job = 6").await;
    expect(
        &j6,
        &[
            ("state", "4"),
            ("time_end", &t100),
            ("time_suspended", "75"),
        ],
        "suspended job",
    );
    let sus = row(&db, "select * from \"c1_suspend_table\"").await;
    expect(&sus, &[("time_end", &t100)], "its suspension");
    let j7 = row(&db, "select * from \"c1_job_table\" where id_job = 7").await;
    let t30 = (T0 + 30).to_string();
    expect(&j7, &[("state", "3"), ("time_end", &t30)], "ended job");
}

/// How exit codes are recorded: a step that failed marks the job's
/// derived exit code (the worst, an OOM as is), 1 is stored as 256, the
/// killer's uid is kept.
#[tokio::test]
async fn failures_set_exit_codes_as_stock_does() {
    let server = MariaDb::start();
    let db = fresh(&server, "fail").await;
    let addr = serve(db.clone()).await;
    let v = V::V24_11;
    let mut c = Ctld::open(addr, v, 0).await;
    c.rc(register()).await;
    c.id_rc(job(v)).await;
    let end = |step, exit_code, req_uid| {
        DbdMessage::StepComplete(Box::new(DbdStepCompMsg {
            db_index: SLUID,
            end_time: T0 + 30,
            exit_code,
            jobacct: JobAcctInfo(None),
            job_submit_time: T0 + 10,
            req_uid,
            start_time: T0 + 21,
            state: JOB_RUNNING as u16,
            step_id: StepId {
                sluid: SLUID,
                job_id: 5,
                step_id: step,
                step_het_comp: NO_VAL,
            },
            total_tasks: 1,
            ..Default::default()
        }))
    };
    for step in [0, 1, 2] {
        c.rc(DbdMessage::StepStart(Box::new(step_start(SLUID, step, v))))
            .await;
    }
    c.rc(end(0, 2 << 8, 1000)).await;
    c.rc(end(1, 9, 0)).await;
    c.rc(end(2, 1 << 8, 1000)).await;
    let state = |r: std::collections::BTreeMap<String, String>| {
        (
            r["state"].clone(),
            r["exit_code"].clone(),
            r["kill_requid"].clone(),
        )
    };
    let s0 = row(&db, "select * from \"c1_step_table\" where id_step = 0").await;
    assert_eq!(
        state(s0),
        ("5".into(), "512".into(), "1000".into()),
        "FAILED"
    );
    let s1 = row(&db, "select * from \"c1_step_table\" where id_step = 1").await;
    assert_eq!(
        state(s1),
        ("4".into(), "9".into(), "0".into()),
        "CANCELLED by signal"
    );
    let j = row(&db, "select * from \"c1_job_table\"").await;
    assert_eq!(j["derived_ec"], "512", "the worst step's");
    c.rc(DbdMessage::JobComplete(Box::new(DbdJobCompMsg {
        db_index: SLUID,
        derived_ec: NO_VAL,
        end_time: T0 + 40,
        exit_code: 1,
        job_id: 5,
        job_state: 5,
        req_uid: 1000,
        start_time: T0 + 20,
        submit_time: T0 + 10,
        ..Default::default()
    })))
    .await;
    let j = row(&db, "select * from \"c1_job_table\"").await;
    expect(
        &j,
        &[
            ("state", "5"),
            ("exit_code", "256"),
            ("kill_requid", "1000"),
            ("derived_ec", "512"),
        ],
        "failed job",
    );
}

/// DBD_SEND_MULT_MSG stops at the first item whose handler fails, as
/// stock's: the controller keeps and resends the rest.
#[tokio::test]
async fn a_batch_stops_at_its_first_failure() {
    let server = MariaDb::start();
    let db = fresh(&server, "batch").await;
    let addr = serve(db.clone()).await;
    let v = V::V24_11;
    let mut c = Ctld::open(addr, v, 0).await;
    c.rc(register()).await;
    // The middle step has no submit time and no index: it cannot be recorded.
    let bad = DbdStepStartMsg {
        db_index: 0,
        job_submit_time: 0,
        ..step_start(0, 1, v)
    };
    let got = c
        .send(DbdMessage::SendMultMsg(DbdMultMsg {
            my_list: Some(vec![
                DbdMessage::JobStart(Box::new(job(v))),
                DbdMessage::StepStart(Box::new(bad)),
                DbdMessage::StepStart(Box::new(step_start(SLUID, 0, v))),
            ]),
            return_code: 0,
        }))
        .await;
    let DbdMessage::GotMultMsg(got) = got else {
        panic!("{got:?}")
    };
    let items = got.my_list.unwrap();
    assert_eq!(items.len(), 2, "{items:?}");
    assert!(matches!(&items[0], DbdMessage::IdRc(r) if r.return_code == 0));
    assert!(matches!(&items[1], DbdMessage::PersistRc(r) if r.rc != 0 && r.ret_info == 1442));
    assert_eq!(
        count(&db, "select count(*) from \"c1_step_table\"").await,
        0
    );
}

/// DBD_NODE_STATE_UPDATE: a node's extra and cloud instance, written on
/// its latest powered-down event (one made up when there is none).
#[tokio::test]
async fn node_updates_set_extra_and_instance() {
    let server = MariaDb::start();
    let db = fresh(&server, "upd").await;
    let addr = serve(db.clone()).await;
    let v = V::V26_05;
    let mut c = Ctld::open(addr, v, 0).await;
    c.rc(register()).await;
    let r = c
        .rc(DbdMessage::NodeState(DbdNodeStateMsg {
            hostlist: Some("n2".into()),
            extra: Some("rack=4".into()),
            instance_id: Some("i-123".into()),
            instance_type: Some("m5".into()),
            new_state: node_state::UPDATE,
            state: 1 << 12,
            tres_str: Some("1=4".into()),
            reason_uid: NO_VAL,
            ..Default::default()
        }))
        .await;
    assert_eq!(r.rc, 0);
    let e = row(
        &db,
        "select * from \"c1_event_table\" where node_name = 'n2'",
    )
    .await;
    expect(
        &e,
        &[
            ("extra", "rack=4"),
            ("instance_id", "i-123"),
            ("instance_type", "m5"),
            ("reason", "node-update"),
            // SlurmUser's uid.
            ("reason_uid", "0"),
            ("state", "4096"),
        ],
        "update event",
    );
    assert_ne!(e["time_end"], "0", "ended at once");
}
