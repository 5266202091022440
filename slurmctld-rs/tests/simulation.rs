//! The scheduler simulated: virtual nodes and a virtual clock, no processes,
//! on the test kit's in-process cluster. Jobs of mixed shapes and
//! partitions are submitted; each batch launch reaches a fake slurmd, whose
//! script ends after its `sleep` (or at its time limit), and each terminate
//! comes back as that node's epilog. The clock ticks until every job has
//! run. It
//! checks after every step that no node is over-committed (CPUs, memory,
//! GRES devices), that partition limits hold, that no job starts before
//! the job it depends on (`afterany`) has ended, and that two runs place
//! every job identically.
//!
//! `simulation_tiny` runs in every `cargo test` (debug builds are too slow
//! for more); `simulation_small` and `simulation_full` (10,000 nodes,
//! 100,000 jobs) are `#[ignore]`d and run optimised (`--profile sim`) by scripts/test.

use slurm_testkit::cluster::Cluster;
use slurm_wire::msg::job_desc::JobDescMsg;
use slurm_wire::ProtocolVersion;
use slurmctld::state::job::{JobState, UserInfo};
use slurmctld::state::Time;
use std::collections::BTreeMap;

const MEM_PER_CPU: u64 = 0x8000_0000_0000_0000;

/// xorshift64*: the same jobs on every run, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

struct Sim {
    k: Cluster,
    /// Jobs in submit order.
    submitted: Vec<u32>,
    /// (job, start, nodes) in start order.
    placements: Vec<(u32, Time, Vec<usize>)>,
    started: BTreeMap<u32, ()>,
    /// job -> the job it waits for (`--dependency=afterany:`).
    deps: BTreeMap<u32, u32>,
    /// When each job ended (kept past MinJobAge, which purges the record).
    ended: BTreeMap<u32, Time>,
}

fn conf_text(cpu_nodes: usize, gpu_nodes: usize) -> String {
    format!(
        "ClusterName=sim\nSlurmctldHost=ctl\nSlurmUser=root\nSlurmdTimeout=0\nMinJobAge=30\n\
         SelectTypeParameters=CR_Core_Memory\nGresTypes=gpu\n\
         NodeName=c[1-{cpu_nodes}] CPUs=32 RealMemory=128000\n\
         NodeName=g[1-{gpu_nodes}] CPUs=64 RealMemory=512000 Gres=gpu:a100:4\n\
         PartitionName=cpu Nodes=c[1-{cpu_nodes}] Default=YES MaxTime=120 MaxNodes=8 State=UP\n\
         PartitionName=gpu Nodes=g[1-{gpu_nodes}] MaxTime=240 State=UP PriorityTier=2\n\
         PartitionName=all Nodes=c[1-{cpu_nodes}],g[1-{gpu_nodes}] MaxTime=60 MaxNodes=4 State=UP\n"
    )
}

impl Sim {
    fn new(cpu_nodes: usize, gpu_nodes: usize) -> Sim {
        let k = Cluster::new(&conf_text(cpu_nodes, gpu_nodes), 1_000_000).unwrap();
        Sim {
            k,
            submitted: Vec::new(),
            placements: Vec::new(),
            started: BTreeMap::new(),
            deps: BTreeMap::new(),
            ended: BTreeMap::new(),
        }
    }

    fn submit_all(&mut self, n: usize, seed: u64) {
        let mut rng = Rng(seed);
        let user = UserInfo {
            uid: 1000,
            gid: 1000,
            name: Some("sim".into()),
            ..Default::default()
        };
        for i in 0..n {
            let now = 1_000_000 + (i / 1000) as Time;
            let mut d = JobDescMsg {
                min_cpus: 1,
                ..JobDescMsg::unset()
            };
            // One job in twenty waits for an earlier one.
            let dep = (rng.below(20) == 0)
                .then(|| {
                    self.submitted
                        .iter()
                        .nth_back(rng.below(50) as usize)
                        .copied()
                })
                .flatten();
            d.dependency = dep.map(|x| format!("afterany:{x}"));
            let limit = 5 + rng.below(55) as u32;
            d.time_limit = limit;
            match rng.below(10) {
                // Small serial jobs in the default partition.
                0..=4 => {
                    d.num_tasks = 1 + rng.below(8) as u32;
                    d.pn_min_memory = (500 + rng.below(3500)) | MEM_PER_CPU;
                }
                // Multi-node CPU jobs.
                5 | 6 => {
                    let nodes = 1 + rng.below(4) as u32;
                    d.min_nodes = nodes;
                    d.max_nodes = nodes;
                    d.num_tasks = nodes * (1 + rng.below(32) as u32);
                    d.pn_min_memory = 1000 + rng.below(60_000);
                }
                // GPU jobs (a higher tier).
                7 | 8 => {
                    d.partition = Some("gpu".into());
                    d.num_tasks = 1 + rng.below(16) as u32;
                    d.tres_per_node = Some(format!("gres/gpu:{}", 1 + rng.below(4)));
                    d.pn_min_memory = 2000 + rng.below(100_000);
                }
                // Anything, anywhere, whole-node-ish, in the shared partition.
                _ => {
                    d.partition = Some("all".into());
                    d.time_limit = limit.min(60);
                    d.num_tasks = 16 + rng.below(48) as u32;
                    d.cpus_per_task = 1;
                    d.pn_min_memory = 1000 | MEM_PER_CPU;
                }
            }
            // Most jobs end before their limit; some run into it.
            let run = if rng.below(10) == 0 {
                Time::from(d.time_limit) * 60 + 3600
            } else {
                30 + rng.below(u64::from(d.time_limit) * 60) as Time
            };
            // The fake slurmd runs the script for its sleep.
            d.script = Some(format!("#!/bin/sh\nsleep {run}\n"));
            self.k.advance_to(now);
            let job_id = match self.k.submit(&user, d) {
                Ok(id) => id,
                Err(r) => panic!("submit {i} refused: {r:?}"),
            };
            self.submitted.push(job_id);
            if let Some(x) = dep {
                self.deps.insert(job_id, x);
            }
        }
        self.note_starts();
    }

