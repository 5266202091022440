//! The load generator against an in-process server that speaks real,
//! munge-authenticated RPCs (private munged), in 22.05, 24.11 and 26.05.

use slurm_bench::load::{self, Limit, Target};
use slurm_bench::requests::{check_reply, request, Kind, Submitter};
use slurm_rpc::{rc_message, AuthCtx, Incoming};
use slurm_testkit::munged::Munged;
use slurm_wire::auth::{Audience, VerifyPolicy};
use slurm_wire::msg::job::{JobInfo, JobInfoMsg, SubmitResponseMsg};
use slurm_wire::pack::NO_VAL;
use slurm_wire::types::StepId;
use slurm_wire::{Frame, Message, MsgType, ProtocolVersion};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

const VERSIONS: [ProtocolVersion; 3] = [
    ProtocolVersion::V22_05,
    ProtocolVersion::V24_11,
    ProtocolVersion::V26_05,
];

fn who() -> Submitter {
    Submitter {
        uid: 1234,
        gid: 100,
        work_dir: "/home/u".into(),
        host: "login".into(),
        partition: Some("debug".into()),
    }
}

#[test]
fn requests_decode_as_what_was_built_in_every_version() {
    let kinds = [
        Kind::Submit { hold: true },
        Kind::Submit { hold: false },
        Kind::JobInfo,
        Kind::NodeInfo,
        Kind::Ping,
    ];
    for v in VERSIONS {
        for kind in kinds {
            let m = request(kind, &who());
            let body = m.encode_to_vec(v);
            let back = Message::decode(v, m.msg_type(), &body)
                .unwrap_or_else(|e| panic!("{kind:?} in {v}: {e}"));
            // fields a release lacks (e.g. oom_kill_step before 24.11) are not
            // sent, so compare what that release carries: the bytes
            assert_eq!(back.encode_to_vec(v), body, "{kind:?} in {v}");
            assert_eq!(back.msg_type(), m.msg_type());
            if let (Message::RequestSubmitBatchJob(a), Message::RequestSubmitBatchJob(b)) =
                (&back, &m)
            {
                assert_eq!(
                    (a.priority, a.user_id, a.group_id, &a.partition, &a.script),
                    (b.priority, b.user_id, b.group_id, &b.partition, &b.script),
                    "{v}"
                );
                assert_eq!(
                    (&a.std_out, &a.work_dir, &a.environment),
                    (&b.std_out, &b.work_dir, &b.environment)
                );
            } else {
                assert_eq!(back, m, "{kind:?} in {v}");
            }
        }
    }
    // what the controller acts on: hold is priority 0, the rest NO_VAL
    let held = match request(Kind::Submit { hold: true }, &who()) {
        Message::RequestSubmitBatchJob(d) => d,
        other => panic!("{other:?}"),
    };
    assert_eq!(held.priority, 0);
    assert_eq!((held.user_id, held.group_id), (1234, 100));
    assert_eq!(held.partition.as_deref(), Some("debug"));
    assert!(held.script.as_deref().unwrap_or("").starts_with("#!"));
    match request(Kind::Submit { hold: false }, &who()) {
        Message::RequestSubmitBatchJob(d) => assert_eq!(d.priority, NO_VAL),
        other => panic!("{other:?}"),
    }
}

#[test]
fn replies_are_checked() {
    let sub = Message::ResponseSubmitBatchJob(SubmitResponseMsg {
        step_id: StepId::job(7),
        error_code: 0,
        job_submit_user_msg: None,
    });
    assert_eq!(
        check_reply(Kind::Submit { hold: true }, &sub).map(|a| a.records),
        Ok(1)
    );
    // a held job is accepted with ESLURM_JOB_HELD (stock); not so a runnable one
    let held = Message::ResponseSubmitBatchJob(SubmitResponseMsg {
        step_id: StepId::job(8),
        error_code: slurm_wire::errno::ESLURM_JOB_HELD as u32,
        job_submit_user_msg: None,
    });
    assert!(check_reply(Kind::Submit { hold: true }, &held).is_ok());
    assert!(check_reply(Kind::Submit { hold: false }, &held).is_err());
    // a refused submission is a failure named by its error code
    let refused = rc_message(slurm_wire::errno::ESLURM_INVALID_PARTITION_NAME);
    let e = check_reply(Kind::Submit { hold: true }, &refused).unwrap_err();
    assert!(e.contains("PARTITION"), "{e}");
    assert!(check_reply(Kind::Ping, &rc_message(0)).is_ok());
    assert!(check_reply(Kind::Ping, &rc_message(1)).is_err());
    let jobs = Message::ResponseJobInfo(JobInfoMsg {
        last_update: 1,
        last_backfill: 0,
        job_array: vec![JobInfo::default(), JobInfo::default()],
    });
    assert_eq!(check_reply(Kind::JobInfo, &jobs).map(|a| a.records), Ok(2));
    // the count read without decoding is the count the listing carries
    let body = jobs.encode_to_vec(ProtocolVersion::V22_05);
    assert_eq!(slurm_bench::requests::listing_count(&body), Ok(2));
    assert!(slurm_bench::requests::listing_count(&body[..3]).is_err());
    // the right reply type for the wrong request is no success
    assert!(check_reply(Kind::NodeInfo, &jobs).is_err());
}

