//! Slurm RPC over TCP with tokio: one request and one reply per connection,
//! authenticated as upstream does it. The codec itself lives in `slurm-wire`.

use slurm_wire::auth::{self, Audience, AuthBlob, AuthError, Identity};
use slurm_wire::header::{flags, RetEntry};
use slurm_wire::msg::common::ReturnCodeMsg;
use slurm_wire::{DecodeError, DecodeErrorKind, Frame, Header, Message, MsgType, ProtocolVersion};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

pub use admit::{ConnGuard, ConnLimits};
use base::{fill_to, read_len};
pub use base::{read_frame, AuthCtx, RpcError};
pub use pool::{auth_call, AUTH_CALLS};

/// An authenticated, decoded request.
#[derive(Debug)]
pub struct Incoming {
    pub frame: Frame,
    pub msg: Message,
    /// From the credential, never from the body.
    pub identity: Identity,
    pub peer: SocketAddr,
}

impl Incoming {
    pub fn version(&self) -> ProtocolVersion {
        self.frame.header.version
    }
}

/// What precedes a frame's body, read and decoded before authentication.
struct Prelude {
    header: Header,
    auth: Option<AuthBlob>,
    /// Where the header ends (the credential starts) and the body starts.
    header_end: usize,
    body_start: usize,
    /// The frame's length, prefix excluded.
    len: usize,
    /// The header's version as sent, when newer than ours (see [`Opening`]).
    sent_version: Option<u16>,
}

/// What comes before the header of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opening {
    /// A request: the header right after the length prefix.
    Rpc,
    /// A persistent connection's first message: a `u16` type, then the
    /// header. A header of a newer release than ours is read as ours, as
    /// stock reads one newer than itself: the credential covers the type
    /// and body, not the header's version.
    Persist,
}

impl Opening {
    fn lead(self) -> usize {
        match self {
            Opening::Rpc => 0,
            Opening::Persist => 2,
        }
    }
}

/// Reads the length prefix and at most `limit` bytes of the frame, and
/// decodes its header and credential from them.
async fn read_prelude<S: AsyncRead + Unpin>(
    s: &mut S,
    limit: usize,
    buf: &mut Vec<u8>,
    opening: Opening,
) -> Result<Prelude, RpcError> {
    let len = read_len(s).await?;
    // An opening carries a few fields: it must fit in what is read before
    // its credential is verified, so that no uid can make us buffer more.
    if opening == Opening::Persist && len > limit {
        return Err(RpcError::PreAuthTooLarge(limit));
    }
    fill_to(s, buf, len.min(limit)).await?;
    let lead = opening.lead();
    let mut sent_version = None;
    if opening == Opening::Persist {
        if let Some(v) = buf.get_mut(lead..lead + 2) {
            let mut a = [0u8; 2];
            a.copy_from_slice(v);
            let raw = u16::from_be_bytes(a);
            if raw > ProtocolVersion::NEWEST.to_wire() {
                v.copy_from_slice(&ProtocolVersion::NEWEST.to_wire().to_be_bytes());
                sent_version = Some(raw);
            }
        }
    }
    let mut r = slurm_wire::pack::Reader::new(buf.get(lead..).unwrap_or_default());
    let decoded = Header::decode(&mut r)
        .map_err(|e| e.within("header"))
        .and_then(|header| {
            let header_end = lead + r.position();
            let auth = if header.flags & flags::NO_AUTH_CRED != 0 {
                None
            } else {
                Some(AuthBlob::decode(&mut r).map_err(|e| e.within("auth"))?)
            };
            Ok((header, header_end, auth, lead + r.position()))
        });
    let (header, header_end, auth, body_start) = match decoded {
        Ok(x) => x,
        // It ran past the bytes read so far: more than the limit.
        Err(e)
            if buf.len() < len
                && matches!(
                    e.kind,
                    DecodeErrorKind::Truncated { .. } | DecodeErrorKind::CountTooLarge { .. }
                ) =>
        {
            return Err(RpcError::PreAuthTooLarge(limit))
        }
        Err(e) => return Err(e.into()),
    };
    let actual = len - body_start;
    if header.body_length as usize != actual {
        let kind = DecodeErrorKind::BodyLength {
            declared: header.body_length,
            actual,
        };
        return Err(DecodeError::new(kind, body_start).into());
    }
    Ok(Prelude {
        header,
        auth,
        header_end,
        body_start,
        len,
        sent_version,
    })
}

