mod common;

use common::{fixture, scratch_dir, write};
use slurm_conf::{
    ConfError, LogLevel, MemLimit, OverSubscribe, PartitionState, PortRange, SlurmConf, TimeLimit,
};

fn parse(text: &str) -> Result<SlurmConf, ConfError> {
    SlurmConf::parse_str(text, "slurm.conf")
}

const HEAD: &str = "ClusterName=test\nSlurmctldHost=ctl(10.0.0.1)\n";

#[test]
fn node_defaults_apply_to_later_lines() {
    let c = parse(&format!(
        "{HEAD}\
NodeName=DEFAULT CPUs=8 RealMemory=4000 State=UNKNOWN\n\
NodeName=n[1-2]\n\
NodeName=DEFAULT RealMemory=8000\n\
NodeName=big CPUs=16 Gres=gpu:4 Feature=a,b\n\
nodename=other realmemory=10\n"
    ))
    .unwrap();
    let n12 = c.node("n2").unwrap();
    assert_eq!((n12.cpus, n12.real_memory), (8, 4000));
    assert_eq!(n12.state.as_deref(), Some("UNKNOWN"));
    let big = c.node("big").unwrap();
    assert_eq!((big.cpus, big.real_memory), (16, 8000));
    assert_eq!(big.gres.as_deref(), Some("gpu:4"));
    assert_eq!(big.feature_list(), ["a", "b"]);
    let other = c.node("other").unwrap();
    assert_eq!((other.cpus, other.real_memory), (8, 10));
    assert_eq!(c.nodes.len(), 3);
}

#[test]
fn node_topology_inference() {
    let c = parse(&format!(
        "{HEAD}NodeName=a CPUs=16 CoresPerSocket=4 ThreadsPerCore=2\n\
NodeName=b Sockets=2 CoresPerSocket=8\n\
NodeName=c Boards=2 SocketsPerBoard=2 CoresPerSocket=2\n\
NodeName=d CPUs=7 CoresPerSocket=2\n"
    ))
    .unwrap();
    let a = c.node("a").unwrap();
    assert_eq!((a.sockets, a.cpus), (2, 16));
    let b = c.node("b").unwrap();
    assert_eq!(b.cpus, 16);
    let cc = c.node("c").unwrap();
    assert_eq!((cc.sockets, cc.cpus), (4, 8));
    // CPUs=7 cannot be 2-core sockets: stock resets CPUs and warns.
    let d = c.node("d").unwrap();
    assert_eq!(d.cpus, 2);
    assert!(c.warnings.iter().any(|w| w.contains("NodeNames=d")));
}

#[test]
fn node_expand_pairs_addresses_and_ports() {
    let c = parse(&format!(
        "{HEAD}NodeName=n[1-4] NodeHostname=localhost NodeAddr=127.0.0.1 Port=[16821-16824] CPUs=8\n\
NodeName=m[1-2] NodeAddr=10.0.0.[5-6]\n"
    ))
    .unwrap();
    let e = c.nodes.first().unwrap().expand().unwrap();
    assert_eq!(e.len(), 4);
    assert_eq!(e.get(2).unwrap().name, "n3");
    assert_eq!(e.get(2).unwrap().addr, "127.0.0.1");
    assert_eq!(e.get(2).unwrap().port, Some(16823));
    let m = c.nodes.get(1).unwrap().expand().unwrap();
    assert_eq!(m.get(1).unwrap().addr, "10.0.0.6");
    assert_eq!(m.get(1).unwrap().hostname, "m2");
    let bad = parse(&format!("{HEAD}NodeName=x[1-3] NodeAddr=a,b\n")).unwrap();
    assert!(bad.nodes.first().unwrap().expand().is_err());
}

