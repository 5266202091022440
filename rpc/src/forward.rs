//! Message forwarding (TreeWidth): a request whose header names more nodes
//! is relayed to them as a tree, and their replies come back in the
//! `ret_list` of our own reply.
//!
//! The relayed frames carry the credential and body exactly as received
//! (the credential's hash covers the body); only the header changes.

use crate::base::{read_frame, AuthCtx};
use slurm_wire::errno::{
    SLURM_COMMUNICATIONS_CONNECTION_ERROR, SLURM_COMMUNICATIONS_RECEIVE_ERROR,
    SLURM_COMMUNICATIONS_SEND_ERROR, SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT,
    SLURM_UNKNOWN_FORWARD_ADDR,
};
use slurm_wire::header::RetEntry;
use slurm_wire::msg::common::{Empty, ReturnCodeMsg};
use slurm_wire::pack::Writer;
use slurm_wire::types::SlurmAddr;
use slurm_wire::{Frame, Header, Message, MsgType};
use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::task::JoinSet;
use tokio::time::Instant;

/// Where a node's slurmd listens: host (name or address) and port.
pub type Resolver = Arc<dyn Fn(&str) -> Option<(String, u16)> + Send + Sync>;

/// How many nodes each of `tree_width` branches gets when `total` nodes
/// are spread over a tree, and how many levels that tree has. Each level
/// fills up completely (`width`, `width^2`, ...) while nodes last; the
/// last, partial level is spread evenly, the first branches taking the
/// remainder. Upstream's distribution, so trees have the same shape.
pub fn span(total: usize, tree_width: u16) -> (Vec<usize>, u16) {
    let width = usize::from(tree_width.max(1));
    if total == 0 {
        return (Vec::new(), 0);
    }
    if total <= width {
        return (vec![1; total], 1);
    }
    let mut spans = vec![0usize; width];
    let mut left = total;
    let mut depth = 0u16;
    let (mut branch, mut level) = (1usize, width);
    while left > 0 {
        if level <= left {
            spans.iter_mut().for_each(|s| *s += branch);
            left -= level;
        } else {
            let each = left / width;
            spans.iter_mut().for_each(|s| *s += each);
            left -= each * width;
            spans.iter_mut().take(left).for_each(|s| *s += 1);
            left = 0;
        }
        depth = depth.saturating_add(1);
        branch = branch.saturating_mul(width);
        level = level.saturating_mul(width);
    }
    (spans, depth)
}

/// Splits `items` (in order) into the branches of a tree of `tree_width`:
/// each branch's first node is sent the message with the others as its
/// forward list. Also returns the tree's depth.
pub fn split_treewidth<T: Clone>(items: &[T], tree_width: u16) -> (Vec<Vec<T>>, u16) {
    let (spans, depth) = span(items.len(), tree_width);
    let mut rest = items;
    let mut out = Vec::with_capacity(spans.len());
    for n in spans {
        let (head, tail) = rest.split_at(n.min(rest.len()));
        if !head.is_empty() {
            out.push(head.to_vec());
        }
        rest = tail;
    }
    (out, depth)
}

/// The ret_list entry for a node the message did not reach.
pub fn failed_entry(node: &str, err: i32) -> RetEntry {
    RetEntry {
        err: err as u32,
        node_name: Some(node.to_string()),
        body: Message::ResponseForwardFailed(Empty {}),
    }
}

/// Whether a request from `uid` may be relayed: only root and SlurmUser
/// send trees that we pass on. Anyone else's request is still answered
/// for this node alone; a sender then reaches the others itself, as it
/// does past a node that does not forward (stock's `_fwd_tree_thread`).
pub fn may_relay(uid: u32, slurm_user_uid: u32) -> bool {
    uid == 0 || uid == slurm_user_uid
}

/// [`may_relay`] for a request authenticated as `uid` under `ctx`, with
/// the refusal logged.
pub fn admits(uid: u32, ctx: &AuthCtx, peer: SocketAddr) -> bool {
    let ok = may_relay(uid, ctx.slurm_user_uid);
    if !ok {
        tracing::warn!(%peer, "security violation: forward list from uid {uid}, not relayed");
    }
    ok
}

