//! `slurm.conf`: typed options the daemons use, records (`NodeName`,
//! `PartitionName`, ...), and every other recognised option kept raw.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{ConfError, Location};
use crate::hostlist::Hostlist;
use crate::keywords::{self, Keyword, Kind};
use crate::lexer::{self, parse_fields, Fields, Line, LineSink, Loader, Walker};
use crate::units::{self, LogLevel, TimeLimit, INFINITE, INFINITE16};

/// Default config location when neither `-f` nor `SLURM_CONF` is given.
pub const DEFAULT_SLURM_CONF: &str = "/etc/slurm/slurm.conf";

/// Config path as daemons choose it: `-f` flag, else `SLURM_CONF`, else
/// [`DEFAULT_SLURM_CONF`].
pub fn locate_config(flag: Option<&Path>) -> PathBuf {
    locate_config_with(flag, std::env::var_os("SLURM_CONF"))
}

/// [`locate_config`] with the environment value passed in.
pub fn locate_config_with(flag: Option<&Path>, env: Option<OsString>) -> PathBuf {
    if let Some(f) = flag {
        return f.to_path_buf();
    }
    match env {
        Some(e) if !e.is_empty() => PathBuf::from(e),
        _ => PathBuf::from(DEFAULT_SLURM_CONF),
    }
}

/// Path of a companion file (`gres.conf`, `cgroup.conf`, ...) which stock
/// looks for beside `slurm.conf`.
pub fn extra_conf_path(slurm_conf: &Path, name: &str) -> PathBuf {
    slurm_conf.parent().unwrap_or(Path::new("")).join(name)
}

/// A controller from `SlurmctldHost=name(addr)` or the legacy options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerHost {
    pub hostname: String,
    pub addr: String,
}

/// `SlurmctldPort`, possibly a range `6817-6820`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortRange {
    pub first: u16,
    pub count: u16,
}

impl PortRange {
    pub fn ports(self) -> impl Iterator<Item = u16> {
        (0..self.count).filter_map(move |i| self.first.checked_add(i))
    }
}

/// A memory limit given per allocated CPU or per node (MB).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemLimit {
    PerCpu(u64),
    PerNode(u64),
}

impl MemLimit {
    /// Wire encoding: per-CPU values carry Slurm's `MEM_PER_CPU` flag bit.
    pub fn to_wire(self) -> u64 {
        match self {
            MemLimit::PerCpu(v) => v | (1 << 63),
            MemLimit::PerNode(v) => v,
        }
    }
}

/// A comma-separated option list such as `SchedulerParameters`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params {
    raw: String,
}

impl Params {
    pub fn new(raw: &str) -> Self {
        Params {
            raw: raw.to_string(),
        }
    }

    /// `(name, value)` pairs; `value` is `None` for bare flags.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Option<&str>)> {
        self.raw
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| match s.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (s, None),
            })
    }

    /// Whether `name` appears, with or without a value (any case).
    pub fn has(&self, name: &str) -> bool {
        self.iter().any(|(k, _)| k.eq_ignore_ascii_case(name))
    }

    /// The value of `name=value` (last one wins).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .filter_map(|(_, v)| v)
            .last()
    }

    pub fn as_str(&self) -> &str {
        &self.raw
    }

    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }
}

impl fmt::Display for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

/// `PriorityWeight*` options.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PriorityWeights {
    pub age: u32,
    pub assoc: u32,
    pub fairshare: u32,
    pub job_size: u32,
    pub partition: u32,
    pub qos: u32,
    pub tres: Option<String>,
}

/// One `NodeName=` line merged with the `NodeName=DEFAULT` values.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeConf {
    pub names: Hostlist,
    pub hostnames: Hostlist,
    pub addrs: Hostlist,
    pub bcast_addrs: Option<Hostlist>,
    pub boards: u16,
    /// Total sockets (not per board).
    pub sockets: u16,
    pub cores_per_socket: u16,
    pub threads_per_core: u16,
    pub cpus: u16,
    /// MB.
    pub real_memory: u64,
    /// MB.
    pub tmp_disk: u32,
    pub gres: Option<String>,
    pub features: Option<String>,
    pub weight: u32,
    pub state: Option<String>,
    /// As written: one port or a range like `[16821-16824]`.
    pub port: Option<String>,
    pub reason: Option<String>,
    pub cpu_spec_list: Option<String>,
    pub core_spec_count: u16,
    /// MB.
    pub mem_spec_limit: u64,
    pub cpu_bind: Option<String>,
    pub tres_weights: Option<String>,
    pub restricted_cores_per_gpu: u16,
    /// Newer keys not typed here (e.g. 26.05 `Topology`), by canonical name.
    pub extra: BTreeMap<String, String>,
    pub at: Location,
}

/// One node of a [`NodeConf`] with its own hostname, address and port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeEntry {
    pub name: String,
    pub hostname: String,
    pub addr: String,
    pub bcast_addr: Option<String>,
    pub port: Option<u16>,
}

impl NodeConf {
    /// Feature names (comma-separated in the config).
    pub fn feature_list(&self) -> Vec<&str> {
        split_list(self.features.as_deref())
    }

    /// Pairs every node name with its hostname, address and port the way
    /// stock does (lists must match in length or have a single entry).
    pub fn expand(&self) -> Result<Vec<NodeEntry>, ConfError> {
        let n = self.names.len();
        let check = |what: &str, count: usize, allow_zero: bool| {
            if count == n || count == 1 || (allow_zero && count == 0) {
                Ok(())
            } else {
                Err(ConfError::invalid(
                    &self.at,
                    format!("{what} count ({count}) must equal that of NodeName ({n}) or be one"),
                ))
            }
        };
        check("NodeAddr", self.addrs.len(), false)?;
        check("NodeHostname", self.hostnames.len(), false)?;
        let bcast = self.bcast_addrs.clone().unwrap_or_default();
        check("BcastAddr", bcast.len(), true)?;
        let ports = match self.port.as_deref() {
            Some(p) if !p.is_empty() => {
                let expr = if !p.starts_with('[') && (p.contains('-') || p.contains(',')) {
                    format!("[{p}]")
                } else {
                    p.to_string()
                };
                Hostlist::parse(&expr).map_err(|e| ConfError::Hostlist {
                    at: self.at.clone(),
                    key: "Port".into(),
                    value: p.to_string(),
                    source: e,
                })?
            }
            _ => Hostlist::new(),
        };
        check("Port", ports.len(), true)?;
        let pick = |hl: &Hostlist, i: usize| -> Option<String> {
            if hl.len() == 1 {
                hl.nth(0)
            } else {
                hl.nth(i)
            }
        };
        let mut out = Vec::with_capacity(n);
        for (i, name) in self.names.iter().enumerate() {
            let port = match pick(&ports, i) {
                None => None,
                Some(p) => {
                    let v = units::c_atol(&p);
                    if v <= 0 || v > 0xffff {
                        return Err(ConfError::value(&self.at, "Port", "port", &p));
                    }
                    Some(v as u16)
                }
            };
            out.push(NodeEntry {
                hostname: pick(&self.hostnames, i).unwrap_or_else(|| name.clone()),
                addr: pick(&self.addrs, i).unwrap_or_else(|| name.clone()),
                bcast_addr: pick(&bcast, i),
                port,
                name,
            });
        }
        Ok(out)
    }
}

