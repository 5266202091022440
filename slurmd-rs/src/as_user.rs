//! File work done as a job's owner instead of root: a forked child takes
//! the owner's groups, gid and uid before it opens anything, so the
//! kernel checks the user's own permissions, and a link the user planted
//! leads only where the user could write anyway. The child makes only
//! async-signal-safe calls on memory prepared before the fork (the daemon
//! has many threads).

use crate::launch::Owner;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::time::{Duration, Instant};

/// How long the child may take (a hung network file system must not
/// hold the caller).
const DEADLINE: Duration = Duration::from_secs(5);

/// Appends `data` to the existing file `path`, as `owner`. A FIFO with no
/// reader is refused (ENXIO) rather than waited for.
pub fn append(owner: &Owner, path: &std::path::Path, data: &[u8]) -> std::io::Result<()> {
    let path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    let groups: Vec<libc::gid_t> = owner.groups.clone();
    let (uid, gid) = (owner.uid, owner.gid);
    // SAFETY: the child only makes raw syscalls on the memory above, then
    // _exits; the parent owns the pid it gets.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: child side of the fork; see above.
        unsafe { child_append(&groups, gid, uid, &path, data) }
    }
    let status = wait_until(pid, Instant::now() + DEADLINE)?;
    match status {
        0 => Ok(()),
        e => Err(std::io::Error::from_raw_os_error(e)),
    }
}

/// # Safety
/// Only in a freshly forked child; never returns.
unsafe fn child_append(
    groups: &[libc::gid_t],
    gid: u32,
    uid: u32,
    path: &CString,
    data: &[u8],
) -> ! {
    // SAFETY: raw syscalls on prepared memory; errno read right after.
    unsafe {
        let die = || -> ! {
            let e = *libc::__errno_location();
            libc::_exit(if (1..256).contains(&e) { e } else { libc::EIO })
        };
        if libc::setgroups(groups.len(), groups.as_ptr()) != 0
            || libc::setgid(gid) != 0
            || libc::setuid(uid) != 0
        {
            die();
        }
        let fd = libc::open(
            path.as_ptr(),
            libc::O_WRONLY | libc::O_APPEND | libc::O_NOCTTY | libc::O_NONBLOCK | libc::O_CLOEXEC,
        );
        if fd < 0 {
            die();
        }
        let mut off = 0usize;
        while off < data.len() {
            let n = libc::write(
                fd,
                data.as_ptr().add(off) as *const libc::c_void,
                data.len() - off,
            );
            if n < 0 {
                if *libc::__errno_location() == libc::EINTR {
                    continue;
                }
                die();
            }
            off += n as usize;
        }
        libc::_exit(0)
    }
}

/// The child's exit code (an errno, 0 for success); killed past `until`.
fn wait_until(pid: libc::pid_t, until: Instant) -> std::io::Result<i32> {
    loop {
        let mut st = 0;
        // SAFETY: waiting for our own child.
        let r = unsafe { libc::waitpid(pid, &mut st, libc::WNOHANG) };
        if r == pid {
            return Ok(if libc::WIFEXITED(st) {
                libc::WEXITSTATUS(st)
            } else {
                libc::EIO
            });
        }
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if Instant::now() >= until {
            // SAFETY: our own child, not yet reaped.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut st, 0);
            }
            return Err(std::io::Error::from_raw_os_error(libc::ETIMEDOUT));
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    const NOBODY: u32 = 65534;

    fn nobody() -> Owner {
        Owner {
            uid: NOBODY,
            gid: NOBODY,
            user_name: "nobody".into(),
            groups: vec![],
        }
    }

    fn root_only_dir() -> tempfile::TempDir {
        assert_eq!(
            nix::unistd::geteuid().as_raw(),
            0,
            "this test writes as another user: run it as root"
        );
        let d = tempfile::tempdir().unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        d
    }

    #[test]
    fn appends_with_the_users_rights_only() {
        let d = root_only_dir();
        let mine = d.path().join("mine");
        std::fs::write(&mine, "a").unwrap();
        std::os::unix::fs::chown(&mine, Some(NOBODY), Some(NOBODY)).unwrap();
        append(&nobody(), &mine, b"b").unwrap();
        assert_eq!(std::fs::read_to_string(&mine).unwrap(), "ab");

        // A link to root's file: refused with the user's EACCES.
        let canary = d.path().join("canary");
        std::fs::write(&canary, "root's").unwrap();
        std::fs::set_permissions(&canary, std::fs::Permissions::from_mode(0o644)).unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&canary, &link).unwrap();
        let e = append(&nobody(), &link, b"x").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EACCES), "{e}");
        assert_eq!(std::fs::read_to_string(&canary).unwrap(), "root's");
        assert_eq!(std::fs::metadata(&canary).unwrap().uid(), 0);

        // Nothing is created, and a FIFO with no reader does not hang us.
        let e = append(&nobody(), &d.path().join("none"), b"x").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
        let fifo = d.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        std::os::unix::fs::chown(&fifo, Some(NOBODY), None).unwrap();
        let e = append(&nobody(), &fifo, b"x").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENXIO));
    }
}
