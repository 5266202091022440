//! Faults injected under the log (a full disk part way through a record, a
//! failing fsync, damage in the middle of the file, a panic in `apply`):
//! no job is lost or invented, and a restart finds what was acknowledged.

use super::commit::{Fatal, Pipeline};
use super::fsio::{RealDir, StateDir, WriteFile};
use super::*;
use crate::state::error::StateError;
use crate::state::job::{JobState, UserInfo};
use crate::state::testkit::{complete_cmd, controller, reg_bare, submit_cmd};
use crate::state::{Effect, Reply};
use slurm_wire::msg::job_desc::JobDescMsg;
use slurm_wire::ProtocolVersion;
use std::io;
use std::sync::{Arc, Mutex};

const CONF: &str = crate::state::testkit::TWO_NODES;

/// What fails: writes once `room` bytes are used up (None: unlimited),
/// and fsync while `sync_fails`.
#[derive(Default)]
struct Plan {
    room: Option<usize>,
    sync_fails: bool,
}

#[derive(Clone, Default)]
struct Faults(Arc<Mutex<Plan>>);

impl Faults {
    fn full_after(&self, bytes: usize) {
        self.0.lock().unwrap().room = Some(bytes);
    }
    fn space_back(&self) {
        self.0.lock().unwrap().room = None;
    }
    fn sync_fails(&self, v: bool) {
        self.0.lock().unwrap().sync_fails = v;
    }
}

struct FaultyFile(Box<dyn WriteFile>, Faults);

impl WriteFile for FaultyFile {
    fn append(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut p = self.1 .0.lock().unwrap();
        let n = match p.room {
            Some(0) => return Err(io::Error::from_raw_os_error(libc::ENOSPC)),
            Some(r) => r.min(buf.len()),
            None => buf.len(),
        };
        let n = self.0.append(&buf[..n])?;
        if let Some(r) = p.room.as_mut() {
            *r -= n;
        }
        Ok(n)
    }
    fn sync(&mut self) -> io::Result<()> {
        if self.1 .0.lock().unwrap().sync_fails {
            return Err(io::Error::from_raw_os_error(libc::EIO));
        }
        self.0.sync()
    }
    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.0.truncate(len)
    }
}

struct FaultyDir(Faults);

impl StateDir for FaultyDir {
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn WriteFile>> {
        Ok(Box::new(FaultyFile(
            RealDir.open_append(path)?,
            self.0.clone(),
        )))
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn WriteFile>> {
        Ok(Box::new(FaultyFile(RealDir.create(path)?, self.0.clone())))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        RealDir.rename(from, to)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        RealDir.sync_dir(dir)
    }
}

struct Rig {
    dir: tempfile::TempDir,
    faults: Faults,
    store: Store,
    ctrl: Controller,
    pipe: Pipeline<u32>,
    t: Time,
}

fn rig() -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let faults = Faults::default();
    let (store, loaded) = Store::open_in(
        dir.path(),
        controller(CONF),
        false,
        Box::new(FaultyDir(faults.clone())),
    )
    .unwrap();
    Rig {
        dir,
        faults,
        store,
        ctrl: loaded.controller,
        pipe: Pipeline::default(),
        t: 1000,
    }
}

fn plain_apply(c: &mut Controller, t: Time, cmd: Command) -> (Reply, Vec<Effect>) {
    c.apply(t, cmd)
}

impl Rig {
    /// One batch through the pipeline; the replies by tag.
    fn run(&mut self, batch: Vec<(Command, u32)>) -> Vec<(u32, Reply)> {
        self.t += 1;
        let out = self
            .pipe
            .run(
                Some(&mut self.store),
                &mut self.ctrl,
                self.t,
                batch,
                &mut plain_apply,
            )
            .unwrap_or_else(|f| panic!("{}", f.cause));
        let mut r = out.replies;
        r.sort_by_key(|(k, _)| *k);
        r
    }
    fn one(&mut self, cmd: Command) -> Reply {
        self.run(vec![(cmd, 0)]).pop().unwrap().1
    }
    /// The jobs a restart finds (on a copy: a start rewrites the files).
    fn restart(&self) -> Vec<(u32, JobState)> {
        let copy = tempfile::tempdir().unwrap();
        for f in [SNAP_FILE, WAL_FILE] {
            let from = self.dir.path().join(f);
            if from.exists() {
                fs::copy(from, copy.path().join(f)).unwrap();
            }
        }
        let (_, loaded) = Store::open(copy.path(), controller(CONF), false).unwrap();
        jobs(&loaded.controller)
    }
}

fn jobs(c: &Controller) -> Vec<(u32, JobState)> {
    c.jobs().values().map(|j| (j.job_id, j.state)).collect()
}

fn submit() -> Command {
    submit_cmd(
        UserInfo {
            uid: 1000,
            gid: 1000,
            name: Some("alice".into()),
            ..Default::default()
        },
        JobDescMsg {
            num_tasks: 1,
            min_cpus: 1,
            script: Some("#!/bin/sh\nsleep 100\n".into()),
            work_dir: Some("/tmp".into()),
            ..JobDescMsg::unset()
        },
        ProtocolVersion::V24_11,
    )
}

