//! Partitions: OverSubscribe (jobs sharing cores), `--exclusive=user|mcs`,
//! account and QOS lists, and `scontrol delete partition`.

use super::ctx::*;
use super::ops::with_partitions;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);

/// Submits a `sleep 300` as `user` and registers its id.
fn sbatch_as(c: &mut Ctx, user: &str, args: &str) -> Result<String, String> {
    let o = c.ok_as(
        Some(user),
        &format!("sbatch {args} -o /dev/null --wrap 'sleep 300'"),
    )?;
    let id = submitted_id(&o)?;
    c.job(&id);
    Ok(id)
}

/// Waits until `id` is pending for `reason`.
fn wait_reason(c: &mut Ctx, id: &str, reason: &str) -> Result<String, String> {
    c.wait_for(
        None,
        &format!("squeue -h -j {id} -o '%j %T %r'"),
        &format!("job {id} to wait with {reason}"),
        WAIT,
        |s| s.contains("PENDING") && s.contains(reason),
    )
}

/// Name, state, reason and nodes of the jobs of `part`, by name.
fn queue_of(c: &mut Ctx, part: &str) -> Result<String, String> {
    Ok(
        c.ok(&format!("squeue -h -p {part} -o '%j %T %r %N' | sort"))?
            .stdout,
    )
}

/// Cancels everything the scenario's users have and waits for idle nodes.
fn clean_up(c: &mut Ctx) -> Result<(), String> {
    c.ok("scancel -u alice")?;
    c.ok("scancel -u bob")?;
    c.wait_for(None, "squeue -h -o %i", "empty queue", WAIT, |s| {
        s.trim().is_empty()
    })?;
    c.wait_for(None, "sinfo -h -o %t | sort -u", "nodes idle", WAIT, |s| {
        s.trim() == "idle"
    })?;
    Ok(())
}

/// What sinfo and scontrol show of n1's CPUs.
fn node_use(c: &mut Ctx, what: &str) -> Result<(), String> {
    let o =
        c.ok("sinfo -h -N -n n1 -o '%N %P %t'; scontrol show node n1 | grep -o 'CPUAlloc=[0-9]*'")?;
    c.record(what, &o.stdout);
    Ok(())
}

/// OverSubscribe=FORCE:2 puts two jobs on every core and no third;
/// YES:2 shares only jobs that ask with `--oversubscribe`, never beside
/// a job that does not; `scontrol show partition` prints both settings.
fn oversubscribe(c: &mut Ctx) -> Result<(), String> {
    with_partitions(
        c,
        "PartitionName=os_force Nodes=n1 OverSubscribe=FORCE:2 State=UP\nPartitionName=os_yes Nodes=n2 OverSubscribe=YES:2 State=UP",
        &["os_force", "os_yes"],
        |c| {
            let r = oversubscribe_steps(c);
            let undo = clean_up(c);
            r?;
            undo
        },
    )
}

