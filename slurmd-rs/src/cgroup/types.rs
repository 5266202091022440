//! The cgroup layer's plain types: step names and paths, device rules,
//! limits and the memory policy, mounts. A leaf: the hierarchies (v1, v2,
//! the device filter) and the parent build on it.

use slurm_conf::CgroupConf;
use std::path::{Path, PathBuf};

/// The step part of a job's cgroup path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepName {
    Batch,
    Extern,
    Interactive,
    Id(u32),
}

impl StepName {
    /// From the numeric step id of the protocol (SLURM_BATCH_SCRIPT etc.).
    pub fn from_step_id(id: u32) -> Self {
        use slurm_wire::types::StepId;
        match id {
            StepId::BATCH_SCRIPT => StepName::Batch,
            StepId::EXTERN_CONT => StepName::Extern,
            StepId::INTERACTIVE_STEP => StepName::Interactive,
            n => StepName::Id(n),
        }
    }

    pub fn dir(&self) -> String {
        match self {
            StepName::Batch => "step_batch".into(),
            StepName::Extern => "step_extern".into(),
            StepName::Interactive => "step_interactive".into(),
            StepName::Id(n) => format!("step_{n}"),
        }
    }
}

/// One step's cgroup, by what names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepCg {
    pub uid: u32,
    pub job_id: u32,
    pub step: StepName,
}

impl StepCg {
    pub fn batch(uid: u32, job_id: u32) -> Self {
        StepCg {
            uid,
            job_id,
            step: StepName::Batch,
        }
    }
    /// `uid_<uid>`, relative to the hierarchy root.
    pub fn user_rel(&self) -> PathBuf {
        PathBuf::from(format!("uid_{}", self.uid))
    }
    /// `uid_<uid>/job_<id>`.
    pub fn job_rel(&self) -> PathBuf {
        self.user_rel().join(format!("job_{}", self.job_id))
    }
    /// `uid_<uid>/job_<id>/step_<name>`.
    pub fn step_rel(&self) -> PathBuf {
        self.job_rel().join(self.step.dir())
    }
}

/// A device number, as gres.conf's File= devices are allowed or denied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Device {
    /// 'c' or 'b'.
    pub kind: char,
    pub major: u32,
    pub minor: u32,
}

impl Device {
    /// The device of a special file (None for other files).
    pub fn of_path(p: &Path) -> Option<Device> {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let m = std::fs::metadata(p).ok()?;
        let ft = m.file_type();
        let kind = if ft.is_char_device() {
            'c'
        } else if ft.is_block_device() {
            'b'
        } else {
            return None;
        };
        let rdev = m.rdev();
        Some(Device {
            kind,
            major: libc::major(rdev),
            minor: libc::minor(rdev),
        })
    }
    /// `c 195:0 rwm`, as devices.allow/deny take it.
    pub fn rule(&self) -> String {
        format!("{} {}:{} rwm", self.kind, self.major, self.minor)
    }
}

/// Memory limits in bytes for one level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemLimits {
    pub limit: u64,
    pub soft: u64,
    /// Memory+swap, only with ConstrainSwapSpace.
    pub memsw: Option<u64>,
    pub swappiness: Option<u64>,
}

/// What to constrain at one level (job or step).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Limits {
    pub mem: Option<MemLimits>,
    /// Logical CPU ids (ConstrainCores).
    pub cpus: Option<Vec<u32>>,
    /// GRES devices this job was not given (ConstrainDevices).
    pub deny_devices: Vec<Device>,
}

/// cgroup.conf's memory options with the node's configured RealMemory.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemPolicy {
    pub constrain_ram: bool,
    pub constrain_swap: bool,
    pub allowed_ram: f32,
    pub allowed_swap: f32,
    pub max_ram_percent: f32,
    pub max_swap_percent: f32,
    pub min_ram_mb: u64,
    pub swappiness: Option<u64>,
    /// The node's RealMemory, MB.
    pub total_ram_mb: u64,
}

fn percent_bytes(mb: u64, percent: f32) -> u64 {
    ((mb as f64) * 1024.0 * 1024.0 * (f64::from(percent) / 100.0)) as u64
}

