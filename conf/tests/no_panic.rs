//! Random input must produce `Ok` or `Err`, never a panic.

use std::path::Path;

use proptest::prelude::*;
use slurm_conf::{CgroupConf, GresConf, Hostlist, SlurmConf, SlurmdbdConf, TopologyConf};

fn no_files(_: &Path) -> std::io::Result<Vec<u8>> {
    Err(std::io::Error::other("no includes in this test"))
}

/// Text built from config-ish fragments so the parsers get past the lexer.
fn configish() -> impl Strategy<Value = String> {
    let atoms = prop::sample::select(vec![
        "NodeName=",
        "PartitionName=",
        "DEFAULT",
        "SlurmctldHost=",
        "Include ",
        "Name=",
        "File=",
        "Count=",
        "SwitchName=",
        "Switches=",
        "Nodes=",
        "MaxTime=",
        "StorageType=accounting_storage/mysql",
        "PurgeJobAfter=",
        "PurgeStepMonths=",
        "12days",
        "CPUs=",
        "Sockets=",
        "OverSubscribe=",
        "FORCE:",
        "n[1-3]",
        "[",
        "]",
        "-",
        ",",
        ":",
        "\"",
        "#",
        "\\",
        "\n",
        " ",
        "=",
        "0",
        "7",
        "99999999999999999999",
        "UNLIMITED",
        "yes",
        "%c",
        "(",
        ")",
        "x",
        "\u{e9}",
        "\0",
        "\t",
    ]);
    prop::collection::vec(atoms, 0..40).prop_map(|v| v.concat())
}

fn run_all(s: &str) {
    let b = s.as_bytes();
    let _ = SlurmConf::parse_with_loader(b, Path::new("slurm.conf"), &no_files);
    let _ = GresConf::parse_with_loader(b, Path::new("gres.conf"), &no_files);
    let _ = CgroupConf::parse_with_loader(b, Path::new("cgroup.conf"), &no_files);
    let _ = TopologyConf::parse_with_loader(b, Path::new("topology.conf"), &no_files);
    let _ = SlurmdbdConf::parse_with_loader(b, Path::new("slurmdbd.conf"), &no_files);
    if let Ok(hl) = Hostlist::parse(s) {
        let _ = hl.to_string();
        let _ = hl.iter().take(100).count();
        let _ = hl.contains("n1");
        let mut h2 = hl.clone();
        h2.uniq();
        h2.sort();
    }
    let _ = slurm_conf::units::parse_minutes(s);
    let _ = slurm_conf::units::str_to_mbytes(s);
    let _ = slurm_conf::units::parse_u32(s);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_strings(s in any::<String>()) {
        run_all(&s);
    }

    #[test]
    fn config_like_strings(s in configish()) {
        run_all(&s);
        let with_head = format!("SlurmctldHost=c\n{s}");
        run_all(&with_head);
    }
}

#[test]
fn expansion_bombs_are_refused() {
    assert!(Hostlist::parse("n[0-99999999999]").is_err());
    assert!(Hostlist::parse("a[0-9999]b[0-9999]").is_err());
    let conf = "SlurmctldHost=c\nNodeName=n[0-999999999]\n";
    assert!(SlurmConf::parse_with_loader(conf.as_bytes(), Path::new("s"), &no_files).is_err());
}