/// Most direct sends in flight at once for one branch whose head did not
/// relay.
const DIRECT_AT_ONCE: usize = 64;

/// A sender may give us at most this many of our own MessageTimeouts per
/// level below us (stock senders give 2 per level, of their own timeout).
const MAX_TIMEOUTS_PER_LEVEL: u32 = 4;

/// After the deadline, this long for the branches to hand in what they have.
const GRACE: Duration = Duration::from_millis(500);

/// Relays forwarded requests for one daemon.
pub struct Forwarder {
    resolve: Resolver,
    /// Per-hop wait when the header gives none (MessageTimeout).
    default_timeout: Duration,
    /// TreeWidth, when the header gives none.
    default_tree_width: u16,
    /// Longest forward list relayed: the nodes this daemon knows.
    max_nodes: usize,
}

/// A node of a forward list, resolved once.
#[derive(Clone)]
struct Node {
    name: String,
    host: String,
    port: u16,
}

/// What every relayed copy of one request shares.
struct Hop {
    header: Header,
    /// Credential and body, verbatim.
    payload: Arc<[u8]>,
    /// Every relayed exchange ends by then, so that our own reply reaches
    /// the sender within the time it gave us.
    deadline: Instant,
}

/// Never connected, or the peer went away: the error for its entry.
struct Unreachable(i32);

impl Forwarder {
    pub fn new(resolve: Resolver, default_timeout: Duration, default_tree_width: u16) -> Self {
        Self {
            resolve,
            default_timeout,
            default_tree_width,
            max_nodes: usize::MAX,
        }
    }

    /// Relays no list naming more than `n` nodes (the nodes in slurm.conf).
    pub fn with_max_nodes(mut self, n: usize) -> Self {
        self.max_nodes = n;
        self
    }

    /// The time we keep for the `depth` levels below us.
    fn hop_time(&self, fwd: &slurm_wire::header::Forward, depth: u16) -> Duration {
        let default = u64::try_from(self.default_timeout.as_millis()).unwrap_or(u64::MAX);
        let given = match fwd.timeout {
            0 => default,
            t => u64::from(t),
        };
        // As upstream: a sender that says how deep its tree was gave the
        // time for all of it, so we keep our share; an older one gave one
        // hop's time, which each level below may take twice.
        let ms = if fwd.tree_depth > 0 {
            given.saturating_mul(u64::from(depth)) / u64::from(fwd.tree_depth)
        } else {
            given.saturating_mul(2 * u64::from(depth))
        };
        // Whatever the header says, our reply is not held for longer.
        let cap = default
            .max(1000)
            .saturating_mul(u64::from(MAX_TIMEOUTS_PER_LEVEL))
            .saturating_mul(u64::from(depth.max(1)));
        Duration::from_millis(ms.clamp(1, cap))
    }

