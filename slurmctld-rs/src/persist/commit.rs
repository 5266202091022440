//! Log, then apply: the actor's pass over a batch of commands.
//!
//! Every command that changes state (Ticks included) is appended to the
//! log and the batch synced before any of it is applied; a command whose
//! record did not make it to disk is not applied. While the log cannot be
//! written (ENOSPC, a failed fsync):
//! * client requests that change state are refused with
//!   ESLURM_WRITING_TO_FILE and change nothing;
//! * what nodes report (completions, epilogs, registrations, launch
//!   failures, ping answers) is held in memory, in order, and logged and
//!   applied as soon as the log takes records again; its sender gets the
//!   real reply then. Nothing is applied and then forgotten;
//! * Ticks are dropped (the next one does their work), but nodes are still
//!   pinged, so that their answers (held) keep them up once space returns;
//! * reads never come here: they use the published snapshot.
//!
//! A command refused for who sent it (see [`Controller::refuse_before_log`])
//! is answered before any of this: it is neither logged nor applied.
//!
//! A panic in `apply` takes the records of the panicking command and of the
//! rest of its batch (logged, not applied) back out of the log, so that a
//! restart does not replay it into the same panic, and is returned as
//! [`Fatal`]: the daemon stops. If even that cut fails, the next start
//! stops at the record with [`super::PersistError::ReplayPanic`].

pub use super::panics::{catch_panic, install_panic_hook, payload_text};
use super::{Mark, Store};
use crate::state::error::StateError;
use crate::state::msgs;
use crate::state::node::Base;
use crate::state::refuse::BatchSoFar;
use crate::state::{Command, Controller, Effect, Purpose, Reply, Time, WhenLogDown};
use std::collections::{BTreeMap, VecDeque};

/// How one command is applied (`Controller::apply`, or a test's).
pub type ApplyFn<'a> = dyn FnMut(&mut Controller, Time, Command) -> (Reply, Vec<Effect>) + 'a;

/// Most node reports held while the log cannot be written; past it they
/// are refused (the sender sees the error).
pub const MAX_HELD: usize = 100_000;

/// The state machine panicked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the state machine panicked: {0}")]
pub struct Panicked(pub String);

/// A panic in `apply`: the daemon must stop. `replies` answer the commands
/// applied before it (durable, so true).
pub struct Fatal<R> {
    pub cause: Panicked,
    pub replies: Vec<(R, Reply)>,
}

/// What a batch gave.
pub struct Outcome<R> {
    pub replies: Vec<(R, Reply)>,
    pub effects: Vec<Effect>,
    /// A reconfiguration was applied: only a snapshot records it.
    pub reconfigured: bool,
}

/// Node reports waiting for the log, and the outage's ping clock.
pub struct Pipeline<R> {
    held: VecDeque<(Command, R)>,
    /// The newest liveness report per node (older ones are moot).
    liveness: BTreeMap<String, (Command, R)>,
    last_outage_ping: Time,
    failing: bool,
}

impl<R> Default for Pipeline<R> {
    fn default() -> Self {
        Pipeline {
            held: VecDeque::new(),
            liveness: BTreeMap::new(),
            last_outage_ping: 0,
            failing: false,
        }
    }
}

impl<R> Pipeline<R> {
    /// Node reports waiting for the log.
    pub fn held(&self) -> usize {
        self.held.len() + self.liveness.len()
    }

