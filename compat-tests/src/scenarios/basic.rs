//! The first scenarios: queries, batch and srun basics, drain, crash.

use super::ctx::*;
use std::time::Duration;

fn ping(c: &mut Ctx) -> Result<(), String> {
    let o = c.ok("scontrol ping")?;
    must_contain(
        "scontrol ping",
        &o.stdout,
        &["Slurmctld(primary) at ctl is UP"],
    )?;
    c.record("scontrol ping", &o.stdout);
    Ok(())
}

fn sinfo(c: &mut Ctx) -> Result<(), String> {
    let o = c.ok("sinfo")?;
    must_contain(
        "sinfo",
        &o.stdout,
        &["PARTITION", "debug*", "gpu_nodes", "idle"],
    )?;
    c.record("sinfo", &o.stdout);
    let o = c.ok("sinfo -N -h -o '%N %P %T %c %m %G' | sort")?;
    must_contain(
        "sinfo -N",
        &o.stdout,
        &[
            "n1 debug* idle 16 64000 gpu:a100:4",
            "n2 gpu_nodes idle 16 64000 gpu:a100:4",
        ],
    )?;
    c.record("sinfo -N -o", &o.stdout);
    Ok(())
}

fn squeue(c: &mut Ctx) -> Result<(), String> {
    let o = c.ok("squeue")?;
    must_contain(
        "squeue",
        &o.stdout,
        &["JOBID", "PARTITION", "NODELIST(REASON)"],
    )?;
    if o.stdout.lines().count() != 1 {
        return Err(format!(
            "squeue: expected an empty queue, got:\n{}",
            indent(&o.stdout)
        ));
    }
    c.record("squeue", &o.stdout);
    let o = c.ok("squeue -h -o '%i %T'")?;
    if !o.stdout.trim().is_empty() {
        return Err(format!(
            "squeue -h: expected no jobs, got:\n{}",
            indent(&o.stdout)
        ));
    }
    Ok(())
}

fn show_config(c: &mut Ctx) -> Result<(), String> {
    let o = c.ok("scontrol show config")?;
    let name = c.cluster.name.clone();
    must_contain(
        "scontrol show config",
        &o.stdout,
        &[
            &format!("ClusterName             = {name}"),
            "AuthType                = auth/munge",
            "SelectType              = select/cons_tres",
            "GresTypes               = gpu",
            "Slurmctld(primary) at ctl is UP",
        ],
    )?;
    // Compare a fixed set of settings (the whole dump has build-specific paths and defaults).
    const KEYS: &[&str] = &[
        "AuthType",
        "ClusterName",
        "GresTypes",
        "MinJobAge",
        "ProctrackType",
        "ReturnToService",
        "SelectType",
        "SelectTypeParameters",
        "SlurmUser",
        "SlurmctldPort",
        "SlurmdPort",
        "SlurmctldHost[0]",
        "SlurmdParameters",
        "TaskPlugin",
    ];
    let picked: String = o
        .stdout
        .lines()
        .filter(|l| KEYS.iter().any(|k| l.split_whitespace().next() == Some(*k)))
        .map(|l| format!("{l}\n"))
        .collect();
    c.record("scontrol show config (selected keys)", &picked);
    Ok(())
}

fn show_node(c: &mut Ctx) -> Result<(), String> {
    let o = c.ok("scontrol show node n1")?;
    must_contain(
        "scontrol show node",
        &o.stdout,
        &[
            "NodeName=n1 ",
            "CPUTot=16",
            "RealMemory=64000",
            "Gres=gpu:a100:4",
            "State=IDLE",
            "Partitions=debug",
        ],
    )?;
    c.record("scontrol show node n1", &o.stdout);
    let o = c.ok("scontrol show node | grep -c NodeName=")?;
    if o.stdout.trim() != "2" {
        return Err(format!(
            "scontrol show node: expected 2 nodes, got {}",
            o.stdout.trim()
        ));
    }
    Ok(())
}

fn show_partition(c: &mut Ctx) -> Result<(), String> {
    let o = c.ok("scontrol show partition")?;
    must_contain(
        "scontrol show partition",
        &o.stdout,
        &[
            "PartitionName=debug",
            "PartitionName=gpu_nodes",
            "Default=YES",
            "Nodes=n[1-2]",
            "Nodes=n2",
            "State=UP",
        ],
    )?;
    c.record("scontrol show partition", &o.stdout);
    Ok(())
}