    /// Relays the request `header` + `payload` (credential and body bytes
    /// as received from `peer`) to the nodes of its forward list and
    /// returns one entry per node, flattened from every level below.
    /// Only for senders [`may_relay`] admits. Linear in the list's length,
    /// and done by the deadline the header gives (bounded by ours).
    pub async fn forward(
        self: &Arc<Self>,
        header: &Header,
        payload: Arc<[u8]>,
        peer: SocketAddr,
    ) -> Vec<RetEntry> {
        let fwd = &header.forward;
        let mut hl = match fwd.nodelist.as_deref().map(slurm_conf::Hostlist::parse) {
            Some(Ok(hl)) => hl,
            Some(Err(e)) => {
                tracing::warn!(%peer, "forward list {:?}: {e}", fwd.nodelist);
                return Vec::new();
            }
            None => return Vec::new(),
        };
        if hl.len() > self.max_nodes {
            // Not ours to relay: the sender reaches them itself.
            tracing::error!(
                %peer,
                "forward list of {} names, more than the {} nodes known: not relayed",
                hl.len(),
                self.max_nodes
            );
            return Vec::new();
        }
        hl.uniq();
        // Each name resolved once; unknown ones are answered here and never
        // passed on.
        let mut out = Vec::with_capacity(hl.len());
        let mut nodes = Vec::with_capacity(hl.len());
        for name in hl.iter() {
            match (self.resolve)(&name) {
                Some((host, port)) => nodes.push(Node { name, host, port }),
                None => out.push(failed_entry(&name, SLURM_UNKNOWN_FORWARD_ADDR)),
            }
        }
        if let Some(first) = out.first() {
            tracing::error!(
                "forward: no address for {} node(s) ({:?} first), check slurm.conf",
                out.len(),
                first.node_name.as_deref().unwrap_or_default()
            );
        }
        let width = if fwd.tree_width == 0 {
            self.default_tree_width
        } else {
            fwd.tree_width
        };
        let (branches, depth) = split_treewidth(&nodes, width);
        let time = self.hop_time(fwd, depth);
        let mut h = header.clone();
        h.forward.tree_width = width;
        h.forward.tree_depth = depth;
        h.forward.timeout = u32::try_from(time.as_millis()).unwrap_or(u32::MAX);
        h.ret_list.clear();
        if h.orig_addr == SlurmAddr::Unspec {
            h.orig_addr = slurm_addr(peer);
        }
        let deadline = Instant::now() + time;
        let hop = Arc::new(Hop {
            header: h,
            payload,
            deadline,
        });
        tracing::debug!(%peer, nodes = nodes.len(), depth, "forwarding {}", header.msg_type);
        let mut tasks = JoinSet::new();
        for b in branches {
            let (me, hop) = (self.clone(), hop.clone());
            tasks.spawn(async move { me.branch(b, hop).await });
        }
        // Every exchange ends by the deadline; this bounds anything else.
        let collected = tokio::time::timeout_at(deadline + GRACE, async {
            while let Some(r) = tasks.join_next().await {
                match r {
                    Ok(entries) => out.extend(entries),
                    Err(e) => tracing::error!("forward task: {e}"),
                }
            }
        })
        .await;
        if collected.is_err() {
            tracing::warn!(%peer, "forward: branches still busy past the deadline, abandoned");
        }
        drop(tasks);
        let lost_err = if collected.is_err() {
            SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT
        } else {
            SLURM_COMMUNICATIONS_CONNECTION_ERROR
        };
        let answered: HashSet<&str> = out.iter().filter_map(|e| e.node_name.as_deref()).collect();
        let lost: Vec<RetEntry> = nodes
            .iter()
            .filter(|n| !answered.contains(n.name.as_str()))
            .map(|n| failed_entry(&n.name, lost_err))
            .collect();
        out.extend(lost);
        out
    }

    /// One branch: its head relays to the others. When it cannot be
    /// reached or does not relay, the others are sent to directly, all
    /// within the same deadline (stock abandons the tree likewise).
    async fn branch(self: Arc<Self>, nodes: Vec<Node>, hop: Arc<Hop>) -> Vec<RetEntry> {
        let Some((head, rest)) = nodes.split_first() else {
            return Vec::new();
        };
        let mut out = match self.send(head, rest, &hop).await {
            Ok(entries) => {
                let done = rest.is_empty() || {
                    let names: HashSet<&str> = rest.iter().map(|n| n.name.as_str()).collect();
                    entries
                        .iter()
                        .any(|e| e.node_name.as_deref().is_some_and(|n| names.contains(n)))
                };
                if done {
                    // Whatever it could not reach it reported itself; a
                    // node missing from its list is marked by `forward`.
                    return entries;
                }
                tracing::warn!("{} did not forward to {}", head.name, rest.len());
                entries
            }
            Err(Unreachable(err)) => {
                tracing::warn!("forward to {} failed: error {err}", head.name);
                vec![failed_entry(&head.name, err)]
            }
        };
        out.extend(self.direct(rest, &hop).await);
        out
    }

