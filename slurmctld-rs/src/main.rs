//! slurmctld-rs: accepts the stock slurmctld's command line.

use clap::{ArgAction, Parser};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "slurmctld-rs",
    version,
    about = "Slurm controller daemon (Rust)"
)]
struct Args {
    /// Clear all job, step and reservation state; start fresh.
    #[arg(short = 'c')]
    clear_state: bool,
    /// Run in the foreground, logging to stderr.
    #[arg(short = 'D')]
    foreground: bool,
    /// Read this slurm.conf instead of SLURM_CONF or the default.
    #[arg(short = 'f', value_name = "file")]
    conf: Option<PathBuf>,
    /// Ignore errors found while reading saved state.
    #[arg(short = 'i')]
    ignore_errors: bool,
    /// Write the log here instead of SlurmctldLogFile.
    #[arg(short = 'L', value_name = "file")]
    logfile: Option<PathBuf>,
    /// Scheduling priority (nice value) of the daemon.
    #[arg(short = 'n', value_name = "value")]
    nice: Option<i32>,
    /// Run as a backup controller.
    #[arg(short = 'r')]
    backup: bool,
    /// Recover full state (the default; kept for compatibility).
    #[arg(short = 'R')]
    recover: bool,
    /// Change working directory to SlurmctldLogFile's directory.
    #[arg(short = 's')]
    chdir: bool,
    /// Notify systemd when ready.
    #[arg(long)]
    systemd: bool,
    /// More verbose logging; repeat for more.
    #[arg(short = 'v', action = ArgAction::Count)]
    verbose: u8,
}

fn main() -> ExitCode {
    let args = Args::parse();
    eprintln!("slurmctld-rs: the controller is not implemented yet (args: {args:?})");
    ExitCode::FAILURE
}