fn sbatch_wrap(c: &mut Ctx) -> Result<(), String> {
    let alice = Some("alice");
    let o = c.ok_as(alice, "sbatch --wrap 'hostname; id -un'")?;
    let id = submitted_id(&o)?;
    c.job(&id);
    c.record("sbatch --wrap", &o.stdout);
    c.wait_state(&id, "COMPLETED", JOB_WAIT)?;
    let node = c.job_field(&id, "NodeList")?;
    let o = c.ok_as(alice, &format!("cat slurm-{id}.out"))?;
    if o.stdout != format!("{node}\nalice\n") {
        return Err(format!(
            "slurm-{id}.out: expected `{node}\\nalice\\n`, got {:?}",
            o.stdout
        ));
    }
    c.record("job output", &o.stdout);
    let o = c.ok(&format!("scontrol show job {id}"))?;
    must_contain(
        "scontrol show job",
        &o.stdout,
        &["UserId=alice(2001)", "GroupId=users(100)", "ExitCode=0:0"],
    )?;
    Ok(())
}

fn show_job(c: &mut Ctx) -> Result<(), String> {
    let o = c.ok_as(
        Some("alice"),
        "sbatch -J sleeper -p gpu_nodes --gres=gpu:1 --wrap 'sleep 300'",
    )?;
    let id = submitted_id(&o)?;
    c.job(&id);
    c.wait_state(&id, "RUNNING", JOB_WAIT)?;
    let o = c.ok(&format!("scontrol show job {id}"))?;
    must_contain(
        "scontrol show job",
        &o.stdout,
        &[
            &format!("JobId={id} "),
            "JobName=sleeper",
            "UserId=alice(2001)",
            "GroupId=users(100)",
            "JobState=RUNNING",
            "Partition=gpu_nodes",
            "NodeList=n2",
            "WorkDir=/home/alice",
        ],
    )?;
    c.record("scontrol show job", &o.stdout);
    c.ok(&format!("scancel {id}"))?;
    c.wait_state(&id, "CANCELLED", JOB_WAIT)?;
    Ok(())
}

fn scancel(c: &mut Ctx) -> Result<(), String> {
    let alice = Some("alice");
    let o = c.ok_as(alice, "sbatch -J sleeper --wrap 'sleep 300'")?;
    let id = submitted_id(&o)?;
    c.job(&id);
    c.wait_state(&id, "RUNNING", JOB_WAIT)?;
    let o = c.ok("squeue")?;
    must_contain("squeue", &o.stdout, &[&id, "sleeper", "alice", " R "])?;
    c.record("squeue (running)", &o.stdout);
    // bob may not cancel alice's job
    let o = c.run_as(Some("bob"), &format!("scancel {id}"));
    if o.rc == 0 && !o.stderr.contains("Access/permission denied") {
        return Err(format!(
            "bob's scancel of alice's job should fail, got rc 0:\n{}",
            o.both()
        ));
    }
    c.record("scancel by another user (stderr)", &o.stderr);
    let o = c.ok_as(alice, &format!("scancel {id}"))?;
    c.record("scancel", &o.both());
    c.wait_state(&id, "CANCELLED", JOB_WAIT)?;
    c.wait_for(None, "squeue -h -o %i", "empty queue", JOB_WAIT, |s| {
        s.trim().is_empty()
    })?;
    Ok(())
}

fn srun_hostname(c: &mut Ctx) -> Result<(), String> {
    let o = c.ok("srun hostname")?;
    if o.stdout != "n1\n" {
        return Err(format!("srun hostname: expected n1, got {:?}", o.both()));
    }
    c.record("srun hostname", &o.stdout);
    let o = c.ok_as(Some("alice"), "srun -N2 hostname | sort")?;
    if o.stdout != "n1\nn2\n" {
        return Err(format!(
            "srun -N2 hostname: expected n1 n2, got {:?}",
            o.both()
        ));
    }
    c.record("srun -N2 hostname", &o.stdout);
    Ok(())
}

fn srun_gres(c: &mut Ctx) -> Result<(), String> {
    let o = c.ok_as(Some("alice"), "srun -p gpu_nodes --gres=gpu:2 -c 8 bash -c 'echo $(hostname) $CUDA_VISIBLE_DEVICES $SLURM_CPUS_PER_TASK'")?;
    if o.stdout != "n2 0,1 8\n" {
        return Err(format!(
            "srun --gres=gpu:2: expected `n2 0,1 8`, got {:?}",
            o.both()
        ));
    }
    c.record("srun --gres", &o.stdout);
    Ok(())
}

