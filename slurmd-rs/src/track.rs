//! Finding and signalling a job's processes.
//!
//! This first slice tracks a job by session: the batch script is started
//! as a session (and process group) leader, and every process whose
//! session id is the script's pid belongs to the job (found by scanning
//! /proc). A process that starts its own session escapes; a cgroup per job
//! (the next slice) closes that gap.

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// The session id from a /proc/<pid>/stat line (field 6). The command
/// name (field 2) may hold spaces and parentheses, so fields are counted
/// after its last ')'.
pub fn parse_stat_session(stat: &str) -> Option<i32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    // state, ppid, pgrp, session
    rest.split_whitespace().nth(3)?.parse().ok()
}

/// Pids of the live processes in session `sid`.
pub fn session_members(sid: i32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| parse_stat_session(&s))
                == Some(sid)
        })
        .collect()
}

/// Sends `sig` to the job's process group and every member of its
/// session. Returns how many processes were found.
pub fn signal_session(sid: i32, sig: Signal) -> usize {
    if sid <= 1 {
        return 0; // never signal init or every process
    }
    let _ = kill(Pid::from_raw(-sid), sig);
    let members = session_members(sid);
    for &p in &members {
        let _ = kill(Pid::from_raw(p), sig);
    }
    members.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_session_field() {
        let s = "1234 (bash) S 1 1234 1230 34816 1234 4194560 1 2 3";
        assert_eq!(parse_stat_session(s), Some(1230));
        let odd = "77 (a) b (c)) R 5 77 66 0 -1";
        assert_eq!(parse_stat_session(odd), Some(66));
        assert_eq!(parse_stat_session("garbage"), None);
        assert_eq!(parse_stat_session("1 (x) S 1"), None);
    }

    #[test]
    fn finds_own_session() {
        let me = std::process::id() as i32;
        let sid = nix::unistd::getsid(None).unwrap().as_raw();
        let members = session_members(sid);
        assert!(members.contains(&me), "{members:?} lacks {me}");
        assert_eq!(signal_session(1, Signal::SIGCONT), 0);
    }
}
