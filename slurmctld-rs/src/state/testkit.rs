//! What the controller's tests share: a controller from a config text,
//! node registration, submission as a user, completion and epilog, and
//! filters over the effects. Each test keeps its own config text and inputs;
//! only the plumbing lives here.

use super::config::ClusterConf;
use super::job::UserInfo;
use super::{
    Command, Controller, Effect, Outbound, Purpose, Reply, RpcOutcome, SignalTarget, Time,
};
use slurm_wire::msg::job_desc::JobDescMsg;
use slurm_wire::msg::launch::BatchJobLaunchMsg;
use slurm_wire::msg::node::{SlurmNodeRegistrationStatusMsg, UpdateNodeMsg};
use slurm_wire::msg::step::JobStepCreateRequestMsg;
use slurm_wire::pack::{NO_VAL, NO_VAL16, NO_VAL64};
use slurm_wire::types::StepId;
use slurm_wire::{Message, ProtocolVersion};

/// The default small cluster: two 4-CPU nodes in one default partition.
pub(crate) const SMALL_CLUSTER: &str = "\
ClusterName=t
SlurmctldHost=ctl
SlurmUser=root
SlurmdTimeout=300
ReturnToService=1
NodeName=n[1-2] CPUs=4 RealMemory=1000
PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=60 State=UP
";

/// The uid (and gid) most tests submit as.
pub(crate) const ALICE: u32 = 1000;

/// A controller started at 1000 from `conf` (a slurm.conf text).
pub(crate) fn controller(conf: &str) -> Controller {
    controller_at(conf, 1000)
}

/// A controller from `conf`, started at `now`.
pub(crate) fn controller_at(conf: &str, now: Time) -> Controller {
    Controller::new(cluster_conf(conf), now)
}

/// `text` parsed as /etc/slurm/slurm.conf.
pub(crate) fn slurm_conf(text: &str) -> slurm_conf::SlurmConf {
    slurm_conf::SlurmConf::parse_str(text, "/etc/slurm/slurm.conf").unwrap()
}

/// The controller's view of the slurm.conf `text`.
pub(crate) fn cluster_conf(text: &str) -> ClusterConf {
    ClusterConf::new(slurm_conf(text), 0).unwrap()
}

/// A registration of `name` as a 24.11.5 slurmd reports it.
pub(crate) fn reg(name: &str, cpus: u16, mem: u64) -> Command {
    reg_msg(
        SlurmNodeRegistrationStatusMsg {
            version: Some("24.11.5".into()),
            ..node_msg(name, cpus, mem)
        },
        ProtocolVersion::V24_11,
    )
}

/// A registration that names no slurmd version, sent in `version`.
pub(crate) fn reg_bare(name: &str, cpus: u16, mem: u64, version: ProtocolVersion) -> Command {
    reg_msg(node_msg(name, cpus, mem), version)
}

/// The registration message of `name` with its hardware and nothing else.
pub(crate) fn node_msg(name: &str, cpus: u16, mem: u64) -> SlurmNodeRegistrationStatusMsg {
    SlurmNodeRegistrationStatusMsg {
        node_name: Some(name.into()),
        cpus,
        real_memory: mem,
        ..Default::default()
    }
}

/// `msg` as root's registration command in `version`.
pub(crate) fn reg_msg(msg: SlurmNodeRegistrationStatusMsg, version: ProtocolVersion) -> Command {
    Command::Register {
        msg: Box::new(msg),
        version,
        uid: 0,
    }
}

/// Applies every command at `now`, ignoring replies.
pub(crate) fn apply_all(c: &mut Controller, now: Time, cmds: impl IntoIterator<Item = Command>) {
    for cmd in cmds {
        c.apply(now, cmd);
    }
}

/// A controller from `conf` with `nodes` registered (24.11.5) at 1000.
pub(crate) fn controller_up(conf: &str, nodes: &[&str], cpus: u16, mem: u64) -> Controller {
    let mut c = controller(conf);
    apply_all(&mut c, 1000, nodes.iter().map(|n| reg(n, cpus, mem)));
    c
}