/// Drops the first line (`sinfo -l` and `squeue -l` print the date
/// there) and sorts the rows under the header: sinfo builds rows in one
/// thread per partition, so a node's rows come in any order.
fn dateless_sorted(s: &str) -> String {
    let mut lines = s.lines().skip(1);
    let header = lines.next().unwrap_or("");
    let mut rows: Vec<&str> = lines.collect();
    rows.sort_unstable();
    std::iter::once(header)
        .chain(rows)
        .map(|l| format!("{l}\n"))
        .collect()
}

fn sinfo_long(c: &mut Ctx) -> Result<(), String> {
    let o = c.ok("sinfo -N -l")?;
    must_contain("sinfo -N -l", &o.stdout, &["NODELIST", "n1", "n2", "idle"])?;
    c.record("sinfo -N -l", &dateless_sorted(&o.stdout));
    let o = c.ok("sinfo -l")?;
    c.record("sinfo -l", &dateless_sorted(&o.stdout));
    Ok(())
}

fn drain_resume(c: &mut Ctx) -> Result<(), String> {
    // alice may not drain a node
    let o = c.run_as(
        Some("alice"),
        "scontrol update nodename=n2 state=drain reason=nope",
    );
    if o.rc == 0 {
        return Err(format!("alice's drain should fail:\n{}", o.both()));
    }
    c.record(
        "drain as alice (rc, stderr)",
        &format!("rc={}\n{}", o.rc, o.stderr),
    );
    c.ok("scontrol update nodename=n2 state=drain reason='disk check'")?;
    let o = c.wait_for(None, "sinfo -R -h", "n2 drained", JOB_WAIT, |s| {
        s.contains("n2")
    })?;
    must_contain("sinfo -R", &o, &["disk check", "root", "n2"])?;
    let o = c.ok("sinfo -R")?;
    c.record("sinfo -R", &o.stdout);
    let o = c.ok("sinfo -N -h -o '%N %T %E' | sort")?;
    c.record("sinfo -N (drained)", &o.stdout);
    let o = c.ok("scontrol show node n2 | grep -E 'State=|Reason='")?;
    c.record("scontrol show node n2 (drained)", &o.stdout);
    c.ok("scontrol update nodename=n2 state=resume")?;
    let o = c.wait_for(
        None,
        "sinfo -N -h -o '%N %T' | sort",
        "n2 idle",
        JOB_WAIT,
        // stock marks a resumed node not-responding (idle*) until it registers again
        |s| s.lines().any(|l| l == "n2 idle") && !s.contains('*'),
    )?;
    c.record("sinfo -N (resumed)", &o);
    let o = c.ok("sinfo -R -h")?;
    c.record("sinfo -R (resumed)", &o.stdout);
    Ok(())
}

fn squeue_formats(c: &mut Ctx) -> Result<(), String> {
    let alice = Some("alice");
    // fill both nodes, then one more job waits for resources
    let o = c.ok_as(alice, "sbatch -J big -n 32 --wrap 'sleep 300'")?;
    let big = submitted_id(&o)?;
    c.job(&big);
    c.wait_state(&big, "RUNNING", JOB_WAIT)?;
    let o = c.ok_as(Some("bob"), "sbatch -J small -n 1 --wrap 'sleep 300'")?;
    let small = submitted_id(&o)?;
    c.job(&small);
    c.wait_for(
        None,
        &format!("squeue -h -j {small} -o %r"),
        "pending reason",
        JOB_WAIT,
        |s| s.trim() == "Resources",
    )?;
    let o = c.ok("squeue")?;
    c.record("squeue", &o.stdout);
    let o = c.ok("squeue -o '%i %j %u %T %P %D %C %r %R'")?;
    c.record("squeue -o", &o.stdout);
    let o = c.ok("squeue -O 'JobID,Name,UserName,State,Partition,NumNodes,NumCPUs,Reason'")?;
    c.record("squeue -O", &o.stdout);
    let o = c.ok("squeue -u alice")?;
    must_contain("squeue -u alice", &o.stdout, &["big"])?;
    c.record("squeue -u alice", &o.stdout);
    let o = c.ok("squeue -t PD")?;
    must_contain("squeue -t PD", &o.stdout, &["small", "(Resources)"])?;
    c.record("squeue -t PD", &o.stdout);
    let o = c.ok("squeue -t R -h -o '%i %T'")?;
    c.record("squeue -t R", &o.stdout);
    let o = c.ok(&format!(
        "scontrol show job {small} | grep -E 'JobState|NumNodes|ReqTRES'"
    ))?;
    c.record("scontrol show job (pending)", &o.stdout);
    c.ok(&format!("scancel {big} {small}"))?;
    c.wait_for(None, "squeue -h -o %i", "empty queue", JOB_WAIT, |s| {
        s.trim().is_empty()
    })?;
    Ok(())
}

