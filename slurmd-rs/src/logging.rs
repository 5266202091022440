//! Log set-up: the log file (-L, else SlurmdLogFile) or stderr, at the
//! level from SlurmdDebug raised by each -v.

use std::path::Path;
use tracing_subscriber::EnvFilter;

/// Verbosity name for tracing from a Slurm level plus `-v` count.
pub fn level(base: &str, verbose: u8) -> &'static str {
    let rank = match base.to_ascii_lowercase().as_str() {
        "quiet" | "fatal" | "error" => 0,
        "info" | "verbose" => 2,
        "debug" => 3,
        s if s.starts_with("debug") => 4,
        _ => 1,
    } + u32::from(verbose);
    match rank {
        0 => "error",
        1 => "warn",
        2 => "info",
        3 => "debug",
        _ => "trace",
    }
}

/// Installs the global subscriber. Errors opening the file fall back to
/// stderr (with a message) so the daemon still logs somewhere.
pub fn init(file: Option<&Path>, level: &str) {
    let filter = EnvFilter::try_from_env("SLURMD_RS_LOG").unwrap_or_else(|_| EnvFilter::new(level));
    let b = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false);
    if let Some(p) = file {
        if let Some(d) = p.parent() {
            let _ = std::fs::create_dir_all(d);
        }
        match std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
        {
            Ok(f) => {
                b.with_writer(std::sync::Mutex::new(f)).init();
                return;
            }
            Err(e) => eprintln!("slurmd-rs: cannot open log file {}: {e}", p.display()),
        }
    }
    b.with_writer(std::io::stderr).init();
}

#[cfg(test)]
mod tests {
    #[test]
    fn levels() {
        assert_eq!(super::level("info", 0), "info");
        assert_eq!(super::level("info", 1), "debug");
        assert_eq!(super::level("error", 0), "error");
        assert_eq!(super::level("debug3", 0), "trace");
    }
}