/// Alice (1000:1000), named.
pub(crate) fn alice() -> UserInfo {
    UserInfo {
        uid: ALICE,
        gid: ALICE,
        name: Some("alice".into()),
        ..Default::default()
    }
}

/// An unnamed user `uid` in group `gid`.
pub(crate) fn user(uid: u32, gid: u32) -> UserInfo {
    UserInfo {
        uid,
        gid,
        ..Default::default()
    }
}

/// `sbatch --wrap=hostname` as sent, adjusted by `f`.
pub(crate) fn wrap(f: impl FnOnce(&mut JobDescMsg)) -> JobDescMsg {
    let mut d = JobDescMsg {
        min_cpus: 1,
        name: Some("wrap".into()),
        script: Some("#!/bin/sh\nhostname\n".into()),
        ..JobDescMsg::unset()
    };
    f(&mut d);
    d
}

/// A one-CPU batch job whose script is `true`, otherwise unset.
pub(crate) fn true_job() -> JobDescMsg {
    JobDescMsg {
        min_cpus: 1,
        script: Some("#!/bin/sh\ntrue\n".into()),
        ..JobDescMsg::unset()
    }
}

/// An all-unset description (as `scontrol update` sends) with `f` applied.
pub(crate) fn unset(f: impl FnOnce(&mut JobDescMsg)) -> JobDescMsg {
    let mut d = JobDescMsg::unset();
    f(&mut d);
    d
}

/// The few fields older tests set by hand where `JobDescMsg::unset()` would
/// leave them unset (`shared` 0 would be --exclusive); the rest stay zero.
pub(crate) fn sparse_desc() -> JobDescMsg {
    JobDescMsg {
        shared: NO_VAL16,
        time_limit: NO_VAL,
        min_nodes: NO_VAL,
        max_nodes: NO_VAL,
        num_tasks: NO_VAL,
        min_cpus: 1,
        cpus_per_task: NO_VAL16,
        ntasks_per_node: NO_VAL16,
        pn_min_memory: NO_VAL64,
        priority: NO_VAL,
        // SLURM_AUTH_NOBODY: the sender, as clients send it.
        user_id: 99,
        group_id: 99,
        ..Default::default()
    }
}

/// The submit command for `desc` from `user` in `version`.
pub(crate) fn submit_cmd(user: UserInfo, desc: JobDescMsg, version: ProtocolVersion) -> Command {
    Command::Submit {
        user,
        desc: Box::new(desc),
        version,
    }
}

/// Submits `desc` as `user` from a `version` client at `now`.
pub(crate) fn submit_desc(
    c: &mut Controller,
    now: Time,
    user: UserInfo,
    version: ProtocolVersion,
    desc: JobDescMsg,
) -> (Reply, Vec<Effect>) {
    c.apply(now, submit_cmd(user, desc, version))
}

/// `sbatch --wrap` as alice from a `version` client, adjusted by `f`.
pub(crate) fn submit_as(
    c: &mut Controller,
    now: Time,
    version: ProtocolVersion,
    f: impl FnOnce(&mut JobDescMsg),
) -> (Reply, Vec<Effect>) {
    submit_desc(c, now, alice(), version, wrap(f))
}

/// `sbatch --wrap` as alice from a 24.11 client, adjusted by `f`.
pub(crate) fn submit(
    c: &mut Controller,
    now: Time,
    f: impl FnOnce(&mut JobDescMsg),
) -> (Reply, Vec<Effect>) {
    submit_as(c, now, ProtocolVersion::V24_11, f)
}

/// The job id of an accepted submission; anything else fails the test.
pub(crate) fn job_id(r: Reply) -> u32 {
    match r {
        Reply::Submitted { job_id } => job_id,
        r => panic!("submit refused: {r:?}"),
    }
}