fn sbatch_errors(c: &mut Ctx) -> Result<(), String> {
    let alice = Some("alice");
    for cmd in [
        "sbatch -p nosuch --wrap hostname",
        "sbatch -N 3 --wrap hostname",
        "sbatch -n 64 --wrap hostname",
        "sbatch --gres=gpu:5 --wrap hostname",
        "sbatch --gres=gpu:v100:1 --wrap hostname",
    ] {
        let o = c.run_as(alice, cmd);
        if o.rc != 0 {
            c.record(cmd, &format!("rc={}\n{}", o.rc, o.stderr));
            continue;
        }
        // Some releases accept what can never run and leave it pending
        // (EnforcePartLimits=NO): record that, then remove it. (The reason
        // is not compared: stock moves between PartitionConfig and
        // PartitionNodeLimit while it evaluates the job.)
        let id = submitted_id(&o)?;
        c.job(&id);
        c.wait_for(
            None,
            &format!("squeue -h -j {id} -o '%T %r'"),
            "pending reason",
            JOB_WAIT,
            |s| s.starts_with("PENDING") && !s.contains("None"),
        )?;
        c.record(cmd, "accepted\nPENDING\n");
        c.ok(&format!("scancel {id}"))?;
        c.wait_for(None, "squeue -h -o %i", "empty queue", JOB_WAIT, |s| {
            s.trim().is_empty()
        })?;
    }
    Ok(())
}

fn sbatch_gres(c: &mut Ctx) -> Result<(), String> {
    let alice = Some("alice");
    // two jobs at once: the second must get the other devices
    let o = c.ok_as(
        alice,
        "sbatch -p gpu_nodes --gres=gpu:2 -o g1.out --wrap 'echo $CUDA_VISIBLE_DEVICES; sleep 5'",
    )?;
    let a = submitted_id(&o)?;
    c.job(&a);
    let o = c.ok_as(
        alice,
        "sbatch -p gpu_nodes --gres=gpu:a100:2 -o g2.out --wrap 'echo $CUDA_VISIBLE_DEVICES'",
    )?;
    let b = submitted_id(&o)?;
    c.job(&b);
    c.wait_state(&a, "COMPLETED", JOB_WAIT)?;
    c.wait_state(&b, "COMPLETED", JOB_WAIT)?;
    let o = c.ok_as(alice, "cat g1.out g2.out")?;
    if o.stdout != "0,1\n2,3\n" {
        return Err(format!(
            "CUDA_VISIBLE_DEVICES: expected 0,1 then 2,3, got {:?}",
            o.stdout
        ));
    }
    c.record("CUDA_VISIBLE_DEVICES of two jobs", &o.stdout);
    Ok(())
}

/// The controller killed with SIGKILL and started again as scripts/cluster
/// starts it: no job is lost, pending ones still run.
fn ctld_crash(c: &mut Ctx) -> Result<(), String> {
    let alice = Some("alice");
    let mut ids = Vec::new();
    for (name, n, secs) in [("a", 16, 15), ("b", 16, 15), ("c", 16, 1), ("d", 1, 1)] {
        let o = c.ok_as(
            alice,
            &format!("sbatch -J {name} -n {n} -o /dev/null --wrap 'sleep {secs}'"),
        )?;
        let id = submitted_id(&o)?;
        c.job(&id);
        ids.push(id);
    }
    c.wait_state(&ids[1], "RUNNING", JOB_WAIT)?;
    let before = c.ok("squeue -h -o '%j %T %r' | sort")?;
    c.record("squeue before the crash", &before.stdout);
    stock_state_mark(c)?;
    wait_stock_state_saved(c)?;
    // the same binary and arguments scripts/cluster used
    c.ok_on(
        "ctl",
        "set -e; pid=$(pgrep -x slurmctld-rs || pgrep -x slurmctld); \
         tr '\\0' ' ' < /proc/$pid/cmdline > /tmp/ctld.cmd; kill -9 $pid; \
         while kill -0 $pid 2>/dev/null; do sleep 0.1; done",
    )?;
    c.ok_on(
        "ctl",
        "setsid -f sh -c \"$(cat /tmp/ctld.cmd)\" >>/var/log/slurm/slurmctld.stdout 2>&1 </dev/null",
    )?;
    let after = c.wait_for_same(
        "squeue -h -o '%j %T %r' | sort",
        "controller back with every job as before",
        JOB_WAIT,
        &before.stdout,
    )?;
    c.record("squeue after the restart", &after);
    for id in &ids {
        c.wait_state(id, "COMPLETED", Duration::from_secs(90))?;
    }
    Ok(())
}

