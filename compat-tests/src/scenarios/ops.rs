//! Operations: sdiag, partitions, controller lifecycle, crash recovery.

use super::ctx::*;
use std::time::Duration;

/// The section and counter names sdiag prints (no values, no times):
/// what must be the same between implementations.
fn sdiag_shape(out: &str) -> String {
    let mut v = Vec::new();
    for l in out.lines() {
        if l.starts_with(char::is_whitespace) || l.trim().is_empty() || l.starts_with("****") {
            continue;
        }
        let label = ["sdiag output at", "Data since"]
            .into_iter()
            .find(|p| l.starts_with(p))
            .unwrap_or_else(|| l.split(':').next().unwrap_or(l));
        v.push(label.trim_end().to_string());
    }
    v.join("\n") + "\n"
}

/// Lines of one sdiag section (those indented under `header`).
fn section<'a>(out: &'a str, header: &str) -> Vec<&'a str> {
    out.lines()
        .skip_while(|l| !l.starts_with(header))
        .skip(1)
        .take_while(|l| l.starts_with(char::is_whitespace))
        .collect()
}

/// `count:N` of the line naming `what` in `lines`.
fn count_of(lines: &[&str], what: &str) -> Option<u64> {
    let l = lines.iter().find(|l| l.contains(what))?;
    let rest = l.split("count:").nth(1)?;
    rest.split_whitespace().next()?.parse().ok()
}

