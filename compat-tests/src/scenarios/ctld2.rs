//! Controller gaps found by the node-daemon and partition work: step info
//! (`squeue -s`, `scontrol show step`).

use super::*;
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

pub fn all() -> Vec<Scenario> {
    vec![Scenario {
        name: "ctld2_steps",
        about: "squeue -s and scontrol show step list the batch and srun steps",
        compare: true,
        run: steps,
    }]
}
