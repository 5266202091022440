//! The node daemon: environment, output files, isolation, signals, limits,
//! prolog/epilog, GPUs, restart. Most of these also run as the `mixed` cell
//! (a stock controller of the client's version with slurmd-rs nodes).
//!
//! The generated slurm.conf (scripts/cluster) has a Prolog that fails on a
//! node while /shared/prolog-fail-<node> exists and an Epilog that appends
//! "<job id> <user> <context>" to /shared/epilog-<node>.log.

use super::ctx::*;
use std::time::Duration;

const BOTH: Needs = Needs {
    mixed: true,
    stockd: false,
    cgroups: false,
};
const BOTH_CG: Needs = Needs {
    mixed: true,
    stockd: false,
    cgroups: true,
};

/// Scenarios that also run under stock controllers (`mixed`) or need a cgroup cluster.
pub const NEEDS: &[(&str, Needs)] = &[
    ("slurmd_env", BOTH),
    ("slurmd_env_array", BOTH),
    ("slurmd_fname", BOTH),
    ("slurmd_fname_array", BOTH),
    ("slurmd_open_mode", BOTH),
    ("slurmd_perms", BOTH),
    ("slurmd_kill_tree", BOTH_CG),
    ("slurmd_timeout", BOTH),
    ("slurmd_cancel_out", BOTH),
    ("slurmd_signal_batch", BOTH),
    ("slurmd_oom", BOTH_CG),
    ("slurmd_srun_cgroup", BOTH_CG),
    ("slurmd_prolog_fail", BOTH),
    ("slurmd_epilog", BOTH),
    ("slurmd_gpus", BOTH),
    ("slurmd_restart", BOTH),
    ("slurmd_srun_batch", BOTH),
    ("slurmd_tree", BOTH),
];

/// For what stock does within a second or two.
const SHORT_WAIT: Duration = Duration::from_secs(30);

/// Time limits are enforced on the controller's own schedule (every 30 s or so).
const TIMEOUT_WAIT: Duration = Duration::from_secs(200);

fn submit(c: &mut Ctx, user: Option<&str>, args: &str) -> Result<String, String> {
    let o = c.ok_as(user, &format!("sbatch {args}"))?;
    let id = submitted_id(&o)?;
    c.job(&id);
    Ok(id)
}

/// Replace each (literal, placeholder), longest literal first (so that a job
/// id inside a longer one is not half-replaced).
fn redact(text: &str, pairs: &[(String, String)]) -> String {
    let mut p: Vec<&(String, String)> = pairs.iter().filter(|(l, _)| !l.is_empty()).collect();
    p.sort_by_key(|(l, _)| std::cmp::Reverse(l.len()));
    let mut s = text.to_string();
    for (l, ph) in p {
        s = s.replace(l.as_str(), ph);
    }
    s
}

/// Variables whose values are the moment or a process id, not the protocol.
const ENV_VOLATILE: &[&str] = &[
    "SLURM_JOB_START_TIME",
    "SLURM_JOB_END_TIME",
    "SLURM_TASK_PID",
    // 26.05: a unique id made of the submit time
    "SLURM_JOB_SLUID",
];

/// Variables whose values are job ids.
const ID_KEYS: &[&str] = &["SLURM_JOB_ID", "SLURM_JOBID", "SLURM_ARRAY_JOB_ID"];

/// `env` output of a job, filtered to Slurm's variables, with the job's ids
/// and moments as placeholders, one KEY=VALUE a line, sorted.
fn env_lines(text: &str, ids: &[(String, String)]) -> String {
    let mut v: Vec<String> = text
        .lines()
        .filter(|l| {
            l.starts_with("SLURM")
                || l.starts_with("CUDA_VISIBLE_DEVICES=")
                || l.starts_with("GPU_DEVICE_ORDINAL=")
        })
        .map(|l| match l.split_once('=') {
            Some((k, _)) if ENV_VOLATILE.contains(&k) => format!("{k}=<VALUE>"),
            Some((k, val)) if ID_KEYS.contains(&k) => match ids.iter().find(|(id, _)| id == val) {
                Some((_, ph)) => format!("{k}={ph}"),
                None => l.to_string(),
            },
            _ => l.to_string(),
        })
        .collect();
    v.sort();
    v.dedup();
    v.into_iter().map(|l| l + "\n").collect()
}

/// A job printing its environment: every Slurm variable compared by name
/// and value with what a stock slurmd gives.
fn env(c: &mut Ctx) -> Result<(), String> {
    let alice = Some("alice");
    c.ok_as(alice, "rm -rf sd-env && mkdir sd-env")?;
    let id = submit(
        c,
        alice,
        "-J envjob -n 2 -c 2 --mem-per-cpu=100 -D sd-env -o env.out --wrap 'env'",
    )?;
    c.wait_state(&id, "COMPLETED", JOB_WAIT)?;
    let o = c.ok_as(alice, "cat sd-env/env.out")?;
    let ids = vec![(id.clone(), "<JOB>".to_string())];
    let lines = env_lines(&o.stdout, &ids);
    must_contain(
        "environment of a batch job",
        &lines,
        &[
            "SLURM_JOB_ID=<JOB>\n",
            "SLURM_JOB_NAME=envjob\n",
            "SLURM_JOB_NUM_NODES=1\n",
            "SLURM_NTASKS=2\n",
            "SLURM_CPUS_PER_TASK=2\n",
            "SLURM_MEM_PER_CPU=100\n",
            "SLURM_SUBMIT_DIR=/home/alice\n",
            "SLURM_JOB_PARTITION=debug\n",
            "SLURM_JOB_USER=alice\n",
            "SLURM_NODEID=0\n",
        ],
    )?;
    c.record("env of a batch job", &lines);
    c.ok_as(alice, "rm -rf sd-env")?;
    Ok(())
}

