//! Controller gaps found by the node-daemon and partition work: step info
//! (`squeue -s`, `scontrol show step`).

use super::ctx::*;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);

/// `squeue -s` lists the batch step and an srun step of a running job;
/// `scontrol show step` shows the srun step's layout.
fn steps(c: &mut Ctx) -> Result<(), String> {
    let alice = Some("alice");
    let o = c.ok_as(
        alice,
        "sbatch -N2 --ntasks-per-node=1 -J stepjob -o /dev/null --wrap 'srun -n2 sleep 30'",
    )?;
    let id = submitted_id(&o)?;
    c.job(&id);
    c.wait_for(
        None,
        &format!("squeue -s -h -j {id} -o '%i'"),
        "the srun step listed",
        WAIT,
        |s| s.lines().any(|l| l.trim().ends_with(".0")),
    )?;
    let o = c.ok(&format!("squeue -s -h -j {id} -o '%i %j %P %u %N' | sort"))?;
    must_contain(
        "squeue -s",
        &o.stdout,
        &[
            &format!("{id}.batch batch debug alice n1"),
            &format!("{id}.0 sleep debug alice n[1-2]"),
        ],
    )?;
    c.record("squeue -s", &o.stdout);
    let o = c.ok(&format!("scontrol show step {id}.0"))?;
    must_contain(
        "scontrol show step",
        &o.stdout,
        &[
            &format!("StepId={id}.0 "),
            "State=RUNNING",
            "Partition=debug",
            "NodeList=n[1-2]",
            "Nodes=2",
            "Tasks=2",
            "Name=sleep",
        ],
    )?;
    let st = format!(
        "StepId={} State={} NodeList={} Nodes={} Tasks={} Name={}\n",
        field(&o.stdout, "StepId").unwrap_or_default(),
        field(&o.stdout, "State").unwrap_or_default(),
        field(&o.stdout, "NodeList").unwrap_or_default(),
        field(&o.stdout, "Nodes").unwrap_or_default(),
        field(&o.stdout, "Tasks").unwrap_or_default(),
        field(&o.stdout, "Name").unwrap_or_default(),
    );
    c.record("scontrol show step", &st);
    // a step that does not exist
    let o = c.run_as(None, &format!("scontrol show step {id}.7"));
    c.record(
        "scontrol show step (missing)",
        // (short job ids are not normalised: name it here)
        &format!("{}{}", o.stdout, o.stderr).replace(&format!("{id}.7"), "<JOB>.7"),
    );
    c.ok(&format!("scancel {id}"))?;
    c.wait_for(None, "squeue -h -o %i", "empty queue", WAIT, |s| {
        s.trim().is_empty()
    })?;
    c.wait_for(None, "sinfo -h -o %t | sort -u", "nodes idle", WAIT, |s| {
        s.trim() == "idle"
    })?;
    Ok(())
}

fn sbatch_sleep(c: &mut Ctx, args: &str) -> Result<String, String> {
    let o = c.ok_as(
        Some("alice"),
        &format!("sbatch {args} -o /dev/null --wrap 'sleep 30'"),
    )?;
    let id = submitted_id(&o)?;
    c.job(&id);
    c.wait_state(&id, "RUNNING", WAIT)?;
    Ok(id)
}

