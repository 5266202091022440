//! slurm-load: authenticated RPC load against a slurmctld (stock or rs).
//!
//! Prints samples as `metric<TAB>unit<TAB>value` lines on stdout (the
//! format scripts/bench collects) and a readable summary on stderr.

use clap::{Parser, Subcommand};
use slurm_bench::load::{self, Limit, Outcome, Target};
use slurm_bench::requests::{Kind, Submitter};
use slurm_conf::SlurmConf;
use slurm_rpc::daemon::auth_ctx;
use slurm_wire::auth::Audience;
use slurm_wire::ProtocolVersion;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(Parser)]
#[command(about = "Authenticated Slurm RPC load generator")]
struct Cli {
    /// slurm.conf: controller address, port, AuthInfo, SlurmUser
    /// (default: SLURM_CONF or /etc/slurm/slurm.conf)
    #[arg(short = 'f', long)]
    conf: Option<PathBuf>,
    /// Controller address, instead of SlurmctldHost:SlurmctldPort
    #[arg(long)]
    addr: Option<String>,
    /// Protocol release to speak (22.05, 24.11, 26.05, ...)
    #[arg(long, default_value = "24.11")]
    protocol: String,
    /// Per-request timeout in seconds
    #[arg(long, default_value_t = 60)]
    timeout: u64,
    /// Metric name prefix for the sample lines
    #[arg(long, default_value = "load")]
    metric: String,
    /// Decode every record of job/node listings (default: read their count only)
    #[arg(long)]
    full_decode: bool,
    /// Submit to this partition (default: the controller's default)
    #[arg(long)]
    partition: Option<String>,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// REQUEST_SUBMIT_BATCH_JOB (`sbatch --hold -o /dev/null --wrap true`)
    Submit {
        #[command(flatten)]
        run: RunArgs,
        /// Submit runnable jobs instead of held ones
        #[arg(long)]
        no_hold: bool,
    },
    /// REQUEST_JOB_INFO (what squeue asks)
    JobInfo {
        #[command(flatten)]
        run: RunArgs,
    },
    /// REQUEST_NODE_INFO (what sinfo asks)
    NodeInfo {
        #[command(flatten)]
        run: RunArgs,
    },
    /// REQUEST_PING (what scontrol ping asks)
    Ping {
        #[command(flatten)]
        run: RunArgs,
    },
    /// Ping latency while --conns clients storm job info
    Storm {
        #[arg(long, default_value_t = 64)]
        conns: usize,
        /// Seconds of pinging (after the warm-up)
        #[arg(long, default_value_t = 10.0)]
        duration: f64,
        #[arg(long, default_value_t = 1.0)]
        warmup: f64,
        /// Pause between pings, in milliseconds
        #[arg(long, default_value_t = 10)]
        ping_interval_ms: u64,
        /// Run the storm's threads this much nicer than the pings' (0: equal)
        #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(i32).range(0..=19))]
        storm_nice: i32,
    },
}

#[derive(clap::Args, Clone, Copy)]
struct RunArgs {
    /// Concurrent connections
    #[arg(long, default_value_t = 16)]
    conns: usize,
    /// Stop after this many requests
    #[arg(long)]
    count: Option<u64>,
    /// Stop after this many seconds
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
}

impl RunArgs {
    fn limit(self) -> Limit {
        Limit {
            count: self.count,
            duration: Duration::from_secs_f64(self.duration),
        }
    }
}