fn oversubscribe_steps(c: &mut Ctx) -> Result<(), String> {
    for (p, want) in [
        ("os_force", "OverSubscribe=FORCE:2"),
        ("os_yes", "OverSubscribe=YES:2"),
    ] {
        let o = c.ok(&format!("scontrol show partition {p}"))?;
        must_contain(&format!("scontrol show partition {p}"), &o.stdout, &[want])?;
        c.record(&format!("scontrol show partition {p}"), &o.stdout);
    }

    // FORCE:2: two whole-node jobs share n1's 16 cores, a third waits.
    let f1 = sbatch_as(c, "alice", "-p os_force -J f1 -n16")?;
    c.wait_state(&f1, "RUNNING", WAIT)?;
    node_use(c, "n1 with one FORCE job")?;
    let f2 = sbatch_as(c, "alice", "-p os_force -J f2 -n16")?;
    c.wait_state(&f2, "RUNNING", WAIT)?;
    node_use(c, "n1 with two FORCE jobs")?;
    let f3 = sbatch_as(c, "bob", "-p os_force -J f3 -n16")?;
    wait_reason(c, &f3, "Resources")?;
    let q = queue_of(c, "os_force")?;
    c.record("squeue -p os_force (FORCE:2, three 16-CPU jobs)", &q);
    node_use(c, "n1 with two jobs a core and one waiting")?;
    let shown = c.job_field(&f1, "OverSubscribe")?;
    c.record("OverSubscribe of a FORCE job", &shown);
    c.ok(&format!("scancel {f1}"))?;
    c.wait_state(&f3, "RUNNING", WAIT)?;
    c.ok(&format!("scancel {f2} {f3}"))?;

    // YES:2: a job that does not ask to share keeps sharing ones off n2.
    let y1 = sbatch_as(c, "alice", "-p os_yes -J y1 -n4")?;
    c.wait_state(&y1, "RUNNING", WAIT)?;
    let y2 = sbatch_as(c, "alice", "-p os_yes -J y2 -n16 --oversubscribe")?;
    wait_reason(c, &y2, "Resources")?;
    let q = queue_of(c, "os_yes")?;
    c.record("squeue -p os_yes (a plain job, then a sharing one)", &q);
    c.ok(&format!("scancel {y1}"))?;
    c.wait_state(&y2, "RUNNING", WAIT)?;
    let y3 = sbatch_as(c, "bob", "-p os_yes -J y3 -n16 --oversubscribe")?;
    c.wait_state(&y3, "RUNNING", WAIT)?;
    let y4 = sbatch_as(c, "bob", "-p os_yes -J y4 -n16 --oversubscribe")?;
    wait_reason(c, &y4, "Resources")?;
    let q = queue_of(c, "os_yes")?;
    c.record("squeue -p os_yes (YES:2, three sharing jobs)", &q);
    let shown = c.job_field(&y2, "OverSubscribe")?;
    c.record("OverSubscribe of an --oversubscribe job", &shown);

    // scontrol update sets it, in each of its forms.
    for v in ["FORCE:3", "EXCLUSIVE", "NO", "YES:4"] {
        c.ok(&format!(
            "scontrol update partitionname=os_force OverSubscribe={v}"
        ))?;
        let o = c.ok("scontrol show partition os_force")?;
        let shown = field(&o.stdout, "OverSubscribe").unwrap_or_default();
        c.record(&format!("OverSubscribe after update to {v}"), &shown);
    }
    Ok(())
}

/// `--exclusive=user`: other users' jobs keep off the job's node, the
/// user's own share it; `--exclusive=mcs` without an MCS plugin.
fn exclusive_user(c: &mut Ctx) -> Result<(), String> {
    let r = exclusive_user_steps(c);
    let undo = clean_up(c);
    r?;
    undo
}

fn exclusive_user_steps(c: &mut Ctx) -> Result<(), String> {
    let a1 = sbatch_as(c, "alice", "-n1 --exclusive=user")?;
    c.wait_state(&a1, "RUNNING", WAIT)?;
    let b1 = sbatch_as(c, "bob", "-n1")?;
    c.wait_state(&b1, "RUNNING", WAIT)?;
    let a2 = sbatch_as(c, "alice", "-n1")?;
    c.wait_state(&a2, "RUNNING", WAIT)?;
    let mut rec = String::new();
    for (what, id) in [
        ("alice --exclusive=user", &a1),
        ("bob", &b1),
        ("alice", &a2),
    ] {
        let o = c.ok(&format!("scontrol show job {id}"))?;
        rec.push_str(&format!(
            "{what}: NodeList={} OverSubscribe={}\n",
            field(&o.stdout, "NodeList").unwrap_or_default(),
            field(&o.stdout, "OverSubscribe").unwrap_or_default(),
        ));
    }
    c.record("--exclusive=user placement", &rec);
    must_contain(
        "--exclusive=user placement",
        &rec,
        &[
            "user: NodeList=n1",
            "bob: NodeList=n2",
            "alice: NodeList=n1",
        ],
    )?;
    c.ok(&format!("scancel {a1} {b1} {a2}"))?;

    // No MCS plugin: the request is taken and shown, and changes nothing.
    let m = sbatch_as(c, "alice", "-n1 --exclusive=mcs")?;
    c.wait_state(&m, "RUNNING", WAIT)?;
    let o = c.ok(&format!("scontrol show job {m}"))?;
    c.record(
        "--exclusive=mcs",
        &format!(
            "NumCPUs={} OverSubscribe={}\n",
            field(&o.stdout, "NumCPUs").unwrap_or_default(),
            field(&o.stdout, "OverSubscribe").unwrap_or_default(),
        ),
    );
    Ok(())
}

