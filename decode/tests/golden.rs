//! Golden bytes: every Slurm message captured between upstream clients and
//! daemons (fixtures/ at the repository root) must decode and re-encode byte-identically.
//!
//! `GOLDEN_ONLY=RESPONSE_JOB_INFO,REQUEST_PING` restricts the check to some
//! message types while a family is being written.

use slurm_decode::{decode_streams_in, read_streams};
use slurm_wire::ProtocolVersion;
use std::path::PathBuf;

fn fixtures() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
    assert!(
        p.join("24.11").is_dir(),
        "golden fixtures not found at {} (fixtures/ belongs to the checkout)",
        p.display()
    );
    p
}

fn pcaps(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixtures().join(dir))
        .expect("fixture dir readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pcap"))
        .collect();
    v.sort();
    v
}

fn check_dir(dir: &str) {
    let only: Option<Vec<String>> = std::env::var("GOLDEN_ONLY")
        .ok()
        .map(|s| s.split(',').map(str::to_owned).collect());
    let mut failures = Vec::new();
    let (mut checked, mut awaiting) = (0, 0);
    for pcap in pcaps(dir) {
        let bytes = std::fs::read(&pcap).expect("read pcap");
        let streams = read_streams(&bytes).expect("valid pcap");
        let (msgs, _raw) = decode_streams_in(&streams, ProtocolVersion::from_release(dir));
        for m in &msgs {
            if let Some(only) = &only {
                if !only.contains(&m.name) {
                    continue;
                }
            }
            if m.awaits_codec() {
                awaiting += 1;
                continue;
            }
            checked += 1;
            if let Err(e) = &m.outcome {
                failures.push(format!(
                    "{}: stream {} {} {}: {}",
                    pcap.file_name().unwrap().to_string_lossy(),
                    m.stream,
                    m.dir,
                    m.name,
                    e
                ));
            }
        }
    }
    if awaiting > 0 {
        eprintln!("{dir}: {awaiting} DBD messages of types without a codec yet, not checked");
    }
    assert!(checked > 0, "no messages checked in {dir}");
    assert!(
        failures.is_empty(),
        "{} of {checked} messages in {dir} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn golden_22_05() {
    check_dir("22.05");
}

#[test]
fn golden_24_11() {
    check_dir("24.11");
}

#[test]
fn golden_26_05() {
    check_dir("26.05");
}
