mod common;

use common::{fixture, scratch_dir, write};
use slurm_conf::{CgroupConf, ConfError, GresConf, TopologyConf};

#[test]
fn gres_files_ranges_and_counts() {
    let g = GresConf::parse_str(
        "AutoDetect=off\n\
Name=gpu Type=a100 File=/dev/nvidia[0-3] Cores=0-15\n\
NodeName=gpu[01-04,07] Name=gpu Type=h100 File=/dev/nvidia[0-1],/dev/nvidia3 Flags=nvidia_gpu_env,explicit Links=-1,2,0\n\
NodeName=gpu07 Name=mps Count=200 File=/dev/nvidia[0-1]\n\
Name=bandwidth Count=4G\n\
NodeName=fat[1-2] Name=nic MultipleFiles=/dev/mlx5_[0-3]\n\
NodeName=auto[1-9] AutoDetect=nvml\n",
        "gres.conf",
    )
    .unwrap();
    assert_eq!(g.autodetect.as_deref(), Some("off"));
    let r0 = g.records.first().unwrap();
    assert_eq!(r0.count, 4);
    assert_eq!(
        r0.files,
        [
            "/dev/nvidia0",
            "/dev/nvidia1",
            "/dev/nvidia2",
            "/dev/nvidia3"
        ]
    );
    assert_eq!(r0.cores.as_deref(), Some("0-15"));
    let r1 = g.records.get(1).unwrap();
    assert_eq!(r1.count, 3);
    assert!(r1.has_flag("EXPLICIT"));
    assert!(r1.applies_to("gpu07") && !r1.applies_to("gpu05"));
    assert_eq!(g.records.get(2).unwrap().count, 200);
    assert_eq!(g.records.get(3).unwrap().count, 4 << 30);
    let nic = g.records.get(4).unwrap();
    assert!(nic.multiple_files);
    assert_eq!((nic.count, nic.files.len()), (1, 4));
    assert_eq!(g.for_node("gpu07").count(), 4);
    assert_eq!(g.for_node("gpu05").count(), 2);
    assert_eq!(g.autodetect_for("auto3"), Some("nvml"));
    assert_eq!(g.autodetect_for("gpu01"), Some("off"));
}

#[test]
fn gres_errors() {
    let err =
        GresConf::parse_str("Name=gpu File=/dev/nvidia[0-3] Count=2\n", "gres.conf").unwrap_err();
    assert!(err.to_string().starts_with("gres.conf:1:"), "{err}");
    let err = GresConf::parse_str("\nName=gpu Count=lots\n", "gres.conf").unwrap_err();
    assert_eq!(
        err.to_string(),
        "gres.conf:2: Count: invalid count value \"lots\""
    );
    assert!(GresConf::parse_str("Name=gpu File=/dev/a MultipleFiles=/dev/b[0-1]\n", "g").is_err());
    assert!(GresConf::parse_str("Name=nic MultipleFiles=/dev/only\n", "g").is_err());
    assert!(GresConf::parse_str("Name=gpu Bogus=1\n", "g").is_err());
    assert!(GresConf::parse_str("Name=gpu File=/dev/nvidia[0-\n", "g").is_err());
}

#[test]
fn cgroup_fixtures() {
    for v in ["22.05", "24.11", "26.05"] {
        let p = fixture(&format!("{v}/cgroup.conf"));
        let c = CgroupConf::from_file(&p).unwrap_or_else(|e| panic!("{v}: {e}"));
        let want = if v == "22.05" {
            "cgroup/v1"
        } else {
            "disabled"
        };
        assert_eq!(c.cgroup_plugin, want);
        assert_eq!(c.cgroup_mountpoint, "/sys/fs/cgroup");
    }
    let p = fixture("stock22-conf/cgroup.conf");
    let c = CgroupConf::from_file(&p).unwrap();
    assert_eq!(c.cgroup_plugin, "autodetect");
    assert!(!c.constrain_cores && !c.constrain_ram_space && !c.constrain_devices);
}

#[test]
fn cgroup_keys_and_defaults() {
    let c = CgroupConf::parse_str(
        "CgroupPlugin=cgroup/v2\nCgroupMountpoint=/cg/\nConstrainCores=yes\nConstrainRAMSpace=YES\n\
AllowedRAMSpace=95.5\nMaxRAMPercent=90\nConstrainSwapSpace=true\nAllowedSwapSpace=10\n\
ConstrainDevices=1\nMemorySwappiness=150\nIgnoreSystemd=yes\nSystemdTimeout=2000\n\
EnableControllers=yes\nSignalChildrenProcesses=no\nMinRAMSpace=64\nCgroupAutomount=yes\n\
ConstrainKmemSpace=no\nCgroupSlice=x\n",
        "cgroup.conf",
    )
    .unwrap();
    assert_eq!(c.cgroup_plugin, "cgroup/v2");
    assert_eq!(c.cgroup_mountpoint, "/cg");
    assert!(
        c.constrain_cores && c.constrain_ram_space && c.constrain_swap_space && c.constrain_devices
    );
    assert_eq!(c.allowed_ram_space, 95.5);
    assert_eq!(c.max_ram_percent, 90.0);
    assert_eq!(c.allowed_swap_space, 10.0);
    assert_eq!(c.memory_swappiness, Some(100));
    assert!(c.ignore_systemd && c.ignore_systemd_on_failure);
    assert_eq!(c.systemd_timeout, 2000);
    assert_eq!(c.min_ram_space, 64);
    assert!(c.warnings.iter().any(|w| w.contains("CgroupAutomount")));
    let d = CgroupConf::parse_str("", "cgroup.conf").unwrap();
    assert_eq!(d.cgroup_plugin, "autodetect");
    assert_eq!(d.allowed_ram_space, 100.0);
    assert_eq!(d.systemd_timeout, 1000);
    let err = CgroupConf::parse_str("ConstrainCores=sometimes\n", "cgroup.conf").unwrap_err();
    assert_eq!(
        err.to_string(),
        "cgroup.conf:1: ConstrainCores: invalid boolean value \"sometimes\""
    );
    assert!(matches!(
        CgroupConf::parse_str("Bogus=1\n", "cgroup.conf"),
        Err(ConfError::UnknownKey { .. })
    ));
}