/// The environment of two array tasks (ids of the array and of the task,
/// count, min, max, step), compared with stock's.
fn env_array(c: &mut Ctx) -> Result<(), String> {
    let alice = Some("alice");
    c.ok_as(alice, "rm -rf sd-enva && mkdir sd-enva")?;
    let arr = submit(
        c,
        alice,
        "-J envarr -a 3-5:2 -D sd-enva -o 'arr-%a.out' --wrap 'env'",
    )?;
    c.wait_for(
        None,
        &format!("squeue -h -j {arr} -o %i"),
        "array tasks done",
        JOB_WAIT,
        |s| s.trim().is_empty(),
    )?;
    for task in ["3", "5"] {
        let o = c.ok_as(alice, &format!("cat sd-enva/arr-{task}.out"))?;
        let job_id = o
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix("SLURM_JOB_ID="))
            .unwrap_or("")
            .to_string();
        let ids = vec![
            (arr.clone(), "<ARRAY>".to_string()),
            (job_id, format!("<TASK{task}>")),
        ];
        let lines = env_lines(&o.stdout, &ids);
        must_contain(
            "environment of an array task",
            &lines,
            &[
                "SLURM_ARRAY_JOB_ID=<ARRAY>\n",
                &format!("SLURM_ARRAY_TASK_ID={task}\n"),
                "SLURM_ARRAY_TASK_COUNT=2\n",
                "SLURM_ARRAY_TASK_MIN=3\n",
                "SLURM_ARRAY_TASK_MAX=5\n",
                "SLURM_ARRAY_TASK_STEP=2\n",
            ],
        )?;
        c.record(&format!("env of array task {task}"), &lines);
    }
    c.ok_as(alice, "rm -rf sd-enva")?;
    Ok(())
}

/// Every output filename pattern of a plain job (%j %J %x %N %n %u %s %t %%
/// and padding), for stdout and stderr.
fn fname(c: &mut Ctx) -> Result<(), String> {
    let alice = Some("alice");
    c.ok_as(alice, "rm -rf sd-fn && mkdir sd-fn")?;
    let id = submit(
        c,
        alice,
        "-J fnjob -D sd-fn -o 'o-%j-%J-%x-%N-%n-%u-%s-%t-%%-%7j.txt' \
         -e 'e-%j-%9j-%x.txt' --wrap 'echo out; echo err >&2'",
    )?;
    c.wait_state(&id, "COMPLETED", JOB_WAIT)?;
    let node = c.job_field(&id, "NodeList")?;
    let o = list_outputs(c, "sd-fn")?;
    let want = [
        format!("o-{id}-{id}-fnjob-{node}-0-alice-batch-0-%-{id:0>7}.txt: out"),
        format!("e-{id}-{id:0>9}-fnjob.txt: err"),
    ];
    check_outputs(&o, &want)?;
    // Paddings wider than any id here, so that the padded forms never
    // equal the id itself (whose width differs between clusters), and
    // placeholders without digits (a job id may be one of them).
    let pairs = vec![
        (format!("{id:0>9}"), "<JOB_PAD_NINE>".to_string()),
        (format!("{id:0>7}"), "<JOB_PAD_SEVEN>".to_string()),
        (id.clone(), "<JOB>".to_string()),
    ];
    c.record("output files", &redact(&o, &pairs));
    c.ok_as(alice, "rm -rf sd-fn")?;
    Ok(())
}

/// Output filename patterns of an array task: %A %a %3a %j %x.
fn fname_array(c: &mut Ctx) -> Result<(), String> {
    let alice = Some("alice");
    c.ok_as(alice, "rm -rf sd-fna && mkdir sd-fna")?;
    let arr = submit(
        c,
        alice,
        "-J fnarr -a 7 -D sd-fna -o 'a-%A-%a-%3a-%j-%x.txt' --wrap 'echo arr'",
    )?;
    c.wait_for(
        None,
        &format!("squeue -h -j {arr} -o %i"),
        "array task done",
        JOB_WAIT,
        |s| s.trim().is_empty(),
    )?;
    let o = list_outputs(c, "sd-fna")?;
    // the task's own job id, from its %j
    let task_id = o
        .lines()
        .find_map(|l| l.strip_prefix(&format!("a-{arr}-7-007-")))
        .and_then(|r| r.split('-').next())
        .unwrap_or("")
        .to_string();
    check_outputs(&o, &[format!("a-{arr}-7-007-{task_id}-fnarr.txt: arr")])?;
    let pairs = vec![
        (arr.clone(), "<ARRAY>".to_string()),
        (task_id, "<TASK>".to_string()),
    ];
    c.record("output files", &redact(&o, &pairs));
    c.ok_as(alice, "rm -rf sd-fna")?;
    Ok(())
}

/// "name: content" for each file of alice's `dir`, sorted.
fn list_outputs(c: &mut Ctx, dir: &str) -> Result<String, String> {
    let o = c.ok_as(
        Some("alice"),
        &format!("cd {dir} && for f in *; do echo \"$f: $(cat \"$f\")\"; done | sort"),
    )?;
    Ok(o.stdout)
}

