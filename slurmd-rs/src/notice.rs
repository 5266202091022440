//! The line stock's step daemon writes into a batch job's stderr when the
//! job is ended from outside while its script runs, e.g.
//!
//! ```text
//! slurmstepd-n1: error: *** JOB 12 ON n1 CANCELLED AT 2026-11-30T10:20:00 DUE TO TIME LIMIT ***
//! ```
//!
//! One line per job at most: the first request that has one says it (a
//! time limit is followed by a termination, which then says nothing).
//! Stock writes through the step daemon's own copy of the job's stderr, so
//! the line lands where the job's next output would (shared offset); we
//! borrow the script's stderr descriptor with pidfd_getfd(2) to do the
//! same, and append to the stderr file, as the job's owner, when that is
//! not possible (the script closed its stderr, say).

use crate::launch::Owner;
use slurm_wire::ProtocolVersion;
use std::io::Write;
use std::os::fd::{FromRawFd, OwnedFd};

/// Why the end line was not written.
#[derive(Debug, thiserror::Error)]
pub enum NoticeError {
    /// No descriptor to borrow and no stderr file known.
    #[error("no stderr to write to")]
    NoStderr,
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Why the job is being stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    TimeLimit,
    Preempted,
    NodeFail,
    Requeued,
    Failed,
    /// SIGTERM or SIGKILL sent to the batch step (scancel, termination).
    Signal(i32),
}

// Job states of a termination request (JOB_STATE_BASE part).
const JOB_STATE_BASE: u32 = 0xff;
const JOB_PENDING: u32 = 0;
const JOB_FAILED: u32 = 5;
const JOB_NODE_FAIL: u32 = 7;

impl Cause {
    /// What a REQUEST_TERMINATE_JOB for a job in `job_state` announces
    /// first: a node failure, a requeue (the job is pending again) or a
    /// failure, else the SIGTERM that starts the kill.
    pub fn of_termination(job_state: u32) -> Cause {
        match job_state & JOB_STATE_BASE {
            JOB_NODE_FAIL => Cause::NodeFail,
            JOB_PENDING => Cause::Requeued,
            JOB_FAILED => Cause::Failed,
            _ => Cause::Signal(libc::SIGTERM),
        }
    }
}

/// `strsignal` of the two signals that have a line (glibc's wording).
fn signal_name(sig: i32) -> Option<&'static str> {
    match sig {
        libc::SIGTERM => Some("Terminated"),
        libc::SIGKILL => Some("Killed"),
        _ => None,
    }
}

/// The lines for the batch step of `job_id` on `node` at `when`
/// (`YYYY-MM-DDTHH:MM:SS`, local) and `millis`, in the wording of
/// `release`; empty for a signal without one. `details` is the request's
/// reason, if any.
pub fn lines(
    cause: Cause,
    job_id: u32,
    node: &str,
    (when, millis): (&str, u32),
    details: Option<&str>,
    release: ProtocolVersion,
) -> String {
    let who = format!("JOB {job_id} ON {node}");
    let body = match cause {
        Cause::TimeLimit => format!("{who} CANCELLED AT {when} DUE TO TIME LIMIT"),
        Cause::Preempted => format!("{who} CANCELLED AT {when} DUE TO PREEMPTION"),
        Cause::NodeFail => {
            format!("{who} CANCELLED AT {when} DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS")
        }
        Cause::Requeued => format!("{who} CANCELLED AT {when} DUE TO JOB REQUEUE"),
        Cause::Failed => format!("{who} FAILED (non-zero exit code or other failure mode)"),
        Cause::Signal(sig) => match signal_name(sig) {
            None => return String::new(),
            // 25.05 names the signal.
            Some(name) if release >= ProtocolVersion::V25_05 => {
                format!("{who} CANCELLED AT {when} DUE to SIGNAL {name}")
            }
            Some(_) => format!("{who} CANCELLED AT {when}"),
        },
    };
    // Up to 24.11 a daemon's stderr lines start with its name, which a
    // step daemon built for several node daemons per host (as Debian's
    // are, and as `-N` makes ours) makes `slurmstepd-<node>`; 25.05
    // starts them with the log timestamp (LogTimeFormat's default,
    // milliseconds) instead.
    let prefix = if release >= ProtocolVersion::V25_05 {
        format!("[{when}.{millis:03}]")
    } else {
        format!("slurmstepd-{node}:")
    };
    let mut s = format!("{prefix} error: *** {body} ***\n");
    if let Some(d) = details.filter(|d| !d.is_empty()) {
        s.push_str(&format!("{prefix} error: *** REASON: {d} ***\n"));
    }
    s
}

