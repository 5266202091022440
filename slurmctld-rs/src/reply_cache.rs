//! Encoded replies to the large read RPCs (job, node and partition info),
//! built once per published snapshot and shared by every client asking for
//! the same bytes.
//!
//! A reply over 100,000 jobs takes most of a second to build and encode; if
//! each request did that on the async workers, a storm of `squeue`s would
//! make every other RPC (a ping, a submit) wait behind it. Here a miss is
//! built on the blocking pool, concurrent requests for the same key wait
//! for that one build, and the async workers only copy bytes to sockets.
//!
//! An entry holds the snapshot it was built from, and a request is served
//! it only if its own snapshot has the very same parts that the listing
//! reads (`same_content`): compared by identity, which is exact because
//! every change copies what it touches while an older snapshot shares it.
//! So a state change is never answered with stale bytes, while a batch
//! that changed nothing the listing shows (a scheduler tick over a held
//! queue, a ping) keeps the entry. On each publish the daemon prunes the
//! entries the new snapshot can no longer use, and the large ones nobody
//! has asked for in [`IDLE_KEEP`]: at 100,000 jobs one listing is ~60 MB,
//! which a site that runs `squeue` once a minute should not pay for in
//! between.

use crate::state::Controller;
use crate::views;
use crate::visibility::Visible;
use slurm_wire::{Message, MsgType, ProtocolVersion};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::OnceCell;

/// Which listing.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Query {
    /// REQUEST_JOB_INFO without job ids (`user: None`), or
    /// REQUEST_JOB_USER_INFO for one user.
    Jobs { user: Option<u32> },
    /// REQUEST_NODE_INFO (all nodes).
    Nodes,
    /// REQUEST_PARTITION_INFO.
    Partitions,
}

/// Everything the reply's bytes depend on besides the snapshot: what the
/// requester may see is in `query` (PrivateData's own-jobs filter) and
/// `visible` (Hidden and AllowGroups partitions); a view that starts to
/// filter by anything else must add it here.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    pub query: Query,
    pub version: ProtocolVersion,
    pub show_flags: u16,
    pub visible: Visible,
}

impl Key {
    pub fn msg_type(&self) -> MsgType {
        match self.query {
            Query::Jobs { .. } => MsgType::ResponseJobInfo,
            Query::Nodes => MsgType::ResponseNodeInfo,
            Query::Partitions => MsgType::ResponsePartitionInfo,
        }
    }
}

/// The reply message for `key` over snapshot `c`.
pub fn message(c: &Controller, key: &Key) -> Message {
    let v = key.version;
    match key.query {
        Query::Jobs { user } => {
            let vis = &key.visible;
            Message::ResponseJobInfo(views::job_listing(c, None, user, vis, key.show_flags, v))
        }
        Query::Nodes => Message::ResponseNodeInfo(views::node_info_msg(c, v, &key.visible)),
        Query::Partitions => {
            Message::ResponsePartitionInfo(views::partition_info_msg(c, v, &key.visible))
        }
    }
}

/// Whether `a` and `b` give the same bytes for `q`: every part of the state
/// that listing reads (see `views`) is shared, unchanged, by both. A view
/// that starts to read another part must add it here.
fn same_content(a: &Controller, b: &Controller, q: &Query) -> bool {
    Arc::ptr_eq(a.conf(), b.conf())
        && match q {
            Query::Jobs { .. } => {
                a.last_job_update() == b.last_job_update()
                    && a.jobs().same_records(b.jobs())
                    // node names, states (ReqNodeNotAvail) and -d detail
                    && a.nodes().same_records(b.nodes())
                    && a.arrays().recs().ptr_eq(b.arrays().recs())
                    && a.arrays().metas.ptr_eq(&b.arrays().metas)
                    && a.deps().ptr_eq(b.deps())
                    && a.sched().plan.ptr_eq(&b.sched().plan)
            }
            Query::Nodes => {
                a.last_node_update() == b.last_node_update() && a.nodes().same_records(b.nodes())
            }
            Query::Partitions => a.last_part_update() == b.last_part_update(),
        }
}

/// The reply body for `key` over snapshot `c`, encoded for `key.version`.
pub fn encode(c: &Controller, key: &Key) -> Arc<[u8]> {
    message(c, key).encode_to_vec(key.version).into()
}

/// Replies larger than this give the memory of their intermediate records
/// back to the system once encoded.
const TRIM_ABOVE: usize = 1 << 20;