/// Exactly the files `want` ("name: content").
fn check_outputs(listing: &str, want: &[String]) -> Result<(), String> {
    for w in want {
        if !listing.lines().any(|l| l == w) {
            return Err(format!(
                "output files: expected `{w}` in:\n{}",
                indent(listing)
            ));
        }
    }
    if listing.lines().count() != want.len() {
        return Err(format!(
            "output files: expected exactly {}, got:\n{}",
            want.len(),
            indent(listing)
        ));
    }
    Ok(())
}

/// --open-mode=append: two jobs add to one file; the default truncates.
fn open_mode(c: &mut Ctx) -> Result<(), String> {
    let alice = Some("alice");
    c.ok_as(
        alice,
        "rm -rf sd-om && mkdir sd-om && echo old > sd-om/app.out && echo old > sd-om/trunc.out",
    )?;
    for word in ["one", "two"] {
        let id = submit(
            c,
            alice,
            &format!("-D sd-om -o app.out --open-mode=append --wrap 'echo {word}'"),
        )?;
        c.wait_state(&id, "COMPLETED", JOB_WAIT)?;
    }
    let id = submit(c, alice, "-D sd-om -o trunc.out --wrap 'echo three'")?;
    c.wait_state(&id, "COMPLETED", JOB_WAIT)?;
    let app = c.ok_as(alice, "cat sd-om/app.out")?.stdout;
    if app != "old\none\ntwo\n" {
        return Err(format!(
            "--open-mode=append: app.out is {app:?}, want \"old\\none\\ntwo\\n\""
        ));
    }
    let tr = c.ok_as(alice, "cat sd-om/trunc.out")?.stdout;
    if tr != "three\n" {
        return Err(format!(
            "default open mode: trunc.out is {tr:?}, want \"three\\n\""
        ));
    }
    c.record("append", &app);
    c.record("truncate", &tr);
    c.ok_as(alice, "rm -rf sd-om")?;
    Ok(())
}

/// A job of alice's cannot read or write bob's 0600 file; it runs with her
/// uid, gid and groups.
fn perms(c: &mut Ctx) -> Result<(), String> {
    let alice = Some("alice");
    let bob = Some("bob");
    c.ok_as(bob, "echo secret > sd-secret && chmod 600 sd-secret")?;
    let id = submit(
        c,
        alice,
        "-o sd-perms.out --wrap 'id -un; id -gn; id -u; \
         if cat /home/bob/sd-secret >/dev/null 2>&1; then echo read; else echo no-read; fi; \
         if echo x 2>/dev/null >> /home/bob/sd-secret; then echo wrote; else echo no-write; fi'",
    )?;
    c.wait_state(&id, "COMPLETED", JOB_WAIT)?;
    let o = c.ok_as(alice, "cat sd-perms.out")?;
    if o.stdout != "alice\nusers\n2001\nno-read\nno-write\n" {
        return Err(format!(
            "alice's job: want alice/users/2001, no-read, no-write; got:\n{}",
            indent(&o.stdout)
        ));
    }
    c.record("alice's job on bob's file", &o.stdout);
    let o = c.ok_as(bob, "cat sd-secret")?;
    if o.stdout != "secret\n" {
        return Err(format!("bob's file changed: {:?}", o.stdout));
    }
    c.ok_as(bob, "rm -f sd-secret")?;
    c.ok_as(alice, "rm -f sd-perms.out")?;
    Ok(())
}

/// `ps` lines of alice's processes on `node` running one of the marker sleeps.
fn marker_procs(c: &mut Ctx, node: &str) -> Result<String, String> {
    let o = c.ok_on(
        node,
        "ps -eo user,pid,ppid,args | grep '[s]leep 77' || true",
    )?;
    Ok(o.stdout)
}