/// Verifies a credential on the credential pool, off the async workers.
async fn verify_credential(ctx: &AuthCtx, blob: Option<AuthBlob>) -> Result<Identity, RpcError> {
    let plugin = ctx.plugin.clone();
    Ok(auth_call(move || auth::verify_credential(plugin.as_ref(), blob.as_ref())).await??)
}

/// A request read and authenticated: its frame and the raw bytes after
/// its header (credential and body, for relaying).
struct Received {
    frame: Frame,
    identity: Identity,
    raw: Vec<u8>,
    header_end: usize,
    sent_version: Option<u16>,
}

/// Reads and authenticates one request: the header and credential within
/// `header_deadline` (and at most `pre_auth_bytes` before the credential
/// is verified), the rest within `deadline`. A connection with a `guard`
/// may be evicted until its credential checks out.
async fn read_request<S: AsyncRead + Unpin>(
    ctx: &AuthCtx,
    s: &mut S,
    pre_auth_bytes: usize,
    header_deadline: tokio::time::Instant,
    deadline: tokio::time::Instant,
    mut guard: Option<&mut admit::ConnGuard>,
    opening: Opening,
) -> Result<Received, RpcError> {
    let mut raw = Vec::new();
    let pre = async {
        let p = read_prelude(s, pre_auth_bytes, &mut raw, opening).await?;
        let id = verify_credential(ctx, p.auth.clone()).await?;
        Ok::<_, RpcError>((p, id))
    };
    let evicted = async {
        match guard.as_deref_mut() {
            Some(g) => g.evicted().await,
            None => std::future::pending().await,
        }
    };
    let (p, identity) = tokio::select! {
        r = tokio::time::timeout_at(header_deadline, pre) => r.map_err(|_| RpcError::Timeout)??,
        () = evicted => return Err(RpcError::Evicted),
    };
    if let Some(g) = guard {
        if !g.in_service() {
            return Err(RpcError::Evicted);
        }
    }
    tokio::time::timeout_at(deadline, fill_to(s, &mut raw, p.len))
        .await
        .map_err(|_| RpcError::Timeout)??;
    let body = raw.get(p.body_start..).unwrap_or_default();
    auth::hash::check_payload(&identity.payload, p.header.msg_type, body, ctx.policy)?;
    let frame = Frame {
        header: p.header,
        auth: p.auth,
        body: body.to_vec(),
    };
    Ok(Received {
        frame,
        identity,
        raw,
        header_end: p.header_end,
        sent_version: p.sent_version,
    })
}

pub async fn write_frame<S: AsyncWrite + Unpin>(s: &mut S, f: &Frame) -> Result<(), RpcError> {
    s.write_all(&f.encode()).await?;
    s.flush().await?;
    Ok(())
}

/// Checks a received frame's credential against its body.
pub fn authenticate(ctx: &AuthCtx, f: &Frame) -> Result<Identity, AuthError> {
    auth::verify_body(
        ctx.plugin.as_ref(),
        f.auth.as_ref(),
        f.header.msg_type,
        &f.body,
        ctx.policy,
    )
}

/// Runs `f`, which blocks, after handing this async worker's other tasks
/// to another thread (multi-threaded runtimes; elsewhere it just runs).
pub fn blocking<R>(f: impl FnOnce() -> R) -> R {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(f),
        _ => f(),
    }
}

