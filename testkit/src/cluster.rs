//! An in-process cluster: the controller's state machine and a fake slurmd
//! per node, under a virtual clock. No process, socket or munged.
//!
//! Each [`Effect`] the controller returns is delivered at once to the node
//! it names. The node answers as a slurmd does (a ping with its load, a
//! batch launch with success, a terminate with its epilog), and the answer
//! goes back in through [`outcome::report`], as the daemon's agent
//! feeds it. A launched batch script ends after the runtime the test gives
//! it, as a REQUEST_COMPLETE_BATCH_SCRIPT at that virtual time. Time moves
//! only when the test says ([`Cluster::advance_to`]), and the scheduler
//! runs on [`Cluster::tick`].

use crate::builders::registration;
use slurm_wire::errno::ESLURMD_KILL_JOB_ALREADY_COMPLETE;
use slurm_wire::msg::common::{PingSlurmdRespMsg, ReturnCodeMsg};
use slurm_wire::msg::job_desc::JobDescMsg;
use slurm_wire::{Message, MsgType, ProtocolVersion};
use slurmctld::state::config::ClusterConf;
use slurmctld::state::job::UserInfo;
use slurmctld::state::outcome::{self, Outcome};
use slurmctld::state::{Command, Controller, Effect, Outbound, Purpose, Reply, Time};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, VecDeque};

/// How long a job's batch script runs, in seconds, from its job id and its
/// script.
pub type Runtime = Box<dyn FnMut(u32, Option<&str>) -> Time + Send>;

/// The default [`Runtime`]: what the script's `sleep N` lines add up to.
pub fn sleeps(_job_id: u32, script: Option<&str>) -> Time {
    script
        .unwrap_or("")
        .lines()
        .filter_map(|l| l.trim().strip_prefix("sleep "))
        .filter_map(|n| n.trim().parse::<Time>().ok())
        .fold(0, Time::saturating_add)
}

/// One fake slurmd.
#[derive(Debug, Default)]
struct FakeNode {
    /// Batch scripts running here.
    running: BTreeSet<u32>,
    /// Jobs this node has had (a terminate for another is "already
    /// complete", as slurmd answers it).
    known: BTreeSet<u32>,
    /// Down: every RPC to it fails, as to a node that is off.
    down: bool,
}

/// A message the controller sent, as the test may inspect it.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivered {
    pub time: Time,
    pub node: String,
    pub msg_type: MsgType,
    pub purpose: Purpose,
}

pub struct Cluster {
    pub ctld: Controller,
    now: Time,
    nodes: BTreeMap<String, FakeNode>,
    /// Batch scripts that end later: (time, order, job id, node).
    due: BinaryHeap<Reverse<(Time, u64, u32, String)>>,
    seq: u64,
    runtime: Runtime,
    /// Every message delivered, in order.
    pub delivered: Vec<Delivered>,
}

/// A cluster could not be made from its slurm.conf.
#[derive(Debug)]
pub struct ConfError(pub String);

impl std::fmt::Display for ConfError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Cluster {
    /// A controller on `slurm_conf` at virtual time `now`, every node
    /// registered with its configured CPUs and memory. Batch scripts run
    /// for their [`sleeps`] until [`Cluster::set_runtime`] says otherwise.
    pub fn new(slurm_conf: &str, now: Time) -> Result<Cluster, ConfError> {
        let conf = slurm_conf::SlurmConf::parse_str(slurm_conf, "/etc/slurm/slurm.conf")
            .map_err(|e| ConfError(e.to_string()))?;
        let conf = ClusterConf::new(conf, 0).map_err(|e| ConfError(e.to_string()))?;
        let ctld = Controller::new(conf, now);
        let defs: Vec<(String, u16, u64)> = ctld
            .nodes()
            .iter()
            .map(|n| (n.name().to_string(), n.def.cpus, n.def.real_memory))
            .collect();
        let mut c = Cluster {
            ctld,
            now,
            nodes: defs
                .iter()
                .map(|(n, ..)| (n.clone(), FakeNode::default()))
                .collect(),
            due: BinaryHeap::new(),
            seq: 0,
            runtime: Box::new(sleeps),
            delivered: Vec::new(),
        };
        for (name, cpus, mem) in defs {
            let r = c.apply(Command::Register {
                msg: Box::new(registration(&name, cpus, mem)),
                version: ProtocolVersion::V24_11,
                uid: 0,
            });
            if !matches!(r, Reply::Registered { .. }) {
                return Err(ConfError(format!("node {name} did not register: {r:?}")));
            }
        }
        Ok(c)
    }

    pub fn set_runtime(&mut self, runtime: Runtime) {
        self.runtime = runtime;
    }

    pub fn now(&self) -> Time {
        self.now
    }

    /// Applies `cmd` now, then delivers everything it causes, and what that
    /// causes, until the cluster is quiet at this instant. The reply is
    /// `cmd`'s own.
    pub fn apply(&mut self, cmd: Command) -> Reply {
        let (reply, effects) = self.ctld.apply(self.now, cmd);
        self.settle(effects);
        reply
    }