/// `PartitionName` `State=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionState {
    Up,
    Down,
    Drain,
    Inactive,
}

/// `OverSubscribe=` (`Shared=`): job count per resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverSubscribe {
    Exclusive,
    No,
    Yes(u16),
    Force(u16),
}

impl OverSubscribe {
    /// Stock's `max_share` encoding (FORCE sets bit 15).
    pub fn max_share(self) -> u16 {
        match self {
            OverSubscribe::Exclusive => 0,
            OverSubscribe::No => 1,
            OverSubscribe::Yes(n) => n,
            OverSubscribe::Force(n) => n | 0x8000,
        }
    }
}

/// One `PartitionName=` line merged with `PartitionName=DEFAULT`.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionConf {
    pub name: String,
    /// Node expression; whitespace already turned into commas.
    pub nodes: Option<String>,
    pub default: bool,
    pub hidden: bool,
    pub root_only: bool,
    pub req_resv: bool,
    pub lln: bool,
    pub exclusive_user: bool,
    pub exclusive_topo: bool,
    pub power_down_on_idle: bool,
    pub disable_root_jobs: Option<bool>,
    pub state: PartitionState,
    /// Minutes.
    pub max_time: TimeLimit,
    /// Minutes; `None` when unset.
    pub default_time: Option<TimeLimit>,
    pub max_nodes: u32,
    pub min_nodes: u32,
    pub max_cpus_per_node: u32,
    pub max_cpus_per_socket: u32,
    pub def_mem: Option<MemLimit>,
    pub max_mem: Option<MemLimit>,
    pub def_cpu_per_gpu: Option<u64>,
    pub def_mem_per_gpu: Option<u64>,
    /// `None` means ALL. Lower-cased like stock.
    pub allow_accounts: Option<String>,
    pub allow_groups: Option<String>,
    pub allow_qos: Option<String>,
    pub deny_accounts: Option<String>,
    pub deny_qos: Option<String>,
    pub alloc_nodes: Option<String>,
    pub alternate: Option<String>,
    pub cpu_bind: Option<String>,
    pub priority_tier: u16,
    pub priority_job_factor: u16,
    pub over_subscribe: OverSubscribe,
    pub over_time_limit: Option<u16>,
    pub qos: Option<String>,
    /// Seconds.
    pub grace_time: u32,
    pub preempt_mode: Option<String>,
    pub tres_billing_weights: Option<String>,
    pub select_type_parameters: Option<String>,
    pub resume_timeout: Option<u16>,
    pub suspend_time: Option<u32>,
    pub suspend_timeout: Option<u16>,
    pub extra: BTreeMap<String, String>,
    pub at: Location,
}

/// `NodeSet=name Nodes=... Feature=...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeSetConf {
    pub name: String,
    pub nodes: Option<String>,
    pub feature: Option<String>,
    pub at: Location,
}

/// `DownNodes=... State=... Reason=...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownNodesConf {
    pub names: Hostlist,
    pub state: Option<String>,
    pub reason: String,
    pub at: Location,
}

/// A record line kept as written (`FrontendName`, `PowerAction`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordLine {
    pub keyword: &'static str,
    pub value: String,
    pub fields: Vec<(String, String)>,
    pub at: Location,
}

/// A top-level option as written: every value (arrays keep all) and where
/// the last one was set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawEntry {
    pub key: &'static str,
    pub values: Vec<String>,
    pub at: Location,
}

/// A parsed `slurm.conf`.
#[derive(Debug, Clone, PartialEq)]
pub struct SlurmConf {
    pub path: PathBuf,
    /// Stock's `hash_val` of the file (and its includes), sent by slurmd.
    pub hash_val: u32,
    pub cluster_name: Option<String>,
    pub slurmctld_hosts: Vec<ControllerHost>,
    pub slurmctld_addr: Option<String>,
    pub slurmctld_port: PortRange,
    pub slurmd_port: u16,
    pub slurm_user: String,
    pub slurmd_user: String,
    pub state_save_location: String,
    pub slurmd_spool_dir: String,
    pub slurmctld_log_file: Option<String>,
    pub slurmd_log_file: Option<String>,
    pub slurmctld_pid_file: String,
    pub slurmd_pid_file: String,
    pub slurmctld_debug: LogLevel,
    pub slurmd_debug: LogLevel,
    pub auth_type: String,
    pub auth_info: Option<String>,
    pub cred_type: String,
    pub select_type: String,
    pub select_type_parameters: Params,
    pub proctrack_type: String,
    /// `None` when unset or `task/none`.
    pub task_plugin: Option<String>,
    pub gres_types: Vec<String>,
    pub return_to_service: u16,
    /// Seconds.
    pub slurmd_timeout: u16,
    pub slurmctld_timeout: u16,
    pub message_timeout: u16,
    /// Seconds a batch job may take to show up on its node.
    pub batch_start_timeout: u16,
    pub kill_wait: u16,
    /// Minutes.
    pub over_time_limit: u16,
    pub inactive_limit: u16,
    pub min_job_age: u32,
    pub max_job_count: u32,
    pub first_job_id: u32,
    pub max_array_size: u32,
    pub prolog: Vec<String>,
    pub epilog: Vec<String>,
    pub prolog_flags: Params,
    pub accounting_storage_type: Option<String>,
    pub accounting_storage_host: Option<String>,
    pub accounting_storage_port: Option<u16>,
    pub accounting_storage_user: Option<String>,
    pub job_acct_gather_type: Option<String>,
    pub job_comp_type: Option<String>,
    pub scheduler_type: String,
    pub scheduler_parameters: Params,
    pub priority_type: String,
    pub priority_weights: PriorityWeights,
    pub slurmd_parameters: Params,
    pub slurmctld_parameters: Params,
    pub communication_parameters: Params,
    pub def_mem: Option<MemLimit>,
    pub max_mem: Option<MemLimit>,
    pub mpi_default: Option<String>,
    pub tree_width: u16,
    pub tmp_fs: String,
    pub health_check_program: Option<String>,
    pub health_check_interval: u16,
    pub nodes: Vec<NodeConf>,
    pub partitions: Vec<PartitionConf>,
    pub nodesets: Vec<NodeSetConf>,
    pub down_nodes: Vec<DownNodesConf>,
    pub other_records: Vec<RecordLine>,
    pub warnings: Vec<String>,
    raw: BTreeMap<String, RawEntry>,
}

