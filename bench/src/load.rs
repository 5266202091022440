//! Closed-loop load: `conns` workers, each sending one authenticated RPC at
//! a time on a fresh connection (Slurm's one-request-per-connection rule),
//! until a request count or a deadline is reached.

use crate::requests::{check_reply, listing_count, request, Kind, Submitter};
use crate::stats::Samples;
use slurm_rpc::{read_frame, request_frame, write_frame, AuthCtx, RpcError};
use slurm_wire::auth::Audience;
use slurm_wire::auth::{self, AuthBlob};
use slurm_wire::error::DecodeErrorKind;
use slurm_wire::header::{flags, Header};
use slurm_wire::pack::{Reader, MAX_MSG_SIZE};
use slurm_wire::{Frame, Message, MsgType, ProtocolVersion};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

/// Where and how to talk to the controller.
#[derive(Clone)]
pub struct Target {
    pub ctx: AuthCtx,
    pub addr: SocketAddr,
    pub version: ProtocolVersion,
    /// Who may decode our credentials (SlurmUser, as the real clients do).
    pub audience: Audience,
    pub timeout: Duration,
    pub who: Submitter,
    /// Decode every record of job/node listings (costs the generator CPU that
    /// the controller then lacks); otherwise only their record count is read.
    pub full_decode: bool,
}

/// When a run stops: after `count` requests (all workers together) or at
/// `duration`, whichever comes first; requests in flight at the deadline
/// are waited for, and the rate is taken over the time until the last ends.
#[derive(Debug, Clone, Copy)]
pub struct Limit {
    pub count: Option<u64>,
    pub duration: Duration,
}

/// What one run did.
#[derive(Debug, Default)]
pub struct Outcome {
    pub ok: u64,
    /// Failure reason -> how often.
    pub errors: BTreeMap<String, u64>,
    /// Latency of the successful requests, signing and reply check included.
    pub latency: Samples,
    pub elapsed: Duration,
    /// Records in the last successful reply (jobs or nodes listed).
    pub last_records: usize,
}

impl Outcome {
    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }

    /// Successful requests per second of wall time.
    pub fn rate(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 {
            self.ok as f64 / s
        } else {
            0.0
        }
    }

    fn merge(&mut self, o: Outcome) {
        self.ok += o.ok;
        for (k, v) in o.errors {
            *self.errors.entry(k).or_default() += v;
        }
        self.latency.extend(o.latency);
        self.last_records = self.last_records.max(o.last_records);
    }
}

/// The request frame of `msg`, signed (a blocking munged round trip, so
/// off the async workers).
async fn sign(t: &Target, msg: Message) -> Result<Frame, RpcError> {
    let (ctx, v, aud) = (t.ctx.clone(), t.version, t.audience);
    tokio::task::spawn_blocking(move || request_frame(&ctx, v, &msg, aud))
        .await
        .map_err(|e| RpcError::Io(std::io::Error::other(e)))?
}

/// Signs `msg` (a blocking munged round trip, so off the async workers),
/// sends it, and reads the reply frame, its credential checked when it has one.
pub async fn exchange(t: &Target, msg: Message) -> Result<Frame, RpcError> {
    let req = sign(t, msg).await?;
    let io = async {
        let mut s = TcpStream::connect(t.addr).await?;
        s.set_nodelay(true)?;
        write_frame(&mut s, &req).await?;
        read_frame(&mut s).await
    };
    let raw = tokio::time::timeout(t.timeout, io)
        .await
        .map_err(|_| RpcError::Timeout)??;
    let f = Frame::decode(&raw)?;
    if f.auth.is_none() {
        return Ok(f);
    }
    // 22.05 replies carry a credential and real clients check it.
    let ctx = t.ctx.clone();
    tokio::task::spawn_blocking(move || slurm_rpc::authenticate(&ctx, &f).map(|_| f))
        .await
        .map_err(|e| RpcError::Io(std::io::Error::other(e)))?
        .map_err(RpcError::from)
}

