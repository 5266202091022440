//! TRES strings as stock's controller formats them for humans
//! (`assoc_mgr_make_tres_str_from_array` with `TRES_STR_CONVERT_UNITS`):
//! the cluster's TRES in id order, zero counts left out, memory converted
//! to the largest unit that keeps it exact (`convert_num_unit`).

/// The TRES every cluster has, in id order (1..=8).
pub const BASE: &[&str] = &[
    "cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages",
];

/// `convert_num_unit(n, UNIT_MEGA, NO_VAL, CONVERT_NUM_UNIT_EXACT)`: divide
/// by 1024 while the value is a multiple of 512 (halves print as `.50`).
pub fn mem_exact(mb: u64) -> String {
    const UNITS: [char; 6] = ['M', 'G', 'T', 'P', 'E', '?'];
    if mb == 0 {
        return "0".into();
    }
    let mut num = mb as f64;
    let mut unit = 0;
    while num >= 1024.0 && (num as u64).is_multiple_of(512) && unit + 1 < UNITS.len() {
        num /= 1024.0;
        unit += 1;
    }
    let whole = num as u64;
    if whole as f64 == num {
        format!("{whole}{}", UNITS[unit])
    } else {
        format!("{num:.2}{}", UNITS[unit])
    }
}

/// Counts by TRES name; [`Counts::format`] orders them like the cluster's
/// TRES table (the base ones, then `gres/...` as configured).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counts {
    pub cpu: u64,
    /// MiB.
    pub mem: u64,
    pub node: u64,
    pub billing: u64,
    /// Extra TRES (`gres/gpu`, `gres/gpu:a100`), counted only when the
    /// cluster tracks them (AccountingStorageTRES).
    pub extra: Vec<(String, u64)>,
}

impl Counts {
    pub fn format(&self) -> String {
        let mut parts = Vec::new();
        for (name, n) in [
            ("cpu", self.cpu),
            ("mem", self.mem),
            ("node", self.node),
            ("billing", self.billing),
        ] {
            if n == 0 {
                continue;
            }
            parts.push(if name == "mem" {
                format!("mem={}", mem_exact(n))
            } else {
                format!("{name}={n}")
            });
        }
        for (name, n) in &self.extra {
            if *n > 0 {
                parts.push(format!("{name}={n}"));
            }
        }
        parts.join(",")
    }
}

/// The `gres/...` TRES the cluster tracks (AccountingStorageTRES), in order.
pub fn tracked_gres(conf: &slurm_conf::SlurmConf) -> Vec<String> {
    conf.raw("AccountingStorageTRES")
        .map(|v| {
            v.split(',')
                .map(str::trim)
                .filter(|t| t.to_ascii_lowercase().starts_with("gres/"))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_converts_only_while_exact() {
        assert_eq!(mem_exact(64000), "62.50G");
        assert_eq!(mem_exact(128000), "125G");
        assert_eq!(mem_exact(1024), "1G");
        assert_eq!(mem_exact(1000), "1000M");
        assert_eq!(mem_exact(1536), "1.50G");
        // 1100 is not a multiple of 512: stays in MiB.
        assert_eq!(mem_exact(1100), "1100M");
        assert_eq!(mem_exact(1024 * 1024 * 3), "3T");
        assert_eq!(mem_exact(0), "0");
    }

    #[test]
    fn zero_counts_are_left_out_in_table_order() {
        let c = Counts {
            cpu: 16,
            mem: 64000,
            node: 0,
            billing: 16,
            extra: vec![("gres/gpu".into(), 4), ("gres/mps".into(), 0)],
        };
        assert_eq!(c.format(), "cpu=16,mem=62.50G,billing=16,gres/gpu=4");
    }
}
