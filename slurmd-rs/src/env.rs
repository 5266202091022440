//! The environment of a batch job: the job's exported variables, then what
//! stock's `env_array_for_batch_job` and the step daemon's per-task set-up
//! add on top (later entries overwrite earlier ones).

use slurm_wire::msg::cred::{CpuArrayRep, JobCredArg};
use slurm_wire::msg::launch::BatchJobLaunchMsg;
use slurm_wire::pack::NO_VAL;

/// `MEM_PER_CPU` flag in `pn_min_memory`.
pub const MEM_PER_CPU: u64 = 0x8000_0000_0000_0000;
const NO_VAL16: u16 = 0xfffe;

/// An ordered environment where setting a name replaces its old value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env(Vec<(String, String)>);

impl Env {
    /// From `NAME=value` strings; entries without `=` are dropped.
    pub fn from_pairs<'a>(list: impl IntoIterator<Item = &'a str>) -> Self {
        let mut e = Env::default();
        for s in list {
            if let Some((k, v)) = s.split_once('=') {
                if !k.is_empty() {
                    e.set(k, v);
                }
            }
        }
        e
    }

    pub fn set(&mut self, k: &str, v: impl Into<String>) {
        let v = v.into();
        match self.0.iter_mut().find(|(n, _)| n == k) {
            Some(slot) => slot.1 = v,
            None => self.0.push((k.to_string(), v)),
        }
    }

    pub fn set_default(&mut self, k: &str, v: impl Into<String>) {
        if self.get(k).is_none() {
            self.set(k, v);
        }
    }

    /// Removes `k`, returning its value.
    pub fn remove(&mut self, k: &str) -> Option<String> {
        let i = self.0.iter().position(|(n, _)| n == k)?;
        Some(self.0.remove(i).1)
    }

    pub fn get(&self, k: &str) -> Option<&str> {
        self.0.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// `NAME=value` strings, in order.
    pub fn to_strings(&self) -> Vec<String> {
        self.0.iter().map(|(k, v)| format!("{k}={v}")).collect()
    }
}

/// The submitter's limits that sbatch forwards as `SLURM_RLIMIT_*`, and
/// the kernel resource each names.
pub const RLIMITS: [(&str, libc::__rlimit_resource_t); 10] = [
    ("CPU", libc::RLIMIT_CPU),
    ("FSIZE", libc::RLIMIT_FSIZE),
    ("DATA", libc::RLIMIT_DATA),
    ("STACK", libc::RLIMIT_STACK),
    ("CORE", libc::RLIMIT_CORE),
    ("RSS", libc::RLIMIT_RSS),
    ("NPROC", libc::RLIMIT_NPROC),
    ("NOFILE", libc::RLIMIT_NOFILE),
    ("MEMLOCK", libc::RLIMIT_MEMLOCK),
    ("AS", libc::RLIMIT_AS),
];

/// Takes the propagated limits and umask out of the environment (stock's
/// step daemon applies them to the job and does not pass them on).
/// `except` lists limit names not to propagate (PropagateResourceLimitsExcept).
pub fn take_limits(
    e: &mut Env,
    except: &[String],
) -> (Vec<(libc::__rlimit_resource_t, u64)>, Option<u32>) {
    let mut limits = Vec::new();
    for (name, res) in RLIMITS {
        if let Some(v) = e.remove(&format!("SLURM_RLIMIT_{name}")) {
            let skip = except.iter().any(|x| x.eq_ignore_ascii_case(name));
            if let (false, Ok(v)) = (skip, v.trim().parse::<u64>()) {
                limits.push((res, v));
            }
        }
    }
    let umask = e
        .remove("SLURM_UMASK")
        .and_then(|u| u32::from_str_radix(u.trim(), 8).ok());
    (limits, umask)
}

