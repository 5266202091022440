//! Compatibility harness: runs scenarios of unmodified upstream Slurm client
//! commands (Debian's 22.05, 24.11 and 26.05) against clusters brought up by
//! `scripts/cluster`, once with stock daemons of the client's version and once
//! with ours (`--impl rs`, one controller serving all three client versions),
//! and writes a matrix scenario x version x implementation.
//!
//! Environment knobs (all optional):
//! - `COMPAT_SCENARIO`  comma-separated scenario names (default: all)
//! - `COMPAT_VERSIONS`  comma-separated client versions (default: 22.05,24.11,26.05)
//! - `COMPAT_IMPLS`     comma-separated: stock,rs,mixed,stockd (default: all). mixed =
//!   stock slurmctld of the client's version + slurmd-rs nodes; stockd =
//!   slurmctld-rs + stock slurmd nodes of the client's version; each runs only
//!   the scenarios that ask for it (`Scenario::runs_on`)
//! - `COMPAT_NODES`     nodes per cluster (default 2; scenarios assume 2)
//! - `COMPAT_BUILD_RS`  1 (default): `cargo build -p slurmctld-rs -p slurmd-rs` before the rs/mixed runs
//! - `COMPAT_REPORT`    report path (default: <target dir>/compat-report.md)
//! - `COMPAT_KEEP`      1: leave clusters up afterwards (for debugging)
//! - `COMPAT_JOBS`      clusters run at once (default 4)
//! - `COMPAT_NAME`      suffix of the cluster names (default: the checkout's directory name)
#![forbid(unsafe_code)]

pub mod cluster;
pub mod normalize;
pub mod readme;
pub mod scenarios;
pub mod xfail;

use cluster::{repo_root, Cluster, Impl};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub const ALL_VERSIONS: &[&str] = &["22.05", "24.11", "26.05"];
/// Where scripts/setup keeps the rootfs and the munge key (as in scripts/lib/common.sh).
fn cache_dir() -> PathBuf {
    PathBuf::from(std::env::var("SLURM_RS_CACHE").unwrap_or_else(|_| "/var/cache/slurm-rs".into()))
}

