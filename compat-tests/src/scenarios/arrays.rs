//! Job arrays and dependencies.

use super::ctx::*;
use std::time::Duration;

pub fn all() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "array_run",
            about: "sbatch --array=0-3 with %A_%a output names and SLURM_ARRAY_* env; task records and ids",
            compare: true,
            run: array_run,
        },
        Scenario {
            name: "array_throttle_scancel",
            about: "--array=1-9:2%2: collapsed pending line, squeue -r, JobArrayTaskLimit, scancel of tasks, ranges and the whole array",
            compare: true,
            run: array_throttle_scancel,
        },
        Scenario {
            name: "array_list",
            about: "--array=1,3,5: task ids from a list, scontrol show job ID_TASK",
            compare: true,
            run: array_list,
        },
        Scenario {
            name: "array_default_output",
            about: "--array without -o: slurm-%A_%a.out files and the StdOut shown",
            compare: true,
            run: array_default_output,
        },
        Scenario {
            name: "array_control",
            about: "scontrol update jobid=A_T, hold/release/requeue of A_T and A_[1-3], update of a whole array; per-task errors",
            compare: true,
            run: array_control,
        },
        Scenario {
            name: "dep_outcomes",
            about: "afterok/afternotok/afterany/after: Dependency reason, fulfilled and failed (DependencyNeverSatisfied)",
            compare: true,
            run: dep_outcomes,
        },
        Scenario {
            name: "dep_lists_update",
            about: "`?` and `,` lists, +time, singleton, scontrol update job Dependency=",
            compare: true,
            run: dep_lists_update,
        },
        Scenario {
            name: "dep_invalid_and_arrays",
            about: "unknown job id refused at submit with stock's text; dependencies on a whole array and one task",
            compare: true,
            run: dep_invalid_and_arrays,
        },
    ]
}

const ALICE: Option<&str> = Some("alice");
const WAIT: Duration = Duration::from_secs(60);