/// Signs `msg`, sends it, and reads the whole reply frame into `buf`
/// (reused from one request to the next, so that a 60 MB listing costs this
/// generator neither a fresh allocation nor its page faults): the header
/// and where the body lies in `buf`. A credential, when the reply has one,
/// is checked against the body.
pub async fn exchange_into(
    t: &Target,
    msg: Message,
    buf: &mut Vec<u8>,
) -> Result<(Header, std::ops::Range<usize>), RpcError> {
    let req = sign(t, msg).await?;
    let io = async {
        let mut s = TcpStream::connect(t.addr).await?;
        s.set_nodelay(true)?;
        write_frame(&mut s, &req).await?;
        let n = s.read_u32().await? as usize;
        if n > MAX_MSG_SIZE {
            return Err(RpcError::TooLarge(n));
        }
        if buf.len() < n {
            buf.resize(n, 0);
        }
        let frame = buf.get_mut(..n).unwrap_or_default();
        s.read_exact(frame).await?;
        Ok::<_, RpcError>(n)
    };
    let n = tokio::time::timeout(t.timeout, io)
        .await
        .map_err(|_| RpcError::Timeout)??;
    let raw = buf.get(..n).unwrap_or_default();
    let mut r = Reader::new(raw);
    let header = Header::decode(&mut r)?;
    let auth = if header.flags & flags::NO_AUTH_CRED != 0 {
        None
    } else {
        Some(AuthBlob::decode(&mut r)?)
    };
    let start = r.position();
    let body = raw.get(start..).unwrap_or_default();
    if body.len() != header.body_length as usize {
        return Err(RpcError::Decode(r.error(DecodeErrorKind::BodyLength {
            declared: header.body_length,
            actual: body.len(),
        })));
    }
    if let Some(a) = &auth {
        // 22.05 replies carry a credential and real clients check it: a
        // munged round trip, so the worker's other tasks move away first.
        slurm_rpc::blocking(|| {
            auth::verify_body(
                t.ctx.plugin.as_ref(),
                Some(a),
                header.msg_type,
                body,
                t.ctx.policy,
            )
        })?;
    }
    Ok((header, start..n))
}

/// One request of `kind`, timed: Ok(latency, records) or the failure reason.
pub async fn one(t: &Target, kind: Kind) -> Result<(Duration, usize), String> {
    one_into(t, kind, &mut Vec::new()).await
}

/// [`one`], reading the reply into `buf`.
pub async fn one_into(
    t: &Target,
    kind: Kind,
    buf: &mut Vec<u8>,
) -> Result<(Duration, usize), String> {
    let t0 = Instant::now();
    let (header, range) = exchange_into(t, request(kind, &t.who), buf)
        .await
        .map_err(|e| short_reason(&e))?;
    let body = buf.get(range).unwrap_or_default();
    let ty = header.typed_msg_type();
    let listing = matches!(
        (kind, &ty),
        (Kind::JobInfo, Ok(MsgType::ResponseJobInfo))
            | (Kind::NodeInfo, Ok(MsgType::ResponseNodeInfo))
    );
    let records = if listing && !t.full_decode {
        listing_count(body)?
    } else {
        let reply = ty
            .and_then(|ty| Message::decode(header.version, ty, body))
            .map_err(|e| format!("malformed reply: {e}"))?;
        check_reply(kind, &reply)?.records
    };
    Ok((t0.elapsed(), records))
}

/// Error text without per-request detail, so equal failures group.
fn short_reason(e: &RpcError) -> String {
    match e {
        RpcError::Io(io) => format!("i/o: {:?}", io.kind()),
        other => other.to_string(),
    }
}

/// Runs `conns` closed-loop workers of `kind` until `limit`.
pub async fn closed_loop(t: Arc<Target>, kind: Kind, conns: usize, limit: Limit) -> Outcome {
    let start = Instant::now();
    let deadline = start + limit.duration;
    let claimed = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::with_capacity(conns);
    for _ in 0..conns.max(1) {
        let (t, claimed) = (t.clone(), claimed.clone());
        tasks.push(tokio::spawn(async move {
            let mut o = Outcome::default();
            let mut buf = Vec::new();
            loop {
                if Instant::now() >= deadline {
                    break;
                }
                if let Some(n) = limit.count {
                    if claimed.fetch_add(1, Ordering::Relaxed) >= n {
                        break;
                    }
                }
                // A request started before the deadline runs to its end (or
                // its own timeout): cutting it off would make a controller
                // whose replies take longer than the run look like it did nothing.
                match one_into(&t, kind, &mut buf).await {
                    Ok((d, records)) => {
                        o.ok += 1;
                        o.latency.push(d);
                        o.last_records = records;
                    }
                    Err(reason) => *o.errors.entry(reason).or_default() += 1,
                }
            }
            o
        }));
    }
    let mut total = Outcome::default();
    for task in tasks {
        match task.await {
            Ok(o) => total.merge(o),
            Err(e) => *total.errors.entry(format!("worker died: {e}")).or_default() += 1,
        }
    }
    total.elapsed = start.elapsed();
    total
}

