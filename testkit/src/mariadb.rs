//! A private MariaDB server in a temp dir, for storage tests: its own data
//! directory, socket and (for [`MariaDb::start_tcp`]) a free port on
//! 127.0.0.1, killed on drop. Nothing of the host's server is touched.
//!
//! `root` has no password (`--auth-root-authentication-method=normal`), on
//! the socket and on 127.0.0.1.

use std::net::TcpListener;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const MARIADBD: &str = "/usr/sbin/mariadbd";
const INSTALL_DB: &str = "/usr/bin/mariadb-install-db";
const CLIENT: &str = "/usr/bin/mariadb";

/// How long a server may take to open its socket (a loaded 2-core host).
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A running private server.
pub struct MariaDb {
    dir: tempfile::TempDir,
    /// The unix socket (always there).
    pub socket: PathBuf,
    /// The TCP port on 127.0.0.1 (only [`MariaDb::start_tcp`]).
    pub port: Option<u16>,
    child: Child,
}

/// The command that installs what the fixture runs.
const INSTALL_HINT: &str = "run scripts/setup (or apt-get install mariadb-server mariadb-client)";

fn require(bin: &str) {
    assert!(
        Path::new(bin).exists(),
        "{bin} is not installed: {INSTALL_HINT}"
    );
}

impl MariaDb {
    /// A server on a unix socket only (`--skip-networking`).
    pub fn start() -> Self {
        Self::launch(false)
    }

    /// A server on its socket and on a free port of 127.0.0.1.
    pub fn start_tcp() -> Self {
        Self::launch(true)
    }

    /// The user tests connect as.
    pub fn user(&self) -> &'static str {
        "root"
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    fn launch(tcp: bool) -> Self {
        for bin in [MARIADBD, INSTALL_DB, CLIENT] {
            require(bin);
        }
        let dir = tempfile::Builder::new()
            .prefix("mdb")
            .tempdir()
            .expect("mariadb fixture: temp dir");
        // mariadbd refuses to run as root unless told to; elsewhere it runs
        // as whoever we are. A fresh directory is owned by our euid.
        let as_root = std::fs::metadata(dir.path())
            .map(|m| m.uid() == 0)
            .unwrap_or(false);
        let data = dir.path().join("data");
        // Servers sharing a tmpdir remove each other's temporary tables.
        let tmp = dir.path().join("tmp");
        std::fs::create_dir(&tmp).expect("mariadb fixture: tmpdir");
        let mut install = Command::new(INSTALL_DB);
        install
            .arg("--no-defaults")
            .arg("--auth-root-authentication-method=normal")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--tmpdir={}", tmp.display()))
            .args(["--skip-test-db", "--innodb-log-file-size=4M"]);
        if as_root {
            install.arg("--user=root");
        }
        let out = install
            .stdin(Stdio::null())
            .output()
            .expect("mariadb fixture: run mariadb-install-db");
        assert!(
            out.status.success(),
            "mariadb-install-db failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // A free port can be taken between our probe and the server's bind:
        // the server then exits, and we try another.
        let mut last_log = String::new();
        for _ in 0..5 {
            let port = tcp.then(free_port);
            match Self::spawn(dir.path(), &data, as_root, port) {
                Ok(child) => {
                    return MariaDb {
                        socket: dir.path().join("sock"),
                        port,
                        dir,
                        child,
                    };
                }
                Err(log) => last_log = log,
            }
        }
        panic!("mariadbd did not start:\n{last_log}");
    }

    /// Starts mariadbd and waits until it answers on its socket; on
    /// failure the tail of its error log.
    fn spawn(dir: &Path, data: &Path, as_root: bool, port: Option<u16>) -> Result<Child, String> {
        let socket = dir.join("sock");
        let log = dir.join("error.log");
        let _ = std::fs::remove_file(&socket);
        let mut cmd = Command::new(MARIADBD);
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--pid-file={}", dir.join("pid").display()))
            .arg(format!("--log-error={}", log.display()))
            .arg(format!("--tmpdir={}", dir.join("tmp").display()))
            // Small and quick: tests need neither memory nor durability.
            .args([
                "--innodb-buffer-pool-size=32M",
                "--innodb-log-file-size=4M",
                "--innodb-flush-log-at-trx-commit=2",
                "--skip-name-resolve",
            ]);
        match port {
            Some(p) => {
                cmd.arg("--bind-address=127.0.0.1")
                    .arg(format!("--port={p}"));
            }
            None => {
                cmd.arg("--skip-networking");
            }
        }
        if as_root {
            cmd.arg("--user=root");
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot run {MARIADBD}: {e}"))?;
        let tail = || {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            lines[lines.len().saturating_sub(20)..].join("\n")
        };
        let t0 = Instant::now();
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(format!("mariadbd exited ({status}):\n{}", tail()));
            }
            if socket.exists() && ping(&socket) {
                return Ok(child);
            }
            if t0.elapsed() > START_TIMEOUT {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "mariadbd not ready after {START_TIMEOUT:?}:\n{}",
                    tail()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Runs SQL through the `mariadb` client on the socket; its output
    /// (tab-separated, no column names). Panics with the client's error.
    pub fn sql(&self, statements: &str) -> String {
        let out = client(&self.socket)
            .args(["--batch", "--skip-column-names", "-e", statements])
            .output()
            .expect("mariadb fixture: run mariadb");
        assert!(
            out.status.success(),
            "mariadb -e {statements:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A new database; `name` must be a plain identifier.
    pub fn create_database(&self, name: &str) {
        assert!(
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'),
            "database name {name:?}: letters, digits and _ only"
        );
        self.sql(&format!("CREATE DATABASE `{name}`"));
    }

    /// The server's error log so far.
    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("error.log")).unwrap_or_default()
    }
}

fn client(socket: &Path) -> Command {
    let mut c = Command::new(CLIENT);
    c.arg("--no-defaults")
        .arg(format!("--socket={}", socket.display()))
        .args(["--user=root", "--connect-timeout=5"])
        .stdin(Stdio::null());
    c
}

fn ping(socket: &Path) -> bool {
    client(socket)
        .args(["-e", "SELECT 1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("mariadb fixture: a free port")
}

impl Drop for MariaDb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