/// Reads, authenticates and decodes one request, with the default limits
/// and no deadline (the caller sets one).
pub async fn recv_request(
    ctx: &AuthCtx,
    stream: &mut TcpStream,
    peer: SocketAddr,
) -> Result<Incoming, RpcError> {
    let far = tokio::time::Instant::now() + Duration::from_secs(86_400 * 365);
    let limit = ConnLimits::default().pre_auth_bytes;
    let got = read_request(ctx, stream, limit, far, far, None, Opening::Rpc).await?;
    let (frame, identity) = (got.frame, got.identity);
    let msg = frame.message()?;
    Ok(Incoming {
        frame,
        msg,
        identity,
        peer,
    })
}

/// A reply's header in version `v`, flagged as upstream flags replies.
fn reply_header(v: ProtocolVersion, msg_type: MsgType) -> Header {
    let mut h = Header::new(v, msg_type);
    if v >= ProtocolVersion::V23_02 {
        // What upstream sets on replies; clients ignore KEEP_BUFFER.
        h.flags = flags::NO_AUTH_CRED | flags::KEEP_BUFFER;
    }
    h
}

/// The reply to a request from `requester_uid` in version `v`, with the
/// credential that version expects.
pub fn reply_frame(
    ctx: &AuthCtx,
    v: ProtocolVersion,
    requester_uid: u32,
    msg: &Message,
) -> Result<Frame, RpcError> {
    let mut f = Frame::new(reply_header(v, msg.msg_type()), msg);
    f.auth = auth::reply_credential(
        ctx.plugin.as_ref(),
        v,
        requester_uid,
        ctx.slurm_user_uid,
        f.header.msg_type,
        &f.body,
    )?;
    Ok(f)
}

/// What a handler answers: a message to encode, or a body already encoded
/// for the requester's protocol version (a cached large reply, shared by
/// every client that asks for the same bytes).
#[derive(Debug, Clone)]
pub enum Outgoing {
    Msg(Box<Message>),
    Encoded { msg_type: MsgType, body: Arc<[u8]> },
}

impl From<Message> for Outgoing {
    fn from(m: Message) -> Self {
        Outgoing::Msg(Box::new(m))
    }
}

/// A reply as written: `head`, then `body` when it is kept apart.
pub struct ReplyBytes {
    pub head: Vec<u8>,
    pub body: Option<Arc<[u8]>>,
}

/// The reply to `requester_uid` in version `v` as bytes to write: the
/// head (prefix, header, credential) and the body, kept apart so that a
/// shared body is not copied.
pub fn reply_bytes(
    ctx: &AuthCtx,
    v: ProtocolVersion,
    requester_uid: u32,
    reply: &Outgoing,
) -> Result<ReplyBytes, RpcError> {
    reply_bytes_with(ctx, v, requester_uid, reply, Vec::new())
}

/// [`reply_bytes`] whose header carries `ret_list`: the replies of the
/// nodes a forwarded request was relayed to.
pub fn reply_bytes_with(
    ctx: &AuthCtx,
    v: ProtocolVersion,
    requester_uid: u32,
    reply: &Outgoing,
    ret_list: Vec<RetEntry>,
) -> Result<ReplyBytes, RpcError> {
    let (msg_type, owned, body) = match reply {
        Outgoing::Msg(m) => (m.msg_type(), Some(m.encode_to_vec(v)), None),
        Outgoing::Encoded { msg_type, body } => (*msg_type, None, Some(body.clone())),
    };
    let mut h = reply_header(v, msg_type);
    h.msg_type = msg_type
        .to_wire(v)
        .ok_or(RpcError::NotInVersion(msg_type.name(), v))?;
    h.ret_list = ret_list;
    let bytes: &[u8] = owned.as_deref().or(body.as_deref()).unwrap_or_default();
    let cred = auth::reply_credential(
        ctx.plugin.as_ref(),
        v,
        requester_uid,
        ctx.slurm_user_uid,
        h.msg_type,
        bytes,
    )?;
    let mut head = frame_head(h, cred.as_ref(), bytes.len());
    if let Some(b) = owned {
        head.extend_from_slice(&b);
    }
    Ok(ReplyBytes { head, body })
}

