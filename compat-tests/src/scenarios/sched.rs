//! Scheduling: priority order and pending reasons, backfill, squeue --start.

use super::ctx::*;
use std::time::Duration;

/// Long enough for stock's backfill (bf_interval=30 s by default).
const BF_WAIT: Duration = Duration::from_secs(90);

fn sbatch(c: &mut Ctx, args: &str) -> Result<String, String> {
    let o = c.ok_as(Some("alice"), &format!("cd && sbatch {args}"))?;
    let id = submitted_id(&o)?;
    c.job(&id);
    Ok(id)
}

/// Cancels `ids` and waits until the queue is empty.
fn clean(c: &mut Ctx, ids: &[&str]) -> Result<(), String> {
    c.ok(&format!("scancel {}", ids.join(" ")))?;
    c.wait_for(
        None,
        "squeue -h -o '%i %T'",
        "an empty queue",
        JOB_WAIT,
        |s| s.trim().is_empty(),
    )?;
    Ok(())
}

/// The first job that cannot start waits for Resources, the ones behind it
/// for Priority; when resources free, they start in order.
fn priority_reasons(c: &mut Ctx) -> Result<(), String> {
    let big = sbatch(c, "-J big -n32 -t 10 --wrap 'sleep 300'")?;
    c.wait_state(&big, "RUNNING", JOB_WAIT)?;
    let first = sbatch(c, "-J first -n4 -t 5 --wrap 'sleep 1'")?;
    let second = sbatch(c, "-J second -n4 -t 5 --wrap 'sleep 1'")?;
    let want =
        |s: &str| s.contains("first PENDING Resources") && s.contains("second PENDING Priority");
    let out = c.wait_for(
        None,
        "squeue -h -o '%j %T %r' --sort=i",
        "Resources then Priority",
        BF_WAIT,
        want,
    )?;
    c.record("squeue reasons", &out);
    c.ok(&format!("scancel {big}"))?;
    for id in [&first, &second] {
        c.wait_state(id, "COMPLETED", JOB_WAIT)?;
    }
    clean(c, &[&big, &first, &second])
}

/// A big job waits for a running one; a short small job starts in the hole
/// (it ends before the big job can start), a long one does not; the big
/// job's expected start and nodes come from the plan.
fn backfill(c: &mut Ctx) -> Result<(), String> {
    let hold = sbatch(c, "-J hold -N1 -n16 -t 10 --wrap 'sleep 600'")?;
    c.wait_state(&hold, "RUNNING", JOB_WAIT)?;
    let big = sbatch(c, "-J big -N2 -n32 -t 10 --wrap 'sleep 1'")?;
    let short = sbatch(c, "-J short -n1 -t 2 --wrap 'sleep 300'")?;
    let long = sbatch(c, "-J long -n1 -t 30 --wrap 'sleep 1'")?;
    c.wait_state(&short, "RUNNING", BF_WAIT)?;
    // The big job has a planned start (not N/A) on both nodes. (Its reason
    // is left out: stock shows None until its main scheduler next runs.)
    let out = c.wait_for(
        None,
        &format!("squeue --start -h -j {big} -o '%j %T %S %Y'"),
        "a planned start for the big job",
        BF_WAIT,
        |s| s.contains("big PENDING") && !s.contains("N/A") && s.contains("n[1-2]"),
    )?;
    c.record("squeue --start (big job)", &out);
    let o = c.ok(&format!("squeue -h -j {long} -o '%j %T'"))?;
    must_contain("the long job waits", &o.stdout, &["long PENDING"])?;
    let o = c.ok(&format!("squeue -h -j {big},{long} -o '%j %T' --sort=i"))?;
    c.record("squeue big and long", &o.stdout);
    let o = c.ok(&format!("scontrol show job {big}"))?;
    let start = field(&o.stdout, "StartTime").unwrap_or_default();
    if start == "Unknown" || start.is_empty() {
        return Err(format!(
            "scontrol show job: no StartTime for the big job:\n{}",
            o.stdout
        ));
    }
    must_contain(
        "scontrol show job (big)",
        &o.stdout,
        &["SchedNodeList=n[1-2]"],
    )?;
    clean(c, &[&hold, &big, &short, &long])
}

pub fn all() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "sched_priority_reasons",
            about: "first blocked job Resources, later ones Priority, then they run in order",
            compare: true,
            run: priority_reasons,
        },
        Scenario {
            name: "sched_backfill",
            about:
                "a short job fills the hole before a big job's start; squeue --start shows the plan",
            compare: true,
            run: backfill,
        },
    ]
}