/// A large listing builds every record before encoding them (tens of MB at
/// 100,000 jobs) and frees them at once; glibc keeps such freed memory in
/// the building thread's arena, so the controller's RSS would stay at its
/// peak. Hand it back.
pub fn release_free_memory() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only releases free memory of the allocator.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Why a reply could not be built.
#[derive(Debug, thiserror::Error)]
#[error("building the reply failed: {0}")]
pub struct BuildError(#[from] tokio::task::JoinError);

type Cell = Arc<OnceCell<Arc<[u8]>>>;

struct Slot {
    snap: Arc<Controller>,
    key: Key,
    cell: Cell,
    /// When a request last asked for it.
    used: Instant,
}

impl Slot {
    fn big_and_idle(&self, now: Instant) -> bool {
        self.cell.get().is_some_and(|b| b.len() > TRIM_ABOVE)
            && now.saturating_duration_since(self.used) >= IDLE_KEEP
    }
}

/// How long a body over [`TRIM_ABOVE`] is kept with no request for it:
/// long enough for `watch squeue` and for a storm of clients to share one
/// build, short enough that the memory is not held between uses.
pub const IDLE_KEEP: Duration = Duration::from_secs(5);

/// Most entries kept: versions x flag sets x listings in use at once.
const MAX_SLOTS: usize = 16;

#[derive(Default)]
pub struct ReplyCache {
    slots: Mutex<Vec<Slot>>,
    builds: AtomicU64,
    hits: AtomicU64,
}

impl ReplyCache {
    /// Drops every entry. Requests still writing a body keep their own
    /// reference to it.
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// Keeps only the entries that `current` (just published) can be
    /// served, so that old bodies and snapshots do not stay in memory, and
    /// drops large ones unused for [`IDLE_KEEP`] at `now`. True when a large
    /// body went: the caller may then hand free memory back
    /// ([`release_free_memory`], off the async workers).
    pub fn prune(&self, current: &Controller, now: Instant) -> bool {
        let mut big_gone = false;
        self.lock().retain(|s| {
            let keep = same_content(&s.snap, current, &s.key.query) && !s.big_and_idle(now);
            big_gone |= !keep && s.cell.get().is_some_and(|b| b.len() > TRIM_ABOVE);
            keep
        });
        big_gone
    }

    /// How many bodies were built, and how many requests were served one
    /// that another request had built.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.builds.load(Ordering::Relaxed),
            self.hits.load(Ordering::Relaxed),
        )
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Slot>> {
        // A panic elsewhere while holding it leaves the list usable.
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn cell(&self, snap: &Arc<Controller>, key: &Key, now: Instant) -> Cell {
        let mut slots = self.lock();
        let usable =
            |s: &Slot| Arc::ptr_eq(&s.snap, snap) || same_content(&s.snap, snap, &s.key.query);
        if let Some(s) = slots.iter_mut().find(|s| s.key == *key && usable(s)) {
            s.used = now;
            return s.cell.clone();
        }
        // Entries this snapshot cannot use are of an older state (or of a
        // reader still holding one): nobody loading the current one needs them.
        slots.retain(usable);
        if slots.len() >= MAX_SLOTS {
            slots.remove(0);
        }
        let cell = Cell::default();
        slots.push(Slot {
            snap: snap.clone(),
            key: key.clone(),
            cell: cell.clone(),
            used: now,
        });
        cell
    }

    /// The encoded reply for `key` over `snap`: cached, or built once on
    /// the blocking pool while other requests for it wait.
    pub async fn get(&self, snap: &Arc<Controller>, key: &Key) -> Result<Arc<[u8]>, BuildError> {
        let cell = self.cell(snap, key, Instant::now());
        let mut built = false;
        let body = cell
            .get_or_try_init(|| {
                built = true;
                let (snap, key) = (snap.clone(), key.clone());
                async move {
                    tokio::task::spawn_blocking(move || {
                        let body = encode(&snap, &key);
                        if body.len() > TRIM_ABOVE {
                            release_free_memory();
                        }
                        body
                    })
                    .await
                }
            })
            .await?
            .clone();
        let counter = if built { &self.builds } else { &self.hits };
        counter.fetch_add(1, Ordering::Relaxed);
        Ok(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::req::HotStr;
    use crate::state::testkit::{controller, job_id, submit_desc, user};
    use crate::state::Command;
    use slurm_wire::msg::job_desc::JobDescMsg;

    fn ctrl() -> Controller {
        let text = "ClusterName=t\nSlurmctldHost=ctl\nSlurmUser=root\n\
                    NodeName=n[1-2] CPUs=4 RealMemory=1000\n\
                    PartitionName=debug Nodes=n[1-2] Default=YES State=UP\n";
        controller(text)
    }

    fn submit(c: &mut Controller, uid: u32, name: &str) -> u32 {
        let desc = JobDescMsg {
            min_cpus: 1,
            name: Some(name.into()),
            script: Some("#!/bin/sh\ntrue\n".into()),
            // held, so that nothing starts and the test sees pending jobs
            priority: 0,
            ..JobDescMsg::unset()
        };
        let (r, _) = submit_desc(c, 1000, user(uid, uid), ProtocolVersion::V24_11, desc);
        job_id(r)
    }

    fn jobs_key(user: Option<u32>, v: ProtocolVersion, show_flags: u16) -> Key {
        Key {
            query: Query::Jobs { user },
            version: v,
            show_flags,
            visible: Visible::all(),
        }
    }

    fn job_names(body: &[u8], v: ProtocolVersion) -> Vec<String> {
        match Message::decode(v, MsgType::ResponseJobInfo, body).unwrap() {
            Message::ResponseJobInfo(m) => m
                .job_array
                .into_iter()
                .map(|j| j.name.unwrap_or_default())
                .collect(),
            other => panic!("not job info: {other:?}"),
        }
    }

    #[tokio::test]
    async fn same_snapshot_is_built_once_and_a_new_one_is_never_served_old_bytes() {
        let cache = ReplyCache::default();
        let mut c = ctrl();
        submit(&mut c, 1000, "first");
        let s1 = Arc::new(c.clone());
        let k = jobs_key(None, ProtocolVersion::V24_11, 0);
        let a = cache.get(&s1, &k).await.unwrap();
        let b = cache.get(&s1, &k).await.unwrap();
        assert!(
            Arc::ptr_eq(&a, &b),
            "the second request is served the same bytes"
        );
        assert_eq!(cache.counts(), (1, 1));
        assert_eq!(
            &a[..],
            &encode(&s1, &k)[..],
            "cached bytes are the direct encoding"
        );

        // A state change publishes a new snapshot: its readers see the new
        // job even though the old entry is still cached (no clear here).
        submit(&mut c, 1000, "second");
        let s2 = Arc::new(c.clone());
        let n = cache.get(&s2, &k).await.unwrap();
        assert_eq!(job_names(&n, k.version).len(), 2);
        assert_eq!(job_names(&a, k.version), vec!["first".to_string()]);
        // A reader that still holds the old snapshot gets that snapshot's
        // bytes, never the new ones.
        let old = cache.get(&s1, &k).await.unwrap();
        assert_eq!(job_names(&old, k.version).len(), 1);
    }

    #[tokio::test]
    async fn every_input_of_the_bytes_is_part_of_the_key() {
        let cache = ReplyCache::default();
        let mut c = ctrl();
        submit(&mut c, 1000, "alice");
        submit(&mut c, 1001, "bob");
        let s = Arc::new(c);
        let all = cache
            .get(&s, &jobs_key(None, ProtocolVersion::V24_11, 0))
            .await
            .unwrap();
        let bob = cache
            .get(&s, &jobs_key(Some(1001), ProtocolVersion::V24_11, 0))
            .await
            .unwrap();
        assert_eq!(job_names(&all, ProtocolVersion::V24_11).len(), 2);
        assert_eq!(job_names(&bob, ProtocolVersion::V24_11), vec!["bob"]);
        for v in [ProtocolVersion::V22_05, ProtocolVersion::V24_11] {
            for flags in [0, views::SHOW_DETAIL] {
                let k = jobs_key(None, v, flags);
                let got = cache.get(&s, &k).await.unwrap();
                assert_eq!(&got[..], &encode(&s, &k)[..], "{v} flags {flags}");
            }
        }
        let v22 = cache
            .get(&s, &jobs_key(None, ProtocolVersion::V22_05, 0))
            .await
            .unwrap();
        assert_ne!(
            &v22[..],
            &all[..],
            "each protocol version has its own bytes"
        );
        for q in [Query::Nodes, Query::Partitions] {
            let k = Key {
                query: q,
                version: ProtocolVersion::V24_11,
                show_flags: 0,
                visible: Visible::all(),
            };
            let got = cache.get(&s, &k).await.unwrap();
            let m = Message::decode(k.version, k.msg_type(), &got).unwrap();
            assert_eq!(m, message(&s, &k));
        }
    }

    #[tokio::test]
    async fn an_unchanged_listing_survives_new_snapshots_and_a_changed_one_does_not() {
        let cache = ReplyCache::default();
        let mut c = ctrl();
        submit(&mut c, 1000, "held");
        // The first tick plans the queue (backfill), which job info shows.
        c.apply(1001, Command::Tick);
        let k = jobs_key(None, ProtocolVersion::V24_11, 0);
        let s1 = Arc::new(c.clone());
        let a = cache.get(&s1, &k).await.unwrap();

        // A batch that changed nothing the listing reads (a tick over a
        // held queue between backfill passes) publishes a new snapshot
        // that is served the entry.
        c.apply(1002, Command::Tick);
        let s2 = Arc::new(c.clone());
        cache.prune(&s2, Instant::now());
        let b = cache.get(&s2, &k).await.unwrap();
        assert!(Arc::ptr_eq(&a, &b), "unchanged jobs: the same bytes");
        assert_eq!(cache.counts(), (1, 1));

        // A node's record changes: job listings read node states, so the
        // entry is pruned and rebuilt, and the new bytes are the encoding.
        c.nodes_mut()[0].cpu_load += 1;
        let s3 = Arc::new(c.clone());
        cache.prune(&s3, Instant::now());
        assert_eq!(cache.lock().len(), 0, "the changed snapshot prunes it");
        let d = cache.get(&s3, &k).await.unwrap();
        assert_eq!(cache.counts().0, 2);
        assert_eq!(&d[..], &encode(&s3, &k)[..]);

        // A job's record changes: rebuilt, and the change is in the bytes.
        let id = *c.jobs().iter().next().unwrap().0;
        c.jobs_mut()
            .get_mut(&id)
            .unwrap()
            .req
            .set_str(HotStr::name, Some("renamed"));
        let s4 = Arc::new(c.clone());
        let e = cache.get(&s4, &k).await.unwrap();
        assert_eq!(job_names(&e, k.version), vec!["renamed".to_string()]);
        assert_eq!(cache.counts().0, 3);
    }

    #[tokio::test]
    async fn a_large_body_goes_once_idle_and_a_small_one_stays() {
        let cache = ReplyCache::default();
        let mut c = ctrl();
        // Long names make the listing larger than TRIM_ABOVE.
        let long = "x".repeat(4000);
        for i in 0..300 {
            submit(&mut c, 1000, &format!("{long}{i}"));
        }
        let s = Arc::new(c);
        let (big, small) = (
            jobs_key(None, ProtocolVersion::V24_11, 0),
            Key {
                query: Query::Partitions,
                version: ProtocolVersion::V24_11,
                show_flags: 0,
                visible: Visible::all(),
            },
        );
        assert!(cache.get(&s, &big).await.unwrap().len() > TRIM_ABOVE);
        assert!(cache.get(&s, &small).await.unwrap().len() < TRIM_ABOVE);
        let t0 = Instant::now();
        assert!(!cache.prune(&s, t0), "just used: kept");
        // Asked for again just before it would expire: kept from then on.
        cache.get(&s, &big).await.unwrap();
        let asked = Instant::now();
        assert!(!cache.prune(&s, asked + IDLE_KEEP / 2));
        assert_eq!(cache.lock().len(), 2);
        assert!(
            cache.prune(&s, asked + IDLE_KEEP),
            "idle: the big body goes"
        );
        let left: Vec<Query> = cache.lock().iter().map(|s| s.key.query.clone()).collect();
        assert_eq!(left, [Query::Partitions]);
        cache.get(&s, &big).await.unwrap();
        assert_eq!(cache.counts().0, 3, "asked again: built again");
    }

    #[tokio::test]
    async fn concurrent_misses_build_once() {
        let cache = Arc::new(ReplyCache::default());
        let mut c = ctrl();
        for i in 0..50 {
            submit(&mut c, 1000, &format!("j{i}"));
        }
        let s = Arc::new(c);
        let k = jobs_key(None, ProtocolVersion::V24_11, 0);
        let tasks: Vec<_> = (0..16)
            .map(|_| {
                let (cache, s, k) = (cache.clone(), s.clone(), k.clone());
                tokio::spawn(async move { cache.get(&s, &k).await.unwrap() })
            })
            .collect();
        let mut bodies = Vec::new();
        for t in tasks {
            bodies.push(t.await.unwrap());
        }
        assert!(bodies.iter().all(|b| Arc::ptr_eq(b, &bodies[0])));
        assert_eq!(cache.counts(), (1, 15));
        cache.clear();
        cache.get(&s, &k).await.unwrap();
        assert_eq!(cache.counts().0, 2, "a cleared cache builds again");
    }
}