#[test]
fn topology_tree() {
    let t = TopologyConf::parse_str(
        "# fat tree\n\
SwitchName=s0 Nodes=cn[001-032]\n\
SwitchName=s1 Nodes=cn[033-064] LinkSpeed=100\n\
SwitchName=s2 Nodes=gpu[01-04,07]\n\
SwitchName=spine1 Switches=s[0-1]\n\
SwitchName=core Switches=spine1,s2\n",
        "topology.conf",
    )
    .unwrap();
    assert_eq!(t.leaf_switch("cn010"), Some("s0"));
    assert_eq!(t.leaf_switch("cn040"), Some("s1"));
    assert_eq!(t.leaf_switch("gpu07"), Some("s2"));
    assert_eq!(t.leaf_switch("gpu05"), None);
    assert_eq!(t.switch("s1").unwrap().link_speed, 100);
    assert_eq!(t.switch("spine1").unwrap().level, 1);
    assert_eq!(t.switch("core").unwrap().level, 2);
    let roots: Vec<_> = t.roots().map(|s| s.name.as_str()).collect();
    assert_eq!(roots, ["core"]);
    let path: Vec<_> = t
        .path_to_root("cn001")
        .into_iter()
        .map(|i| t.switches.get(i).unwrap().name.clone())
        .collect();
    assert_eq!(path, ["s0", "spine1", "core"]);
    assert_eq!(t.node_leaves().count(), 69);
}

#[test]
fn topology_errors() {
    let missing = TopologyConf::parse_str(
        "SwitchName=a Nodes=n1\nSwitchName=b Switches=a,c\n",
        "topology.conf",
    );
    let err = missing.unwrap_err();
    assert_eq!(
        err.to_string(),
        "topology.conf:2: switch b has invalid child (c)"
    );
    let cycle = TopologyConf::parse_str(
        "SwitchName=leaf Nodes=n1\nSwitchName=x Switches=y\nSwitchName=y Switches=x\n",
        "topology.conf",
    );
    assert!(cycle.unwrap_err().to_string().contains("cycle"));
    assert!(TopologyConf::parse_str("SwitchName=x Switches=x\n", "t").is_err());
    assert!(TopologyConf::parse_str("SwitchName=x\n", "t").is_err());
    assert!(TopologyConf::parse_str("SwitchName=x Nodes=a Switches=b\n", "t").is_err());
    assert!(TopologyConf::parse_str("SwitchName=x Nodes=a\nSwitchName=x Nodes=b\n", "t").is_err());
    let multi =
        TopologyConf::parse_str("SwitchName=a Nodes=n[1-2]\nSwitchName=b Nodes=n2\n", "t").unwrap();
    assert_eq!(multi.leaf_switch("n2"), Some("a"));
    assert_eq!(multi.warnings.len(), 1);
}

#[test]
fn topology_blocks_and_include() {
    let dir = scratch_dir("topo");
    write(
        &dir,
        "blocks.conf",
        "BlockName=b1 Nodes=n[1-4]\nBlockSizes=4,16\n",
    );
    let p = write(
        &dir,
        "topology.conf",
        "Include blocks.conf\nBlockName=b2 Nodes=n[5-8]\n",
    );
    let t = TopologyConf::from_file(&p).unwrap();
    assert_eq!(t.blocks.len(), 2);
    assert_eq!(t.block_sizes.as_deref(), Some("4,16"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Stock 26.05 reads a slurmdbd.conf of mode 600 or 640 and nothing else
/// (22.05 and 24.11: 600 only); an included file must be 600.
#[test]
fn slurmdbd_conf_mode_is_checked_before_reading() {
    use slurm_conf::SlurmdbdConf;
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch_dir("dbd-mode");
    let text = "DbdHost=db\nStorageType=accounting_storage/mysql\nInclude extra.conf\n";
    let path = write(&dir, "slurmdbd.conf", text);
    let extra = write(&dir, "extra.conf", "StorageLoc=acct\n");
    let chmod = |p: &std::path::Path, m: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
    };
    chmod(&extra, 0o600);
    for mode in [0o600, 0o640] {
        chmod(&path, mode);
        let f = SlurmdbdConf::from_file(&path).unwrap();
        assert_eq!(f.conf.storage_loc, "acct");
        assert_eq!(f.conf.dbd_host, "db");
    }
    for mode in [0o644, 0o604, 0o660, 0o400, 0o700, 0o1600] {
        chmod(&path, mode);
        match SlurmdbdConf::from_file(&path) {
            Err(ConfError::Mode { mode: m, .. }) if mode & 0o777 != 0o600 => {
                assert_eq!(m, mode & 0o777)
            }
            // The sticky bit is not a permission bit.
            Ok(_) if mode == 0o1600 => {}
            other => panic!("mode {mode:o}: {other:?}"),
        }
    }
    chmod(&path, 0o600);
    chmod(&extra, 0o640);
    let e = SlurmdbdConf::from_file(&path).unwrap_err();
    assert!(
        matches!(&e, ConfError::Include { message, .. } if message.contains("640")),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
