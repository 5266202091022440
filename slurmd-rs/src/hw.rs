//! Hardware detection from /proc and /sys: what `slurmd -C` prints and what
//! the node registers when slurm.conf does not override it.
//!
//! Parsing is pure (text in, numbers out) so it is tested with sample
//! files; `detect()` is the thin part that reads the real files.

use std::collections::BTreeSet;
use std::path::Path;

/// The node's layout as stock reports it (hwloc's view: boards are always 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hardware {
    pub cpus: u16,
    pub boards: u16,
    /// Total sockets on the node (not per board).
    pub sockets: u16,
    pub cores_per_socket: u16,
    pub threads_per_core: u16,
    /// MiB.
    pub real_memory: u64,
}

/// One logical CPU's place in the topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuTopo {
    pub package: i64,
    pub core: i64,
}

/// Layout from the logical CPUs' (package, core) pairs.
pub fn layout(cpus: &[CpuTopo]) -> (u16, u16, u16, u16) {
    if cpus.is_empty() {
        return (1, 1, 1, 1);
    }
    let sockets: BTreeSet<i64> = cpus.iter().map(|c| c.package).collect();
    let cores: BTreeSet<(i64, i64)> = cpus.iter().map(|c| (c.package, c.core)).collect();
    let n = cpus.len().min(u16::MAX as usize) as u16;
    let s = sockets.len().max(1) as u16;
    let total_cores = cores.len().max(1) as u16;
    let cores_per_socket = (total_cores / s).max(1);
    let threads = (n / total_cores).max(1);
    (n, s, cores_per_socket, threads)
}

/// Parses a kernel CPU list such as `0-3,8,10-11`.
pub fn parse_cpu_list(s: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.trim().parse::<u32>(), b.trim().parse::<u32>()) {
                    if b >= a && b - a < 1 << 16 {
                        out.extend(a..=b);
                    }
                }
            }
            None => {
                if let Ok(a) = part.trim().parse() {
                    out.push(a);
                }
            }
        }
    }
    out
}

/// Topology from /proc/cpuinfo text (used when sysfs has no topology).
/// CPUs without `physical id`/`core id` count as their own socket/core.
pub fn parse_cpuinfo(text: &str) -> Vec<CpuTopo> {
    let mut out = Vec::new();
    let mut cur: Option<(i64, i64, i64)> = None;
    let flush = |cur: &mut Option<(i64, i64, i64)>, out: &mut Vec<CpuTopo>| {
        if let Some((p, c, n)) = cur.take() {
            out.push(CpuTopo {
                package: if p < 0 { n } else { p },
                core: if c < 0 { n } else { c },
            });
        }
    };
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            if line.trim().is_empty() {
                flush(&mut cur, &mut out);
            }
            continue;
        };
        let v = v.trim().parse::<i64>().unwrap_or(-1);
        match k.trim() {
            "processor" => {
                flush(&mut cur, &mut out);
                cur = Some((-1, -1, v));
            }
            "physical id" => {
                if let Some(c) = cur.as_mut() {
                    c.0 = v
                }
            }
            "core id" => {
                if let Some(c) = cur.as_mut() {
                    c.1 = v
                }
            }
            _ => {}
        }
    }
    flush(&mut cur, &mut out);
    out
}

/// `MemTotal` of /proc/meminfo in MiB (stock: physical pages * page size).
pub fn parse_meminfo_total(text: &str) -> Option<u64> {
    parse_meminfo_field(text, "MemTotal")
}

/// A /proc/meminfo field (kB) in MiB.
pub fn parse_meminfo_field(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        if k.trim() != name {
            return None;
        }
        let kb: u64 = v.split_whitespace().next()?.parse().ok()?;
        Some(kb / 1024)
    })
}

/// Seconds since boot from /proc/uptime.
pub fn parse_uptime(text: &str) -> Option<u64> {
    let first = text.split_whitespace().next()?;
    let secs = first.split('.').next()?;
    secs.parse().ok()
}