/// Upstream's compressed list: runs of equal values as `v(xN)`.
pub fn compress_counts(runs: &[(u32, u32)]) -> String {
    // Merge adjacent runs of equal value first.
    let mut merged: Vec<(u32, u32)> = Vec::new();
    for &(v, n) in runs.iter().filter(|r| r.1 > 0) {
        match merged.last_mut() {
            Some(last) if last.0 == v => last.1 = last.1.saturating_add(n),
            _ => merged.push((v, n)),
        }
    }
    merged
        .iter()
        .map(|&(v, n)| {
            if n > 1 {
                format!("{v}(x{n})")
            } else {
                v.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// CPUs of each node of the job, in node order: at most as many nodes as
/// a host list holds, whatever the repeat counts say.
pub fn cpus_per_node(groups: &[CpuArrayRep]) -> Vec<u32> {
    let max = slurm_conf::hostlist::MAX_HOSTS;
    let mut out = Vec::new();
    for g in groups {
        // A bogus repeat count must not allocate unbounded memory.
        let reps = (g.reps as usize).min(max - out.len());
        out.extend(std::iter::repeat_n(u32::from(g.cpus), reps));
        if out.len() == max {
            break;
        }
    }
    out
}

/// CPUs of node `idx` of the job from its groups, without expanding them
/// (None past the last group).
pub fn cpus_of_node(groups: &[CpuArrayRep], idx: usize) -> Option<u32> {
    let mut left = idx as u64;
    for g in groups {
        if left < u64::from(g.reps) {
            return Some(u32::from(g.cpus));
        }
        left -= u64::from(g.reps);
    }
    None
}

/// Block distribution of `ntasks` over nodes with `cpus[i] / cpt` slots:
/// one task per node first, then fill each node's slots in order, then
/// round-robin whatever is left (overcommit).
pub fn tasks_per_node(cpus: &[u32], cpt: u32, ntasks: u32) -> Vec<u32> {
    let cpt = cpt.max(1);
    let n = cpus.len();
    let mut out = vec![0u32; n];
    if n == 0 {
        return out;
    }
    let mut left = ntasks;
    for slot in out.iter_mut() {
        if left == 0 {
            break;
        }
        *slot = 1;
        left -= 1;
    }
    for (slot, c) in out.iter_mut().zip(cpus) {
        let cap = (c / cpt).max(1);
        let add = cap.saturating_sub(*slot).min(left);
        *slot = slot.saturating_add(add);
        left -= add;
    }
    // Round-robin in one pass: a huge ntasks costs no more than a small one.
    let n32 = u32::try_from(n).unwrap_or(u32::MAX);
    let (each, rest) = (left / n32, left % n32);
    for (i, slot) in out.iter_mut().enumerate() {
        let extra = u32::from((i as u64) < u64::from(rest));
        *slot = slot.saturating_add(each).saturating_add(extra);
    }
    out
}

fn runs(v: &[u32]) -> Vec<(u32, u32)> {
    v.iter().map(|&x| (x, 1)).collect()
}

/// What the node and the job's owner add to the job's environment.
#[derive(Debug, Clone, Default)]
pub struct BatchEnvCtx {
    pub job_id: u32,
    pub cluster_name: String,
    pub node_name: String,
    /// Index of this node in the job's node list.
    pub node_id: u32,
    pub conf_path: String,
    pub user_name: String,
    pub uid: u32,
    pub gid: u32,
    /// The protocol the controller used; SLURM_OOM_KILL_STEP exists from 24.11.
    pub has_oom_kill_step: bool,
    /// 22.05 sets SLURM_NODE_ALIASES (the launch's alias list, "(null)" without one).
    pub has_node_aliases: bool,
    /// 22.05's SLURM_WORKING_CLUSTER (cluster:controller:port:protocol:select plugin id).
    pub working_cluster: Option<String>,
    /// From 25.11 the batch step's ids are in its environment too:
    /// SLURM_JOB_SLUID, SLURM_STEP_ID and SLURM_STEPID.
    pub has_step_ids: bool,
}

/// A sluid as Slurm prints it: "s" and 13 Crockford base-32 digits, most
/// significant first (the first digit holds the top 4 bits).
pub fn sluid_str(sluid: u64) -> String {
    const MAP: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let mut s = String::with_capacity(14);
    s.push('s');
    for i in (0..13).rev() {
        let digit = (sluid >> (5 * i)) & 0x1f;
        s.push(char::from(MAP[digit as usize]));
    }
    s
}

/// The environment a stock slurmd gives this batch job (the task pid is
/// added by the launcher once the process exists).
pub fn batch_env(msg: &BatchJobLaunchMsg, cred: &JobCredArg, ctx: &BatchEnvCtx) -> Env {
    let mut e = Env::from_pairs(msg.environment.iter().flatten().map(String::as_str));
    let cpus = cpus_per_node(&msg.cpu_groups);
    let nnodes = cpus.len() as u32;
    let job = ctx.job_id.to_string();
    let nodes = msg.nodes.clone().unwrap_or_default();

    e.set("SLURM_CLUSTER_NAME", ctx.cluster_name.as_str());
    e.set("SLURM_JOB_ID", job.as_str());
    e.set("SLURM_JOB_NUM_NODES", nnodes.to_string());
    if msg.array_task_id != NO_VAL {
        e.set("SLURM_ARRAY_JOB_ID", msg.array_job_id.to_string());
        e.set("SLURM_ARRAY_TASK_ID", msg.array_task_id.to_string());
    }
    e.set("SLURM_JOB_NODELIST", nodes.as_str());
    e.set(
        "SLURM_JOB_PARTITION",
        msg.partition.clone().unwrap_or_default(),
    );
    e.set("SLURM_JOB_CPUS_PER_NODE", compress_counts(&runs(&cpus)));
    e.set("ENVIRONMENT", "BATCH");
    e.set("HOSTNAME", ctx.node_name.as_str());
    e.set("SLURM_JOBID", job.as_str());
    e.set("SLURM_NNODES", nnodes.to_string());
    e.set("SLURM_NODELIST", nodes.as_str());

    let cpt = if msg.cpus_per_task != 0 && msg.cpus_per_task != NO_VAL16 {
        u32::from(msg.cpus_per_task)
    } else {
        1
    };
    if e.get("SLURM_CPUS_PER_TASK").is_some() {
        e.set("SLURM_CPUS_PER_TASK", cpt.to_string());
    }
    let mut ntasks = msg.ntasks;
    if ntasks == 0 {
        if let Some(per_node) = e
            .get("SLURM_NTASKS_PER_NODE")
            .and_then(|s| s.parse::<u32>().ok())
        {
            ntasks = per_node.saturating_mul(nnodes);
        }
    }
    if ntasks != 0 {
        e.set("SLURM_NTASKS", ntasks.to_string());
        e.set("SLURM_NPROCS", ntasks.to_string());
    } else {
        ntasks = cpus.iter().map(|c| c / cpt).fold(0u32, u32::saturating_add);
    }
    e.set(
        "SLURM_TASKS_PER_NODE",
        compress_counts(&runs(&tasks_per_node(&cpus, cpt, ntasks))),
    );
    if msg.pn_min_memory & MEM_PER_CPU != 0 {
        e.set(
            "SLURM_MEM_PER_CPU",
            (msg.pn_min_memory & !MEM_PER_CPU).to_string(),
        );
    } else if msg.pn_min_memory != 0 {
        e.set("SLURM_MEM_PER_NODE", msg.pn_min_memory.to_string());
    }
    if let Some(a) = &msg.account {
        e.set("SLURM_JOB_ACCOUNT", a.as_str());
    }
    if let Some(q) = &msg.qos {
        e.set("SLURM_JOB_QOS", q.as_str());
    }
    if let Some(r) = &msg.resv_name {
        e.set("SLURM_JOB_RESERVATION", r.as_str());
    }

    // The per-task part (the batch script is task 0 of node `node_id`).
    let on_node = cpus.get(ctx.node_id as usize).copied().unwrap_or(1);
    e.set("SLURM_CPUS_ON_NODE", on_node.to_string());
    if ctx.has_oom_kill_step {
        e.set(
            "SLURM_OOM_KILL_STEP",
            u8::from(msg.oom_kill_step).to_string(),
        );
    }
    if cred.job_end_time != 0 {
        e.set("SLURM_JOB_END_TIME", cred.job_end_time.to_string());
    }
    if cred.job_start_time != 0 {
        e.set("SLURM_JOB_START_TIME", cred.job_start_time.to_string());
    }
    if let Some(l) = &cred.job_licenses {
        e.set("SLURM_JOB_LICENSES", l.as_str());
    }
    if ctx.has_node_aliases {
        e.set(
            "SLURM_NODE_ALIASES",
            msg.alias_list.as_deref().unwrap_or("(null)"),
        );
    }
    if let Some(w) = &ctx.working_cluster {
        e.set("SLURM_WORKING_CLUSTER", w.as_str());
    }
    if ctx.has_step_ids {
        if cred.step_id.sluid != 0 {
            e.set("SLURM_JOB_SLUID", sluid_str(cred.step_id.sluid));
        }
        // the batch step's id, printed signed as stock does (-5)
        let step = (slurm_wire::types::StepId::BATCH_SCRIPT as i32).to_string();
        e.set("SLURM_STEP_ID", step.as_str());
        e.set("SLURM_STEPID", step);
    }
    e.set("SLURM_NODEID", ctx.node_id.to_string());
    e.set("SLURM_PROCID", "0");
    e.set("SLURM_LOCALID", "0");
    e.set("SLURM_GTIDS", "0");
    e.set("SLURM_JOB_UID", ctx.uid.to_string());
    e.set("SLURM_JOB_USER", ctx.user_name.as_str());
    e.set("SLURM_JOB_GID", ctx.gid.to_string());
    e.set("SLURMD_NODENAME", ctx.node_name.as_str());
    e.set("SLURM_TOPOLOGY_ADDR", ctx.node_name.as_str());
    e.set("SLURM_TOPOLOGY_ADDR_PATTERN", "node");
    e.set_default("TMPDIR", "/tmp");
    e.set_default("SLURM_CONF", ctx.conf_path.as_str());
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch() -> BatchJobLaunchMsg {
        BatchJobLaunchMsg {
            job_id: 7,
            partition: Some("debug".into()),
            array_task_id: NO_VAL,
            cpus_per_task: 1,
            cpu_groups: vec![CpuArrayRep { cpus: 2, reps: 2 }],
            nodes: Some("n[1-2]".into()),
            environment: vec![
                Some("PATH=/bin".into()),
                Some("SLURM_JOB_NAME=wrap".into()),
                Some("HOSTNAME=login".into()),
                Some("garbage".into()),
                None,
            ],
            account: Some("research".into()),
            ..Default::default()
        }
    }

    fn ctx() -> BatchEnvCtx {
        BatchEnvCtx {
            job_id: 7,
            cluster_name: "c".into(),
            node_name: "n1".into(),
            node_id: 0,
            conf_path: "/etc/slurm/slurm.conf".into(),
            user_name: "alice".into(),
            uid: 1000,
            gid: 100,
            has_oom_kill_step: true,
            ..Default::default()
        }
    }

    #[test]
    fn stock_batch_variables() {
        let cred = JobCredArg {
            job_start_time: 100,
            job_end_time: 200,
            ..Default::default()
        };
        let e = batch_env(&launch(), &cred, &ctx());
        let want = [
            ("PATH", "/bin"),
            ("SLURM_JOB_NAME", "wrap"),
            ("HOSTNAME", "n1"),
            ("ENVIRONMENT", "BATCH"),
            ("SLURM_JOB_ID", "7"),
            ("SLURM_JOBID", "7"),
            ("SLURM_CLUSTER_NAME", "c"),
            ("SLURM_JOB_NUM_NODES", "2"),
            ("SLURM_NNODES", "2"),
            ("SLURM_JOB_NODELIST", "n[1-2]"),
            ("SLURM_JOB_PARTITION", "debug"),
            ("SLURM_JOB_CPUS_PER_NODE", "2(x2)"),
            ("SLURM_TASKS_PER_NODE", "2(x2)"),
            ("SLURM_CPUS_ON_NODE", "2"),
            ("SLURM_JOB_ACCOUNT", "research"),
            ("SLURM_JOB_START_TIME", "100"),
            ("SLURM_JOB_END_TIME", "200"),
            ("SLURM_JOB_UID", "1000"),
            ("SLURM_JOB_GID", "100"),
            ("SLURM_JOB_USER", "alice"),
            ("SLURM_NODEID", "0"),
            ("SLURM_PROCID", "0"),
            ("SLURM_GTIDS", "0"),
            ("SLURMD_NODENAME", "n1"),
            ("SLURM_OOM_KILL_STEP", "0"),
            ("SLURM_TOPOLOGY_ADDR_PATTERN", "node"),
            ("TMPDIR", "/tmp"),
            ("SLURM_CONF", "/etc/slurm/slurm.conf"),
        ];
        for (k, v) in want {
            assert_eq!(e.get(k), Some(v), "{k}");
        }
        for k in [
            "SLURM_ARRAY_JOB_ID",
            "SLURM_NTASKS",
            "SLURM_MEM_PER_NODE",
            "SLURM_CPUS_PER_TASK",
            "garbage",
        ] {
            assert_eq!(e.get(k), None, "{k}");
        }
        // One entry per name.
        let mut names: Vec<_> = e.iter().map(|(k, _)| k).collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n);
    }

    #[test]
    fn arrays_tasks_memory() {
        let mut m = launch();
        m.array_job_id = 5;
        m.array_task_id = 3;
        m.ntasks = 3;
        m.cpus_per_task = 2;
        m.pn_min_memory = MEM_PER_CPU | 512;
        m.environment.push(Some("SLURM_CPUS_PER_TASK=9".into()));
        let mut c = ctx();
        c.node_id = 1;
        c.has_oom_kill_step = false;
        let e = batch_env(&m, &JobCredArg::default(), &c);
        assert_eq!(e.get("SLURM_ARRAY_JOB_ID"), Some("5"));
        assert_eq!(e.get("SLURM_ARRAY_TASK_ID"), Some("3"));
        assert_eq!(e.get("SLURM_NTASKS"), Some("3"));
        assert_eq!(e.get("SLURM_NPROCS"), Some("3"));
        assert_eq!(e.get("SLURM_CPUS_PER_TASK"), Some("2"));
        assert_eq!(e.get("SLURM_MEM_PER_CPU"), Some("512"));
        assert_eq!(e.get("SLURM_NODEID"), Some("1"));
        assert_eq!(e.get("SLURM_OOM_KILL_STEP"), None);
        assert_eq!(e.get("SLURM_JOB_START_TIME"), None);
        // 3 tasks, 1 slot per node (2 cpus / 2 per task): overcommit round-robin.
        assert_eq!(e.get("SLURM_TASKS_PER_NODE"), Some("2,1"));
        m.pn_min_memory = 1000;
        let e = batch_env(&m, &JobCredArg::default(), &c);
        assert_eq!(e.get("SLURM_MEM_PER_NODE"), Some("1000"));
        assert_eq!(e.get("SLURM_MEM_PER_CPU"), None);
    }

    #[test]
    fn release_specific_variables() {
        let m = launch();
        let mut cred = JobCredArg::default();
        cred.step_id.sluid = 31;
        // 24.11: none of them
        let e = batch_env(&m, &cred, &ctx());
        for k in [
            "SLURM_NODE_ALIASES",
            "SLURM_WORKING_CLUSTER",
            "SLURM_JOB_SLUID",
            "SLURM_STEP_ID",
            "SLURM_STEPID",
        ] {
            assert_eq!(e.get(k), None, "{k}");
        }
        // 22.05
        let mut c = ctx();
        c.has_node_aliases = true;
        c.working_cluster = Some("c:ctl:6817:9728:109".into());
        let e = batch_env(&m, &cred, &c);
        assert_eq!(e.get("SLURM_NODE_ALIASES"), Some("(null)"));
        assert_eq!(e.get("SLURM_WORKING_CLUSTER"), Some("c:ctl:6817:9728:109"));
        // 26.05
        let mut c = ctx();
        c.has_step_ids = true;
        let e = batch_env(&m, &cred, &c);
        assert_eq!(e.get("SLURM_JOB_SLUID"), Some("s000000000000Z"));
        assert_eq!(e.get("SLURM_STEP_ID"), Some("-5"));
        assert_eq!(e.get("SLURM_STEPID"), Some("-5"));
    }

    #[test]
    fn sluids_print_as_slurm_does() {
        assert_eq!(sluid_str(0), "s0000000000000");
        assert_eq!(sluid_str(32), "s0000000000010");
        // the first digit holds the top 4 bits only
        assert_eq!(sluid_str(u64::MAX), "sFZZZZZZZZZZZZ");
        assert_eq!(sluid_str(1 << 63), "s8000000000000");
    }

    #[test]
    fn limits_and_umask_are_taken_out() {
        let mut e = Env::from_pairs([
            "SLURM_RLIMIT_NOFILE=1024",
            "SLURM_RLIMIT_CORE=0",
            "SLURM_RLIMIT_AS=junk",
            "SLURM_UMASK=0027",
            "SLURM_PRIO_PROCESS=0",
        ]);
        let (l, u) = take_limits(&mut e, &["core".to_string()]);
        assert_eq!(l, vec![(libc::RLIMIT_NOFILE, 1024)]);
        assert_eq!(u, Some(0o027));
        assert_eq!(e.to_strings(), vec!["SLURM_PRIO_PROCESS=0"]);
    }

    #[test]
    fn layouts() {
        assert_eq!(tasks_per_node(&[2, 2], 1, 2), vec![1, 1]);
        assert_eq!(tasks_per_node(&[2, 2], 1, 3), vec![2, 1]);
        assert_eq!(tasks_per_node(&[4], 1, 6), vec![6]);
        assert_eq!(tasks_per_node(&[], 1, 6), Vec::<u32>::new());
        // Overcommit round-robins what the CPUs do not take.
        assert_eq!(tasks_per_node(&[1, 1, 1], 1, 8), vec![3, 3, 2]);
        // A bogus count is spread in one pass, every task placed once.
        let huge = tasks_per_node(&[2, 1, 1], 1, u32::MAX);
        assert_eq!(
            huge.iter().map(|&t| u64::from(t)).sum::<u64>(),
            u64::from(u32::MAX)
        );
        assert_eq!(
            compress_counts(&[(1, u32::MAX), (1, 5)]),
            format!("1(x{})", u32::MAX)
        );
        assert_eq!(compress_counts(&[(2, 1), (2, 2), (1, 1)]), "2(x3),1");
        assert_eq!(compress_counts(&[(1, 1)]), "1");
        assert_eq!(
            cpus_per_node(&[
                CpuArrayRep { cpus: 2, reps: 2 },
                CpuArrayRep { cpus: 1, reps: 1 }
            ]),
            vec![2, 2, 1]
        );
        // Bogus repeat counts: never more nodes than a host list holds.
        let bogus = vec![
            CpuArrayRep {
                cpus: 3,
                reps: u32::MAX
            };
            100
        ];
        assert_eq!(cpus_per_node(&bogus).len(), slurm_conf::hostlist::MAX_HOSTS);
        // One node's CPUs, found without expanding the groups.
        let g = [
            CpuArrayRep { cpus: 2, reps: 2 },
            CpuArrayRep {
                cpus: 5,
                reps: u32::MAX,
            },
        ];
        assert_eq!(cpus_of_node(&g, 1), Some(2));
        assert_eq!(cpus_of_node(&g, 2), Some(5));
        assert_eq!(cpus_of_node(&bogus, 50 * u32::MAX as usize), Some(3));
        assert_eq!(cpus_of_node(&bogus, usize::MAX), None);
        assert_eq!(cpus_of_node(&g[..1], 2), None);
    }
}
