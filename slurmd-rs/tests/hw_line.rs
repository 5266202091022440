//! `slurmd-rs -C` against stock `slurmd -C` on this host, field by field:
//! the host's slurmd (scripts/setup installs Debian's), and, when run as root,
//! the slurmd of each release's rootfs (chrooted, with /proc and /sys bound).

use std::path::Path;
use std::process::Command;

const FIX: &str = "run `scripts/setup` (as root) to install Debian's slurmd and the rootfs";

fn run(cmd: &mut Command) -> Result<String, String> {
    let o = cmd
        .output()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "{cmd:?} exited {:?}:\n{}{}",
            o.status.code(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

/// `Key=value` pairs, in order.
fn fields(s: &str) -> Vec<(String, String)> {
    s.split_whitespace()
        .filter_map(|w| w.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// "D-HH:MM:SS" -> seconds
fn uptime_secs(v: &str) -> Option<u64> {
    let (d, hms) = v.split_once('-')?;
    let mut t = d.parse::<u64>().ok()? * 86400;
    let p: Vec<&str> = hms.split(':').collect();
    if p.len() != 3 {
        return None;
    }
    for (x, mul) in p.iter().zip([3600, 60, 1]) {
        t += x.parse::<u64>().ok()? * mul;
    }
    Some(t)
}

/// Every field equal and in the same order; UpTime within a few seconds
/// (the two commands run one after the other).
fn compare(what: &str, stock: &str, ours: &str) -> Result<(), String> {
    let (a, b) = (fields(stock), fields(ours));
    let keys = |v: &[(String, String)]| v.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
    if keys(&a) != keys(&b) {
        return Err(format!(
            "{what}: fields differ\n--- stock:\n{stock}--- slurmd-rs:\n{ours}"
        ));
    }
    for ((k, x), (_, y)) in a.iter().zip(&b) {
        let same = if k == "UpTime" {
            match (uptime_secs(x), uptime_secs(y)) {
                (Some(p), Some(q)) => p.abs_diff(q) <= 5,
                _ => false,
            }
        } else {
            x == y
        };
        if !same {
            return Err(format!(
                "{what}: {k}={x} (stock) but {k}={y} (slurmd-rs)\n--- stock:\n{stock}--- slurmd-rs:\n{ours}"
            ));
        }
    }
    if !a.iter().any(|(k, _)| k == "RealMemory") || !a.iter().any(|(k, _)| k == "CPUs") {
        return Err(format!(
            "{what}: stock printed no CPUs/RealMemory:\n{stock}"
        ));
    }
    Ok(())
}

fn ours() -> String {
    run(Command::new(env!("CARGO_BIN_EXE_slurmd-rs")).arg("-C")).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn dash_c_matches_host_slurmd() {
    let stock = Path::new("/usr/sbin/slurmd");
    assert!(
        stock.exists(),
        "stock slurmd missing at {}: {FIX}",
        stock.display()
    );
    let s = run(Command::new(stock).arg("-C")).unwrap_or_else(|e| panic!("{e}"));
    let o = ours();
    compare("host slurmd -C", &s, &o).unwrap_or_else(|e| panic!("{e}"));
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(1).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

/// The slurmd of 22.05 (bookworm), 24.11 (trixie) and 26.05 (forky).
#[test]
fn dash_c_matches_each_release() {
    if !is_root() {
        // chroot needs root; the host comparison above still runs
        eprintln!("not root: the per-release comparison needs chroot (run as root)");
        return;
    }
    let cache = std::env::var("SLURM_RS_CACHE").unwrap_or_else(|_| "/var/cache/slurm-rs".into());
    for suite in ["bookworm", "trixie", "forky"] {
        let r = Path::new(&cache).join("rootfs").join(suite);
        assert!(
            r.join("usr/sbin/slurmd").exists(),
            "no slurmd in {}: {FIX}",
            r.display()
        );
        let r = r.display().to_string();
        // a private mount namespace: the binds vanish with it
        let s = run(Command::new("unshare").args([
            "-m",
            "--propagation",
            "private",
            "sh",
            "-c",
            &format!(
                "mount --bind /proc {r}/proc && mount --rbind /sys {r}/sys && \
                 exec chroot {r} /usr/sbin/slurmd -C"
            ),
        ]))
        .unwrap_or_else(|e| panic!("{e}"));
        let o = ours();
        compare(&format!("{suite} slurmd -C"), &s, &o).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn compare_catches_a_difference() {
    let a = "NodeName=vm CPUs=2 Boards=1 RealMemory=100\nUpTime=0-00:00:10\n";
    assert!(compare("same", a, a).is_ok());
    let b = "NodeName=vm CPUs=4 Boards=1 RealMemory=100\nUpTime=0-00:00:10\n";
    assert!(compare("cpus", a, b).is_err());
    let c = "NodeName=vm CPUs=2 Boards=1 RealMemory=100\nUpTime=0-00:01:10\n";
    assert!(compare("uptime", a, c).is_err());
    let d = "NodeName=vm CPUs=2 RealMemory=100\nUpTime=0-00:00:10\n";
    assert!(compare("missing field", a, d).is_err());
}