#[test]
fn partitions() {
    let c = parse(&format!(
        "{HEAD}NodeName=n[1-4]\n\
PartitionName=DEFAULT MaxTime=1-00:00:00 State=UP PriorityTier=5\n\
PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=30 OverSubscribe=FORCE:2\n\
PartitionName=long Nodes=n[1-4] MaxTime=INFINITE AllowAccounts=ALL AllowQos=Normal,High \
DefMemPerCPU=100 MaxMemPerNode=2000 State=DRAIN OverSubscribe=EXCLUSIVE\n\
PartitionName=x OverSubscribe=YES:8 DefaultTime=5:00 Hidden=yes Priority=7\n"
    ))
    .unwrap();
    let d = c.partition("debug").unwrap();
    assert!(d.default);
    assert_eq!(d.max_time, TimeLimit::Finite(30));
    assert_eq!(d.over_subscribe, OverSubscribe::Force(2));
    assert_eq!(d.over_subscribe.max_share(), 0x8002);
    assert_eq!(d.priority_tier, 5);
    let l = c.partition("long").unwrap();
    assert_eq!(l.max_time, TimeLimit::Unlimited);
    assert_eq!(l.allow_accounts, None);
    assert_eq!(l.allow_qos.as_deref(), Some("normal,high"));
    assert_eq!(l.def_mem, Some(MemLimit::PerCpu(100)));
    assert_eq!(l.max_mem, Some(MemLimit::PerNode(2000)));
    assert_eq!(l.state, PartitionState::Drain);
    assert_eq!(l.over_subscribe, OverSubscribe::Exclusive);
    let x = c.partition("x").unwrap();
    assert_eq!(x.max_time, TimeLimit::Finite(1440));
    assert_eq!(x.default_time, Some(TimeLimit::Finite(5)));
    assert_eq!(x.over_subscribe, OverSubscribe::Yes(8));
    assert!(x.hidden);
    assert_eq!((x.priority_tier, x.priority_job_factor), (7, 7));
    assert_eq!(c.default_partition().unwrap().name, "debug");
}

#[test]
fn bad_value_names_file_and_line() {
    let text = format!("{HEAD}# comment\n\nPartitionName=p MaxTime=7-xx\n");
    let err = parse(&text).unwrap_err();
    assert_eq!(
        err.to_string(),
        "slurm.conf:5: MaxTime: invalid time value \"7-xx\""
    );
    assert_eq!(err.location().unwrap().line, 5);

    let err = parse(&format!("{HEAD}SlurmdTimeout=abc\n")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "slurm.conf:3: SlurmdTimeout: invalid number value \"abc\""
    );
    let err = parse(&format!("{HEAD}PartitionName=p Default=maybe\n")).unwrap_err();
    assert!(
        matches!(
            err,
            ConfError::InvalidValue {
                kind: "boolean",
                ..
            }
        ),
        "{err}"
    );
    let err = parse(&format!("{HEAD}NodeName=n[1-\n")).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("slurm.conf:3: NodeName: invalid hostlist"),
        "{err}"
    );
}

#[test]
fn unknown_keywords_and_syntax_are_errors() {
    let err = parse(&format!("{HEAD}NoSuchOption=1\n")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "slurm.conf:3: unknown keyword \"NoSuchOption\""
    );
    let err = parse(&format!("{HEAD}NodeName=n1 Bogus=2\n")).unwrap_err();
    assert!(matches!(err, ConfError::UnknownKey { .. }));
    let err = parse(&format!("{HEAD}ClusterName=a SlurmUser=b\n")).unwrap_err();
    assert!(matches!(err, ConfError::Syntax { .. }), "{err}");
    let err = parse(&format!("{HEAD}just words\n")).unwrap_err();
    assert!(matches!(err, ConfError::Syntax { .. }));
}

#[test]
fn lexing_rules() {
    let c = parse(
        "ClusterName=lex   # trailing comment\n\
SlurmctldHost=a\n\
SchedulerParameters=bf_continue,\\\nbf_interval=60\n\
NodeName=n1 Reason=\"under repair # not a comment\" \\\n  CPUs=4\n\
MailProg=/usr/bin/\\#mail\n",
    )
    .unwrap();
    assert_eq!(c.cluster_name.as_deref(), Some("lex"));
    assert!(c.scheduler_parameters.has("bf_continue"));
    assert_eq!(c.scheduler_parameters.get("BF_INTERVAL"), Some("60"));
    let n = c.node("n1").unwrap();
    assert_eq!(n.reason.as_deref(), Some("under repair # not a comment"));
    assert_eq!(n.cpus, 4);
    assert_eq!(c.raw("mailprog"), Some("/usr/bin/#mail"));
}