impl SlurmConf {
    /// Reads and parses a config file (following `Include`).
    pub fn from_file(path: impl AsRef<Path>) -> Result<SlurmConf, ConfError> {
        lexer::load_file(path.as_ref(), Self::parse_with_loader)
    }

    /// Parses config text; `origin` names it in errors and anchors relative
    /// `Include` paths.
    pub fn parse_str(text: &str, origin: impl AsRef<Path>) -> Result<SlurmConf, ConfError> {
        Self::parse_with_loader(text.as_bytes(), origin.as_ref(), &lexer::read_file)
    }

    /// Like [`parse_str`](Self::parse_str) with a custom reader for
    /// included files.
    pub fn parse_with_loader(
        bytes: &[u8],
        origin: &Path,
        loader: Loader<'_>,
    ) -> Result<SlurmConf, ConfError> {
        let mut b = Builder::default();
        let mut w = Walker::new(loader);
        w.walk(bytes, origin, &mut b)?;
        b.finish(origin, w.hash)
    }

    /// The last value written for a top-level option (any case).
    pub fn raw(&self, key: &str) -> Option<&str> {
        self.raw_values(key).last().map(String::as_str)
    }

    /// Every value written for a top-level option.
    pub fn raw_values(&self, key: &str) -> &[String] {
        self.raw
            .get(&key.to_ascii_lowercase())
            .map(|e| e.values.as_slice())
            .unwrap_or(&[])
    }

    /// Where a top-level option was last set.
    pub fn raw_location(&self, key: &str) -> Option<&Location> {
        self.raw.get(&key.to_ascii_lowercase()).map(|e| &e.at)
    }

    /// All top-level options as written, by lower-cased name.
    pub fn raw_entries(&self) -> impl Iterator<Item = &RawEntry> {
        self.raw.values()
    }

    /// The `NodeName` line that defines `name`.
    pub fn node(&self, name: &str) -> Option<&NodeConf> {
        self.nodes.iter().find(|n| n.names.contains(name))
    }

    pub fn partition(&self, name: &str) -> Option<&PartitionConf> {
        self.partitions.iter().find(|p| p.name == name)
    }

    /// The partition marked `Default=YES` (the last one, like stock).
    pub fn default_partition(&self) -> Option<&PartitionConf> {
        self.partitions.iter().rev().find(|p| p.default)
    }
}

fn split_list(s: Option<&str>) -> Vec<&str> {
    s.map(|s| {
        s.split(',')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .collect()
    })
    .unwrap_or_default()
}

/// Options that have typed fields in [`SlurmConf`].
const IMPLEMENTED: &[&str] = &[
    "AccountingStorageHost",
    "AccountingStoragePort",
    "AccountingStorageType",
    "AccountingStorageUser",
    "AuthInfo",
    "AuthType",
    "BackupAddr",
    "BackupController",
    "BatchStartTimeout",
    "ClusterName",
    "CommunicationParameters",
    "ControlAddr",
    "ControlMachine",
    "CredType",
    "DefMemPerCPU",
    "DefMemPerNode",
    "Epilog",
    "FirstJobId",
    "GresTypes",
    "HealthCheckInterval",
    "HealthCheckProgram",
    "InactiveLimit",
    "JobAcctGatherType",
    "JobCompType",
    "KillWait",
    "MaxArraySize",
    "MaxJobCount",
    "MaxMemPerCPU",
    "MaxMemPerNode",
    "MessageTimeout",
    "MinJobAge",
    "MpiDefault",
    "OverTimeLimit",
    "PriorityType",
    "PriorityWeightAge",
    "PriorityWeightAssoc",
    "PriorityWeightFairshare",
    "PriorityWeightJobSize",
    "PriorityWeightPartition",
    "PriorityWeightQOS",
    "PriorityWeightTRES",
    "ProctrackType",
    "Prolog",
    "PrologFlags",
    "ReturnToService",
    "SchedulerParameters",
    "SchedulerType",
    "SelectType",
    "SelectTypeParameters",
    "SlurmctldAddr",
    "SlurmctldDebug",
    "SlurmctldLogFile",
    "SlurmctldParameters",
    "SlurmctldPidFile",
    "SlurmctldPort",
    "SlurmctldTimeout",
    "SlurmdDebug",
    "SlurmdLogFile",
    "SlurmdParameters",
    "SlurmdPidFile",
    "SlurmdPort",
    "SlurmdSpoolDir",
    "SlurmdTimeout",
    "SlurmdUser",
    "SlurmUser",
    "StateSaveLocation",
    "TaskPlugin",
    "TmpFS",
    "TreeWidth",
];

/// Reads a record's fields, preferring the line over its DEFAULT line.
struct Pick<'a> {
    tbl: &'a Fields,
    dflt: &'a Fields,
}

impl<'a> Pick<'a> {
    fn str(&self, name: &str) -> Option<&'a str> {
        self.tbl.get(name).or_else(|| self.dflt.get(name))
    }
    fn string(&self, name: &str) -> Option<String> {
        self.str(name).map(str::to_string)
    }
    fn u16(&self, name: &str) -> Option<u16> {
        self.str(name).and_then(|v| units::parse_u16(v).ok())
    }
    fn u32(&self, name: &str) -> Option<u32> {
        self.str(name).and_then(|v| units::parse_u32(v).ok())
    }
    fn u64(&self, name: &str) -> Option<u64> {
        self.str(name).and_then(|v| units::parse_u64(v).ok())
    }
    fn bool(&self, name: &str) -> Option<bool> {
        self.str(name).and_then(units::parse_bool)
    }
    fn tbl_bool(&self, name: &str) -> Option<bool> {
        self.tbl.get(name).and_then(units::parse_bool)
    }
}

fn extras(p: &Pick<'_>, names: &[&str]) -> BTreeMap<String, String> {
    names
        .iter()
        .filter_map(|n| p.string(n).map(|v| (n.to_string(), v)))
        .collect()
}

fn hostlist(at: &Location, key: &str, value: &str) -> Result<Hostlist, ConfError> {
    Hostlist::parse(value).map_err(|e| ConfError::Hostlist {
        at: at.clone(),
        key: key.to_string(),
        value: value.to_string(),
        source: e,
    })
}