    /// Sends to each of `nodes` with no forward list, a bounded number at
    /// a time.
    async fn direct(self: &Arc<Self>, nodes: &[Node], hop: &Arc<Hop>) -> Vec<RetEntry> {
        let mut out = Vec::with_capacity(nodes.len());
        let mut tasks = JoinSet::new();
        for n in nodes.iter().cloned() {
            if tasks.len() >= DIRECT_AT_ONCE {
                if let Some(Ok(e)) = tasks.join_next().await {
                    out.extend(e);
                }
            }
            let (me, hop) = (self.clone(), hop.clone());
            tasks.spawn(async move {
                match me.send(&n, &[], &hop).await {
                    Ok(e) => e,
                    Err(Unreachable(err)) => vec![failed_entry(&n.name, err)],
                }
            });
        }
        while let Some(r) = tasks.join_next().await {
            if let Ok(e) = r {
                out.extend(e);
            }
        }
        out
    }

    /// Sends the request to `node` with `rest` as its forward list and
    /// returns its reply and those it gathered.
    async fn send(
        &self,
        node: &Node,
        rest: &[Node],
        hop: &Hop,
    ) -> Result<Vec<RetEntry>, Unreachable> {
        let name = node.name.as_str();
        let deadline = hop.deadline;
        if Instant::now() >= deadline {
            return Err(Unreachable(SLURM_COMMUNICATIONS_CONNECTION_ERROR));
        }
        let mut h = hop.header.clone();
        h.forward.cnt = u16::try_from(rest.len()).unwrap_or(u16::MAX);
        h.forward.nodelist = if rest.is_empty() {
            None
        } else {
            let names: Vec<&str> = rest.iter().map(|n| n.name.as_str()).collect();
            Some(slurm_conf::compress(&names).unwrap_or_else(|_| names.join(",")))
        };
        let bytes = frame_bytes(&h, &hop.payload);
        let conn = async {
            let addr = tokio::net::lookup_host((node.host.as_str(), node.port))
                .await?
                .next()
                .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))?;
            TcpStream::connect(addr).await
        };
        let mut s = match tokio::time::timeout_at(deadline, conn).await {
            Ok(Ok(s)) => s,
            Ok(Err(_)) | Err(_) => return Err(Unreachable(SLURM_COMMUNICATIONS_CONNECTION_ERROR)),
        };
        match tokio::time::timeout_at(deadline, s.write_all(&bytes)).await {
            Ok(Ok(())) => {}
            _ => return Err(Unreachable(SLURM_COMMUNICATIONS_SEND_ERROR)),
        }
        let ty = h.typed_msg_type().ok();
        if matches!(
            ty,
            Some(
                MsgType::RequestShutdown
                    | MsgType::RequestReconfigure
                    | MsgType::RequestRebootNodes
            )
        ) {
            // No reply comes to these: delivered is success.
            return Ok(std::iter::once(name)
                .chain(rest.iter().map(|n| n.name.as_str()))
                .map(|n| RetEntry {
                    err: 0,
                    node_name: Some(n.to_string()),
                    body: Message::ResponseSlurmRc(ReturnCodeMsg { return_code: 0 }),
                })
                .collect());
        }
        let raw = match tokio::time::timeout_at(deadline, read_frame(&mut s)).await {
            Ok(Ok(raw)) => raw,
            Ok(Err(_)) => return Err(Unreachable(SLURM_COMMUNICATIONS_RECEIVE_ERROR)),
            Err(_) => return Err(Unreachable(SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT)),
        };
        // The reply is handed up as it is; whoever asked checks what it
        // means. A reply we cannot decode cannot be re-encoded either.
        let reply = Frame::decode(&raw).and_then(|f| f.message().map(|m| (f, m)));
        let (f, msg) = match reply {
            Ok(x) => x,
            Err(e) => {
                tracing::warn!("forward: reply from {name}: {e}");
                return Ok(vec![failed_entry(name, SLURM_COMMUNICATIONS_RECEIVE_ERROR)]);
            }
        };
        let mut out = Vec::with_capacity(1 + f.header.ret_list.len());
        out.push(RetEntry {
            err: 0,
            node_name: Some(name.to_string()),
            body: msg,
        });
        for mut e in f.header.ret_list {
            if e.node_name.is_none() {
                e.node_name = Some(name.to_string());
            }
            out.push(e);
        }
        Ok(out)
    }
}