fn resolve(host: &str, port: u16) -> Result<SocketAddr, String> {
    (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {host}: {e}"))?
        .find(SocketAddr::is_ipv4)
        .ok_or_else(|| format!("{host} has no IPv4 address"))
}

fn target(cli: &Cli) -> Result<Target, String> {
    let path = slurm_conf::locate_config(cli.conf.as_deref());
    let conf =
        SlurmConf::from_file(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let addr = match &cli.addr {
        Some(a) => a
            .to_socket_addrs()
            .map_err(|e| format!("--addr {a}: {e}"))?
            .next()
            .ok_or_else(|| format!("--addr {a}: no address"))?,
        None => {
            let h = conf
                .slurmctld_hosts
                .first()
                .ok_or_else(|| "no SlurmctldHost in slurm.conf".to_string())?;
            resolve(&h.addr, conf.slurmctld_port.first)?
        }
    };
    let version = ProtocolVersion::from_release(&cli.protocol)
        .ok_or_else(|| format!("unknown protocol release {}", cli.protocol))?;
    let slurm_uid = uid_of(&conf.slurm_user).unwrap_or(0);
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "localhost".into());
    let work_dir = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_else(|_| "/".into());
    Ok(Target {
        ctx: auth_ctx(&conf, slurm_uid),
        addr,
        version,
        audience: Audience::Uid(slurm_uid),
        timeout: Duration::from_secs(cli.timeout),
        who: Submitter {
            uid,
            gid,
            work_dir,
            host,
            partition: cli.partition.clone(),
        },
        full_decode: cli.full_decode,
    })
}

fn uid_of(user: &str) -> Option<u32> {
    if let Ok(n) = user.parse() {
        return Some(n);
    }
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() > 2 && f[0] == user)
            .then(|| f[2].parse().ok())
            .flatten()
    })
}

/// The sample lines for one outcome; `rate_unit` names what was counted.
fn print_outcome(prefix: &str, o: &Outcome, with_rate: bool) {
    if with_rate {
        println!("{prefix}_rps\trps\t{:.1}", o.rate());
    }
    println!("{prefix}_ok\tcount\t{}", o.ok);
    println!("{prefix}_errors\tcount\t{}", o.error_count());
    if let Some(s) = o.latency.summary() {
        println!("{prefix}_p50_ms\tms\t{:.3}", s.p50_ms);
        println!("{prefix}_p99_ms\tms\t{:.3}", s.p99_ms);
        println!("{prefix}_max_ms\tms\t{:.3}", s.max_ms);
    }
    println!("{prefix}_records\tcount\t{}", o.last_records);
    eprintln!(
        "{prefix}: {} ok, {} failed in {:.2} s ({:.1}/s), last reply {} records{}",
        o.ok,
        o.error_count(),
        o.elapsed.as_secs_f64(),
        o.rate(),
        o.last_records,
        o.latency
            .summary()
            .map(|s| format!(
                ", latency p50 {:.2} ms p99 {:.2} ms max {:.2} ms",
                s.p50_ms, s.p99_ms, s.max_ms
            ))
            .unwrap_or_default()
    );
    for (reason, n) in &o.errors {
        eprintln!("{prefix}: {n} x {reason}");
        println!("{prefix}_error\ttext\t{n} x {reason}");
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let t = match target(&cli) {
        Ok(t) => Arc::new(t),
        Err(e) => {
            eprintln!("slurm-load: {e}");
            return ExitCode::from(2);
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(512)
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("slurm-load: tokio: {e}");
            return ExitCode::from(2);
        }
    };
    let m = &cli.metric;
    let ok = rt.block_on(async {
        let (kind, run) = match cli.cmd {
            Cmd::Submit { run, no_hold } => (Kind::Submit { hold: !no_hold }, run),
            Cmd::JobInfo { run } => (Kind::JobInfo, run),
            Cmd::NodeInfo { run } => (Kind::NodeInfo, run),
            Cmd::Ping { run } => (Kind::Ping, run),
            Cmd::Storm {
                conns,
                duration,
                warmup,
                ping_interval_ms,
                storm_nice,
            } => {
                let (storm, pings) = load::storm(
                    t.clone(),
                    conns,
                    Duration::from_secs_f64(duration),
                    Duration::from_secs_f64(warmup),
                    Duration::from_millis(ping_interval_ms),
                    storm_nice,
                )
                .await;
                print_outcome(&format!("{m}_storm"), &storm, true);
                print_outcome(&format!("{m}_ping"), &pings, false);
                return pings.ok > 0 && storm.ok > 0;
            }
        };
        let o = load::closed_loop(t.clone(), kind, run.conns, run.limit()).await;
        print_outcome(m, &o, true);
        o.ok > 0
    });
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
