//! auth/munge through libmunge: the real munged does the cryptography,
//! expiry and replay detection.

use super::{Audience, AuthError, AuthPlugin, Identity, AUTH_PLUGIN_MUNGE};
use munge_sys as ffi;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::PathBuf;

/// Decoding any uid's credential is refused by munged unless restricted to us,
/// so `Audience::Uid` must name the daemon that will decode.
#[derive(Debug, Clone, Default)]
pub struct MungeAuth {
    /// munged's socket (`AuthInfo=socket=`); libmunge's default if unset.
    pub socket: Option<PathBuf>,
    /// Credential lifetime in seconds (`AuthInfo=ttl=`); munged's default if unset.
    pub ttl: Option<u32>,
}

/// Owns a munge context and destroys it on every path.
struct Ctx(ffi::munge_ctx_t);

impl Drop for Ctx {
    fn drop(&mut self) {
        // SAFETY: created by munge_ctx_create and destroyed exactly once.
        unsafe { ffi::munge_ctx_destroy(self.0) }
    }
}

impl MungeAuth {
    pub fn with_socket(socket: impl Into<PathBuf>) -> Self {
        Self {
            socket: Some(socket.into()),
            ttl: None,
        }
    }

    fn ctx(&self) -> Result<Ctx, AuthError> {
        // SAFETY: plain constructor; null on allocation failure.
        let raw = unsafe { ffi::munge_ctx_create() };
        if raw.is_null() {
            return Err(AuthError::Socket("munge_ctx_create failed".into()));
        }
        let ctx = Ctx(raw);
        if let Some(sock) = &self.socket {
            let s = CString::new(sock.as_os_str().as_encoded_bytes())
                .map_err(|_| AuthError::Socket("socket path contains NUL".into()))?;
            // SAFETY: MUNGE_OPT_SOCKET takes a C string, copied by libmunge.
            let rc = unsafe {
                ffi::munge_ctx_set(ctx.0, ffi::munge_opt_MUNGE_OPT_SOCKET as c_int, s.as_ptr())
            };
            check_ctx(&ctx, rc)?;
        }
        if let Some(ttl) = self.ttl {
            // SAFETY: MUNGE_OPT_TTL takes an int.
            let rc = unsafe {
                ffi::munge_ctx_set(ctx.0, ffi::munge_opt_MUNGE_OPT_TTL as c_int, ttl as c_int)
            };
            check_ctx(&ctx, rc)?;
        }
        Ok(ctx)
    }
}

fn check_ctx(ctx: &Ctx, rc: ffi::munge_err_t) -> Result<(), AuthError> {
    if rc == ffi::munge_err_EMUNGE_SUCCESS {
        return Ok(());
    }
    // SAFETY: the context is live; libmunge returns a static or ctx-owned string.
    let text = unsafe { c_text(ffi::munge_ctx_strerror(ctx.0)) };
    Err(map_err(rc, text))
}

/// # Safety
/// `p` is null or a valid C string.
unsafe fn c_text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: guaranteed by the caller.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

fn map_err(rc: ffi::munge_err_t, text: String) -> AuthError {
    match rc {
        ffi::munge_err_EMUNGE_CRED_EXPIRED => AuthError::Expired,
        ffi::munge_err_EMUNGE_CRED_REPLAYED => AuthError::Replayed,
        ffi::munge_err_EMUNGE_CRED_REWOUND => AuthError::Rewound,
        ffi::munge_err_EMUNGE_CRED_UNAUTHORIZED => AuthError::Unauthorized,
        ffi::munge_err_EMUNGE_CRED_INVALID
        | ffi::munge_err_EMUNGE_BAD_CRED
        | ffi::munge_err_EMUNGE_BAD_MAC
        | ffi::munge_err_EMUNGE_BAD_CIPHER
        | ffi::munge_err_EMUNGE_BAD_VERSION
        | ffi::munge_err_EMUNGE_BAD_ZIP
        | ffi::munge_err_EMUNGE_BAD_REALM => AuthError::Invalid(text),
        ffi::munge_err_EMUNGE_SOCKET | ffi::munge_err_EMUNGE_TIMEOUT => AuthError::Socket(text),
        code => AuthError::Munge { code, text },
    }
}

impl AuthPlugin for MungeAuth {
    fn plugin_id(&self) -> u32 {
        AUTH_PLUGIN_MUNGE
    }

    fn create(&self, payload: &[u8], audience: Audience) -> Result<String, AuthError> {
        let ctx = self.ctx()?;
        if let Audience::Uid(uid) = audience {
            // SAFETY: MUNGE_OPT_UID_RESTRICTION takes a uid_t.
            let rc = unsafe {
                ffi::munge_ctx_set(
                    ctx.0,
                    ffi::munge_opt_MUNGE_OPT_UID_RESTRICTION as c_int,
                    uid as libc::uid_t,
                )
            };
            check_ctx(&ctx, rc)?;
        }
        let len = c_int::try_from(payload.len()).map_err(|_| AuthError::BadPayload)?;
        let mut cred: *mut c_char = std::ptr::null_mut();
        // SAFETY: payload is valid for len bytes; cred receives a malloc'd string.
        let rc =
            unsafe { ffi::munge_encode(&mut cred, ctx.0, payload.as_ptr() as *const c_void, len) };
        if rc != ffi::munge_err_EMUNGE_SUCCESS {
            if !cred.is_null() {
                // SAFETY: allocated by libmunge with malloc.
                unsafe { libc::free(cred as *mut c_void) };
            }
            return check_ctx(&ctx, rc).map(|_| String::new());
        }
        // SAFETY: on success cred is a NUL-terminated malloc'd string we own.
        let s = unsafe { c_text(cred) };
        // SAFETY: as above.
        unsafe { libc::free(cred as *mut c_void) };
        Ok(s)
    }

    fn verify(&self, credential: &str) -> Result<Identity, AuthError> {
        self.decode(credential, false)
    }

    fn verify_replay_ok(&self, credential: &str) -> Result<Identity, AuthError> {
        self.decode(credential, true)
    }
}

impl MungeAuth {
    /// munge_decode; with `replay_ok`, EMUNGE_CRED_REPLAYED passes (munged
    /// still returns the payload and identity with it).
    fn decode(&self, credential: &str, replay_ok: bool) -> Result<Identity, AuthError> {
        let ctx = self.ctx()?;
        let c =
            CString::new(credential).map_err(|_| AuthError::Invalid("NUL in credential".into()))?;
        let mut buf: *mut c_void = std::ptr::null_mut();
        let mut len: c_int = 0;
        let mut uid: libc::uid_t = 0;
        let mut gid: libc::gid_t = 0;
        // SAFETY: all out-pointers are valid; buf is malloc'd by libmunge.
        let rc =
            unsafe { ffi::munge_decode(c.as_ptr(), ctx.0, &mut buf, &mut len, &mut uid, &mut gid) };
        let payload = if buf.is_null() || len <= 0 {
            Vec::new()
        } else {
            // SAFETY: libmunge returned len bytes at buf.
            unsafe { std::slice::from_raw_parts(buf as *const u8, len as usize) }.to_vec()
        };
        if !buf.is_null() {
            // SAFETY: allocated by libmunge with malloc.
            unsafe { libc::free(buf) };
        }
        if !(replay_ok && rc == ffi::munge_err_EMUNGE_CRED_REPLAYED) {
            check_ctx(&ctx, rc)?;
        }
        Ok(Identity { uid, gid, payload })
    }
}

/// `Audience` for a reply: upstream restricts it to the requester.
pub fn reply_audience(requester_uid: u32) -> Audience {
    Audience::Uid(requester_uid)
}