/// `--exclusive` takes a whole node that runs no other job: with a small
/// job on n1 it goes to n2, with all its CPUs; the next small job goes
/// back to n1.
fn exclusive(c: &mut Ctx) -> Result<(), String> {
    let small = sbatch_sleep(c, "-n1")?;
    let excl = sbatch_sleep(c, "-n1 --exclusive")?;
    let next = sbatch_sleep(c, "-n1")?;
    let mut rec = String::new();
    for (what, id) in [("small", &small), ("exclusive", &excl), ("next", &next)] {
        let o = c.ok(&format!("scontrol show job {id}"))?;
        rec.push_str(&format!(
            "{what}: NodeList={} NumCPUs={}\n",
            field(&o.stdout, "NodeList").unwrap_or_default(),
            field(&o.stdout, "NumCPUs").unwrap_or_default(),
        ));
        c.record(
            &format!("{what} OverSubscribe"),
            &field(&o.stdout, "OverSubscribe").unwrap_or_default(),
        );
    }
    let want = "small: NodeList=n1 NumCPUs=1\nexclusive: NodeList=n2 NumCPUs=16\nnext: NodeList=n1 NumCPUs=1\n";
    let res = if rec == want {
        Ok(())
    } else {
        Err(format!("--exclusive placement: want {want:?}, got {rec:?}"))
    };
    c.record("--exclusive placement", &rec);
    c.ok(&format!("scancel {small} {excl} {next}"))?;
    c.wait_for(None, "squeue -h -o %i", "empty queue", WAIT, |s| {
        s.trim().is_empty()
    })?;
    c.wait_for(None, "sinfo -h -o %t | sort -u", "nodes idle", WAIT, |s| {
        s.trim() == "idle"
    })?;
    res
}

fn sbatch_as(c: &mut Ctx, user: &str, args: &str) -> Result<String, String> {
    let o = c.ok_as(
        Some(user),
        &format!("sbatch {args} -o /dev/null --wrap 'sleep 30'"),
    )?;
    let id = submitted_id(&o)?;
    c.job(&id);
    c.wait_state(&id, "RUNNING", WAIT)?;
    Ok(id)
}

fn part_limits_inner(c: &mut Ctx) -> Result<(), String> {
    // MaxMemPerCPU: 2500 MB a CPU over a 1000 limit runs as 3 CPUs a task
    c.ok("scontrol update partitionname=debug MaxMemPerCPU=1000")?;
    let id = sbatch_as(c, "alice", "-n1 --mem-per-cpu=2500")?;
    let o = c.ok(&format!("scontrol show job {id}"))?;
    let rec = format!(
        "NumCPUs={} CPUs/Task={} MinMemoryCPU={}\n",
        field(&o.stdout, "NumCPUs").unwrap_or_default(),
        field(&o.stdout, "CPUs/Task").unwrap_or_default(),
        field(&o.stdout, "MinMemoryCPU").unwrap_or_default(),
    );
    c.record("MaxMemPerCPU", &rec);
    must_contain("MaxMemPerCPU", &rec, &["NumCPUs=3 CPUs/Task=3"])?;
    c.ok(&format!("scancel {id}"))?;
    // Its node takes no new job until the epilog is done (both daemons).
    c.wait_state(&id, "CANCELLED", WAIT)?;
    c.ok("scontrol update partitionname=debug ExclusiveUser=YES")?;
    // ExclusiveUser: bob's job avoids alice's node; alice shares hers
    // (memory within MaxMemPerCPU: stock refuses a job whose default
    // per-node memory would need more CPUs than a node has)
    let a1 = sbatch_as(c, "alice", "-n1 --mem-per-cpu=100")?;
    let b1 = sbatch_as(c, "bob", "-n1 --mem-per-cpu=100")?;
    let a2 = sbatch_as(c, "alice", "-n1 --mem-per-cpu=100")?;
    let mut rec = String::new();
    for (what, id) in [("alice", &a1), ("bob", &b1), ("alice again", &a2)] {
        let o = c.ok(&format!("scontrol show job {id}"))?;
        rec.push_str(&format!(
            "{what}: NodeList={}\n",
            field(&o.stdout, "NodeList").unwrap_or_default()
        ));
        c.record(
            &format!("{what} OverSubscribe"),
            &field(&o.stdout, "OverSubscribe").unwrap_or_default(),
        );
    }
    c.record("ExclusiveUser", &rec);
    let want = "alice: NodeList=n1\nbob: NodeList=n2\nalice again: NodeList=n1\n";
    if rec != want {
        return Err(format!(
            "ExclusiveUser placement: want {want:?}, got {rec:?}"
        ));
    }
    Ok(())
}

