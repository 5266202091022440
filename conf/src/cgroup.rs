//! `cgroup.conf`.

use std::path::Path;

use crate::error::{ConfError, Location};
use crate::flat::{self, Flat};
use crate::keywords;
use crate::keywords::Keyword;
use crate::lexer::{self, Loader, Walker};

/// A parsed `cgroup.conf`, defaults as in stock 24.11.
#[derive(Debug, Clone, PartialEq)]
pub struct CgroupConf {
    pub cgroup_plugin: String,
    /// Trailing `/` removed.
    pub cgroup_mountpoint: String,
    pub constrain_cores: bool,
    pub constrain_devices: bool,
    pub constrain_ram_space: bool,
    pub constrain_swap_space: bool,
    /// Percent of the job's memory.
    pub allowed_ram_space: f32,
    pub allowed_swap_space: f32,
    pub max_ram_percent: f32,
    pub max_swap_percent: f32,
    /// MB.
    pub min_ram_space: u64,
    /// 0..=100; `None` leaves the kernel default.
    pub memory_swappiness: Option<u64>,
    pub ignore_systemd: bool,
    pub ignore_systemd_on_failure: bool,
    pub enable_controllers: bool,
    pub signal_children_processes: bool,
    /// Milliseconds.
    pub systemd_timeout: u64,
    /// Every option as written, by canonical name (last value).
    pub raw: Vec<(&'static str, String, Location)>,
    pub warnings: Vec<String>,
}

impl Default for CgroupConf {
    fn default() -> Self {
        CgroupConf {
            cgroup_plugin: "autodetect".into(),
            cgroup_mountpoint: "/sys/fs/cgroup".into(),
            constrain_cores: false,
            constrain_devices: false,
            constrain_ram_space: false,
            constrain_swap_space: false,
            allowed_ram_space: 100.0,
            allowed_swap_space: 0.0,
            max_ram_percent: 100.0,
            max_swap_percent: 100.0,
            min_ram_space: 30,
            memory_swappiness: None,
            ignore_systemd: false,
            ignore_systemd_on_failure: false,
            enable_controllers: false,
            signal_children_processes: false,
            systemd_timeout: 1000,
            raw: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

/// Options read from the file but with no effect in this crate's model.
const UNTYPED: &[&str] = &[
    "AllowedKmemSpace",
    "CgroupJobIdPaths",
    "CgroupSlice",
    "ConstrainKmemSpace",
    "EnableExtraControllers",
    "MaxKmemPercent",
    "MemoryLimitEnforcement",
    "MemoryLimitThreshold",
    "MinKmemSpace",
];

impl CgroupConf {
    pub fn from_file(path: impl AsRef<Path>) -> Result<CgroupConf, ConfError> {
        lexer::load_file(path.as_ref(), Self::parse_with_loader)
    }

    pub fn parse_str(text: &str, origin: impl AsRef<Path>) -> Result<CgroupConf, ConfError> {
        Self::parse_with_loader(text.as_bytes(), origin.as_ref(), &lexer::read_file)
    }

    pub fn parse_with_loader(
        bytes: &[u8],
        origin: &Path,
        loader: Loader<'_>,
    ) -> Result<CgroupConf, ConfError> {
        let mut sink = Flat::new(keywords::CGROUP, note);
        Walker::new(loader).walk(bytes, origin, &mut sink)?;
        Ok(finish(sink))
    }

    /// The last value written for an option (any case).
    pub fn raw(&self, key: &str) -> Option<&str> {
        flat::last(&self.raw, key)
    }
}

/// What cgroup.conf says of a keyword it accepts but does not use.
fn note(kw: &'static Keyword, at: &Location, warnings: &mut Vec<String>) {
    if kw.is_defunct() {
        warnings.push(format!("{at}: {} is defunct and ignored", kw.name));
    }
    match kw.name {
        "CgroupReleaseAgentDir" => warnings.push(format!(
            "{at}: CgroupReleaseAgentDir is obsolete (removed in 24.11)"
        )),
        "AllowedDevicesFile" => {
            warnings.push(format!("{at}: AllowedDevicesFile is obsolete and ignored"))
        }
        n if UNTYPED.contains(&n) => {
            warnings.push(format!("{at}: {n} is recognised but not implemented"))
        }
        _ => {}
    }
}

/// The configuration a read file holds.
fn finish(mut sink: Flat) -> CgroupConf {
    let d = CgroupConf::default();
    let mut mountpoint = sink
        .get("CgroupMountpoint")
        .map(str::to_string)
        .unwrap_or(d.cgroup_mountpoint);
    if mountpoint.len() > 1 && mountpoint.ends_with('/') {
        mountpoint.pop();
    }
    let mut swappiness = sink.u64("MemorySwappiness");
    if swappiness.is_some_and(|s| s > 100) {
        sink.warnings
            .push("MemorySwappiness is too high, rounding down to 100".into());
        swappiness = Some(100);
    }
    let ignore_systemd = sink.bool_or("IgnoreSystemd", false);
    CgroupConf {
        cgroup_plugin: sink
            .get("CgroupPlugin")
            .map(str::to_string)
            .unwrap_or(d.cgroup_plugin),
        cgroup_mountpoint: mountpoint,
        constrain_cores: sink.bool_or("ConstrainCores", false),
        constrain_devices: sink.bool_or("ConstrainDevices", false),
        constrain_ram_space: sink.bool_or("ConstrainRAMSpace", false),
        constrain_swap_space: sink.bool_or("ConstrainSwapSpace", false),
        allowed_ram_space: sink.f32_or("AllowedRAMSpace", d.allowed_ram_space),
        allowed_swap_space: sink.f32_or("AllowedSwapSpace", d.allowed_swap_space),
        max_ram_percent: sink.f32_or("MaxRAMPercent", d.max_ram_percent),
        max_swap_percent: sink.f32_or("MaxSwapPercent", d.max_swap_percent),
        min_ram_space: sink.u64("MinRAMSpace").unwrap_or(d.min_ram_space),
        memory_swappiness: swappiness,
        // IgnoreSystemd implies IgnoreSystemdOnFailure.
        ignore_systemd,
        ignore_systemd_on_failure: ignore_systemd || sink.bool_or("IgnoreSystemdOnFailure", false),
        enable_controllers: sink.bool_or("EnableControllers", false),
        signal_children_processes: sink.bool_or("SignalChildrenProcesses", false),
        systemd_timeout: sink.u64("SystemdTimeout").unwrap_or(d.systemd_timeout),
        raw: sink.raw,
        warnings: sink.warnings,
    }
}