/// Checks a CPU id list like `0-3,8` against the CPU count.
fn cpu_list_fits(list: &str, cpus: u16) -> bool {
    list.split(',').all(|part| {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        match (lo.trim().parse::<u32>(), hi.trim().parse::<u32>()) {
            (Ok(l), Ok(h)) => l <= h && h < u32::from(cpus),
            _ => false,
        }
    })
}

#[derive(Default)]
struct Builder {
    raw: BTreeMap<String, RawEntry>,
    node_default: Fields,
    part_default: Fields,
    nodes: Vec<NodeConf>,
    partitions: Vec<PartitionConf>,
    nodesets: Vec<NodeSetConf>,
    down_nodes: Vec<DownNodesConf>,
    hosts: Vec<ControllerHost>,
    other_records: Vec<RecordLine>,
    warnings: Vec<String>,
}

impl LineSink for Builder {
    fn line(&mut self, line: &Line) -> Result<(), ConfError> {
        let at = &line.at;
        let Some((p, kw)) = lexer::keyword_pair(line, keywords::SLURM_CONF)? else {
            return Ok(());
        };
        if kw.kind == Kind::Line {
            return self.record(kw, p.value, p.rest, at);
        }
        lexer::expect_end(p.rest, at)?;
        kw.check(p.value, at)?;
        if kw.is_defunct() {
            self.warnings
                .push(format!("{at}: {} is defunct and ignored", kw.name));
        }
        let entry = self
            .raw
            .entry(kw.name.to_ascii_lowercase())
            .or_insert_with(|| RawEntry {
                key: kw.name,
                values: Vec::new(),
                at: at.clone(),
            });
        if kw.kind != Kind::Array && !entry.values.is_empty() {
            self.warnings.push(format!(
                "{at}: {} specified more than once, latest value used",
                kw.name
            ));
            entry.values.clear();
        }
        entry.values.push(p.value.to_string());
        entry.at = at.clone();
        Ok(())
    }

    fn cluster_name(&self) -> Option<String> {
        self.raw
            .get("clustername")
            .and_then(|e| e.values.last().cloned())
    }
}

impl Builder {
    fn record(
        &mut self,
        kw: &'static Keyword,
        value: &str,
        rest: &str,
        at: &Location,
    ) -> Result<(), ConfError> {
        match kw.name {
            "NodeName" => {
                let f = parse_fields(rest, keywords::NODE, at)?;
                if value.eq_ignore_ascii_case("DEFAULT") {
                    for k in ["NodeHostname", "BcastAddr", "NodeAddr"] {
                        if f.has(k) {
                            return Err(ConfError::invalid(
                                at,
                                format!("{k} not allowed with NodeName=DEFAULT"),
                            ));
                        }
                    }
                    self.node_default = f.merged_over(&self.node_default);
                } else if value.eq_ignore_ascii_case("ALL") {
                    return Err(ConfError::invalid(
                        at,
                        "'ALL' is a reserved word disallowed for use with NodeName",
                    ));
                } else {
                    let n = self.build_node(value, &f, at)?;
                    self.nodes.push(n);
                }
            }
            "PartitionName" => {
                let f = parse_fields(rest, keywords::PARTITION, at)?;
                if value.eq_ignore_ascii_case("DEFAULT") {
                    self.part_default = f.merged_over(&self.part_default);
                } else {
                    let p = self.build_partition(value, &f, at)?;
                    self.partitions.push(p);
                }
            }
            "NodeSet" => {
                let f = parse_fields(rest, keywords::NODESET, at)?;
                self.nodesets.push(NodeSetConf {
                    name: value.to_string(),
                    nodes: f.get("Nodes").map(str::to_string),
                    feature: f.get("Feature").map(str::to_string),
                    at: at.clone(),
                });
            }
            "DownNodes" => {
                let f = parse_fields(rest, keywords::DOWN_NODES, at)?;
                self.down_nodes.push(DownNodesConf {
                    names: hostlist(at, "DownNodes", value)?,
                    state: f.get("State").map(str::to_string),
                    reason: f.get("Reason").unwrap_or("Set in slurm.conf").to_string(),
                    at: at.clone(),
                });
            }
            "SlurmctldHost" => {
                parse_fields(rest, keywords::SLURMCTLD_HOST, at)?;
                self.hosts.push(parse_controller(value, at)?);
            }
            _ => {
                let table = if kw.name == "PowerAction" {
                    keywords::POWER_ACTION
                } else {
                    keywords::FRONTEND
                };
                let f = parse_fields(rest, table, at)?;
                if kw.name == "PowerAction" {
                    let loc = f.get("Location").unwrap_or("");
                    if !loc.eq_ignore_ascii_case("slurmctld") && !loc.eq_ignore_ascii_case("slurmd")
                    {
                        return Err(ConfError::value(
                            at,
                            "Location",
                            "PowerAction location",
                            loc,
                        ));
                    }
                    if f.get("Program").is_none_or(str::is_empty) {
                        return Err(ConfError::invalid(
                            at,
                            format!("PowerAction {value} requires Program="),
                        ));
                    }
                }
                self.other_records.push(RecordLine {
                    keyword: kw.name,
                    value: value.to_string(),
                    fields: f
                        .items
                        .iter()
                        .map(|(k, v)| (k.name.to_string(), v.clone()))
                        .collect(),
                    at: at.clone(),
                });
            }
        }
        Ok(())
    }

