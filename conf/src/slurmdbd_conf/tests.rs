use super::*;

fn parse(text: &str) -> Result<SlurmdbdConf, ConfError> {
    SlurmdbdConf::parse_str(text, "slurmdbd.conf")
}

const MYSQL: &str = "StorageType=accounting_storage/mysql\n";

#[test]
fn defaults_are_stocks() {
    let c = parse(MYSQL).unwrap();
    assert_eq!(c.dbd_host, "localhost");
    assert_eq!(c.dbd_addr, "localhost");
    assert_eq!(c.dbd_backup_host, None);
    assert_eq!(c.dbd_port, 6819);
    assert_eq!(c.slurm_user, "root");
    assert_eq!(c.storage_host, "localhost");
    assert_eq!(c.storage_port, 3306);
    assert_eq!(c.storage_loc, "slurm_acct_db");
    assert_eq!(c.storage_user, None);
    assert_eq!(c.debug_level, LogLevel::Info);
    assert_eq!(c.pid_file, "/var/run/slurmdbd.pid");
    assert_eq!(c.auth_type, "auth/munge");
    assert_eq!(c.message_timeout, 10);
    assert_eq!(c.archive_dir, "/tmp");
    assert_eq!(c.max_purge_limit, 50_000);
    assert!(!c.purge.any());
    // Stock complains about the missing DbdHost, and so do we.
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    assert!(c.warnings[0].contains("DbdHost"));
    // Another storage type has other defaults.
    let other = parse("StorageType=accounting_storage/none\nDbdHost=db\n").unwrap();
    assert_eq!(other.storage_port, 0);
    assert_eq!(other.storage_loc, "/var/log/slurm_jobacct.log");
    assert!(other.warnings.is_empty());
}

#[test]
fn a_site_file() {
    let c = parse(
        "# comment\n\
         AuthType=auth/munge\nAuthInfo=socket=/run/munge/m.sock\n\
         DbdHost=db1\nDbdAddr=10.0.0.5\nDbdBackupHost=db2\nDbdPort=7031\n\
         SlurmUser=slurm\nDebugLevel=debug2\nLogFile=/var/log/slurmdbd.log\n\
         PidFile=/run/slurmdbd.pid\nMessageTimeout=30\n\
         StorageType=accounting_storage/mysql\nStorageHost=mdb\nStoragePort=3307\n\
         StorageUser=slurm\nStoragePass=\"s3cr et\"\nStorageLoc=acct\n\
         PurgeJobAfter=12months\nPurgeStepAfter=30days\nPurgeEventAfter=48h\n\
         ArchiveJobs=yes\nArchiveSteps=no\n",
    )
    .unwrap();
    assert_eq!(
        (c.dbd_host.as_str(), c.dbd_addr.as_str(), c.dbd_port),
        ("db1", "10.0.0.5", 7031)
    );
    assert_eq!(c.dbd_backup_host.as_deref(), Some("db2"));
    assert_eq!(c.slurm_user, "slurm");
    assert_eq!(c.debug_level, LogLevel::Debug2);
    assert_eq!(c.log_file.as_deref(), Some("/var/log/slurmdbd.log"));
    assert_eq!(c.pid_file, "/run/slurmdbd.pid");
    assert_eq!(c.message_timeout, 30);
    assert_eq!(c.auth_info.as_deref(), Some("socket=/run/munge/m.sock"));
    assert_eq!((c.storage_host.as_str(), c.storage_port), ("mdb", 3307));
    assert_eq!(c.storage_user.as_deref(), Some("slurm"));
    assert_eq!(c.storage_pass.as_deref(), Some("s3cr et"));
    assert_eq!(c.storage_loc, "acct");
    let months = |n, archive| Purge {
        count: n,
        unit: PurgeUnit::Months,
        archive,
    };
    assert_eq!(c.purge.job, Some(months(12, true)));
    assert_eq!(
        c.purge.step,
        Some(Purge {
            count: 30,
            unit: PurgeUnit::Days,
            archive: false
        })
    );
    assert_eq!(c.purge.event.map(|p| p.unit), Some(PurgeUnit::Hours));
    assert_eq!(c.purge.usage, None);
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}

#[test]
fn purge_periods() {
    let p = |s| Purge::parse(s).map(|p| (p.count, p.unit));
    assert_eq!(p("12"), Some((12, PurgeUnit::Months)));
    assert_eq!(p("12M"), Some((12, PurgeUnit::Months)));
    assert_eq!(p("3mon"), Some((3, PurgeUnit::Months)));
    assert_eq!(p("7d"), Some((7, PurgeUnit::Days)));
    assert_eq!(p("7DAYS"), Some((7, PurgeUnit::Days)));
    assert_eq!(p("24hours"), Some((24, PurgeUnit::Hours)));
    assert_eq!(p("0"), Some((0, PurgeUnit::Months)));
    for bad in ["", "days", "12x", "12monthsx", "12 days", "-1", "70000"] {
        assert_eq!(p(bad), None, "{bad:?}");
    }
    let e = parse(&format!("{MYSQL}PurgeJobAfter=12weeks\n")).unwrap_err();
    assert!(
        matches!(&e, ConfError::InvalidValue { key, at, .. } if key == "PurgeJobAfter" && at.line == 2),
        "{e}"
    );
}

