//! The writes StateSaveLocation sees, behind a seam: the daemon uses real
//! files; the fault tests put a wrapper there that fails a chosen write or
//! sync (ENOSPC part way through a record, EIO from fsync) without a real
//! full or failing disk. Reads at start-up use plain `std::fs`.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

/// A file being written: the log, or a snapshot's temporary file.
pub trait WriteFile: Send {
    /// Writes some of `buf` at the end (as `write(2)` may: short or not at
    /// all), returning how much.
    fn append(&mut self, buf: &[u8]) -> io::Result<usize>;
    /// `fdatasync`.
    fn sync(&mut self) -> io::Result<()>;
    /// `ftruncate`.
    fn truncate(&mut self, len: u64) -> io::Result<()>;
}

/// The directory's operations.
pub trait StateDir: Send {
    /// Opens `path` for appending, creating it (the log at start-up).
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn WriteFile>>;
    /// Creates `path` empty (a temporary file, renamed into place).
    fn create(&self, path: &Path) -> io::Result<Box<dyn WriteFile>>;
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Makes a rename in `dir` durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
}

/// Writes `buf` whole: `Ok` only when every byte was taken.
pub fn append_all(f: &mut dyn WriteFile, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        match f.append(buf) {
            Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
            Ok(n) => buf = buf.get(n..).unwrap_or_default(),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The real directory.
pub struct RealDir;

struct RealFile(File);

impl WriteFile for RealFile {
    fn append(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }
    fn sync(&mut self) -> io::Result<()> {
        self.0.sync_data()
    }
    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }
}

impl StateDir for RealDir {
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn WriteFile>> {
        let f = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Box::new(RealFile(f)))
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn WriteFile>> {
        // Append mode: after a truncate, the next write lands at the new end.
        let f = OpenOptions::new().create(true).append(true).open(path)?;
        f.set_len(0)?;
        Ok(Box::new(RealFile(f)))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }
}
