//! The slurmdbd-rs binary: it reads slurmdbd.conf beside SLURM_CONF,
//! refuses what stock refuses, serves the handshake with munge, and runs
//! as SlurmUser.

mod common;

use common::*;
use slurm_testkit::mariadb::MariaDb;
use slurm_testkit::munged::Munged;
use slurm_wire::ProtocolVersion as V;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A slurmdbd.conf of `mode` in `dir`, with `extra` lines.
fn write_conf(dir: &Path, munged: &Munged, port: u16, mode: u32, extra: &str) {
    let text = format!(
        "DbdHost=localhost\nDbdPort={port}\nStorageType=accounting_storage/mysql\n\
         PidFile={d}/slurmdbd.pid\nLogFile={d}/slurmdbd.log\nDebugLevel=debug\n\
         AuthInfo=socket={sock}\n{extra}",
        d = dir.display(),
        sock = munged.socket.display(),
    );
    let p = dir.join("slurmdbd.conf");
    std::fs::write(&p, text).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn command(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_slurmdbd-rs"));
    // Only the directory of SLURM_CONF matters: slurmdbd.conf lies beside it.
    c.arg("-D")
        .env("SLURM_CONF", dir.join("slurm.conf"))
        .stdin(Stdio::null());
    c
}

/// Runs the daemon until it refuses to start; its stderr.
fn refusal(dir: &Path) -> String {
    let out = command(dir).output().unwrap();
    assert!(!out.status.success(), "started: {out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the daemon and waits until it listens.
async fn start(dir: &Path, port: u16) -> Daemon {
    let mut d = Daemon(
        command(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        if let Some(st) = d.0.try_wait().unwrap() {
            let log = std::fs::read_to_string(dir.join("slurmdbd.log")).unwrap_or_default();
            panic!("slurmdbd-rs exited ({st}):\n{log}");
        }
        assert!(t0.elapsed() < WAIT, "slurmdbd-rs did not listen");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    d
}

fn uid_of(pid: u32) -> u32 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
    line.split_whitespace().nth(2).unwrap().parse().unwrap()
}

#[tokio::test]
async fn the_daemon_serves_the_handshake_as_slurm_user() {
    let munged = Munged::start();
    let db = MariaDb::start();
    // SlurmUser reaches the server's socket.
    std::fs::set_permissions(db.dir(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let port = free_port();
    let me = uid_of(std::process::id());
    let running_as_root = me == 0;
    // Only root can become another user.
    let user = if running_as_root {
        "nobody".to_string()
    } else {
        me.to_string()
    };
    write_conf(
        dir.path(),
        &munged,
        port,
        0o600,
        &format!(
            "SlurmUser={user}\nStorageHost=unix:{}\nStorageUser=root\nStorageLoc=acct\n",
            db.socket.display()
        ),
    );
    let d = start(dir.path(), port).await;
    let pid = std::fs::read_to_string(dir.path().join("slurmdbd.pid")).unwrap();
    assert_eq!(pid.trim(), d.0.id().to_string());
    for v in [V::V22_05, V::V24_11, V::V26_05] {
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        s.write_all(&init_bytes(&munged.auth(), v.to_wire(), v.to_wire()))
            .await
            .unwrap();
        let m = rc(&mut s, v).await;
        assert_eq!((m.rc, m.ret_info), (0, v.to_wire()), "{v}");
    }
    // It made stock's schema before it served.
    assert_eq!(
        db.sql("select version from acct.convert_version_table")
            .trim(),
        "16"
    );
    // It has answered, so it has taken SlurmUser (the kernel accepts
    // connections from the bind on, before that).
    if running_as_root {
        let nobody = nix::unistd::User::from_name("nobody").unwrap().unwrap();
        assert_eq!(uid_of(d.0.id()), nobody.uid.as_raw(), "runs as SlurmUser");
    }
    // SIGTERM ends it cleanly.
    let mut d = d;
    let pid = nix::unistd::Pid::from_raw(d.0.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let t0 = Instant::now();
    let status = loop {
        if let Some(st) = d.0.try_wait().unwrap() {
            break st;
        }
        assert!(t0.elapsed() < WAIT, "still running after SIGTERM");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn the_daemon_refuses_what_stock_refuses() {
    let munged = Munged::start();
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    for mode in [0o644, 0o604, 0o660] {
        write_conf(dir.path(), &munged, port, mode, "");
        let e = refusal(dir.path());
        assert!(e.contains(&format!("mode {mode:o}")), "{mode:o}: {e}");
    }
    write_conf(dir.path(), &munged, port, 0o640, "NoSuchKey=1\n");
    let e = refusal(dir.path());
    assert!(e.contains("NoSuchKey"), "{e}");
    write_conf(
        dir.path(),
        &munged,
        port,
        0o600,
        "SlurmUser=no-such-user-here\n",
    );
    let e = refusal(dir.path());
    assert!(e.contains("no-such-user-here"), "{e}");
    write_conf(dir.path(), &munged, port, 0o600, "DbdHost=not-this-host\n");
    let e = refusal(dir.path());
    assert!(e.contains("not-this-host"), "{e}");
    std::fs::remove_file(dir.path().join("slurmdbd.conf")).unwrap();
    let e = refusal(dir.path());
    assert!(e.contains("slurmdbd.conf"), "{e}");
}
