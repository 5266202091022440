//! Job dependencies (`--dependency`, `scontrol update job Dependency=`):
//! parsed into a list per job, tested before each start attempt, shown as
//! stock shows them (`afterok:12(unfulfilled)`, fulfilled ones dropped).

use super::command::{Reply, Time};
use super::controller::Controller;
use super::dep_syntax::{self, Clause, JobRef, Tasks};
pub use super::deps::{Dep, DepState, DepType, Deps};
use super::error::StateError;
use super::job::JobState;
use slurm_wire::pack::{Reader, Writer, INFINITE, NO_VAL};
use std::collections::BTreeSet;

/// `WAIT_DEPENDENCY` (same value 22.05..26.05).
pub const WAIT_DEPENDENCY: u32 = 2;
/// `WAIT_DEP_INVALID`: DependencyNeverSatisfied.
pub const WAIT_DEP_INVALID: u32 = 39;
/// Elements one job may depend on: each is tested before every start
/// attempt, so a client may not make that list as long as it likes
/// (a whole array is one element, `ID_*` or a plain `ID`).
pub const MAX_DEPENDENCIES: usize = 10_000;

/// Result of testing a job's dependencies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ready,
    Waiting,
    Failed,
}

/// How a dependency target stands.
struct Target {
    /// COMPLETED (every task, for an array).
    complete: bool,
    /// Ended and done completing.
    completed: bool,
    pending: bool,
    start_time: i64,
}

impl Controller {
    fn kill_invalid_depend_conf(&self) -> bool {
        self.conf
            .raw
            .raw("DependencyParameters")
            .is_some_and(|s| s.split(',').any(|p| p.trim() == "kill_invalid_depend"))
    }

    pub(super) fn kill_invalid_depend(&self) -> bool {
        self.kill_invalid_depend_conf()
    }

    /// Resolves `id[_task]` as stock does: a plain id naming an array
    /// means the whole array. None when no such job (or task) exists.
    fn dep_target_exists(&self, job_id: u32, task: &mut u32) -> bool {
        if *task == NO_VAL {
            if self.arrays.is_array_id(job_id) {
                *task = INFINITE;
                return true;
            }
            self.jobs.contains_key(&job_id)
        } else if *task == INFINITE {
            self.arrays.is_array_id(job_id)
        } else {
            self.arrays.find_task(job_id, *task).is_some()
        }
    }

    /// Whether dependency target `(job_id, task)` is (part of) `me`.
    fn is_same_job(&self, me: Option<u32>, job_id: u32, task: u32) -> bool {
        let Some(me) = me else {
            return false;
        };
        match task {
            INFINITE => match self.arrays.task_of(me) {
                Some(r) => r.array_job_id == job_id,
                None => me == job_id,
            },
            NO_VAL => me == job_id,
            t => self.arrays.find_task(job_id, t) == Some(me),
        }
    }

    /// A dependency specification as a submit would parse it: the
    /// elements it holds, or the error code (for the fuzz targets).
    pub fn dependency_elements(&self, spec: &str) -> Result<Vec<Dep>, StateError> {
        self.parse_dependency(None, spec, true)
    }

    /// Parses a dependency specification for job `me` (None at submit).
    /// An empty list clears the job's dependencies. `refuse_unknown`:
    /// afterok/afternotok on an unknown job is an error (23.02+; 22.05
    /// took it and lifted it, the job being gone).
    pub(super) fn parse_dependency(
        &self,
        me: Option<u32>,
        spec: &str,
        refuse_unknown: bool,
    ) -> Result<Vec<Dep>, StateError> {
        let list = dep_syntax::parse(spec).map_err(|e| {
            tracing::debug!("dependency {spec:?} refused: {e}");
            StateError::Dependency
        })?;
        let mut deps = DepSet::default();
        for clause in list.clauses {
            match clause {
                Clause::Singleton(state) => {
                    deps.push(Dep::new(DepType::Singleton, 0, NO_VAL, 0, state))?
                }
                Clause::Bare(job) => {
                    self.add_deps(&mut deps, me, None, job, (0, DepState::Unfulfilled))?
                }
                Clause::Typed { ty, items } => {
                    // Without the job, afterok/afternotok could never be
                    // decided: stock refuses them.
                    let refuse =
                        refuse_unknown && matches!(ty, DepType::AfterOk | DepType::AfterNotOk);
                    for it in items {
                        let when = (it.minutes.saturating_mul(60), it.state);
                        self.add_deps(&mut deps, me, Some((ty, refuse)), it.job, when)?;
                    }
                }
            }
        }
        let mut deps = deps.list;
        if list.any_or {
            for d in &mut deps {
                d.or = true;
            }
        }
        Ok(deps)
    }

