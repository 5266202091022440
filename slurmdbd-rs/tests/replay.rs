//! Stock slurmctld's accounting traffic as captured (fixtures/<release>/
//! dbd-job.pcap, dbd-node-down.pcap) sent to slurmdbd-rs byte for byte:
//! every answer is the one stock slurmdbd gave.

mod common;

use common::db::{count, fresh};
use common::*;
use slurm_testkit::mariadb::MariaDb;
use slurm_testkit::munged::FakeAuth;
use slurm_wire::dbd::{DbdMessage, DbdRegisterCtldMsg};
use slurm_wire::ProtocolVersion as V;
use slurmdbd::conn::ConnConf;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// The controller's messages of a capture and stock's answers, in order.
fn captured(v: V, name: &str) -> (Vec<Vec<u8>>, Vec<DbdMessage>) {
    let path = format!(
        "{}/../fixtures/{}/{name}.pcap",
        env!("CARGO_MANIFEST_DIR"),
        v
    );
    let pcap = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let streams = slurm_decode::read_streams(&pcap).unwrap();
    let (msgs, _) = slurm_decode::decode_streams_in(&streams, Some(v));
    let mut asks = Vec::new();
    let mut answers = Vec::new();
    for m in msgs.iter().filter(|m| m.dbd) {
        match (m.dir, &m.outcome) {
            ("C->S", _) => asks.push(m.raw.to_vec()),
            ("S->C", Ok(slurm_decode::Decoded::Dbd(d))) => answers.push(d.clone()),
            (dir, other) => panic!("{path}: {dir} {other:?}"),
        }
    }
    assert_eq!(asks.len(), answers.len(), "{path}: one answer per message");
    (asks, answers)
}

async fn replay(server: &MariaDb, v: V, name: &str) -> slurmdbd::db::Db {
    let db = fresh(
        server,
        &format!("{}_{}", name.replace('-', "_"), v.to_wire()),
    )
    .await;
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(slurmdbd::server::serve(
        l,
        FakeAuth::ctx(0),
        ConnConf::default(),
        Some(db.clone()),
    ));
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(&init_bytes(&FakeAuth { uid: 0 }, v.to_wire(), v.to_wire()))
        .await
        .unwrap();
    assert_eq!(rc(&mut s, v).await.rc, 0);
    // The capture begins with the cluster registered long before.
    let reg = DbdMessage::RegisterCtld(DbdRegisterCtldMsg {
        dimensions: 1,
        port: 6817,
        ..Default::default()
    });
    s.write_all(&reg.encode(v).unwrap()).await.unwrap();
    rc(&mut s, v).await;
    let (asks, answers) = captured(v, name);
    assert!(!asks.is_empty());
    for (i, (ask, stock)) in asks.iter().zip(&answers).enumerate() {
        s.write_all(ask).await.unwrap();
        let ours = recv(&mut s, v).await.expect("an answer");
        assert_eq!(&ours, stock, "{v} {name}: message {i}");
    }
    db
}

#[tokio::test]
async fn stock_controllers_traffic_gets_stocks_answers() {
    let server = MariaDb::start();
    for v in [V::V22_05, V::V24_11, V::V26_05] {
        // The two-step batch job: one job row, its batch, extern and srun
        // steps, ended.
        let db = replay(&server, v, "dbd-job").await;
        let done = "select count(*) from \"c1_job_table\" where id_job = 1 and time_end > 0";
        assert_eq!(count(&db, done).await, 1, "{v}");
        let steps = "select count(*) from \"c1_step_table\" where time_end > 0";
        assert!(count(&db, steps).await >= 2, "{v}");
        // The drain and resume: one event for n1, ended.
        let db = replay(&server, v, "dbd-node-down").await;
        let ended = "select count(*) from \"c1_event_table\" where node_name = 'n1' \
                     and reason = 'capture' and time_end > 0";
        assert_eq!(count(&db, ended).await, 1, "{v}");
    }
}