/// Suffix of this checkout's cluster names, so that runs from several
/// worktrees on one machine never bring down each other's clusters:
/// `COMPAT_NAME` if set, else the checkout directory's name (letters and
/// digits, at most 12).
pub fn name_tag() -> String {
    let raw = std::env::var("COMPAT_NAME").unwrap_or_else(|_| {
        repo_root()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    raw.to_ascii_lowercase()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .take(12)
        .collect()
}

/// Progress and report lines go straight to stderr, past libtest's capture.
pub fn say(msg: &str) {
    let _ = writeln!(std::io::stderr(), "{msg}");
}

pub struct Options {
    pub scenarios: Option<Vec<String>>,
    pub versions: Vec<String>,
    pub impls: Vec<Impl>,
    pub nodes: u32,
    pub build_rs: bool,
    pub report: PathBuf,
}

fn list_env(name: &str) -> Option<Vec<String>> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .map(|v| {
            v.split([',', ' '])
                .filter(|s| !s.is_empty())
                .map(|s| s.to_string())
                .collect()
        })
}

/// The cargo target dir: that of this test binary (target/<profile>/deps/x).
pub fn target_dir() -> PathBuf {
    if let Ok(d) = std::env::var("CARGO_TARGET_DIR") {
        return PathBuf::from(d);
    }
    std::env::current_exe()
        .ok()
        .and_then(|p| p.ancestors().nth(3).map(Path::to_path_buf))
        .filter(|p| p.join("CACHEDIR.TAG").exists())
        .unwrap_or_else(|| repo_root().join("target"))
}

impl Options {
    pub fn from_env() -> Result<Options, String> {
        let versions = list_env("COMPAT_VERSIONS")
            .unwrap_or_else(|| ALL_VERSIONS.iter().map(|s| s.to_string()).collect());
        for v in &versions {
            if !ALL_VERSIONS.contains(&v.as_str()) {
                return Err(format!(
                    "COMPAT_VERSIONS: unknown version {v} (use {})",
                    ALL_VERSIONS.join(",")
                ));
            }
        }
        let impls = match list_env("COMPAT_IMPLS") {
            None => vec![Impl::Stock, Impl::Rs, Impl::Mixed, Impl::Stockd],
            Some(l) => l
                .iter()
                .map(|s| {
                    Impl::parse(s).ok_or_else(|| {
                        format!(
                            "COMPAT_IMPLS: unknown implementation {s} (use stock,rs,mixed,stockd)"
                        )
                    })
                })
                .collect::<Result<_, _>>()?,
        };
        let scenarios = list_env("COMPAT_SCENARIO");
        if let Some(l) = &scenarios {
            let known: Vec<&str> = scenarios::all().iter().map(|s| s.name).collect();
            for s in l {
                if !known.contains(&s.as_str()) {
                    return Err(format!(
                        "COMPAT_SCENARIO: unknown scenario {s} (known: {})",
                        known.join(",")
                    ));
                }
            }
        }
        Ok(Options {
            scenarios,
            versions,
            impls,
            nodes: std::env::var("COMPAT_NODES")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(2),
            build_rs: std::env::var("COMPAT_BUILD_RS")
                .map(|v| v != "0")
                .unwrap_or(true),
            report: std::env::var("COMPAT_REPORT")
                .map(PathBuf::from)
                .unwrap_or_else(|_| target_dir().join("compat-report.md")),
        })
    }
}

/// Missing prerequisites are errors naming the fix, never silent skips.
pub fn check_prereqs(opts: &Options) -> Result<(), String> {
    let fix = "run `scripts/setup` (as root) first";
    let uid = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1).unwrap_or("").to_string())
        });
    if uid.as_deref() != Some("0") {
        return Err(
            "compat tests must run as root (they create network namespaces and mounts)".into(),
        );
    }
    for tool in ["nsenter", "unshare", "ip", "scontrol"] {
        if !Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
        {
            return Err(format!("`{tool}` is not installed: {fix}"));
        }
    }
    let cache = cache_dir();
    if !cache.join("munge.key").exists() {
        return Err(format!(
            "no munge key at {}/munge.key: {fix}",
            cache.display()
        ));
    }
    let mut need: Vec<&str> = opts.versions.iter().map(|s| s.as_str()).collect();
    if opts.impls.iter().any(|&i| i != Impl::Stock) {
        need.push("22.05"); // our daemons run in the bookworm rootfs
    }
    for v in need {
        let suite = match v {
            "22.05" => "bookworm",
            "24.11" => "trixie",
            _ => "forky",
        };
        for f in ["usr/sbin/slurmctld", "usr/sbin/munged", "usr/bin/sinfo"] {
            let p = cache.join("rootfs").join(suite).join(f);
            if !p.exists() {
                return Err(format!(
                    "rootfs for Slurm {v} is missing {} : {fix}",
                    p.display()
                ));
            }
        }
    }
    Ok(())
}

#[derive(Debug, Clone)]
pub enum Outcome {
    Pass,
    Fail(String),
    XFail {
        reason: &'static str,
        detail: String,
    },
    XPass {
        reason: &'static str,
    },
}

impl Outcome {
    pub fn is_failure(&self) -> bool {
        matches!(self, Outcome::Fail(_) | Outcome::XPass { .. })
    }
    fn tag(&self) -> &'static str {
        match self {
            Outcome::Pass => "PASS",
            Outcome::Fail(_) => "**FAIL**",
            Outcome::XFail { .. } => "XFAIL",
            Outcome::XPass { .. } => "**XPASS**",
        }
    }
}

pub struct Cell {
    pub scenario: &'static str,
    pub version: String,
    pub imp: Impl,
    pub outcome: Outcome,
    pub secs: f64,
}