/// What [`Frame::encode`] writes before the body (length prefix, header,
/// credential) for a body of `body_len` bytes kept elsewhere.
pub fn frame_head(
    mut h: Header,
    auth: Option<&slurm_wire::auth::AuthBlob>,
    body_len: usize,
) -> Vec<u8> {
    let mut w = slurm_wire::pack::Writer::with_capacity(128);
    w.u32(0);
    h.body_length = u32::try_from(body_len).unwrap_or(u32::MAX);
    if auth.is_some() {
        h.flags &= !flags::NO_AUTH_CRED;
    } else {
        h.flags |= flags::NO_AUTH_CRED;
    }
    h.encode(&mut w);
    if let Some(a) = auth {
        a.encode(&mut w);
    }
    let n = u32::try_from(w.len() - 4 + body_len).unwrap_or(u32::MAX);
    w.patch_u32(0, n);
    w.into_vec()
}

pub fn rc_message(rc: i32) -> Message {
    Message::ResponseSlurmRc(ReturnCodeMsg {
        return_code: rc as u32,
    })
}

/// A signed request frame for `msg` in version `v`.
pub fn request_frame(
    ctx: &AuthCtx,
    v: ProtocolVersion,
    msg: &Message,
    audience: Audience,
) -> Result<Frame, RpcError> {
    let ty = msg.msg_type();
    let num = ty.to_wire(v).ok_or(RpcError::NotInVersion(ty.name(), v))?;
    let mut f = Frame::new(Header::new(v, ty), msg);
    f.auth = Some(auth::sign_body(
        ctx.plugin.as_ref(),
        num,
        &f.body,
        audience,
    )?);
    Ok(f)
}

/// Sends one request and waits for its reply (client side of an RPC).
///
/// Replies with a credential (22.05 peers) are verified; newer peers send
/// none, as upstream.
pub async fn call(
    ctx: &AuthCtx,
    addr: SocketAddr,
    v: ProtocolVersion,
    msg: &Message,
    audience: Audience,
    timeout: Duration,
) -> Result<(Frame, Message), RpcError> {
    let req = request_frame(ctx, v, msg, audience)?;
    let exchange = async {
        let mut s = TcpStream::connect(addr).await?;
        write_frame(&mut s, &req).await?;
        let raw = read_frame(&mut s).await?;
        let f = Frame::decode(&raw)?;
        let f = if f.auth.is_some() {
            let c = ctx.clone();
            auth_call(move || authenticate(&c, &f).map(|_| f)).await??
        } else {
            f
        };
        let m = f.message()?;
        Ok::<_, RpcError>((f, m))
    };
    tokio::time::timeout(timeout, exchange)
        .await
        .map_err(|_| RpcError::Timeout)?
}

/// Bodies at least this large are written a few at a time, by threads of
/// their own (see [`write_large`]); those over the bound wait asleep.
pub const LARGE_BODY: usize = 1 << 20;
/// How many large bodies are written at once. Two: the copies of a storm
/// of listings take whole CPUs (the kernel's send and the peer's receive
/// path); on the 2-CPU bench machine four writers left the ping's p99 at
/// 8-11 ms, two at 5.6-7.7 ms, for the same storm throughput.
pub const LARGE_WRITES: usize = 2;
/// The large writers' nice value, relative to the daemon's: copying a
/// listing to a socket is bulk work, and the async workers (a ping, a
/// submit) and munged must win the CPU over it.
const LARGE_WRITER_NICE: libc::c_int = 10;
static LARGE_WRITE_SLOTS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(LARGE_WRITES);

/// How many large bodies are being written now (at most `LARGE_WRITES`).
pub fn large_writes_in_progress() -> usize {
    LARGE_WRITES - LARGE_WRITE_SLOTS.available_permits()
}

/// How [`serve_with`] serves.
#[derive(Clone)]
pub struct ServeOpts {
    /// Bounds reading a request and writing its reply.
    pub timeout: Duration,
    /// Relays requests whose header names nodes to forward to; without
    /// it such lists are ignored.
    pub forwarder: Option<Arc<forward::Forwarder>>,
}