    /// The jobs `job` names, as dependencies of `me`. `typed`: the type,
    /// and whether a job that does not exist is refused; None for the old
    /// form (afterany, whose self-check looks at the id as written).
    fn add_deps(
        &self,
        deps: &mut DepSet,
        me: Option<u32>,
        typed: Option<(DepType, bool)>,
        job: JobRef<'_>,
        (time, state): (u32, DepState),
    ) -> Result<(), StateError> {
        let (ty, refuse_unknown) = typed.unwrap_or((DepType::AfterAny, false));
        for (job_id, mut task) in expand(job, self.max_array_size())? {
            let same_as_written = typed.is_none() && self.is_same_job(me, job_id, task);
            let exists = self.dep_target_exists(job_id, &mut task);
            if !exists && refuse_unknown {
                return Err(StateError::Dependency);
            }
            if same_as_written || (typed.is_some() && self.is_same_job(me, job_id, task)) {
                return Err(StateError::Dependency);
            }
            deps.push(Dep::new(ty, job_id, task, time, state))?;
        }
        Ok(())
    }

    fn target(&self, d: &Dep) -> Option<Target> {
        let of = |ids: &[u32]| -> Option<Target> {
            let js: Vec<_> = ids.iter().filter_map(|id| self.jobs.get(id)).collect();
            if js.is_empty() {
                return None;
            }
            Some(Target {
                complete: js.iter().all(|j| j.state == JobState::Complete),
                completed: js
                    .iter()
                    .all(|j| j.state.is_finished() && j.completing.is_empty()),
                pending: js.iter().any(|j| j.state == JobState::Pending),
                start_time: js.iter().map(|j| j.start_time).max().unwrap_or(0),
            })
        };
        match d.task {
            NO_VAL => of(&[d.job_id]),
            INFINITE => {
                let mut t = of(&self.arrays.members(d.job_id))?;
                if self.arrays.metas.get(&d.job_id).is_some_and(|m| m.failed) {
                    t.complete = false;
                }
                Some(t)
            }
            task => of(&[self.arrays.find_task(d.job_id, task)?]),
        }
    }

    /// Tests job `job_id`'s dependencies at `now`, updating their states;
    /// when all are met the list is dropped, as stock flushes it.
    pub(super) fn test_dependencies(&mut self, now: Time, job_id: u32) -> Outcome {
        let Some(mut deps) = self.deps.get(&job_id).cloned() else {
            return Outcome::Ready;
        };
        let Some(me) = self.jobs.get(&job_id) else {
            return Outcome::Ready;
        };
        let (uid, name) = (me.user.uid, me.req.name().map(str::to_string));
        let mut changed = false;
        for d in deps.iter_mut().filter(|d| d.state == DepState::Unfulfilled) {
            let new = if d.ty == DepType::Singleton {
                let same = self.jobs.active_named(uid, &name);
                let blocked = same.iter().filter_map(|id| self.jobs.get(id)).any(|o| {
                    o.job_id != job_id
                        && (o.state == JobState::Running
                            || (o.state == JobState::Pending && o.job_id < job_id))
                });
                (!blocked).then_some(DepState::Fulfilled)
            } else {
                match self.target(d) {
                    // The job is gone: the dependency is lifted.
                    None => Some(DepState::Fulfilled),
                    Some(t) => match d.ty {
                        DepType::After => (!t.pending
                            && (d.time == 0 || now - t.start_time >= i64::from(d.time)))
                        .then_some(DepState::Fulfilled),
                        DepType::AfterAny => t.completed.then_some(DepState::Fulfilled),
                        DepType::AfterNotOk => t.completed.then_some(if t.complete {
                            DepState::Failed
                        } else {
                            DepState::Fulfilled
                        }),
                        DepType::AfterOk | DepType::AfterCorr => {
                            t.completed.then_some(if t.complete {
                                DepState::Fulfilled
                            } else {
                                DepState::Failed
                            })
                        }
                        DepType::Singleton => None,
                    },
                }
            };
            if let Some(s) = new {
                d.state = s;
                changed = true;
            }
        }
        let or_mode = deps.iter().any(|d| d.or);
        let any = |s: DepState| deps.iter().any(|d| d.state == s);
        let outcome = if or_mode {
            if any(DepState::Fulfilled) {
                Outcome::Ready
            } else if any(DepState::Unfulfilled) {
                Outcome::Waiting
            } else {
                Outcome::Failed
            }
        } else if any(DepState::Failed) {
            Outcome::Failed
        } else if any(DepState::Unfulfilled) {
            Outcome::Waiting
        } else {
            Outcome::Ready
        };
        if outcome == Outcome::Ready {
            self.deps.remove(&job_id);
            self.last_job_update = now;
            if let Some(j) = self.jobs.get_mut(&job_id) {
                if j.state_reason == WAIT_DEPENDENCY {
                    j.state_reason = super::job::reason::WAIT_NO_REASON;
                }
            }
        } else if changed {
            self.deps.insert(job_id, deps);
            self.last_job_update = now;
        }
        outcome
    }

