//! What a pending job costs the controller in heap: the bench's request
//! (`sbatch --hold -o /dev/null --wrap true`, bench/src/requests.rs)
//! submitted N times through `Controller::apply`, with every allocation
//! counted by a global allocator that also rounds each block up to the
//! chunk glibc's malloc would hand out (what RSS sees).
//!
//! `cargo test -p slurmctld-rs --test job_memory -- --nocapture` prints the
//! figures.

use slurm_bench::requests::{batch_job, Submitter};
use slurm_wire::ProtocolVersion;
use slurmctld::state::config::ClusterConf;
use slurmctld::state::job::{JobState, UserInfo};
use slurmctld::state::{Command, Controller, Reply};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, Ordering::Relaxed};

struct Counting;

static BYTES: AtomicI64 = AtomicI64::new(0);
static CHUNKS: AtomicI64 = AtomicI64::new(0);
static BLOCKS: AtomicI64 = AtomicI64::new(0);

/// glibc's chunk for a request: 8 bytes of header, 16-byte granules,
/// 32 bytes at least.
fn chunk(size: usize) -> i64 {
    ((size + 8 + 15) & !15).max(32) as i64
}

// SAFETY: every call goes to the system allocator unchanged; only counts
// are kept on the side.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        BYTES.fetch_add(l.size() as i64, Relaxed);
        CHUNKS.fetch_add(chunk(l.size()), Relaxed);
        BLOCKS.fetch_add(1, Relaxed);
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        BYTES.fetch_sub(l.size() as i64, Relaxed);
        CHUNKS.fetch_sub(chunk(l.size()), Relaxed);
        BLOCKS.fetch_sub(1, Relaxed);
        // SAFETY: p came from alloc with this layout.
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static A: Counting = Counting;

fn snapshot() -> (i64, i64, i64) {
    (
        BYTES.load(Relaxed),
        CHUNKS.load(Relaxed),
        BLOCKS.load(Relaxed),
    )
}

/// A user as the daemon resolves one from passwd.
fn bench_user() -> UserInfo {
    UserInfo {
        uid: 1000,
        gid: 1000,
        name: Some("bench".into()),
        gecos: Some("Bench User".into()),
        dir: Some("/home/bench".into()),
        shell: Some("/bin/bash".into()),
        gids: vec![1000, 27],
    }
}

fn controller() -> Controller {
    let text = "ClusterName=mem\nSlurmctldHost=ctl\nSlurmUser=root\nSlurmdTimeout=0\n\
                MaxJobCount=1000000\n\
                NodeName=n[1-4] CPUs=4 RealMemory=1000\n\
                PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=60 State=UP\n";
    let conf = slurm_conf::SlurmConf::parse_str(text, "/etc/slurm/slurm.conf").unwrap();
    Controller::new(ClusterConf::new(conf, 0).unwrap(), 1_000_000)
}

fn submit(c: &mut Controller, who: &Submitter, now: i64) {
    let r = c.apply(
        now,
        Command::Submit {
            user: bench_user(),
            desc: Box::new(batch_job(who, true)),
            version: ProtocolVersion::V24_11,
        },
    );
    assert!(
        matches!(r.0, Reply::Submitted { .. }),
        "submit refused: {:?}",
        r.0
    );
}

#[test]
fn pending_job_heap_cost() {
    const N: i64 = 4000;
    let who = Submitter {
        uid: 1000,
        gid: 1000,
        work_dir: "/home/bench/work".into(),
        host: "bench-host".into(),
        partition: None,
    };
    let mut c = controller();
    // Warm up: the first jobs size the tables' fixed parts.
    for i in 0..100 {
        submit(&mut c, &who, 1_000_001 + i);
    }
    let (b0, c0, n0) = snapshot();
    for i in 0..N {
        submit(&mut c, &who, 1_000_200 + i);
    }
    let (b1, c1, n1) = snapshot();
    assert!(c.jobs().values().all(|j| j.state == JobState::Pending));
    let (bytes, chunks, blocks) = ((b1 - b0) / N, (c1 - c0) / N, (n1 - n0) / N);
    println!("per pending job: {bytes} B requested, {chunks} B in malloc chunks, {blocks} blocks");
    println!(
        "size_of Job = {} B",
        std::mem::size_of::<slurmctld::state::job::Job>()
    );
    // The wire struct kept whole cost 3,441 B here; the target is half.
    assert!(
        chunks <= 1720,
        "a pending job costs {chunks} B, more than half of the 3,441 B it cost"
    );
}
