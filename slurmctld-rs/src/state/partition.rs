//! Partition state at run time: `scontrol update partitionname=...`, and
//! what a partition's state means for submission and scheduling.
//!
//! Updates change the controller's copy of the configuration. Like stock
//! (without `ReconfigFlags=KeepPartState`), they last until the next
//! reconfigure or restart, which take slurm.conf's values again.

use super::command::{Effect, Reply, Time};
use super::config::{ClusterConf, PartDef};
use super::controller::Controller;
use super::error::StateError;
use super::job;
use super::job::{Job, UserInfo};
use slurm_conf::{MemLimit, OverSubscribe, PartitionState, TimeLimit};
use slurm_wire::msg::update_part::{state, UpdatePartMsg};
use slurm_wire::pack::{INFINITE, NO_VAL, NO_VAL16};
use slurm_wire::ProtocolVersion;
use std::sync::Arc;

/// `WAIT_PART_INACTIVE` (job_state_reason): "PartitionInactive".
pub const WAIT_PART_INACTIVE: u32 = 7;

/// The partition's own access rules at submit, before its state and
/// limits (stock's order): ReqResv without a reservation and RootOnly for
/// a user other than root or SlurmUser get ESLURM_ACCESS_DENIED;
/// DisableRootJobs (the partition's, else slurm.conf's) refuses root's
/// job with ESLURM_USER_ID_MISSING.
pub fn access_refused(
    conf: &ClusterConf,
    p: &PartDef,
    uid: u32,
    reservation: Option<&str>,
) -> Option<StateError> {
    if p.conf.req_resv && reservation.is_none_or(str::is_empty) {
        return Some(StateError::AccessDenied);
    }
    if p.conf.root_only && !conf.is_admin(uid) {
        return Some(StateError::AccessDenied);
    }
    let no_root = p.conf.disable_root_jobs.unwrap_or_else(|| {
        conf.raw
            .raw("DisableRootJobs")
            .and_then(slurm_conf::units::parse_bool)
            .unwrap_or(false)
    });
    if uid == 0 && no_root {
        return Some(StateError::InvalidUserId);
    }
    None
}

/// AllocNodes: a job submitted from a host outside the partition's list
/// (or from no known host) is refused with ESLURM_ACCESS_DENIED, as stock's
/// validate_alloc_node. `alloc_node` is the submitting host as the handler
/// determined it from the connection, never the client's word.
pub fn alloc_node_refused(p: &PartDef, alloc_node: Option<&str>) -> Option<StateError> {
    let list = p.conf.alloc_nodes.as_deref()?;
    let allowed = alloc_node
        .filter(|h| !h.is_empty())
        .is_some_and(|h| slurm_conf::hostlist::Hostlist::parse(list).is_ok_and(|l| l.contains(h)));
    (!allowed).then_some(StateError::AccessDenied)
}

/// Why a new job of `u` (charged to `account`, its `-A`) may not be
/// submitted to `p`: DRAIN and INACTIVE take no new jobs (DOWN does, and
/// they wait); a user outside AllowGroups is refused by 22.05, and by
/// later releases only with EnforcePartLimits (otherwise the job waits,
/// see [`held_by`]); with EnforcePartLimits, 22.05 also applies the
/// account lists (see [`accounts_checked`]).
pub fn refuses_submit(
    conf: &ClusterConf,
    p: &PartDef,
    u: &UserInfo,
    account: Option<&str>,
    version: ProtocolVersion,
) -> Option<StateError> {
    if matches!(
        p.conf.state,
        PartitionState::Drain | PartitionState::Inactive
    ) {
        return Some(StateError::PartitionUnavailable);
    }
    let enforce = conf
        .raw
        .raw("EnforcePartLimits")
        .is_some_and(|s| !s.eq_ignore_ascii_case("NO"));
    if (version < ProtocolVersion::V23_02 || enforce) && !group_allowed(conf, p, u) {
        return Some(StateError::GroupNotPermitted);
    }
    if enforce && accounts_checked(version) {
        if p.conf.allow_accounts.is_some() {
            // 22.05 matches the association's account, which is unknown.
            return Some(StateError::InvalidAccount);
        }
        // Its limits check then matches the job's own `-A` against the
        // deny list, and EnforcePartLimits turns that into a refusal.
        if let (Some(deny), Some(acct)) = (&p.conf.deny_accounts, account) {
            if deny.split(',').any(|d| d.eq_ignore_ascii_case(acct)) {
                return Some(StateError::PartConfigUnavailable);
            }
        }
    }
    None
}

/// Whether AllowAccounts/DenyAccounts apply to a job from a `version`
/// client without accounting storage. 22.05 compares the job's account
/// by name, and without associations a job has none, so AllowAccounts
/// turns every job away (DenyAccounts none); 23.02 and later check the
/// lists only with AccountingStorageEnforce=associations. (AllowQos and
/// DenyQos need the QOS table of accounting storage in every release:
/// without it stock ignores them.)
pub fn accounts_checked(version: ProtocolVersion) -> bool {
    version < ProtocolVersion::V23_02
}

/// `WAIT_ACCOUNT`: what stock gives a job whose user is not in the
/// partition's AllowGroups (it is accepted, and waits).
pub const WAIT_ACCOUNT: u32 = 38;

/// Whether `p`'s access rules (ReqResv, RootOnly, DisableRootJobs,
/// AllocNodes) exclude job `j`, as stock's job_limits_check sees it.
pub fn access_held(conf: &ClusterConf, p: &PartDef, j: &Job) -> bool {
    access_refused(conf, p, j.user.uid, j.req.reservation())
        .or_else(|| alloc_node_refused(p, j.req.alloc_node()))
        .is_some()
}

/// The pending reason of a job `j` that cannot start because of `p`: the
/// partition's access rules (a job moved in by `scontrol update`, or
/// submitted before they changed: stock accepts the update and holds the
/// job with WAIT_PART_CONFIG), its state (DRAIN still starts the jobs it
/// has), or AllowGroups.
pub fn held_by(conf: &ClusterConf, p: &PartDef, j: &Job) -> Option<u32> {
    if access_held(conf, p, j) {
        return Some(job::reason::WAIT_PART_CONFIG);
    }
    match p.conf.state {
        PartitionState::Up | PartitionState::Drain => {}
        PartitionState::Down => return Some(job::reason::WAIT_PART_DOWN),
        PartitionState::Inactive => return Some(WAIT_PART_INACTIVE),
    }
    if accounts_checked(j.submit_version) && p.conf.allow_accounts.is_some() {
        return Some(WAIT_ACCOUNT);
    }
    (!group_allowed(conf, p, &j.user)).then_some(WAIT_ACCOUNT)
}

/// The `state_desc` of a job `j` of `p` pending with WAIT_ACCOUNT: its
/// account (22.05 clients, see [`accounts_checked`]) or its group.
pub fn wait_account_desc(p: &PartDef, j: &Job) -> String {
    match &p.conf.allow_accounts {
        Some(accts) if accounts_checked(j.submit_version) => format!(
            "Job's account not known, so it can't use this partition ({} allows {accts})",
            p.conf.name
        ),
        _ => group_denied_desc(p, j.user.uid),
    }
}