fn reg(n: &str) -> Command {
    reg_bare(n, 4, 1000, ProtocolVersion::V24_11)
}

#[test]
fn enospc_part_way_through_a_record_refuses_it_and_the_next_start_is_clean() {
    let mut r = rig();
    assert_eq!(r.one(submit()), Reply::Submitted { job_id: 1 });
    // Room for part of the next record only.
    r.faults.full_after(10);
    assert_eq!(r.one(submit()), Reply::Err(StateError::WriteFailed));
    assert_eq!(jobs(&r.ctrl), vec![(1, JobState::Pending)]);
    // A crash now: the partial record is not there to be taken for damage.
    assert_eq!(r.restart(), vec![(1, JobState::Pending)]);
    // Space returns: the next job gets the next id, in memory and on disk.
    r.faults.space_back();
    assert_eq!(r.one(submit()), Reply::Submitted { job_id: 2 });
    let want = vec![(1, JobState::Pending), (2, JobState::Pending)];
    assert_eq!(jobs(&r.ctrl), want);
    assert_eq!(r.restart(), want);
}

#[test]
fn a_failed_fsync_refuses_the_batch_and_leaves_no_ghost_job() {
    let mut r = rig();
    assert_eq!(r.one(submit()), Reply::Submitted { job_id: 1 });
    r.faults.sync_fails(true);
    let replies = r.run(vec![(submit(), 1), (submit(), 2)]);
    assert_eq!(
        replies,
        vec![
            (1, Reply::Err(StateError::WriteFailed)),
            (2, Reply::Err(StateError::WriteFailed))
        ]
    );
    assert_eq!(jobs(&r.ctrl), vec![(1, JobState::Pending)]);
    assert!(!r.store.healthy());
    // A crash now replays no refused submission.
    assert_eq!(r.restart(), vec![(1, JobState::Pending)]);
    // The disk works again: a snapshot replaces the suspect log and job 2
    // is the next one, once, after a restart too.
    r.faults.sync_fails(false);
    assert_eq!(r.one(submit()), Reply::Submitted { job_id: 2 });
    assert!(r.store.healthy());
    let want = vec![(1, JobState::Pending), (2, JobState::Pending)];
    assert_eq!(r.restart(), want);
}

#[test]
fn ticks_are_not_applied_when_logging_them_failed() {
    let mut r = rig();
    r.one(reg("n1"));
    assert_eq!(r.one(submit()), Reply::Submitted { job_id: 1 });
    let before = r.ctrl.jobs()[&1].clone();
    // A time limit that a Tick would enforce.
    assert_eq!(before.state, JobState::Running);
    r.faults.full_after(0);
    let ticks_before = r.ctrl.last_ping();
    r.t += 100_000;
    assert_eq!(r.one(Command::Tick), Reply::Err(StateError::WriteFailed));
    assert_eq!(r.ctrl.last_ping(), ticks_before, "the Tick was applied");
    assert_eq!(r.ctrl.jobs()[&1].state, JobState::Running);
    assert_eq!(r.ctrl.nodes()[0].base, crate::state::node::Base::Up);
    // Logged again, the Tick does its work.
    r.faults.space_back();
    assert_eq!(r.one(Command::Tick), Reply::Ok);
    assert_ne!(r.ctrl.last_ping(), ticks_before);
}

#[test]
fn a_completion_that_cannot_be_logged_is_held_and_applied_once_space_returns() {
    let mut r = rig();
    r.one(reg("n1"));
    assert_eq!(r.one(submit()), Reply::Submitted { job_id: 1 });
    assert_eq!(r.ctrl.jobs()[&1].state, JobState::Running);
    r.faults.full_after(0);
    // The node's completion waits (no reply yet); a new job is refused.
    let replies = r.run(vec![
        (complete_cmd(1, 0, Some("n1".into())), 1),
        (submit(), 2),
    ]);
    assert_eq!(replies, vec![(2, Reply::Err(StateError::WriteFailed))]);
    assert_eq!(r.pipe.held(), 1);
    assert_eq!(r.ctrl.jobs()[&1].state, JobState::Running);
    assert_eq!(r.restart(), vec![(1, JobState::Running)]);
    // Space returns: the next pass (a Tick) logs and applies it, answers.
    r.faults.space_back();
    let replies = r.run(vec![(Command::Tick, 3)]);
    assert_eq!(replies, vec![(1, Reply::Ok), (3, Reply::Ok)]);
    assert_eq!(r.pipe.held(), 0);
    assert_eq!(r.ctrl.jobs()[&1].state, JobState::Complete);
    assert_eq!(r.restart(), vec![(1, JobState::Complete)]);
}