/// Serves connections forever, one task each. `handler` returns the reply,
/// or `None` for one-way messages. Bad requests are logged and dropped.
pub async fn serve<H, Fut, R>(
    listener: tokio::net::TcpListener,
    ctx: AuthCtx,
    timeout: Duration,
    handler: H,
) -> std::io::Result<()>
where
    H: Fn(Incoming) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = Option<R>> + Send,
    R: Into<Outgoing>,
{
    let opts = ServeOpts {
        timeout,
        forwarder: None,
    };
    serve_with(listener, ctx, opts, handler).await
}

/// [`serve`], forwarding as `opts` says, with the default [`ConnLimits`].
pub async fn serve_with<H, Fut, R>(
    listener: tokio::net::TcpListener,
    ctx: AuthCtx,
    opts: ServeOpts,
    handler: H,
) -> std::io::Result<()>
where
    H: Fn(Incoming) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = Option<R>> + Send,
    R: Into<Outgoing>,
{
    serve_limited(listener, ctx, opts, ConnLimits::default(), handler).await
}

/// [`serve_with`] within `limits`: at most `max_connections` at once, and
/// the header and credential read and verified before the body.
pub async fn serve_limited<H, Fut, R>(
    listener: tokio::net::TcpListener,
    ctx: AuthCtx,
    opts: ServeOpts,
    limits: ConnLimits,
    handler: H,
) -> std::io::Result<()>
where
    H: Fn(Incoming) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = Option<R>> + Send,
    R: Into<Outgoing>,
{
    let limits = Arc::new(limits);
    accept_loop(listener, &limits.clone(), move |stream, peer, guard| {
        let ctx = ctx.clone();
        let opts = opts.clone();
        let limits = limits.clone();
        let handler = handler.clone();
        async move {
            if let Err(e) = serve_one(&ctx, stream, peer, &opts, &limits, guard, handler).await {
                tracing::warn!(%peer, "{e}");
            }
        }
    })
    .await
}

/// Accepts connections forever and runs `conn` on each in a task of its
/// own, at most `limits.max_connections` at once (see [`ConnLimits`]).
pub async fn accept_loop<F, Fut>(
    listener: tokio::net::TcpListener,
    limits: &ConnLimits,
    conn: F,
) -> std::io::Result<()>
where
    F: Fn(TcpStream, SocketAddr, ConnGuard) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let admission = admit::Admission::new(limits);
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(x) => x,
            Err(e) => {
                // Out of descriptors and the like: keep serving.
                tracing::warn!("accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        // Accepted first, so that only a connection that is there can
        // make an older one give way; the rest wait in the backlog.
        let guard = admission.admit().await;
        tokio::spawn(conn(stream, peer, guard));
    }
}