pub struct Report {
    pub cells: Vec<Cell>,
    /// Cluster bring-up problems, by (impl, version label).
    pub setup: Vec<String>,
    pub elapsed: Duration,
    pub opts_versions: Vec<String>,
    pub opts_impls: Vec<Impl>,
}

/// Raw result of one scenario run, before the xfail marks are applied.
enum Raw {
    Ok,
    Err(String),
    /// The cluster never came up; the message is in Report::setup.
    NoCluster(String),
}

fn judge(imp: Impl, scenario: &'static str, version: &str, raw: Raw) -> Outcome {
    let mark = xfail::lookup(imp.as_str(), scenario, version);
    match (raw, mark) {
        (Raw::Ok, None) => Outcome::Pass,
        (Raw::Ok, Some(reason)) => Outcome::XPass { reason },
        (Raw::Err(e), None) => Outcome::Fail(e),
        (Raw::NoCluster(e), None) => Outcome::Fail(e),
        (Raw::Err(e), Some(reason)) => Outcome::XFail { reason, detail: e },
        (Raw::NoCluster(e), Some(reason)) => Outcome::XFail { reason, detail: e },
    }
}

fn selected(opts: &Options) -> Vec<scenarios::Scenario> {
    scenarios::all()
        .into_iter()
        .filter(|s| {
            opts.scenarios
                .as_ref()
                .is_none_or(|l| l.iter().any(|n| n == s.name))
        })
        .collect()
}