/// scancel of a job whose script forks grandchildren that leave its process
/// group and session (setsid, double fork, nohup): none survive on the node.
fn kill_tree(c: &mut Ctx) -> Result<(), String> {
    let alice = Some("alice");
    let id = submit(
        c,
        alice,
        "-o /dev/null --wrap 'setsid sleep 7771 & (sleep 7772 &); \
         nohup sleep 7773 >/dev/null 2>&1 & (setsid sh -c \"sleep 7774 &\"); sleep 7775'",
    )?;
    c.wait_state(&id, "RUNNING", JOB_WAIT)?;
    let node = c.job_field(&id, "NodeList")?;
    // all five sleeps started
    let t0 = std::time::Instant::now();
    loop {
        let p = marker_procs(c, &node)?;
        if p.lines().count() >= 5 {
            break;
        }
        if t0.elapsed() > Duration::from_secs(30) {
            return Err(format!(
                "the job's 5 sleeps did not all start on {node}:\n{p}"
            ));
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    c.ok(&format!("scancel {id}"))?;
    c.wait_state(&id, "CANCELLED", JOB_WAIT)?;
    // KillWait=5: SIGKILL follows SIGTERM after 5 s
    let t0 = std::time::Instant::now();
    loop {
        let p = marker_procs(c, &node)?;
        if p.trim().is_empty() {
            break;
        }
        if t0.elapsed() > Duration::from_secs(30) {
            return Err(format!(
                "processes of cancelled job {id} survive on {node}:\n{p}"
            ));
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    c.wait_for(
        None,
        &format!("sinfo -h -n {node} -o %t"),
        "node idle again",
        JOB_WAIT,
        |s| s.trim() == "idle",
    )?;
    c.record("after scancel", "no process left\n");
    Ok(())
}

/// A one-minute time limit ends the job as TIMEOUT, and the step daemon
/// says so in the job's output.
fn timeout(c: &mut Ctx) -> Result<(), String> {
    let alice = Some("alice");
    c.ok_as(alice, "rm -f sd-timeout.out")?;
    let id = submit(
        c,
        alice,
        "-t 1 -o sd-timeout.out --wrap 'echo started; sleep 600'",
    )?;
    c.wait_state(&id, "RUNNING", JOB_WAIT)?;
    c.wait_state(&id, "TIMEOUT", TIMEOUT_WAIT)?;
    let out = c.ok_as(alice, "cat sd-timeout.out")?.stdout;
    must_contain(
        "output of the timed-out job",
        &out,
        &["started\n", " DUE TO TIME LIMIT ***\n"],
    )?;
    // The line's prefix is the node daemon's release's log format (the
    // rs cluster's nodes are 26.05's for every client); slurmd_cancel_out
    // compares it, here the message is what counts.
    let body: String = out
        .lines()
        .map(|l| match l.split_once(" error: ") {
            Some((_, rest)) => format!("error: {rest}\n"),
            None => format!("{l}\n"),
        })
        .collect();
    c.record("output of the timed-out job (log prefix cut)", &body);
    c.ok_as(alice, "rm -f sd-timeout.out")?;
    let o = c.ok(&format!("scontrol show job {id}"))?;
    must_contain(
        "timed-out job",
        &o.stdout,
        &["JobState=TIMEOUT", "Reason=TimeLimit"],
    )?;
    let st = format!(
        "JobState={} Reason={} ExitCode={}\n",
        field(&o.stdout, "JobState").unwrap_or_default(),
        field(&o.stdout, "Reason").unwrap_or_default(),
        field(&o.stdout, "ExitCode").unwrap_or_default()
    );
    c.record("timed-out job", &st);
    wait_nodes_idle(c)
}

/// scancel of a running job: the step daemon's line in the job's output
/// (its wording is the node daemon's release: 25.05 added the signal).
fn cancel_out(c: &mut Ctx) -> Result<(), String> {
    let alice = Some("alice");
    c.ok_as(alice, "rm -f sd-cancel.out")?;
    let id = submit(
        c,
        alice,
        "-o sd-cancel.out --wrap 'echo started; sleep 600'",
    )?;
    c.wait_state(&id, "RUNNING", JOB_WAIT)?;
    c.wait_for(
        alice,
        "cat sd-cancel.out",
        "the job's first line",
        SHORT_WAIT,
        |s| s == "started\n",
    )?;
    c.ok_as(alice, &format!("scancel {id}"))?;
    c.wait_state(&id, "CANCELLED", JOB_WAIT)?;
    wait_nodes_idle(c)?;
    let out = c.ok_as(alice, "cat sd-cancel.out")?.stdout;
    must_contain(
        "output of the cancelled job",
        &out,
        &["started\n", " CANCELLED AT "],
    )?;
    c.record("output of the cancelled job", &out);
    c.ok_as(alice, "rm -f sd-cancel.out")?;
    Ok(())
}

/// scancel --signal=USR1 to a batch job whose shell and background child
/// both trap USR1: without -b only srun steps are signalled (the script is
/// not one), -b reaches the shell alone, --full its process group.
fn signal_batch(c: &mut Ctx) -> Result<(), String> {
    let alice = Some("alice");
    c.ok_as(
        alice,
        "rm -rf sd-sig && mkdir sd-sig && cat > sd-sig/job.sh <<'EOF'\n\
         #!/bin/sh\n\
         sh -c 'trap \"echo child-usr1\" USR1; echo child-ready; while :; do sleep 1; done' &\n\
         c=$!\n\
         trap 'echo shell-usr1' USR1\n\
         while [ ! -e gate ]; do sleep 1; done\n\
         kill $c\n\
         EOF",
    )?;
    let id = submit(c, alice, "-D sd-sig -o sig.out sd-sig/job.sh")?;
    c.wait_state(&id, "RUNNING", JOB_WAIT)?;
    let out = |c: &mut Ctx| -> Result<String, String> {
        Ok(c.ok_as(alice, "cat sd-sig/sig.out")?.stdout)
    };
    c.wait_for(
        alice,
        "cat sd-sig/sig.out",
        "the child's trap",
        SHORT_WAIT,
        |s| s == "child-ready\n",
    )?;
    c.ok_as(alice, &format!("scancel --signal=USR1 {id}"))?;
    c.ok_as(alice, &format!("scancel -b --signal=USR1 {id}"))?;
    c.wait_for(
        alice,
        "cat sd-sig/sig.out",
        "the shell's trap after -b",
        SHORT_WAIT,
        |s| s.contains("shell-usr1"),
    )?;
    // The shell's trap runs between its one-second sleeps; give a stray
    // signal as long to show.
    std::thread::sleep(Duration::from_secs(3));
    let after_b = out(c)?;
    if after_b != "child-ready\nshell-usr1\n" {
        return Err(format!(
            "after scancel --signal and -b --signal the output is {after_b:?}, want the shell's trap once"
        ));
    }
    c.record(
        "after scancel --signal=USR1, then -b --signal=USR1",
        &after_b,
    );
    c.ok_as(alice, &format!("scancel --full --signal=USR1 {id}"))?;
    let full = c.wait_for(
        alice,
        "cat sd-sig/sig.out",
        "both traps after --full",
        SHORT_WAIT,
        |s| s.lines().count() >= 4,
    )?;
    let mut last: Vec<&str> = full.lines().skip(2).collect();
    last.sort_unstable();
    c.record(
        "after scancel --full --signal=USR1 (sorted)",
        &(last.join("\n") + "\n"),
    );
    c.ok_as(alice, "touch sd-sig/gate")?;
    c.wait_state(&id, "COMPLETED", JOB_WAIT)?;
    c.ok_as(alice, "rm -rf sd-sig")?;
    wait_nodes_idle(c)
}

fn wait_nodes_idle(c: &mut Ctx) -> Result<(), String> {
    c.wait_for(None, "sinfo -h -N -o %t", "all nodes idle", JOB_WAIT, |s| {
        s.lines().all(|l| l.trim() == "idle")
    })
    .map(|_| ())
}

/// A job that allocates far beyond --mem is killed by the kernel and ends
/// OUT_OF_MEMORY; the node stays up and takes the next job.
fn oom(c: &mut Ctx) -> Result<(), String> {
    let alice = Some("alice");
    let id = submit(
        c,
        alice,
        "--mem=64 -o sd-oom.out --wrap \
         'python3 -c \"import time; a = bytearray(512 << 20); time.sleep(5)\"; echo survived'",
    )?;
    c.wait_state(&id, "OUT_OF_MEMORY", SHORT_WAIT)?;
    let o = c.ok(&format!("scontrol show job {id}"))?;
    let node = field(&o.stdout, "NodeList").unwrap_or_default();
    let st = format!(
        "JobState={} Reason={}\n",
        field(&o.stdout, "JobState").unwrap_or_default(),
        field(&o.stdout, "Reason").unwrap_or_default(),
    );
    c.record("job beyond --mem", &st);
    // the node is healthy: idle, and runs the next job
    c.wait_for(
        None,
        &format!("sinfo -h -n {node} -o %t"),
        "node idle after the OOM",
        JOB_WAIT,
        |s| s.trim() == "idle",
    )?;
    let next = submit(
        c,
        alice,
        &format!("-w {node} --mem=64 -o /dev/null --wrap true"),
    )?;
    c.wait_state(&next, "COMPLETED", JOB_WAIT)?;
    c.ok_as(alice, "rm -f sd-oom.out")?;
    Ok(())
}

/// A prolog that fails drains its node with a reason (the job is requeued);
/// resume puts the node back in service.
fn prolog_fail(c: &mut Ctx) -> Result<(), String> {
    let res = prolog_fail_inner(c);
    // always leave the node in service and the queue empty
    let _ = c.ok("rm -f /shared/prolog-fail-n1");
    let _ = c.ok("scancel -u alice");
    let _ = c.ok("scontrol update nodename=n1 state=resume");
    res?;
    wait_nodes_idle(c)?;
    c.wait_for(None, "squeue -h -o %i", "empty queue", JOB_WAIT, |s| {
        s.trim().is_empty()
    })?;
    Ok(())
}

fn prolog_fail_inner(c: &mut Ctx) -> Result<(), String> {
    c.ok("touch /shared/prolog-fail-n1")?;
    let id = submit(c, Some("alice"), "-w n1 -o /dev/null --wrap true")?;
    let s = c.wait_for(
        None,
        "sinfo -h -n n1 -o '%t|%E'",
        "n1 drained by its prolog",
        SHORT_WAIT,
        |s| s.starts_with("drain"),
    )?;
    let reason = s
        .trim()
        .split_once('|')
        .map(|x| x.1)
        .unwrap_or("")
        .to_string();
    if reason.is_empty() || reason == "none" {
        return Err(format!("n1 drained without a reason: {s}"));
    }
    c.record("drain reason", &format!("{reason}\n"));
    // the job is not lost: requeued, pending (n1 is drained, and it asked for n1)
    c.wait_for(
        None,
        &format!("squeue -h -j {id} -o %T"),
        "job pending again",
        JOB_WAIT,
        |s| s.trim() == "PENDING",
    )?;
    Ok(())
}

/// The epilog runs after a job, as root, with the job's environment.
fn epilog(c: &mut Ctx) -> Result<(), String> {
    let id = submit(c, Some("alice"), "-o /dev/null --wrap true")?;
    c.wait_state(&id, "COMPLETED", JOB_WAIT)?;
    let node = c.job_field(&id, "NodeList")?;
    let want = format!("{id} alice epilog_slurmd");
    let s = c.wait_for(
        None,
        &format!("cat /shared/epilog-{node}.log"),
        "the epilog's line",
        JOB_WAIT,
        |s| s.lines().any(|l| l == want),
    )?;
    let line = s.lines().find(|l| *l == want).unwrap_or("");
    c.record(
        "epilog line",
        &format!("{}\n", redact(line, &[(id.clone(), "<JOB>".into())])),
    );
    // the controller counts the node idle once the epilog completed
    wait_nodes_idle(c)
}

/// CUDA_VISIBLE_DEVICES and SLURM_JOB_GPUS follow the GPU indices the
/// controller allocated (scontrol show job -d), with fake /dev/nvidia*.
fn gpus(c: &mut Ctx) -> Result<(), String> {
    let alice = Some("alice");
    let a = submit(
        c,
        alice,
        "-p gpu_nodes --gres=gpu:1 -o sd-gpu-a.out --wrap 'echo $CUDA_VISIBLE_DEVICES; sleep 30'",
    )?;
    c.wait_state(&a, "RUNNING", JOB_WAIT)?;
    let b = submit(
        c,
        alice,
        "-p gpu_nodes --gres=gpu:2 -o sd-gpu-b.out --wrap \
         'echo CUDA=$CUDA_VISIBLE_DEVICES GPUS=$SLURM_JOB_GPUS; ls /dev/nvidia0 /dev/nvidia3; sleep 5'",
    )?;
    c.wait_state(&b, "RUNNING", JOB_WAIT)?;
    // the indices are shown while the job runs
    let d = c.ok(&format!("scontrol show job -d {b}"))?;
    c.wait_state(&b, "COMPLETED", JOB_WAIT)?;
    // "GRES=gpu:a100:2(IDX:1-2)"
    let idx = d
        .stdout
        .split_whitespace()
        .find_map(|w| {
            w.strip_prefix("GRES=")
                .and_then(|g| g.split("(IDX:").nth(1))
        })
        .map(|s| s.trim_end_matches(')').to_string())
        .ok_or_else(|| format!("no GRES=..(IDX:..) in scontrol show job -d:\n{}", d.stdout))?;
    let list: Vec<String> = expand_idx(&idx);
    let o = c.ok_as(alice, "cat sd-gpu-b.out")?;
    let want = format!(
        "CUDA={} GPUS={}\n/dev/nvidia0\n/dev/nvidia3\n",
        (0..list.len())
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(","),
        list.join(",")
    );
    // CUDA_VISIBLE_DEVICES is 0.. when devices are constrained, else the indices
    let want_plain = format!(
        "CUDA={} GPUS={}\n/dev/nvidia0\n/dev/nvidia3\n",
        list.join(","),
        list.join(",")
    );
    if o.stdout != want && o.stdout != want_plain {
        return Err(format!(
            "second GPU job (IDX:{idx}): want {want_plain:?}, got {:?}",
            o.stdout
        ));
    }
    c.record("GPU job env", &o.stdout);
    c.ok(&format!("scancel {a}"))?;
    c.wait_state(&a, "CANCELLED", JOB_WAIT)?;
    c.ok_as(alice, "rm -f sd-gpu-a.out sd-gpu-b.out")?;
    wait_nodes_idle(c)
}

/// "1-2,3" -> ["1","2","3"]
fn expand_idx(s: &str) -> Vec<String> {
    let mut v = Vec::new();
    for part in s.split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
                    v.extend((a..=b).map(|i| i.to_string()));
                }
            }
            None => v.push(part.to_string()),
        }
    }
    v
}