async fn serve_one<H, Fut, R>(
    ctx: &AuthCtx,
    mut stream: TcpStream,
    peer: SocketAddr,
    opts: &ServeOpts,
    limits: &ConnLimits,
    mut guard: admit::ConnGuard,
    handler: H,
) -> Result<(), RpcError>
where
    H: Fn(Incoming) -> Fut,
    Fut: std::future::Future<Output = Option<R>>,
    R: Into<Outgoing>,
{
    let timeout = opts.timeout;
    let start = tokio::time::Instant::now();
    let deadline = start + timeout;
    let header_deadline = start + limits.header_timeout.unwrap_or(timeout).min(timeout);
    let Received {
        frame,
        identity,
        raw,
        header_end,
        ..
    } = read_request(
        ctx,
        &mut stream,
        limits.pre_auth_bytes,
        header_deadline,
        deadline,
        Some(&mut guard),
        Opening::Rpc,
    )
    .await?;
    let (v, uid) = (frame.header.version, identity.uid);
    // Relayed while this node handles its own copy, as upstream does; only
    // once the credential checked out, so that we cannot be made to spray
    // unauthenticated traffic.
    let relay = match &opts.forwarder {
        Some(fw) if frame.header.forward.cnt > 0 && forward::admits(uid, ctx, peer) => {
            let payload: Arc<[u8]> = Arc::from(raw.get(header_end..).unwrap_or_default());
            let (fw, header) = (fw.clone(), frame.header.clone());
            Some(tokio::spawn(async move {
                fw.forward(&header, payload, peer).await
            }))
        }
        _ => None,
    };
    drop(raw);
    let reply = match frame.message() {
        Ok(msg) => {
            let ty = msg.msg_type();
            tracing::debug!(%peer, uid, version = %v, "{ty}");
            let req = Incoming {
                frame,
                msg,
                identity,
                peer,
            };
            handler(req).await.map(Into::into)
        }
        // The relayed nodes' replies still go back, with our error.
        Err(e) if relay.is_some() => {
            tracing::warn!(%peer, "{e}");
            Some(Outgoing::from(rc_message(
                slurm_wire::errno::ESLURM_PROTOCOL_INCOMPLETE_PACKET,
            )))
        }
        Err(e) => return Err(e.into()),
    };
    let ret_list = match relay {
        Some(t) => t.await.unwrap_or_else(|e| {
            tracing::error!(%peer, "forwarding: {e}");
            Vec::new()
        }),
        None => Vec::new(),
    };
    if let Some(reply) = reply {
        let ReplyBytes { head, body } = if v >= ProtocolVersion::V23_02 {
            reply_bytes_with(ctx, v, uid, &reply, ret_list)?
        } else {
            // 22.05 replies carry a credential: munge_encode, off the workers.
            let c = ctx.clone();
            auth_call(move || reply_bytes_with(&c, v, uid, &reply, ret_list)).await??
        };
        match body {
            Some(body) if body.len() >= LARGE_BODY => {
                write_large(stream, head, body, timeout).await?;
            }
            body => {
                let write = async {
                    stream.write_all(&head).await?;
                    if let Some(b) = &body {
                        stream.write_all(b).await?;
                    }
                    stream.flush().await
                };
                tokio::time::timeout(timeout, write)
                    .await
                    .map_err(|_| RpcError::Timeout)??;
            }
        }
    }
    Ok(())
}

/// Writes a large reply on one of the large writers' threads, through the
/// socket made blocking, all within `timeout`.
///
/// On an async worker each poll of such a write copies megabytes into the
/// socket (and runs the peer's receive path with it), and a task behind it
/// (a ping) waits for the whole poll: the runtime cannot preempt a task.
/// The kernel can preempt a thread, and does so for the workers since the
/// writers run at a lower priority. They are threads of their own, not the
/// blocking pool's: tokio runs worker cores on pool threads too, and those
/// must not inherit the lowered priority.
async fn write_large(
    stream: TcpStream,
    head: Vec<u8>,
    body: Arc<[u8]>,
    timeout: Duration,
) -> Result<(), RpcError> {
    let deadline = std::time::Instant::now() + timeout;
    // Never closed, so a permit always comes; waiting for one is asleep,
    // off the run queue. A permit means an idle writer thread.
    let slot = tokio::time::timeout(timeout, LARGE_WRITE_SLOTS.acquire())
        .await
        .map_err(|_| RpcError::Timeout)?
        .ok();
    let mut s = stream.into_std()?;
    s.set_nonblocking(false)?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job = LargeWrite {
        run: Box::new(move || {
            let r = write_all_until(&mut s, &head, deadline)
                .and_then(|()| write_all_until(&mut s, &body, deadline));
            let _ = tx.send(r);
        }),
    };
    match large_writers() {
        Some(q) => {
            if let Err(std::sync::mpsc::SendError(job)) = q.send(job) {
                // No writer thread could be started: the pool's threads do it.
                tokio::task::spawn_blocking(job.run);
            }
        }
        None => {
            tokio::task::spawn_blocking(job.run);
        }
    }
    let r = rx
        .await
        .map_err(|_| RpcError::Io(std::io::Error::other("large writer gone")));
    drop(slot);
    r?
}

/// One large reply to write, on a writer thread.
struct LargeWrite {
    run: Box<dyn FnOnce() + Send>,
}

