//! `slurmdbd.conf`, read as stock's `read_slurmdbd_conf` reads it: the keys
//! of 22.05, 24.11 and 26.05 (an unknown key refuses the file), stock's
//! defaults, and the file's mode checked before anything is read.

use std::path::Path;

use crate::error::{ConfError, Location};
use crate::flat::{self, Flat};
use crate::keywords;
use crate::keywords::Keyword;
use crate::lexer::{self, Loader, Walker};
use crate::units::LogLevel;

/// `SLURMDBD_PORT`.
pub const DEFAULT_DBD_PORT: u16 = 6819;
/// `DEFAULT_MSG_TIMEOUT`, seconds.
pub const DEFAULT_MESSAGE_TIMEOUT: u16 = 10;
pub const DEFAULT_PID_FILE: &str = "/var/run/slurmdbd.pid";
pub const DEFAULT_AUTH_TYPE: &str = "auth/munge";
pub const DEFAULT_ARCHIVE_DIR: &str = "/tmp";
pub const DEFAULT_STORAGE_HOST: &str = "localhost";
/// `DEFAULT_ACCOUNTING_DB`, for `accounting_storage/mysql`.
pub const DEFAULT_MYSQL_DB: &str = "slurm_acct_db";
pub const DEFAULT_MYSQL_PORT: u16 = 3306;
/// `DEFAULT_STORAGE_LOC`, for any other StorageType.
pub const DEFAULT_STORAGE_LOC: &str = "/var/log/slurm_jobacct.log";
/// `DEFAULT_SLURMDBD_MAX_PURGE_LIMIT`.
pub const DEFAULT_MAX_PURGE_LIMIT: u32 = 50_000;

/// Modes stock 26.05 accepts for slurmdbd.conf (22.05 and 24.11: 600 only).
pub const ALLOWED_MODES: [u32; 2] = [0o600, 0o640];
/// Included files must be 600 in every release.
pub const INCLUDE_MODE: u32 = 0o600;

/// The unit of a purge period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PurgeUnit {
    Hours,
    Days,
    Months,
}

/// One `Purge*After` (or older `Purge*Months`) setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Purge {
    /// Records older than this many units are purged; stock keeps it in
    /// the low 16 bits of its flag word.
    pub count: u16,
    pub unit: PurgeUnit,
    /// The matching `Archive*` is on: archive before purging.
    pub archive: bool,
}

impl Purge {
    /// `12`, `12months`, `30d`, `24HOURS`: digits, then any prefix of
    /// hours/days/months in any case (none: months).
    pub fn parse(s: &str) -> Option<Purge> {
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        let (num, unit) = s.split_at(digits);
        let count: u16 = num.parse().ok()?;
        let is = |word: &str| {
            unit.len() <= word.len()
                && word
                    .get(..unit.len())
                    .is_some_and(|p| p.eq_ignore_ascii_case(unit))
        };
        // An empty unit matches "months" first, as in stock.
        let unit = if is("months") {
            PurgeUnit::Months
        } else if is("hours") {
            PurgeUnit::Hours
        } else if is("days") {
            PurgeUnit::Days
        } else {
            return None;
        };
        Some(Purge {
            count,
            unit,
            archive: false,
        })
    }
}

/// What is purged (and archived) when; `None`: kept for ever.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PurgeConf {
    pub event: Option<Purge>,
    pub job: Option<Purge>,
    pub job_env: Option<Purge>,
    pub job_script: Option<Purge>,
    pub resv: Option<Purge>,
    pub step: Option<Purge>,
    pub suspend: Option<Purge>,
    pub txn: Option<Purge>,
    pub usage: Option<Purge>,
}

impl PurgeConf {
    /// Whether anything is to be purged at all.
    pub fn any(&self) -> bool {
        [
            self.event,
            self.job,
            self.job_env,
            self.job_script,
            self.resv,
            self.step,
            self.suspend,
            self.txn,
            self.usage,
        ]
        .iter()
        .any(Option::is_some)
    }
}

