//! slurmdbd-rs: accepts the stock slurmdbd's command line.
#![forbid(unsafe_code)]

use clap::{ArgAction, Parser};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "slurmdbd-rs",
    version,
    about = "Slurm accounting daemon (Rust)"
)]
struct Args {
    /// Run in the foreground, logging to stderr.
    #[arg(short = 'D')]
    foreground: bool,
    /// Scheduling priority (nice value) of the daemon.
    #[arg(short = 'n', value_name = "value")]
    nice: Option<i32>,
    /// Reset the lft/rgt association values, for these clusters if given.
    #[arg(short = 'R', value_name = "cluster list", num_args = 0..=1)]
    reset_lft_rgt: Option<Option<String>>,
    /// Change working directory to LogFile's directory.
    #[arg(short = 's')]
    chdir: bool,
    /// Only report whether the database schema needs an upgrade.
    #[arg(short = 'u')]
    check_db_version: bool,
    /// More verbose logging; repeat for more.
    #[arg(short = 'v', action = ArgAction::Count)]
    verbose: u8,
}

fn main() -> ExitCode {
    let args = Args::parse();
    eprintln!("slurmdbd-rs: the accounting daemon is not implemented yet (args: {args:?})");
    ExitCode::FAILURE
}