/// Stop the node daemon (SIGTERM, by its pid file) and start it again with
/// the command line scripts/cluster uses.
const RESTART_SLURMD: &str = r#"
if [ -x /opt/slurm-rs/bin/slurmd-rs ]; then b="/opt/slurm-rs/bin/slurmd-rs -v"; else b=/usr/sbin/slurmd; fi
p=$(cat /run/slurmd.pid) || exit 1
kill "$p" || exit 1
for i in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
kill -0 "$p" 2>/dev/null && { echo "slurmd $p did not stop"; exit 1; }
setsid -f $b -D -f /etc/slurm/slurm.conf -L /var/log/slurm/slurmd.log -N "$(hostname)" >>/var/log/slurm/slurmd.stdout 2>&1 </dev/null
"#;

/// Restarting the node daemon while a job runs does not kill the job; it
/// completes and its exit code is reported.
fn restart(c: &mut Ctx) -> Result<(), String> {
    let alice = Some("alice");
    let id = submit(
        c,
        alice,
        "-o sd-restart.out --wrap 'echo start; sleep 15; echo end; exit 3'",
    )?;
    c.wait_state(&id, "RUNNING", JOB_WAIT)?;
    let node = c.job_field(&id, "NodeList")?;
    std::thread::sleep(Duration::from_secs(2));
    c.ok_on(&node, RESTART_SLURMD)?;
    c.wait_state(&id, "FAILED", JOB_WAIT)?;
    let o = c.ok(&format!("scontrol show job {id}"))?;
    must_contain("restarted job", &o.stdout, &["ExitCode=3:0"])?;
    let out = c.ok_as(alice, "cat sd-restart.out")?;
    if out.stdout != "start\nend\n" {
        return Err(format!("job output after restart: {:?}", out.stdout));
    }
    c.record("job across a slurmd restart", &out.stdout);
    c.ok_as(alice, "rm -f sd-restart.out")?;
    wait_nodes_idle(c)
}