#[test]
fn damage_in_the_middle_of_the_log_stops_the_start_and_is_not_cut() {
    let mut r = rig();
    for _ in 0..3 {
        r.one(submit());
    }
    let path = r.dir.path().join(WAL_FILE);
    let mut b = fs::read(&path).unwrap();
    // The second record's length, made to run past the end.
    let second = wal::scan(&b, 12, FORMAT_VERSION).unwrap().records[1].offset;
    b[second + 4] = 0x40;
    fs::write(&path, &b).unwrap();
    let e = Store::open(r.dir.path(), controller(CONF), false)
        .err()
        .expect("a damaged log must not load");
    let text = e.to_string();
    assert!(
        matches!(e, PersistError::MidLog { offset, .. } if offset == second),
        "{text}"
    );
    assert!(text.contains(&format!("truncate -s {second}")), "{text}");
    assert!(text.contains("-i"), "{text}");
    // Nothing was cut: the records after the damage are still there.
    assert_eq!(fs::read(&path).unwrap(), b);
}

fn panic_on_kill(c: &mut Controller, t: Time, cmd: Command) -> (Reply, Vec<Effect>) {
    if matches!(cmd, Command::Signal { .. }) {
        panic!("injected fault in apply");
    }
    c.apply(t, cmd)
}

#[test]
fn a_panic_in_apply_is_fatal_with_its_cause_and_a_restart_serves_again() {
    let mut r = rig();
    r.one(submit());
    let batch = vec![
        (submit(), 1),
        (crate::state::testkit::kill_cmd(1000, 1), 2),
        (submit(), 3),
    ];
    let res = r.pipe.run(
        Some(&mut r.store),
        &mut r.ctrl,
        r.t + 1,
        batch,
        &mut panic_on_kill,
    );
    let Err(Fatal { cause, replies }) = res else {
        panic!("a panic in apply must be fatal")
    };
    assert!(cause.0.contains("injected fault in apply"), "{cause}");
    assert!(cause.0.contains("fault_tests.rs"), "the place: {cause}");
    // What was applied before it is answered truly.
    assert_eq!(replies, vec![(1, Reply::Submitted { job_id: 2 })]);
    // The restart does not replay the panicking command (nor the one after
    // it, never applied), and loads.
    let want = vec![(1, JobState::Pending), (2, JobState::Pending)];
    assert_eq!(r.restart(), want);
}

/// The log's length on disk.
fn wal_len(r: &Rig) -> u64 {
    fs::metadata(r.dir.path().join(WAL_FILE))
        .map(|m| m.len())
        .unwrap_or(0)
}

#[test]
fn refused_commands_are_answered_and_never_logged() {
    use crate::state::testkit::{kill_cmd, update_job_cmd};
    use slurm_wire::msg::node::UpdateNodeMsg;
    let mut r = rig();
    r.one(reg("n1"));
    assert!(matches!(r.one(submit()), Reply::Submitted { job_id: 1 }));
    let before = wal_len(&r);
    assert!(before > 0);
    // `scontrol update nodename=n1 state=down` as a plain user, a
    // stranger's cancel and update, a submit naming root in its body.
    let down = Command::UpdateNode {
        uid: 1000,
        msg: Box::new(UpdateNodeMsg {
            node_names: Some("n1".into()),
            node_state: crate::state::node::bits::DOWN,
            reason: Some("mine now".into()),
            ..Default::default()
        }),
    };
    let Command::Submit {
        user,
        mut desc,
        version,
    } = submit()
    else {
        unreachable!()
    };
    desc.user_id = 0;
    let as_root = Command::Submit {
        user,
        desc,
        version,
    };
    let replies = r.run(vec![
        (down, 1),
        (kill_cmd(1001, 1), 2),
        (update_job_cmd(1001, 1, |d| d.time_limit = 1), 3),
        (as_root, 4),
    ]);
    assert_eq!(
        replies,
        [
            (1, Reply::Err(StateError::InvalidUserId)),
            (2, Reply::Err(StateError::AccessDenied)),
            (3, Reply::Err(StateError::InvalidUserId)),
            (4, Reply::Err(StateError::InvalidUserId)),
        ]
    );
    assert_eq!(wal_len(&r), before, "a refused command was logged");
    assert_eq!(r.restart(), [(1, JobState::Running)]);
    // In the same batch as accepted ones: only those are logged.
    let replies = r.run(vec![(kill_cmd(1001, 1), 1), (kill_cmd(1000, 1), 2)]);
    assert_eq!(
        replies,
        [(1, Reply::Err(StateError::AccessDenied)), (2, Reply::Ok)]
    );
    assert!(wal_len(&r) > before);
    assert_eq!(r.restart(), [(1, JobState::Cancelled)]);
}

#[test]
fn refusals_are_answered_even_while_the_log_cannot_be_written() {
    use crate::state::testkit::kill_cmd;
    let mut r = rig();
    r.one(reg("n1"));
    assert!(matches!(r.one(submit()), Reply::Submitted { job_id: 1 }));
    r.faults.full_after(0);
    // The stranger hears the real answer, not "cannot write".
    assert_eq!(
        r.one(kill_cmd(1001, 1)),
        Reply::Err(StateError::AccessDenied)
    );
    assert_eq!(
        r.one(kill_cmd(1000, 1)),
        Reply::Err(StateError::WriteFailed)
    );
}