    /// `sbatch` as `user`: the job id, or the refusal.
    pub fn submit(&mut self, user: &UserInfo, desc: JobDescMsg) -> Result<u32, Reply> {
        match self.apply(Command::Submit {
            user: user.clone(),
            desc: Box::new(desc),
            version: ProtocolVersion::V24_11,
        }) {
            Reply::Submitted { job_id } => Ok(job_id),
            r => Err(r),
        }
    }

    /// The controller's periodic work (scheduling, time limits, pings).
    pub fn tick(&mut self) {
        self.apply(Command::Tick);
    }

    /// Moves the clock to `t` (never back), ending on the way, each at its
    /// own time, the batch scripts that are due.
    pub fn advance_to(&mut self, t: Time) {
        while let Some(Reverse((when, ..))) = self.due.peek() {
            if *when > t {
                break;
            }
            let Some(Reverse((when, _, job_id, node))) = self.due.pop() else {
                break;
            };
            self.now = self.now.max(when);
            let still_running = self
                .nodes
                .get_mut(&node)
                .is_some_and(|n| n.running.remove(&job_id));
            if still_running {
                self.apply(Command::BatchComplete {
                    uid: 0,
                    job_id,
                    job_rc: 0,
                    slurm_rc: 0,
                    node: Some(node),
                });
            }
        }
        self.now = self.now.max(t);
    }

    /// From now on every RPC to `node` fails, and its scripts stop
    /// reporting, as when a node is powered off.
    pub fn power_off(&mut self, node: &str) {
        if let Some(n) = self.nodes.get_mut(node) {
            n.down = true;
            n.running.clear();
        }
    }

    /// Batch scripts running on `node` now.
    pub fn running_on(&self, node: &str) -> Vec<u32> {
        self.nodes
            .get(node)
            .map(|n| n.running.iter().copied().collect())
            .unwrap_or_default()
    }

    fn settle(&mut self, effects: Vec<Effect>) {
        let mut queue: VecDeque<Effect> = effects.into();
        while let Some(Effect::Send(o)) = queue.pop_front() {
            for cmd in self.deliver(*o) {
                let (_, more) = self.ctld.apply(self.now, cmd);
                queue.extend(more);
            }
        }
    }

    /// Delivers one message; the commands its answer and its side effects
    /// feed back, in order.
    fn deliver(&mut self, o: Outbound) -> Vec<Command> {
        self.delivered.push(Delivered {
            time: self.now,
            node: o.node.clone(),
            msg_type: o.msg.msg_type(),
            purpose: o.purpose.clone(),
        });
        // srun is not a node: nothing answers in here.
        if matches!(o.purpose, Purpose::Srun { .. }) {
            return Vec::new();
        }
        let Some(node) = self.nodes.get_mut(&o.node) else {
            return outcome::report(&o.node, &o.purpose, Outcome::Failed)
                .into_iter()
                .collect();
        };
        if node.down {
            return outcome::report(&o.node, &o.purpose, Outcome::Failed)
                .into_iter()
                .collect();
        }
        let rc = |n: i32| {
            Message::ResponseSlurmRc(ReturnCodeMsg {
                return_code: n as u32,
            })
        };
        let mut after = Vec::new();
        let answer = match (&o.msg, &o.purpose) {
            (Message::RequestPing(_), _) => Message::ResponsePingSlurmd(PingSlurmdRespMsg {
                cpu_load: 0,
                free_mem: 0,
                node_name: Some(o.node.clone()),
            }),
            (Message::RequestNodeRegistrationStatus(_), _) => {
                if let Some(i) = self.ctld.node_index(&o.node) {
                    let d = &self.ctld.nodes()[i].def;
                    after.push(Command::Register {
                        msg: Box::new(registration(&o.node, d.cpus, d.real_memory)),
                        version: o.version,
                        uid: 0,
                    });
                }
                rc(0)
            }
            (Message::RequestBatchJobLaunch(m), Purpose::Launch { job_id }) => {
                node.running.insert(*job_id);
                node.known.insert(*job_id);
                let run = (self.runtime)(*job_id, m.script.as_deref()).max(0);
                let end = self.now.saturating_add(run);
                self.seq += 1;
                self.due
                    .push(Reverse((end, self.seq, *job_id, o.node.clone())));
                rc(0)
            }
            (
                Message::RequestTerminateJob(_)
                | Message::RequestKillTimelimit(_)
                | Message::RequestAbortJob(_)
                | Message::RequestKillPreempted(_),
                Purpose::Terminate { job_id },
            ) => {
                node.running.remove(job_id);
                // Every node of the allocation runs the epilog, the batch
                // host or not; a job never seen here is already complete.
                let in_job = node.known.remove(job_id)
                    || self.ctld.jobs().get(job_id).is_some_and(|j| {
                        j.alloc
                            .iter()
                            .any(|a| self.ctld.nodes()[a.node].name() == o.node)
                    });
                if in_job {
                    after.push(Command::EpilogComplete {
                        uid: 0,
                        job_id: *job_id,
                        node: Some(o.node.clone()),
                        rc: 0,
                    });
                    rc(0)
                } else {
                    rc(ESLURMD_KILL_JOB_ALREADY_COMPLETE)
                }
            }
            _ => rc(0),
        };
        let mut out: Vec<Command> = outcome::report(&o.node, &o.purpose, Outcome::Reply(&answer))
            .into_iter()
            .collect();
        out.extend(after);
        out
    }
}