/// The 1-minute load average * 100, as slurmd reports `cpu_load`.
pub fn parse_loadavg(text: &str) -> Option<u32> {
    let f: f64 = text.split_whitespace().next()?.parse().ok()?;
    Some((f * 100.0).round().clamp(0.0, u32::MAX as f64) as u32)
}

/// `UpTime=` value: days-HH:MM:SS.
pub fn format_uptime(secs: u64) -> String {
    format!(
        "{}-{:02}:{:02}:{:02}",
        secs / 86400,
        (secs / 3600) % 24,
        (secs / 60) % 60,
        secs % 60
    )
}

/// The `slurmd -C` text, two lines.
pub fn print_config_line(name: &str, hw: &Hardware, uptime: u64) -> String {
    format!(
        "NodeName={name} CPUs={} Boards={} SocketsPerBoard={} CoresPerSocket={} ThreadsPerCore={} RealMemory={}\nUpTime={}\n",
        hw.cpus,
        hw.boards,
        hw.sockets / hw.boards.max(1),
        hw.cores_per_socket,
        hw.threads_per_core,
        hw.real_memory,
        format_uptime(uptime)
    )
}

fn read(p: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(p).ok()
}

/// Topology of the online CPUs from sysfs, or /proc/cpuinfo when sysfs has
/// none (some containers).
fn detect_topology(sys: &Path, proc_: &Path) -> Vec<CpuTopo> {
    let online = read(sys.join("devices/system/cpu/online"))
        .map(|s| parse_cpu_list(&s))
        .unwrap_or_default();
    let mut topo = Vec::new();
    for cpu in &online {
        let d = sys.join(format!("devices/system/cpu/cpu{cpu}/topology"));
        let p = read(d.join("physical_package_id")).and_then(|s| s.trim().parse().ok());
        let c = read(d.join("core_id")).and_then(|s| s.trim().parse().ok());
        match (p, c) {
            (Some(package), Some(core)) => topo.push(CpuTopo { package, core }),
            _ => {
                topo.clear();
                break;
            }
        }
    }
    if topo.is_empty() {
        topo = read(proc_.join("cpuinfo"))
            .map(|s| parse_cpuinfo(&s))
            .unwrap_or_default();
    }
    topo
}

/// Reads the hardware of the machine under the given /sys and /proc roots.
pub fn detect_at(sys: &Path, proc_: &Path) -> Hardware {
    let (cpus, sockets, cores_per_socket, threads_per_core) = layout(&detect_topology(sys, proc_));
    Hardware {
        cpus,
        boards: 1,
        sockets,
        cores_per_socket,
        threads_per_core,
        real_memory: read(proc_.join("meminfo"))
            .and_then(|s| parse_meminfo_total(&s))
            .unwrap_or(1),
    }
}

pub fn detect() -> Hardware {
    detect_at(Path::new("/sys"), Path::new("/proc"))
}

pub fn uptime() -> u64 {
    read("/proc/uptime")
        .and_then(|s| parse_uptime(&s))
        .unwrap_or(0)
}

pub fn cpu_load() -> u32 {
    read("/proc/loadavg")
        .and_then(|s| parse_loadavg(&s))
        .unwrap_or(0)
}

/// Free memory in MiB (MemAvailable, like stock's get_free_mem).
pub fn free_mem() -> u64 {
    read("/proc/meminfo")
        .and_then(|s| parse_meminfo_field(&s, "MemAvailable"))
        .unwrap_or(0)
}

/// Size of the file system holding `path`, in MiB (TmpDisk).
pub fn tmp_disk(path: &str) -> u32 {
    match nix::sys::statvfs::statvfs(path) {
        Ok(s) => {
            let bytes = (s.blocks() as u128) * (s.fragment_size() as u128);
            (bytes / (1024 * 1024)).min(u32::MAX as u128) as u32
        }
        Err(_) => 0,
    }
}

