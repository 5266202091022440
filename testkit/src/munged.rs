//! A private munged with a throwaway key, and a credential mechanism
//! without munged ([`FakeAuth`]) for tests and the fuzz driver.

use slurm_wire::auth::munge::MungeAuth;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A munged on its own socket and key, killed on drop.
pub struct Munged {
    _dir: tempfile::TempDir,
    pub socket: PathBuf,
    key: Vec<u8>,
    child: Child,
}

impl Munged {
    pub fn start() -> Self {
        let mut k = vec![0u8; 1024];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut k))
            .expect("munged fixture");
        Self::with_key(k)
    }

    /// Another munged with this one's key, as on another node: each
    /// decodes a credential once, so a forwarded one is no replay.
    pub fn sibling(&self) -> Self {
        Self::with_key(self.key.clone())
    }

    fn with_key(k: Vec<u8>) -> Self {
        assert!(
            Path::new("/usr/sbin/munged").exists(),
            "munged is not installed: run scripts/setup (or apt-get install munge libmunge-dev)"
        );
        let dir = tempfile::tempdir().expect("munged fixture");
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .expect("munged fixture");
        let key = dir.path().join("munge.key");
        std::fs::write(&key, &k).expect("munged fixture");
        std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .expect("munged fixture");
        let socket = dir.path().join("munge.sock");
        let p = |n: &str| format!("{}", dir.path().join(n).display());
        let child = Command::new("/usr/sbin/munged")
            .args([
                "-F",
                "-f",
                "--key-file",
                &p("munge.key"),
                "--socket",
                &p("munge.sock"),
            ])
            .args([
                "--pid-file",
                &p("pid"),
                "--seed-file",
                &p("seed"),
                "--log-file",
                &p("log"),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start munged");
        for _ in 0..100 {
            if socket.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(socket.exists(), "munged did not create its socket");
        Munged {
            _dir: dir,
            socket,
            key: k,
            child,
        }
    }

    pub fn auth(&self) -> MungeAuth {
        MungeAuth::with_socket(&self.socket)
    }

    /// What a daemon running as root verifies with, through this munged.
    pub fn auth_ctx(&self) -> slurm_rpc::AuthCtx {
        slurm_rpc::AuthCtx {
            plugin: std::sync::Arc::new(self.auth()),
            slurm_user_uid: 0,
            policy: slurm_wire::auth::VerifyPolicy::default(),
        }
    }

    /// A credential made by another uid, through the munge CLI.
    pub fn cred_as(&self, uid: u32, payload: &[u8]) -> String {
        let mut c = Command::new("setpriv")
            .args([
                format!("--reuid={uid}"),
                format!("--regid={uid}"),
                "--clear-groups".into(),
            ])
            .args(["munge", "-S"])
            .arg(&self.socket)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("setpriv munge");
        c.stdin
            .take()
            .expect("munged fixture")
            .write_all(payload)
            .expect("munged fixture");
        let out = c.wait_with_output().expect("munged fixture");
        assert!(out.status.success());
        String::from_utf8(out.stdout)
            .expect("munged fixture")
            .trim()
            .to_string()
    }
}

impl Drop for Munged {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A credential mechanism without munged, for tests and the fuzz driver:
/// `uid=N;hex(payload)` proves uid N, `slow=MS;...` does too after MS
/// milliseconds (a slow munged), anything else is invalid.
pub struct FakeAuth {
    /// The uid `create` signs as.
    pub uid: u32,
}

impl FakeAuth {
    pub fn ctx(uid: u32) -> slurm_rpc::AuthCtx {
        slurm_rpc::AuthCtx {
            plugin: std::sync::Arc::new(FakeAuth { uid }),
            slurm_user_uid: 0,
            policy: slurm_wire::auth::VerifyPolicy::default(),
        }
    }

    /// A credential for `uid` over `payload` that takes `delay` to verify.
    pub fn slow_credential(uid: u32, payload: &[u8], delay: Duration) -> String {
        format!("slow={}:uid={uid};{}", delay.as_millis(), hex(payload))
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|d| u8::from_str_radix(d, 16).ok()))
        .collect()
}

impl slurm_wire::auth::AuthPlugin for FakeAuth {
    fn plugin_id(&self) -> u32 {
        slurm_wire::auth::AUTH_PLUGIN_MUNGE
    }

    fn create(
        &self,
        payload: &[u8],
        _: slurm_wire::auth::Audience,
    ) -> Result<String, slurm_wire::auth::AuthError> {
        Ok(format!("uid={};{}", self.uid, hex(payload)))
    }

    fn verify(
        &self,
        credential: &str,
    ) -> Result<slurm_wire::auth::Identity, slurm_wire::auth::AuthError> {
        let invalid = || slurm_wire::auth::AuthError::Invalid("fake credential".into());
        let mut rest = credential;
        if let Some(r) = rest.strip_prefix("slow=") {
            let (ms, r) = r.split_once(':').ok_or_else(invalid)?;
            let ms: u64 = ms.parse().map_err(|_| invalid())?;
            std::thread::sleep(Duration::from_millis(ms.min(60_000)));
            rest = r;
        }
        let (uid, payload) = rest
            .strip_prefix("uid=")
            .and_then(|r| r.split_once(';'))
            .ok_or_else(invalid)?;
        let uid: u32 = uid.parse().map_err(|_| invalid())?;
        Ok(slurm_wire::auth::Identity {
            uid,
            gid: uid,
            payload: unhex(payload).ok_or_else(invalid)?,
        })
    }
}
