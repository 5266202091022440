//! `sdiag` counters that need a clock or live in the daemon shell: RPCs by
//! type and user, threads, the agent, and scheduler cycle times. Job
//! counts come from the state machine's [`Counters`]; a reset stores
//! a baseline of them.

use crate::state::counters::Counters;
use crate::state::job::JobState;
use crate::state::Controller;
use slurm_wire::msg::stats::{StatsInfoResponseMsg, StatsParts};
use slurm_wire::{MsgType, ProtocolVersion};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Number of `schedule_exit` and `bf_exit` slots (SCHEDULE_EXIT_COUNT,
/// BF_EXIT_COUNT in 23.11..26.05).
const EXIT_SLOTS: usize = 6;
/// `SCHEDULE_EXIT_END`: the pass reached the end of the queue.
const SCHEDULE_EXIT_END: usize = 0;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Tally {
    count: u32,
    /// Microseconds.
    time: u64,
}

impl Tally {
    fn add(&mut self, d: Duration) {
        self.count = self.count.wrapping_add(1);
        self.time = self
            .time
            .saturating_add(u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
    }
}

#[derive(Debug, Default)]
struct Inner {
    /// `req_time_start`: start-up or last reset.
    since: i64,
    by_type: BTreeMap<MsgType, Tally>,
    by_user: BTreeMap<u32, Tally>,
    /// The state machine's counters at the last reset.
    base: Counters,
    cycle_last: u32,
    cycle_max: u32,
    cycle_sum: u64,
    /// Scheduler cycles timed since the last reset.
    cycles_timed: u32,
    bf_cycle_last: u32,
    bf_cycle_max: u32,
    bf_cycle_sum: u64,
    schedule_exit_end: u32,
}

/// Shared by every request handler; cheap to update.
#[derive(Debug, Default)]
pub struct Stats {
    inner: Mutex<Inner>,
    /// RPC handlers running now (stock: server_thread_count).
    threads: AtomicU32,
    /// Outbound messages to nodes not yet finished.
    agent: AtomicU32,
}

/// Counts one running thing while it lives.
pub struct Busy<'a>(&'a AtomicU32);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Stats {
    pub fn new(now: i64, base: Counters) -> Self {
        Stats {
            inner: Mutex::new(Inner {
                since: now,
                base,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves plain counters; keep them.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An RPC handler starts; the guard ends it.
    pub fn server_thread(&self) -> Busy<'_> {
        self.threads.fetch_add(1, Ordering::Relaxed);
        Busy(&self.threads)
    }

    /// An outbound message to a node is in flight until the guard drops.
    pub fn agent_message(&self) -> Busy<'_> {
        self.agent.fetch_add(1, Ordering::Relaxed);
        Busy(&self.agent)
    }

    /// Outbound messages to nodes not yet finished.
    pub fn agent_in_flight(&self) -> u32 {
        self.agent.load(Ordering::Relaxed)
    }

    /// One RPC of type `ty` from `uid` took `d`.
    pub fn rpc(&self, ty: MsgType, uid: u32, d: Duration) {
        let mut g = self.lock();
        g.by_type.entry(ty).or_default().add(d);
        g.by_user.entry(uid).or_default().add(d);
    }

    /// A command that ran `cycles` scheduler passes took `d` in all.
    /// The time of one command whose scheduling passes are `passes` (its
    /// counters' growth). The state machine has no clock, so a command that
    /// ran a backfill pass counts as backfill time, else as main passes'.
    pub fn pass_time(&self, passes: &Counters, d: Duration) {
        if passes.bf_cycles > 0 {
            self.backfill_time(passes.bf_cycles, d);
        } else {
            self.schedule_time(passes.schedule_cycles, d);
        }
    }

    fn backfill_time(&self, cycles: u32, d: Duration) {
        let us = u32::try_from(d.as_micros() / u128::from(cycles.max(1))).unwrap_or(u32::MAX);
        let mut g = self.lock();
        g.bf_cycle_last = us;
        g.bf_cycle_max = g.bf_cycle_max.max(us);
        g.bf_cycle_sum = g
            .bf_cycle_sum
            .saturating_add(u64::from(us).saturating_mul(u64::from(cycles)));
    }

    fn schedule_time(&self, cycles: u32, d: Duration) {
        if cycles == 0 {
            return;
        }
        let us = u32::try_from(d.as_micros() / u128::from(cycles)).unwrap_or(u32::MAX);
        let mut g = self.lock();
        g.cycle_last = us;
        g.cycle_max = g.cycle_max.max(us);
        g.cycle_sum = g
            .cycle_sum
            .saturating_add(u64::from(us).saturating_mul(u64::from(cycles)));
        g.cycles_timed = g.cycles_timed.wrapping_add(cycles);
        g.schedule_exit_end = g.schedule_exit_end.wrapping_add(cycles);
    }

    /// `sdiag -r`: everything starts again from `now`.
    pub fn reset(&self, now: i64, current: Counters) {
        let mut g = self.lock();
        *g = Inner {
            since: now,
            base: current,
            ..Default::default()
        };
    }

    /// RESPONSE_STATS_INFO for a client speaking `v`.
    pub fn response(
        &self,
        snap: &Controller,
        now: i64,
        v: ProtocolVersion,
    ) -> StatsInfoResponseMsg {
        let g = self.lock();
        let c = snap.counters().since(&g.base);
        let (mut pending, mut running) = (0u32, 0u32);
        for j in snap.jobs().values() {
            match j.state {
                JobState::Pending => pending = pending.saturating_add(1),
                JobState::Running => running = running.saturating_add(1),
                _ => {}
            }
        }
        let agent = self.agent.load(Ordering::Relaxed);
        let mut schedule_exit = vec![0; EXIT_SLOTS];
        if let Some(e) = schedule_exit.get_mut(SCHEDULE_EXIT_END) {
            *e = g.schedule_exit_end;
        }
        let parts = StatsParts {
            req_time: now,
            req_time_start: g.since,
            server_thread_count: self.threads.load(Ordering::Relaxed),
            agent_queue_size: agent,
            agent_count: agent,
            agent_thread_count: agent,
            jobs_submitted: c.jobs_submitted,
            jobs_started: c.jobs_started,
            jobs_completed: c.jobs_completed,
            jobs_canceled: c.jobs_canceled,
            jobs_failed: c.jobs_failed,
            jobs_pending: pending,
            jobs_running: running,
            job_states_ts: now,
            schedule_cycle_max: g.cycle_max,
            schedule_cycle_last: g.cycle_last,
            schedule_cycle_sum: g.cycle_sum,
            schedule_cycle_counter: c.schedule_cycles,
            schedule_cycle_depth: c.schedule_depth_sum,
            schedule_exit,
            schedule_queue_len: c.schedule_queue_len,
            bf_exit: vec![0; EXIT_SLOTS],
            bf_backfilled_jobs: c.bf_backfilled_jobs,
            bf_cycle_counter: c.bf_cycles,
            bf_cycle_sum: g.bf_cycle_sum,
            bf_cycle_last: g.bf_cycle_last,
            bf_cycle_max: g.bf_cycle_max,
            bf_last_depth: c.bf_last_depth,
            bf_last_depth_try: c.bf_last_depth,
            bf_depth_sum: c.bf_depth_sum,
            bf_depth_try_sum: c.bf_depth_sum,
            bf_queue_len: c.bf_queue_len,
            bf_when_last_cycle: snap.sched().last_backfill,
            ..Default::default()
        };
        let mut m = StatsInfoResponseMsg {
            parts_packed: 1,
            parts,
            ..Default::default()
        };
        // Stock lists types by their number; skip ones this client's
        // release has no number for.
        for (ty, t) in &g.by_type {
            if let Some(id) = ty.to_wire(v) {
                m.rpc_type_id.push(id);
                m.rpc_type_cnt.push(t.count);
                m.rpc_type_time.push(t.time);
            }
        }
        m.rpc_type_size = u32::try_from(m.rpc_type_id.len()).unwrap_or(u32::MAX);
        for (uid, t) in &g.by_user {
            m.rpc_user_id.push(*uid);
            m.rpc_user_cnt.push(t.count);
            m.rpc_user_time.push(t.time);
        }
        m.rpc_user_size = u32::try_from(m.rpc_user_id.len()).unwrap_or(u32::MAX);
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::testkit;
    use crate::state::Command;

    #[test]
    fn rpcs_are_tallied_by_type_and_user() {
        let s = Stats::new(100, Counters::default());
        s.rpc(MsgType::RequestPing, 0, Duration::from_micros(10));
        s.rpc(MsgType::RequestPing, 2001, Duration::from_micros(30));
        s.rpc(MsgType::RequestJobInfo, 2001, Duration::from_micros(5));
        let g = s.lock();
        assert_eq!(
            g.by_type[&MsgType::RequestPing],
            Tally { count: 2, time: 40 }
        );
        assert_eq!(g.by_user[&2001], Tally { count: 2, time: 35 });
        assert_eq!(g.by_user[&0].count, 1);
    }

    #[test]
    fn guards_count_what_is_in_flight() {
        let s = Stats::default();
        let a = s.server_thread();
        let b = s.server_thread();
        let c = s.agent_message();
        assert_eq!(s.threads.load(Ordering::Relaxed), 2);
        assert_eq!(s.agent.load(Ordering::Relaxed), 1);
        drop((a, c));
        assert_eq!(s.threads.load(Ordering::Relaxed), 1);
        assert_eq!(s.agent.load(Ordering::Relaxed), 0);
        drop(b);
        assert_eq!(s.threads.load(Ordering::Relaxed), 0);
    }

    fn controller() -> Controller {
        let text = "ClusterName=t\nSlurmctldHost=ctl\nSlurmUser=root\n\
                    NodeName=n1 CPUs=4 RealMemory=1000\n\
                    PartitionName=debug Nodes=n1 Default=YES State=UP\n";
        testkit::controller(text)
    }

    fn submit(c: &mut Controller, now: i64, cpus: u32) -> u32 {
        use slurm_wire::msg::job_desc::JobDescMsg;
        let d = JobDescMsg {
            min_cpus: cpus,
            ..testkit::true_job()
        };
        let user = testkit::user(1000, 1000);
        let (r, _) = testkit::submit_desc(c, now, user, ProtocolVersion::V24_11, d);
        testkit::job_id(r)
    }

    #[test]
    fn response_reports_job_counts_and_reset_starts_from_zero() {
        let mut c = controller();
        c.apply(1001, testkit::reg("n1", 4, 1000));
        let s = Stats::new(1000, c.counters());
        let a = submit(&mut c, 1002, 4);
        let b = submit(&mut c, 1003, 4);
        let x = submit(&mut c, 1003, 4);
        assert_eq!(c.jobs()[&a].state, JobState::Running);
        assert_eq!(c.jobs()[&b].state, JobState::Pending);
        testkit::kill(&mut c, 1004, 1000, x);
        s.rpc(MsgType::RequestJobInfo, 1000, Duration::from_micros(7));
        let m = s.response(&c, 1005, ProtocolVersion::V24_11);
        let p = &m.parts;
        assert_eq!(
            (
                p.jobs_submitted,
                p.jobs_started,
                p.jobs_canceled,
                p.jobs_completed
            ),
            (3, 1, 1, 0)
        );
        assert_eq!((p.jobs_pending, p.jobs_running), (1, 1));
        assert!(p.schedule_cycle_counter >= 3, "{p:?}");
        assert_eq!((p.req_time, p.req_time_start), (1005, 1000));
        assert_eq!(m.rpc_type_id, vec![2003]);
        assert_eq!((m.rpc_type_cnt[0], m.rpc_type_time[0]), (1, 7));
        assert_eq!((m.rpc_user_size, m.rpc_user_id[0]), (1, 1000));
        assert_eq!(p.schedule_exit.len(), 6);

        s.reset(1006, c.counters());
        let m = s.response(&c, 1007, ProtocolVersion::V22_05);
        assert_eq!(m.parts.jobs_submitted, 0);
        assert_eq!(m.parts.req_time_start, 1006);
        assert_eq!(m.rpc_type_size, 0);
        // Pending/running are a census, not counters.
        assert_eq!(m.parts.jobs_pending, 1);
        testkit::complete(&mut c, 1008, a, 0, Some("n1".into()));
        let m = s.response(&c, 1009, ProtocolVersion::V26_05);
        assert_eq!(m.parts.jobs_completed, 1);

        // A tick past bf_interval runs a backfill pass, timed by the shell.
        let before = c.counters();
        c.apply(1100, Command::Tick);
        s.pass_time(&c.counters().since(&before), Duration::from_micros(30));
        let p = s.response(&c, 1101, ProtocolVersion::V26_05).parts;
        assert_eq!((p.bf_cycle_counter, p.bf_cycle_last), (1, 30));
        assert_eq!(p.bf_when_last_cycle, 1100);
    }

    #[test]
    fn schedule_times_keep_last_max_and_sum() {
        let s = Stats::default();
        s.schedule_time(1, Duration::from_micros(50));
        s.schedule_time(2, Duration::from_micros(40));
        s.schedule_time(0, Duration::from_secs(9));
        let g = s.lock();
        assert_eq!((g.cycle_last, g.cycle_max, g.cycle_sum), (20, 50, 90));
        assert_eq!(g.cycles_timed, 3);
    }
}