/// The host name up to its first dot, as stock's gethostname_short.
pub fn short_hostname() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .map(|h| h.split('.').next().unwrap_or_default().to_string())
        .unwrap_or_else(|| "localhost".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPUINFO_2S_HT: &str = "\
processor\t: 0
physical id\t: 0
core id\t\t: 0

processor\t: 1
physical id\t: 0
core id\t\t: 1

processor\t: 2
physical id\t: 1
core id\t\t: 0

processor\t: 3
physical id\t: 1
core id\t\t: 1

processor\t: 4
physical id\t: 0
core id\t\t: 0

processor\t: 5
physical id\t: 0
core id\t\t: 1

processor\t: 6
physical id\t: 1
core id\t\t: 0

processor\t: 7
physical id\t: 1
core id\t\t: 1
";

    #[test]
    fn cpuinfo_two_sockets_with_hyperthreads() {
        let t = parse_cpuinfo(CPUINFO_2S_HT);
        assert_eq!(t.len(), 8);
        assert_eq!(layout(&t), (8, 2, 2, 2));
    }

    #[test]
    fn cpuinfo_without_topology_counts_each_cpu_as_a_socket() {
        let t = parse_cpuinfo("processor : 0\n\nprocessor : 1\n\nprocessor : 2\n");
        assert_eq!(layout(&t), (3, 3, 1, 1));
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list("0"), vec![0]);
        assert_eq!(parse_cpu_list(""), Vec::<u32>::new());
        assert_eq!(parse_cpu_list("5-2,x,1"), vec![1]);
    }

    #[test]
    fn meminfo_and_uptime() {
        let m = "MemTotal:       24683520 kB\nMemFree:  100 kB\nMemAvailable:   23137280 kB\n";
        assert_eq!(parse_meminfo_total(m), Some(24105));
        assert_eq!(parse_meminfo_field(m, "MemAvailable"), Some(22595));
        assert_eq!(parse_meminfo_total("nothing here"), None);
        assert_eq!(parse_uptime("1180.43 2300.10\n"), Some(1180));
        assert_eq!(parse_loadavg("0.46 0.30 0.20 1/200 300"), Some(46));
    }

    #[test]
    fn uptime_format_matches_stock() {
        assert_eq!(format_uptime(1180), "0-00:19:40");
        assert_eq!(
            format_uptime(2 * 86400 + 3 * 3600 + 4 * 60 + 5),
            "2-03:04:05"
        );
    }

    #[test]
    fn print_config_line_shape() {
        let hw = Hardware {
            cpus: 8,
            boards: 1,
            sockets: 2,
            cores_per_socket: 2,
            threads_per_core: 2,
            real_memory: 24105,
        };
        assert_eq!(
            print_config_line("vm", &hw, 1180),
            "NodeName=vm CPUs=8 Boards=1 SocketsPerBoard=2 CoresPerSocket=2 ThreadsPerCore=2 RealMemory=24105\nUpTime=0-00:19:40\n"
        );
    }

    #[test]
    fn sysfs_tree_is_read() {
        let d = tempfile::tempdir().unwrap();
        let sys = d.path().join("sys");
        let cpu = sys.join("devices/system/cpu");
        std::fs::create_dir_all(&cpu).unwrap();
        std::fs::write(cpu.join("online"), "0-3\n").unwrap();
        for (i, (p, c)) in [(0, 0), (0, 1), (0, 0), (0, 1)].iter().enumerate() {
            let t = cpu.join(format!("cpu{i}/topology"));
            std::fs::create_dir_all(&t).unwrap();
            std::fs::write(t.join("physical_package_id"), format!("{p}\n")).unwrap();
            std::fs::write(t.join("core_id"), format!("{c}\n")).unwrap();
        }
        let proc_ = d.path().join("proc");
        std::fs::create_dir_all(&proc_).unwrap();
        std::fs::write(proc_.join("meminfo"), "MemTotal: 2048000 kB\n").unwrap();
        let hw = detect_at(&sys, &proc_);
        assert_eq!(
            (
                hw.cpus,
                hw.sockets,
                hw.cores_per_socket,
                hw.threads_per_core
            ),
            (4, 1, 2, 2)
        );
        assert_eq!(hw.real_memory, 2000);
    }
}