/// Local time as stock's default time format (`%FT%T`).
pub fn local_time(t: libc::time_t) -> String {
    // SAFETY: tm is plain integers (and a pointer left null), for which
    // all zeroes is a valid value.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: localtime_r fills the struct we own, or fails.
    if unsafe { libc::localtime_r(&t, &mut tm) }.is_null() {
        return t.to_string();
    }
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

/// A duplicate of process `pid`'s descriptor `fd` (the same open file, so
/// the same offset).
fn borrow_fd(pid: i32, fd: i32) -> std::io::Result<OwnedFd> {
    // SAFETY: raw syscalls with integer arguments; each fd returned is new
    // and owned by us.
    unsafe {
        let pidfd = libc::syscall(libc::SYS_pidfd_open, pid, 0);
        if pidfd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let pidfd = OwnedFd::from_raw_fd(pidfd as i32);
        let r = libc::syscall(
            libc::SYS_pidfd_getfd,
            std::os::fd::AsRawFd::as_raw_fd(&pidfd),
            fd,
            0,
        );
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(OwnedFd::from_raw_fd(r as i32))
    }
}

/// Writes `text` to the stderr of the running script `script_pid`, or
/// appends it to the stderr file when the descriptor cannot be borrowed:
/// as its owner, since the user chose that path.
pub fn write(
    script_pid: Option<i32>,
    stderr_file: Option<(&Owner, &str)>,
    text: &str,
) -> Result<(), NoticeError> {
    if let Some(pid) = script_pid.filter(|&p| p > 0) {
        match borrow_fd(pid, 2) {
            Ok(fd) => return Ok(std::fs::File::from(fd).write_all(text.as_bytes())?),
            Err(e) => tracing::debug!("stderr of pid {pid}: {e}; appending to the file instead"),
        }
    }
    let Some((owner, path)) = stderr_file else {
        return Err(NoticeError::NoStderr);
    };
    Ok(crate::as_user::append(
        owner,
        std::path::Path::new(path),
        text.as_bytes(),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ProtocolVersion as V;

    const T: (&str, u32) = ("2026-11-30T01:50:02", 7);

    #[test]
    fn wording_per_cause_and_release() {
        assert_eq!(
            lines(Cause::TimeLimit, 5, "n1", T, None, V::V22_05),
            "slurmstepd-n1: error: *** JOB 5 ON n1 CANCELLED AT 2026-11-30T01:50:02 DUE TO TIME LIMIT ***\n"
        );
        assert_eq!(
            lines(Cause::TimeLimit, 5, "n1", T, None, V::V25_05),
            "[2026-11-30T01:50:02.007] error: *** JOB 5 ON n1 CANCELLED AT 2026-11-30T01:50:02 DUE TO TIME LIMIT ***\n"
        );
        // As in the captures' slurmd logs: 22.05/24.11 vs 26.05 for a
        // scancel.
        let term = Cause::Signal(libc::SIGTERM);
        assert_eq!(
            lines(term, 2, "n24", T, None, V::V24_11),
            "slurmstepd-n24: error: *** JOB 2 ON n24 CANCELLED AT 2026-11-30T01:50:02 ***\n"
        );
        assert_eq!(
            lines(term, 2, "n26", T, None, V::V26_05),
            "[2026-11-30T01:50:02.007] error: *** JOB 2 ON n26 CANCELLED AT 2026-11-30T01:50:02 DUE to SIGNAL Terminated ***\n"
        );
        assert!(
            lines(Cause::Signal(libc::SIGKILL), 2, "n", T, None, V::V25_05)
                .contains("DUE to SIGNAL Killed ***")
        );
        assert_eq!(
            lines(Cause::Signal(libc::SIGUSR1), 2, "n", T, None, V::V26_05),
            ""
        );
        assert_eq!(
            lines(Cause::Failed, 3, "n1", T, Some("launch failed"), V::V24_11),
            "slurmstepd-n1: error: *** JOB 3 ON n1 FAILED (non-zero exit code or other failure mode) ***\n\
             slurmstepd-n1: error: *** REASON: launch failed ***\n"
        );
        assert!(lines(Cause::Requeued, 3, "n1", T, Some(""), V::V24_11)
            .ends_with("DUE TO JOB REQUEUE ***\n"));
    }

    #[test]
    fn termination_causes_from_the_job_state() {
        assert_eq!(Cause::of_termination(4), Cause::Signal(libc::SIGTERM)); // CANCELLED
        assert_eq!(Cause::of_termination(0x8004), Cause::Signal(libc::SIGTERM)); // +COMPLETING
        assert_eq!(Cause::of_termination(7 | 0x8000), Cause::NodeFail);
        assert_eq!(Cause::of_termination(0), Cause::Requeued);
        assert_eq!(Cause::of_termination(5), Cause::Failed);
    }

    #[test]
    fn time_is_local_and_stock_shaped() {
        let s = local_time(0);
        assert_eq!(s.len(), 19, "{s}");
        assert_eq!((&s[4..5], &s[10..11], &s[13..14]), ("-", "T", ":"));
    }

    #[test]
    fn writes_into_the_scripts_stderr_at_its_offset() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("err");
        // A child writing "a", then (after our line) "b" through the same
        // descriptor, truncate mode: nothing is overwritten.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "printf a >&2; read x; printf b >&2"])
            .stdin(std::process::Stdio::piped())
            .stderr(std::fs::File::create(&f).unwrap())
            .spawn()
            .unwrap();
        while std::fs::read_to_string(&f).unwrap() != "a" {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        write(Some(child.id() as i32), None, "-line-").unwrap();
        child.stdin.take().unwrap().write_all(b"\n").unwrap();
        child.wait().unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "a-line-b");
        // No process: appended to the file, as its owner.
        let me = Owner {
            uid: nix::unistd::getuid().as_raw(),
            gid: nix::unistd::getgid().as_raw(),
            ..Owner::default()
        };
        write(None, Some((&me, f.to_str().unwrap())), "!").unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "a-line-b!");
        let e = write(None, None, "x").unwrap_err();
        assert!(matches!(e, NoticeError::NoStderr), "{e:?}");
        assert_eq!(e.to_string(), "no stderr to write to");
    }

    /// `exec 2>&-` in the script, then its stderr path swapped for a link
    /// to a root file: the fallback writes as the owner, so it is refused.
    #[test]
    fn the_fallback_never_writes_as_root() {
        assert_eq!(nix::unistd::geteuid().as_raw(), 0, "run as root");
        let d = tempfile::tempdir().unwrap();
        let canary = d.path().join("canary");
        std::fs::write(&canary, "root's").unwrap();
        let err = d.path().join("err");
        std::os::unix::fs::symlink(&canary, &err).unwrap();
        let mut child = std::process::Command::new("sh")
            .args(["-c", "exec 2>&-; sleep 5"])
            .spawn()
            .unwrap();
        let fd2 = format!("/proc/{}/fd/2", child.id());
        while std::fs::symlink_metadata(&fd2).is_ok() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let nobody = Owner {
            uid: 65534,
            gid: 65534,
            ..Owner::default()
        };
        let r = write(
            Some(child.id() as i32),
            Some((&nobody, err.to_str().unwrap())),
            "-line-",
        );
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(child.id() as i32),
            nix::sys::signal::SIGKILL,
        );
        let _ = child.wait();
        assert!(r.is_err(), "wrote through the link");
        assert_eq!(std::fs::read_to_string(&canary).unwrap(), "root's");
    }
}