// (No AllowQos/DenyQos: with no QOS table, 26.05 refuses to start with
// them, 22.05 and 24.11 log and ignore them.)
const ACCOUNT_PARTS: &str = "PartitionName=acct_allow Nodes=n1 AllowAccounts=physics State=UP\nPartitionName=acct_deny Nodes=n1 DenyAccounts=physics State=UP";

/// AllowAccounts/DenyAccounts with no accounting storage: shown by
/// `scontrol show partition`; 22.05 holds every job of an AllowAccounts
/// partition (it has no account to match), later releases check nothing,
/// and a job whose `-A` DenyAccounts names runs in all.
fn accounts(c: &mut Ctx) -> Result<(), String> {
    with_partitions(c, ACCOUNT_PARTS, &["acct_allow", "acct_deny"], |c| {
        let r = accounts_steps(c);
        let undo = clean_up(c);
        r?;
        undo
    })
}

/// The state and reason of `id` once the scheduler has looked at it.
fn settled(c: &mut Ctx, id: &str) -> Result<String, String> {
    c.wait_for(
        None,
        &format!("squeue -h -j {id} -o '%j %T %r'"),
        &format!("job {id} to run or wait for a reason"),
        WAIT,
        |s| s.contains("RUNNING") || (s.contains("PENDING") && !s.contains(" None")),
    )
}

fn accounts_steps(c: &mut Ctx) -> Result<(), String> {
    for p in ["acct_allow", "acct_deny"] {
        let o = c.ok(&format!("scontrol show partition {p}"))?;
        c.record(&format!("scontrol show partition {p}"), &o.stdout);
    }
    must_contain(
        "scontrol show partition acct_allow",
        &c.ok("scontrol show partition acct_allow")?.stdout,
        &["AllowAccounts=physics"],
    )?;
    let a = sbatch_as(c, "alice", "-p acct_allow -J allow -n1")?;
    let q = settled(c, &a)?;
    c.record("squeue (AllowAccounts=physics)", &q);
    let reason = c.job_field(&a, "Reason")?;
    c.record("scontrol show job: Reason", &reason);
    // (22.05 first gives it Priority behind the held job, then runs it.)
    let d = sbatch_as(c, "alice", "-p acct_deny -J deny -A physics -n1")?;
    c.wait_state(&d, "RUNNING", WAIT)?;
    let q = settled(c, &d)?;
    c.record("squeue (DenyAccounts=physics, -A physics)", &q);

    // scontrol update sets and lifts the lists.
    c.ok("scontrol update partitionname=acct_deny DenyAccounts=chem,bio")?;
    c.ok("scontrol update partitionname=acct_allow AllowAccounts=ALL")?;
    for p in ["acct_allow", "acct_deny"] {
        let o = c.ok(&format!("scontrol show partition {p}"))?;
        c.record(
            &format!("scontrol show partition {p} after update"),
            &o.stdout,
        );
    }
    Ok(())
}

/// The same lists with EnforcePartLimits=ALL: 22.05 refuses a job of the
/// AllowAccounts partition, and one whose `-A` DenyAccounts names, at
/// submit; later releases take both.
fn accounts_enforced(c: &mut Ctx) -> Result<(), String> {
    with_partitions(
        c,
        &format!("EnforcePartLimits=ALL\n{ACCOUNT_PARTS}"),
        &["acct_allow", "acct_deny"],
        |c| {
            let r = accounts_enforced_steps(c);
            let undo = clean_up(c);
            r?;
            undo
        },
    )
}