    /// The job's dependency as `scontrol show job` prints it; None when
    /// it has none left.
    pub fn dependency_text(&self, job_id: u32) -> Option<String> {
        let deps = self.deps.get(&job_id)?;
        let mut s = String::new();
        let mut sep = "";
        for d in deps.iter().filter(|d| d.state != DepState::Fulfilled) {
            s.push_str(sep);
            if d.ty == DepType::Singleton {
                s.push_str(&format!("singleton({})", d.state.name()));
            } else {
                s.push_str(d.ty.name());
                match d.task {
                    INFINITE => s.push_str(&format!(":{}_*", d.job_id)),
                    NO_VAL => s.push_str(&format!(":{}", d.job_id)),
                    t => s.push_str(&format!(":{}_{t}", d.job_id)),
                }
                if d.time != 0 {
                    s.push_str(&format!("+{}", d.time / 60));
                }
                s.push_str(&format!("({})", d.state.name()));
            }
            sep = if d.or { "?" } else { "," };
        }
        (!s.is_empty()).then_some(s)
    }

    /// Whether job `start`'s dependencies lead back to `me`.
    fn leads_to(&self, me: u32, deps: &[Dep]) -> bool {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<u32> = Vec::new();
        let push_targets = |stack: &mut Vec<u32>, deps: &[Dep]| {
            for d in deps.iter().filter(|d| d.ty != DepType::Singleton) {
                match d.task {
                    NO_VAL => stack.push(d.job_id),
                    INFINITE => stack.extend(self.arrays.members(d.job_id)),
                    t => stack.extend(self.arrays.find_task(d.job_id, t)),
                }
            }
        };
        push_targets(&mut stack, deps);
        while let Some(id) = stack.pop() {
            if id == me {
                return true;
            }
            if !seen.insert(id) || seen.len() > 100_000 {
                continue;
            }
            let finished = self.jobs.get(&id).is_none_or(|j| j.state.is_finished());
            if let (false, Some(ds)) = (finished, self.deps.get(&id)) {
                push_targets(&mut stack, ds);
            }
        }
        false
    }

    /// `scontrol update job=ID Dependency=...` (pending jobs only; for an
    /// array id, every pending record of it).
    pub(super) fn update_dependency(
        &mut self,
        now: Time,
        uid: u32,
        job_id: u32,
        spec: &str,
        fx: &mut Vec<super::command::Effect>,
    ) -> Reply {
        let ids: Vec<u32> = if self.arrays.is_array_id(job_id) {
            self.arrays.members(job_id)
        } else if self.jobs.contains_key(&job_id) {
            vec![job_id]
        } else {
            return Reply::Err(StateError::InvalidJobId);
        };
        let mut rc = Ok(());
        let mut any_pending = false;
        for id in ids {
            let Some(j) = self.jobs.get(&id) else {
                continue;
            };
            if !self.conf.owner_or_operator(uid, j.user.uid) {
                return Reply::Err(StateError::AccessDenied);
            }
            if j.state != JobState::Pending {
                continue;
            }
            any_pending = true;
            let deps = match self.parse_dependency(Some(id), spec, true) {
                Ok(d) => d,
                Err(e) => {
                    rc = Err(e);
                    continue;
                }
            };
            if self.leads_to(id, &deps) {
                rc = Err(StateError::CircularDependency);
                continue;
            }
            if deps.is_empty() {
                self.deps.remove(&id);
            } else {
                self.deps.insert(id, deps);
            }
            if let Some(j) = self.jobs.get_mut(&id) {
                if matches!(j.state_reason, WAIT_DEPENDENCY | WAIT_DEP_INVALID) {
                    j.state_reason = super::job::reason::WAIT_NO_REASON;
                }
            }
            tracing::info!(job_id = id, dependency = spec, "dependency updated");
        }
        if !any_pending && rc.is_ok() {
            return Reply::Err(StateError::JobNotPending);
        }
        self.last_job_update = now;
        self.schedule(now, fx);
        Reply::from(rc)
    }
}