/// A parsed `slurmdbd.conf`, with stock's defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct SlurmdbdConf {
    /// Where the primary runs (default `localhost`, with a warning).
    pub dbd_host: String,
    /// How others reach DbdHost (default: DbdHost).
    pub dbd_addr: String,
    pub dbd_backup_host: Option<String>,
    pub dbd_port: u16,
    /// Default `root`.
    pub slurm_user: String,
    pub storage_type: String,
    pub storage_host: String,
    pub storage_backup_host: Option<String>,
    pub storage_port: u16,
    /// `None`: stock uses the login name of whoever starts the daemon.
    pub storage_user: Option<String>,
    pub storage_pass: Option<String>,
    pub storage_loc: String,
    pub storage_parameters: Option<String>,
    pub purge: PurgeConf,
    pub archive_dir: String,
    pub archive_script: Option<String>,
    pub max_purge_limit: u32,
    pub log_file: Option<String>,
    pub debug_level: LogLevel,
    pub pid_file: String,
    pub auth_type: String,
    pub auth_info: Option<String>,
    /// Seconds.
    pub message_timeout: u16,
    /// Every option as written, by canonical name (last value).
    pub raw: Vec<(&'static str, String, Location)>,
    pub warnings: Vec<String>,
}

/// Keys the daemon reads; the other known keys are accepted with a
/// warning that they have no effect yet.
const USED: &[&str] = &[
    "ArchiveDir",
    "ArchiveEvents",
    "ArchiveJobEnv",
    "ArchiveJobs",
    "ArchiveJobScript",
    "ArchiveResvs",
    "ArchiveScript",
    "ArchiveSteps",
    "ArchiveSuspend",
    "ArchiveTXN",
    "ArchiveUsage",
    "AuthInfo",
    "AuthType",
    "DbdAddr",
    "DbdBackupHost",
    "DbdHost",
    "DbdPort",
    "DebugLevel",
    "JobPurge",
    "LogFile",
    "MaxPurgeLimit",
    "MessageTimeout",
    "PidFile",
    "PurgeEventAfter",
    "PurgeEventMonths",
    "PurgeJobAfter",
    "PurgeJobEnvAfter",
    "PurgeJobMonths",
    "PurgeJobScriptAfter",
    "PurgeResvAfter",
    "PurgeStepAfter",
    "PurgeStepMonths",
    "PurgeSuspendAfter",
    "PurgeSuspendMonths",
    "PurgeTXNAfter",
    "PurgeTXNMonths",
    "PurgeUsageAfter",
    "PurgeUsageMonths",
    "SlurmUser",
    "StepPurge",
    "StorageBackupHost",
    "StorageHost",
    "StorageLoc",
    "StorageParameters",
    "StoragePass",
    "StoragePort",
    "StorageType",
    "StorageUser",
];

/// A file as read from disk: its contents' settings, and who owns it
/// (stock requires SlurmUser or root; the daemon, which resolves
/// SlurmUser, checks it).
#[derive(Debug, Clone, PartialEq)]
pub struct SlurmdbdFile {
    pub conf: SlurmdbdConf,
    pub owner_uid: u32,
}

impl SlurmdbdConf {
    /// Reads `path` as stock does: its mode must be 600 or 640 and that of
    /// every included file 600, before a byte is parsed.
    pub fn from_file(path: impl AsRef<Path>) -> Result<SlurmdbdFile, ConfError> {
        let path = path.as_ref();
        let owner_uid = check_mode(path, &ALLOWED_MODES, "600 or 640")?;
        let bytes = lexer::read_file(path).map_err(|e| io_error(path, &e))?;
        let loader = |p: &Path| {
            check_mode(p, &[INCLUDE_MODE], "600")
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            lexer::read_file(p)
        };
        let conf = Self::parse_with_loader(&bytes, path, &loader)?;
        Ok(SlurmdbdFile { conf, owner_uid })
    }

    pub fn parse_str(text: &str, origin: impl AsRef<Path>) -> Result<SlurmdbdConf, ConfError> {
        Self::parse_with_loader(text.as_bytes(), origin.as_ref(), &lexer::read_file)
    }

