//! Durable controller state in StateSaveLocation: a snapshot of the jobs
//! and nodes plus a write-ahead log of the commands applied since. The
//! state machine is deterministic, so loading is "restore the snapshot,
//! apply the logged commands again with their recorded times".
//!
//! Files (each starts with an 8-byte magic and a `u32` format version):
//! * `rs_state.snap`: sequence number of the last command it contains,
//!   then the jobs, the nodes' administrative state, (format 2) the
//!   running steps, (format 3) job arrays and dependencies, (format 4) the
//!   jobs in special exit; format 5 saves each job's request in the
//!   controller's compact form instead of the wire encoding.
//! * `rs_state.wal`: framed, checksummed records of `seq u64 | time i64 |
//!   command` ([`wal`]; format 6 added the marker and the header checksum;
//!   format 7 logs scancel's intent and RPC outcomes, [`commands`]).
//!   A torn last record (crash or ENOSPC mid-write) is cut: its command was
//!   never acknowledged. Damage with valid records after it stops the start
//!   ([`PersistError::MidLog`]).
//!
//! A command is applied only once its record is synced ([`commit`]). A
//! snapshot is written to a temporary file, synced and renamed, then a new
//! log likewise; records whose sequence number it already covers are
//! skipped on load, so a crash between the two renames replays nothing
//! twice.
//!
//! Each older layout that differs is a type of its own, lifted to the next
//! (`migrate`): the snapshot bodies of formats 1-4 in `snapshot_old`, the
//! current one in `snapshot`, the log's two framings in [`wal`], its
//! records of formats 1-6 and 7 in [`commands`].
//! Files are always written in the current format.
//!
//! Encoding uses the wire codec's primitives (and the wire encodings of
//! job descriptions and registrations, in their own protocol version).

use crate::state::{Command, Controller, Time};
use fsio::{StateDir, WriteFile};
use shared::fnv1a;
use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Version of the files' layout; bump on any change to it.
pub const FORMAT_VERSION: u32 = 7;
const SNAP_MAGIC: &[u8; 8] = b"SRSSNAP\0";
const WAL_MAGIC: &[u8; 8] = b"SRSWAL\0\0";
pub const SNAP_FILE: &str = "rs_state.snap";
pub const WAL_FILE: &str = "rs_state.wal";
/// Log records after which the state is compacted into a new snapshot.
const SNAPSHOT_EVERY: u64 = 1000;

#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    #[error("{path}: {err}")]
    Io { path: PathBuf, err: std::io::Error },
    #[error("{path}: not a slurmctld-rs state file")]
    BadMagic { path: PathBuf },
    #[error(
        "{path}: state format version {found} is newer than this slurmctld-rs supports ({supported}); \
         use the newer slurmctld-rs, or start with -c to discard the saved state"
    )]
    Newer {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    #[error("{path}: corrupt at byte {offset}: {what}")]
    Corrupt {
        path: PathBuf,
        offset: usize,
        what: String,
    },
    #[error(
        "{path}: corrupt record at byte {offset}: {what}; records that were acknowledged \
         follow it, so it is not cut as a torn tail. To recover, either keep the records \
         before it with `truncate -s {offset} {path}` (those after it are lost), or start \
         with -i (or -c) to discard all saved state"
    )]
    MidLog {
        path: PathBuf,
        offset: usize,
        what: String,
    },
    #[error(
        "{path}: replaying the record at byte {offset} (sequence {seq}) panicked the state \
         machine: {msg}. To recover, either drop it and the records after it with \
         `truncate -s {offset} {path}`, or start with -i (or -c) to discard all saved state"
    )]
    ReplayPanic {
        path: PathBuf,
        offset: usize,
        seq: u64,
        msg: String,
    },
    #[error(
        "{path}: not written: the log is refused writes until a new snapshot replaces it ({why})"
    )]
    Suspect { path: PathBuf, why: String },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> PersistError + '_ {
    move |err| PersistError::Io {
        path: path.to_path_buf(),
        err,
    }
}

// ------------------------------------------------------------ files

/// Checks the magic and format version; returns (body offset, format).
fn read_header(path: &Path, b: &[u8], magic: &[u8; 8]) -> Result<(usize, u32), PersistError> {
    if b.len() < 12 || &b[..8] != magic {
        return Err(PersistError::BadMagic {
            path: path.to_path_buf(),
        });
    }
    let v = u32::from_be_bytes([b[8], b[9], b[10], b[11]]);
    if v > FORMAT_VERSION {
        return Err(PersistError::Newer {
            path: path.to_path_buf(),
            found: v,
            supported: FORMAT_VERSION,
        });
    }
    Ok((12, v))
}