    fn build_node(
        &mut self,
        value: &str,
        f: &Fields,
        at: &Location,
    ) -> Result<NodeConf, ConfError> {
        let dflt = self.node_default.clone();
        let p = Pick {
            tbl: f,
            dflt: &dflt,
        };
        let names = hostlist(at, "NodeName", value)?;
        let hostnames_s = f.get("NodeHostname").unwrap_or(value);
        let addrs_s = f.get("NodeAddr").unwrap_or(hostnames_s);
        let hostnames = hostlist(at, "NodeHostname", hostnames_s)?;
        let addrs = hostlist(at, "NodeAddr", addrs_s)?;
        let bcast_addrs = match f.get("BcastAddr") {
            Some(b) => Some(hostlist(at, "BcastAddr", b)?),
            None => None,
        };
        let mut warn = |msg: String| self.warnings.push(format!("{at}: NodeNames={value} {msg}"));

        let features = f
            .get("Feature")
            .or_else(|| f.get("Features"))
            .or_else(|| dflt.get("Feature"))
            .or_else(|| dflt.get("Features"))
            .map(str::to_string);
        let cpus_given = f
            .get("CPUs")
            .or_else(|| dflt.get("CPUs"))
            .or_else(|| f.get("Procs"))
            .or_else(|| dflt.get("Procs"))
            .and_then(|v| units::parse_u16(v).ok());
        let mut boards = p.u16("Boards").unwrap_or(1);
        let mut cores = p.u16("CoresPerSocket").unwrap_or(1);
        let mut threads = p.u16("ThreadsPerCore").unwrap_or(1);
        let sockets_given = p.u16("Sockets");
        let spb_given = p.u16("SocketsPerBoard");
        let mut core_spec_count = p.u16("CoreSpecCount").unwrap_or(0);
        let real_memory = p.u64("RealMemory").unwrap_or(1);
        let mut mem_spec_limit = p.u64("MemSpecLimit").unwrap_or(0);
        let mut weight = p.u32("Weight").unwrap_or(1);
        if weight == INFINITE {
            weight -= 1;
        }

        // Topology inference and sanity resets follow stock's order; stock
        // logs and repairs these rather than failing.
        if cores == 0 {
            warn("CoresPerSocket=0 is invalid, reset to 1".into());
            cores = 1;
        }
        let mut cpus = cpus_given.unwrap_or(1);
        if cpus == 0 {
            warn("CPUs=0 is invalid, reset to 1".into());
            cpus = 1;
        }
        if threads == 0 {
            warn("ThreadsPerCore=0 is invalid, reset to 1".into());
            threads = 1;
        }
        let mut spb = spb_given.unwrap_or(1);
        if spb == 0 {
            warn("SocketsPerBoard=0 is invalid, reset to 1".into());
            spb = 1;
        }
        let mut sockets = sockets_given.unwrap_or(1);
        if sockets == 0 {
            warn("Sockets=0 is invalid, reset to 1".into());
            sockets = 1;
        }
        let mut no_sockets = sockets_given.is_none();
        if spb_given.is_some() && sockets_given.is_some() {
            warn("Sockets=# and SocketsPerBoard=# is invalid, using SocketsPerBoard".into());
            no_sockets = true;
        }
        if boards == 0 {
            warn("Boards=0 is invalid, reset to 1".into());
            boards = 1;
        }
        let ct = u64::from(cores) * u64::from(threads);
        if no_sockets {
            if spb_given.is_some() {
                sockets = (u64::from(boards) * u64::from(spb)) as u16;
            } else if cpus_given.is_some() && u64::from(cpus) / ct > 0 && u64::from(cpus) % ct == 0
            {
                sockets = (u64::from(cpus) / ct) as u16;
            } else {
                sockets = boards;
            }
        }
        if cpus_given.is_none() {
            cpus = (u64::from(sockets) * ct) as u16;
        }
        if sockets < boards {
            warn(format!(
                "Sockets({sockets}) < Boards({boards}) resetting Boards=1"
            ));
            boards = 1;
        }
        let s = u64::from(sockets);
        let c = u64::from(cpus);
        if c != s && c != s * u64::from(cores) && c != s * ct {
            warn(format!(
                "CPUs={cpus} match no Sockets, Sockets*CoresPerSocket or Sockets*CoresPerSocket*ThreadsPerCore. Resetting CPUs."
            ));
            cpus = (s * ct) as u16;
        }
        if u64::from(core_spec_count) >= s * u64::from(cores) {
            warn(format!(
                "CoreSpecCount={core_spec_count} is invalid, reset to 1"
            ));
            core_spec_count = 1;
        }
        let mut cpu_spec_list = p.string("CPUSpecList");
        if let Some(list) = &cpu_spec_list {
            if !cpu_list_fits(list, cpus) {
                warn(format!(
                    "CpuSpecList={list} does not fit CPUs={cpus}, ignored"
                ));
                cpu_spec_list = None;
            }
        }
        if core_spec_count > 0 && cpu_spec_list.is_some() {
            warn(format!(
                "CoreSpecCount={core_spec_count} is invalid with CPUSpecList, reset to 0"
            ));
            core_spec_count = 0;
        }
        if mem_spec_limit >= real_memory {
            warn(format!(
                "MemSpecLimit={mem_spec_limit} is invalid, reset to 0"
            ));
            mem_spec_limit = 0;
        }

        Ok(NodeConf {
            names,
            hostnames,
            addrs,
            bcast_addrs,
            boards,
            sockets,
            cores_per_socket: cores,
            threads_per_core: threads,
            cpus,
            real_memory,
            tmp_disk: p.u32("TmpDisk").unwrap_or(0),
            gres: p.string("Gres"),
            features,
            weight,
            state: p.string("State"),
            port: p.string("Port"),
            reason: p.string("Reason"),
            cpu_spec_list,
            core_spec_count,
            mem_spec_limit,
            cpu_bind: p.string("CpuBind"),
            tres_weights: p.string("TRESWeights"),
            restricted_cores_per_gpu: p.u16("RestrictedCoresPerGPU").unwrap_or(0),
            extra: extras(&p, &["GresConf", "Parameters", "SuspendTime", "Topology"]),
            at: at.clone(),
        })
    }

