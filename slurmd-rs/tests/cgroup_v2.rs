//! cgroup v2 on a real cgroup2 mount of the test's own: the job tree,
//! membership, freezing, signalling, removal and ConstrainDevices' eBPF
//! program, checked by what the kernel does to processes inside.
//!
//! Hosts that bind the memory, cpuset and pids controllers to cgroup v1
//! (as this project's machines do) still have the unified hierarchy, with
//! no controllers in it: limits that need a controller are then refused
//! with a clear error, which is what is checked there. Needs root.

use nix::mount::{mount, umount2, MntFlags, MsFlags};
use nix::sys::signal::Signal;
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::{fork, ForkResult};
use slurmd::cgroup::v2::V2;
use slurmd::cgroup::{CgroupError, Device, Hierarchy, Limits, MemLimits, StepCg, StepName};
use std::ffi::CString;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

/// cgroup2 mounted on a temporary directory; our tree is removed and the
/// mount detached when dropped (also when an assertion fails).
struct Cg2 {
    mnt: tempfile::TempDir,
    root: PathBuf,
}

impl Cg2 {
    fn new(name: &str) -> Cg2 {
        assert!(
            nix::unistd::geteuid().is_root(),
            "these tests mount cgroup2 and attach BPF programs: run them as root"
        );
        let mnt = tempfile::tempdir().unwrap();
        mount(
            Some("cgroup2"),
            mnt.path(),
            Some("cgroup2"),
            MsFlags::empty(),
            None::<&str>,
        )
        .unwrap_or_else(|e| {
            panic!(
                "cannot mount cgroup2 on {}: {e} (a kernel with cgroup2 is needed)",
                mnt.path().display()
            )
        });
        // The unified hierarchy is shared with the host: a unique name.
        let root = mnt
            .path()
            .join(format!("slurm-rs-test-{}-{name}", std::process::id()));
        Cg2 { mnt, root }
    }

    fn hierarchy(&self) -> Hierarchy {
        Hierarchy::V2(V2::new(self.root.clone()))
    }

    fn offers(&self, controller: &str) -> bool {
        std::fs::read_to_string(self.mnt.path().join("cgroup.controllers"))
            .unwrap_or_default()
            .split_whitespace()
            .any(|c| c == controller)
    }
}

impl Drop for Cg2 {
    fn drop(&mut self) {
        // Anything left inside is killed, then the directories go,
        // deepest first.
        let _ = std::fs::write(self.root.join("cgroup.kill"), "1");
        let mut dirs = vec![self.root.clone()];
        let mut i = 0;
        while i < dirs.len() {
            for e in std::fs::read_dir(&dirs[i]).into_iter().flatten().flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    dirs.push(e.path());
                }
            }
            i += 1;
        }
        for d in dirs.iter().rev() {
            for _ in 0..50 {
                if std::fs::remove_dir(d).is_ok() || !d.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        let _ = umount2(self.mnt.path(), MntFlags::MNT_DETACH);
    }
}

fn cstr(p: &Path) -> CString {
    CString::new(p.as_os_str().as_encoded_bytes()).unwrap()
}

/// Forks a child that joins the cgroup of `procs` and opens each of
/// `paths` for reading; returns, per path, None when the open worked and
/// the errno otherwise.
fn opens_in(procs: &Path, paths: &[&Path]) -> Vec<Option<i32>> {
    let procs = cstr(procs);
    let paths: Vec<CString> = paths.iter().map(|p| cstr(p)).collect();
    // Close-on-exec: other tests' children must not hold the write end.
    let (rd, wr) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap();
    // SAFETY: the child only makes raw system calls on data prepared
    // before the fork, then _exits.
    match unsafe { fork() }.unwrap() {
        // SAFETY: as above, in the child.
        ForkResult::Child => unsafe {
            let fd = libc::open(procs.as_ptr(), libc::O_WRONLY);
            if fd < 0 || libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                libc::_exit(2);
            }
            libc::close(fd);
            for p in &paths {
                let f = libc::open(p.as_ptr(), libc::O_RDONLY);
                let e: i32 = if f < 0 {
                    *libc::__errno_location()
                } else {
                    libc::close(f);
                    0
                };
                libc::write(
                    std::os::fd::AsRawFd::as_raw_fd(&wr),
                    (&e as *const i32).cast(),
                    4,
                );
            }
            libc::_exit(0);
        },
        ForkResult::Parent { child } => {
            drop(wr);
            let st = waitpid(child, None).unwrap();
            assert_eq!(
                st,
                WaitStatus::Exited(child, 0),
                "the child could not join the cgroup"
            );
            let mut buf = Vec::new();
            std::io::Read::read_to_end(&mut std::fs::File::from(rd), &mut buf).unwrap();
            buf.chunks(4)
                .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
                .map(|e| (e != 0).then_some(e))
                .collect()
        }
    }
}

fn dev(p: &str) -> Device {
    Device::of_path(Path::new(p)).unwrap_or_else(|| panic!("{p} is not a device"))
}

const ZERO: &str = "/dev/zero";
const FULL: &str = "/dev/full";
const NULL: &str = "/dev/null";