fn accounts_enforced_steps(c: &mut Ctx) -> Result<(), String> {
    let o = c.run_as(
        Some("alice"),
        "sbatch -p acct_allow -J allow -n1 -o /dev/null --wrap 'sleep 300'",
    );
    if o.rc == 0 {
        let id = submitted_id(&o)?;
        c.job(&id);
        let q = settled(c, &id)?;
        c.record("squeue (AllowAccounts, enforced)", &q);
    } else {
        c.record("sbatch to AllowAccounts=physics (enforced)", &o.both());
    }
    let o = c.run_as(
        Some("alice"),
        "sbatch -p acct_deny -J deny -A physics -n1 -o /dev/null --wrap 'sleep 300'",
    );
    if o.rc == 0 {
        let id = submitted_id(&o)?;
        c.job(&id);
        c.wait_state(&id, "RUNNING", WAIT)?;
        let q = settled(c, &id)?;
        c.record("squeue (DenyAccounts, enforced)", &q);
    } else {
        c.record(
            "sbatch -A physics to DenyAccounts=physics (enforced)",
            &o.both(),
        );
    }
    Ok(())
}

/// `scontrol delete partition=`: root only; refused while a job of the
/// partition is not finished; a deleted partition takes no jobs; deleting
/// the default one leaves none (a job without `-p` is refused).
fn delete(c: &mut Ctx) -> Result<(), String> {
    with_partitions(
        c,
        "PartitionName=del_a Nodes=n1 State=UP\nPartitionName=del_def Nodes=n2 Default=YES State=UP",
        &["del_a", "del_def"],
        |c| {
            let r = delete_steps(c);
            let undo = clean_up(c);
            r?;
            undo
        },
    )
}

/// Runs `cmd` as `user` (root when None); it must fail. Records its output.
fn refused(c: &mut Ctx, user: Option<&str>, cmd: &str, label: &str) -> Result<(), String> {
    let o = c.run_as(user, cmd);
    if o.rc == 0 {
        return Err(format!("`{cmd}` succeeded:\n{}", indent(&o.both())));
    }
    c.record(label, &o.both());
    Ok(())
}

fn delete_steps(c: &mut Ctx) -> Result<(), String> {
    refused(
        c,
        Some("alice"),
        "scontrol delete partition=del_a",
        "delete as alice",
    )?;
    refused(
        c,
        None,
        "scontrol delete partition=nosuch",
        "delete an unknown partition",
    )?;
    let id = sbatch_as(c, "alice", "-p del_a -J del -n1")?;
    c.wait_state(&id, "RUNNING", WAIT)?;
    refused(
        c,
        None,
        "scontrol delete partition=del_a",
        "delete with a running job",
    )?;
    c.ok(&format!("scancel {id}"))?;
    c.wait_state(&id, "CANCELLED", WAIT)?;
    let o = c.ok("scontrol delete partition=del_a")?;
    c.record("delete with only a finished job", &o.both());
    let o = c.ok("sinfo -h -o '%P %N' | sort")?;
    c.record("partitions after the delete", &o.stdout);
    refused(
        c,
        Some("alice"),
        "sbatch -p del_a -o /dev/null --wrap true",
        "sbatch to the deleted partition",
    )?;

    // The default partition.
    let o = c.ok("scontrol delete partitionname=del_def")?;
    c.record("delete the default partition", &o.both());
    refused(
        c,
        Some("alice"),
        "sbatch -o /dev/null --wrap true",
        "sbatch without -p and no default",
    )?;
    let o = c.ok("sinfo -h -o '%P %N' | sort")?;
    c.record("partitions without a default", &o.stdout);
    Ok(())
}

/// `--nodelist` and `--exclude` choose the nodes (a `--constraint` no
/// node has is refused); a job waiting for the
/// nodes it names holds back only those, so a later job runs elsewhere.
fn nodelist(c: &mut Ctx) -> Result<(), String> {
    let r = nodelist_steps(c);
    let undo = clean_up(c);
    r?;
    undo
}

