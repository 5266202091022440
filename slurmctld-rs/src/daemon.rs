//! The tokio shell around the state machine: one actor task owns the
//! [`Controller`] and applies commands in order; after each command it
//! publishes a snapshot that read RPCs use without waiting.

use crate::agent::Agent;
use crate::handlers;
use crate::persist::commit::{Fatal, Panicked, Pipeline};
use crate::shared::{now, Control, Request, Shared};
use crate::state::config::{ClusterConf, ConfigError};
use crate::state::{Command, Controller, Reply};
use slurm_conf::SlurmConf;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// Why the daemon could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("{0}")]
    Conf(#[from] slurm_conf::ConfError),
    #[error("{0}")]
    Config(#[from] ConfigError),
    #[error("SlurmUser {0} does not exist")]
    NoSuchUser(String),
    #[error("cannot listen on port {port}: {err}")]
    Bind { port: u16, err: std::io::Error },
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("saved state: {0}")]
    State(#[from] crate::persist::PersistError),
    /// Stopped: the state machine cannot go on (its cause is in the log).
    #[error("{0}; stopping (the command that caused it is not kept: a restart serves again)")]
    Panicked(#[from] crate::persist::commit::Panicked),
}

/// How the daemon treats StateSaveLocation.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOptions {
    /// `-c`: discard saved state.
    pub clear_state: bool,
    /// `-i`: start empty when the saved state cannot be read.
    pub ignore_errors: bool,
    /// Keep no state on disk at all (tests).
    pub no_state: bool,
    /// Applies commands instead of `Controller::apply` (fault tests).
    #[doc(hidden)]
    pub apply: Option<ApplyPtr>,
}

/// A replacement for `Controller::apply`.
pub type ApplyPtr =
    fn(&mut Controller, crate::state::Time, Command) -> (Reply, Vec<crate::state::Effect>);

/// Most commands applied between two published snapshots.
const MAX_BATCH: usize = 256;

/// Reads slurm.conf and resolves SlurmUser.
pub fn load(path: &Path) -> Result<(ClusterConf, String, u32), StartError> {
    resolve(SlurmConf::from_file(path)?)
}

/// Resolves an already-read slurm.conf (nodes, partitions, SlurmUser).
pub fn resolve(conf: SlurmConf) -> Result<(ClusterConf, String, u32), StartError> {
    for w in &conf.warnings {
        tracing::warn!("{w}");
    }
    let user = conf.slurm_user.clone();
    let uid = uid_of(&user)?;
    let slurmd_uid = uid_of(&conf.slurmd_user)?;
    let mut cluster = ClusterConf::new(conf, uid)?;
    cluster.resolve_allow_groups(|name| {
        nix::unistd::Group::from_name(name)
            .ok()
            .flatten()
            .map(|g| g.gid.as_raw())
    });
    Ok((cluster, user, slurmd_uid))
}

fn uid_of(name: &str) -> Result<u32, StartError> {
    if let Ok(n) = name.parse::<u32>() {
        return Ok(n);
    }
    match nix::unistd::User::from_name(name) {
        Ok(Some(u)) => Ok(u.uid.as_raw()),
        _ => Err(StartError::NoSuchUser(name.to_string())),
    }
}

/// Runs the controller until shutdown. `conf_path` is re-read on reconfigure.
pub async fn run(
    conf_path: PathBuf,
    listener: Option<tokio::net::TcpListener>,
) -> Result<(), StartError> {
    run_with(conf_path, listener, RunOptions::default()).await
}

/// Loads the saved state (or starts empty, per `opts`).
fn open_state(
    cluster: ClusterConf,
    opts: RunOptions,
) -> Result<(Controller, Option<crate::persist::Store>), StartError> {
    let t = now();
    if opts.no_state {
        return Ok((Controller::new(cluster, t), None));
    }
    let dir = PathBuf::from(&cluster.raw.state_save_location);
    let fresh = Controller::new(cluster.clone(), t);
    match crate::persist::Store::open(&dir, fresh, opts.clear_state) {
        Ok((store, loaded)) => {
            tracing::info!(
                "recovered {} jobs from {} ({} logged commands replayed)",
                loaded.jobs,
                dir.display(),
                loaded.replayed
            );
            let mut ctrl = loaded.controller;
            // Partition changes made with scontrol end with the run, as
            // in stock (replaying them kept the log's replay faithful).
            ctrl.restarted(t, cluster);
            Ok((ctrl, Some(store)))
        }
        Err(e) if opts.ignore_errors => {
            tracing::error!("{e}; -i given: starting without the saved state");
            let fresh = Controller::new(cluster, t);
            let (store, loaded) = crate::persist::Store::open(&dir, fresh, true)?;
            Ok((loaded.controller, Some(store)))
        }
        Err(e) => Err(e.into()),
    }
}

/// Tells every registered slurmd to shut down and waits (a few seconds at
/// most) for those messages to be delivered.
async fn shutdown_nodes(sh: &Arc<Shared>, agent: &Agent) {
    use crate::state::{msgs, Effect, Purpose};
    let snap = sh.snapshot();
    let fx: Vec<Effect> = snap
        .nodes()
        .iter()
        .filter_map(|n| {
            msgs::outbound(
                n,
                slurm_wire::Message::RequestShutdown(Default::default()),
                Purpose::Reregister,
            )
        })
        .map(|o| Effect::Send(Box::new(o)))
        .collect();
    agent.dispatch(sh, fx);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while sh.stats.agent_in_flight() > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// [`run`] with options from the command line.
pub async fn run_with(
    conf_path: PathBuf,
    listener: Option<tokio::net::TcpListener>,
    opts: RunOptions,
) -> Result<(), StartError> {
    let conf = SlurmConf::from_file(&conf_path)?;
    run_loaded(conf_path, conf, listener, opts).await
}

/// [`run_with`] for a slurm.conf the caller has read already (start-up
/// reads it once); `conf_path` is what reconfigure reads again.
pub async fn run_loaded(
    conf_path: PathBuf,
    conf: SlurmConf,
    listener: Option<tokio::net::TcpListener>,
    opts: RunOptions,
) -> Result<(), StartError> {
    crate::persist::commit::install_panic_hook();
    let (cluster, user_name, slurmd_uid) = resolve(conf)?;
    let raw = cluster.raw.clone();
    let port = raw.slurmctld_port.first;
    let listener = match listener {
        Some(l) => l,
        None => tokio::net::TcpListener::bind(("0.0.0.0", port))
            .await
            .map_err(|err| StartError::Bind { port, err })?,
    };
    tracing::info!(
        "slurmctld-rs {} started on port {}, cluster {}",
        env!("CARGO_PKG_VERSION"),
        listener.local_addr()?.port(),
        raw.cluster_name.as_deref().unwrap_or("(null)")
    );
    let ctx = slurm_rpc::daemon::auth_ctx(&raw, cluster.slurm_user_uid);
    let timeout = Duration::from_secs(u64::from(raw.message_timeout.max(1)));
    let agent = Agent {
        ctx: ctx.clone(),
        slurmd_uid,
        timeout,
    };
    let nodes_agent = agent.clone();
    let (ctrl, store) = open_state(cluster, opts)?;
    let (tx, rx) = mpsc::channel::<Request>(1024);
    let (ctl_tx, mut ctl_rx) = mpsc::unbounded_channel();
    let shared = Arc::new(Shared::new(
        ctrl.clone(),
        tx.clone(),
        ctl_tx.clone(),
        user_name,
        ctx.plugin.clone(),
        crate::stats::Stats::new(now(), ctrl.counters()),
    ));

    agent.dispatch(&shared, ctrl.ask_nodes_to_register());

    // The actor: the only writer.
    let sh = shared.clone();
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let mut actor = tokio::spawn(actor(sh, ctrl, store, rx, stop_rx, agent, opts.apply));
    let ticker = {
        let sh = shared.clone();
        tokio::spawn(async move {
            let mut iv = tokio::time::interval(Duration::from_secs(1));
            loop {
                iv.tick().await;
                sh.exec(Command::Tick).await;
            }
        })
    };

    let server = {
        let sh = shared.clone();
        let limits =
            slurm_rpc::daemon::conn_limits(&shared.snapshot().conf().raw.slurmctld_parameters);
        let opts = slurm_rpc::ServeOpts {
            timeout,
            forwarder: None,
        };
        tokio::spawn(slurm_rpc::serve_limited(
            listener,
            ctx,
            opts,
            limits,
            move |req| handlers::handle(sh.clone(), req),
        ))
    };

    let signals = {
        let ctl = ctl_tx.clone();
        tokio::spawn(async move {
            use tokio::signal::unix::{signal, SignalKind};
            let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
                signal(SignalKind::hangup()),
            ) else {
                tracing::error!("cannot install signal handlers");
                return;
            };
            loop {
                let c = tokio::select! {
                    _ = term.recv() => Control::Shutdown,
                    _ = int.recv() => Control::Shutdown,
                    _ = hup.recv() => Control::Reconfigure,
                };
                let _ = ctl.send(c);
            }
        })
    };

    let mut fatal = None;
    loop {
        let c = tokio::select! {
            c = ctl_rx.recv() => match c {
                Some(c) => c,
                None => break,
            },
            // The actor ends only when told to, or on a panic: then the
            // daemon stops, never half alive.
            end = &mut actor => {
                let cause = match end {
                    Ok(Err(p)) => p,
                    Ok(Ok(())) => Panicked("the state machine stopped".into()),
                    Err(e) => Panicked(match e.try_into_panic() {
                        Ok(p) => crate::persist::commit::payload_text(p.as_ref()),
                        Err(e) => e.to_string(),
                    }),
                };
                tracing::error!("fatal: {cause}");
                fatal = Some(cause);
                break;
            }
        };
        match c {
            Control::Shutdown => {
                tracing::info!("shutting down");
                break;
            }
            Control::ShutdownAll => {
                tracing::info!("shutting down, with every slurmd");
                shutdown_nodes(&shared, &nodes_agent).await;
                break;
            }
            Control::Reconfigure => match load(&conf_path) {
                Ok((cluster, _, _)) => {
                    tracing::info!("reconfigured from {}", conf_path.display());
                    shared.exec(Command::Reconfigure(Box::new(cluster))).await;
                }
                Err(e) => tracing::error!("reconfigure failed, keeping the old configuration: {e}"),
            },
        }
    }
    // Let the shutdown reply reach its client before the listener goes.
    tokio::time::sleep(Duration::from_millis(100)).await;
    server.abort();
    ticker.abort();
    signals.abort();
    drop(tx);
    if let Some(cause) = fatal {
        return Err(cause.into());
    }
    let _ = stop_tx.send(());
    match tokio::time::timeout(Duration::from_secs(10), actor).await {
        Err(_) => {
            tracing::error!("state machine did not stop in 10 s; exiting without a final snapshot")
        }
        Ok(Ok(Err(p))) => return Err(p.into()),
        Ok(Err(e)) if e.is_panic() => {
            return Err(Panicked(crate::persist::commit::payload_text(
                e.into_panic().as_ref(),
            ))
            .into())
        }
        Ok(_) => {}
    }
    Ok(())
}

/// The actor: takes batches of commands, logs and applies them (see
/// [`crate::persist::commit`]), publishes the new state, dispatches the
/// effects and answers. Ends on `stop` (with a final snapshot) or on a
/// panic in the state machine (without one: that state is not to be kept).
async fn actor(
    sh: Arc<Shared>,
    mut ctrl: Controller,
    mut store: Option<crate::persist::Store>,
    mut rx: mpsc::Receiver<Request>,
    mut stop_rx: oneshot::Receiver<()>,
    agent: Agent,
    apply_override: Option<ApplyPtr>,
) -> Result<(), Panicked> {
    let mut pipeline = Pipeline::default();
    loop {
        let first = tokio::select! {
            biased;
            _ = &mut stop_rx => break,
            m = rx.recv() => match m {
                Some(m) => m,
                None => break,
            },
        };
        // Take every command already queued (up to a bound) and answer
        // them together: one fsync for the batch's log records and one
        // published snapshot, instead of one of each per command.
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(x) => batch.push(x),
                Err(_) => break,
            }
        }
        // Logging, fsync, applying and saving block this thread: tell
        // the runtime, so that other requests (a ping) move to another
        // worker instead of waiting behind a disk write.
        // The published snapshot shares every record not changed since.
        let prev = sh.snapshot();
        let done = slurm_rpc::blocking(|| {
            let t = now();
            let mut apply = |c: &mut Controller, t, cmd| {
                let before = c.counters();
                let started = std::time::Instant::now();
                let r = match apply_override {
                    Some(f) => f(c, t, cmd),
                    None => c.apply(t, cmd),
                };
                sh.stats
                    .pass_time(&c.counters().since(&before), started.elapsed());
                r
            };
            let out = pipeline.run(store.as_mut(), &mut ctrl, t, batch, &mut apply)?;
            ctrl.stamp_changes(&prev, t);
            if let Some(s) = store.as_mut() {
                if out.reconfigured || s.snapshot_due() {
                    if let Err(e) = s.snapshot(&ctrl) {
                        tracing::error!("cannot write state snapshot: {e}");
                        if out.reconfigured {
                            // Only a snapshot records a reconfiguration.
                            s.mark_suspect(format!("the snapshot after a reconfigure failed: {e}"));
                        }
                    }
                }
            }
            Ok(out)
        });
        let out = match done {
            Ok(out) => out,
            Err(Fatal { cause, replies }) => {
                // What was applied before the panic is durable: say so.
                for (tx, r) in replies {
                    let _ = tx.send(r);
                }
                return Err(cause);
            }
        };
        // O(1): the tables are persistent maps of shared records.
        let published = Arc::new(ctrl.clone());
        // Replies the new snapshot cannot use are freed now.
        if sh.replies.prune(&published, std::time::Instant::now()) {
            tokio::task::spawn_blocking(crate::reply_cache::release_free_memory);
        }
        sh.publish(published);
        agent.dispatch(&sh, out.effects);
        for (tx, r) in out.replies {
            let _ = tx.send(r);
        }
    }
    // A clean stop leaves a fresh snapshot and an empty log, so the
    // next start has nothing to replay.
    if let Some(s) = store.as_mut() {
        if pipeline.held() > 0 {
            tracing::error!(
                "{} node reports could not be logged before the stop; nodes report again \
                 when they register",
                pipeline.held()
            );
        }
        match s.snapshot(&ctrl) {
            Ok(()) => tracing::info!("state saved"),
            Err(e) => tracing::error!("cannot write state snapshot: {e}"),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(dir: &Path) -> ClusterConf {
        let text = format!(
            "ClusterName=t\nSlurmctldHost=ctl\nSlurmUser=root\nStateSaveLocation={}\n\
             NodeName=n1 CPUs=4 RealMemory=1000\n\
             PartitionName=debug Nodes=n1 Default=YES State=UP\n",
            dir.display()
        );
        crate::state::testkit::cluster_conf(&text)
    }

    fn with_one_job(dir: &Path) {
        let (ctrl, store) = open_state(cluster(dir), RunOptions::default()).unwrap();
        let mut store = store.unwrap();
        let mut ctrl = ctrl;
        ctrl.set_next_job_id(77);
        store.snapshot(&ctrl).unwrap();
    }

    #[test]
    fn saved_state_is_loaded_and_minus_c_discards_it() {
        let dir = tempfile::tempdir().unwrap();
        with_one_job(dir.path());
        let (ctrl, _) = open_state(cluster(dir.path()), RunOptions::default()).unwrap();
        assert_eq!(ctrl.next_job_id(), 77);
        let opts = RunOptions {
            clear_state: true,
            ..Default::default()
        };
        let (ctrl, _) = open_state(cluster(dir.path()), opts).unwrap();
        assert_eq!(ctrl.next_job_id(), 1);
        // -c also removed it from disk.
        let (ctrl, _) = open_state(cluster(dir.path()), RunOptions::default()).unwrap();
        assert_eq!(ctrl.next_job_id(), 1);
    }

    #[test]
    fn corrupt_state_is_an_error_unless_minus_i() {
        let dir = tempfile::tempdir().unwrap();
        with_one_job(dir.path());
        let snap = dir.path().join(crate::persist::SNAP_FILE);
        let mut b = std::fs::read(&snap).unwrap();
        let last = b.len() - 1;
        b[last] ^= 0xff;
        std::fs::write(&snap, b).unwrap();
        let e = open_state(cluster(dir.path()), RunOptions::default())
            .err()
            .expect("a corrupt snapshot must not load");
        assert!(e.to_string().contains("checksum"), "{e}");
        let opts = RunOptions {
            ignore_errors: true,
            ..Default::default()
        };
        let (ctrl, store) = open_state(cluster(dir.path()), opts).unwrap();
        assert_eq!(ctrl.next_job_id(), 1);
        assert!(store.is_some(), "-i still keeps state from now on");
    }

    fn panic_on_tick(
        c: &mut Controller,
        t: crate::state::Time,
        cmd: Command,
    ) -> (Reply, Vec<crate::state::Effect>) {
        if matches!(cmd, Command::Tick) {
            panic!("injected fault on a tick");
        }
        c.apply(t, cmd)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_panic_in_the_state_machine_stops_the_daemon_with_its_cause() {
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("slurm.conf");
        std::fs::write(
            &conf,
            format!(
                "ClusterName=t\nSlurmctldHost=localhost\nSlurmUser=root\nSlurmdUser=root\n\
                 StateSaveLocation={}/state\nNodeName=n1 NodeAddr=127.0.0.1 Port=1 CPUs=4 \
                 RealMemory=1000\nPartitionName=debug Nodes=n1 Default=YES State=UP\n",
                dir.path().display()
            ),
        )
        .unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let opts = RunOptions {
            apply: Some(panic_on_tick),
            ..Default::default()
        };
        // The first Tick (a second in) panics: the daemon returns, not half alive.
        let r = tokio::time::timeout(
            Duration::from_secs(20),
            run_with(conf.clone(), Some(listener), opts),
        )
        .await
        .expect("the daemon must stop after a panic in apply");
        let e = r.expect_err("a panic is an error exit");
        let text = e.to_string();
        assert!(matches!(e, StartError::Panicked(_)), "{text}");
        assert!(text.contains("injected fault on a tick"), "{text}");
        assert!(text.contains("daemon.rs"), "the place: {text}");
        // A restart loads (the Tick was taken out of the log) and serves.
        let state = dir.path().join("state");
        let (cluster, _, _) = load(&conf).unwrap();
        assert_eq!(cluster.raw.state_save_location, state.display().to_string());
        let (_, store) = open_state(cluster, RunOptions::default()).unwrap();
        assert!(store.unwrap().healthy());
    }
}