#[test]
fn constrain_devices_denies_only_the_devices_not_given() {
    let c = Cg2::new("devices");
    let h = c.hierarchy();
    let cg = StepCg::batch(1000, 7);
    let job = Limits {
        deny_devices: vec![dev(FULL)],
        ..Default::default()
    };
    h.create_step(&cg, &job, &job).unwrap();
    let procs = &h.procs_files(&cg)[0];
    let p = |s| Path::new(s);
    assert_eq!(
        opens_in(procs, &[p(ZERO), p(FULL), p(NULL)]),
        vec![None, Some(libc::EPERM), None],
        "/dev/full is denied in the job, /dev/zero and /dev/null are not"
    );

    // A step without rules of its own runs under the job's program.
    let s1 = StepCg {
        step: StepName::Id(1),
        ..cg
    };
    h.create_step(&s1, &job, &Limits::default()).unwrap();
    assert_eq!(
        opens_in(&h.procs_files(&s1)[0], &[p(ZERO), p(FULL)]),
        vec![None, Some(libc::EPERM)]
    );

    // A step's own program replaces the job's (the job's allows that):
    // here it denies /dev/zero instead.
    let s0 = StepCg {
        step: StepName::Id(0),
        ..cg
    };
    let step = Limits {
        deny_devices: vec![dev(ZERO)],
        ..Default::default()
    };
    h.create_step(&s0, &job, &step).unwrap();
    assert_eq!(
        opens_in(&h.procs_files(&s0)[0], &[p(ZERO), p(FULL)]),
        vec![Some(libc::EPERM), None]
    );

    // Outside the job nothing is filtered.
    let outside = c.root.join("outside");
    std::fs::create_dir(&outside).unwrap();
    assert_eq!(
        opens_in(&outside.join("cgroup.procs"), &[p(ZERO), p(FULL)]),
        vec![None, None]
    );

    h.remove_job(&cg).unwrap();
    assert!(!c.root.join("uid_1000").exists());
}

fn sleeper() -> Child {
    Command::new("sleep").arg("1000").spawn().unwrap()
}

fn events(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("cgroup.events")).unwrap()
}

#[test]
fn job_tree_membership_freeze_signals_and_removal() {
    let c = Cg2::new("tree");
    let h = c.hierarchy();
    let cg = StepCg::batch(1001, 8);
    h.create_step(&cg, &Limits::default(), &Limits::default())
        .unwrap();
    let jobd = c.root.join("uid_1001/job_8");
    assert!(jobd.join("step_batch/cgroup.procs").is_file());
    assert_eq!(h.jobs(), vec![(1001, 8)]);

    let mut a = sleeper();
    h.attach(&cg, a.id() as i32).unwrap();
    let s0 = StepCg {
        step: StepName::Id(0),
        ..cg
    };
    h.create_step(&s0, &Limits::default(), &Limits::default())
        .unwrap();
    let mut b = sleeper();
    h.attach(&s0, b.id() as i32).unwrap();
    assert_eq!(h.step_pids(&cg), vec![a.id() as i32]);
    let mut both = vec![a.id() as i32, b.id() as i32];
    both.sort_unstable();
    assert_eq!(h.job_pids(&cg), both);
    assert!(events(&jobd).contains("populated 1"));

    // A populated cgroup cannot go.
    assert!(matches!(h.remove_job(&cg), Err(CgroupError::Io { .. })));

    // Freezing the job stops both steps' processes.
    let Hierarchy::V2(v2) = &h else {
        unreachable!()
    };
    assert!(v2.freeze(&cg.job_rel(), true));
    assert!(events(&jobd).contains("frozen 1"), "{}", events(&jobd));
    assert!(v2.freeze(&cg.job_rel(), false));
    assert!(events(&jobd).contains("frozen 0"));

    // A step signal reaches only that step.
    assert_eq!(h.signal(&s0, false, libc::SIGTERM), 1);
    assert_eq!(
        b.wait().unwrap().signal(),
        Some(Signal::SIGTERM as i32),
        "the step's process got SIGTERM"
    );
    assert!(
        a.try_wait().unwrap().is_none(),
        "the batch step is untouched"
    );
    // SIGKILL to the job goes through cgroup.kill.
    assert!(c.root.join("cgroup.kill").exists());
    h.signal(&cg, true, libc::SIGKILL);
    assert_eq!(a.wait().unwrap().signal(), Some(libc::SIGKILL));

    // Emptied, the tree goes, and with it the user's directory.
    for _ in 0..100 {
        if h.job_pids(&cg).is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    h.remove_job(&cg).unwrap();
    assert!(!jobd.exists() && !c.root.join("uid_1001").exists());
    assert!(h.jobs().is_empty());
}

#[test]
fn limits_need_their_controllers() {
    let c = Cg2::new("limits");
    let h = c.hierarchy();
    let cg = StepCg::batch(1002, 9);
    let job = Limits {
        mem: Some(MemLimits {
            limit: 64 << 20,
            soft: 64 << 20,
            memsw: None,
            swappiness: None,
        }),
        cpus: Some(vec![0]),
        ..Default::default()
    };
    let r = h.create_step(&cg, &job, &Limits::default());
    let jobd = c.root.join("uid_1002/job_9");
    if c.offers("memory") && c.offers("cpuset") {
        r.unwrap();
        let rd = |f: &str| std::fs::read_to_string(jobd.join(f)).unwrap();
        assert_eq!(rd("memory.max").trim(), (64u64 << 20).to_string());
        assert_eq!(rd("cpuset.cpus").trim(), "0");
        assert!(rd("cgroup.subtree_control").contains("memory"));
        // The step inherits: its processes are charged to the job.
        let mut s = sleeper();
        h.attach(&cg, s.id() as i32).unwrap();
        assert_eq!(h.oom_kills(&cg), 0);
        let _ = s.kill();
        let _ = s.wait();
    } else {
        // This host binds them to v1: a job asking for limits must not
        // start unconstrained.
        match r {
            Err(CgroupError::NoController { controller, path }) => {
                assert_eq!(controller, "memory");
                assert_eq!(Path::new(&path), jobd);
            }
            r => panic!("expected a missing-controller error, got {r:?}"),
        }
        eprintln!(
            "memory/cpuset are not in the unified hierarchy here: memory.max, cpuset.cpus and memory.events were not exercised on a real mount"
        );
    }
    h.remove_job(&cg).unwrap();
}