    fn build_partition(
        &mut self,
        name: &str,
        f: &Fields,
        at: &Location,
    ) -> Result<PartitionConf, ConfError> {
        let dflt = self.part_default.clone();
        let p = Pick {
            tbl: f,
            dflt: &dflt,
        };
        let not_all = |v: Option<String>| v.filter(|s| !s.eq_ignore_ascii_case("ALL"));

        let allow_accounts = not_all(p.str("AllowAccounts").map(str::to_lowercase));
        let allow_qos = not_all(p.str("AllowQos").map(str::to_lowercase));
        let mut deny_accounts = p.string("DenyAccounts");
        if allow_accounts.is_some() && deny_accounts.is_some() {
            self.warnings.push(format!(
                "{at}: both AllowAccounts and DenyAccounts are defined, DenyAccounts will be ignored"
            ));
        } else {
            deny_accounts = deny_accounts.map(|s| s.to_lowercase());
        }
        let mut deny_qos = p.string("DenyQos");
        if allow_qos.is_some() && deny_qos.is_some() {
            self.warnings.push(format!(
                "{at}: both AllowQos and DenyQos are defined, DenyQos will be ignored"
            ));
        } else {
            deny_qos = deny_qos.map(|s| s.to_lowercase());
        }

        let time = |key: &str| -> Result<Option<TimeLimit>, ConfError> {
            match p.str(key) {
                None => Ok(None),
                Some(v) => units::parse_minutes(v)
                    .map(Some)
                    .ok_or_else(|| ConfError::value(at, key, "time", v)),
            }
        };
        let max_time = time("MaxTime")?.unwrap_or(TimeLimit::Unlimited);
        let default_time = time("DefaultTime")?;

        let mem = |node_key: &str, cpu_key: &str, warnings: &mut Vec<String>| match (
            p.u64(node_key),
            p.u64(cpu_key),
        ) {
            (Some(n), c) => {
                if c.is_some() {
                    warnings.push(format!(
                        "{at}: {cpu_key} ignored, since it's mutually exclusive with {node_key}"
                    ));
                }
                Some(MemLimit::PerNode(n))
            }
            (None, Some(c)) => Some(MemLimit::PerCpu(c)),
            (None, None) => None,
        };
        let def_mem = mem("DefMemPerNode", "DefMemPerCPU", &mut self.warnings);
        let max_mem = mem("MaxMemPerNode", "MaxMemPerCPU", &mut self.warnings);

        let over_time_limit = match p.str("OverTimeLimit") {
            None => None,
            Some(v)
                if v.eq_ignore_ascii_case("INFINITE") || v.eq_ignore_ascii_case("UNLIMITED") =>
            {
                Some(INFINITE16)
            }
            Some(v) => {
                let i = units::c_atol(v);
                if i < 0 {
                    self.warnings
                        .push(format!("{at}: ignoring bad OverTimeLimit value: {v}"));
                    None
                } else if i > 0xfffe {
                    Some(INFINITE16)
                } else {
                    Some(i as u16)
                }
            }
        };

        let over_subscribe = match p.str("OverSubscribe").or_else(|| p.str("Shared")) {
            None => OverSubscribe::No,
            Some(v) => self.over_subscribe(v, at)?,
        };

        let select_type_parameters = match f.get("SelectTypeParameters") {
            None => None,
            Some(v) => {
                let known = ["CR_Core_Memory", "CR_Core", "CR_Socket_Memory", "CR_Socket"];
                let ok = known.iter().any(|k| {
                    v.get(..k.len())
                        .is_some_and(|head| head.eq_ignore_ascii_case(k))
                });
                if !ok {
                    return Err(ConfError::value(at, "SelectTypeParameters", "partition", v));
                }
                Some(v.to_string())
            }
        };

        let suspend_time = match f.get("SuspendTime") {
            None => None,
            Some(v) if v.eq_ignore_ascii_case("INFINITE") || v == "-1" => Some(INFINITE),
            Some(v) => {
                let n = units::c_atol(v);
                Some(u32::try_from(n).map_err(|_| ConfError::value(at, "SuspendTime", "time", v))?)
            }
        };

        let state = match p.str("State") {
            None => PartitionState::Up,
            Some(v) => {
                let starts = |w: &str| v.get(..w.len()).is_some_and(|h| h.eq_ignore_ascii_case(w));
                if starts("DOWN") {
                    PartitionState::Down
                } else if starts("UP") {
                    PartitionState::Up
                } else if starts("DRAIN") {
                    PartitionState::Drain
                } else if starts("INACTIVE") {
                    PartitionState::Inactive
                } else {
                    return Err(ConfError::value(at, "State", "partition state", v));
                }
            }
        };

        let mut priority_tier = p.u16("PriorityTier").unwrap_or(1);
        let mut priority_job_factor = p.u16("PriorityJobFactor").unwrap_or(1);
        if let Some(pr) = p.u16("Priority") {
            priority_tier = pr;
            priority_job_factor = pr;
        }

        Ok(PartitionConf {
            name: name.to_string(),
            nodes: p.str("Nodes").map(|n| {
                n.chars()
                    .map(|c| if c.is_whitespace() { ',' } else { c })
                    .collect()
            }),
            default: p.bool("Default").unwrap_or(false),
            hidden: p.bool("Hidden").unwrap_or(false),
            root_only: p.bool("RootOnly").unwrap_or(false),
            req_resv: p.bool("ReqResv").unwrap_or(false),
            lln: p.bool("LLN").unwrap_or(false),
            exclusive_user: p.tbl_bool("ExclusiveUser").unwrap_or(false),
            exclusive_topo: p.tbl_bool("ExclusiveTopo").unwrap_or(false),
            power_down_on_idle: p.tbl_bool("PowerDownOnIdle").unwrap_or(false),
            disable_root_jobs: p.tbl_bool("DisableRootJobs"),
            state,
            max_time,
            default_time,
            max_nodes: p.u32("MaxNodes").unwrap_or(INFINITE),
            min_nodes: p.u32("MinNodes").unwrap_or(0),
            max_cpus_per_node: p.u32("MaxCPUsPerNode").unwrap_or(INFINITE),
            max_cpus_per_socket: p.u32("MaxCPUsPerSocket").unwrap_or(INFINITE),
            def_mem,
            max_mem,
            def_cpu_per_gpu: p.u64("DefCPUPerGPU"),
            def_mem_per_gpu: p.u64("DefMemPerGPU"),
            allow_accounts,
            allow_groups: not_all(p.string("AllowGroups")),
            allow_qos,
            deny_accounts,
            deny_qos,
            alloc_nodes: not_all(p.string("AllocNodes")),
            alternate: p.string("Alternate"),
            cpu_bind: p.string("CpuBind"),
            priority_tier,
            priority_job_factor,
            over_subscribe,
            over_time_limit,
            qos: p.string("QOS"),
            grace_time: p.u32("GraceTime").unwrap_or(0),
            preempt_mode: p.string("PreemptMode"),
            tres_billing_weights: p.string("TRESBillingWeights"),
            select_type_parameters,
            resume_timeout: p.u16("ResumeTimeout"),
            suspend_time,
            suspend_timeout: p.u16("SuspendTimeout"),
            extra: extras(&p, &["Exclusive", "Topology"]),
            at: at.clone(),
        })
    }

    fn over_subscribe(&mut self, v: &str, at: &Location) -> Result<OverSubscribe, ConfError> {
        let head = |w: &str| v.get(..w.len()).is_some_and(|h| h.eq_ignore_ascii_case(w));
        let tail = |n: usize| units::c_atol(v.get(n..).unwrap_or(""));
        Ok(if v.eq_ignore_ascii_case("NO") {
            OverSubscribe::No
        } else if v.eq_ignore_ascii_case("EXCLUSIVE") {
            OverSubscribe::Exclusive
        } else if head("YES:") {
            let i = tail(4);
            if i <= 1 {
                self.warnings
                    .push(format!("{at}: ignoring bad OverSubscribe value: {v}"));
                OverSubscribe::No
            } else {
                OverSubscribe::Yes(i.min(0x7fff) as u16)
            }
        } else if v.eq_ignore_ascii_case("YES") {
            OverSubscribe::Yes(4)
        } else if head("FORCE:") {
            let i = tail(6);
            if i < 1 {
                self.warnings
                    .push(format!("{at}: ignoring bad OverSubscribe value: {v}"));
                OverSubscribe::No
            } else {
                OverSubscribe::Force(i.min(0x7fff) as u16)
            }
        } else if v.eq_ignore_ascii_case("FORCE") {
            OverSubscribe::Force(4)
        } else {
            return Err(ConfError::value(at, "OverSubscribe", "OverSubscribe", v));
        })
    }