/// The name of the job's batch host, if it has one.
pub(crate) fn batch_host(c: &Controller, job_id: u32) -> Option<String> {
    c.jobs[&job_id]
        .batch_host
        .map(|i| c.nodes[i].name().to_string())
}

/// Root's report that the batch script of `job_id` ended with `rc` on `node`.
pub(crate) fn complete_cmd(job_id: u32, rc: u32, node: Option<String>) -> Command {
    Command::BatchComplete {
        uid: 0,
        job_id,
        job_rc: rc,
        slurm_rc: 0,
        node,
    }
}

/// Root's report that the epilog of `job_id` on `node` ran cleanly.
pub(crate) fn epilog_cmd(job_id: u32, node: Option<String>) -> Command {
    Command::EpilogComplete {
        uid: 0,
        job_id,
        node,
        rc: 0,
    }
}

/// Applies [`complete_cmd`].
pub(crate) fn complete(
    c: &mut Controller,
    now: Time,
    job_id: u32,
    rc: u32,
    node: Option<String>,
) -> (Reply, Vec<Effect>) {
    c.apply(now, complete_cmd(job_id, rc, node))
}

/// Applies [`epilog_cmd`] for `node`.
pub(crate) fn epilog(c: &mut Controller, now: Time, job_id: u32, node: &str) -> Vec<Effect> {
    c.apply(now, epilog_cmd(job_id, Some(node.into()))).1
}

/// Completion with `rc` and then the epilog of every node of the job (each
/// slurmd reports its own); all the effects.
pub(crate) fn finish(c: &mut Controller, now: Time, job_id: u32, rc: u32) -> Vec<Effect> {
    let node = batch_host(c, job_id);
    let (r, mut fx) = complete(c, now, job_id, rc, node);
    assert_eq!(r, Reply::Ok);
    fx.extend(epilogs(c, now, job_id));
    fx
}

/// The epilog of every node still completing job `job_id` reports (as each
/// slurmd does once the job is gone there); all the effects.
pub(crate) fn epilogs(c: &mut Controller, now: Time, job_id: u32) -> Vec<Effect> {
    let nodes: Vec<String> = c
        .jobs
        .get(&job_id)
        .map(|j| {
            j.completing
                .iter()
                .map(|&i| c.nodes[i].def.name.clone())
                .collect()
        })
        .unwrap_or_default();
    let mut fx = Vec::new();
    for n in nodes {
        fx.extend(c.apply(now, epilog_cmd(job_id, Some(n))).1);
    }
    fx
}

/// Root sets `node` to `state` (DOWN, DRAIN ...) with `reason`.
pub(crate) fn set_node(
    c: &mut Controller,
    now: Time,
    node: &str,
    state: u32,
    reason: &str,
) -> Reply {
    c.apply(
        now,
        Command::UpdateNode {
            uid: 0,
            msg: Box::new(UpdateNodeMsg {
                node_names: Some(node.into()),
                node_state: state,
                reason: Some(reason.into()),
                reason_uid: NO_VAL,
                ..Default::default()
            }),
        },
    )
    .0
}

/// Everything sent to nodes or clients.
pub(crate) fn sends(fx: &[Effect]) -> Vec<&Outbound> {
    fx.iter().map(|Effect::Send(o)| o.as_ref()).collect()
}

/// The messages sent, without their addresses.
pub(crate) fn msgs(fx: &[Effect]) -> Vec<&Message> {
    fx.iter().map(|Effect::Send(o)| &o.msg).collect()
}

/// The batch launches among the effects.
pub(crate) fn launches(fx: &[Effect]) -> Vec<BatchJobLaunchMsg> {
    msgs(fx)
        .into_iter()
        .filter_map(|m| match m {
            Message::RequestBatchJobLaunch(m) => Some(m.clone()),
            _ => None,
        })
        .collect()
}