/// Partition MaxMemPerCPU (raises CPUs per task) and ExclusiveUser, set
/// with `scontrol update`; `scontrol reconfigure` restores slurm.conf's.
fn part_limits(c: &mut Ctx) -> Result<(), String> {
    let res = part_limits_inner(c);
    let _ = c.ok("scancel -u alice");
    let _ = c.ok("scancel -u bob");
    let _ = c.ok("scontrol reconfigure");
    res?;
    c.wait_for(None, "squeue -h -o %i", "empty queue", WAIT, |s| {
        s.trim().is_empty()
    })?;
    c.wait_for(None, "sinfo -h -o %t | sort -u", "nodes idle", WAIT, |s| {
        s.trim() == "idle"
    })?;
    let o = c.ok("scontrol show partition debug")?;
    must_contain(
        "partition after reconfigure",
        &o.stdout,
        &["MaxMemPerNode=UNLIMITED"],
    )?;
    // (26.05 clients print ExclusiveUser as `Exclusive=`)
    if !o.stdout.contains("ExclusiveUser=NO") && !o.stdout.contains(" Exclusive=NO") {
        return Err(format!(
            "partition after reconfigure: ExclusiveUser still set:\n{}",
            o.stdout
        ));
    }
    Ok(())
}

/// `scancel <job>.<step>` ends that step only: the job goes on; a
/// stranger is refused; an unknown step is an invalid id.
fn step_cancel(c: &mut Ctx) -> Result<(), String> {
    let o = c.ok_as(
        Some("alice"),
        "sbatch -N2 --ntasks-per-node=1 -J stepcan -o /dev/null --wrap 'srun -n2 sleep 120; sleep 120'",
    )?;
    let id = submitted_id(&o)?;
    c.job(&id);
    c.wait_for(
        None,
        &format!("squeue -s -h -j {id} -o '%i'"),
        "the srun step listed",
        WAIT,
        |s| s.lines().any(|l| l.trim().ends_with(".0")),
    )?;
    // (short job ids are not normalised: name them here)
    let hide = |s: &str| s.replace(&id, "<JOB>");
    for (user, step) in [("bob", "0"), ("alice", "7"), ("alice", "0")] {
        let o = c.run_as(Some(user), &format!("scancel {id}.{step}"));
        c.record(
            &format!("{user}: scancel <JOB>.{step} (rc {})", o.rc),
            &hide(&o.both()),
        );
    }
    c.wait_for(
        None,
        &format!("squeue -s -h -j {id} -o '%i'"),
        "the srun step gone",
        WAIT,
        |s| !s.lines().any(|l| l.trim().ends_with(".0")),
    )?;
    let o = c.ok(&format!("squeue -h -j {id} -o '%j %T'"))?;
    must_contain(
        "job after its step's cancel",
        &o.stdout,
        &["stepcan RUNNING"],
    )?;
    c.record("job after its step's cancel", &o.stdout);
    c.ok(&format!("scancel {id}"))?;
    c.wait_for(None, "squeue -h -o %i", "empty queue", WAIT, |s| {
        s.trim().is_empty()
    })?;
    c.wait_for(None, "sinfo -h -o %t | sort -u", "nodes idle", WAIT, |s| {
        s.trim() == "idle"
    })?;
    Ok(())
}

pub fn all() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "ctld2_steps",
            about: "squeue -s and scontrol show step list the batch and srun steps",
            compare: true,
            run: steps,
        },
        Scenario {
            name: "ctld2_step_cancel",
            about: "scancel <job>.<step> ends that step only, for its owner; unknown steps are invalid ids",
            compare: true,
            run: step_cancel,
        },
        Scenario {
            name: "ctld2_exclusive",
            about: "--exclusive takes a whole node that runs no other job",
            compare: true,
            run: exclusive,
        },
        Scenario {
            name: "ctld2_part_limits",
            about: "partition MaxMemPerCPU raises CPUs per task; ExclusiveUser keeps users apart",
            compare: true,
            run: part_limits,
        },
    ]
}