fn header(magic: &[u8; 8]) -> Vec<u8> {
    let mut h = magic.to_vec();
    h.extend_from_slice(&FORMAT_VERSION.to_be_bytes());
    h
}

/// Restores a whole snapshot file's bytes into `fresh`; returns the
/// sequence number of the last command it holds.
pub fn load_snapshot(path: &Path, b: &[u8], fresh: &mut Controller) -> Result<u64, PersistError> {
    let (at, format) = read_header(path, b, SNAP_MAGIC)?;
    let corrupt = |offset: usize, what: String| PersistError::Corrupt {
        path: path.to_path_buf(),
        offset,
        what,
    };
    let body = &b[at..];
    if body.len() < 12 {
        return Err(corrupt(at, "truncated".into()));
    }
    let seq = u64::from_be_bytes(body[..8].try_into().unwrap_or_default());
    let sum = u32::from_be_bytes(body[body.len() - 4..].try_into().unwrap_or_default());
    let state = &body[8..body.len() - 4];
    if fnv1a(state) != sum {
        return Err(corrupt(at + 8, "checksum mismatch".into()));
    }
    restore_state(fresh, state, format).map_err(|e| corrupt(at + 8 + e.offset, e.to_string()))?;
    Ok(seq)
}

/// The whole snapshot file for `c`, which holds the commands up to `seq`.
pub fn snapshot_bytes(c: &Controller, seq: u64) -> Vec<u8> {
    let state = encode_state(c);
    let mut b = header(SNAP_MAGIC);
    b.extend_from_slice(&seq.to_be_bytes());
    b.extend_from_slice(&state);
    b.extend_from_slice(&fnv1a(&state).to_be_bytes());
    b
}

/// What replaying a log file's bytes gave.
pub struct Replayed {
    /// Records applied (those after the snapshot's).
    pub applied: usize,
    /// The highest sequence number seen (the snapshot's if higher).
    pub seq: u64,
    /// A torn last record was cut at this offset.
    pub torn_at: Option<usize>,
}

/// Replays the log's bytes into `c` (restored from a snapshot holding the
/// commands up to `seq`). Damage in the middle, a record that does not
/// decode, and a record whose replay panics are errors naming the offset.
pub fn replay_log(
    path: &Path,
    b: &[u8],
    c: &mut Controller,
    mut seq: u64,
) -> Result<Replayed, PersistError> {
    let (at, format) = read_header(path, b, WAL_MAGIC)?;
    let scan = wal::scan(b, at, format).map_err(|e| PersistError::MidLog {
        path: path.to_path_buf(),
        offset: e.offset,
        what: e.to_string(),
    })?;
    let mut applied = 0;
    for r in scan.records {
        let cmd = decode_record(format, r.command).map_err(|e| PersistError::Corrupt {
            path: path.to_path_buf(),
            offset: r.offset,
            what: format!("record {} does not decode: {e}", r.seq),
        })?;
        if r.seq > seq {
            panics::catch_panic(|| c.apply(r.time, cmd)).map_err(|msg| {
                PersistError::ReplayPanic {
                    path: path.to_path_buf(),
                    offset: r.offset,
                    seq: r.seq,
                    msg,
                }
            })?;
            applied += 1;
        }
        seq = seq.max(r.seq);
    }
    Ok(Replayed {
        applied,
        seq,
        torn_at: scan.torn.then_some(scan.good_end),
    })
}

/// A record's place in the log, to take it back (see [`Store::discard_from`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark(u64);

/// The open state directory: the log being appended to.
///
/// After a failed write the record is cut off again (`ftruncate` to the
/// end of the last whole record) and counts for nothing. After a failed
/// fsync nothing past the last good sync can be trusted (Linux may have
/// dropped the pages and marked them clean, so a second fsync could say
/// yes to data that is gone): the records since are refused, the file is
/// cut back to the last durable record, and no more is written to it: the
/// log is *suspect* until a new snapshot (of the state, which holds exactly
/// the commands that were applied) and a new log file replace it. Sequence
/// numbers are never handed out twice, so a refused record that stays in a
/// file (the cut failed too) is covered by that snapshot's number.
pub struct Store {
    dir: PathBuf,
    fs: Box<dyn StateDir>,
    /// None while suspect.
    wal: Option<Box<dyn WriteFile>>,
    /// The last sequence number handed to a record (refused ones too).
    seq: u64,
    /// End of the last whole record written.
    len: u64,
    /// End of the last record known durable.
    synced: u64,
    /// Records since the last snapshot.
    since_snapshot: u64,
    /// Why nothing is written until a snapshot succeeds.
    suspect: Option<String>,
    /// `seq` when a snapshot last failed (retried a while later).
    snapshot_failed_at: Option<u64>,
}