/// A whole frame: prefix, `h` (its body length kept) and the verbatim
/// credential and body.
fn frame_bytes(h: &Header, payload: &[u8]) -> Vec<u8> {
    let mut w = Writer::with_capacity(128 + payload.len());
    w.u32(0);
    h.encode(&mut w);
    w.bytes(payload);
    let n = u32::try_from(w.len() - 4).unwrap_or(u32::MAX);
    w.patch_u32(0, n);
    w.into_vec()
}

fn slurm_addr(a: SocketAddr) -> SlurmAddr {
    match a {
        SocketAddr::V4(a) => SlurmAddr::V4(*a.ip(), a.port()),
        SocketAddr::V6(a) => SlurmAddr::V6(*a.ip(), a.port()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("n{i}")).collect()
    }

    fn sizes(n: usize, w: u16) -> (Vec<usize>, u16) {
        let (b, d) = split_treewidth(&names(n), w);
        (b.iter().map(Vec::len).collect(), d)
    }

    /// Hand-computed from upstream's rule: full levels first, then the
    /// remainder spread evenly with the first branches taking the extra.
    #[test]
    fn split_matches_upstream_shapes() {
        // Fits in one level: everyone is a branch of one.
        assert_eq!(sizes(3, 16), (vec![1, 1, 1], 1));
        assert_eq!(sizes(16, 16), (vec![1; 16], 1));
        // TreeWidth=1: a chain.
        assert_eq!(sizes(2, 1), (vec![2], 2));
        assert_eq!(sizes(5, 1), (vec![5], 5));
        // 17 over 16: level one (16) then one more on the first branch.
        let mut want = vec![1; 16];
        want[0] = 2;
        assert_eq!(sizes(17, 16), (want, 2));
        // 10 over 3: level 3 (1 each), level 9 does not fit: 7 left,
        // 2 each and the first takes the last one -> 4,3,3.
        assert_eq!(sizes(10, 3), (vec![4, 3, 3], 2));
        // 12 over 3: levels 3 and 9 exactly -> 4,4,4.
        assert_eq!(sizes(12, 3), (vec![4, 4, 4], 2));
        // 13 over 3: 3+9 full, one left for the first branch at level 3.
        assert_eq!(sizes(13, 3), (vec![5, 4, 4], 3));
        // 5 over 2: level 2, then 3 left: 1 each and the first one more.
        assert_eq!(sizes(5, 2), (vec![3, 2], 2));
        assert_eq!(sizes(0, 4), (vec![], 0));
    }

    #[test]
    fn branches_keep_the_node_order() {
        let (b, _) = split_treewidth(&names(5), 2);
        assert_eq!(b[0], ["n1", "n2", "n3"]);
        assert_eq!(b[1], ["n4", "n5"]);
    }

    #[test]
    fn a_sender_cannot_make_us_wait_longer_than_our_own_timeouts() {
        let fw = Forwarder::new(Arc::new(|_: &str| None), Duration::from_secs(10), 16);
        let mut f = slurm_wire::header::Forward {
            timeout: u32::MAX,
            ..Default::default()
        };
        assert_eq!(fw.hop_time(&f, 2), Duration::from_secs(80));
        f.timeout = 3000;
        f.tree_depth = 3;
        assert_eq!(fw.hop_time(&f, 2), Duration::from_secs(2));
        f.tree_depth = 0;
        assert_eq!(fw.hop_time(&f, 2), Duration::from_secs(12));
    }

    #[test]
    fn zero_width_is_treated_as_one() {
        assert_eq!(sizes(3, 0), (vec![3], 3));
    }
}