    /// Jobs that ended since the last look, with their end time.
    fn note_ended(&mut self) {
        let ended: Vec<(u32, Time)> = self
            .k
            .ctld
            .jobs()
            .values()
            .filter(|j| j.state.is_finished() && !self.ended.contains_key(&j.job_id))
            .map(|j| (j.job_id, j.end_time))
            .collect();
        self.ended.extend(ended);
    }

    fn note_starts(&mut self) {
        // Only jobs that started since the last look: running, not noted.
        let fresh: Vec<(u32, Time, Vec<usize>)> = self
            .k
            .ctld
            .jobs()
            .values()
            .filter(|j| j.state != JobState::Pending && !self.started.contains_key(&j.job_id))
            .filter(|j| !j.alloc.is_empty())
            .map(|j| {
                (
                    j.job_id,
                    j.start_time,
                    j.alloc.iter().map(|a| a.node).collect(),
                )
            })
            .collect();
        for p in fresh {
            if let Some(x) = self.deps.get(&p.0) {
                let done = self.ended.get(x).copied().or_else(|| {
                    self.k
                        .ctld
                        .jobs()
                        .get(x)
                        .filter(|j| j.state.is_finished())
                        .map(|j| j.end_time)
                });
                assert!(
                    done.is_some_and(|t| t <= p.1),
                    "job {} started at {} before its dependency {x} ended ({done:?})",
                    p.0,
                    p.1
                );
            }
            self.started.insert(p.0, ());
            self.placements.push(p);
        }
    }

    /// No node holds more than it has; partition limits hold.
    fn check(&self) {
        let c = &self.k.ctld;
        let mut cpus = vec![0u32; c.nodes().len()];
        let mut mem = vec![0u64; c.nodes().len()];
        let mut gres: BTreeMap<(usize, String, u32), u32> = BTreeMap::new();
        for j in c.jobs().values().filter(|j| j.state == JobState::Running) {
            let p = &c.conf().partitions[j.part];
            assert!(
                j.alloc.len() as u32 >= j.min_nodes,
                "job {} has too few nodes",
                j.job_id
            );
            assert!(
                p.conf.max_nodes == slurm_wire::pack::INFINITE
                    || j.alloc.len() as u32 <= p.conf.max_nodes,
                "job {} over its partition's MaxNodes",
                j.job_id
            );
            assert!(
                j.time_limit <= p.max_time(),
                "job {} over MaxTime",
                j.job_id
            );
            assert!(
                j.alloc_cpus() >= j.min_cpus,
                "job {} short of CPUs",
                j.job_id
            );
            for a in &j.alloc {
                assert!(
                    p.nodes.contains(&a.node),
                    "job {} outside its partition",
                    j.job_id
                );
                cpus[a.node] += u32::from(a.cpus);
                mem[a.node] += a.mem;
                for g in &a.gres {
                    for &i in &g.indices {
                        let k = (a.node, g.name.clone(), i);
                        *gres.entry(k).or_default() += 1;
                    }
                }
            }
        }
        for (i, n) in c.nodes().iter().enumerate() {
            assert!(
                cpus[i] <= u32::from(n.def.cpus),
                "{} over-committed: {} CPUs",
                n.name(),
                cpus[i]
            );
            assert!(
                mem[i] <= n.def.real_memory,
                "{} over-committed: {} MiB",
                n.name(),
                mem[i]
            );
            assert_eq!(
                cpus[i],
                u32::from(n.alloc_cpus),
                "{} CPU count drifted",
                n.name()
            );
        }
        for ((node, name, idx), k) in gres {
            assert_eq!(k, 1, "{name} device {idx} of node {node} given {k} times");
            let have: u64 = c.nodes()[node]
                .def
                .gres_list
                .iter()
                .filter(|g| g.name == name)
                .map(|g| g.count)
                .sum();
            assert!(
                u64::from(idx) < have,
                "device {idx} beyond the node's {have}"
            );
        }
    }