/// REQUEST_FED_INFO: clients ask whether the cluster is federated; a
/// controller in no federation answers with a NULL record, so nothing is
/// printed and `--federation` shows the local cluster.
fn federation(c: &mut Ctx) -> Result<(), String> {
    let o = c.run_as(None, "scontrol -v show federation");
    let errors: String = o
        .both()
        .lines()
        .filter(|l| l.contains("error"))
        .map(|l| format!("{l}\n"))
        .collect();
    c.record(
        &format!("scontrol -v show federation (rc {}): errors", o.rc),
        &errors,
    );
    let o = c.ok("scontrol show federation")?;
    c.record("scontrol show federation", &o.stdout);
    let o = c.ok("sinfo --federation -h -o '%P %a %D'")?;
    must_contain("sinfo --federation", &o.stdout, &["debug*"])?;
    c.record("sinfo --federation", &o.stdout);
    let o = c.ok("squeue --federation -h")?;
    c.record("squeue --federation", &o.stdout);
    Ok(())
}

pub fn all() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "federation",
            about: "scontrol show federation, sinfo/squeue --federation on a cluster in no federation (REQUEST_FED_INFO)",
            compare: true,
            run: federation,
        },
        Scenario {
            name: "ping",
            about: "scontrol ping",
            compare: true,
            run: ping,
        },
        Scenario {
            name: "sinfo",
            about: "sinfo, sinfo -N -o",
            compare: true,
            run: sinfo,
        },
        Scenario {
            name: "squeue",
            about: "squeue on an empty queue",
            compare: true,
            run: squeue,
        },
        Scenario {
            name: "show_config",
            about: "scontrol show config",
            compare: true,
            run: show_config,
        },
        Scenario {
            name: "show_node",
            about: "scontrol show node",
            compare: true,
            run: show_node,
        },
        Scenario {
            name: "show_partition",
            about: "scontrol show partition",
            compare: true,
            run: show_partition,
        },
        Scenario {
            name: "sbatch_wrap",
            about: "sbatch --wrap as alice, output file, COMPLETED",
            compare: true,
            run: sbatch_wrap,
        },
        Scenario {
            name: "show_job",
            about: "scontrol show job of a running job",
            compare: true,
            run: show_job,
        },
        Scenario {
            name: "scancel",
            about: "squeue with a running job, scancel (denied for bob)",
            compare: true,
            run: scancel,
        },
        Scenario {
            name: "sinfo_long",
            about: "sinfo -N -l, sinfo -l",
            compare: true,
            run: sinfo_long,
        },
        Scenario {
            name: "drain_resume",
            about: "scontrol update state=drain (refused for alice), sinfo -R, resume",
            compare: true,
            run: drain_resume,
        },
        Scenario {
            name: "squeue_formats",
            about: "squeue -o/-O/-u/-t PD with a running and a pending (Resources) job",
            compare: true,
            run: squeue_formats,
        },
        Scenario {
            name: "sbatch_errors",
            about: "sbatch refusals: no such partition, too many nodes/CPUs/GPUs",
            compare: true,
            run: sbatch_errors,
        },
        Scenario {
            name: "sbatch_gres",
            about: "two sbatch --gres jobs on one node get distinct CUDA_VISIBLE_DEVICES",
            compare: true,
            run: sbatch_gres,
        },
        Scenario {
            name: "ctld_crash",
            about: "kill -9 of the controller and a restart lose no running or pending job",
            compare: true,
            run: ctld_crash,
        },
        Scenario {
            name: "srun_hostname",
            about: "srun hostname, srun -N2",
            compare: true,
            run: srun_hostname,
        },
        Scenario {
            name: "srun_gres",
            about: "srun --gres=gpu:2 -c 8 (CUDA_VISIBLE_DEVICES)",
            compare: true,
            run: srun_gres,
        },
    ]
}
