//! Starting a batch script as its owner: fork, new session, groups, gid,
//! uid, work directory, stdio files opened as the owner, exec. The child
//! only makes async-signal-safe calls on memory prepared before the fork;
//! a failure before exec is written to a close-on-exec pipe as
//! (stage, errno) so the parent can report it.

use crate::batch_dir::BatchDirError;
use crate::launch::BatchPlan;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;

#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("cannot prepare the batch directory {0}: {1}")]
    BatchDir(String, BatchDirError),
    #[error("string with a NUL byte in {0}")]
    Nul(&'static str),
    #[error("fork: {0}")]
    Fork(std::io::Error),
    #[error("cannot become uid {uid} gid {gid}: {err}")]
    Identity {
        uid: u32,
        gid: u32,
        err: std::io::Error,
    },
    #[error("cannot open {0}: {1}")]
    Open(String, std::io::Error),
    #[error("cannot execute {0}: {1}")]
    Exec(String, std::io::Error),
    #[error("cannot join the job's cgroup {0}: {1}")]
    Cgroup(String, std::io::Error),
}

impl SpawnError {
    pub fn errno(&self) -> i32 {
        use slurm_wire::errno::*;
        match self {
            SpawnError::BatchDir(..) => ESLURMD_CREATE_BATCH_DIR_ERROR,
            SpawnError::Identity { .. } => ESLURMD_SET_UID_OR_GID_ERROR,
            SpawnError::Open(..) => ESLURMD_IO_ERROR,
            SpawnError::Cgroup(..) => ESLURMD_SETUP_ENVIRONMENT_ERROR,
            _ => ESLURMD_EXECVE_FAILED,
        }
    }
}

const STAGE_ID: u8 = 1;
const STAGE_STDIN: u8 = 2;
const STAGE_STDOUT: u8 = 3;
const STAGE_STDERR: u8 = 4;
const STAGE_EXEC: u8 = 5;
/// Index of the failed cgroup file is added to this.
const STAGE_CGROUP: u8 = 16;

/// Width reserved for SLURM_TASK_PID's digits, filled in by the child.
const PID_DIGITS: usize = 10;

fn cstr(s: &str, what: &'static str) -> Result<CString, SpawnError> {
    CString::new(s).map_err(|_| SpawnError::Nul(what))
}

/// Makes `<spool>/jobNNNNN/slurm_script` as stock lays it out (so tools
/// that look there find it), without ever following a name the user
/// could have planted: see `batch_dir`.
fn write_script(plan: &BatchPlan) -> Result<(), SpawnError> {
    let dir = &plan.batch_dir;
    let e = |err| SpawnError::BatchDir(dir.display().to_string(), err);
    let (Some(spool), Some(name)) = (dir.parent(), dir.file_name()) else {
        return Err(e(std::io::Error::from_raw_os_error(libc::EINVAL).into()));
    };
    let fd = crate::batch_dir::create(spool, &name.to_string_lossy(), plan.owner.gid).map_err(e)?;
    crate::batch_dir::write_script(&fd, plan.script.as_bytes(), plan.owner.uid)
        .map_err(|err| e(err.into()))
}

/// Removes the batch directory once the job is over.
pub fn remove_batch_dir(plan_dir: &std::path::Path) {
    let _ = std::fs::remove_dir_all(plan_dir);
}