/// One ping signed first, then timed from connect to the checked reply.
async fn ping_timed(t: &Target) -> Result<Duration, RpcError> {
    let req = request_frame(&t.ctx, t.version, &request(Kind::Ping, &t.who), t.audience)?;
    let t0 = Instant::now();
    let io = async {
        let mut s = TcpStream::connect(t.addr).await?;
        s.set_nodelay(true)?;
        write_frame(&mut s, &req).await?;
        read_frame(&mut s).await
    };
    let raw = tokio::time::timeout(t.timeout, io)
        .await
        .map_err(|_| RpcError::Timeout)??;
    let d = t0.elapsed();
    let reply = Frame::decode(&raw)?.message()?;
    check_reply(Kind::Ping, &reply).map_err(|e| RpcError::Io(std::io::Error::other(e)))?;
    Ok(d)
}

/// Raises the calling thread's nice value by `by` (Linux: nice is per
/// thread; new threads inherit it). Needs no privilege.
fn lower_this_threads_priority(by: i32) {
    #[cfg(target_os = "linux")]
    // SAFETY: plain syscalls on the calling thread; errno is only read.
    unsafe {
        let tid = libc::gettid() as libc::id_t;
        *libc::__errno_location() = 0;
        let now = libc::getpriority(libc::PRIO_PROCESS, tid);
        if *libc::__errno_location() == 0 {
            let _ = libc::setpriority(libc::PRIO_PROCESS, tid, now.saturating_add(by).min(19));
        }
    }
}

/// The storm's closed loop, on a runtime of its own whose threads run
/// `nice` below this process's priority.
async fn storm_below(t: Arc<Target>, conns: usize, limit: Limit, nice: i32) -> Outcome {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("storm".into())
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .max_blocking_threads(512)
                .on_thread_start(move || lower_this_threads_priority(nice))
                .build();
            let o = match rt {
                Ok(rt) => rt.block_on(closed_loop(t, Kind::JobInfo, conns, limit)),
                Err(e) => {
                    let mut o = Outcome::default();
                    o.errors.insert(format!("no runtime for the storm: {e}"), 1);
                    o
                }
            };
            let _ = tx.send(o);
        });
    let mut o = Outcome::default();
    match spawned {
        Ok(_) => rx.await.unwrap_or_else(|_| {
            o.errors.insert("storm thread died".into(), 1);
            o
        }),
        Err(e) => {
            o.errors.insert(format!("no thread for the storm: {e}"), 1);
            o
        }
    }
}

/// Ping latency while `storm_conns` workers hammer job info: the storm's
/// outcome and the pings' outcome. With `storm_nice` > 0 the storm's
/// threads run that much below the pings' and this process's: on a machine
/// shared with the controller, the storm's own client-side work (which
/// real clients do on their own hosts) then does not delay the pinger, the
/// controller's workers or munged; 0 leaves every thread equal.
pub async fn storm(
    t: Arc<Target>,
    storm_conns: usize,
    duration: Duration,
    warmup: Duration,
    ping_interval: Duration,
    storm_nice: i32,
) -> (Outcome, Outcome) {
    let limit = Limit {
        count: None,
        duration: warmup + duration,
    };
    let storm = if storm_nice > 0 {
        tokio::spawn(storm_below(t.clone(), storm_conns, limit, storm_nice))
    } else {
        tokio::spawn(closed_loop(t.clone(), Kind::JobInfo, storm_conns, limit))
    };
    tokio::time::sleep(warmup).await;
    // The pings get a thread and runtime of their own, and their credential
    // is signed before the clock starts: what is timed is the controller
    // answering, not this generator's 64 storm tasks or munged's queue of
    // their signatures ahead of ours.
    let pt = t.clone();
    let pinger = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build();
        let mut pings = Outcome::default();
        let rt = match rt {
            Ok(rt) => rt,
            Err(e) => {
                pings.errors.insert(format!("no runtime for pings: {e}"), 1);
                return pings;
            }
        };
        rt.block_on(async {
            let start = Instant::now();
            while start.elapsed() < duration {
                match ping_timed(&pt).await {
                    Ok(d) => {
                        pings.ok += 1;
                        pings.latency.push(d);
                    }
                    Err(e) => *pings.errors.entry(short_reason(&e)).or_default() += 1,
                }
                tokio::time::sleep(ping_interval).await;
            }
            pings.elapsed = start.elapsed();
        });
        pings
    });
    let pings = tokio::task::spawn_blocking(move || pinger.join())
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_else(|| {
            let mut o = Outcome::default();
            o.errors.insert("ping thread died".into(), 1);
            o
        });
    let storm = storm.await.unwrap_or_else(|e| {
        let mut o = Outcome::default();
        o.errors.insert(format!("storm died: {e}"), 1);
        o
    });
    (storm, pings)
}