/// Replaces job ids in `text` with placeholders where they start a line
/// (squeue rows, `12_[1-3]` included), follow a `:` (`afterok:12`),
/// `job ` or `job id `, and are whole numbers; the generic normaliser does not
/// see `12` in `12_3` as a job id.
fn ids(text: &str, map: &[(&str, &str)]) -> String {
    let mut map: Vec<(&str, &str)> = map.to_vec();
    // Longer ids first, so that 120 is not replaced as 12 + "0".
    map.sort_by_key(|(id, _)| std::cmp::Reverse(id.len()));
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        let b = line.as_bytes();
        let first = line.len() - line.trim_start().len();
        let mut i = 0;
        'outer: while i < line.len() {
            let before = line[..i].to_ascii_lowercase();
            let ctx = i == first
                || (i > 0 && b[i - 1] == b':')
                || before.ends_with("job id ")
                || before.ends_with("job ");
            if ctx {
                for (id, ph) in &map {
                    let end = i + id.len();
                    if line[i..].starts_with(id) && b.get(end).is_none_or(|c| !c.is_ascii_digit()) {
                        out.push_str(ph);
                        i = end;
                        continue 'outer;
                    }
                }
            }
            let c = line[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn sorted(s: &str) -> String {
    let mut l: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    l.sort_unstable();
    l.into_iter().map(|l| format!("{l}\n")).collect()
}

/// squeue's default sort (partition, state, priority) leaves tasks of one
/// array tied; their order then follows the controller's job list, which stock
/// 24.11 builds differently depending on which scheduler pass split the task
/// off. Keeps the header and the order of runs of lines that differ in column
/// `col` (0-based: ST in the default format), and sorts lines within each run.
fn ties_sorted(s: &str, col: usize) -> String {
    let mut out = String::new();
    let mut lines = s.lines().filter(|l| !l.trim().is_empty()).peekable();
    if let Some(h) = lines.next() {
        out.push_str(h);
        out.push('\n');
    }
    let key = |l: &str| l.split_whitespace().nth(col).unwrap_or("").to_string();
    let mut run: Vec<&str> = Vec::new();
    while let Some(l) = lines.next() {
        run.push(l);
        if lines.peek().is_none_or(|n| key(n) != key(l)) {
            run.sort_unstable();
            for r in run.drain(..) {
                out.push_str(r);
                out.push('\n');
            }
        }
    }
    out
}

fn sbatch(c: &mut Ctx, args: &str) -> Result<String, String> {
    let o = c.ok_as(ALICE, &format!("sbatch {args}"))?;
    submitted_id(&o)
}

/// `Key=value` for every record of `scontrol show job ID`, one line per
/// record with the given keys.
fn records(c: &mut Ctx, id: &str, keys: &[&str]) -> Result<String, String> {
    let o = c.ok(&format!("scontrol show job {id}"))?;
    let mut out = String::new();
    for rec in o.stdout.split("\n\n").filter(|r| r.contains("JobId=")) {
        let vals: Vec<String> = keys
            .iter()
            .map(|k| format!("{k}={}", field(rec, k).unwrap_or_default()))
            .collect();
        out.push_str(&vals.join(" "));
        out.push('\n');
    }
    Ok(out)
}

/// Waits until none of alice's jobs is pending, running or completing.
fn wait_idle(c: &mut Ctx) -> Result<(), String> {
    c.wait_for(
        None,
        "squeue -h -u alice -o '%i %T'",
        "alice's jobs to end",
        WAIT,
        |s| s.trim().is_empty(),
    )
    .map(|_| ())
}

fn array_run(c: &mut Ctx) -> Result<(), String> {
    let a = sbatch(
        c,
        "--array=0-3 -J arr -o 'arr-%A_%a.out' --wrap 'echo $SLURM_ARRAY_JOB_ID $SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_COUNT $SLURM_ARRAY_TASK_MIN $SLURM_ARRAY_TASK_MAX $SLURM_ARRAY_TASK_STEP $SLURM_JOB_NAME'",
    )?;
    c.job(&a);
    let files: Vec<String> = (0..4).map(|t| format!("arr-{a}_{t}.out")).collect();
    let cat = format!("cat {} 2>/dev/null", files.join(" "));
    let out = c.wait_for(ALICE, &cat, "the 4 task outputs", WAIT, |s| {
        s.lines().count() == 4
    })?;
    let want: String = (0..4).map(|t| format!("{a} {t} 4 0 3 1 arr\n")).collect();
    if out != want {
        return Err(format!("array outputs: want\n{want}got\n{out}"));
    }
    c.record("task outputs", &ids(&out, &[(&a, "<A>")]));
    // Every task record, and which one kept the array's id: the last.
    c.wait_for(
        None,
        &format!("scontrol show job {a}"),
        "all tasks COMPLETED",
        WAIT,
        |s| s.matches("JobState=COMPLETED").count() == 4,
    )?;
    let o = c.ok(&format!("scontrol show job {a}"))?;
    let mut lines = Vec::new();
    for rec in o.stdout.split("\n\n").filter(|r| r.contains("JobId=")) {
        let id = field(rec, "JobId").unwrap_or_default();
        let task = field(rec, "ArrayTaskId").unwrap_or_default();
        let aj = field(rec, "ArrayJobId").unwrap_or_default();
        if aj != a {
            return Err(format!(
                "task record with ArrayJobId={aj}, want {a}:\n{rec}"
            ));
        }
        lines.push(format!(
            "task={task} own_id={} state={} name={}",
            if id == a { "array" } else { "new" },
            field(rec, "JobState").unwrap_or_default(),
            field(rec, "JobName").unwrap_or_default(),
        ));
    }
    // The order too: the head record, then the others newest first.
    c.record("array records in order", &lines.join("\n"));
    let text = sorted(&lines.join("\n"));
    must_contain(
        "scontrol show job <array>",
        &text,
        &[
            "task=0 own_id=new state=COMPLETED",
            "task=3 own_id=array state=COMPLETED",
        ],
    )?;
    c.record("array records", &text);
    let o = c.ok(&format!("squeue -h -r -t all -j {a} -o '%i %t %K'"))?;
    c.record("squeue -r -t all", &sorted(&ids(&o.stdout, &[(&a, "<A>")])));
    c.ok_as(ALICE, &format!("rm -f {}", files.join(" ")))?;
    Ok(())
}

fn array_throttle_scancel(c: &mut Ctx) -> Result<(), String> {
    let a = sbatch(c, "--array=1-9:2%2 -J thr -o /dev/null --wrap 'sleep 300'")?;
    c.job(&a);
    let m = [(a.as_str(), "<A>")];
    let q = format!("squeue -h -j {a} -o '%i %T %r'");
    let o = c.wait_for(None, &q, "2 tasks running, the rest throttled", WAIT, |s| {
        s.matches("RUNNING").count() == 2 && s.contains("JobArrayTaskLimit")
    })?;
    must_contain(
        "squeue",
        &o,
        &[
            &format!("{a}_[5,7,9%2] PENDING JobArrayTaskLimit"),
            &format!("{a}_1 RUNNING"),
            &format!("{a}_3 RUNNING"),
        ],
    )?;
    c.record("squeue (collapsed)", &sorted(&ids(&o, &m)));
    let o = c.ok(&format!("squeue -h -r -j {a} -o '%i %T %r'"))?;
    must_contain(
        "squeue -r",
        &o.stdout,
        &[&format!("{a}_7 PENDING JobArrayTaskLimit")],
    )?;
    c.record("squeue -r", &sorted(&ids(&o.stdout, &m)));
    let o = c.ok("squeue -u alice")?;
    c.record("squeue", &ties_sorted(&ids(&o.stdout, &m), 4));
    let r = records(
        c,
        &a,
        &["ArrayTaskId", "JobState", "Reason", "ArrayTaskThrottle"],
    )?;
    c.record("scontrol show job (records)", &sorted(&r));
    let r = records(c, &format!("{a}_3"), &["ArrayTaskId", "JobState"])?;
    c.record("scontrol show job A_3", &r);
    // Pending tasks leave the meta record.
    c.ok_as(ALICE, &format!("scancel {a}_[5-7]"))?;
    let o = c.wait_for(None, &q, "tasks 5 and 7 gone", WAIT, |s| {
        s.contains(&format!("{a}_9 PENDING")) || s.contains(&format!("{a}_[9%2] PENDING"))
    })?;
    c.record("after scancel A_[5-7]", &sorted(&ids(&o, &m)));
    // A running task: task 9 takes its place.
    c.ok_as(ALICE, &format!("scancel {a}_1"))?;
    let o = c.wait_for(None, &q, "task 9 running, task 1 gone", WAIT, |s| {
        s.contains(&format!("{a}_9 RUNNING")) && !s.contains("COMPLETING")
    })?;
    c.record("after scancel A_1", &sorted(&ids(&o, &m)));
    c.wait_state(&format!("{a}_1"), "CANCELLED", WAIT)?;
    // Unknown task.
    let o = c.run_as(ALICE, &format!("scancel {a}_42"));
    c.record(
        "scancel A_42",
        &format!("rc={}\n{}", o.rc, ids(&o.stderr, &m)),
    );
    // The whole array.
    c.ok_as(ALICE, &format!("scancel {a}"))?;
    wait_idle(c)?;
    let r = records(c, &a, &["ArrayTaskId", "JobState"])?;
    c.record("records after scancel A", &sorted(&r));
    Ok(())
}

fn array_list(c: &mut Ctx) -> Result<(), String> {
    let a = sbatch(
        c,
        "--array=1,3,5 -o 'lst-%a.out' --wrap 'echo $SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_COUNT $SLURM_ARRAY_TASK_MIN $SLURM_ARRAY_TASK_MAX $SLURM_ARRAY_TASK_STEP'",
    )?;
    c.job(&a);
    let cat = "cat lst-1.out lst-3.out lst-5.out 2>/dev/null";
    let out = c.wait_for(ALICE, cat, "the 3 task outputs", WAIT, |s| {
        s.lines().count() == 3
    })?;
    if out != "1 3 1 5 1\n3 3 1 5 1\n5 3 1 5 1\n" {
        return Err(format!("array outputs: got\n{out}"));
    }
    c.record("task outputs", &out);
    c.wait_for(
        None,
        &format!("scontrol show job {a}"),
        "all tasks COMPLETED",
        WAIT,
        |s| s.matches("JobState=COMPLETED").count() == 3,
    )?;
    let r = records(
        c,
        &format!("{a}_3"),
        &["ArrayTaskId", "JobState", "ExitCode"],
    )?;
    c.record("scontrol show job A_3", &r);
    let o = c.run_as(None, &format!("scontrol show job {a}_4"));
    c.record(
        "scontrol show job A_4",
        &format!("rc={}\n{}", o.rc, ids(&o.both(), &[(&a, "<A>")])),
    );
    c.ok_as(ALICE, "rm -f lst-1.out lst-3.out lst-5.out")?;
    Ok(())
}

fn array_default_output(c: &mut Ctx) -> Result<(), String> {
    let a = sbatch(c, "--array=0-1 --wrap 'echo task $SLURM_ARRAY_TASK_ID'")?;
    c.job(&a);
    let cat = format!("cat slurm-{a}_0.out slurm-{a}_1.out 2>/dev/null");
    let out = c.wait_for(ALICE, &cat, "the 2 task outputs", WAIT, |s| {
        s.lines().count() == 2
    })?;
    if out != "task 0\ntask 1\n" {
        return Err(format!("array outputs: got\n{out}"));
    }
    c.wait_for(
        None,
        &format!("scontrol show job {a}"),
        "both tasks COMPLETED",
        WAIT,
        |s| s.matches("JobState=COMPLETED").count() == 2,
    )?;
    let r = records(c, &a, &["ArrayTaskId", "StdOut", "StdErr"])?;
    let r = r.replace(&format!("slurm-{a}_"), "slurm-<A>_");
    c.record("StdOut of the tasks", &sorted(&r));
    c.ok_as(ALICE, &format!("rm -f slurm-{a}_0.out slurm-{a}_1.out"))?;
    Ok(())
}

fn dep_text(c: &mut Ctx, id: &str, m: &[(&str, &str)]) -> Result<String, String> {
    let o = c.ok(&format!("scontrol show job {id}"))?;
    let d = field(&o.stdout, "Dependency").unwrap_or_default();
    Ok(ids(&d, m))
}

fn dep_outcomes(c: &mut Ctx) -> Result<(), String> {
    let j1 = sbatch(c, "-o /dev/null --wrap 'sleep 8'")?;
    let jf = sbatch(c, "-o /dev/null --wrap 'sleep 8; exit 3'")?;
    let ok = sbatch(c, &format!("-o /dev/null -d afterok:{j1} --wrap true"))?;
    let notok = sbatch(c, &format!("-o /dev/null -d afternotok:{j1} --wrap true"))?;
    let any = sbatch(c, &format!("-o /dev/null -d afterany:{jf} --wrap true"))?;
    let after = sbatch(c, &format!("-o /dev/null -d after:{j1} --wrap true"))?;
    let fok = sbatch(c, &format!("-o /dev/null -d afterok:{jf} --wrap true"))?;
    let fnot = sbatch(c, &format!("-o /dev/null -d afternotok:{jf} --wrap true"))?;
    let m = [
        (j1.as_str(), "<J1>"),
        (jf.as_str(), "<JF>"),
        (ok.as_str(), "<OK>"),
        (notok.as_str(), "<NOTOK>"),
        (any.as_str(), "<ANY>"),
        (after.as_str(), "<AFTER>"),
        (fok.as_str(), "<FOK>"),
        (fnot.as_str(), "<FNOT>"),
    ];
    for (id, _) in &m {
        c.job(id);
    }
    let q = format!("squeue -h -j {ok},{notok},{any},{fok},{fnot} -o '%i %T %r'");
    let o = c.wait_for(None, &q, "dependent jobs pending", WAIT, |s| {
        s.matches("Dependency").count() == 5
    })?;
    c.record("squeue (waiting)", &sorted(&ids(&o, &m)));
    // (`after` is left out: whether j1 started yet depends on timing.)
    let mut texts = String::new();
    for (id, ph) in m[2..].iter().filter(|(_, ph)| *ph != "<AFTER>") {
        texts.push_str(&format!("{ph} {}\n", dep_text(c, id, &m)?));
    }
    must_contain(
        "dependencies",
        &texts,
        &[
            "<OK> afterok:<J1>(unfulfilled)",
            "<ANY> afterany:<JF>(unfulfilled)",
        ],
    )?;
    c.record("Dependency= while waiting", &texts);
    // j1 succeeds, jf fails: ok, any, fnot run; notok, fok never can.
    c.wait_state(&ok, "COMPLETED", WAIT)?;
    for id in [&any, &fnot, &after] {
        c.wait_state(id, "COMPLETED", WAIT)?;
    }
    let o = c.wait_for(
        None,
        &format!("squeue -h -j {notok},{fok} -o '%i %T %r'"),
        "DependencyNeverSatisfied",
        WAIT,
        |s| s.matches("DependencyNeverSatisfied").count() == 2,
    )?;
    c.record("squeue (never satisfied)", &sorted(&ids(&o, &m)));
    let mut texts = String::new();
    for (id, ph) in &m[2..] {
        texts.push_str(&format!("{ph} {}\n", dep_text(c, id, &m)?));
    }
    must_contain(
        "dependencies",
        &texts,
        &[
            "<NOTOK> afternotok:<J1>(failed)",
            "<FOK> afterok:<JF>(failed)",
        ],
    )?;
    c.record("Dependency= at the end", &texts);
    c.ok_as(ALICE, &format!("scancel {notok} {fok}"))?;
    wait_idle(c)
}

fn dep_lists_update(c: &mut Ctx) -> Result<(), String> {
    let j1 = sbatch(c, "-o /dev/null --wrap 'sleep 300'")?;
    let j2 = sbatch(c, "-o /dev/null --wrap 'sleep 300'")?;
    let either = sbatch(
        c,
        &format!("-o /dev/null -d 'afterok:{j1}?afterany:{j2}' --wrap true"),
    )?;
    let both = sbatch(
        c,
        &format!("-o /dev/null -d 'afterok:{j1}:{j2},after:{j1}+10' --wrap true"),
    )?;
    let s1 = sbatch(c, "-J single -o /dev/null --wrap 'sleep 300'")?;
    let s2 = sbatch(c, "-J single -o /dev/null -d singleton --wrap true")?;
    let m = [
        (j1.as_str(), "<J1>"),
        (j2.as_str(), "<J2>"),
        (either.as_str(), "<EITHER>"),
        (both.as_str(), "<BOTH>"),
        (s1.as_str(), "<S1>"),
        (s2.as_str(), "<S2>"),
    ];
    for (id, _) in &m {
        c.job(id);
    }
    let q = format!("squeue -h -j {either},{both},{s2} -o '%i %T %r'");
    let o = c.wait_for(None, &q, "dependent jobs pending", WAIT, |s| {
        s.matches("Dependency").count() == 3
    })?;
    c.record("squeue", &sorted(&ids(&o, &m)));
    let mut texts = String::new();
    for (id, ph) in [(&either, "<EITHER>"), (&both, "<BOTH>"), (&s2, "<S2>")] {
        texts.push_str(&format!("{ph} {}\n", dep_text(c, id, &m)?));
    }
    must_contain(
        "dependencies",
        &texts,
        &[
            "<EITHER> afterok:<J1>(unfulfilled)?afterany:<J2>(unfulfilled)",
            "<BOTH> afterok:<J1>(unfulfilled),afterok:<J2>(unfulfilled),after:<J1>+10(unfulfilled)",
            "<S2> singleton(unfulfilled)",
        ],
    )?;
    c.record("Dependency=", &texts);
    // Update while pending; a running job refuses.
    c.ok_as(
        ALICE,
        &format!("scontrol update job {both} Dependency=afterany:{j2}"),
    )?;
    let t = dep_text(c, &both, &m)?;
    if t != "afterany:<J2>(unfulfilled)" {
        return Err(format!("after update: Dependency={t}"));
    }
    c.record("Dependency= after update", &t);
    c.wait_state(&j1, "RUNNING", WAIT)?;
    let o = c.run_as(
        ALICE,
        &format!("scontrol update job {j1} Dependency=afterany:{j2}"),
    );
    c.record(
        "update of a running job",
        &format!("rc={}\n{}", o.rc, ids(&o.stderr, &m)),
    );
    let o = c.run_as(
        ALICE,
        &format!("scontrol update job {both} Dependency=afterok:{both}"),
    );
    c.record(
        "update on itself",
        &format!("rc={}\n{}", o.rc, ids(&o.stderr, &m)),
    );
    // Clearing lets it run; ending j1 releases `either`, s1 the singleton.
    c.ok_as(ALICE, &format!("scontrol update job {both} Dependency="))?;
    c.wait_state(&both, "COMPLETED", WAIT)?;
    c.ok_as(ALICE, &format!("scancel {j2} {s1}"))?;
    c.wait_state(&either, "COMPLETED", WAIT)?;
    c.wait_state(&s2, "COMPLETED", WAIT)?;
    c.ok_as(ALICE, &format!("scancel {j1}"))?;
    wait_idle(c)
}

fn dep_invalid_and_arrays(c: &mut Ctx) -> Result<(), String> {
    // 22.05 took afterok/afternotok on an unknown job (and lifted it);
    // 23.02 on refuse it.
    let old = c.client == "22.05";
    for spec in [
        "afterok:999999",
        "afternotok:999999",
        "afterfoo:1",
        "afterok:1_x",
    ] {
        let o = c.run_as(ALICE, &format!("sbatch -o /dev/null -d {spec} --wrap true"));
        if old && spec.ends_with(":999999") {
            let id = submitted_id(&o)?;
            c.job(&id);
            c.wait_state(&id, "COMPLETED", WAIT)?;
            c.record(&format!("sbatch -d {spec}"), "accepted, ran\n");
            continue;
        }
        if o.rc == 0 {
            return Err(format!("sbatch -d {spec} was accepted:\n{}", o.both()));
        }
        c.record(
            &format!("sbatch -d {spec}"),
            &format!("rc={}\n{}", o.rc, o.stderr),
        );
    }
    let a = sbatch(c, "--array=0-2 -o /dev/null --wrap 'sleep 6'")?;
    let whole = sbatch(c, &format!("-o /dev/null -d afterok:{a} --wrap true"))?;
    let one = sbatch(c, &format!("-o /dev/null -d afterany:{a}_1 --wrap true"))?;
    let m = [
        (a.as_str(), "<A>"),
        (whole.as_str(), "<WHOLE>"),
        (one.as_str(), "<ONE>"),
    ];
    for (id, _) in &m {
        c.job(id);
    }
    let mut texts = String::new();
    for (id, ph) in [(&whole, "<WHOLE>"), (&one, "<ONE>")] {
        texts.push_str(&format!("{ph} {}\n", dep_text(c, id, &m)?));
    }
    must_contain(
        "dependencies",
        &texts,
        &[
            "<WHOLE> afterok:<A>_*(unfulfilled)",
            "<ONE> afterany:<A>_1(unfulfilled)",
        ],
    )?;
    c.record("Dependency= on arrays", &texts);
    c.wait_state(&whole, "COMPLETED", WAIT)?;
    c.wait_state(&one, "COMPLETED", WAIT)?;
    wait_idle(c)
}

/// Job control of array tasks: the client sends `A_T` / `A_1-3` as
/// job_id_str and prints per-task errors from RESPONSE_JOB_ARRAY_ERRORS.
fn array_control(c: &mut Ctx) -> Result<(), String> {
    let a = sbatch(
        c,
        "--hold --array=1-4 -J actl -o /dev/null --wrap 'sleep 300'",
    )?;
    c.job(&a);
    let m = [(a.as_str(), "<A>")];
    let q = format!("squeue -h -r -j {a} -o '%i %T %r %l'");
    // Release one task: it is split off and runs; the others stay held.
    c.ok_as(ALICE, &format!("scontrol release {a}_2"))?;
    c.wait_for(None, &q, "task 2 running", WAIT, |s| {
        s.lines()
            .any(|l| l.starts_with(&format!("{a}_2 ")) && l.contains("RUNNING"))
    })?;
    // Update one pending task.
    c.ok_as(ALICE, &format!("scontrol update jobid={a}_3 TimeLimit=7"))?;
    let o = c.ok(&q)?;
    // The running task's limit is left out: stock 22.05 once showed A_3's
    // new limit on it too (a race on its side, not reproduced since).
    let o: String = o
        .stdout
        .lines()
        .map(|l| {
            let l = if l.contains(" RUNNING ") {
                l.rsplit_once(' ').map_or(l, |(head, _)| head)
            } else {
                l
            };
            format!("{l}\n")
        })
        .collect();
    c.record(
        "squeue -r after release A_2, update A_3",
        &sorted(&ids(&o, &m)),
    );
    // A task that does not exist: the client prints the task's error.
    let o = c.run_as(ALICE, &format!("scontrol update jobid={a}_9 TimeLimit=7"));
    if o.rc == 0 {
        return Err(format!("update of {a}_9 should fail:\n{}", o.both()));
    }
    c.record("update A_9 (stderr)", &ids(&o.stderr, &m));
    // Requeue of a range: the running task goes back, the pending ones
    // refuse (grouped by error).
    let o = c.run_as(ALICE, &format!("scontrol requeue {a}_[1-2]"));
    c.record(
        &format!("requeue A_[1-2] (rc {})", o.rc),
        &ids(&o.stderr, &m),
    );
    c.wait_for(None, &q, "task 2 requeued", WAIT, |s| {
        s.lines()
            .any(|l| l.starts_with(&format!("{a}_2 ")) && l.contains("PENDING"))
    })?;
    // Hold a range (task 2 is pending again, 4 is in the meta record).
    c.ok(&format!("scontrol hold {a}_[2-4]"))?;
    // The whole array by its id: every record.
    c.ok(&format!("scontrol update jobid={a} TimeLimit=9"))?;
    let o = c.ok(&q)?;
    c.record(
        "squeue -r after hold A_[2-4], update A",
        &sorted(&ids(&o.stdout, &m)),
    );
    let o = c.ok(&format!("scontrol show job {a}"))?;
    let mut lines: Vec<String> = o
        .stdout
        .split("\n\n")
        .filter(|r| r.contains("JobId="))
        .map(|r| {
            format!(
                "task={} state={} reason={} limit={} restarts={}",
                field(r, "ArrayTaskId").unwrap_or_default(),
                field(r, "JobState").unwrap_or_default(),
                field(r, "Reason").unwrap_or_default(),
                field(r, "TimeLimit").unwrap_or_default(),
                field(r, "Restarts").unwrap_or_default(),
            )
        })
        .collect();
    lines.sort();
    c.record("scontrol show job A", &lines.join("\n"));
    c.ok(&format!("scancel {a}"))?;
    wait_idle(c)
}

#[cfg(test)]
mod tests {
    use super::ties_sorted;

    #[test]
    fn ties_sorted_keeps_the_header_and_the_state_order_and_sorts_within_a_state() {
        let q = "JOBID P NAME USER ST\n9_[5] d t a PD\n9_3 d t a R\n9_1 d t a R\n8 d t a PD\n";
        assert_eq!(
            ties_sorted(q, 4),
            "JOBID P NAME USER ST\n9_[5] d t a PD\n9_1 d t a R\n9_3 d t a R\n8 d t a PD\n"
        );
    }
}
