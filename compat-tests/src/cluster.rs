//! Thin wrapper over `scripts/cluster` (the one entry point for test clusters).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Root of the checkout (compat-tests/..).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("compat-tests lives in the workspace")
        .to_path_buf()
}

pub fn cluster_script() -> PathBuf {
    repo_root().join("scripts/cluster")
}

/// Output of one command.
#[derive(Debug, Clone)]
pub struct Out {
    pub rc: i32,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Out {
    /// stdout and stderr together, for messages.
    pub fn both(&self) -> String {
        let mut s = self.stdout.clone();
        if !self.stderr.is_empty() {
            if !s.is_empty() && !s.ends_with('\n') {
                s.push('\n');
            }
            s.push_str(&self.stderr);
        }
        s
    }
}

pub fn run_cmd(cmd: &mut Command) -> Out {
    let t0 = Instant::now();
    match cmd.stdin(Stdio::null()).output() {
        Ok(o) => Out {
            rc: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
            elapsed: t0.elapsed(),
        },
        Err(e) => Out {
            rc: -1,
            stdout: String::new(),
            stderr: format!("cannot run {cmd:?}: {e}"),
            elapsed: t0.elapsed(),
        },
    }
}

/// Which daemons a cluster runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Impl {
    Stock,
    Rs,
    /// Stock slurmctld of the client's version with slurmd-rs nodes (a site
    /// swapping node daemons one at a time).
    Mixed,
    /// slurmctld-rs with stock slurmd nodes of the client's version (a site
    /// swapping the controller first).
    Stockd,
}

impl Impl {
    pub fn as_str(self) -> &'static str {
        match self {
            Impl::Stock => "stock",
            Impl::Rs => "rs",
            Impl::Mixed => "mixed",
            Impl::Stockd => "stockd",
        }
    }
    pub fn parse(s: &str) -> Option<Impl> {
        match s {
            "stock" => Some(Impl::Stock),
            "rs" => Some(Impl::Rs),
            "mixed" => Some(Impl::Mixed),
            "stockd" => Some(Impl::Stockd),
            _ => None,
        }
    }
}

/// A running cluster, brought down on drop (unless COMPAT_KEEP=1).
pub struct Cluster {
    pub name: String,
    pub imp: Impl,
    /// Slurm version of the daemons (stock) / default client version (rs).
    pub version: String,
    keep: bool,
}

impl Cluster {
    /// `scripts/cluster up`; on failure returns the script's output (it prints the logs' tail).
    pub fn up(name: &str, imp: Impl, version: &str, nodes: u32) -> Result<Cluster, String> {
        Cluster::up_with(name, imp, version, nodes, false)
    }

    /// As `up`, with `--cgroups` (a cgroup hierarchy per node, memory enforced) when asked.
    pub fn up_with(
        name: &str,
        imp: Impl,
        version: &str,
        nodes: u32,
        cgroups: bool,
    ) -> Result<Cluster, String> {
        // a stale cluster of the same name (interrupted run) would make `up` refuse
        let _ = run_cmd(Command::new(cluster_script()).args(["down", "--name", name]));
        let nodes = nodes.to_string();
        let mut args = vec![
            "up",
            "--name",
            name,
            "--version",
            version,
            "--nodes",
            &nodes,
            // the Prolog/Epilog that the slurmd scenarios toggle and check
            "--hooks",
        ];
        match imp {
            Impl::Stock | Impl::Rs => args.extend(["--impl", imp.as_str()]),
            Impl::Mixed => args.extend(["--impl", "stock", "--slurmd", "rs"]),
            Impl::Stockd => args.extend(["--impl", "stock", "--ctld", "rs", "--clients", version]),
        }
        if cgroups {
            args.push("--cgroups");
        }
        let out = run_cmd(Command::new(cluster_script()).args(&args));
        let c = Cluster {
            name: name.to_string(),
            imp,
            version: version.to_string(),
            keep: std::env::var("COMPAT_KEEP").is_ok_and(|v| v == "1"),
        };
        if out.rc != 0 {
            return Err(format!(
                "scripts/cluster {} failed (rc {}):\n{}",
                args.join(" "),
                out.rc,
                out.both()
            ));
        }
        Ok(c)
    }

    /// Run `bash -c CMD` on the login host of client version `client`, as `user`
    /// (root when None), with a time limit.
    pub fn exec(&self, client: &str, user: Option<&str>, cmd: &str, limit_s: u32) -> Out {
        let mut c = Command::new(cluster_script());
        c.args(["exec", "--name", &self.name, "--client", client]);
        if let Some(u) = user {
            c.args(["--user", u]);
        }
        c.args(["--", "timeout", &limit_s.to_string(), "bash", "-c", cmd]);
        run_cmd(&mut c)
    }

    /// Run `bash -c CMD` as root on host `host` (ctl, n1 ...).
    pub fn exec_host(&self, host: &str, cmd: &str, limit_s: u32) -> Out {
        let mut c = Command::new(cluster_script());
        c.args(["exec", "--name", &self.name, "--host", host]);
        c.args(["--", "timeout", &limit_s.to_string(), "bash", "-c", cmd]);
        run_cmd(&mut c)
    }

    pub fn logs_tail(&self, lines: u32) -> String {
        run_cmd(Command::new(cluster_script()).args([
            "logs",
            "--name",
            &self.name,
            "--lines",
            &lines.to_string(),
        ]))
        .both()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.keep {
            eprintln!("COMPAT_KEEP=1: cluster {} left up", self.name);
            return;
        }
        down(&self.name);
    }
}

pub fn down(name: &str) {
    let out = run_cmd(Command::new(cluster_script()).args(["down", "--name", name]));
    if out.rc != 0 {
        eprintln!(
            "warning: scripts/cluster down --name {name} failed:\n{}",
            out.both()
        );
    }
}