fn sum_counts(lines: &[&str]) -> u64 {
    lines
        .iter()
        .filter_map(|l| l.split("count:").nth(1))
        .filter_map(|r| r.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

fn sdiag(c: &mut Ctx) -> Result<(), String> {
    const BY_TYPE: &str = "Remote Procedure Call statistics by message type";
    const BY_USER: &str = "Remote Procedure Call statistics by user";
    let o = c.ok("sdiag")?;
    must_contain(
        "sdiag",
        &o.stdout,
        &[
            "Server thread count:",
            "Agent queue size:",
            "Jobs submitted:",
            "Jobs completed:",
            "Main schedule statistics (microseconds):",
            "Backfilling stats",
            BY_TYPE,
            BY_USER,
        ],
    )?;
    c.record("sdiag sections", &sdiag_shape(&o.stdout));
    let types0 = sum_counts(&section(&o.stdout, BY_TYPE));
    let alice0 = count_of(&section(&o.stdout, BY_USER), "alice").unwrap_or(0);

    for _ in 0..3 {
        c.ok_as(Some("alice"), "squeue")?;
    }
    let o = c.ok("sdiag")?;
    let types = section(&o.stdout, BY_TYPE);
    let users = section(&o.stdout, BY_USER);
    if sum_counts(&types) < types0 + 3 {
        return Err(format!(
            "sdiag: RPC counts by type did not grow by 3 squeue calls (was {types0}):\n{}",
            indent(&o.stdout)
        ));
    }
    let alice = count_of(&users, "alice").unwrap_or(0);
    if alice < alice0 + 3 {
        return Err(format!(
            "sdiag: alice's RPC count went {alice0} -> {alice} after 3 squeue:\n{}",
            indent(&o.stdout)
        ));
    }
    if count_of(&types, "REQUEST_JOB_INFO").is_none() {
        return Err(format!(
            "sdiag: no REQUEST_JOB_INFO line after squeue:\n{}",
            indent(&o.stdout)
        ));
    }

    // Only an operator may reset.
    let o = c.run_as(Some("alice"), "sdiag -r");
    if o.rc == 0 {
        return Err(format!(
            "sdiag -r as alice succeeded:\n{}",
            indent(&o.both())
        ));
    }
    c.record("sdiag -r as alice", &o.both());
    let o = c.ok("sdiag -r")?;
    c.record("sdiag -r", &o.stdout);
    let o = c.ok("sdiag")?;
    for key in ["Jobs submitted:", "Jobs started:", "Jobs completed:"] {
        let v = o
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .map(str::trim);
        if v != Some("0") {
            return Err(format!(
                "sdiag after reset: `{key}` is {v:?}, want 0:\n{}",
                indent(&o.stdout)
            ));
        }
    }
    Ok(())
}

/// Stops slurmctld on ctl with `signal` (e.g. "-9", "-TERM") or by
/// `scontrol shutdown slurmctld` (signal None), waits until it is gone,
/// and starts it again with the same command line.
fn restart_ctld(c: &mut Ctx, signal: Option<&str>) -> Result<(), String> {
    c.ok_on(
        "ctl",
        "set -e; pid=$(pgrep -x slurmctld-rs || pgrep -x slurmctld); \
         tr '\\0' ' ' < /proc/$pid/cmdline > /tmp/ctld.cmd; echo $pid > /tmp/ctld.pid",
    )?;
    match signal {
        Some(sig) => {
            c.ok_on("ctl", &format!("kill {sig} $(cat /tmp/ctld.pid)"))?;
        }
        None => {
            let o = c.ok("scontrol shutdown slurmctld")?;
            c.record("scontrol shutdown slurmctld", &o.both());
        }
    }
    // A clean stop must end the process by itself.
    c.ok_on(
        "ctl",
        "pid=$(cat /tmp/ctld.pid); for i in $(seq 300); do \
         kill -0 $pid 2>/dev/null || exit 0; sleep 0.1; done; \
         echo \"slurmctld $pid still running 30 s after the stop\"; exit 1",
    )?;
    c.ok_on(
        "ctl",
        "setsid -f sh -c \"$(cat /tmp/ctld.cmd)\" >>/var/log/slurm/slurmctld.stdout 2>&1 </dev/null",
    )?;
    c.wait_for(
        None,
        "scontrol ping",
        "the controller to answer again",
        Duration::from_secs(60),
        |s| s.contains("is UP"),
    )?;
    Ok(())
}

/// `sbatch --parsable` `n` times in one shell; the job ids.
fn submit_many(c: &mut Ctx, n: usize, args: &str) -> Result<Vec<String>, String> {
    let mut ids = Vec::new();
    // Chunks keep each command well inside the per-command time limit.
    let mut left = n;
    while left > 0 {
        let k = left.min(40);
        let o = c.ok_as(
            Some("alice"),
            &format!("for i in $(seq {k}); do sbatch --parsable {args} || exit 1; done"),
        )?;
        let got: Vec<String> = o
            .stdout
            .lines()
            .map(|l| l.split(';').next().unwrap_or("").trim().to_string())
            .filter(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()))
            .collect();
        if got.len() != k {
            return Err(format!(
                "sbatch x{k}: got {} ids:\n{}",
                got.len(),
                indent(&o.both())
            ));
        }
        ids.extend(got);
        left -= k;
    }
    Ok(ids)
}

/// "STATE count" lines of the jobs named `name`.
fn state_counts(jobs: &str) -> String {
    let mut m = std::collections::BTreeMap::<&str, usize>::new();
    for l in jobs.lines() {
        if let Some(st) = l.split_whitespace().nth(1) {
            *m.entry(st).or_default() += 1;
        }
    }
    m.iter().map(|(k, v)| format!("{k} {v}\n")).collect()
}

/// The crash test: 200 jobs in every state, kill -9 of the controller,
/// a restart, every job as it was, and the pending ones run to the end.
fn crash_200(c: &mut Ctx) -> Result<(), String> {
    let name = format!("crash_{}", c.client.replace(['.', '-'], ""));
    let list = format!("squeue -h -t all -n {name} -o '%i %T' | sort -n");
    let common = format!("-J {name} -n 1 -o /dev/null");
    // 30 that complete and 30 that fail, done before the rest starts.
    let mut ids = submit_many(c, 30, &format!("{common} --wrap true"))?;
    ids.extend(submit_many(c, 30, &format!("{common} --wrap false"))?);
    c.wait_for(
        None,
        &list,
        "the first 60 jobs to finish",
        Duration::from_secs(90),
        |s| {
            s.lines().count() == 60
                && !s.contains("PENDING")
                && !s.contains("RUNNING")
                && !s.contains("COMPLETING")
        },
    )?;
    // 32 that fill both nodes (16 CPUs each) and stay running until the
    // gate file appears, then 108 that wait; 20 of those are cancelled
    // while pending. A gate, not a sleep: on a loaded CI machine stock
    // 26.05's restart once outlasted a `sleep 120`, its running jobs ended
    // and the pending ones started before the comparison.
    // Each also leaves a file once its script runs: the controller lists a
    // job RUNNING as soon as it sends the launch, and a launch still queued
    // in a stock controller's agent is lost with the kill (the job is then
    // requeued after the restart and a pending one takes its place).
    let gate = format!("{name}.gate");
    let started = format!("{name}.started");
    c.ok_as(
        Some("alice"),
        &format!("rm -rf {gate} {started}; mkdir {started}"),
    )?;
    let running = submit_many(
        c,
        32,
        &format!(
            "{common} --wrap 'touch {started}/$SLURM_JOB_ID; while [ ! -e {gate} ]; do sleep 1; done'"
        ),
    )?;
    let pending = submit_many(c, 108, &format!("{common} --wrap 'sleep 1'"))?;
    c.wait_for(
        None,
        &format!("squeue -h -t running -n {name} -o '%i' | wc -l"),
        "32 jobs running",
        Duration::from_secs(60),
        |s| s.trim() == "32",
    )?;
    c.wait_for(
        Some("alice"),
        &format!("ls {started} | wc -l"),
        "the 32 running jobs' scripts to start on their nodes",
        Duration::from_secs(60),
        |s| s.trim() == "32",
    )?;
    let cancel = pending[pending.len() - 20..].join(" ");
    c.ok_as(Some("alice"), &format!("scancel {cancel}"))?;
    ids.extend(running);
    ids.extend(pending);
    let before = c.wait_for(
        None,
        &list,
        "200 jobs listed, 20 cancelled",
        Duration::from_secs(30),
        |s| s.lines().count() == 200 && s.matches("CANCELLED").count() == 20,
    )?;
    let counts = state_counts(&before);
    must_contain(
        "states before the crash",
        &counts,
        &[
            "CANCELLED 20\n",
            "COMPLETED 30\n",
            "FAILED 30\n",
            "PENDING 88\n",
            "RUNNING 32\n",
        ],
    )?;
    c.record("states before the crash", &counts);
    stock_state_mark(c)?;
    wait_stock_state_saved(c)?;
    restart_ctld(c, Some("-9"))?;
    let after = c.wait_for_same(
        &list,
        "every job as before the crash",
        Duration::from_secs(30),
        &before,
    )?;
    c.record("states after the restart", &state_counts(&after));
    c.ok_as(Some("alice"), &format!("touch {gate}"))?;
    let done = c.wait_for(
        None,
        &list,
        "every job to finish",
        Duration::from_secs(150),
        |s| {
            s.lines().count() == 200
                && ["PENDING", "RUNNING", "COMPLETING"]
                    .iter()
                    .all(|x| !s.contains(x))
        },
    )?;
    let counts = state_counts(&done);
    must_contain(
        "final states",
        &counts,
        &["CANCELLED 20\n", "COMPLETED 150\n", "FAILED 30\n"],
    )?;
    c.record("final states", &counts);
    c.ok_as(Some("alice"), &format!("rm -rf {gate} {started}"))?;
    Ok(())
}

/// Partitions sinfo lists, one per line.
fn partitions(c: &mut Ctx) -> Result<String, String> {
    Ok(c.ok("sinfo -h -o %P | sort")?.stdout)
}

/// reconfigure and SIGHUP re-read slurm.conf; `scontrol shutdown
/// slurmctld` and SIGTERM stop the controller cleanly, and a job runs on
/// across both restarts.
fn ctld_lifecycle(c: &mut Ctx) -> Result<(), String> {
    writable_conf(c)?;
    let r = lifecycle_steps(c);
    let undo = restore_conf(c, &["ops_new", "ops_hup"]);
    r?;
    undo
}

/// Puts the original slurm.conf back and reconfigures; partitions the
/// scenario added that the controller keeps (22.05 does, until a
/// restart) are deleted.
pub(super) fn restore_conf(c: &mut Ctx, parts: &[&str]) -> Result<(), String> {
    c.ok_on("ctl", "umount /etc/slurm && rm -rf /tmp/ops-etc")?;
    c.ok("scontrol reconfigure")?;
    // Wait for the controller to be back (stock 24.11 on restarts itself).
    c.wait_for(
        None,
        "scontrol ping",
        "the controller after reconfigure",
        Duration::from_secs(60),
        |s| s.contains("is UP"),
    )?;
    for p in parts {
        c.ok(&format!(
            "if sinfo -h -o %P | grep -qx '{p}'; then scontrol delete partitionname={p}; fi"
        ))?;
    }
    c.wait_for(
        None,
        "sinfo -h -o %P",
        "only the original partitions",
        Duration::from_secs(60),
        |s| !s.is_empty() && !s.lines().any(|l| parts.contains(&l.trim_end_matches('*'))),
    )?;
    Ok(())
}

/// /etc/slurm is a read-only bind on ctl: give ctl a writable copy
/// (undone by unmounting it).
pub(super) fn writable_conf(c: &mut Ctx) -> Result<(), String> {
    c.ok_on(
        "ctl",
        "set -e; rm -rf /tmp/ops-etc; cp -a /etc/slurm /tmp/ops-etc; \
         mount --bind /tmp/ops-etc /etc/slurm",
    )?;
    Ok(())
}

/// Runs `f` with `lines` added to the controller's slurm.conf (through
/// `scontrol reconfigure`), then puts the original back the same way.
fn with_conf(
    c: &mut Ctx,
    lines: &str,
    part: &str,
    f: fn(&mut Ctx) -> Result<(), String>,
) -> Result<(), String> {
    with_partitions(c, lines, &[part], f)
}

/// [`with_conf`] for lines that add the partitions `parts`: it waits for
/// all of them, and takes all of them away again (also from a 22.05
/// controller, which keeps them until a restart).
pub(super) fn with_partitions(
    c: &mut Ctx,
    lines: &str,
    parts: &[&str],
    f: fn(&mut Ctx) -> Result<(), String>,
) -> Result<(), String> {
    writable_conf(c)?;
    let r = (|| {
        c.ok_on(
            "ctl",
            &format!("printf '%s\\n' '{lines}' >> /etc/slurm/slurm.conf"),
        )?;
        c.ok("scontrol reconfigure")?;
        c.wait_for(
            None,
            "sinfo -h -o %P",
            "the scenario's partitions after reconfigure",
            Duration::from_secs(60),
            |s| {
                parts
                    .iter()
                    .all(|p| s.lines().any(|l| l.trim_end_matches('*') == *p))
            },
        )?;
        f(c)
    })();
    let undo = restore_conf(c, parts);
    r?;
    undo
}

/// DefMemPerCPU, MaxMemPerCPU, DefaultTime and MaxTime of a partition:
/// shown, and applied to a job that asks for neither memory nor time.
fn part_limits(c: &mut Ctx) -> Result<(), String> {
    with_conf(
        c,
        "PartitionName=ops_lim Nodes=n1 DefMemPerCPU=100 MaxMemPerCPU=1000 DefaultTime=5 MaxTime=10 State=UP",
        "ops_lim",
        part_limits_steps,
    )
}

fn part_limits_steps(c: &mut Ctx) -> Result<(), String> {
    let o = c.ok("scontrol show partition ops_lim")?;
    must_contain(
        "scontrol show partition ops_lim",
        &o.stdout,
        &[
            "DefMemPerCPU=100",
            "MaxMemPerCPU=1000",
            "DefaultTime=00:05:00",
            "MaxTime=00:10:00",
        ],
    )?;
    c.record("scontrol show partition ops_lim", &o.stdout);

    let o = c.ok_as(
        Some("alice"),
        "sbatch -p ops_lim -J plim -o /dev/null --wrap 'sleep 2'",
    )?;
    let id = submitted_id(&o)?;
    c.job(&id);
    let mut shown = String::new();
    for key in ["TimeLimit", "MinMemoryCPU", "Partition"] {
        shown += &format!("{key}={}\n", c.job_field(&id, key)?);
    }
    must_contain(
        "job in ops_lim",
        &shown,
        &["TimeLimit=00:05:00", "MinMemoryCPU=100M"],
    )?;
    c.record("job defaults from the partition", &shown);
    c.wait_state(&id, "COMPLETED", JOB_WAIT)?;

    // Over MaxTime (EnforcePartLimits is off): it waits.
    let o = c.ok_as(
        Some("alice"),
        "sbatch -p ops_lim -t 20 -J plim2 -o /dev/null --wrap true",
    )?;
    let id = submitted_id(&o)?;
    c.job(&id);
    let q = c.wait_for(
        None,
        &format!("squeue -h -j {id} -o '%j %T %r'"),
        "the job to wait with PartitionTimeLimit",
        Duration::from_secs(30),
        |s| s.contains("PartitionTimeLimit"),
    )?;
    c.record("squeue (over MaxTime)", &q);
    c.ok_as(Some("alice"), &format!("scancel {id}"))?;
    c.wait_state(&id, "CANCELLED", JOB_WAIT)?;
    Ok(())
}

fn lifecycle_steps(c: &mut Ctx) -> Result<(), String> {
    let o = c.ok_as(
        Some("alice"),
        "sbatch -J life -n 1 -o /dev/null --wrap 'sleep 300'",
    )?;
    let id = submitted_id(&o)?;
    c.job(&id);
    c.wait_state(&id, "RUNNING", JOB_WAIT)?;

    c.ok_on(
        "ctl",
        "echo 'PartitionName=ops_new Nodes=n1 MaxTime=30 State=UP' >> /etc/slurm/slurm.conf",
    )?;
    let o = c.ok("scontrol reconfigure")?;
    c.record("scontrol reconfigure", &o.both());
    let shown = c.wait_for(
        None,
        "sinfo -h -p ops_new -o '%P %D %l %a %N'",
        "the new partition after reconfigure",
        Duration::from_secs(60),
        |s| s.contains("ops_new"),
    )?;
    c.record("sinfo -p ops_new after reconfigure", &shown);

    // (22.05 keeps partitions removed from the file until a restart, so
    // the SIGHUP step adds one too.)
    c.ok_on(
        "ctl",
        "echo 'PartitionName=ops_hup Nodes=n2 State=UP' >> /etc/slurm/slurm.conf",
    )?;
    c.ok_on(
        "ctl",
        "kill -HUP $(pgrep -x slurmctld-rs || pgrep -x slurmctld)",
    )?;
    c.wait_for(
        None,
        "sinfo -h -o %P",
        "the partition added before SIGHUP",
        Duration::from_secs(60),
        |s| s.lines().any(|l| l == "ops_hup"),
    )?;
    let p = partitions(c)?;
    c.record("partitions after SIGHUP", &p);

    restart_ctld(c, None)?;
    c.wait_state(&id, "RUNNING", Duration::from_secs(30))?;
    restart_ctld(c, Some("-TERM"))?;
    c.wait_state(&id, "RUNNING", Duration::from_secs(30))?;
    let o = c.ok("squeue -h -n life -o '%j %T %u'")?;
    c.record("the job after two restarts", &o.stdout);

    c.ok_as(Some("alice"), &format!("scancel {id}"))?;
    c.wait_state(&id, "CANCELLED", JOB_WAIT)?;
    c.wait_for(
        None,
        "sinfo -h -N -o '%N %T' | sort -u",
        "nodes idle again",
        JOB_WAIT,
        |s| s.lines().all(|l| l.ends_with(" idle")),
    )?;
    Ok(())
}

/// `scontrol update partitionname=gpu_nodes state=...`: DOWN queues
/// (PartitionDown), DRAIN runs what it has but takes nothing new,
/// INACTIVE takes nothing, UP again; only root may change it.
fn part_state(c: &mut Ctx) -> Result<(), String> {
    let r = part_state_steps(c);
    // Whatever happened, leave the partition up.
    let undo = c.ok("scontrol update partitionname=gpu_nodes state=up");
    r?;
    undo.map(|_| ())
}

fn part_state_steps(c: &mut Ctx) -> Result<(), String> {
    let alice = Some("alice");
    let o = c.run_as(alice, "scontrol update partitionname=gpu_nodes state=down");
    if o.rc == 0 {
        return Err(format!(
            "alice could set a partition down:\n{}",
            indent(&o.both())
        ));
    }
    c.record("update partition as alice", &o.both());

    c.ok("scontrol update partitionname=gpu_nodes state=down")?;
    let o = c.ok("scontrol show partition gpu_nodes")?;
    must_contain("show partition", &o.stdout, &["State=DOWN"])?;
    c.record("scontrol show partition (down)", &o.stdout);
    let o = c.ok("sinfo -p gpu_nodes")?;
    c.record("sinfo -p gpu_nodes (down)", &o.stdout);

    let o = c.ok_as(
        alice,
        "sbatch -p gpu_nodes -J pdown -o /dev/null --wrap true",
    )?;
    let id = submitted_id(&o)?;
    c.job(&id);
    let q = c.wait_for(
        None,
        &format!("squeue -h -j {id} -o '%j %T %r'"),
        "the job to wait with PartitionDown",
        Duration::from_secs(30),
        |s| s.contains("PartitionDown"),
    )?;
    c.record("squeue (partition down)", &q);

    // DRAIN: the waiting job runs, new ones are refused.
    c.ok("scontrol update partitionname=gpu_nodes state=drain")?;
    c.wait_state(&id, "COMPLETED", JOB_WAIT)?;
    let o = c.run_as(alice, "sbatch -p gpu_nodes -o /dev/null --wrap true");
    if o.rc == 0 {
        return Err(format!(
            "sbatch to a drained partition succeeded:\n{}",
            indent(&o.both())
        ));
    }
    c.record("sbatch to a DRAIN partition", &o.both());
    let o = c.ok("scontrol show partition gpu_nodes")?;
    c.record("scontrol show partition (drain)", &o.stdout);

    c.ok("scontrol update partitionname=gpu_nodes state=inactive")?;
    let o = c.run_as(alice, "sbatch -p gpu_nodes -o /dev/null --wrap true");
    if o.rc == 0 {
        return Err(format!(
            "sbatch to an inactive partition succeeded:\n{}",
            indent(&o.both())
        ));
    }
    c.record("sbatch to an INACTIVE partition", &o.both());
    let o = c.ok("sinfo -p gpu_nodes")?;
    c.record("sinfo -p gpu_nodes (inactive)", &o.stdout);

    c.ok("scontrol update partitionname=gpu_nodes state=up")?;
    let o = c.ok("scontrol show partition gpu_nodes")?;
    must_contain("show partition", &o.stdout, &["State=UP"])?;
    c.record("scontrol show partition (up)", &o.stdout);
    Ok(())
}

/// MaxNodes/MinNodes: a job outside the partition's node range waits
/// with PartitionNodeLimit (EnforcePartLimits is off).
fn part_nodes(c: &mut Ctx) -> Result<(), String> {
    with_partitions(
        c,
        "PartitionName=ops_max Nodes=n[1-2] MaxNodes=1 State=UP\nPartitionName=ops_min Nodes=n[1-2] MinNodes=2 State=UP",
        &["ops_max", "ops_min"],
        part_nodes_steps,
    )
}

fn part_nodes_steps(c: &mut Ctx) -> Result<(), String> {
    for p in ["ops_max", "ops_min"] {
        let o = c.ok(&format!("scontrol show partition {p}"))?;
        c.record(&format!("scontrol show partition {p}"), &o.stdout);
    }
    let mut ids = Vec::new();
    for (p, n) in [("ops_max", 2), ("ops_min", 1)] {
        let o = c.ok_as(
            Some("alice"),
            &format!("sbatch -p {p} -N {n} -J {p} -o /dev/null --wrap true"),
        )?;
        let id = submitted_id(&o)?;
        c.job(&id);
        let q = c.wait_for(
            None,
            &format!("squeue -h -j {id} -o '%j %T %r'"),
            "the job to wait with PartitionNodeLimit",
            Duration::from_secs(30),
            |s| s.contains("PartitionNodeLimit"),
        )?;
        c.record(&format!("squeue ({p}, -N {n})"), &q);
        ids.push(id);
    }
    // Within the range: runs.
    let o = c.ok_as(
        Some("alice"),
        "sbatch -p ops_min -N 2 -J ops_min_ok -o /dev/null --wrap true",
    )?;
    let ok = submitted_id(&o)?;
    c.job(&ok);
    c.wait_state(&ok, "COMPLETED", JOB_WAIT)?;
    c.ok_as(Some("alice"), &format!("scancel {}", ids.join(" ")))?;
    for id in &ids {
        c.wait_state(id, "CANCELLED", JOB_WAIT)?;
    }
    Ok(())
}

/// AllowGroups: a user outside the groups is accepted and waits with
/// stock's reason; root runs.
fn part_groups(c: &mut Ctx) -> Result<(), String> {
    with_conf(
        c,
        "PartitionName=ops_grp Nodes=n1 AllowGroups=root State=UP",
        "ops_grp",
        part_groups_steps,
    )
}

fn part_groups_steps(c: &mut Ctx) -> Result<(), String> {
    let o = c.ok("scontrol show partition ops_grp")?;
    must_contain("show partition", &o.stdout, &["AllowGroups=root"])?;
    c.record("scontrol show partition ops_grp", &o.stdout);
    // 22.05 refuses at submit; later releases accept the job and hold it.
    let o = c.run_as(
        Some("alice"),
        "sbatch -p ops_grp -J pgrp -o /dev/null --wrap true",
    );
    let waiting = if o.rc != 0 {
        must_contain(
            "sbatch outside AllowGroups",
            &o.stderr,
            &["User's group not permitted to use this partition"],
        )?;
        c.record("sbatch outside AllowGroups", &o.both());
        None
    } else {
        let id = submitted_id(&o)?;
        c.job(&id);
        let q = c.wait_for(
            None,
            &format!("squeue -h -j {id} -o '%j %T %r'"),
            "alice's job to wait for its group",
            Duration::from_secs(30),
            |s| s.contains("PENDING") && !s.contains("(null)") && !s.contains(" None"),
        )?;
        c.record("squeue (not in AllowGroups)", &q);
        Some(id)
    };
    let o = c.ok("sbatch -p ops_grp -J pgrp_root -o /dev/null --wrap true")?;
    let rid = submitted_id(&o)?;
    c.job(&rid);
    c.wait_state(&rid, "COMPLETED", JOB_WAIT)?;
    if let Some(id) = waiting {
        c.ok(&format!("scancel {id}"))?;
        c.wait_state(&id, "CANCELLED", JOB_WAIT)?;
    }
    Ok(())
}

/// A job with a running srun step lives through a clean controller
/// restart (which leaves a snapshot, the path that used to forget steps),
/// and srun ends normally. (Steps themselves are not listed: rs has no
/// REQUEST_JOB_STEP_INFO yet, so `squeue -s` cannot be compared.)
fn step_restart(c: &mut Ctx) -> Result<(), String> {
    let out = "/home/alice/ops-step.out";
    c.ok_as(
        Some("alice"),
        &format!(
            "rm -f {out}; setsid sh -c 'srun -N2 -J opsstep sleep 20; echo rc=$?' \
             >{out} 2>&1 </dev/null &"
        ),
    )?;
    let jobs = "squeue -h -n opsstep -o '%i %j %T %D'";
    let before = c.wait_for(
        None,
        jobs,
        "the srun job to run",
        Duration::from_secs(30),
        |s| s.contains(" opsstep RUNNING 2"),
    )?;
    let id = before.split_whitespace().next().unwrap_or("").to_string();
    c.job(&id);
    // Let srun's tasks start on both nodes.
    std::thread::sleep(Duration::from_secs(2));
    c.record("the job before the restart", &before);
    restart_ctld(c, Some("-TERM"))?;
    let want = before.clone();
    let after = c.wait_for(
        None,
        jobs,
        "the job listed as before",
        Duration::from_secs(30),
        |s| s == want,
    )?;
    c.record("the job after the restart", &after);
    let o = c.wait_for(
        Some("alice"),
        &format!("cat {out}"),
        "srun to end",
        Duration::from_secs(60),
        |s| s.contains("rc="),
    )?;
    must_contain("srun after the restart", &o, &["rc=0"])?;
    c.record("srun's end", &o);
    c.wait_state(&id, "COMPLETED", JOB_WAIT)?;
    c.ok_as(Some("alice"), &format!("rm -f {out}"))?;
    Ok(())
}

/// `scontrol shutdown` (no option) stops the controller and every slurmd;
/// all are started again and the nodes come back idle.
fn shutdown_all(c: &mut Ctx) -> Result<(), String> {
    const HOSTS: [(&str, &str); 3] = [("ctl", "slurmctld"), ("n1", "slurmd"), ("n2", "slurmd")];
    for (host, d) in HOSTS {
        c.ok_on(
            host,
            &format!(
                "set -e; pid=$(pgrep -x {d}-rs || pgrep -x {d}); \
                 tr '\\0' ' ' < /proc/$pid/cmdline > /tmp/ops-d.cmd; echo $pid > /tmp/ops-d.pid"
            ),
        )?;
    }
    let o = c.ok("scontrol shutdown")?;
    c.record("scontrol shutdown", &o.both());
    for (host, d) in HOSTS {
        c.ok_on(
            host,
            &format!(
                "pid=$(cat /tmp/ops-d.pid); for i in $(seq 300); do \
                 kill -0 $pid 2>/dev/null || exit 0; sleep 0.1; done; \
                 echo \"{d} $pid still running 30 s after scontrol shutdown\"; exit 1"
            ),
        )?;
    }
    for (host, d) in HOSTS {
        c.ok_on(
            host,
            &format!(
                "setsid -f sh -c \"$(cat /tmp/ops-d.cmd)\" >>/var/log/slurm/{d}.stdout 2>&1 </dev/null"
            ),
        )?;
    }
    c.wait_for(
        None,
        "scontrol ping",
        "the controller to answer again",
        Duration::from_secs(60),
        |s| s.contains("is UP"),
    )?;
    let o = c.wait_for(
        None,
        "sinfo -h -N -o '%N %T' | sort -u",
        "both nodes idle again",
        Duration::from_secs(90),
        |s| s.lines().count() == 2 && s.lines().all(|l| l.ends_with(" idle")),
    )?;
    c.record("nodes after the restart", &o);
    Ok(())
}

pub fn all() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "sdiag",
            about: "sdiag counts RPCs by type and user; sdiag -r resets (root only)",
            compare: true,
            run: sdiag,
        },
        Scenario {
            name: "crash_200",
            about: "200 jobs in every state survive kill -9 of the controller; the pending ones then run",
            compare: true,
            run: crash_200,
        },
        Scenario {
            name: "ctld_lifecycle",
            about: "reconfigure and SIGHUP re-read slurm.conf; scontrol shutdown and SIGTERM stop cleanly",
            compare: true,
            run: ctld_lifecycle,
        },
        Scenario {
            name: "part_state",
            about: "scontrol update partitionname=X state=down|drain|inactive|up; PartitionDown",
            compare: true,
            run: part_state,
        },
        Scenario {
            name: "part_limits",
            about: "partition DefMemPerCPU/MaxMemPerCPU/DefaultTime/MaxTime: shown, applied, PartitionTimeLimit",
            compare: true,
            run: part_limits,
        },
        Scenario {
            name: "part_nodes",
            about: "partition MaxNodes/MinNodes: outside the range waits with PartitionNodeLimit",
            compare: true,
            run: part_nodes,
        },
        Scenario {
            name: "part_groups",
            about: "partition AllowGroups: outsiders wait with stock's reason, root runs",
            compare: true,
            run: part_groups,
        },
        Scenario {
            name: "step_restart",
            about: "a running srun step survives a clean controller restart (snapshot) and ends normally",
            compare: true,
            run: step_restart,
        },
        Scenario {
            name: "shutdown_all",
            about: "scontrol shutdown stops the controller and every slurmd; they restart idle",
            compare: true,
            run: shutdown_all,
        },
    ]
}