    pub fn parse_with_loader(
        bytes: &[u8],
        origin: &Path,
        loader: Loader<'_>,
    ) -> Result<SlurmdbdConf, ConfError> {
        let mut sink = Flat::new(keywords::SLURMDBD, note);
        Walker::new(loader).walk(bytes, origin, &mut sink)?;
        finish(sink, &Location::new(origin.display().to_string(), 0))
    }

    /// The last value written for an option (any case).
    pub fn raw(&self, key: &str) -> Option<&str> {
        flat::last(&self.raw, key)
    }
}

fn io_error(path: &Path, e: &std::io::Error) -> ConfError {
    ConfError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// The file's owner, once its permission bits are one of `allowed`.
fn check_mode(path: &Path, allowed: &[u32], expected: &'static str) -> Result<u32, ConfError> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).map_err(|e| io_error(path, &e))?;
    let mode = meta.mode() & 0o777;
    if !allowed.contains(&mode) {
        return Err(ConfError::Mode {
            path: path.display().to_string(),
            mode,
            expected,
        });
    }
    Ok(meta.uid())
}

/// Keys stock reads that slurmdbd-rs does not act on yet.
fn note(kw: &'static Keyword, at: &Location, warnings: &mut Vec<String>) {
    if !USED.contains(&kw.name) {
        warnings.push(format!(
            "{at}: {} is accepted but has no effect in slurmdbd-rs",
            kw.name
        ));
    }
}

/// `Purge*After`: a period, or an error naming the line.
fn after(f: &Flat, key: &str, slot: &mut Option<Purge>) -> Result<(), ConfError> {
    if let Some((v, at)) = f.entry(key) {
        let p = Purge::parse(v).ok_or_else(|| ConfError::value(at, key, "purge period", v))?;
        *slot = Some(p);
    }
    Ok(())
}

/// `Purge*Months`, `JobPurge`, `StepPurge`: months; 0 keeps for ever.
fn months(f: &Flat, key: &str, slot: &mut Option<Purge>) -> Result<(), ConfError> {
    let Some((v, at)) = f.entry(key) else {
        return Ok(());
    };
    let n = f.u32(key).unwrap_or(0);
    let count = u16::try_from(n).map_err(|_| ConfError::value(at, key, "purge period", v))?;
    *slot = (count > 0).then_some(Purge {
        count,
        unit: PurgeUnit::Months,
        archive: false,
    });
    Ok(())
}

fn purge(f: &Flat) -> Result<PurgeConf, ConfError> {
    let mut p = PurgeConf::default();
    // Stock's order: later keys override earlier ones for one record type.
    months(f, "JobPurge", &mut p.job)?;
    after(f, "PurgeEventAfter", &mut p.event)?;
    after(f, "PurgeJobAfter", &mut p.job)?;
    after(f, "PurgeResvAfter", &mut p.resv)?;
    after(f, "PurgeStepAfter", &mut p.step)?;
    after(f, "PurgeSuspendAfter", &mut p.suspend)?;
    after(f, "PurgeTXNAfter", &mut p.txn)?;
    after(f, "PurgeUsageAfter", &mut p.usage)?;
    after(f, "PurgeJobScriptAfter", &mut p.job_script)?;
    after(f, "PurgeJobEnvAfter", &mut p.job_env)?;
    months(f, "PurgeEventMonths", &mut p.event)?;
    months(f, "PurgeJobMonths", &mut p.job)?;
    months(f, "PurgeStepMonths", &mut p.step)?;
    months(f, "PurgeSuspendMonths", &mut p.suspend)?;
    months(f, "PurgeTXNMonths", &mut p.txn)?;
    months(f, "PurgeUsageMonths", &mut p.usage)?;
    months(f, "StepPurge", &mut p.step)?;
    let archive = |slot: &mut Option<Purge>, key: &str| {
        if let Some(x) = slot.as_mut() {
            x.archive = f.bool_or(key, false);
        }
    };
    archive(&mut p.event, "ArchiveEvents");
    archive(&mut p.job, "ArchiveJobs");
    archive(&mut p.job_script, "ArchiveJobScript");
    archive(&mut p.job_env, "ArchiveJobEnv");
    archive(&mut p.resv, "ArchiveResvs");
    archive(&mut p.step, "ArchiveSteps");
    archive(&mut p.suspend, "ArchiveSuspend");
    archive(&mut p.txn, "ArchiveTXN");
    archive(&mut p.usage, "ArchiveUsage");
    Ok(p)
}

fn finish(mut f: Flat, file: &Location) -> Result<SlurmdbdConf, ConfError> {
    let debug_level = match f.entry("DebugLevel") {
        Some((v, at)) => {
            LogLevel::parse(v).ok_or_else(|| ConfError::value(at, "DebugLevel", "level", v))?
        }
        None => LogLevel::Info,
    };
    let Some(storage_type) = f.string("StorageType") else {
        return Err(ConfError::invalid(file, "StorageType must be set"));
    };
    if storage_type == "accounting_storage/slurmdbd" {
        let at = f.entry("StorageType").map_or(file, |(_, at)| at);
        return Err(ConfError::invalid(
            at,
            "StorageType=accounting_storage/slurmdbd names the daemon itself",
        ));
    }
    let purge = purge(&f)?;
    let mysql = storage_type == "accounting_storage/mysql";
    let dbd_host = match f.string("DbdHost") {
        Some(h) => h,
        None => {
            f.warnings
                .push(format!("{file}: no DbdHost, using localhost"));
            "localhost".into()
        }
    };
    let message_timeout = f.u16("MessageTimeout").unwrap_or(DEFAULT_MESSAGE_TIMEOUT);
    if message_timeout > 100 {
        f.warnings.push(format!(
            "{file}: MessageTimeout={message_timeout} is too long for timely failure detection"
        ));
    }
    Ok(SlurmdbdConf {
        dbd_addr: f.string("DbdAddr").unwrap_or_else(|| dbd_host.clone()),
        dbd_host,
        dbd_backup_host: f.string("DbdBackupHost"),
        dbd_port: f
            .u16("DbdPort")
            .filter(|&p| p != 0)
            .unwrap_or(DEFAULT_DBD_PORT),
        slurm_user: f.string("SlurmUser").unwrap_or_else(|| "root".into()),
        storage_host: f
            .string("StorageHost")
            .unwrap_or_else(|| DEFAULT_STORAGE_HOST.into()),
        storage_backup_host: f.string("StorageBackupHost"),
        storage_port: f
            .u16("StoragePort")
            .filter(|&p| p != 0)
            .unwrap_or(if mysql { DEFAULT_MYSQL_PORT } else { 0 }),
        storage_user: f.string("StorageUser"),
        storage_pass: f.string("StoragePass"),
        storage_loc: f.string("StorageLoc").unwrap_or_else(|| {
            if mysql {
                DEFAULT_MYSQL_DB
            } else {
                DEFAULT_STORAGE_LOC
            }
            .into()
        }),
        storage_parameters: f.string("StorageParameters"),
        storage_type,
        purge,
        archive_dir: f
            .string("ArchiveDir")
            .unwrap_or_else(|| DEFAULT_ARCHIVE_DIR.into()),
        archive_script: f.string("ArchiveScript"),
        max_purge_limit: f.u32("MaxPurgeLimit").unwrap_or(DEFAULT_MAX_PURGE_LIMIT),
        log_file: f.string("LogFile"),
        debug_level,
        pid_file: f
            .string("PidFile")
            .unwrap_or_else(|| DEFAULT_PID_FILE.into()),
        auth_type: f
            .string("AuthType")
            .unwrap_or_else(|| DEFAULT_AUTH_TYPE.into()),
        auth_info: f.string("AuthInfo"),
        message_timeout,
        raw: f.raw,
        warnings: f.warnings,
    })
}

#[cfg(test)]
mod tests;
