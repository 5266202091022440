//! The directory and script root makes for a batch job in the spool
//! (stock's layout, `<spool>/job<id:05>/slurm_script`). The directory is
//! root's, group the job's, mode 0750, so the owner can read and run the
//! script but can never put a name of their own in it; and everything is
//! done through directory descriptors with no symlink followed, so a
//! planted link never leads root elsewhere.

use nix::fcntl::{openat, OFlag};
use nix::sys::stat::{fchmod, fstat, mkdirat, Mode};
use nix::unistd::{fchown, Gid, Uid};
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// Why the batch directory was not made.
#[derive(Debug, thiserror::Error)]
pub enum BatchDirError {
    /// The directory's name would lead out of the spool.
    #[error("not a plain name: {0}")]
    NotPlainName(String),
    /// Anyone could swap names in the spool between our calls.
    #[error("{} must not be writable by every user", .0.display())]
    SpoolWritable(PathBuf),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Name of the script inside the batch directory.
pub const SCRIPT: &str = "slurm_script";

fn io(e: nix::Error) -> std::io::Error {
    std::io::Error::from(e)
}

fn open_at(
    dir: Option<&OwnedFd>,
    name: &str,
    flags: OFlag,
    mode: Mode,
) -> std::io::Result<OwnedFd> {
    let fd = openat(
        dir.map(|d| d.as_raw_fd()),
        name,
        flags | OFlag::O_CLOEXEC,
        mode,
    )
    .map_err(io)?;
    // SAFETY: openat just returned this descriptor, owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Makes `<spool>/<name>` afresh for a job of group `gid` and returns its
/// descriptor. Whatever was there before (a dead job's leftovers, or a
/// directory an older build gave to the user) is removed first: its
/// contents are not ours to trust.
pub fn create(spool: &Path, name: &str, gid: u32) -> Result<OwnedFd, BatchDirError> {
    if name.contains('/') || name == "." || name == ".." {
        return Err(BatchDirError::NotPlainName(name.to_string()));
    }
    std::fs::create_dir_all(spool)?;
    let spool_fd = open_at(
        None,
        &spool.to_string_lossy(),
        OFlag::O_RDONLY | OFlag::O_DIRECTORY,
        Mode::empty(),
    )?;
    let st = fstat(spool_fd.as_raw_fd()).map_err(io)?;
    // Any user could swap the job's name there between our calls.
    if st.st_mode & 0o002 != 0 {
        return Err(BatchDirError::SpoolWritable(spool.to_path_buf()));
    }
    // remove_dir_all removes a link itself, never what it points to.
    match std::fs::remove_dir_all(spool.join(name)) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => {
            std::fs::remove_file(spool.join(name))?
        }
        Err(e) => return Err(e.into()),
    }
    mkdirat(
        Some(spool_fd.as_raw_fd()),
        name,
        Mode::from_bits_truncate(0o700),
    )
    .map_err(io)?;
    let dir = open_at(
        Some(&spool_fd),
        name,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW,
        Mode::empty(),
    )?;
    fchown(
        dir.as_raw_fd(),
        Some(Uid::from_raw(0)),
        Some(Gid::from_raw(gid)),
    )
    .map_err(io)?;
    fchmod(dir.as_raw_fd(), Mode::from_bits_truncate(0o750)).map_err(io)?;
    Ok(dir)
}

/// Writes the script into `dir` as a new file (never one found there),
/// owned by `uid` and only theirs (0700, as stock).
pub fn write_script(dir: &OwnedFd, script: &[u8], uid: u32) -> std::io::Result<()> {
    let fd = open_at(
        Some(dir),
        SCRIPT,
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW,
        Mode::from_bits_truncate(0o700),
    )?;
    fchown(fd.as_raw_fd(), Some(Uid::from_raw(uid)), None).map_err(io)?;
    fchmod(fd.as_raw_fd(), Mode::from_bits_truncate(0o700)).map_err(io)?;
    std::fs::File::from(fd).write_all(script)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    const NOBODY: u32 = 65534;

    fn require_root() {
        assert_eq!(
            nix::unistd::geteuid().as_raw(),
            0,
            "these tests make files for another user: run them as root"
        );
    }

    fn spool() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        d
    }

    #[test]
    fn the_directory_is_roots_and_the_script_the_owners() {
        require_root();
        let s = spool();
        let dir = create(s.path(), "job00042", NOBODY).unwrap();
        write_script(&dir, b"#!/bin/sh\ntrue\n", NOBODY).unwrap();
        let d = std::fs::symlink_metadata(s.path().join("job00042")).unwrap();
        assert!(d.is_dir());
        assert_eq!((d.uid(), d.gid(), d.mode() & 0o7777), (0, NOBODY, 0o750));
        let f = std::fs::symlink_metadata(s.path().join("job00042").join(SCRIPT)).unwrap();
        assert_eq!((f.uid(), f.gid(), f.mode() & 0o7777), (NOBODY, 0, 0o700));
        assert_eq!(
            std::fs::read(s.path().join("job00042").join(SCRIPT)).unwrap(),
            b"#!/bin/sh\ntrue\n"
        );
    }

    /// A directory an older build gave to the user, holding a link to a
    /// root file where the script goes, and a link in place of the
    /// directory itself: neither leads root anywhere.
    #[test]
    fn planted_links_are_removed_not_followed() {
        require_root();
        let s = spool();
        let canary = s.path().join("canary");
        std::fs::write(&canary, "root's").unwrap();
        std::fs::set_permissions(&canary, std::fs::Permissions::from_mode(0o600)).unwrap();
        let job = s.path().join("job00007");
        std::fs::create_dir(&job).unwrap();
        std::os::unix::fs::chown(&job, Some(NOBODY), Some(NOBODY)).unwrap();
        std::os::unix::fs::symlink(&canary, job.join(SCRIPT)).unwrap();
        let dir = create(s.path(), "job00007", NOBODY).unwrap();
        write_script(&dir, b"evil", NOBODY).unwrap();

        let elsewhere = s.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, s.path().join("job00008")).unwrap();
        let dir = create(s.path(), "job00008", NOBODY).unwrap();
        write_script(&dir, b"evil", NOBODY).unwrap();

        let c = std::fs::metadata(&canary).unwrap();
        assert_eq!((c.uid(), c.mode() & 0o777), (0, 0o600));
        assert_eq!(std::fs::read_to_string(&canary).unwrap(), "root's");
        assert!(std::fs::read_dir(&elsewhere).unwrap().next().is_none());
        assert!(!std::fs::symlink_metadata(s.path().join("job00008"))
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[test]
    fn a_spool_others_can_write_is_refused() {
        require_root();
        let s = spool();
        std::fs::set_permissions(s.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = create(s.path(), "job00001", 0).unwrap_err();
        assert!(
            matches!(&e, BatchDirError::SpoolWritable(p) if p == s.path()),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            format!("{} must not be writable by every user", s.path().display())
        );
        for bad in ["../x", ".", ".."] {
            let e = create(spool().path(), bad, 0).unwrap_err();
            assert!(
                matches!(&e, BatchDirError::NotPlainName(n) if n == bad),
                "{e}"
            );
            assert_eq!(e.to_string(), format!("not a plain name: {bad}"));
        }
    }
}