/// What was found on disk.
pub struct Loaded {
    pub controller: Controller,
    pub replayed: usize,
    pub jobs: usize,
}

const HEADER_LEN: u64 = 12;

impl Store {
    /// Opens `dir` (creating it), loading saved state into `fresh` (a
    /// controller built from the current configuration). `clear`
    /// discards the saved state first (`-c`).
    pub fn open(
        dir: &Path,
        fresh: Controller,
        clear: bool,
    ) -> Result<(Store, Loaded), PersistError> {
        Self::open_in(dir, fresh, clear, Box::new(fsio::RealDir))
    }

    /// [`Store::open`] writing through `fs` (fault tests).
    pub fn open_in(
        dir: &Path,
        mut fresh: Controller,
        clear: bool,
        fs: Box<dyn StateDir>,
    ) -> Result<(Store, Loaded), PersistError> {
        fs::create_dir_all(dir).map_err(io(dir))?;
        let snap = dir.join(SNAP_FILE);
        let wal = dir.join(WAL_FILE);
        if clear {
            for p in [&snap, &wal] {
                match fs::remove_file(p) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(io(p)(e)),
                }
            }
        }
        let mut seq = 0u64;
        if let Some(b) = read_opt(&snap)? {
            seq = load_snapshot(&snap, &b, &mut fresh)?;
        }
        let mut replayed = 0;
        if let Some(b) = read_opt(&wal)? {
            let r = replay_log(&wal, &b, &mut fresh, seq)?;
            if let Some(at) = r.torn_at {
                tracing::warn!(
                    "{}: cutting a torn last record at byte {at} (it was never acknowledged)",
                    wal.display()
                );
            }
            replayed = r.applied;
            seq = r.seq;
        }
        let jobs = fresh.jobs().len();
        let mut store = Store {
            dir: dir.to_path_buf(),
            fs,
            wal: None,
            seq,
            len: 0,
            synced: 0,
            since_snapshot: replayed as u64,
            suspect: None,
            snapshot_failed_at: None,
        };
        // Start from a compact state and a new log (the torn tail goes with
        // the old one). Without room for that, start anyway, refusing
        // changes until there is.
        if let Err(e) = store.snapshot(&fresh) {
            tracing::error!("{e}: state changes are refused until it can be written");
            store.suspect = Some(format!("the snapshot at start failed: {e}"));
        }
        Ok((
            store,
            Loaded {
                controller: fresh,
                replayed,
                jobs,
            },
        ))
    }

    fn wal_path(&self) -> PathBuf {
        self.dir.join(WAL_FILE)
    }

    /// Appends `cmd` (applied at `now`) to the log, not yet synced: its
    /// mark, or None for a command that is not logged. On an error nothing
    /// of the record counts.
    pub fn append(&mut self, now: Time, cmd: &Command) -> Result<Option<Mark>, PersistError> {
        let Some(body) = encode_command(cmd) else {
            return Ok(None);
        };
        let path = self.wal_path();
        let (Some(f), None) = (self.wal.as_mut(), &self.suspect) else {
            return Err(PersistError::Suspect {
                path,
                why: self.suspect.clone().unwrap_or_default(),
            });
        };
        self.seq += 1;
        let rec = wal::encode(self.seq, now, &body);
        match fsio::append_all(f.as_mut(), &rec) {
            Ok(()) => {
                let at = self.len;
                self.len += rec.len() as u64;
                self.since_snapshot += 1;
                Ok(Some(Mark(at)))
            }
            Err(err) => {
                // A short write (ENOSPC) left part of the record: cut it.
                if let Err(e) = f.truncate(self.len) {
                    self.poison(format!("a failed write could not be cut off: {e}"));
                }
                Err(PersistError::Io { path, err })
            }
        }
    }

    /// Makes every record appended so far durable. On an error those since
    /// the last good sync are refused: cut off, and the log suspect.
    pub fn commit(&mut self) -> Result<(), PersistError> {
        if self.len == self.synced {
            return Ok(());
        }
        let path = self.wal_path();
        let Some(f) = self.wal.as_mut() else {
            return Err(PersistError::Suspect {
                path,
                why: self.suspect.clone().unwrap_or_default(),
            });
        };
        match f.sync() {
            Ok(()) => {
                self.synced = self.len;
                Ok(())
            }
            Err(err) => {
                let synced = self.synced;
                match f.truncate(synced).and_then(|()| f.sync()) {
                    Ok(()) => self.len = synced,
                    Err(e) => tracing::error!(
                        "{}: cannot cut the unsynced records off ({e}); a new snapshot \
                         will cover them",
                        path.display()
                    ),
                }
                self.poison(format!("fsync failed: {err}"));
                Err(PersistError::Io { path, err })
            }
        }
    }

    /// Takes back the records from `m` on (durably): commands that were
    /// logged but will not be applied.
    pub fn discard_from(&mut self, m: Mark) -> Result<(), PersistError> {
        let path = self.wal_path();
        let Some(f) = self.wal.as_mut() else {
            return Ok(());
        };
        f.truncate(m.0).and_then(|()| f.sync()).map_err(io(&path))?;
        self.len = m.0;
        self.synced = m.0;
        Ok(())
    }

    fn poison(&mut self, why: String) {
        tracing::error!(
            "{}: {why}; state changes are refused until a new snapshot replaces the log",
            self.wal_path().display()
        );
        self.wal = None;
        self.suspect = Some(why);
    }

    /// Refuses further records until a snapshot succeeds (a state change
    /// that only a snapshot records could not be saved).
    pub fn mark_suspect(&mut self, why: String) {
        self.poison(why);
    }

    /// Whether records can be written (no snapshot is owed).
    pub fn healthy(&self) -> bool {
        self.suspect.is_none()
    }

    /// Makes every record logged so far durable (kept for callers that log
    /// one by one).
    pub fn sync(&mut self) -> Result<(), PersistError> {
        self.commit()
    }

    /// Appends and syncs one command (tests, tools).
    pub fn log(&mut self, now: Time, cmd: &Command) -> Result<bool, PersistError> {
        let m = self.append(now, cmd)?;
        self.commit()?;
        Ok(m.is_some())
    }

    pub fn snapshot_due(&self) -> bool {
        self.since_snapshot >= SNAPSHOT_EVERY
            && self
                .snapshot_failed_at
                .is_none_or(|at| self.seq >= at + SNAPSHOT_EVERY / 10)
    }

    /// Writes the whole state to a new snapshot and starts a new log file;
    /// clears a suspect log.
    pub fn snapshot(&mut self, c: &Controller) -> Result<(), PersistError> {
        let r = self.write_snapshot(c);
        self.snapshot_failed_at = r.is_err().then_some(self.seq);
        r
    }

    fn write_snapshot(&mut self, c: &Controller) -> Result<(), PersistError> {
        let snap = self.dir.join(SNAP_FILE);
        let tmp = self.dir.join(format!("{SNAP_FILE}.new"));
        let b = snapshot_bytes(c, self.seq);
        self.write_file(&tmp, &b)?;
        self.fs.rename(&tmp, &snap).map_err(io(&snap))?;
        self.fs.sync_dir(&self.dir).map_err(io(&self.dir))?;
        // Records up to self.seq are in the snapshot now: a new log, in a
        // new file (never the suspect one), renamed over the old.
        let wal = self.wal_path();
        let tmp = self.dir.join(format!("{WAL_FILE}.new"));
        let f = self.write_file(&tmp, &header(WAL_MAGIC))?;
        self.fs.rename(&tmp, &wal).map_err(io(&wal))?;
        self.fs.sync_dir(&self.dir).map_err(io(&self.dir))?;
        self.wal = Some(f);
        self.len = HEADER_LEN;
        self.synced = HEADER_LEN;
        self.since_snapshot = 0;
        if let Some(why) = self.suspect.take() {
            tracing::info!("state saved again after: {why}; state changes are accepted again");
        }
        Ok(())
    }

    /// Creates `path` holding `b`, synced; removed again on a failure.
    fn write_file(&self, path: &Path, b: &[u8]) -> Result<Box<dyn WriteFile>, PersistError> {
        let r = self.fs.create(path).and_then(|mut f| {
            fsio::append_all(f.as_mut(), b)?;
            f.sync()?;
            Ok(f)
        });
        r.map_err(|e| {
            let _ = fs::remove_file(path);
            io(path)(e)
        })
    }
}

/// A file's bytes; None when it is missing or empty (an empty log is what
/// creating it in a full directory leaves).
fn read_opt(p: &Path) -> Result<Option<Vec<u8>>, PersistError> {
    match File::open(p) {
        Ok(mut f) => {
            let mut b = Vec::new();
            f.read_to_end(&mut b).map_err(io(p))?;
            Ok((!b.is_empty()).then_some(b))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(p)(e)),
    }
}

mod commands;
pub mod commit;
pub mod fsio;
mod migrate;
mod panics;
mod records;
mod shared;
mod snapshot;
mod snapshot_old;
mod steps;
pub mod wal;

pub use commands::{decode_command, decode_record, encode_command};
pub use snapshot::{encode_state, restore_state};
#[cfg(test)]
pub(crate) use snapshot_old::encode_format;

#[cfg(test)]
mod fault_tests;
#[cfg(test)]
mod tests;
