//! Operations: sdiag, partitions, controller lifecycle, crash recovery.

use super::*;

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

pub fn all() -> Vec<Scenario> {
    vec![Scenario {
        name: "sdiag",
        about: "sdiag counts RPCs by type and user; sdiag -r resets (root only)",
        compare: true,
        run: sdiag,
    }]
}
