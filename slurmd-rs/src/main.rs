//! slurmd-rs: accepts the stock slurmd's command line.

use clap::{ArgAction, Parser};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(name = "slurmd-rs", version, about = "Slurm node daemon (Rust)")]
struct Args {
    /// Authentication options (overrides AuthInfo).
    #[arg(long)]
    authinfo: Option<String>,
    /// Report the daemon start time as the node boot time.
    #[arg(short = 'b')]
    boot_time: bool,
    /// Clear saved state.
    #[arg(short = 'c')]
    clear_state: bool,
    /// Print the node's hardware configuration and exit.
    #[arg(short = 'C')]
    print_config: bool,
    /// Node parameters for a dynamic node (as on a NodeName line).
    #[arg(long = "conf", value_name = "node parameters")]
    node_conf: Option<String>,
    /// Fetch the configuration from this controller (configless).
    #[arg(long = "conf-server", value_name = "host[:port]")]
    conf_server: Option<String>,
    /// Path of the step daemon binary.
    #[arg(short = 'd', value_name = "file")]
    stepd: Option<PathBuf>,
    /// Run in the foreground, logging to stderr.
    #[arg(short = 'D')]
    foreground: bool,
    /// Arbitrary string stored as the node's Extra field.
    #[arg(long)]
    extra: Option<String>,
    /// Read this slurm.conf instead of SLURM_CONF or the default.
    #[arg(short = 'f', value_name = "file")]
    conf: Option<PathBuf>,
    /// Dynamic future node, optionally with a feature.
    #[arg(short = 'F', value_name = "feature", num_args = 0..=1, require_equals = false)]
    future: Option<Option<String>>,
    /// Print the node's GRES configuration and exit.
    #[arg(short = 'G')]
    print_gres: bool,
    /// Cloud instance id.
    #[arg(long)]
    instance_id: Option<String>,
    /// Cloud instance type.
    #[arg(long)]
    instance_type: Option<String>,
    /// Write the log here instead of SlurmdLogFile.
    #[arg(short = 'L', value_name = "file")]
    logfile: Option<PathBuf>,
    /// Lock the daemon's memory pages.
    #[arg(short = 'M')]
    mlock: bool,
    /// Scheduling priority (nice value) of the daemon.
    #[arg(short = 'n', value_name = "value")]
    nice: Option<i32>,
    /// Run as this node name (several daemons per host).
    #[arg(short = 'N', value_name = "nodename")]
    node_name: Option<String>,
    /// Change working directory to SlurmdLogFile's directory.
    #[arg(short = 's')]
    chdir: bool,
    /// Notify systemd when ready.
    #[arg(long)]
    systemd: bool,
    /// More verbose logging; repeat for more.
    #[arg(short = 'v', action = ArgAction::Count)]
    verbose: u8,
    /// Register as a dynamic node.
    #[arg(short = 'Z')]
    dynamic: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    eprintln!("slurmd-rs: the node daemon is not implemented yet (args: {args:?})");
    ExitCode::FAILURE
}