#[test]
fn include_resolves_relative_to_including_file() {
    let dir = scratch_dir("include");
    write(
        &dir,
        "sub/nodes.conf",
        "NodeName=n[01-08] CPUs=4\nInclude parts.conf\n",
    );
    write(
        &dir,
        "sub/parts.conf",
        "PartitionName=all Nodes=n[01-08] Default=YES\n",
    );
    write(&dir, "cluster-mycl.conf", "SlurmdTimeout=77\n");
    let main = write(
        &dir,
        "slurm.conf",
        "ClusterName=MyCl\nSlurmctldHost=c1\ninclude sub/nodes.conf\nInclude cluster-%c.conf\n",
    );
    let c = SlurmConf::from_file(&main).unwrap();
    assert_eq!(c.nodes.first().unwrap().names.len(), 8);
    assert_eq!(
        c.partition("all").unwrap().nodes.as_deref(),
        Some("n[01-08]")
    );
    assert_eq!(c.slurmd_timeout, 77);

    // A bad value inside an included file names that file.
    write(&dir, "bad.conf", "\nKillWait=forever\n");
    let main2 = write(&dir, "s2.conf", "SlurmctldHost=c1\nInclude bad.conf\n");
    let err = SlurmConf::from_file(&main2).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("bad.conf:2: KillWait"), "{msg}");

    // Cycles are refused rather than recursing forever.
    write(&dir, "loop_a.conf", "Include loop_b.conf\n");
    write(&dir, "loop_b.conf", "Include loop_a.conf\n");
    let main3 = write(&dir, "s3.conf", "SlurmctldHost=c1\nInclude loop_a.conf\n");
    let err = SlurmConf::from_file(&main3).unwrap_err();
    assert!(matches!(err, ConfError::IncludeLoop { .. }), "{err}");

    let main4 = write(&dir, "s4.conf", "SlurmctldHost=c1\nInclude missing.conf\n");
    let err = SlurmConf::from_file(&main4).unwrap_err();
    assert!(
        err.to_string()
            .starts_with(&format!("{}:2: Include", main4.display())),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn controllers_and_ports() {
    let c = parse(
        "SlurmctldHost=a(10.0.0.1)\nSlurmctldHost=b\nSlurmctldPort=6817-6820\nSlurmdPort=7000\n",
    )
    .unwrap();
    assert_eq!(c.slurmctld_hosts.len(), 2);
    assert_eq!(c.slurmctld_hosts.first().unwrap().addr, "10.0.0.1");
    assert_eq!(c.slurmctld_hosts.get(1).unwrap().addr, "b");
    assert_eq!(
        c.slurmctld_port,
        PortRange {
            first: 6817,
            count: 4
        }
    );
    assert_eq!(
        c.slurmctld_port.ports().collect::<Vec<_>>(),
        [6817, 6818, 6819, 6820]
    );
    assert_eq!(c.slurmd_port, 7000);

    let legacy =
        parse("ControlMachine=m1\nControlAddr=192.168.0.1\nBackupController=m2\n").unwrap();
    assert_eq!(legacy.slurmctld_hosts.len(), 2);
    assert_eq!(legacy.slurmctld_hosts.first().unwrap().hostname, "m1");
    assert_eq!(legacy.slurmctld_hosts.first().unwrap().addr, "192.168.0.1");
    assert_eq!(legacy.slurmctld_hosts.get(1).unwrap().addr, "m2");
    assert!(parse("ClusterName=x\n").is_err());
    assert!(parse("SlurmctldHost=a(b\n").is_err());
    assert!(parse("SlurmctldHost=a\nSlurmctldPort=6820-6817\n").is_err());
    assert!(parse("SlurmctldHost=a\nSlurmctldHost=a\n").is_err());
}

#[test]
fn defaults_and_typed_options() {
    let c = parse(
        "SlurmctldHost=c\nSlurmctldDebug=debug3\nTaskPlugin=task/none\nPrologFlags=Alloc,Contain\n\
Prolog=/a\nProlog=/b\nDefMemPerCPU=100\nMaxMemPerNode=1K\nGresTypes=gpu,mps\n\
PriorityWeightAge=1000\nAccountingStorageType=accounting_storage/slurmdbd\nAccountingStoragePort=6819\n",
    )
    .unwrap();
    assert_eq!(c.slurmctld_debug, LogLevel::Debug3);
    assert_eq!(c.slurmd_debug, LogLevel::Info);
    assert_eq!(c.task_plugin, None);
    assert!(c.prolog_flags.has("contain"));
    assert_eq!(c.prolog, ["/a", "/b"]);
    assert_eq!(c.def_mem, Some(MemLimit::PerCpu(100)));
    assert_eq!(c.max_mem, Some(MemLimit::PerNode(1024)));
    assert_eq!(c.gres_types, ["gpu", "mps"]);
    assert_eq!(c.priority_weights.age, 1000);
    assert_eq!(c.accounting_storage_port, Some(6819));
    assert_eq!(c.slurmd_timeout, 300);
    assert_eq!(c.tree_width, 16);
    assert_eq!(c.tmp_fs, "/tmp");
    assert_eq!(
        c.slurmctld_port,
        PortRange {
            first: 6817,
            count: 1
        }
    );
    assert_eq!(c.max_array_size, 1001);
}

#[test]
fn unimplemented_keywords_reported_once() {
    let c = parse("SlurmctldHost=c\nMailProg=/bin/true\nWaitTime=0\nCoreSpecPlugin=x\n").unwrap();
    let w: Vec<_> = c
        .warnings
        .iter()
        .filter(|w| w.contains("not implemented"))
        .collect();
    assert_eq!(w.len(), 1, "{:?}", c.warnings);
    let w = w.first().unwrap();
    assert!(
        w.contains("MailProg") && w.contains("WaitTime") && !w.contains("CoreSpecPlugin"),
        "{w}"
    );
    assert!(c
        .warnings
        .iter()
        .any(|w| w.contains("CoreSpecPlugin is defunct")));
    assert_eq!(c.raw("WAITTIME"), Some("0"));
}

#[test]
fn keywords_of_all_versions_are_accepted() {
    for line in [
        "SchedulerAuth=x",      // 22.05 only
        "SlurmctldPlugstack=x", // 22.05 only
        "FrontendName=fe1 FrontendAddr=10.0.0.9 Port=6818",
        "TLSType=tls/none",         // 24.11+
        "MetricsType=metrics/none", // 26.05
        "PowerAction=off Program=/bin/true Location=slurmctld",
        "NodeName=n9 Topology=t1 Parameters=foo",
        "PartitionName=q Topology=t1 Exclusive=NO",
    ] {
        let text = format!("SlurmctldHost=c\n{line}\n");
        if let Err(e) = parse(&text) {
            panic!("{line}: {e}");
        }
    }
}

fn fixture_conf(v: &str) -> SlurmConf {
    let p = fixture(&format!("{v}/slurm.conf"));
    SlurmConf::from_file(&p).unwrap_or_else(|e| panic!("{v}: {e}"))
}

#[test]
fn real_fixture_configs_parse_and_hash_like_stock() {
    // hash_val as sent by stock slurmd in MESSAGE_NODE_REGISTRATION_STATUS,
    // read from node-registration.hex beside each slurm.conf.
    for (v, cluster, hash) in [
        ("22.05", "mv22", 0x3a4b_c32b_u32),
        ("24.11", "mv24", 0x9acb_73ab),
        ("26.05", "mv26", 0xfab4_ec34),
    ] {
        let c = fixture_conf(v);
        assert_eq!(c.cluster_name.as_deref(), Some(cluster));
        assert_eq!(c.hash_val, hash, "{v}: hash_val {:#x}", c.hash_val);
        let host = c.slurmctld_hosts.first().unwrap();
        assert_eq!(host.hostname, format!("ctl{}", &cluster[2..]));
        assert_eq!(c.select_type_parameters.as_str(), "CR_Core");
        assert_eq!(c.return_to_service, 2);
        assert_eq!(c.slurmd_debug, LogLevel::Debug);
        assert_eq!(c.nodes.len(), 1);
        let n = c.nodes.first().unwrap();
        assert_eq!(n.cpus, 2);
        let p = c.partition("debug").unwrap();
        assert!(p.default);
        assert_eq!(p.max_time, TimeLimit::Unlimited);
        assert_eq!(p.state, PartitionState::Up);
    }
}

#[test]
fn stock22_reference_config() {
    let p = fixture("stock22-conf/slurm.conf");
    let c = SlurmConf::from_file(&p).unwrap();
    assert_eq!(c.cluster_name.as_deref(), Some("anchor"));
    assert_eq!(
        c.slurmctld_port,
        PortRange {
            first: 16817,
            count: 1
        }
    );
    assert_eq!(c.slurmd_port, 16821);
    assert!(c.communication_parameters.has("NoInAddrAny"));
    assert!(c.slurmd_parameters.has("config_overrides"));
    assert_eq!(c.def_mem, Some(MemLimit::PerCpu(100)));
    assert_eq!(c.max_job_count, 60000);
    assert_eq!(c.max_array_size, 20001);
    assert_eq!(c.partitions.len(), 2);
    let entries = c.nodes.first().unwrap().expand().unwrap();
    let ports: Vec<_> = entries.iter().map(|e| e.port.unwrap()).collect();
    assert_eq!(ports, [16821, 16822, 16823, 16824]);
    assert!(entries
        .iter()
        .all(|e| e.hostname == "localhost" && e.addr == "127.0.0.1"));
    assert!(c
        .warnings
        .iter()
        .any(|w| w.contains("not implemented") && w.contains("MailProg")));
    assert_eq!(
        c.raw("AccountingStoragePass"),
        Some("/tmp/anchor22/munge/munge.socket.2")
    );
}

#[test]
fn locate_config_order() {
    use slurm_conf::{extra_conf_path, locate_config_with};
    use std::path::Path;
    assert_eq!(
        locate_config_with(Some(Path::new("/x.conf")), Some("/y".into())),
        Path::new("/x.conf")
    );
    assert_eq!(locate_config_with(None, Some("/y".into())), Path::new("/y"));
    assert_eq!(
        locate_config_with(None, None),
        Path::new("/etc/slurm/slurm.conf")
    );
    assert_eq!(
        extra_conf_path(Path::new("/etc/slurm/slurm.conf"), "gres.conf"),
        Path::new("/etc/slurm/gres.conf")
    );
}

#[test]
fn memory_and_continuation_follow_stock() {
    // RealMemory is a plain MB count: stock accepts only a K (x1024) suffix.
    let c = parse(&format!(
        "{HEAD}NodeName=a RealMemory=4K\nNodeName=b RealMemory=0x10\n"
    ))
    .unwrap();
    assert_eq!(c.node("a").unwrap().real_memory, 4096);
    assert_eq!(c.node("b").unwrap().real_memory, 16);
    let err = parse(&format!("{HEAD}NodeName=a RealMemory=64G\n")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "slurm.conf:3: RealMemory: invalid number value \"64G\""
    );
    // A continued line is joined as is, so leading blanks split the value.
    assert!(parse(&format!("{HEAD}SchedulerParameters=a,\\\n  b\n")).is_err());
    let c = parse(&format!("{HEAD}SchedulerParameters=a,\\\nb\n")).unwrap();
    assert_eq!(c.scheduler_parameters.as_str(), "a,b");
}