/// AllowGroups: administrators run anywhere; others need their primary
/// or a supplementary group in the list.
pub fn group_allowed(conf: &ClusterConf, p: &PartDef, u: &UserInfo) -> bool {
    match &p.allow_gids {
        None => true,
        Some(gids) => {
            conf.is_admin(u.uid) || gids.contains(&u.gid) || u.gids.iter().any(|g| gids.contains(g))
        }
    }
}

/// The `state_desc` stock gives a job held by AllowGroups.
pub fn group_denied_desc(p: &PartDef, uid: u32) -> String {
    format!(
        "uid {uid} not in group permitted to use this partition ({}). groups allowed: {}",
        p.conf.name,
        p.conf.allow_groups.as_deref().unwrap_or("")
    )
}

/// The memory a job that asked for none gets: the partition's
/// DefMemPerCPU/DefMemPerNode, else the cluster's, as (MB, per CPU).
pub fn default_mem(p: &PartDef, cluster: Option<MemLimit>) -> Option<(u64, bool)> {
    match p.conf.def_mem.or(cluster)? {
        MemLimit::PerCpu(v) => Some((v, true)),
        MemLimit::PerNode(v) => Some((v, false)),
    }
}

/// `max_share` as scontrol sends it (0 EXCLUSIVE, 1 NO, N YES:N, FORCE
/// in the top bit).
fn over_subscribe_of(max_share: u16) -> OverSubscribe {
    let n = max_share & 0x7fff;
    match (n, max_share & 0x8000 != 0) {
        (0, _) => OverSubscribe::Exclusive,
        (n, true) => OverSubscribe::Force(n),
        (1, false) => OverSubscribe::No,
        (n, false) => OverSubscribe::Yes(n),
    }
}

fn state_of(up: u16) -> Option<PartitionState> {
    match up {
        state::UP => Some(PartitionState::Up),
        state::DOWN => Some(PartitionState::Down),
        state::DRAIN => Some(PartitionState::Drain),
        state::INACTIVE => Some(PartitionState::Inactive),
        _ => None,
    }
}

fn time_limit(minutes: u32) -> TimeLimit {
    if minutes == INFINITE {
        TimeLimit::Unlimited
    } else {
        TimeLimit::Finite(minutes)
    }
}

impl Controller {
    /// The partition an administrator's `rpc` names, or the reply that
    /// refuses it: not an administrator (ESLURM_USER_ID_MISSING, logged
    /// as stock logs it), or no such partition.
    fn admin_partition(&self, uid: u32, name: Option<&str>, rpc: &str) -> Result<usize, Reply> {
        if !self.conf.is_admin(uid) {
            tracing::error!(uid, "Security violation, {rpc} RPC");
            return Err(Reply::Err(StateError::InvalidUserId));
        }
        name.and_then(|n| self.conf.partition_index(n))
            .ok_or(Reply::Err(StateError::InvalidPartitionName))
    }

    /// REQUEST_UPDATE_PARTITION (administrators only).
    pub(super) fn update_partition(
        &mut self,
        now: Time,
        uid: u32,
        m: &UpdatePartMsg,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        let i = match self.admin_partition(uid, m.name.as_deref(), "UPDATE_PARTITION") {
            Ok(i) => i,
            Err(r) => return r,
        };
        let new_state = if m.state_up == NO_VAL16 {
            None
        } else {
            match state_of(m.state_up) {
                Some(s) => Some(s),
                None => return Reply::Err(StateError::Unspecified),
            }
        };
        let conf = Arc::make_mut(&mut self.conf);
        let Some(p) = conf.partitions.get_mut(i) else {
            return Reply::Err(StateError::InvalidPartitionName);
        };
        let c = &mut p.conf;
        if let Some(s) = new_state {
            c.state = s;
        }
        if m.max_time != NO_VAL {
            c.max_time = time_limit(m.max_time);
        }
        if m.default_time != NO_VAL {
            c.default_time = Some(time_limit(m.default_time));
        }
        if m.max_nodes != NO_VAL {
            c.max_nodes = m.max_nodes;
        }
        if m.min_nodes != NO_VAL {
            c.min_nodes = m.min_nodes;
        }
        if m.priority_tier != NO_VAL16 {
            c.priority_tier = m.priority_tier;
        }
        super::mem_limit::update_partition(c, m);
        if m.max_share != NO_VAL16 {
            c.over_subscribe = over_subscribe_of(m.max_share);
        }
        // AllowAccounts=ALL (or empty) lifts the list; DenyAccounts= too.
        if let Some(a) = &m.allow_accounts {
            c.allow_accounts = (!a.is_empty() && !a.eq_ignore_ascii_case("ALL")).then(|| a.clone());
        }
        if let Some(d) = &m.deny_accounts {
            c.deny_accounts = (!d.is_empty()).then(|| d.clone());
        }
        tracing::info!(partition = %c.name, state = ?c.state, "partition updated");
        self.last_part_update = now;
        self.schedule(now, fx);
        Reply::Ok
    }
}