/// Starts the script; returns its pid (also its session and group id).
/// The child first joins the cgroups whose `cgroup.procs` files are
/// `cgroup_procs`, so everything it ever forks is tracked from the start.
pub fn spawn_batch(
    plan: &BatchPlan,
    cgroup_procs: &[std::path::PathBuf],
) -> Result<i32, SpawnError> {
    write_script(plan)?;

    let path = CString::new(plan.script_path.as_os_str().as_bytes())
        .map_err(|_| SpawnError::Nul("script path"))?;
    let argv: Vec<CString> = plan
        .argv
        .iter()
        .map(|a| cstr(a, "argv"))
        .collect::<Result<_, _>>()?;
    let mut envs: Vec<CString> = plan
        .env
        .to_strings()
        .iter()
        .filter(|s| !s.starts_with("SLURM_TASK_PID="))
        .map(|s| cstr(s, "environment"))
        .collect::<Result<_, _>>()?;
    // Placeholder, overwritten in the child with its pid (space padded).
    envs.push(cstr(
        &format!("SLURM_TASK_PID={}", " ".repeat(PID_DIGITS)),
        "environment",
    )?);
    let pid_slot_off = "SLURM_TASK_PID=".len();
    let work_dir = cstr(&plan.work_dir, "work dir")?;
    let stdin = cstr(&plan.stdin, "stdin")?;
    let stdout = cstr(&plan.stdout, "stdout")?;
    let stderr = cstr(&plan.stderr, "stderr")?;
    let same_err = plan.stderr == plan.stdout;
    let tmp = cstr("/tmp", "work dir")?;
    let groups: Vec<libc::gid_t> = plan.owner.groups.clone();
    let (uid, gid) = (plan.owner.uid, plan.owner.gid);
    let out_flags = libc::O_WRONLY
        | libc::O_CREAT
        | libc::O_CLOEXEC
        | if plan.append {
            libc::O_APPEND
        } else {
            libc::O_TRUNC
        };

    let cg_files: Vec<CString> = cgroup_procs
        .iter()
        .map(|p| CString::new(p.as_os_str().as_bytes()).map_err(|_| SpawnError::Nul("cgroup path")))
        .collect::<Result<_, _>>()?;
    let cg_ptrs: Vec<&CString> = cg_files.iter().take(200).collect();
    let rlimits = plan.rlimits.clone();
    let umask = plan.umask;
    let mut argv_p: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_p.push(std::ptr::null());
    let mut env_p: Vec<*mut libc::c_char> = envs.iter().map(|e| e.as_ptr() as *mut _).collect();
    let pid_slot: *mut libc::c_char = env_p
        .last()
        .copied()
        .unwrap_or(std::ptr::null_mut())
        .wrapping_add(pid_slot_off);
    env_p.push(std::ptr::null_mut());

    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds is a valid 2-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(SpawnError::Fork(std::io::Error::last_os_error()));
    }
    let [rd, wr] = fds;

    // SAFETY: the child below only calls async-signal-safe functions on
    // memory prepared above, then execs or _exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        let err = std::io::Error::last_os_error();
        // SAFETY: our own descriptors.
        unsafe {
            libc::close(rd);
            libc::close(wr);
        }
        return Err(SpawnError::Fork(err));
    }
    if pid == 0 {
        // SAFETY: child side; see above.
        unsafe {
            child(ChildArgs {
                wr,
                cgroups: &cg_ptrs,
                groups: &groups,
                uid,
                gid,
                work_dir: &work_dir,
                tmp: &tmp,
                stdin: &stdin,
                stdout: &stdout,
                stderr: &stderr,
                same_err,
                rlimits: &rlimits,
                umask,
                out_flags,
                pid_slot,
                path: &path,
                argv: argv_p.as_ptr(),
                envp: env_p.as_ptr() as *const *const libc::c_char,
            })
        }
    }
    // SAFETY: parent closes its copy of the write end.
    unsafe { libc::close(wr) };
    let mut buf = [0u8; 5];
    let mut got = 0usize;
    loop {
        // SAFETY: reading into a local buffer.
        let n = unsafe {
            libc::read(
                rd,
                buf.as_mut_ptr().wrapping_add(got) as *mut libc::c_void,
                buf.len() - got,
            )
        };
        if n > 0 {
            got += n as usize;
            if got == buf.len() {
                break;
            }
        } else if n == 0
            || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
        {
            break;
        }
    }
    // SAFETY: our descriptor.
    unsafe { libc::close(rd) };
    if got == 0 {
        return Ok(pid);
    }
    // The child failed before exec: reap it and say why.
    let mut st = 0;
    // SAFETY: our child.
    unsafe { libc::waitpid(pid, &mut st, 0) };
    let errno = i32::from_ne_bytes([buf[1], buf[2], buf[3], buf[4]]);
    let err = std::io::Error::from_raw_os_error(errno);
    Err(match buf[0] {
        STAGE_ID => SpawnError::Identity { uid, gid, err },
        STAGE_STDIN => SpawnError::Open(plan.stdin.clone(), err),
        STAGE_STDOUT => SpawnError::Open(plan.stdout.clone(), err),
        STAGE_STDERR => SpawnError::Open(plan.stderr.clone(), err),
        s if s >= STAGE_CGROUP => SpawnError::Cgroup(
            cgroup_procs
                .get(usize::from(s - STAGE_CGROUP))
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            err,
        ),
        _ => SpawnError::Exec(plan.script_path.display().to_string(), err),
    })
}