/// The seed's example: a batch job on two nodes whose steps are launched with srun.
fn srun_batch(c: &mut Ctx) -> Result<(), String> {
    let alice = Some("alice");
    let id = submit(
        c,
        alice,
        "-N 2 --ntasks-per-node=2 -o sd-srun.out --wrap \
         'srun hostname | sort; srun -N1 -n1 echo one-step; srun -l -n4 printenv SLURM_PROCID | sort'",
    )?;
    c.wait_state(&id, "COMPLETED", JOB_WAIT)?;
    let o = c.ok_as(alice, "cat sd-srun.out")?;
    // A step asked for while the previous one is still being released
    // waits, and srun says so; stock does this too under load.
    let out: String = o
        .stdout
        .lines()
        .filter(|l| {
            let waited = l.starts_with("srun: Job ")
                && l.contains("step creation temporarily disabled, retrying");
            !waited && !l.starts_with("srun: Step created for job")
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let want = "n1\nn1\nn2\nn2\none-step\n0: 0\n1: 1\n2: 2\n3: 3\n";
    if out != want {
        return Err(format!("srun inside sbatch: want {want:?}, got {out:?}"));
    }
    // prefixed: a task label at a line start ("3: 3") would be taken
    // for a job id of the same number by the normaliser
    let shown: String = out.lines().map(|l| format!("> {l}\n")).collect();
    c.record("srun steps in a batch job", &shown);
    c.ok_as(alice, "rm -f sd-srun.out")?;
    Ok(())
}

/// The script of [`srun_cgroup`]: each srun step prints its cgroups, leaves
/// a process in a session of its own, or allocates beyond the job's --mem.
const SRUN_CGROUP_SCRIPT: &str = r#"#!/bin/sh
srun cat /proc/self/cgroup | sed 's/^/cg /'
srun sh -c 'setsid sleep 7781 </dev/null >/dev/null 2>&1 & echo forked'
i=0
while ps -eo args | grep -q '[s]leep 7781' && [ $i -lt 40 ]; do sleep 0.5; i=$((i+1)); done
ps -eo args | grep -q '[s]leep 7781' && echo "step child alive" || echo "step child gone"
srun python3 -c 'import time; a = bytearray(512 << 20); time.sleep(5); print("survived")'
echo "oom step rc=$?"
"#;

/// Steps of a batch job are contained like the batch step: every task in
/// the job's cgroup under its own step's, with the job's memory limit (a
/// step beyond it is OOM-killed and srun says so), and what a step forks
/// dies with the step.
fn srun_cgroup(c: &mut Ctx) -> Result<(), String> {
    let alice = Some("alice");
    c.ok_as(
        alice,
        &format!("cat > sd-srcg.sh <<'EOF'\n{SRUN_CGROUP_SCRIPT}EOF"),
    )?;
    let id = submit(c, alice, "-N1 -n1 --mem=100 -o sd-srcg.out sd-srcg.sh")?;
    c.wait_for(
        None,
        &format!("scontrol show job {id}"),
        &format!("job {id} ended"),
        JOB_WAIT,
        |s| {
            !s.contains("JobState=RUNNING ")
                && !s.contains("JobState=PENDING ")
                && !s.contains("JobState=CONFIGURING ")
                && !s.contains("JobState=COMPLETING ")
        },
    )?;
    let o = c.ok(&format!("scontrol show job {id}"))?;
    let node = field(&o.stdout, "NodeList").unwrap_or_default();
    let state = field(&o.stdout, "JobState").unwrap_or_default();
    let out = c.ok_as(alice, "cat sd-srcg.out")?.stdout;
    // Step 0's cgroups: the tracking (freezer) and the memory hierarchy
    // name the job's step 0 (stock: .../job_<id>/step_0[/task_0]). The
    // cluster constrains neither cores nor devices, so stock leaves those.
    let step_dir = format!("/job_{id}/step_0");
    let mut shown = String::new();
    for ctl in ["freezer", "memory"] {
        let line = out
            .lines()
            .filter_map(|l| l.strip_prefix("cg "))
            .find(|l| {
                l.split(':')
                    .nth(1)
                    .is_some_and(|c| c.split(',').any(|x| x == ctl))
            })
            .ok_or_else(|| format!("no {ctl} line in step 0's /proc/self/cgroup:\n{out}"))?;
        let path = line.splitn(3, ':').nth(2).unwrap_or_default();
        let inside = path.contains(&format!("{step_dir}/")) || path.ends_with(&step_dir);
        if !inside {
            return Err(format!(
                "step 0's {ctl} cgroup is {path}, not in the job's step cgroup {step_dir}:\n{out}"
            ));
        }
        shown.push_str(&format!("{ctl}: in the job's step_0\n"));
    }
    c.record("cgroups of an srun step", &shown);
    // What step 1 forked into a session of its own died with the step (the
    // script looked), and nothing of the job is left on the node.
    let left = marker_procs(c, &node)?;
    if left.contains("sleep 7781") || !out.contains("step child gone\n") {
        return Err(format!(
            "step 1's setsid child outlived its step on {node}:\n{left}\n{out}"
        ));
    }
    // Step 2 went beyond --mem: killed, and srun reports it as stock does.
    let oom: String = out
        .lines()
        .filter(|l| {
            l.contains("Out Of Memory")
                || l.starts_with("oom step rc=")
                || l.starts_with("step child")
                || l.contains("survived")
                || *l == "forked"
        })
        .map(|l| format!("{l}\n"))
        .collect();
    if !oom.contains("Out Of Memory") || oom.contains("survived") {
        return Err(format!("the step beyond --mem was not OOM-killed:\n{out}"));
    }
    c.record("output of the steps", &oom);
    c.record("job state", &format!("JobState={state}\n"));
    c.ok_as(alice, "rm -f sd-srcg.sh sd-srcg.out")?;
    Ok(())
}

pub fn all() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "slurmd_env",
            about: "batch job environment, variable by variable",
            compare: true,
            run: env,
        },
        Scenario {
            name: "slurmd_env_array",
            about: "array task environment (SLURM_ARRAY_*), variable by variable",
            compare: true,
            run: env_array,
        },
        Scenario {
            name: "slurmd_fname",
            about: "output filename patterns %j %J %x %N %n %u %s %t %% and padding",
            compare: true,
            run: fname,
        },
        Scenario {
            name: "slurmd_fname_array",
            about: "output filename patterns of an array task: %A %a %3a",
            compare: true,
            run: fname_array,
        },
        Scenario {
            name: "slurmd_open_mode",
            about: "--open-mode=append (two jobs, one file) vs default truncate",
            compare: true,
            run: open_mode,
        },
        Scenario {
            name: "slurmd_perms",
            about: "a job runs as its user: alice cannot read or write bob's 0600 file",
            compare: true,
            run: perms,
        },
        Scenario {
            name: "slurmd_kill_tree",
            about: "scancel of a job whose grandchildren escape (setsid, double fork, nohup): none survive",
            compare: true,
            run: kill_tree,
        },
        Scenario {
            name: "slurmd_timeout",
            about: "time limit -> TIMEOUT",
            compare: true,
            run: timeout,
        },
        Scenario {
            name: "slurmd_cancel_out",
            about: "scancel of a running job: the step daemon's CANCELLED line in its output",
            compare: true,
            run: cancel_out,
        },
        Scenario {
            name: "slurmd_signal_batch",
            about: "scancel --signal to a batch job: not the script without -b, the shell alone with -b, its process group with --full",
            compare: true,
            run: signal_batch,
        },
        Scenario {
            name: "slurmd_oom",
            about: "a job beyond --mem ends OUT_OF_MEMORY, the node stays healthy",
            compare: true,
            run: oom,
        },
        Scenario {
            name: "slurmd_srun_cgroup",
            about: "srun steps in a batch job run in the job's step cgroups: a step beyond --mem is OOM-killed and reported Out Of Memory, nothing a step forks outlives it",
            compare: true,
            run: srun_cgroup,
        },
        Scenario {
            name: "slurmd_prolog_fail",
            about: "a failing prolog drains the node with a reason",
            compare: true,
            run: prolog_fail,
        },
        Scenario {
            name: "slurmd_epilog",
            about: "the epilog runs after a job, with its environment",
            compare: true,
            run: epilog,
        },
        Scenario {
            name: "slurmd_gpus",
            about: "CUDA_VISIBLE_DEVICES / SLURM_JOB_GPUS match the allocated GPU indices",
            compare: true,
            run: gpus,
        },
        Scenario {
            name: "slurmd_restart",
            about: "restart of slurmd while a job runs: the job completes and reports",
            compare: true,
            run: restart,
        },
        Scenario {
            name: "slurmd_srun_batch",
            about: "srun steps inside a two-node batch job (the seed's example)",
            compare: true,
            run: srun_batch,
        },
        Scenario {
            name: "slurmd_tree",
            about: "TreeWidth=1: a stock controller's RPCs to two nodes go to n1, which forwards them to n2 (node pings, job end, cancel)",
            compare: true,
            run: tree,
        },
    ]
}