/// `salloc`/`srun` asking for `desc` as `user` from a 24.11 client whose
/// answer goes to 10.0.0.9.
pub(crate) fn allocate_cmd(user: UserInfo, desc: JobDescMsg) -> Command {
    Command::Allocate {
        user,
        desc: Box::new(desc),
        version: ProtocolVersion::V24_11,
        resp_host: "10.0.0.9".into(),
    }
}

/// Applies [`allocate_cmd`].
pub(crate) fn allocate(
    c: &mut Controller,
    now: Time,
    user: UserInfo,
    desc: JobDescMsg,
) -> (Reply, Vec<Effect>) {
    c.apply(now, allocate_cmd(user, desc))
}

/// An srun step request for `tasks` tasks on `nodes` nodes of `job_id`,
/// answered at login:5000.
pub(crate) fn step_req(job_id: u32, nodes: u32, tasks: u32) -> JobStepCreateRequestMsg {
    JobStepCreateRequestMsg {
        step_id: StepId::job(job_id),
        // SLURM_AUTH_NOBODY: the sender.
        user_id: 99,
        min_nodes: nodes,
        max_nodes: nodes,
        num_tasks: tasks,
        cpu_count: tasks,
        relative: NO_VAL16,
        task_dist: super::step::dist::UNKNOWN,
        host: Some("login".into()),
        port: 5000,
        ..Default::default()
    }
}

/// `uid` runs `scancel -s signal` on `target` (a 24.11 client).
pub(crate) fn signal_cmd(uid: u32, target: SignalTarget, signal: u16, flags: u16) -> Command {
    Command::Signal {
        uid,
        target,
        signal,
        flags,
        version: ProtocolVersion::V24_11,
    }
}

/// `uid` runs `scancel` (SIGKILL) on `job_id`.
pub(crate) fn kill_cmd(uid: u32, job_id: u32) -> Command {
    signal_cmd(uid, SignalTarget::Job(job_id), super::SIGKILL, 0)
}

/// `uid` runs `scancel A_[tasks]` (SIGKILL).
pub(crate) fn kill_tasks_cmd(uid: u32, array_job_id: u32, tasks: &[u32]) -> Command {
    let target = SignalTarget::Tasks {
        array_job_id,
        tasks: tasks.to_vec(),
    };
    signal_cmd(uid, target, super::SIGKILL, 0)
}

/// What the agent reports for a ping of `node`: answered with a load
/// (Some), or not at all (None).
pub(crate) fn ping_done(node: &str, load: Option<(u32, u64)>) -> Command {
    Command::RpcDone {
        node: node.into(),
        purpose: Purpose::Ping,
        outcome: match load {
            Some((cpu_load, free_mem)) => RpcOutcome::Load { cpu_load, free_mem },
            None => RpcOutcome::Failed,
        },
    }
}

/// Applies [`kill_cmd`].
pub(crate) fn kill(c: &mut Controller, now: Time, uid: u32, job_id: u32) -> (Reply, Vec<Effect>) {
    c.apply(now, kill_cmd(uid, job_id))
}

/// `scontrol update job` from a 24.11 client as `uid`: an unset
/// description with `f` applied.
pub(crate) fn update_job_cmd(uid: u32, job_id: u32, f: impl FnOnce(&mut JobDescMsg)) -> Command {
    Command::UpdateJob {
        uid,
        job_id,
        desc: Box::new(unset(f)),
        version: ProtocolVersion::V24_11,
    }
}

/// Applies [`update_job_cmd`].
pub(crate) fn update_job(
    c: &mut Controller,
    now: Time,
    uid: u32,
    job_id: u32,
    f: impl FnOnce(&mut JobDescMsg),
) -> (Reply, Vec<Effect>) {
    c.apply(now, update_job_cmd(uid, job_id, f))
}

/// A controller with two 4-CPU nodes in one default partition, SlurmUser root.
pub const TWO_NODES: &str = "\
ClusterName=t
SlurmctldHost=ctl
SlurmUser=root
NodeName=n[1-2] CPUs=4 RealMemory=1000
PartitionName=debug Nodes=n[1-2] Default=YES State=UP
";