fn nodelist_steps(c: &mut Ctx) -> Result<(), String> {
    let w = sbatch_as(c, "alice", "-J w -n1 -w n2")?;
    c.wait_state(&w, "RUNNING", WAIT)?;
    let x = sbatch_as(c, "alice", "-J x -n1 -x n1")?;
    c.wait_state(&x, "RUNNING", WAIT)?;
    let mut rec = String::new();
    for (what, id) in [("-w n2", &w), ("-x n1", &x)] {
        rec += &format!("{what}: NodeList={}\n", c.job_field(id, "NodeList")?);
    }
    c.record("--nodelist / --exclude placement", &rec);
    refused(
        c,
        Some("alice"),
        "sbatch -C nosuch -o /dev/null --wrap true",
        "sbatch --constraint of a feature no node has",
    )?;
    must_contain(
        "placement",
        &rec,
        &["-w n2: NodeList=n2", "-x n1: NodeList=n2"],
    )?;
    c.ok(&format!("scancel {w} {x}"))?;

    // n1 full; a job for n1 waits; a later job goes to n2.
    let full = sbatch_as(c, "alice", "-J full -n16 -w n1")?;
    c.wait_state(&full, "RUNNING", WAIT)?;
    let wants = sbatch_as(c, "alice", "-J wants_n1 -n1 -w n1")?;
    wait_reason(c, &wants, "Resources")?;
    let later = sbatch_as(c, "bob", "-J later -n1")?;
    c.wait_state(&later, "RUNNING", WAIT)?;
    let q = c.ok("squeue -h -o '%j %T %r %N' | sort")?;
    c.record("squeue (a job waiting for n1, a later one)", &q.stdout);
    Ok(())
}

/// PrivateData=jobs,nodes,partitions: another user's jobs and steps are
/// not listed (a named one is "Invalid job id"), node and partition
/// listings are refused to users, and root sees everything.
fn private_data(c: &mut Ctx) -> Result<(), String> {
    with_partitions(
        c,
        "PrivateData=jobs,nodes,partitions\nPartitionName=priv Nodes=n1 State=UP",
        &["priv"],
        |c| {
            let r = private_data_steps(c);
            let undo = clean_up(c);
            r?;
            undo
        },
    )
}

fn private_data_steps(c: &mut Ctx) -> Result<(), String> {
    let a = sbatch_as(c, "alice", "-p priv -J secret -n1")?;
    c.wait_state(&a, "RUNNING", WAIT)?;
    let o = c.ok("scontrol show config | grep -i '^PrivateData'")?;
    c.record("scontrol show config: PrivateData", &o.stdout);
    // JOB stands for the job's id (which differs between clusters).
    let cmds = [
        ("alice", "squeue -h -o '%u %j %T'"),
        ("bob", "squeue -h -o '%u %j %T'"),
        ("bob", "squeue -h -j JOB -o '%u %j %T'"),
        ("bob", "squeue -h -u alice -o '%u %j %T'"),
        ("bob", "squeue -h -s -o '%i %u'"),
        ("bob", "scontrol show job JOB | head -1"),
        ("alice", "scontrol show job JOB | grep -o 'JobName=[a-z]*'"),
        ("bob", "sinfo -h -o '%P %t'"),
        ("bob", "scontrol show node n1 | head -1"),
        ("bob", "scontrol show partition priv | head -1"),
    ];
    for (user, cmd) in cmds {
        let o = c.run_as(Some(user), &cmd.replace("JOB", &a));
        c.record(&format!("{user}: {cmd} (rc {})", o.rc), &o.both());
    }
    let root = c.ok("squeue -h -o '%u %j %T'; sinfo -h -p priv -o '%P %t'")?;
    c.record("root: squeue, sinfo", &root.stdout);
    must_contain("root: squeue", &root.stdout, &["alice secret RUNNING"])?;
    Ok(())
}

/// Hidden and AllowGroups partitions in listings: a user sees neither them
/// nor their jobs without `-a`; root sees all.
fn visibility(c: &mut Ctx) -> Result<(), String> {
    with_partitions(
        c,
        "PartitionName=vis_hidden Nodes=n1 Hidden=YES State=UP\n\
         PartitionName=vis_grp Nodes=n1 AllowGroups=root State=UP",
        &["vis_hidden", "vis_grp"],
        |c| {
            let r = visibility_steps(c);
            let undo = clean_up(c);
            r?;
            undo
        },
    )
}