    /// Runs the clock until every job is done, or for `max_steps` steps
    /// when `must_finish` is false.
    fn run(&mut self, step: Time, max_steps: usize, must_finish: bool) -> Time {
        let mut now = self
            .k
            .ctld
            .jobs()
            .values()
            .map(|j| j.submit_time)
            .max()
            .unwrap_or(1_000_000)
            + 1;
        for _ in 0..max_steps {
            // Scripts end at their own time on the way; then the periodic
            // pass (time limits, scheduling).
            self.k.advance_to(now);
            // Before the tick, which may purge what started and ended on
            // the way (MinJobAge).
            self.note_ended();
            self.note_starts();
            self.k.tick();
            self.note_ended();
            self.note_starts();
            self.check();
            let left = self
                .k
                .ctld
                .jobs()
                .values()
                .filter(|j| !j.state.is_finished())
                .count();
            if std::env::var_os("SIM_TRACE").is_some() {
                let running = self
                    .k
                    .ctld
                    .jobs()
                    .values()
                    .filter(|j| j.state == JobState::Running)
                    .count();
                eprintln!("t=+{} left={left} running={running}", now - 1_000_000);
            }
            if left == 0 {
                return now;
            }
            now += step;
        }
        if !must_finish {
            return now;
        }
        panic!(
            "not done after {max_steps} steps: {} jobs left",
            self.k
                .ctld
                .jobs()
                .values()
                .filter(|j| !j.state.is_finished())
                .count()
        );
    }
}

/// Places `jobs` jobs on the nodes; with `steps`, only for that many
/// minutes of virtual time (else until every job has run).
fn simulate(
    cpu_nodes: usize,
    gpu_nodes: usize,
    jobs: usize,
    steps: Option<usize>,
) -> (Vec<(u32, Time, Vec<usize>)>, Time) {
    let t0 = std::time::Instant::now();
    let mut s = Sim::new(cpu_nodes, gpu_nodes);
    s.submit_all(jobs, 0x5eed_1234_abcd_0001);
    let submitted = t0.elapsed();
    s.check();
    let end = s.run(60, steps.unwrap_or(100_000), steps.is_none());
    if steps.is_none() {
        assert_eq!(s.placements.len(), jobs, "every job ran");
        // Every dependent job ran too, each after its dependency
        // (checked as it started).
        assert!(!s.deps.is_empty(), "the mix has dependent jobs");
    }
    eprintln!(
        "simulation: {} nodes, {jobs} jobs ({} dependent): submitted in {:.1?}, {} started by +{} s (virtual) after {:.1?}",
        cpu_nodes + gpu_nodes,
        s.deps.len(),
        submitted,
        s.placements.len(),
        end - 1_000_000,
        t0.elapsed()
    );
    (s.placements, end)
}

#[test]
fn simulation_tiny() {
    let a = simulate(16, 4, 200, None);
    let b = simulate(16, 4, 200, None);
    assert!(a == b, "two runs placed jobs differently");
}

/// 200 nodes, 3,000 jobs (a few seconds in release).
#[test]
#[ignore]
fn simulation_small() {
    let a = simulate(160, 40, 3000, None);
    let b = simulate(160, 40, 3000, None);
    assert!(a == b, "two runs placed jobs differently");
}

/// 10,000 nodes and 100,000 jobs: `cargo test --release -p slurmctld-rs
/// --test simulation -- --ignored` (scripts/test runs it).
#[test]
#[ignore]
fn simulation_full() {
    // The two runs side by side (two threads): same wall time as one.
    let (a, b) = std::thread::scope(|s| {
        // Two virtual hours: every job is placed or planned many times over,
        // and the run stays within minutes (all 100,000 would take an hour).
        let a = s.spawn(|| simulate(8000, 2000, 100_000, Some(120)));
        let b = s.spawn(|| simulate(8000, 2000, 100_000, Some(120)));
        (a.join().expect("run a"), b.join().expect("run b"))
    });
    assert!(a == b, "two runs placed jobs differently");
    assert!(a.0.len() >= 15_000, "only {} jobs started", a.0.len());
}

/// What one job-info reply over 11,000 pending jobs costs to build and
/// encode (the read path of squeue): `cargo test --release -p slurmctld-rs
/// --test simulation job_info_cost -- --ignored --nocapture`.
#[test]
#[ignore]
fn job_info_cost() {
    let mut s = Sim::new(4, 1);
    s.submit_all(11_000, 7);
    let v = ProtocolVersion::V24_11;
    let t0 = std::time::Instant::now();
    let mut bytes = 0;
    for _ in 0..5 {
        let m = slurmctld::views::job_info_msg(&s.k.ctld, None, None, 0, v);
        let msg = slurm_wire::Message::ResponseJobInfo(m);
        let f =
            slurm_wire::frame::Frame::new(slurm_wire::header::Header::new(v, msg.msg_type()), &msg);
        bytes = f.body.len();
    }
    eprintln!(
        "job info over {} jobs: {:.1?} per reply, {bytes} bytes",
        s.k.ctld.jobs().len(),
        t0.elapsed() / 5
    );
}
