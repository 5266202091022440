//! What every scenario takes: the context (cluster, client, log), the
//! scenario record, and small output helpers.

use crate::cluster::{Cluster, Impl, Out};
use crate::normalize::{normalize, Subst};
use std::time::{Duration, Instant};

#[derive(Clone)]
pub struct Scenario {
    pub name: &'static str,
    pub about: &'static str,
    /// Compare the normalised transcript with the stock cluster's of the same version.
    pub compare: bool,
    pub run: fn(&mut Ctx) -> Result<(), String>,
}

/// What a scenario asks for beyond the stock and rs cells (kept out of
/// `Scenario` so that every module's literals stay as they are; modules list
/// theirs in a `NEEDS` table, see slurmd.rs).
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Needs {
    /// Also run it as the `mixed` cell: a stock controller of the client's
    /// version with slurmd-rs nodes.
    pub mixed: bool,
    /// Also run it as the `stockd` cell: slurmctld-rs with stock slurmd
    /// nodes of the client's version.
    pub stockd: bool,
    /// Run it on a cluster with `scripts/cluster --cgroups` (proctrack/cgroup,
    /// memory enforced), brought up only for such scenarios.
    pub cgroups: bool,
}

/// Per-run context: where commands go, and what the scenario recorded.
pub struct Ctx<'a> {
    pub cluster: &'a Cluster,
    pub client: String,
    pub subst: Subst,
    /// (label, normalised output): what is compared between implementations.
    pub transcript: Vec<(String, String)>,
    /// Every command and its raw output, for failure messages.
    pub log: String,
    jobs: usize,
}

const LIMIT_S: u32 = 60;

impl<'a> Ctx<'a> {
    pub fn new(cluster: &'a Cluster, client: &str) -> Self {
        let mut subst = Subst::default();
        subst.add(&cluster.name, "<CLUSTER>");
        Ctx {
            cluster,
            client: client.to_string(),
            subst,
            transcript: vec![],
            log: String::new(),
            jobs: 0,
        }
    }

    pub fn run_as(&mut self, user: Option<&str>, cmd: &str) -> Out {
        let o = self.cluster.exec(&self.client, user, cmd, LIMIT_S);
        self.log.push_str(&format!(
            "$ {}{cmd}   # rc={} ({:.1}s)\n{}",
            user.map(|u| format!("[{u}] ")).unwrap_or_default(),
            o.rc,
            o.elapsed.as_secs_f64(),
            indent(&o.both())
        ));
        o
    }

    /// Run as root; it must exit 0.
    pub fn ok(&mut self, cmd: &str) -> Result<Out, String> {
        self.ok_as(None, cmd)
    }

    pub fn ok_as(&mut self, user: Option<&str>, cmd: &str) -> Result<Out, String> {
        let o = self.run_as(user, cmd);
        if o.rc != 0 {
            return Err(format!(
                "`{cmd}` exited {} (want 0):\n{}",
                o.rc,
                indent(&o.both())
            ));
        }
        Ok(o)
    }

    /// Run as root on a cluster host; it must exit 0.
    pub fn ok_on(&mut self, host: &str, cmd: &str) -> Result<Out, String> {
        let o = self.cluster.exec_host(host, cmd, LIMIT_S);
        self.log.push_str(&format!(
            "$ [{host}] {cmd}   # rc={}\n{}",
            o.rc,
            indent(&o.both())
        ));
        if o.rc != 0 {
            return Err(format!(
                "`{cmd}` on {host} exited {}:\n{}",
                o.rc,
                indent(&o.both())
            ));
        }
        Ok(o)
    }

    /// Remember a normalised output for the stock/rs comparison.
    pub fn record(&mut self, label: &str, text: &str) {
        let n = normalize(text, &self.subst);
        self.transcript.push((label.to_string(), n));
    }

    /// Register a job id so that it normalises to <JOBn>.
    pub fn job(&mut self, id: &str) {
        self.jobs += 1;
        let ph = format!("<JOB{}>", self.jobs);
        self.subst.add_job(id, &ph);
    }