/// The queue of the large writers, started on first use (None if no
/// thread could be started). At most `LARGE_WRITES` jobs are in it or
/// running, so a job never waits for a thread.
fn large_writers() -> Option<&'static std::sync::mpsc::Sender<LargeWrite>> {
    use std::sync::{mpsc, Mutex, OnceLock};
    static QUEUE: OnceLock<Option<mpsc::Sender<LargeWrite>>> = OnceLock::new();
    QUEUE
        .get_or_init(|| {
            let (tx, rx) = mpsc::channel::<LargeWrite>();
            let rx = Arc::new(Mutex::new(rx));
            let mut started = 0;
            for i in 0..LARGE_WRITES {
                let rx = rx.clone();
                let spawned = std::thread::Builder::new()
                    .name(format!("large-writer-{i}"))
                    .spawn(move || {
                        lower_this_threads_priority();
                        loop {
                            // A panic elsewhere while holding it leaves the
                            // receiver usable.
                            let job = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                            match job {
                                // A panicking job (none is known) must not
                                // take a writer with it: the bound counts them.
                                Ok(job) => {
                                    let run = std::panic::AssertUnwindSafe(job.run);
                                    let _ = std::panic::catch_unwind(run);
                                }
                                Err(_) => return,
                            }
                        }
                    });
                match spawned {
                    Ok(_) => started += 1,
                    Err(e) => tracing::warn!("cannot start a large-reply writer: {e}"),
                }
            }
            (started > 0).then_some(tx)
        })
        .as_ref()
}

/// Raises this thread's nice value by `LARGE_WRITER_NICE` (Linux: nice is
/// per thread). Needs no privilege; failure only costs the preference.
fn lower_this_threads_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain syscalls on the calling thread; errno is only read.
    unsafe {
        let tid = libc::gettid() as libc::id_t;
        *libc::__errno_location() = 0;
        let now = libc::getpriority(libc::PRIO_PROCESS, tid);
        if *libc::__errno_location() == 0 {
            let _ = libc::setpriority(
                libc::PRIO_PROCESS,
                tid,
                now.saturating_add(LARGE_WRITER_NICE).min(19),
            );
        }
    }
}

/// `write_all` on a blocking socket that gives up at `deadline`.
fn write_all_until(
    s: &mut std::net::TcpStream,
    mut buf: &[u8],
    deadline: std::time::Instant,
) -> Result<(), RpcError> {
    use std::io::{ErrorKind, Write};
    while !buf.is_empty() {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(RpcError::Timeout);
        }
        // A send that moved nothing in `left` fails with WouldBlock.
        s.set_write_timeout(Some(left))?;
        match s.write(buf) {
            Ok(0) => return Err(std::io::Error::from(ErrorKind::WriteZero).into()),
            Ok(n) => buf = buf.get(n..).unwrap_or_default(),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(RpcError::Timeout)
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

mod admit;
mod base;
pub mod forward;
pub mod persist;
mod pool;

pub mod daemon;

#[cfg(test)]
mod tests {
    use super::*;
    use slurm_wire::auth::AuthBlob;

    /// A head written before a separately kept body is the same bytes as
    /// the whole frame, with and without a credential.
    #[test]
    fn head_then_body_is_the_whole_frame() {
        let msg = rc_message(7);
        for v in [ProtocolVersion::V22_05, ProtocolVersion::V24_11] {
            let mut f = Frame::new(Header::new(v, msg.msg_type()), &msg);
            for auth in [
                None,
                Some(AuthBlob {
                    plugin_id: 101,
                    credential: Some("MUNGE:x".into()),
                }),
            ] {
                f.auth = auth;
                let mut split = frame_head(f.header.clone(), f.auth.as_ref(), f.body.len());
                split.extend_from_slice(&f.body);
                assert_eq!(split, f.encode());
                let back = Frame::decode_prefixed(&split).unwrap();
                assert_eq!(back.message().unwrap(), msg);
            }
        }
    }
}