/// Build our daemons (debug profile) so that the rs column tests the current code.
fn build_rs() -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    say("compat: building slurmctld-rs and slurmd-rs (cargo build)");
    let mut child = Command::new(cargo)
        .args(["build", "-q", "-p", "slurmctld-rs", "-p", "slurmd-rs"])
        .current_dir(repo_root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    let t0 = Instant::now();
    loop {
        if let Some(_st) = child.try_wait().map_err(|e| e.to_string())? {
            let o = child.wait_with_output().map_err(|e| e.to_string())?;
            if o.status.success() {
                return Ok(());
            }
            let err = String::from_utf8_lossy(&o.stderr);
            let tail: Vec<&str> = err.lines().rev().take(30).collect();
            return Err(format!(
                "cargo build -p slurmctld-rs -p slurmd-rs failed:\n{}",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            ));
        }
        if t0.elapsed() > Duration::from_secs(900) {
            let _ = child.kill();
            let _ = child.wait();
            return Err("cargo build of the rs daemons took over 15 minutes; killed".into());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// One scenario's run on one cluster, before the comparison with stock
/// and the xfail marks (both need every cluster's runs).
struct Ran {
    scenario: &'static str,
    compare: bool,
    version: String,
    imp: Impl,
    raw: Raw,
    transcript: Vec<(String, String)>,
    secs: f64,
}

fn run_scenarios(cluster: &Cluster, client: &str, list: &[scenarios::Scenario]) -> Vec<Ran> {
    let mut out = Vec::new();
    for s in list {
        let t0 = Instant::now();
        let mut ctx = scenarios::Ctx::new(cluster, client);
        let raw = match (s.run)(&mut ctx) {
            // The daemons' own account of a failure is often the only one
            // (CI keeps no cluster), so the report carries their logs' tails.
            Err(e) => Raw::Err(format!(
                "{e}\n--- commands run:\n{}{LOGS_MARK}{}",
                ctx.log,
                cluster.logs_tail(15)
            )),
            Ok(()) => Raw::Ok,
        };
        if matches!(raw, Raw::Err(_)) {
            reset_after_failure(cluster, client);
        }
        say(&format!(
            "compat: ran {:<15} {:<6} {:<5} {} ({:.1}s)",
            s.name,
            client,
            cluster.imp.as_str(),
            if matches!(raw, Raw::Ok) {
                "ok"
            } else {
                "failed"
            },
            t0.elapsed().as_secs_f64()
        ));
        out.push(Ran {
            scenario: s.name,
            compare: s.compare,
            version: client.to_string(),
            imp: cluster.imp,
            raw,
            transcript: ctx.transcript,
            secs: t0.elapsed().as_secs_f64(),
        });
    }
    out
}

/// A failed scenario may leave jobs or drained nodes behind; clear them so
/// that the next scenario is judged on its own.
fn reset_after_failure(cluster: &Cluster, client: &str) {
    let cmd = "for u in alice bob root; do scancel -u $u; done; \
               scontrol update nodename=ALL state=resume 2>/dev/null; \
               for i in $(seq 60); do [ -z \"$(squeue -h -o %i)\" ] && exit 0; sleep 1; done; exit 1";
    let o = cluster.exec(client, None, cmd, 90);
    if o.rc != 0 {
        say(&format!(
            "compat: could not clear the queue after a failure on {client}:\n{}",
            o.both()
        ));
    }
}

/// Compare normalised transcripts: Some(message showing both sides) when they differ.
fn compare(stock: &[(String, String)], rs: &[(String, String)]) -> Option<String> {
    let mut msg = String::new();
    for (i, (label, st)) in stock.iter().enumerate() {
        match rs.get(i) {
            Some((l2, r)) if l2 == label => {
                if let Some(d) = normalize::diff("stock", st, "rs", r) {
                    msg.push_str(&format!("output of `{label}` differs from stock (normalised):\n{d}--- stock:\n{st}--- rs:\n{r}"));
                }
            }
            _ => msg.push_str(&format!("step `{label}` missing from the rs run\n")),
        }
    }
    (!msg.is_empty()).then_some(msg)
}

/// Name of the cluster for one group of cells: `cs24`/`crs`/`cm24`, `g` for
/// a cgroup cluster, then the checkout's tag.
fn cluster_name(imp: Impl, version: &str, cgroups: bool) -> String {
    let v = version.get(..2).unwrap_or("xx");
    let base = match imp {
        Impl::Stock => format!("cs{v}"),
        Impl::Rs => "crs".to_string(),
        Impl::Mixed => format!("cm{v}"),
        Impl::Stockd => format!("cd{v}"),
    };
    format!("{base}{}{}", if cgroups { "g" } else { "" }, name_tag())
}

/// One cluster: bring it up, run `list` for each client version, or record
/// every cell as not run when it does not come up. Returns the runs and the
/// bring-up problem, if any.
fn run_on_cluster(
    opts: &Options,
    lane: &Lane,
    cgroups: bool,
    list: &[scenarios::Scenario],
) -> (Vec<Ran>, Option<String>) {
    if list.is_empty() {
        return (Vec::new(), None);
    }
    let imp = lane.imp;
    let name = cluster_name(imp, &lane.version, cgroups);
    let what = format!(
        "{} {}{}",
        imp.as_str(),
        if imp == Impl::Rs { "" } else { &lane.version },
        if cgroups { " (cgroups)" } else { "" }
    );
    say(&format!("compat: bringing up {what} cluster ({name})"));
    match Cluster::up_with(&name, imp, &lane.version, opts.nodes, cgroups) {
        Ok(c) => (
            lane.clients
                .iter()
                .flat_map(|v| run_scenarios(&c, v, list))
                .collect(),
            None,
        ),
        Err(e) => {
            cluster::down(&name);
            say(&format!("compat: {what} cluster did not come up:\n{e}"));
            let why = format!("{what} cluster did not come up");
            (
                not_run(imp, &lane.clients, list, &why),
                Some(format!("{what}: {e}")),
            )
        }
    }
}

/// Cells that never ran (their cluster did not come up, or the build failed).
fn not_run(imp: Impl, clients: &[String], list: &[scenarios::Scenario], why: &str) -> Vec<Ran> {
    clients
        .iter()
        .flat_map(|v| {
            list.iter().map(move |s| Ran {
                scenario: s.name,
                compare: s.compare,
                version: v.clone(),
                imp,
                raw: Raw::NoCluster(why.to_string()),
                transcript: Vec::new(),
                secs: 0.0,
            })
        })
        .collect()
}

/// Clusters run one after the other on one thread: one implementation and
/// version, its plain cluster then its cgroup cluster (if the scenarios
/// need one).
struct Lane {
    imp: Impl,
    /// The controller's version (the first client's for rs).
    version: String,
    clients: Vec<String>,
    /// Only one of a lane's two clusters (rs runs its two as two lanes).
    only_cgroups: Option<bool>,
    list: Vec<scenarios::Scenario>,
}

impl Lane {
    fn run(&self, opts: &Options) -> (Vec<Ran>, Vec<String>) {
        let mut runs = Vec::new();
        let mut setup = Vec::new();
        for cg in [false, true] {
            if self.only_cgroups.is_some_and(|o| o != cg) {
                continue;
            }
            let (r, e) = run_on_cluster(opts, self, cg, &split_cgroups(&self.list, cg));
            runs.extend(r);
            setup.extend(e);
        }
        (runs, setup)
    }
}

/// The scenarios of `list` that run on a plain (false) or a cgroup (true) cluster.
fn split_cgroups(list: &[scenarios::Scenario], cgroups: bool) -> Vec<scenarios::Scenario> {
    list.iter()
        .filter(|s| s.needs().cgroups == cgroups)
        .cloned()
        .collect()
}

/// How many clusters run at once (`COMPAT_JOBS`, default 4): most of a
/// scenario's time is spent waiting on daemons, not on the CPU.
fn parallel_lanes() -> usize {
    std::env::var("COMPAT_JOBS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(4)
}

pub fn run_matrix(opts: &Options) -> Report {
    let t0 = Instant::now();
    let list = selected(opts);
    let mut setup = Vec::new();
    let mut lanes: Vec<Lane> = Vec::new();
    let mut runs: Vec<Ran> = Vec::new();

    // The lanes of each node/controller swap: per version, the scenarios
    // that ask for that cell.
    let swaps: Vec<(Impl, Vec<scenarios::Scenario>)> = [Impl::Mixed, Impl::Stockd]
        .into_iter()
        .filter(|i| opts.impls.contains(i))
        .map(|i| (i, list.iter().filter(|s| s.runs_on(i)).cloned().collect()))
        .filter(|(_, l): &(Impl, Vec<_>)| !l.is_empty())
        .collect();
    let want_rs = opts.impls.contains(&Impl::Rs);
    let want_swaps = !swaps.is_empty();
    // Build before any cluster starts: the build wants both CPUs.
    let built = if (want_rs || want_swaps) && opts.build_rs {
        build_rs()
    } else {
        Ok(())
    };
    if let Err(e) = &built {
        say(&format!("compat: {e}"));
        setup.push(e.clone());
    }

    // The single rs controller serves login hosts of every client version,
    // so its lanes are the longest: they go first.
    if want_rs {
        let first = opts
            .versions
            .first()
            .cloned()
            .unwrap_or_else(|| "24.11".into());
        for cg in [false, true] {
            let lane = Lane {
                imp: Impl::Rs,
                version: first.clone(),
                clients: opts.versions.clone(),
                only_cgroups: Some(cg),
                list: list.clone(),
            };
            if built.is_ok() {
                lanes.push(lane);
            } else {
                let l = split_cgroups(&list, cg);
                runs.extend(not_run(Impl::Rs, &opts.versions, &l, "rs build failed"));
            }
        }
    }
    for v in &opts.versions {
        if opts.impls.contains(&Impl::Stock) {
            lanes.push(Lane {
                imp: Impl::Stock,
                version: v.clone(),
                clients: vec![v.clone()],
                only_cgroups: None,
                list: list.clone(),
            });
        }
    }
    for (imp, l) in &swaps {
        for v in &opts.versions {
            if built.is_ok() {
                lanes.push(Lane {
                    imp: *imp,
                    version: v.clone(),
                    clients: vec![v.clone()],
                    only_cgroups: None,
                    list: l.clone(),
                });
            } else {
                runs.extend(not_run(*imp, std::slice::from_ref(v), l, "rs build failed"));
            }
        }
    }

    let queue = std::sync::Mutex::new(lanes.into_iter().collect::<std::collections::VecDeque<_>>());
    let done = std::sync::Mutex::new((Vec::new(), Vec::new()));
    std::thread::scope(|sc| {
        for _ in 0..parallel_lanes() {
            sc.spawn(|| loop {
                let Some(lane) = queue.lock().ok().and_then(|mut q| q.pop_front()) else {
                    return;
                };
                let (r, e) = lane.run(opts);
                if let Ok(mut d) = done.lock() {
                    d.0.extend(r);
                    d.1.extend(e);
                }
            });
        }
    });
    let (r, e) = done.into_inner().unwrap_or_default();
    runs.extend(r);
    setup.extend(e);

    // Cells in the scenario list's order, versions and implementations as asked.
    let pos = |r: &Ran| {
        (
            list.iter().position(|s| s.name == r.scenario),
            opts.versions.iter().position(|v| *v == r.version),
            opts.impls.iter().position(|i| *i == r.imp),
        )
    };
    runs.sort_by_key(|r| pos(r));
    let stock: HashMap<(&'static str, String), Vec<(String, String)>> = runs
        .iter()
        .filter(|r| r.imp == Impl::Stock && matches!(r.raw, Raw::Ok))
        .map(|r| ((r.scenario, r.version.clone()), r.transcript.clone()))
        .collect();
    let cells = runs
        .into_iter()
        .map(|r| {
            let mut raw = r.raw;
            if r.imp != Impl::Stock && r.compare && matches!(raw, Raw::Ok) {
                if let Some(st) = stock.get(&(r.scenario, r.version.clone())) {
                    raw = compare(st, &r.transcript).map_or(Raw::Ok, Raw::Err);
                }
            }
            let outcome = judge(r.imp, r.scenario, &r.version, raw);
            say(&format!(
                "compat: {:<15} {:<6} {:<5} {} ({:.1}s)",
                r.scenario,
                r.version,
                r.imp.as_str(),
                outcome.tag().trim_matches('*'),
                r.secs
            ));
            if let Outcome::Fail(e) = &outcome {
                say(&format!(
                    "compat: {} {} {} failed:\n{e}",
                    r.scenario,
                    r.version,
                    r.imp.as_str()
                ));
            }
            Cell {
                scenario: r.scenario,
                version: r.version,
                imp: r.imp,
                outcome,
                secs: r.secs,
            }
        })
        .collect();

    Report {
        cells,
        setup,
        elapsed: t0.elapsed(),
        opts_versions: opts.versions.clone(),
        opts_impls: opts.impls.clone(),
    }
}

/// Lines of each failure that `failed_cells` keeps.
const FAIL_LINES: usize = 16;

impl Report {
    pub fn failures(&self) -> usize {
        self.cells.iter().filter(|c| c.outcome.is_failure()).count()
    }

    /// "scenario / version / impl: why" of each failed or unexpectedly
    /// passing cell, with at most the first FAIL_LINES lines of why.
    pub fn failed_cells(&self) -> Vec<String> {
        self.cells
            .iter()
            .filter(|c| c.outcome.is_failure())
            .map(|c| {
                // A diff's head goes into the panic too: CI keeps only the test's output.
                let why = match &c.outcome {
                    Outcome::Fail(e) => e
                        .lines()
                        .take(FAIL_LINES)
                        .collect::<Vec<_>>()
                        .join("\n    "),
                    Outcome::XPass { reason } => reason.to_string(),
                    _ => String::new(),
                };
                format!("{} / {} / {}: {why}", c.scenario, c.version, c.imp.as_str())
            })
            .collect()
    }

    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let count = |f: fn(&Outcome) -> bool| self.cells.iter().filter(|c| f(&c.outcome)).count();
        s.push_str("# Compat report: scenario x client version x implementation\n\n");
        s.push_str(&format!(
            "{} cells: {} PASS, {} FAIL, {} XFAIL, {} XPASS; took {:.0} s.\n\n",
            self.cells.len(),
            count(|o| matches!(o, Outcome::Pass)),
            count(|o| matches!(o, Outcome::Fail(_))),
            count(|o| matches!(o, Outcome::XFail { .. })),
            count(|o| matches!(o, Outcome::XPass { .. })),
            self.elapsed.as_secs_f64()
        ));
        let cols: Vec<(String, Impl)> = self
            .opts_versions
            .iter()
            .flat_map(|v| self.opts_impls.iter().map(move |i| (v.clone(), *i)))
            .collect();
        s.push_str("| scenario |");
        for (v, i) in &cols {
            s.push_str(&format!(" {v} {} |", i.as_str()));
        }
        s.push_str("\n|---|");
        for _ in &cols {
            s.push_str("---|");
        }
        s.push('\n');
        let mut names: Vec<&str> = Vec::new();
        for c in &self.cells {
            if !names.contains(&c.scenario) {
                names.push(c.scenario);
            }
        }
        for n in &names {
            s.push_str(&format!("| {n} |"));
            for (v, i) in &cols {
                let cell = self
                    .cells
                    .iter()
                    .find(|c| c.scenario == *n && &c.version == v && c.imp == *i);
                s.push_str(&format!(
                    " {} |",
                    cell.map(|c| c.outcome.tag()).unwrap_or("-")
                ));
            }
            s.push('\n');
        }
        let mut reasons: Vec<&str> = self
            .cells
            .iter()
            .filter_map(|c| match c.outcome {
                Outcome::XFail { reason, .. } | Outcome::XPass { reason } => Some(reason),
                _ => None,
            })
            .collect();
        reasons.dedup();
        if !reasons.is_empty() {
            s.push_str("\nXFAIL reasons (compat-tests/src/xfail.rs):\n");
            for r in reasons {
                s.push_str(&format!("- {r}\n"));
            }
        }
        if !self.setup.is_empty() {
            s.push_str("\n## Cluster bring-up failures\n\n");
            for e in &self.setup {
                s.push_str(&format!("```\n{}\n```\n", clip(e, 60)));
            }
        }
        let mut details = String::new();
        for c in &self.cells {
            let (what, text) = match &c.outcome {
                Outcome::Fail(e) => ("FAIL", e.clone()),
                Outcome::XPass { reason } => ("XPASS", format!("marked xfail ({reason}) but passed: remove its entry from compat-tests/src/xfail.rs")),
                Outcome::XFail { detail, .. } if !detail.contains("did not come up") => ("XFAIL", detail.clone()),
                _ => continue,
            };
            details.push_str(&format!(
                "### {} / {} / {}: {what}\n\n```\n{}\n```\n\n",
                c.scenario,
                c.version,
                c.imp.as_str(),
                clip_detail(&text)
            ));
        }
        if !details.is_empty() {
            s.push_str("\n## Details\n\n");
            s.push_str(&details);
        }
        s
    }
}

const LOGS_MARK: &str = "\n--- daemon logs:\n";

/// A failure's story clipped, and its daemon logs clipped apart, so that a
/// long listing does not push the logs out.
fn clip_detail(s: &str) -> String {
    match s.split_once(LOGS_MARK) {
        Some((story, logs)) => format!("{}{LOGS_MARK}{}", clip(story, 80), clip(logs, 100)),
        None => clip(s, 80),
    }
}

fn clip(s: &str, lines: usize) -> String {
    let v: Vec<&str> = s.lines().collect();
    if v.len() <= lines {
        return s.trim_end().to_string();
    }
    format!(
        "{}\n... ({} more lines)",
        v[..lines].join("\n"),
        v.len() - lines
    )
}