/// A job's dependencies as they are parsed: duplicates dropped, at most
/// [`MAX_DEPENDENCIES`].
#[derive(Default)]
struct DepSet {
    list: Vec<Dep>,
    seen: std::collections::HashSet<(u8, u32, u32)>,
}

impl DepSet {
    fn push(&mut self, d: Dep) -> Result<(), StateError> {
        if self.seen.insert((d.ty.code(), d.job_id, d.task)) {
            if self.list.len() >= MAX_DEPENDENCIES {
                tracing::info!("dependency refused: more than {MAX_DEPENDENCIES} elements");
                return Err(StateError::Dependency);
            }
            self.list.push(d);
        }
        Ok(())
    }
}

/// The (job id, task) pairs a job reference names. A range's task ids are
/// below `max_task` (MaxArraySize; stock's _xlate_array_dep fits them in a
/// bitmap that size): checked before it is expanded. A single task id
/// needs no bound (it is looked up, not expanded).
fn expand(job: JobRef<'_>, max_task: u32) -> Result<Vec<(u32, u32)>, StateError> {
    let id = job.job_id;
    Ok(match job.tasks {
        Tasks::Job => vec![(id, NO_VAL)],
        Tasks::All => vec![(id, INFINITE)],
        Tasks::One(task) => vec![(id, task)],
        Tasks::List(t) => super::tasks::parse_tasks(t, max_task)
            .map_err(|_| StateError::Dependency)?
            .into_iter()
            .map(|t| (id, t))
            .collect(),
    })
}

/// `12`, `12_3`, `12_*`, `12_[1-3]` -> (job id, task) pairs.
pub fn ids_of(tok: &str, max_task: u32) -> Result<Vec<(u32, u32)>, StateError> {
    let job = dep_syntax::job_ref(tok).map_err(|_| StateError::Dependency)?;
    expand(job, max_task)
}

// ------------------------------------------------------------ persistence

pub(super) fn put_deps(w: &mut Writer, deps: &Deps) {
    w.count(deps.len());
    for (id, list) in deps {
        w.u32(*id);
        w.count(list.len());
        for d in list {
            w.u8(d.ty.code());
            w.u32(d.job_id);
            w.u32(d.task);
            w.u32(d.time);
            w.u8(d.state as u8);
            w.bool(d.or);
        }
    }
}

pub(super) fn get_deps(r: &mut Reader<'_>) -> Result<Deps, slurm_wire::DecodeError> {
    let bad = |r: &Reader<'_>, what: &'static str, v: u8| {
        slurm_wire::DecodeError::new(
            slurm_wire::DecodeErrorKind::BadValue {
                what,
                value: u64::from(v),
            },
            r.position(),
        )
    };
    let mut out = Deps::new();
    let n = r.count(8)?;
    for _ in 0..n {
        let id = r.u32()?;
        let k = r.count(15)?;
        let mut list = Vec::with_capacity(k);
        for _ in 0..k {
            let c = r.u8()?;
            let ty = DepType::of(c).ok_or_else(|| bad(r, "dependency type", c))?;
            let job_id = r.u32()?;
            let task = r.u32()?;
            let time = r.u32()?;
            let s = r.u8()?;
            let state = match s {
                0 => DepState::Unfulfilled,
                1 => DepState::Fulfilled,
                2 => DepState::Failed,
                _ => return Err(bad(r, "dependency state", s)),
            };
            let or = r.bool()?;
            list.push(Dep {
                ty,
                job_id,
                task,
                time,
                state,
                or,
            });
        }
        out.insert(id, list);
    }
    Ok(out)
}

#[cfg(test)]
#[path = "depend_tests.rs"]
mod tests;