/// With TreeWidth=1 a stock controller sends one message for n[1-2] to n1
/// with n2 in its forward list. Pings are not retried, so with a short
/// SlurmdTimeout (a ping every 5 s) n2 shows not responding within
/// seconds unless n1 relays them; job ends must reach n2 the same way.
fn tree(c: &mut Ctx) -> Result<(), String> {
    super::ops::writable_conf(c)?;
    let r = (|| {
        c.ok_on(
            "ctl",
            "set -e; f=/etc/slurm/slurm.conf; sed -i '/^SlurmdTimeout=/d' $f; \
             printf 'TreeWidth=1\\nSlurmdTimeout=15\\n' >> $f",
        )?;
        c.ok("scontrol reconfigure")?;
        c.wait_for(
            None,
            "scontrol show config | grep -iE '^(TreeWidth|SlurmdTimeout) '",
            "the controller back with TreeWidth=1 and SlurmdTimeout=15",
            Duration::from_secs(60),
            |s| s.contains("= 1\n") && s.contains("= 15 sec"),
        )?;
        // Three ping rounds, every node answering each time.
        for _ in 0..4 {
            std::thread::sleep(Duration::from_secs(5));
            let o = c.ok("sinfo -h -N -o '%N %t' | sort -u")?;
            if o.stdout.contains('*') {
                return Err(format!(
                    "a node stopped responding with TreeWidth=1:\n{}",
                    o.stdout
                ));
            }
        }
        tree_jobs(c)
    })();
    let undo = super::ops::restore_conf(c, &[]);
    r?;
    undo?;
    wait_nodes_idle(c)
}

fn tree_jobs(c: &mut Ctx) -> Result<(), String> {
    let alice = Some("alice");
    // Ends by itself: the terminate goes down the tree.
    let id = submit(c, alice, "-N2 -o /dev/null --wrap true")?;
    c.wait_state(&id, "COMPLETED", JOB_WAIT)?;
    wait_nodes_idle(c)?;
    // Cancelled while running on both nodes.
    let id = submit(c, alice, "-N2 -o /dev/null --wrap 'sleep 300'")?;
    c.wait_state(&id, "RUNNING", JOB_WAIT)?;
    c.ok_as(alice, &format!("scancel {id}"))?;
    c.wait_state(&id, "CANCELLED", JOB_WAIT)?;
    wait_nodes_idle(c)?;
    c.record(
        "after a two-node job ran, and another was cancelled",
        "nodes idle\n",
    );
    Ok(())
}