    /// Logs and applies `batch` (after what is held) at `t`. `store` None:
    /// no state is kept, commands are applied as they come.
    pub fn run(
        &mut self,
        store: Option<&mut Store>,
        ctrl: &mut Controller,
        t: Time,
        batch: Vec<(Command, R)>,
        apply: &mut ApplyFn<'_>,
    ) -> Result<Outcome<R>, Fatal<R>> {
        let mut out = Outcome {
            replies: Vec::new(),
            effects: Vec::new(),
            reconfigured: false,
        };
        let Some(store) = store else {
            let todo = batch.into_iter().map(|(c, r)| (c, r, None)).collect();
            apply_all(ctrl, t, todo, apply, None, &mut out)?;
            return Ok(out);
        };
        // A suspect log is replaced first: by a snapshot of the state, which
        // holds exactly the commands that were applied.
        if !store.healthy() {
            if let Err(e) = store.snapshot(ctrl) {
                tracing::debug!("state still cannot be saved: {e}");
            }
        }
        let mut queue: Vec<(Command, R)> = self.held.drain(..).collect();
        queue.extend(std::mem::take(&mut self.liveness).into_values());
        queue.extend(batch);
        let mut todo = Vec::with_capacity(queue.len());
        let mut blocked = false;
        let mut refused_tick = false;
        let mut so_far = BatchSoFar::default();
        for (cmd, r) in queue {
            // Refused for who sent it: answered now, never logged.
            if let Some(reply) = ctrl.refuse_before_log(&cmd, &so_far) {
                out.replies.push((r, reply));
                continue;
            }
            so_far.note(&cmd);
            if blocked && cmd.meta().logged {
                refused_tick |= matches!(cmd, Command::Tick);
                self.defer(cmd, r, &mut out);
                continue;
            }
            match store.append(t, &cmd) {
                Ok(m) => todo.push((cmd, r, m)),
                Err(e) => {
                    if !self.failing {
                        tracing::error!("cannot log commands, refusing state changes: {e}");
                        self.failing = true;
                    }
                    // Nothing later is written in this pass: order is kept.
                    blocked = true;
                    refused_tick |= matches!(cmd, Command::Tick);
                    self.defer(cmd, r, &mut out);
                }
            }
        }
        if todo.iter().any(|(_, _, m)| m.is_some()) {
            if let Err(e) = store.commit() {
                tracing::error!("cannot sync the command log, its records are refused: {e}");
                self.failing = true;
                let mut keep = Vec::new();
                for (cmd, r, m) in todo {
                    if m.is_some() {
                        refused_tick |= matches!(cmd, Command::Tick);
                        self.defer(cmd, r, &mut out);
                    } else {
                        keep.push((cmd, r, None));
                    }
                }
                todo = keep;
            }
        }
        if refused_tick {
            self.outage_pings(ctrl, t, &mut out.effects);
        } else if self.failing && self.held() == 0 && store.healthy() {
            tracing::info!("commands are logged again");
            self.failing = false;
        }
        apply_all(ctrl, t, todo, apply, Some(store), &mut out)?;
        Ok(out)
    }

    /// A command that could not be logged: held if it reports what
    /// happened, refused otherwise.
    fn defer(&mut self, cmd: Command, r: R, out: &mut Outcome<R>) {
        let total = self.held();
        let (held, newest_of) = match cmd.meta().when_log_down {
            WhenLogDown::Refused => (false, None),
            WhenLogDown::Held => (true, None),
            WhenLogDown::NewestOf(node) => (false, Some(node.to_owned())),
        };
        match newest_of {
            Some(node) if total < MAX_HELD || self.liveness.contains_key(&node) => {
                if let Some((_, old)) = self.liveness.insert(node, (cmd, r)) {
                    out.replies.push((old, Reply::Ok));
                }
            }
            _ if held && total < MAX_HELD => self.held.push_back((cmd, r)),
            _ => {
                if held {
                    tracing::error!("{MAX_HELD} node reports wait for the log; refusing {cmd:?}");
                }
                out.replies.push((r, Reply::Err(StateError::WriteFailed)));
            }
        }
    }

    /// The pings a Tick would send, while Ticks cannot be applied.
    fn outage_pings(&mut self, ctrl: &Controller, t: Time, fx: &mut Vec<Effect>) {
        let timeout = ctrl.conf().slurmd_timeout();
        if timeout <= 0 || t - self.last_outage_ping < (timeout / 3).max(1) {
            return;
        }
        self.last_outage_ping = t;
        for n in ctrl.nodes().iter().filter(|n| n.base != Base::Future) {
            let ping = slurm_wire::Message::RequestPing(Default::default());
            if let Some(o) = msgs::outbound(n, ping, Purpose::Ping) {
                fx.push(Effect::Send(Box::new(o)));
            }
        }
    }
}

/// Applies the logged commands in log order. On a panic, the records from
/// the panicking command on are taken back out of the log.
fn apply_all<R>(
    ctrl: &mut Controller,
    t: Time,
    todo: Vec<(Command, R, Option<Mark>)>,
    apply: &mut ApplyFn<'_>,
    store: Option<&mut Store>,
    out: &mut Outcome<R>,
) -> Result<(), Fatal<R>> {
    let marks: Vec<Option<Mark>> = todo.iter().map(|(_, _, m)| *m).collect();
    for (i, (cmd, r, _)) in todo.into_iter().enumerate() {
        let reconfigure = cmd.meta().reconfigures;
        match catch_panic(|| apply(ctrl, t, cmd)) {
            Ok((reply, fx)) => {
                out.reconfigured |= reconfigure;
                out.effects.extend(fx);
                out.replies.push((r, reply));
            }
            Err(msg) => {
                tracing::error!("the state machine panicked: {msg}");
                if let (Some(s), Some(m)) = (store, marks[i..].iter().flatten().next()) {
                    match s.discard_from(*m) {
                        Ok(()) => tracing::error!(
                            "the command that panicked (and those after it in its batch) \
                             were taken out of the log: they were never applied"
                        ),
                        Err(e) => tracing::error!(
                            "cannot take the command that panicked out of the log ({e}); \
                             the next start stops at it"
                        ),
                    }
                }
                return Err(Fatal {
                    cause: Panicked(msg),
                    replies: std::mem::take(&mut out.replies),
                });
            }
        }
    }
    Ok(())
}