impl Controller {
    /// REQUEST_DELETE_PARTITION (administrators only). Like stock, a
    /// partition that holds a job not yet finished is refused
    /// (ESLURM_PARTITION_IN_USE); deleting the default one leaves the
    /// cluster without a default. Like an update, the deletion lasts
    /// until the next reconfigure, which reads slurm.conf again.
    pub(super) fn delete_partition(
        &mut self,
        now: Time,
        uid: u32,
        name: &str,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        let i = match self.admin_partition(uid, Some(name), "DELETE_PARTITION") {
            Ok(i) => i,
            Err(r) => return r,
        };
        if self
            .jobs
            .values()
            .any(|j| j.part == i && !j.state.is_finished())
        {
            return Reply::Err(StateError::PartitionInUse);
        }
        let conf = Arc::make_mut(&mut self.conf);
        conf.partitions.remove(i);
        conf.default_partition = match conf.default_partition {
            Some(d) if d == i => {
                tracing::error!(partition = name, "deleting the default partition");
                None
            }
            Some(d) if d > i => Some(d - 1),
            d => d,
        };
        // Finished jobs of the partition stay listable until purged: they
        // go to the default partition (or the first), as a reconfigure
        // that drops a partition does; later partitions move down one.
        let fallback = conf.default_partition.unwrap_or(0);
        self.jobs.for_each_mut(|j| {
            if j.part == i {
                j.part = fallback;
            } else if j.part > i {
                j.part -= 1;
            }
        });
        // Per-partition scheduler memory is indexed like the table.
        self.sched.blocked_at.clear();
        tracing::info!(partition = name, "partition deleted");
        self.last_part_update = now;
        self.last_job_update = now;
        self.schedule(now, fx);
        Reply::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched;
    use crate::state::config::ClusterConf;
    use crate::state::job::{JobState, UserInfo};
    use crate::state::testkit::{
        self, apply_all, controller, job_id, reg_bare, submit_desc, true_job, user,
    };
    use crate::state::Command;
    use slurm_wire::msg::job_desc::JobDescMsg;
    use slurm_wire::ProtocolVersion;

    fn cluster() -> Controller {
        let text = "ClusterName=t\nSlurmctldHost=ctl\nSlurmUser=root\n\
            NodeName=n1 CPUs=4 RealMemory=1000\n\
            PartitionName=debug Nodes=n1 Default=YES State=UP\n";
        let mut c = controller(text);
        c.apply(1000, reg_bare("n1", 4, 1000, ProtocolVersion::V24_11));
        c
    }

    fn update_part(c: &mut Controller, now: Time, uid: u32, msg: UpdatePartMsg) -> Reply {
        let cmd = Command::UpdatePartition {
            uid,
            msg: Box::new(msg),
        };
        c.apply(now, cmd).0
    }

    fn set(c: &mut Controller, uid: u32, up: u16) -> Reply {
        let msg = UpdatePartMsg {
            name: Some("debug".into()),
            state_up: up,
            max_time: NO_VAL,
            default_time: NO_VAL,
            max_nodes: NO_VAL,
            min_nodes: NO_VAL,
            priority_tier: NO_VAL16,
            max_share: NO_VAL16,
            ..Default::default()
        };
        // The same second as `submit`: a pass never sees a job from its future.
        update_part(c, 1002, uid, msg)
    }

    fn submit(c: &mut Controller) -> Reply {
        let d = true_job();
        submit_desc(c, 1002, user(1000, 1000), ProtocolVersion::V24_11, d).0
    }

    #[test]
    fn only_admins_update_and_unknown_names_are_refused() {
        let mut c = cluster();
        assert_eq!(
            set(&mut c, 1000, state::DOWN),
            Reply::Err(StateError::InvalidUserId)
        );
        assert_eq!(c.conf.partitions[0].conf.state, PartitionState::Up);
        let msg = UpdatePartMsg {
            name: Some("nope".into()),
            state_up: state::DOWN,
            ..Default::default()
        };
        let r = update_part(&mut c, 1001, 0, msg);
        assert_eq!(r, Reply::Err(StateError::InvalidPartitionName));
    }

    #[test]
    fn down_queues_drain_and_inactive_refuse_up_runs() {
        let mut c = cluster();
        assert_eq!(set(&mut c, 0, state::DOWN), Reply::Ok);
        let Reply::Submitted { job_id } = submit(&mut c) else {
            panic!("a DOWN partition still takes jobs")
        };
        assert_eq!(c.jobs[&job_id].state, JobState::Pending);
        assert_eq!(c.jobs[&job_id].state_reason, job::reason::WAIT_PART_DOWN);

        assert_eq!(set(&mut c, 0, state::DRAIN), Reply::Ok);
        assert_eq!(submit(&mut c), Reply::Err(StateError::PartitionUnavailable));
        // DRAIN still starts what it has.
        assert_eq!(c.jobs[&job_id].state, JobState::Running);

        assert_eq!(set(&mut c, 0, state::INACTIVE), Reply::Ok);
        assert_eq!(submit(&mut c), Reply::Err(StateError::PartitionUnavailable));

        assert_eq!(set(&mut c, 0, state::UP), Reply::Ok);
        assert!(matches!(submit(&mut c), Reply::Submitted { .. }));
    }

    #[test]
    fn jobs_without_memory_get_the_partition_default() {
        let text = "ClusterName=t\nSlurmctldHost=ctl\nSlurmUser=root\nDefMemPerNode=500\n\
            NodeName=n1 CPUs=4 RealMemory=1000\n\
            PartitionName=a Nodes=n1 Default=YES DefMemPerCPU=100 MaxMemPerCPU=1000\n\
            PartitionName=b Nodes=n1\n";
        let conf = testkit::slurm_conf(text);
        let cluster = conf.def_mem;
        let c = ClusterConf::new(conf, 0).unwrap();
        assert_eq!(default_mem(&c.partitions[0], cluster), Some((100, true)));
        assert_eq!(default_mem(&c.partitions[1], cluster), Some((500, false)));
        assert_eq!(default_mem(&c.partitions[1], None), None);
        let mut ctl = Controller::new(c, 1000);
        let Reply::Submitted { job_id } = submit(&mut ctl) else {
            panic!()
        };
        assert_eq!(
            (ctl.jobs[&job_id].mem, ctl.jobs[&job_id].mem_per_cpu),
            (100, true)
        );
    }

    #[test]
    fn root_only_req_resv_and_no_root_partitions_refuse_at_submit() {
        let text = "ClusterName=t\nSlurmctldHost=ctl\nSlurmUser=root\nDisableRootJobs=YES\n\
            NodeName=n1 CPUs=4 RealMemory=1000\n\
            PartitionName=debug Nodes=n1 Default=YES State=UP\n\
            PartitionName=rootp Nodes=n1 RootOnly=YES DisableRootJobs=NO State=UP\n\
            PartitionName=resv Nodes=n1 ReqResv=YES State=UP\n";
        let mut c = controller(text);
        c.apply(1000, reg_bare("n1", 4, 1000, ProtocolVersion::V24_11));
        let to = |p: &'static str| move |d: &mut JobDescMsg| d.partition = Some(p.into());
        let r = testkit::submit(&mut c, 1001, to("rootp")).0;
        assert_eq!(
            r,
            Reply::Err(StateError::AccessDenied),
            "alice in a RootOnly partition"
        );
        let r = testkit::submit(&mut c, 1001, to("resv")).0;
        assert_eq!(
            r,
            Reply::Err(StateError::AccessDenied),
            "no reservation named"
        );
        let root = testkit::user(0, 0);
        let v = ProtocolVersion::V24_11;
        let r = testkit::submit_desc(&mut c, 1001, root.clone(), v, testkit::wrap(to("debug"))).0;
        assert_eq!(
            r,
            Reply::Err(StateError::InvalidUserId),
            "DisableRootJobs=YES"
        );
        let r = testkit::submit_desc(&mut c, 1001, root, v, testkit::wrap(to("rootp"))).0;
        assert!(
            matches!(r, Reply::Submitted { .. }),
            "root where it may: {r:?}"
        );
    }

    #[test]
    fn alloc_nodes_refuse_jobs_from_other_hosts() {
        let text = "ClusterName=t\nSlurmctldHost=ctl\nSlurmUser=root\n\
            NodeName=n1 CPUs=4 RealMemory=1000\n\
            PartitionName=login Nodes=n1 Default=YES AllocNodes=login[1-2] State=UP\n\
            PartitionName=any Nodes=n1 AllocNodes=ALL State=UP\n";
        let mut c = controller(text);
        c.apply(1000, reg_bare("n1", 4, 1000, ProtocolVersion::V24_11));
        let from = |p: &'static str, host: Option<&'static str>| {
            move |d: &mut JobDescMsg| {
                d.partition = Some(p.into());
                d.alloc_node = host.map(str::to_string);
            }
        };
        for host in [Some("n1"), Some("login3"), Some(""), None] {
            let r = testkit::submit(&mut c, 1001, from("login", host)).0;
            assert_eq!(r, Reply::Err(StateError::AccessDenied), "from {host:?}");
        }
        let r = testkit::submit(&mut c, 1001, from("login", Some("login2"))).0;
        assert!(matches!(r, Reply::Submitted { .. }), "{r:?}");
        // AllocNodes=ALL is no list.
        let r = testkit::submit(&mut c, 1001, from("any", Some("elsewhere"))).0;
        assert!(matches!(r, Reply::Submitted { .. }), "{r:?}");
        // An allocation (salloc, srun) is held to it too.
        let d = testkit::wrap(from("login", Some("elsewhere")));
        let (r, _) = testkit::allocate(&mut c, 1001, testkit::alice(), d);
        assert_eq!(r, Reply::Err(StateError::AccessDenied));
    }

    #[test]
    fn a_job_moved_into_a_partition_it_may_not_use_waits_for_part_config() {
        let text = "ClusterName=t\nSlurmctldHost=ctl\nSlurmUser=root\n\
            NodeName=n1 CPUs=4 RealMemory=1000\n\
            PartitionName=debug Nodes=n1 Default=YES State=UP\n\
            PartitionName=rootp Nodes=n1 RootOnly=YES State=UP\n\
            PartitionName=resv Nodes=n1 ReqResv=YES State=UP\n\
            PartitionName=login Nodes=n1 AllocNodes=login1 State=UP\n";
        for part in ["rootp", "resv", "login"] {
            let mut c = controller(text);
            // No node yet: the job waits in debug.
            let from = |d: &mut JobDescMsg| d.alloc_node = Some("elsewhere".into());
            let id = testkit::job_id(testkit::submit(&mut c, 1001, from).0);
            let (r, _) = testkit::update_job(&mut c, 1002, testkit::ALICE, id, |d| {
                d.partition = Some(part.into())
            });
            // Stock keeps the change and answers that the job cannot run
            // there (its update_job ends with job_limits_check).
            assert_eq!(r, Reply::Err(StateError::PartConfigUnavailable), "{part}");
            assert_eq!(c.jobs[&id].part, c.conf.partition_index(part).unwrap());
            assert_eq!(c.jobs[&id].state_reason, job::reason::WAIT_PART_CONFIG);
            c.apply(1003, reg_bare("n1", 4, 1000, ProtocolVersion::V24_11));
            c.apply(1004, Command::Tick);
            let j = &c.jobs[&id];
            assert_eq!(j.state, JobState::Pending, "{part}");
            assert_eq!(j.state_reason, job::reason::WAIT_PART_CONFIG, "{part}");
        }
    }

    #[test]
    fn allow_groups_hold_outsiders_with_the_stock_reason() {
        let text = "ClusterName=t\nSlurmctldHost=ctl\nSlurmUser=root\n\
            NodeName=n1 CPUs=4 RealMemory=1000\n\
            PartitionName=p Nodes=n1 Default=YES AllowGroups=wheel,nosuch State=UP\n";
        let mut cc = testkit::cluster_conf(text);
        assert_eq!(cc.partitions[0].allow_gids, Some(vec![]));
        cc.resolve_allow_groups(|n| (n == "wheel").then_some(10));
        assert_eq!(cc.partitions[0].allow_gids, Some(vec![10]));
        let user = |uid, gid, gids: Vec<u32>| UserInfo {
            uid,
            gid,
            gids,
            ..Default::default()
        };
        let p = &cc.partitions[0];
        assert!(
            group_allowed(&cc, p, &user(0, 0, vec![])),
            "root runs anywhere"
        );
        assert!(
            group_allowed(&cc, p, &user(1000, 10, vec![])),
            "primary group"
        );
        assert!(
            group_allowed(&cc, p, &user(1000, 100, vec![100, 10])),
            "supplementary"
        );
        assert!(!group_allowed(&cc, p, &user(1000, 100, vec![100])));

        let mut c = Controller::new(cc, 1000);
        c.apply(1000, reg_bare("n1", 4, 1000, ProtocolVersion::V24_11));
        // 22.05 refuses at submit; later releases accept, and the job waits.
        let u = testkit::user(1000, 1000);
        let p = &c.conf.partitions[0];
        assert_eq!(
            refuses_submit(&c.conf, p, &u, None, ProtocolVersion::V22_05),
            Some(StateError::GroupNotPermitted)
        );
        assert_eq!(
            refuses_submit(&c.conf, p, &u, None, ProtocolVersion::V23_02),
            None
        );
        // submit() runs as uid 1000, gid 1000 from 24.11: accepted, and waits.
        let Reply::Submitted { job_id } = submit(&mut c) else {
            panic!()
        };
        assert_eq!(c.jobs[&job_id].state, JobState::Pending);
        assert_eq!(c.jobs[&job_id].state_reason, WAIT_ACCOUNT);
        assert_eq!(
            group_denied_desc(&c.conf.partitions[0], 1000),
            "uid 1000 not in group permitted to use this partition (p). groups allowed: wheel,nosuch"
        );
    }

    #[test]
    fn limits_change_and_unset_fields_stay() {
        let mut c = cluster();
        let msg = UpdatePartMsg {
            name: Some("debug".into()),
            state_up: NO_VAL16,
            max_time: 30,
            default_time: NO_VAL,
            max_nodes: NO_VAL,
            min_nodes: NO_VAL,
            priority_tier: 5,
            max_share: NO_VAL16,
            ..Default::default()
        };
        let r = update_part(&mut c, 1001, 0, msg);
        assert_eq!(r, Reply::Ok);
        let p = &c.conf.partitions[0];
        assert_eq!(p.max_time(), 30);
        assert_eq!(p.default_time(), NO_VAL);
        assert_eq!(p.conf.priority_tier, 5);
        assert_eq!(p.conf.state, PartitionState::Up);
    }

    /// A controller of `nodes` (4 CPUs each) and `parts` (slurm.conf
    /// PartitionName lines), every node registered.
    fn sharing_cluster(nodes: &[&str], parts: &str) -> Controller {
        let mut text = String::from("ClusterName=t\nSlurmctldHost=ctl\nSlurmUser=root\n");
        for n in nodes {
            text += &format!("NodeName={n} CPUs=4 RealMemory=1000\n");
        }
        text += parts;
        let mut c = controller(&text);
        let regs = nodes
            .iter()
            .map(|n| reg_bare(n, 4, 1000, ProtocolVersion::V24_11));
        apply_all(&mut c, 1000, regs);
        c
    }

    /// Submits `cpus` one-CPU tasks as `uid` to `part` with `shared`
    /// (`--oversubscribe` 1, `--exclusive=user` 2 ...) from a `version`
    /// client; returns the job id.
    fn submit_shared(
        c: &mut Controller,
        uid: u32,
        part: &str,
        cpus: u32,
        shared: u16,
        version: ProtocolVersion,
    ) -> u32 {
        let d = JobDescMsg {
            min_cpus: cpus,
            num_tasks: cpus,
            shared,
            partition: Some(part.into()),
            ..true_job()
        };
        job_id(submit_desc(c, 1002, user(uid, uid), version, d).0)
    }

    /// Cancelled, and its nodes' epilogs done.
    fn cancel(c: &mut Controller, job_id: u32) {
        testkit::kill(c, 1003, 0, job_id);
        testkit::epilogs(c, 1003, job_id);
    }

    fn running(c: &Controller, ids: &[u32]) -> Vec<bool> {
        ids.iter()
            .map(|i| c.jobs[i].state == JobState::Running)
            .collect()
    }

    const V24: ProtocolVersion = ProtocolVersion::V24_11;

    #[test]
    fn force_two_puts_two_jobs_on_every_core_and_no_third() {
        let mut c = sharing_cluster(&["n1"], "PartitionName=f Nodes=n1 OverSubscribe=FORCE:2\n");
        // FORCE shares whatever the job asked (NO_VAL16: no --oversubscribe).
        let ids: Vec<u32> = (0..3)
            .map(|_| submit_shared(&mut c, 1000, "f", 4, NO_VAL16, V24))
            .collect();
        assert_eq!(running(&c, &ids), [true, true, false]);
        assert_eq!(c.jobs[&ids[2]].state_reason, job::reason::WAIT_RESOURCES);
        assert_eq!(c.nodes[0].alloc_cpus, 4, "cores are counted once");
        // 26.05's OverSubscribe=YES Exclusive=NO for a FORCE job.
        let j = &c.jobs[&ids[0]];
        assert_eq!(
            (
                crate::job_resrcs::oversubscribe_value(&c, j),
                crate::job_resrcs::exclusive_value(&c, j)
            ),
            (1, 0)
        );
        assert_eq!(c.nodes[0].shared_cpus, 8);
        cancel(&mut c, ids[0]);
        assert!(c.jobs[&ids[2]].state == JobState::Running);
        assert_eq!(c.nodes[0].shared_cpus, 8);
    }

    #[test]
    fn sharing_jobs_take_idle_cores_first() {
        let mut c = sharing_cluster(
            &["n1", "n2"],
            "PartitionName=f Nodes=n[1-2] OverSubscribe=FORCE:2\n",
        );
        let ids: Vec<u32> = (0..5)
            .map(|_| submit_shared(&mut c, 1000, "f", 2, NO_VAL16, V24))
            .collect();
        let nodes: Vec<usize> = ids.iter().map(|i| c.jobs[i].alloc[0].node).collect();
        // n1's idle cores, then n2's, and only then shared cores.
        assert_eq!(nodes, [0, 0, 1, 1, 0]);
        assert_eq!((c.nodes[0].alloc_cpus, c.nodes[0].shared_cpus), (4, 6));
    }

    #[test]
    fn yes_shares_only_jobs_that_ask_and_not_beside_others() {
        let mut c = sharing_cluster(&["n1"], "PartitionName=y Nodes=n1 OverSubscribe=YES:2\n");
        let plain = submit_shared(&mut c, 1000, "y", 2, NO_VAL16, V24);
        let asks = submit_shared(&mut c, 1000, "y", 4, sched::JOB_SHARED_OK, V24);
        // A job that does not share holds the node against sharing ones.
        assert_eq!(running(&c, &[plain, asks]), [true, false]);
        // 26.05's OverSubscribe: OK (the partition would let it), YES.
        let shown = |c: &Controller, id| crate::job_resrcs::oversubscribe_value(c, &c.jobs[&id]);
        assert_eq!((shown(&c, plain), shown(&c, asks)), (2, 1));
        let plain2 = submit_shared(&mut c, 1001, "y", 2, NO_VAL16, V24);
        assert_eq!(
            running(&c, &[plain2]),
            [false],
            "queue order: behind the sharing job"
        );
        cancel(&mut c, plain);
        // With the node free the sharing job starts; the plain one wants
        // idle cores, and there are none.
        assert_eq!(running(&c, &[asks, plain2]), [true, false]);
        let asks2 = submit_shared(&mut c, 1000, "y", 4, sched::JOB_SHARED_OK, V24);
        let asks3 = submit_shared(&mut c, 1000, "y", 4, sched::JOB_SHARED_OK, V24);
        assert_eq!(
            running(&c, &[asks2, asks3]),
            [false, false],
            "plain2 is ahead"
        );
        cancel(&mut c, plain2);
        assert_eq!(
            running(&c, &[asks2, asks3]),
            [true, false],
            "two a core at most"
        );
    }

    #[test]
    fn no_oversubscribe_keeps_one_job_a_core() {
        let mut c = sharing_cluster(&["n1"], "PartitionName=d Nodes=n1\n");
        let a = submit_shared(&mut c, 1000, "d", 4, sched::JOB_SHARED_OK, V24);
        let b = submit_shared(&mut c, 1000, "d", 1, sched::JOB_SHARED_OK, V24);
        assert_eq!(running(&c, &[a, b]), [true, false]);
        assert_eq!(c.nodes[0].shared_cpus, 0);
    }

    #[test]
    fn exclusive_user_keeps_other_users_off_the_node() {
        let mut c = sharing_cluster(&["n1", "n2"], "PartitionName=d Nodes=n[1-2] Default=YES\n");
        let a = submit_shared(&mut c, 1000, "d", 1, sched::JOB_SHARED_USER, V24);
        let b = submit_shared(&mut c, 1001, "d", 1, NO_VAL16, V24);
        let a2 = submit_shared(&mut c, 1000, "d", 1, NO_VAL16, V24);
        let node = |c: &Controller, id: u32| c.jobs[&id].alloc[0].node;
        assert_eq!((node(&c, a), node(&c, b), node(&c, a2)), (0, 1, 0));
        assert_eq!(crate::job_resrcs::share_value(&c, &c.jobs[&a]), 2);
        cancel(&mut c, a);
        cancel(&mut c, a2);
        let b2 = submit_shared(&mut c, 1001, "d", 1, NO_VAL16, V24);
        assert_eq!(node(&c, b2), 0, "the owner left with its jobs");
    }

    #[test]
    fn exclusive_mcs_without_mcs_is_shown_and_shares() {
        let mut c = sharing_cluster(&["n1", "n2"], "PartitionName=d Nodes=n[1-2] Default=YES\n");
        for v in [ProtocolVersion::V22_05, V24] {
            let m = submit_shared(&mut c, 1000, "d", 1, sched::JOB_SHARED_MCS, v);
            let j = &c.jobs[&m];
            assert_eq!((j.alloc[0].node, j.alloc[0].cpus), (0, 1), "{v:?}");
            assert_eq!(crate::job_resrcs::share_value(&c, j), 3);
            assert_eq!(crate::job_resrcs::exclusive_value(&c, j), 3);
        }
    }

    #[test]
    fn sharing_survives_a_usage_rebuild() {
        let mut c = sharing_cluster(&["n1"], "PartitionName=f Nodes=n1 OverSubscribe=FORCE:2\n");
        let a = submit_shared(&mut c, 1000, "f", 4, NO_VAL16, V24);
        let b = submit_shared(&mut c, 1000, "f", 2, NO_VAL16, V24);
        assert_eq!(running(&c, &[a, b]), [true, true]);
        c.rebuild_node_usage();
        let n = &c.nodes[0];
        assert_eq!((n.alloc_cpus, n.solo_cpus, n.shared_cpus), (4, 0, 6));
        assert_eq!(n.sharing_jobs.len(), 2);
        cancel(&mut c, a);
        cancel(&mut c, b);
        let n = &c.nodes[0];
        assert_eq!((n.alloc_cpus, n.shared_cpus), (0, 0));
    }

    /// Submits one CPU as uid 1000 to `part` from a `version` client.
    fn submit_from(c: &mut Controller, part: &str, version: ProtocolVersion) -> Reply {
        let d = JobDescMsg {
            partition: Some(part.into()),
            ..true_job()
        };
        submit_desc(c, 1002, user(1000, 1000), version, d).0
    }

    const LISTS: &str = "PartitionName=acc Nodes=n1 AllowAccounts=physics\n\
        PartitionName=deny Nodes=n1 DenyAccounts=physics\n\
        PartitionName=qos Nodes=n1 AllowQos=high\n\
        PartitionName=dqos Nodes=n1 DenyQos=normal\n";

    #[test]
    fn allow_accounts_hold_22_05_jobs_and_nothing_else_without_accounting() {
        let mut c = sharing_cluster(&["n1"], LISTS);
        let Reply::Submitted { job_id: old } = submit_from(&mut c, "acc", ProtocolVersion::V22_05)
        else {
            panic!("accepted without EnforcePartLimits")
        };
        let j = &c.jobs[&old];
        assert_eq!((j.state, j.state_reason), (JobState::Pending, WAIT_ACCOUNT));
        assert_eq!(
            wait_account_desc(&c.conf.partitions[0], j),
            "Job's account not known, so it can't use this partition (acc allows physics)"
        );
        // Later clients, and the other lists for any client: no check.
        let mut started = vec![];
        for (part, v) in [
            ("acc", V24),
            ("deny", ProtocolVersion::V22_05),
            ("qos", ProtocolVersion::V22_05),
            ("dqos", V24),
        ] {
            let Reply::Submitted { job_id } = submit_from(&mut c, part, v) else {
                panic!("{part} refused")
            };
            started.push(c.jobs[&job_id].state == JobState::Running);
        }
        assert_eq!(started, [true; 4]);
    }

    #[test]
    fn enforce_part_limits_refuses_22_05_jobs_at_allow_accounts() {
        let mut c = sharing_cluster(&["n1"], &format!("EnforcePartLimits=ALL\n{LISTS}"));
        assert_eq!(
            submit_from(&mut c, "acc", ProtocolVersion::V22_05),
            Reply::Err(StateError::InvalidAccount)
        );
        assert!(matches!(
            submit_from(&mut c, "acc", V24),
            Reply::Submitted { .. }
        ));
        assert!(matches!(
            submit_from(&mut c, "deny", ProtocolVersion::V22_05),
            Reply::Submitted { .. }
        ));
        // 22.05 matches `-A` against DenyAccounts (any case).
        let u = UserInfo::default();
        let p = &c.conf.partitions[1];
        let refused = |acct, v| refuses_submit(&c.conf, p, &u, Some(acct), v);
        assert_eq!(
            refused("Physics", ProtocolVersion::V22_05),
            Some(StateError::PartConfigUnavailable)
        );
        assert_eq!(refused("chemistry", ProtocolVersion::V22_05), None);
        assert_eq!(refused("physics", V24), None);
    }

    fn delete(c: &mut Controller, uid: u32, name: &str) -> Reply {
        c.apply(
            1004,
            Command::DeletePartition {
                uid,
                name: name.into(),
            },
        )
        .0
    }

    #[test]
    fn delete_refuses_non_admins_unknown_names_and_partitions_in_use() {
        let mut c = sharing_cluster(
            &["n1"],
            "PartitionName=a Nodes=n1 Default=YES\nPartitionName=b Nodes=n1\nPartitionName=c Nodes=n1\n",
        );
        let run = submit_shared(&mut c, 1000, "b", 4, NO_VAL16, V24);
        let wait = submit_shared(&mut c, 1000, "b", 4, NO_VAL16, V24);
        let in_c = submit_shared(&mut c, 1000, "c", 1, NO_VAL16, V24);
        assert_eq!(
            delete(&mut c, 1000, "b"),
            Reply::Err(StateError::InvalidUserId)
        );
        assert_eq!(
            delete(&mut c, 0, "nope"),
            Reply::Err(StateError::InvalidPartitionName)
        );
        // A running and a pending job hold it.
        assert_eq!(
            delete(&mut c, 0, "b"),
            Reply::Err(StateError::PartitionInUse)
        );
        cancel(&mut c, run);
        assert_eq!(
            delete(&mut c, 0, "b"),
            Reply::Err(StateError::PartitionInUse)
        );
        cancel(&mut c, wait);
        // Only finished jobs left: it goes; they move to the default.
        assert_eq!(delete(&mut c, 0, "b"), Reply::Ok);
        let names: Vec<&str> = c.conf.partitions.iter().map(|p| p.name()).collect();
        assert_eq!(names, ["a", "c"]);
        assert_eq!(c.jobs[&run].part, 0);
        // The later partition's job follows its partition down one.
        assert_eq!(c.conf.partitions[c.jobs[&in_c].part].name(), "c");
        assert_eq!(
            submit_from(&mut c, "b", V24),
            Reply::Err(StateError::InvalidPartitionName)
        );
        // The pending queue of "c" is still found under its new index.
        let more = submit_shared(&mut c, 1000, "c", 4, NO_VAL16, V24);
        assert_eq!(c.jobs[&more].state, JobState::Pending);
        cancel(&mut c, in_c);
        assert_eq!(c.jobs[&more].state, JobState::Running);
    }

    #[test]
    fn a_restart_takes_slurm_conf_partitions_and_jobs_keep_theirs() {
        let parts = "PartitionName=a Nodes=n1 Default=YES\nPartitionName=b Nodes=n1\n";
        let mut c = sharing_cluster(&["n1"], parts);
        let in_b = submit_shared(&mut c, 1000, "b", 4, NO_VAL16, V24);
        assert_eq!(delete(&mut c, 0, "a"), Reply::Ok);
        assert_eq!(c.jobs[&in_b].part, 0, "b moved down");
        // The restarted controller reads the same slurm.conf: "a" is back,
        // and the running job is still b's (index 1 now).
        let text = format!(
            "ClusterName=t\nSlurmctldHost=ctl\nSlurmUser=root\nNodeName=n1 CPUs=4 RealMemory=1000\n{parts}"
        );
        c.restarted(2000, testkit::cluster_conf(&text));
        let names: Vec<&str> = c.conf.partitions.iter().map(|p| p.name()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(c.conf.partitions[c.jobs[&in_b].part].name(), "b");
        assert_eq!(c.jobs[&in_b].state, JobState::Running);
        assert!(matches!(
            submit_from(&mut c, "a", V24),
            Reply::Submitted { .. }
        ));
    }

    #[test]
    fn deleting_the_default_leaves_none() {
        let mut c = sharing_cluster(
            &["n1"],
            "PartitionName=a Nodes=n1\nPartitionName=b Nodes=n1 Default=YES\n",
        );
        assert_eq!(delete(&mut c, 0, "a"), Reply::Ok);
        assert_eq!(c.conf.default_partition, Some(0), "b moved down");
        assert_eq!(delete(&mut c, 0, "b"), Reply::Ok);
        assert_eq!(c.conf.default_partition, None);
        assert_eq!(submit(&mut c), Reply::Err(StateError::NoPartition));
    }

    /// Submits as uid 1000 a job `cpus` one-CPU tasks to `part` with
    /// `f` applied to its description; returns its id.
    fn submit_with(
        c: &mut Controller,
        part: &str,
        cpus: u32,
        f: impl FnOnce(&mut JobDescMsg),
    ) -> u32 {
        let mut d = JobDescMsg {
            min_cpus: cpus,
            num_tasks: cpus,
            partition: Some(part.into()),
            ..true_job()
        };
        f(&mut d);
        job_id(submit_desc(c, 1002, user(1000, 1000), V24, d).0)
    }

    fn nodes_of(c: &Controller, id: u32) -> Vec<usize> {
        c.jobs[&id].alloc.iter().map(|a| a.node).collect()
    }

    #[test]
    fn nodelist_exclude_and_constraint_choose_the_nodes() {
        let text = "ClusterName=t\nSlurmctldHost=ctl\nSlurmUser=root\n\
            NodeName=n1 CPUs=4 RealMemory=1000 Feature=slow\n\
            NodeName=n2 CPUs=4 RealMemory=1000 Feature=fast,big\n\
            NodeName=n3 CPUs=4 RealMemory=1000 Feature=fast\n\
            PartitionName=d Nodes=n[1-3] Default=YES\n";
        let mut c = controller(text);
        apply_all(
            &mut c,
            1000,
            ["n1", "n2", "n3"].map(|n| reg_bare(n, 4, 1000, V24)),
        );
        let w = submit_with(&mut c, "d", 1, |d| d.req_nodes = Some("n3".into()));
        assert_eq!(nodes_of(&c, w), [2]);
        let x = submit_with(&mut c, "d", 1, |d| d.exc_nodes = Some("n[1-2]".into()));
        assert_eq!(nodes_of(&c, x), [2]);
        let two = submit_with(&mut c, "d", 2, |d| d.req_nodes = Some("n[1,3]".into()));
        assert_eq!(nodes_of(&c, two), [0, 2], "every named node, one task each");
        let big = submit_with(&mut c, "d", 1, |d| d.features = Some("fast&big".into()));
        assert_eq!(nodes_of(&c, big), [1]);
        let either = submit_with(&mut c, "d", 1, |d| d.features = Some("big|slow".into()));
        assert_eq!(nodes_of(&c, either), [0]);
        // A feature no node has is refused at submit.
        assert_eq!(
            sched::validate_constraint(&c.conf, "fast&gpu", false),
            Err(sched::FeatureError::Unknown("gpu".into()))
        );
        assert!(sched::validate_constraint(&c.conf, "fast|big", false).is_ok());
        let r = submit_from(&mut c, "d", V24);
        assert!(matches!(r, Reply::Submitted { .. }));
        let d = JobDescMsg {
            features: Some("gpu".into()),
            ..true_job()
        };
        let r = submit_desc(&mut c, 1002, UserInfo::default(), V24, d);
        assert_eq!(r.0, Reply::Err(StateError::InvalidFeature));
        // One no free node has waits.
        let busy = submit_with(&mut c, "d", 4, |d| d.features = Some("big".into()));
        assert_eq!(c.jobs[&busy].state, JobState::Pending);
        assert!(sched::features_match("fast,big", Some("big,fast")));
        assert!(!sched::features_match("fast,big", Some("fast")));
    }

    /// n1, n2 in rack r1; n3, n4 in r2; n1 and n3 also `ib`.
    fn racks() -> Controller {
        let text = "ClusterName=t\nSlurmctldHost=ctl\nSlurmUser=root\n\
            NodeName=n1 CPUs=4 RealMemory=1000 Feature=r1,ib\n\
            NodeName=n2 CPUs=4 RealMemory=1000 Feature=r1\n\
            NodeName=n3 CPUs=4 RealMemory=1000 Feature=r2,ib\n\
            NodeName=n4 CPUs=4 RealMemory=1000 Feature=r2\n\
            PartitionName=d Nodes=n[1-4] Default=YES\n";
        let mut c = controller(text);
        apply_all(
            &mut c,
            1000,
            ["n1", "n2", "n3", "n4"].map(|n| reg_bare(n, 4, 1000, V24)),
        );
        c
    }

    #[test]
    fn matching_or_places_a_job_on_nodes_sharing_one_alternative() {
        let mut c = racks();
        // n1 busy: r1 has 4 CPUs left, r2 8. Plain `r1|r2` takes the
        // first free nodes whatever their rack; `[r1|r2]` one rack only.
        let busy = submit_with(&mut c, "d", 4, |d| d.req_nodes = Some("n1".into()));
        assert_eq!(nodes_of(&c, busy), [0]);
        let plain = submit_with(&mut c, "d", 6, |d| d.features = Some("r1|r2".into()));
        assert_eq!(nodes_of(&c, plain), [1, 2], "n2 (r1) and n3 (r2)");
        let mut c = racks();
        submit_with(&mut c, "d", 4, |d| d.req_nodes = Some("n1".into()));
        let same = submit_with(&mut c, "d", 6, |d| d.features = Some("[r1|r2]".into()));
        assert_eq!(
            nodes_of(&c, same),
            [2, 3],
            "r1 cannot hold 6 CPUs: both from r2"
        );
        // The term outside the brackets holds on every node: one ib node a
        // rack can never make two nodes, and stock refuses such a job.
        let mut c = racks();
        for v in [ProtocolVersion::V22_05, V24, ProtocolVersion::V26_05] {
            let d = JobDescMsg {
                features: Some("ib&[r1|r2]".into()),
                min_nodes: 2,
                min_cpus: 2,
                num_tasks: 2,
                partition: Some("d".into()),
                ..true_job()
            };
            let r = submit_desc(&mut c, 1002, user(1000, 1000), v, d);
            assert_eq!(r.0, Reply::Err(StateError::NodeConfigUnavailable), "{v:?}");
        }
        // One node is fine.
        let one = submit_with(&mut c, "d", 1, |d| d.features = Some("ib&[r1|r2]".into()));
        assert_eq!(nodes_of(&c, one), [0]);
    }

    #[test]
    fn counts_take_that_many_nodes_with_each_feature() {
        let mut c = racks();
        // One task: still one node from each rack.
        let one_each = submit_with(&mut c, "d", 1, |d| d.features = Some("[r1*1&r2*1]".into()));
        let got = nodes_of(&c, one_each);
        assert_eq!(got, [0, 2], "n1 (r1) and n3 (r2)");
        let mut c = racks();
        let two_one = submit_with(&mut c, "d", 3, |d| d.features = Some("[r2*2&r1*1]".into()));
        let mut got = nodes_of(&c, two_one);
        got.sort_unstable();
        assert_eq!(got, [0, 2, 3]);
        // `ib*2`: both ib nodes, however few CPUs.
        let mut c = racks();
        let ib = submit_with(&mut c, "d", 1, |d| d.features = Some("ib*2".into()));
        assert_eq!(nodes_of(&c, ib), [0, 2]);
        // More counted nodes than the job may have, or than the
        // partition has with the feature: refused at submit.
        let mut c = racks();
        for (f, max_nodes) in [
            ("[r1*1&r2*1]", 1),
            ("ib*3", NO_VAL),
            ("[r1*2&r2*3]", NO_VAL),
        ] {
            let d = JobDescMsg {
                features: Some(f.into()),
                max_nodes,
                partition: Some("d".into()),
                ..true_job()
            };
            let r = submit_desc(&mut c, 1002, user(1000, 1000), V24, d);
            assert_eq!(r.0, Reply::Err(StateError::NodeConfigUnavailable), "{f}");
        }
        // 26.05 takes -n2 without -N as at most two nodes.
        let n2 = || JobDescMsg {
            features: Some("[r1*2&ib*1]".into()),
            num_tasks: 2,
            min_cpus: 2,
            partition: Some("d".into()),
            ..true_job()
        };
        let r = submit_desc(
            &mut c,
            1002,
            user(1000, 1000),
            ProtocolVersion::V26_05,
            n2(),
        );
        assert_eq!(r.0, Reply::Err(StateError::NodeConfigUnavailable));
        let r = submit_desc(&mut c, 1002, user(1000, 1000), V24, n2());
        assert!(matches!(r.0, Reply::Submitted { .. }), "{:?}", r.0);
        // The counted sets do not share nodes: r1*2 takes n1 and n2, so
        // ib*1 is n3.
        let mut c = racks();
        let three = submit_with(&mut c, "d", 1, |d| d.features = Some("[r1*2&ib*1]".into()));
        assert_eq!(nodes_of(&c, three), [0, 1, 2]);
    }

    #[test]
    fn bad_constraints_are_refused_at_submit() {
        let mut c = racks();
        for f in [
            "[r1|r2",
            "r1*2&r2*2",
            "[r1&r2]",
            "[r1*1|r2]",
            "(r1",
            "r1&nosuch",
            "[r1|nosuch]",
        ] {
            let d = JobDescMsg {
                features: Some(f.into()),
                ..true_job()
            };
            let r = submit_desc(&mut c, 1002, UserInfo::default(), V24, d);
            assert_eq!(r.0, Reply::Err(StateError::InvalidFeature), "{f}");
        }
        // 22.05 took counts on several features outside brackets.
        let d = JobDescMsg {
            features: Some("r1*1&ib*1".into()),
            ..true_job()
        };
        let v22 = ProtocolVersion::V22_05;
        let r = submit_desc(&mut c, 1002, UserInfo::default(), v22, d);
        assert!(matches!(r.0, Reply::Submitted { .. }), "{:?}", r.0);
        // Every node has r1 and ib there, and the sets may share one: n1.
        assert_eq!(nodes_of(&c, job_id(r.0)), [0]);
    }

    #[test]
    fn a_job_waiting_for_named_nodes_holds_only_those() {
        let mut c = sharing_cluster(&["n1", "n2"], "PartitionName=d Nodes=n[1-2] Default=YES\n");
        let full = submit_with(&mut c, "d", 4, |d| d.req_nodes = Some("n1".into()));
        assert_eq!(nodes_of(&c, full), [0]);
        let wants_n1 = submit_with(&mut c, "d", 1, |d| d.req_nodes = Some("n1".into()));
        assert_eq!(c.jobs[&wants_n1].state_reason, job::reason::WAIT_RESOURCES);
        // Stock fails only the named nodes, so a later job runs on n2.
        let later = submit_with(&mut c, "d", 1, |_| {});
        assert_eq!(nodes_of(&c, later), [1]);
    }

    #[test]
    fn a_blocked_partition_keeps_overlapping_partitions_off_its_nodes() {
        let mut c = sharing_cluster(
            &["n1", "n2"],
            "PartitionName=a Nodes=n[1-2] Default=YES\nPartitionName=b Nodes=n2\n",
        );
        let on_n1 = submit_with(&mut c, "a", 4, |d| d.req_nodes = Some("n1".into()));
        assert_eq!(nodes_of(&c, on_n1), [0]);
        let wide = submit_with(&mut c, "a", 8, |d| d.min_nodes = 2);
        let small_a = submit_with(&mut c, "a", 1, |_| {});
        let small_b = submit_with(&mut c, "b", 1, |_| {});
        // Each submit's pass looks at the queue in order (no backfill:
        // that comes with the periodic pass, and may start them).
        let r = |c: &Controller, id: u32| (c.jobs[&id].state, c.jobs[&id].state_reason);
        assert_eq!(
            r(&c, wide),
            (JobState::Pending, job::reason::WAIT_RESOURCES)
        );
        assert_eq!(
            r(&c, small_a),
            (JobState::Pending, job::reason::WAIT_PRIORITY)
        );
        // n2 is free, but the blocked job of `a` waits for it.
        assert_eq!(
            r(&c, small_b),
            (JobState::Pending, job::reason::WAIT_RESOURCES)
        );
    }

    #[test]
    fn update_sets_oversubscribe_and_account_lists() {
        let mut c = sharing_cluster(&["n1"], "PartitionName=p Nodes=n1 DenyAccounts=x\n");
        let upd = |c: &mut Controller, f: &dyn Fn(&mut UpdatePartMsg)| {
            let mut m = UpdatePartMsg {
                name: Some("p".into()),
                state_up: NO_VAL16,
                max_share: NO_VAL16,
                max_time: NO_VAL,
                default_time: NO_VAL,
                max_nodes: NO_VAL,
                min_nodes: NO_VAL,
                priority_tier: NO_VAL16,
                def_mem_per_cpu: slurm_wire::pack::NO_VAL64,
                max_mem_per_cpu: slurm_wire::pack::NO_VAL64,
                ..Default::default()
            };
            f(&mut m);
            let r = update_part(c, 1003, 0, m);
            assert_eq!(r, Reply::Ok);
            c.conf.partitions[0].conf.clone()
        };
        let p = upd(&mut c, &|m| m.max_share = 0x8000 | 2);
        assert_eq!(p.over_subscribe, OverSubscribe::Force(2));
        assert_eq!(p.deny_accounts.as_deref(), Some("x"), "unset fields stay");
        let a = submit_shared(&mut c, 1000, "p", 4, NO_VAL16, V24);
        let b = submit_shared(&mut c, 1000, "p", 4, NO_VAL16, V24);
        assert_eq!(
            running(&c, &[a, b]),
            [true, true],
            "FORCE:2 applies at once"
        );
        for (share, want) in [
            (0, OverSubscribe::Exclusive),
            (1, OverSubscribe::No),
            (4, OverSubscribe::Yes(4)),
        ] {
            assert_eq!(upd(&mut c, &|m| m.max_share = share).over_subscribe, want);
        }
        let p = upd(&mut c, &|m| {
            m.allow_accounts = Some("a,b".into());
            m.deny_accounts = Some(String::new());
        });
        assert_eq!(
            (p.allow_accounts.as_deref(), p.deny_accounts.as_deref()),
            (Some("a,b"), None)
        );
        let p = upd(&mut c, &|m| m.allow_accounts = Some("ALL".into()));
        assert_eq!(p.allow_accounts, None);
    }
}