struct ChildArgs<'a> {
    wr: libc::c_int,
    cgroups: &'a [&'a CString],
    groups: &'a [libc::gid_t],
    uid: u32,
    gid: u32,
    work_dir: &'a CString,
    tmp: &'a CString,
    stdin: &'a CString,
    stdout: &'a CString,
    stderr: &'a CString,
    same_err: bool,
    rlimits: &'a [(libc::__rlimit_resource_t, u64)],
    umask: Option<u32>,
    out_flags: libc::c_int,
    pid_slot: *mut libc::c_char,
    path: &'a CString,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
}

/// # Safety
/// Called only in a freshly forked child; never returns.
unsafe fn child(a: ChildArgs<'_>) -> ! {
    let fail = |stage: u8| -> ! {
        // SAFETY: errno location and write/_exit are async-signal-safe.
        unsafe {
            let e = *libc::__errno_location();
            let b = e.to_ne_bytes();
            let msg = [stage, b[0], b[1], b[2], b[3]];
            libc::write(a.wr, msg.as_ptr() as *const libc::c_void, msg.len());
            libc::_exit(127)
        }
    };
    // SAFETY: plain syscalls on prepared memory.
    unsafe {
        // Default signal handling and mask for the job.
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
        for s in [
            libc::SIGPIPE,
            libc::SIGINT,
            libc::SIGTERM,
            libc::SIGHUP,
            libc::SIGCHLD,
        ] {
            libc::signal(s, libc::SIG_DFL);
        }
        // Into the job's cgroups while still root ("0" = the writer).
        for (i, f) in a.cgroups.iter().enumerate() {
            let fd = libc::open(f.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if fd < 0 || libc::write(fd, b"0".as_ptr() as *const libc::c_void, 1) != 1 {
                fail(STAGE_CGROUP + i as u8);
            }
            libc::close(fd);
        }
        libc::setsid();
        if libc::setgroups(a.groups.len(), a.groups.as_ptr()) != 0
            || libc::setgid(a.gid) != 0
            || libc::setuid(a.uid) != 0
        {
            fail(STAGE_ID);
        }
        for &(res, v) in a.rlimits {
            let mut r: libc::rlimit = std::mem::zeroed();
            if libc::getrlimit(res, &mut r) == 0 {
                r.rlim_cur = v.min(r.rlim_max);
                libc::setrlimit(res, &r);
            }
        }
        if let Some(m) = a.umask {
            libc::umask(m as libc::mode_t);
        }
        if libc::chdir(a.work_dir.as_ptr()) != 0 {
            libc::chdir(a.tmp.as_ptr());
        }
        let fd0 = libc::open(a.stdin.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd0 < 0 {
            fail(STAGE_STDIN);
        }
        let fd1 = libc::open(a.stdout.as_ptr(), a.out_flags, 0o644);
        if fd1 < 0 {
            fail(STAGE_STDOUT);
        }
        let fd2 = if a.same_err {
            fd1
        } else {
            let fd = libc::open(a.stderr.as_ptr(), a.out_flags, 0o644);
            if fd < 0 {
                fail(STAGE_STDERR);
            }
            fd
        };
        libc::dup2(fd0, 0);
        libc::dup2(fd1, 1);
        libc::dup2(fd2, 2);
        // dup2 onto itself keeps close-on-exec: clear it on 0-2.
        for fd in 0..3 {
            libc::fcntl(fd, libc::F_SETFD, 0);
        }
        // Our pid into SLURM_TASK_PID's reserved digits.
        let mut p = libc::getpid() as u32;
        let mut digits = [b' '; PID_DIGITS];
        let mut i = PID_DIGITS;
        loop {
            i -= 1;
            digits[i] = b'0' + (p % 10) as u8;
            p /= 10;
            if p == 0 || i == 0 {
                break;
            }
        }
        let n = PID_DIGITS - i;
        std::ptr::copy_nonoverlapping(digits.as_ptr().add(i), a.pid_slot as *mut u8, n);
        *a.pid_slot.add(n) = 0;
        libc::execve(a.path.as_ptr(), a.argv, a.envp);
        fail(STAGE_EXEC)
    }
}

/// Waits for `pid` (blocking) and returns its raw wait status.
pub fn wait_blocking(pid: i32) -> i32 {
    let mut st = 0;
    loop {
        // SAFETY: waiting for our own child.
        let r = unsafe { libc::waitpid(pid, &mut st, 0) };
        if r == pid {
            return st;
        }
        if r < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return st;
        }
    }
}