    /// Poll `cmd` until `pred(stdout)` holds.
    pub fn wait_for(
        &mut self,
        user: Option<&str>,
        cmd: &str,
        what: &str,
        timeout: Duration,
        pred: impl Fn(&str) -> bool,
    ) -> Result<String, String> {
        let t0 = Instant::now();
        loop {
            let o = self.cluster.exec(&self.client, user, cmd, LIMIT_S);
            if o.rc == 0 && pred(&o.stdout) {
                self.log.push_str(&format!(
                    "$ {cmd}   # {what}: ok after {:.1}s\n",
                    t0.elapsed().as_secs_f64()
                ));
                return Ok(o.stdout);
            }
            if t0.elapsed() > timeout {
                self.log
                    .push_str(&format!("$ {cmd}   # rc={}\n{}", o.rc, indent(&o.both())));
                return Err(format!(
                    "timed out after {}s waiting for {what}; last `{cmd}` (rc {}):\n{}",
                    timeout.as_secs(),
                    o.rc,
                    indent(&o.both())
                ));
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// Wait until `cmd` prints exactly `want`; on timeout the error gives
    /// only the lines that differ, since these listings run to hundreds.
    pub fn wait_for_same(
        &mut self,
        cmd: &str,
        what: &str,
        timeout: Duration,
        want: &str,
    ) -> Result<String, String> {
        let t0 = Instant::now();
        loop {
            let o = self.cluster.exec(&self.client, None, cmd, LIMIT_S);
            if o.rc == 0 && o.stdout == want {
                self.log.push_str(&format!(
                    "$ {cmd}   # {what}: ok after {:.1}s\n",
                    t0.elapsed().as_secs_f64()
                ));
                return Ok(o.stdout);
            }
            if t0.elapsed() > timeout {
                let d = crate::normalize::diff("want", want, "got", &o.stdout).unwrap_or_default();
                self.log.push_str(&format!(
                    "$ {cmd}   # rc={}\n{d}{}",
                    o.rc,
                    indent(&o.stderr)
                ));
                return Err(format!(
                    "timed out after {}s waiting for {what}; `{cmd}` (rc {}) differs:\n{d}{}",
                    timeout.as_secs(),
                    o.rc,
                    indent(&o.stderr)
                ));
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// The value of `Key=` in `scontrol show job ID` output.
    pub fn job_field(&mut self, id: &str, key: &str) -> Result<String, String> {
        let o = self.ok(&format!("scontrol show job {id}"))?;
        field(&o.stdout, key)
            .ok_or_else(|| format!("no {key}= in scontrol show job {id}:\n{}", o.stdout))
    }

    /// Wait until the job reaches `state` (as seen by scontrol show job).
    pub fn wait_state(&mut self, id: &str, state: &str, timeout: Duration) -> Result<(), String> {
        let want = format!("JobState={state} ");
        self.wait_for(
            None,
            &format!("scontrol show job {id}"),
            &format!("job {id} {state}"),
            timeout,
            |s| s.contains(&want),
        )
        .map(|_| ())
    }
}

pub fn indent(s: &str) -> String {
    s.lines().map(|l| format!("    | {l}\n")).collect()
}

/// Value of `Key=value` in Slurm's key=value listings.
pub fn field(text: &str, key: &str) -> Option<String> {
    let pat = format!("{key}=");
    text.split_whitespace()
        .find_map(|w| w.strip_prefix(&pat).map(|v| v.to_string()))
}

pub fn must_contain(what: &str, text: &str, needles: &[&str]) -> Result<(), String> {
    for n in needles {
        if !text.contains(n) {
            return Err(format!("{what}: expected `{n}` in:\n{}", indent(text)));
        }
    }
    Ok(())
}

/// "Submitted batch job 12" -> "12"
pub fn submitted_id(o: &Out) -> Result<String, String> {
    o.stdout
        .split_whitespace()
        .last()
        .filter(|w| w.bytes().all(|b| b.is_ascii_digit()))
        .map(|s| s.to_string())
        .ok_or_else(|| format!("no job id in sbatch output:\n{}", o.both()))
}

pub const JOB_WAIT: Duration = Duration::from_secs(60);

/// Stock saves its job state some seconds after a change, and a `kill -9`
/// before that loses jobs; ours acknowledges a change only once it is on
/// disk. Once a crash test's last change shows, mark the time (a save
/// begun before the mark may predate the change) ...
pub fn stock_state_mark(c: &mut Ctx) -> Result<(), String> {
    if stock_ctld(c) {
        c.ok_on("ctl", "touch /tmp/state-mark")?;
    }
    Ok(())
}

/// ... and before the kill, give a stock controller until its job_state
/// file is newer than the mark (25 s at most: none comes when the change
/// was saved before the mark), then 7 s more: a save packed before the
/// change but written after the mark is followed by the change's own save
/// within stock's 5 s save delay (CI once lost 20 cancels that way).
pub fn wait_stock_state_saved(c: &mut Ctx) -> Result<(), String> {
    if stock_ctld(c) {
        c.ok_on(
            "ctl",
            "for i in $(seq 250); do \
             [ -n \"$(find /var/spool/slurmctld/job_state -newer /tmp/state-mark 2>/dev/null)\" ] \
             && sleep 7 && exit 0; sleep 0.1; done; exit 0",
        )?;
    }
    Ok(())
}

fn stock_ctld(c: &Ctx) -> bool {
    matches!(c.cluster.imp, Impl::Stock | Impl::Mixed)
}