impl MemPolicy {
    pub fn from_conf(c: &CgroupConf, total_ram_mb: u64) -> Self {
        MemPolicy {
            constrain_ram: c.constrain_ram_space,
            constrain_swap: c.constrain_swap_space,
            allowed_ram: if c.constrain_ram_space {
                c.allowed_ram_space
            } else {
                100.0
            },
            allowed_swap: c.allowed_swap_space,
            max_ram_percent: c.max_ram_percent,
            max_swap_percent: c.max_swap_percent,
            min_ram_mb: c.min_ram_space,
            swappiness: c.memory_swappiness,
            total_ram_mb,
        }
    }

    fn max_ram(&self) -> u64 {
        percent_bytes(self.total_ram_mb, self.max_ram_percent)
    }

    /// Stock's rule: an allocation of 0 means the whole node; a percentage
    /// of it, clamped to [MinRAMSpace, MaxRAMPercent of RealMemory].
    fn ram_bytes(&self, alloc_mb: u64, with_allowed: bool) -> u64 {
        let b = if alloc_mb == 0 {
            self.total_ram_mb.saturating_mul(1024 * 1024)
        } else {
            percent_bytes(
                alloc_mb,
                if with_allowed {
                    self.allowed_ram
                } else {
                    100.0
                },
            )
        };
        let min = self.min_ram_mb.saturating_mul(1024 * 1024);
        if b < min {
            min
        } else {
            b.min(self.max_ram())
        }
    }

    /// RAM limit plus AllowedSwapSpace, clamped to [MinRAMSpace, max RAM +
    /// MaxSwapPercent].
    fn swap_bytes(&self, alloc_mb: u64) -> u64 {
        let base = if alloc_mb == 0 {
            self.total_ram_mb
        } else {
            alloc_mb
        };
        let b = self
            .ram_bytes(alloc_mb, true)
            .saturating_add(percent_bytes(base, self.allowed_swap));
        let min = self.min_ram_mb.saturating_mul(1024 * 1024);
        let max = self
            .max_ram()
            .saturating_add(percent_bytes(self.total_ram_mb, self.max_swap_percent));
        if b < min {
            min
        } else {
            b.min(max)
        }
    }

    /// Limits for an allocation of `alloc_mb` MB (0: unlimited job), or
    /// None when neither RAM nor swap is constrained.
    pub fn limits(&self, alloc_mb: u64) -> Option<MemLimits> {
        if !self.constrain_ram && !self.constrain_swap {
            return None;
        }
        let hard = self.ram_bytes(alloc_mb, true);
        let soft = self.ram_bytes(alloc_mb, false).min(hard);
        let memsw = self.swap_bytes(alloc_mb);
        Some(MemLimits {
            // Only swap constrained: RAM may use the whole mem+swap budget.
            limit: if self.constrain_ram { hard } else { memsw },
            soft,
            memsw: self.constrain_swap.then_some(memsw),
            swappiness: if self.constrain_swap {
                self.swappiness
            } else {
                None
            },
        })
    }
}

/// Which cgroup version, if any, cgroup.conf and the mounts select.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V1,
    V2,
}

/// One line of /proc/mounts: mount point, type, options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub dir: PathBuf,
    pub fstype: String,
    pub options: Vec<String>,
}

/// /proc/mounts escapes spaces and the like as `\040`.
fn unescape_mount(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 4 <= b.len() {
            let oct = &b[i + 1..i + 4];
            if oct.iter().all(|c| (b'0'..=b'7').contains(c)) {
                let v = oct.iter().fold(0u32, |a, c| a * 8 + u32::from(c - b'0'));
                out.push(v as u8);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The cgroup mounts in /proc/mounts text.
pub fn parse_mounts(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let _src = f.next()?;
            let dir = unescape_mount(f.next()?);
            let fstype = f.next()?.to_string();
            let options = f.next()?.split(',').map(str::to_string).collect();
            (fstype == "cgroup" || fstype == "cgroup2").then(|| Mount {
                dir: PathBuf::from(dir),
                fstype,
                options,
            })
        })
        .collect()
}