    fn last(&self, key: &str) -> Option<&str> {
        self.raw
            .get(&key.to_ascii_lowercase())
            .and_then(|e| e.values.last())
            .map(String::as_str)
    }

    fn at(&self, key: &str, file: &Location) -> Location {
        self.raw
            .get(&key.to_ascii_lowercase())
            .map(|e| e.at.clone())
            .unwrap_or_else(|| file.clone())
    }

    fn string(&self, key: &str) -> Option<String> {
        self.last(key).map(str::to_string)
    }

    fn u16_or(&self, key: &str, d: u16) -> u16 {
        self.last(key)
            .and_then(|v| units::parse_u16(v).ok())
            .unwrap_or(d)
    }

    fn u32_or(&self, key: &str, d: u32) -> u32 {
        self.last(key)
            .and_then(|v| units::parse_u32(v).ok())
            .unwrap_or(d)
    }

    fn u64(&self, key: &str) -> Option<u64> {
        self.last(key).and_then(|v| units::parse_u64(v).ok())
    }

    /// A plugin option where a value containing `none` means unset.
    fn plugin(&self, key: &str) -> Option<String> {
        self.string(key)
            .filter(|v| !v.to_ascii_lowercase().contains("none"))
    }

    fn controllers(&mut self, file: &Location) -> Result<Vec<ControllerHost>, ConfError> {
        let legacy = [
            "ControlMachine",
            "ControlAddr",
            "BackupController",
            "BackupAddr",
        ];
        let mut hosts = std::mem::take(&mut self.hosts);
        if !hosts.is_empty() {
            for k in legacy {
                if self.last(k).is_some() {
                    self.warnings.push(format!(
                        "{}: ignoring {k} since SlurmctldHost is set",
                        self.at(k, file)
                    ));
                }
            }
        } else {
            let Some(machine) = self.string("ControlMachine") else {
                return Err(ConfError::invalid(file, "No SlurmctldHost defined"));
            };
            let addr = self.string("ControlAddr");
            if addr.is_none() && machine.contains(',') {
                return Err(ConfError::invalid(
                    &self.at("ControlMachine", file),
                    "ControlMachine has multiple host names, so ControlAddr must be specified",
                ));
            }
            hosts.push(ControllerHost {
                addr: addr.unwrap_or_else(|| machine.clone()),
                hostname: machine,
            });
            let backup = self.string("BackupController");
            let backup_addr = self.string("BackupAddr");
            match (backup, backup_addr) {
                (Some(b), a) => hosts.push(ControllerHost {
                    addr: a.unwrap_or_else(|| b.clone()),
                    hostname: b,
                }),
                (None, Some(_)) => {
                    return Err(ConfError::invalid(
                        &self.at("BackupAddr", file),
                        "BackupAddr specified without BackupController",
                    ))
                }
                (None, None) => {}
            }
        }
        for (i, h) in hosts.iter().enumerate() {
            if hosts.iter().take(i).any(|o| o.hostname == h.hostname) {
                return Err(ConfError::invalid(
                    file,
                    format!("Duplicate SlurmctldHost records: {}", h.hostname),
                ));
            }
        }
        Ok(hosts)
    }

    fn slurmctld_port(&self, file: &Location) -> Result<PortRange, ConfError> {
        let Some(v) = self.last("SlurmctldPort") else {
            return Ok(PortRange {
                first: 6817,
                count: 1,
            });
        };
        let bad = || ConfError::value(&self.at("SlurmctldPort", file), "SlurmctldPort", "port", v);
        let (first, rest) = units::c_strtol_i64(v).ok_or_else(bad)?;
        if first <= 0 || first > 0xffff {
            return Err(bad());
        }
        let count = if rest.is_empty() {
            1
        } else if let Some(hi) = rest.strip_prefix('-') {
            let last = units::c_atol(hi);
            if last <= first || last > 0xffff {
                return Err(bad());
            }
            last + 1 - first
        } else {
            return Err(bad());
        };
        Ok(PortRange {
            first: first as u16,
            count: count as u16,
        })
    }

    fn log_level(&self, key: &str, file: &Location) -> Result<LogLevel, ConfError> {
        match self.last(key) {
            None => Ok(LogLevel::Info),
            Some(v) => LogLevel::parse(v)
                .ok_or_else(|| ConfError::value(&self.at(key, file), key, "log level", v)),
        }
    }

    fn mem_limit(&mut self, node_key: &str, cpu_key: &str, file: &Location) -> Option<MemLimit> {
        match (self.u64(node_key), self.u64(cpu_key)) {
            (Some(n), c) => {
                if c.is_some() {
                    let at = self.at(cpu_key, file);
                    self.warnings.push(format!(
                        "{at}: {cpu_key} ignored, since it's mutually exclusive with {node_key}"
                    ));
                }
                Some(MemLimit::PerNode(n))
            }
            (None, Some(c)) => Some(MemLimit::PerCpu(c)),
            (None, None) => None,
        }
    }

