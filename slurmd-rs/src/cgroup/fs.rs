//! The cgroup layer's errors and file operations on cgroupfs. A leaf under
//! the hierarchies (v1, v2) and the parent.

use super::ebpf::BpfError;
use std::path::Path;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    #[error(
        "cgroup.conf: CgroupPlugin={0} is not one of cgroup/v1, cgroup/v2, autodetect, disabled"
    )]
    UnknownPlugin(String),
    #[error("CgroupPlugin={plugin}: no cgroup {version} hierarchy is mounted at {mount}")]
    NotMounted {
        plugin: String,
        version: &'static str,
        mount: String,
    },
    #[error("{path}: {err}")]
    Io { path: String, err: std::io::Error },
    #[error("{path}: the cgroup v2 {controller} controller is not available here (is it bound to a v1 hierarchy?)")]
    NoController {
        controller: &'static str,
        path: String,
    },
    #[error(transparent)]
    Bpf(#[from] BpfError),
}

impl CgroupError {
    pub fn io(path: &Path, err: std::io::Error) -> Self {
        CgroupError::Io {
            path: path.display().to_string(),
            err,
        }
    }

    /// The code a launch that could not set up its cgroup answers.
    pub fn errno(&self) -> i32 {
        slurm_wire::errno::ESLURMD_SETUP_ENVIRONMENT_ERROR
    }
}

pub type Result<T> = std::result::Result<T, CgroupError>;

/// Reads a cgroup file, trimmed.
pub(crate) fn read(p: &Path) -> Result<String> {
    std::fs::read_to_string(p)
        .map(|s| s.trim().to_string())
        .map_err(|e| CgroupError::io(p, e))
}

/// Writes a cgroup file (no create: cgroup files exist or the write is
/// wrong, except in the tests' plain directories where they are made).
pub(crate) fn write(p: &Path, value: &str) -> Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(p)
        .map_err(|e| CgroupError::io(p, e))?;
    f.write_all(value.as_bytes())
        .map_err(|e| CgroupError::io(p, e))
}

/// mkdir that accepts an existing directory.
pub(crate) fn mkdir(p: &Path) -> Result<bool> {
    match std::fs::create_dir(p) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(CgroupError::io(p, e)),
    }
}

/// Pids listed in `cgroup.procs` of `dir` and every cgroup below it.
pub(crate) fn procs_below(dir: &Path) -> Vec<i32> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        if let Ok(s) = std::fs::read_to_string(d.join("cgroup.procs")) {
            out.extend(s.lines().filter_map(|l| l.trim().parse::<i32>().ok()));
        }
        if let Ok(rd) = std::fs::read_dir(&d) {
            for e in rd.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(e.path());
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Removes `dir` and the cgroups below it, deepest first. Only empty
/// cgroups can go; the first failure is returned after trying them all.
pub(crate) fn rmdir_tree(dir: &Path) -> Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    let mut dirs = vec![dir.to_path_buf()];
    let mut i = 0;
    while i < dirs.len() {
        if let Ok(rd) = std::fs::read_dir(&dirs[i]) {
            for e in rd.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    dirs.push(e.path());
                }
            }
        }
        i += 1;
    }
    let mut first = None;
    for d in dirs.iter().rev() {
        if let Err(e) = std::fs::remove_dir(d) {
            if e.kind() != std::io::ErrorKind::NotFound && first.is_none() {
                first = Some(CgroupError::io(d, e));
            }
        }
    }
    first.map_or(Ok(()), Err)
}

/// The `oom_kill` count of a v1 `memory.oom_control` file.
pub fn parse_oom_control(text: &str) -> Option<u64> {
    kv_field(text, "oom_kill")
}

/// The `oom_kill` count of a v2 `memory.events` file.
pub fn parse_memory_events(text: &str) -> Option<u64> {
    kv_field(text, "oom_kill")
}

fn kv_field(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let mut f = l.split_whitespace();
        (f.next()? == key).then_some(())?;
        f.next()?.parse().ok()
    })
}

/// Waits until `done()` or `limit` passes, polling.
pub(crate) fn wait_for(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let end = std::time::Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if std::time::Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