fn visibility_steps(c: &mut Ctx) -> Result<(), String> {
    // Held, so that nothing runs: the listing is all that differs.
    let a = sbatch_as(c, "alice", "-p vis_hidden -H -J hid")?;
    let cmds = [
        ("alice", "sinfo -h -o '%P %a'"),
        ("alice", "sinfo -a -h -o '%P %a'"),
        ("alice", "squeue -h -o '%u %j %P'"),
        ("alice", "squeue -a -h -o '%u %j %P'"),
        ("alice", "squeue -h -j JOB -o '%u %j %P'"),
        ("alice", "scontrol show job JOB | grep -o 'JobName=[a-z]*'"),
        (
            "alice",
            "scontrol show partition | grep -o 'PartitionName=[a-z_]*'",
        ),
        (
            "alice",
            "scontrol -a show partition | grep -o 'PartitionName=[a-z_]*'",
        ),
        ("alice", "scontrol show partition vis_grp | head -1"),
        ("root", "sinfo -h -o '%P %a'"),
        ("root", "squeue -h -o '%u %j %P'"),
    ];
    for (user, cmd) in cmds {
        let who = (user != "root").then_some(user);
        let o = c.run_as(who, &cmd.replace("JOB", &a));
        c.record(&format!("{user}: {cmd} (rc {})", o.rc), &o.both());
    }
    Ok(())
}

/// AllocNodes: a job from a host outside the list is refused; from the
/// login host named there it is taken.
fn alloc_nodes(c: &mut Ctx) -> Result<(), String> {
    let host = c.ok("hostname -s")?.stdout.trim().to_string();
    let lines = format!(
        "PartitionName=an_no Nodes=n1 AllocNodes=nosuchhost State=UP\n\
         PartitionName=an_yes Nodes=n1 AllocNodes={host} State=UP"
    );
    with_partitions(c, &lines, &["an_no", "an_yes"], |c| {
        let r = alloc_nodes_steps(c);
        let undo = clean_up(c);
        r?;
        undo
    })
}

fn alloc_nodes_steps(c: &mut Ctx) -> Result<(), String> {
    let o = c.run_as(Some("alice"), "sbatch -p an_no -H -o /dev/null --wrap true");
    c.record(&format!("sbatch -p an_no (rc {})", o.rc), &o.both());
    if o.rc == 0 {
        return Err(format!(
            "a job from outside AllocNodes was taken: {}",
            o.both()
        ));
    }
    let id = sbatch_as(c, "alice", "-p an_yes -H")?;
    let o = c.ok(&format!("squeue -h -j {id} -o '%P %T'"))?;
    c.record("sbatch -p an_yes: queued", &o.stdout);
    Ok(())
}

pub fn all() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "parts_oversubscribe",
            about: "OverSubscribe=FORCE:2 and YES:2 (with --oversubscribe) share cores, two jobs a core",
            compare: true,
            run: oversubscribe,
        },
        Scenario {
            name: "parts_exclusive_user",
            about: "--exclusive=user keeps other users off the job's nodes; --exclusive=mcs without MCS",
            compare: true,
            run: exclusive_user,
        },
        Scenario {
            name: "parts_accounts",
            about: "AllowAccounts/DenyAccounts without accounting: shown; 22.05 holds AllowAccounts jobs, DenyAccounts blocks none",
            compare: true,
            run: accounts,
        },
        Scenario {
            name: "parts_accounts_enforced",
            about: "the account lists with EnforcePartLimits=ALL: 22.05 refuses at submit, later releases take the job",
            compare: true,
            run: accounts_enforced,
        },
        Scenario {
            name: "parts_delete",
            about: "scontrol delete partition: root only, refused while in use, the default one too",
            compare: true,
            run: delete,
        },
        Scenario {
            name: "parts_nodelist",
            about: "--nodelist/--exclude choose nodes; a job waiting for named nodes holds back only those",
            compare: true,
            run: nodelist,
        },
        Scenario {
            name: "parts_private_data",
            about: "PrivateData=jobs,nodes,partitions: others' jobs and steps hidden, node and partition listings refused to users, root sees all",
            compare: true,
            run: private_data,
        },
        Scenario {
            name: "parts_visibility",
            about: "Hidden and AllowGroups partitions: left out of users' sinfo/squeue/scontrol listings (and their jobs) without -a; root sees all",
            compare: true,
            run: visibility,
        },
        Scenario {
            name: "parts_alloc_nodes",
            about: "AllocNodes: a job from a host outside the list is refused, from a listed login host taken",
            compare: true,
            run: alloc_nodes,
        },
    ]
}