    fn finish(mut self, origin: &Path, hash_val: u32) -> Result<SlurmConf, ConfError> {
        let file = Location::new(origin.display().to_string(), 0);
        let slurmctld_hosts = self.controllers(&file)?;
        let slurmctld_port = self.slurmctld_port(&file)?;
        let slurmd_port = match self.last("SlurmdPort") {
            None => 6818,
            Some(v) => units::parse_u32(v)
                .ok()
                .and_then(|p| u16::try_from(p).ok())
                .filter(|&p| p > 0)
                .ok_or_else(|| {
                    ConfError::value(&self.at("SlurmdPort", &file), "SlurmdPort", "port", v)
                })?,
        };
        if let Some(t) = self.last("AccountingStorageType") {
            if t.to_ascii_lowercase().contains("mysql") {
                return Err(ConfError::invalid(
                    &self.at("AccountingStorageType", &file),
                    "AccountingStorageType=accounting_storage/mysql only permitted in SlurmDBD",
                ));
            }
        }
        let mut tree_width = self.u16_or("TreeWidth", 16);
        if tree_width == 0 {
            let at = self.at("TreeWidth", &file);
            self.warnings
                .push(format!("{at}: TreeWidth=0 is invalid, using 16"));
            tree_width = 16;
        }
        let def_mem = self.mem_limit("DefMemPerNode", "DefMemPerCPU", &file);
        let max_mem = self.mem_limit("MaxMemPerNode", "MaxMemPerCPU", &file);
        let params = |b: &Builder, k: &str| Params::new(b.last(k).unwrap_or(""));

        let unimplemented: Vec<&str> = self
            .raw
            .values()
            .filter(|e| !IMPLEMENTED.iter().any(|k| k.eq_ignore_ascii_case(e.key)))
            .filter(|e| {
                keywords::lookup(keywords::SLURM_CONF, e.key).is_some_and(|k| !k.is_defunct())
            })
            .map(|e| e.key)
            .chain(self.other_records.iter().map(|r| r.keyword))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        if !unimplemented.is_empty() {
            self.warnings.push(format!(
                "{file}: recognised but not implemented (kept raw): {}",
                unimplemented.join(", ")
            ));
        }

        Ok(SlurmConf {
            path: origin.to_path_buf(),
            hash_val,
            cluster_name: self.string("ClusterName"),
            slurmctld_hosts,
            slurmctld_addr: self.string("SlurmctldAddr"),
            slurmctld_port,
            slurmd_port,
            slurm_user: self.string("SlurmUser").unwrap_or_else(|| "root".into()),
            slurmd_user: self.string("SlurmdUser").unwrap_or_else(|| "root".into()),
            state_save_location: self
                .string("StateSaveLocation")
                .unwrap_or_else(|| "/var/spool".into()),
            slurmd_spool_dir: self
                .string("SlurmdSpoolDir")
                .unwrap_or_else(|| "/var/spool/slurmd".into()),
            slurmctld_log_file: self.string("SlurmctldLogFile"),
            slurmd_log_file: self.string("SlurmdLogFile"),
            slurmctld_pid_file: self
                .string("SlurmctldPidFile")
                .unwrap_or_else(|| "/var/run/slurmctld.pid".into()),
            slurmd_pid_file: self
                .string("SlurmdPidFile")
                .unwrap_or_else(|| "/var/run/slurmd.pid".into()),
            slurmctld_debug: self.log_level("SlurmctldDebug", &file)?,
            slurmd_debug: self.log_level("SlurmdDebug", &file)?,
            auth_type: self
                .string("AuthType")
                .unwrap_or_else(|| "auth/munge".into()),
            auth_info: self.string("AuthInfo"),
            cred_type: self
                .string("CredType")
                .unwrap_or_else(|| "cred/munge".into()),
            select_type: self
                .string("SelectType")
                .unwrap_or_else(|| "select/cons_tres".into()),
            select_type_parameters: params(&self, "SelectTypeParameters"),
            proctrack_type: self
                .string("ProctrackType")
                .unwrap_or_else(|| "proctrack/cgroup".into()),
            task_plugin: self.plugin("TaskPlugin"),
            gres_types: split_list(self.last("GresTypes"))
                .into_iter()
                .map(str::to_string)
                .collect(),
            return_to_service: self.u16_or("ReturnToService", 0),
            slurmd_timeout: self.u16_or("SlurmdTimeout", 300),
            slurmctld_timeout: self.u16_or("SlurmctldTimeout", 120),
            message_timeout: self.u16_or("MessageTimeout", 10),
            batch_start_timeout: self.u16_or("BatchStartTimeout", 10),
            kill_wait: self.u16_or("KillWait", 30),
            over_time_limit: self.u16_or("OverTimeLimit", 0),
            inactive_limit: self.u16_or("InactiveLimit", 0),
            min_job_age: self.u32_or("MinJobAge", 300),
            max_job_count: self.u32_or("MaxJobCount", 10000),
            first_job_id: self.u32_or("FirstJobId", 1),
            max_array_size: self.u32_or("MaxArraySize", 1001),
            prolog: self
                .raw
                .get("prolog")
                .map(|e| e.values.clone())
                .unwrap_or_default(),
            epilog: self
                .raw
                .get("epilog")
                .map(|e| e.values.clone())
                .unwrap_or_default(),
            prolog_flags: params(&self, "PrologFlags"),
            accounting_storage_type: self.plugin("AccountingStorageType"),
            accounting_storage_host: self.string("AccountingStorageHost"),
            accounting_storage_port: self
                .last("AccountingStoragePort")
                .and_then(|v| units::parse_u16(v).ok()),
            accounting_storage_user: self.string("AccountingStorageUser"),
            job_acct_gather_type: self.plugin("JobAcctGatherType"),
            job_comp_type: self.plugin("JobCompType"),
            scheduler_type: self
                .string("SchedulerType")
                .unwrap_or_else(|| "sched/backfill".into()),
            scheduler_parameters: params(&self, "SchedulerParameters"),
            priority_type: self
                .string("PriorityType")
                .unwrap_or_else(|| "priority/multifactor".into()),
            priority_weights: PriorityWeights {
                age: self.u32_or("PriorityWeightAge", 0),
                assoc: self.u32_or("PriorityWeightAssoc", 0),
                fairshare: self.u32_or("PriorityWeightFairshare", 0),
                job_size: self.u32_or("PriorityWeightJobSize", 0),
                partition: self.u32_or("PriorityWeightPartition", 0),
                qos: self.u32_or("PriorityWeightQOS", 0),
                tres: self.string("PriorityWeightTRES"),
            },
            slurmd_parameters: params(&self, "SlurmdParameters"),
            slurmctld_parameters: params(&self, "SlurmctldParameters"),
            communication_parameters: params(&self, "CommunicationParameters"),
            def_mem,
            max_mem,
            mpi_default: self.string("MpiDefault").filter(|v| {
                let l = v.to_ascii_lowercase();
                !l.contains("none") && !l.contains("openmpi")
            }),
            tree_width,
            tmp_fs: self.string("TmpFS").unwrap_or_else(|| "/tmp".into()),
            health_check_program: self.string("HealthCheckProgram"),
            health_check_interval: self.u16_or("HealthCheckInterval", 0),
            nodes: self.nodes,
            partitions: self.partitions,
            nodesets: self.nodesets,
            down_nodes: self.down_nodes,
            other_records: self.other_records,
            warnings: self.warnings,
            raw: self.raw,
        })
    }
}

/// `name` or `name(addr)`.
fn parse_controller(value: &str, at: &Location) -> Result<ControllerHost, ConfError> {
    let open = value.find('(');
    let close = value.find(')');
    let bad = || ConfError::value(at, "SlurmctldHost", "host", value);
    match (open, close) {
        (None, None) => Ok(ControllerHost {
            hostname: value.to_string(),
            addr: value.to_string(),
        }),
        (Some(o), Some(c)) if c + 1 == value.len() && value.rfind(')') == Some(c) && o < c => {
            Ok(ControllerHost {
                hostname: value.get(..o).ok_or_else(bad)?.to_string(),
                addr: value.get(o + 1..c).ok_or_else(bad)?.to_string(),
            })
        }
        _ => Err(bad()),
    }
}