/// A tiny controller: numbers submissions, lists as many jobs as were
/// submitted, answers pings; refuses node info (to see errors counted).
async fn fake_ctld(ctx: AuthCtx, delay: Duration) -> std::net::SocketAddr {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let next = Arc::new(AtomicU32::new(1));
    tokio::spawn(slurm_rpc::serve(
        l,
        ctx,
        Duration::from_secs(10),
        move |req: Incoming| {
            let next = next.clone();
            async move {
                tokio::time::sleep(delay).await;
                Some(match req.msg {
                    Message::RequestSubmitBatchJob(d) => {
                        assert_eq!(d.priority, 0, "held submission");
                        let id = next.fetch_add(1, Ordering::SeqCst);
                        Message::ResponseSubmitBatchJob(SubmitResponseMsg {
                            step_id: StepId::job(id),
                            error_code: 0,
                            job_submit_user_msg: None,
                        })
                    }
                    Message::RequestJobInfo(_) => {
                        let n = next.load(Ordering::SeqCst) - 1;
                        Message::ResponseJobInfo(JobInfoMsg {
                            last_update: 1,
                            last_backfill: 0,
                            job_array: (0..n).map(|_| JobInfo::default()).collect(),
                        })
                    }
                    Message::RequestPing(_) => rc_message(0),
                    _ => rc_message(slurm_wire::errno::ESLURM_NOT_SUPPORTED),
                })
            }
        },
    ));
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn closed_loop_counts_requests_and_failures_over_real_munge() {
    let munged = Munged::start();
    // SAFETY: getuid cannot fail.
    let me = unsafe { libc::getuid() };
    let ctx = AuthCtx {
        plugin: Arc::new(munged.auth()),
        slurm_user_uid: me,
        policy: VerifyPolicy::default(),
    };
    for v in VERSIONS {
        let addr = fake_ctld(ctx.clone(), Duration::ZERO).await;
        let t = Arc::new(Target {
            ctx: ctx.clone(),
            addr,
            version: v,
            audience: Audience::Uid(me),
            timeout: Duration::from_secs(10),
            who: who(),
            full_decode: v == ProtocolVersion::V24_11,
        });
        let limit = Limit {
            count: Some(50),
            duration: Duration::from_secs(60),
        };
        let o = load::closed_loop(t.clone(), Kind::Submit { hold: true }, 8, limit).await;
        // exactly the count: workers claim requests, none is sent twice
        assert_eq!((o.ok, o.error_count()), (50, 0), "{v}: {:?}", o.errors);
        assert_eq!(o.latency.len(), 50);
        assert!(o.rate() > 0.0);

        let o = load::closed_loop(
            t.clone(),
            Kind::JobInfo,
            4,
            Limit {
                count: Some(8),
                ..limit
            },
        )
        .await;
        assert_eq!(o.ok, 8, "{v}: {:?}", o.errors);
        assert_eq!(
            o.last_records, 50,
            "{v}: the listing reflects the submissions"
        );

        let o = load::closed_loop(
            t.clone(),
            Kind::NodeInfo,
            2,
            Limit {
                count: Some(4),
                ..limit
            },
        )
        .await;
        assert_eq!(o.ok, 0);
        assert_eq!(
            o.errors.get("ESLURM_NOT_SUPPORTED"),
            Some(&4),
            "{v}: {:?}",
            o.errors
        );

        // The storm on the shared runtime, or on its own below the pings.
        let storm_nice = if v == ProtocolVersion::V24_11 { 5 } else { 0 };
        let (storm, pings) = load::storm(
            t.clone(),
            4,
            Duration::from_millis(300),
            Duration::from_millis(50),
            Duration::from_millis(5),
            storm_nice,
        )
        .await;
        assert_eq!(storm.error_count(), 0, "{v}: {:?}", storm.errors);
        assert_eq!(storm.last_records, 50, "{v}");
        assert!(storm.ok > 0 && pings.ok > 0, "{v}: {storm:?} {pings:?}");
        assert_eq!(pings.error_count(), 0);
        assert!(pings.latency.summary().is_some());
    }
}

#[test]
fn signed_frames_carry_the_submission() {
    // What goes on the wire is a whole frame: check its header and body
    // decode back to the request (per version numbering of the type).
    let munged = Munged::start();
    let ctx = AuthCtx {
        plugin: Arc::new(munged.auth()),
        slurm_user_uid: 0,
        policy: VerifyPolicy::default(),
    };
    for v in VERSIONS {
        let m = request(Kind::Submit { hold: true }, &who());
        let f = slurm_rpc::request_frame(&ctx, v, &m, Audience::Any).unwrap();
        let back = Frame::decode_prefixed(&f.encode()).unwrap();
        assert_eq!(back.header.version, v);
        assert_eq!(
            Some(back.header.msg_type),
            MsgType::RequestSubmitBatchJob.to_wire(v)
        );
        assert!(slurm_rpc::authenticate(&ctx, &back).is_ok());
        assert_eq!(back.message().unwrap().encode_to_vec(v), m.encode_to_vec(v));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_slower_than_the_run_still_count() {
    let munged = Munged::start();
    // SAFETY: getuid cannot fail.
    let me = unsafe { libc::getuid() };
    let ctx = AuthCtx {
        plugin: Arc::new(munged.auth()),
        slurm_user_uid: me,
        policy: VerifyPolicy::default(),
    };
    let addr = fake_ctld(ctx.clone(), Duration::from_millis(400)).await;
    let t = Arc::new(Target {
        ctx,
        addr,
        version: ProtocolVersion::V24_11,
        audience: Audience::Uid(me),
        timeout: Duration::from_secs(10),
        who: who(),
        full_decode: false,
    });
    let limit = Limit {
        count: None,
        duration: Duration::from_millis(100),
    };
    let o = load::closed_loop(t, Kind::Ping, 3, limit).await;
    // one request per worker, each finished after the deadline
    assert_eq!(o.ok, 3, "{:?}", o.errors);
    assert!(o.elapsed >= Duration::from_millis(400));
    assert!(o.rate() > 0.0 && o.rate() < 10.0, "{}", o.rate());
}

/// One buffer serves reply after reply, whatever it held before: a reply
/// shorter than the last is read to its own end, a longer one grows it,
/// and 22.05's reply credentials are still checked against the body.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reused_reply_buffer_reads_each_reply_whole() {
    let munged = Munged::start();
    // SAFETY: getuid cannot fail.
    let me = unsafe { libc::getuid() };
    let ctx = AuthCtx {
        plugin: Arc::new(munged.auth()),
        slurm_user_uid: me,
        policy: VerifyPolicy::default(),
    };
    for v in VERSIONS {
        let addr = fake_ctld(ctx.clone(), Duration::ZERO).await;
        let t = Target {
            ctx: ctx.clone(),
            addr,
            version: v,
            audience: Audience::Uid(me),
            timeout: Duration::from_secs(10),
            who: who(),
            full_decode: false,
        };
        // Stale bytes that would decode as a listing of 0xffffffff jobs.
        let mut buf = vec![0xffu8; 1 << 20];
        let mut listed = Vec::new();
        for round in 1..=3u32 {
            for _ in 0..round * 5 {
                load::one_into(&t, Kind::Submit { hold: true }, &mut buf)
                    .await
                    .unwrap();
            }
            let (_, records) = load::one_into(&t, Kind::JobInfo, &mut buf).await.unwrap();
            listed.push(records);
            // A short reply in between.
            load::one_into(&t, Kind::Ping, &mut buf).await.unwrap();
        }
        assert_eq!(listed, vec![5, 15, 30], "{v}");
        // Longer than the buffer was: it grows.
        let mut small = vec![0u8; 8];
        let (_, records) = load::one_into(&t, Kind::JobInfo, &mut small).await.unwrap();
        assert_eq!(records, 30, "{v}");
        assert!(small.len() > 8);
    }
}