#[test]
fn older_purge_keys_override_as_in_stock() {
    // Purge*Months after Purge*After; StepPurge last; 0 keeps for ever.
    let c = parse(&format!(
        "{MYSQL}PurgeJobMonths=6\nPurgeJobAfter=2days\nJobPurge=9\n\
         PurgeStepAfter=1h\nStepPurge=0\nPurgeUsageMonths=0\nPurgeTXNMonths=3\n"
    ))
    .unwrap();
    assert_eq!(
        c.purge.job.map(|p| (p.count, p.unit)),
        Some((6, PurgeUnit::Months))
    );
    assert_eq!(c.purge.step, None);
    assert_eq!(c.purge.usage, None);
    assert_eq!(c.purge.txn.map(|p| p.count), Some(3));
    // Archive* only marks a record type that is purged.
    let c = parse(&format!(
        "{MYSQL}ArchiveEvents=yes\nArchiveJobs=yes\nJobPurge=1\n"
    ))
    .unwrap();
    assert_eq!(c.purge.event, None);
    assert!(c.purge.job.is_some_and(|p| p.archive));
}

#[test]
fn unknown_keys_refuse_the_file() {
    let e = parse(&format!("{MYSQL}DbdHost=db\nNoSuchKey=1\n")).unwrap_err();
    assert!(
        matches!(&e, ConfError::UnknownKey { key, at } if key == "NoSuchKey" && at.line == 3),
        "{e}"
    );
    // slurm.conf's keys are no slurmdbd.conf keys.
    assert!(matches!(
        parse(&format!("{MYSQL}ClusterName=c\n")),
        Err(ConfError::UnknownKey { .. })
    ));
}

#[test]
fn known_keys_without_effect_warn() {
    let c = parse(&format!(
        "{MYSQL}DbdHost=db\nTrackWCKey=yes\nPrivateData=jobs\ncommitdelay=1\n"
    ))
    .unwrap();
    assert_eq!(c.warnings.len(), 3, "{:?}", c.warnings);
    for (w, k) in c
        .warnings
        .iter()
        .zip(["TrackWCKey", "PrivateData", "CommitDelay"])
    {
        assert!(w.contains(k), "{w}");
    }
    // Names match in any case; the raw table keeps the canonical one.
    assert_eq!(c.raw("COMMITDELAY"), Some("1"));
}

#[test]
fn values_are_checked() {
    for (text, key) in [
        ("DbdPort=70000\n", "DbdPort"),
        ("MessageTimeout=soon\n", "MessageTimeout"),
        ("ArchiveJobs=maybe\n", "ArchiveJobs"),
        ("DebugLevel=loud\n", "DebugLevel"),
    ] {
        let e = parse(&format!("{MYSQL}{text}")).unwrap_err();
        assert!(
            matches!(&e, ConfError::InvalidValue { key: k, .. } if k == key),
            "{text}: {e}"
        );
    }
    assert!(matches!(
        parse("DbdHost=db\n"),
        Err(ConfError::Invalid { .. })
    ));
    assert!(matches!(
        parse("StorageType=accounting_storage/slurmdbd\n"),
        Err(ConfError::Invalid { .. })
    ));
    // One value per line, as stock's parser.
    assert!(matches!(
        parse(&format!("{MYSQL}DbdHost=a DbdPort=1\n")),
        Err(ConfError::Syntax { .. })
    ));
}

#[test]
fn includes_are_followed() {
    let loader = |p: &Path| -> std::io::Result<Vec<u8>> {
        match p.file_name().and_then(|n| n.to_str()) {
            Some("storage.conf") => {
                Ok(b"StorageType=accounting_storage/mysql\nStorageLoc=x\n".to_vec())
            }
            _ => Err(std::io::ErrorKind::NotFound.into()),
        }
    };
    let c = SlurmdbdConf::parse_with_loader(
        b"DbdHost=db\nInclude storage.conf\n",
        Path::new("slurmdbd.conf"),
        &loader,
    )
    .unwrap();
    assert_eq!(c.storage_loc, "x");
    let e = SlurmdbdConf::parse_with_loader(
        b"Include missing.conf\n",
        Path::new("slurmdbd.conf"),
        &loader,
    )
    .unwrap_err();
    assert!(matches!(e, ConfError::Include { .. }), "{e}");
}
