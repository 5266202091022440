//! ConstrainDevices on cgroup v2: v2 has no devices controller, so access
//! is decided by a BPF_PROG_TYPE_CGROUP_DEVICE program attached to the
//! cgroup. The kernel runs it on every open/mknod of a device node by a
//! process of the cgroup (or of a cgroup below it without a program of
//! its own) with a `struct bpf_cgroup_dev_ctx`:
//!
//! ```text
//! u32 access_type   low 16 bits: BPF_DEVCG_DEV_{BLOCK,CHAR}; high 16: access
//! u32 major
//! u32 minor
//! ```
//!
//! and lets the access through when it returns 1. The program is a list of
//! rules in order, the first whose type and numbers match decides, and
//! anything unmatched is allowed (stock's default), so a job loses exactly
//! the GRES devices it was not given. It is built here as raw instructions
//! and loaded with bpf(2): no compiler or BPF library is needed.

use super::types::Device;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum BpfError {
    #[error("{path}: cannot open the cgroup for a device program: {err}")]
    Open { path: String, err: std::io::Error },
    #[error("bpf(BPF_PROG_LOAD) of the device program refused: {err} (bpf(2) needs root or CAP_BPF, a kernel with CONFIG_CGROUP_BPF, and enough RLIMIT_MEMLOCK on kernels before 5.11){}", verifier(.log))]
    Load { err: std::io::Error, log: String },
    #[error("{path}: bpf(BPF_PROG_ATTACH) of the device program refused: {err}")]
    Attach { path: String, err: std::io::Error },
}

fn verifier(log: &str) -> String {
    if log.trim().is_empty() {
        String::new()
    } else {
        format!("; verifier: {}", log.trim())
    }
}

/// One eBPF instruction, as `struct bpf_insn` lays it out.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Insn {
    pub code: u8,
    /// dst_reg in the low nibble, src_reg in the high one.
    pub regs: u8,
    pub off: i16,
    pub imm: i32,
}

// Instruction classes, sizes, modes and operations (linux/bpf_common.h,
// linux/bpf.h).
const BPF_LDX: u8 = 0x01;
const BPF_ALU: u8 = 0x04;
const BPF_JMP: u8 = 0x05;
const BPF_ALU64: u8 = 0x07;
const BPF_W: u8 = 0x00;
const BPF_MEM: u8 = 0x60;
const BPF_K: u8 = 0x00;
const BPF_AND: u8 = 0x50;
const BPF_RSH: u8 = 0x70;
const BPF_MOV: u8 = 0xb0;
const BPF_JNE: u8 = 0x50;
const BPF_EXIT: u8 = 0x90;

/// `access_type`'s device kinds.
pub const BPF_DEVCG_DEV_BLOCK: i32 = 1;
pub const BPF_DEVCG_DEV_CHAR: i32 = 2;

// bpf(2) commands, program and attach types, flags.
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_PROG_ATTACH: libc::c_long = 8;
const BPF_PROG_TYPE_CGROUP_DEVICE: u32 = 15;
const BPF_CGROUP_DEVICE: u32 = 6;
/// Lets a cgroup below replace the program with its own.
pub const BPF_F_ALLOW_OVERRIDE: u32 = 1;

// Registers the program keeps the request in.
const R0: u8 = 0;
const R1: u8 = 1;
const R_TYPE: u8 = 2;
const R_ACCESS: u8 = 3;
const R_MAJOR: u8 = 4;
const R_MINOR: u8 = 5;

fn ldx_w(dst: u8, src: u8, off: i16) -> Insn {
    Insn {
        code: BPF_LDX | BPF_W | BPF_MEM,
        regs: dst | (src << 4),
        off,
        imm: 0,
    }
}

fn alu32_imm(op: u8, dst: u8, imm: i32) -> Insn {
    Insn {
        code: BPF_ALU | op | BPF_K,
        regs: dst,
        off: 0,
        imm,
    }
}

fn jne_imm(dst: u8, imm: i32, off: i16) -> Insn {
    Insn {
        code: BPF_JMP | BPF_JNE | BPF_K,
        regs: dst,
        off,
        imm,
    }
}

fn mov64_imm(dst: u8, imm: i32) -> Insn {
    Insn {
        code: BPF_ALU64 | BPF_MOV | BPF_K,
        regs: dst,
        off: 0,
        imm,
    }
}

fn exit() -> Insn {
    Insn {
        code: BPF_JMP | BPF_EXIT,
        regs: 0,
        off: 0,
        imm: 0,
    }
}

/// One rule: a device (any access) and whether it is allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub device: Device,
    pub allow: bool,
}

fn kind_code(kind: char) -> i32 {
    if kind == 'b' {
        BPF_DEVCG_DEV_BLOCK
    } else {
        BPF_DEVCG_DEV_CHAR
    }
}

/// The program for `rules` (first match wins; unmatched devices are
/// allowed). None when there is no rule: an empty filter is not loaded.
pub fn device_program(rules: &[Rule]) -> Option<Vec<Insn>> {
    if rules.is_empty() {
        return None;
    }
    let mut p = vec![
        ldx_w(R_TYPE, R1, 0),
        alu32_imm(BPF_AND, R_TYPE, 0xFFFF),
        ldx_w(R_ACCESS, R1, 0),
        alu32_imm(BPF_RSH, R_ACCESS, 16),
        ldx_w(R_MAJOR, R1, 4),
        ldx_w(R_MINOR, R1, 8),
    ];
    for r in rules {
        // Each mismatch skips the rest of this rule: the remaining
        // comparisons and its two-instruction verdict. The immediates are
        // sign-extended against zero-extended loads; device numbers (12
        // and 20 bits) never reach the sign bit.
        p.push(jne_imm(R_TYPE, kind_code(r.device.kind), 4));
        p.push(jne_imm(R_MAJOR, r.device.major as i32, 3));
        p.push(jne_imm(R_MINOR, r.device.minor as i32, 2));
        p.push(mov64_imm(R0, i32::from(r.allow)));
        p.push(exit());
    }
    p.push(mov64_imm(R0, 1));
    p.push(exit());
    Some(p)
}

/// Deny rules for the devices a job was not given.
pub fn deny_rules(devices: &[Device]) -> Vec<Rule> {
    devices
        .iter()
        .map(|&device| Rule {
            device,
            allow: false,
        })
        .collect()
}

#[repr(C)]
struct ProgLoadAttr {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    prog_name: [u8; 16],
}

#[repr(C)]
struct ProgAttachAttr {
    target_fd: u32,
    attach_bpf_fd: u32,
    attach_type: u32,
    attach_flags: u32,
    replace_bpf_fd: u32,
}

fn sys_bpf<T>(cmd: libc::c_long, attr: &mut T) -> std::io::Result<libc::c_long> {
    // SAFETY: `attr` is a live, fully initialised #[repr(C)] prefix of
    // union bpf_attr; the kernel reads (and for loads writes the log into
    // the buffer it points to) no more than the size passed.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr as *mut T as *mut libc::c_void,
            std::mem::size_of::<T>(),
        )
    };
    if r < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn load(prog: &[Insn], log: Option<&mut Vec<u8>>) -> std::io::Result<OwnedFd> {
    let license = b"GPL\0";
    let mut name = [0u8; 16];
    let n = b"slurm_devices";
    name[..n.len()].copy_from_slice(n);
    let (log_level, log_size, log_buf) = match log {
        Some(l) => (1, l.len() as u32, l.as_mut_ptr() as u64),
        None => (0, 0, 0),
    };
    let mut attr = ProgLoadAttr {
        prog_type: BPF_PROG_TYPE_CGROUP_DEVICE,
        insn_cnt: prog.len() as u32,
        insns: prog.as_ptr() as u64,
        license: license.as_ptr() as u64,
        log_level,
        log_size,
        log_buf,
        kern_version: 0,
        prog_flags: 0,
        prog_name: name,
    };
    let fd = sys_bpf(BPF_PROG_LOAD, &mut attr)?;
    // SAFETY: a successful BPF_PROG_LOAD returns a new fd we now own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// Loads `prog` and attaches it to the cgroup directory `dir`, replacing
/// the program attached there before. `flags` is 0 or
/// [`BPF_F_ALLOW_OVERRIDE`] (for cgroups whose children may carry a
/// program of their own). The attachment lives as long as the cgroup;
/// the program's fd is closed on return.
pub fn attach(dir: &Path, prog: &[Insn], flags: u32) -> Result<(), BpfError> {
    let cg = std::fs::File::open(dir).map_err(|err| BpfError::Open {
        path: dir.display().to_string(),
        err,
    })?;
    let fd = match load(prog, None) {
        Ok(fd) => fd,
        Err(err) => {
            // Again with the verifier's log, for the message.
            let mut buf = vec![0u8; 16 * 1024];
            let _ = load(prog, Some(&mut buf));
            let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
            return Err(BpfError::Load {
                err,
                log: String::from_utf8_lossy(&buf[..end]).into_owned(),
            });
        }
    };
    let mut attr = ProgAttachAttr {
        target_fd: cg.as_raw_fd() as u32,
        attach_bpf_fd: fd.as_raw_fd() as u32,
        attach_type: BPF_CGROUP_DEVICE,
        attach_flags: flags,
        replace_bpf_fd: 0,
    };
    sys_bpf(BPF_PROG_ATTACH, &mut attr).map_err(|err| BpfError::Attach {
        path: dir.display().to_string(),
        err,
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a device program the way the kernel would, for the subset of
    /// instructions it is made of: (type, access, major, minor) -> verdict.
    fn run(prog: &[Insn], kind: i32, access: i32, major: u32, minor: u32) -> u64 {
        let ctx = [((access as u32) << 16) | kind as u32, major, minor];
        let mut r = [0u64; 11];
        let mut pc = 0usize;
        loop {
            let i = prog[pc];
            let (dst, src) = ((i.regs & 0xf) as usize, (i.regs >> 4) as usize);
            assert_eq!(
                src,
                if i.code == (BPF_LDX | BPF_W | BPF_MEM) {
                    1
                } else {
                    0
                }
            );
            pc += 1;
            match i.code {
                c if c == BPF_LDX | BPF_W | BPF_MEM => {
                    r[dst] = u64::from(ctx[(i.off / 4) as usize]);
                }
                c if c == BPF_ALU | BPF_AND | BPF_K => {
                    r[dst] = (r[dst] as u32 & i.imm as u32) as u64
                }
                c if c == BPF_ALU | BPF_RSH | BPF_K => r[dst] = ((r[dst] as u32) >> i.imm) as u64,
                c if c == BPF_ALU64 | BPF_MOV | BPF_K => r[dst] = i.imm as i64 as u64,
                c if c == BPF_JMP | BPF_JNE | BPF_K => {
                    if r[dst] != i.imm as i64 as u64 {
                        pc += i.off as usize;
                    }
                }
                c if c == BPF_JMP | BPF_EXIT => return r[0],
                c => panic!("unexpected opcode {c:#x}"),
            }
        }
    }

    fn dev(kind: char, major: u32, minor: u32) -> Device {
        Device { kind, major, minor }
    }

    #[test]
    fn no_rule_no_program() {
        assert_eq!(device_program(&[]), None);
    }

    #[test]
    fn denied_devices_only_are_refused() {
        let p = device_program(&deny_rules(&[dev('c', 195, 1), dev('c', 195, 3)])).unwrap();
        let (c, b) = (BPF_DEVCG_DEV_CHAR, BPF_DEVCG_DEV_BLOCK);
        for access in [1, 2, 4, 6] {
            assert_eq!(run(&p, c, access, 195, 1), 0);
            assert_eq!(run(&p, c, access, 195, 3), 0);
            assert_eq!(run(&p, c, access, 195, 0), 1, "an allocated GPU");
            assert_eq!(run(&p, c, access, 195, 2), 1);
        }
        // Same numbers, other kind or major: untouched.
        assert_eq!(run(&p, b, 2, 195, 1), 1);
        assert_eq!(run(&p, c, 2, 196, 1), 1);
        assert_eq!(run(&p, c, 2, 1, 3), 1, "/dev/null");
    }

    #[test]
    fn first_matching_rule_decides() {
        let d = dev('b', 8, 16);
        let allow_first = [
            Rule {
                device: d,
                allow: true,
            },
            Rule {
                device: d,
                allow: false,
            },
        ];
        let p = device_program(&allow_first).unwrap();
        assert_eq!(run(&p, BPF_DEVCG_DEV_BLOCK, 2, 8, 16), 1);
        let mut deny_first = allow_first;
        deny_first.reverse();
        let p = device_program(&deny_first).unwrap();
        assert_eq!(run(&p, BPF_DEVCG_DEV_BLOCK, 2, 8, 16), 0);
        assert_eq!(run(&p, BPF_DEVCG_DEV_CHAR, 2, 8, 16), 1);
    }

    #[test]
    fn instruction_layout_is_the_kernels() {
        assert_eq!(std::mem::size_of::<Insn>(), 8);
        assert_eq!(std::mem::size_of::<ProgLoadAttr>(), 64);
        let p = device_program(&deny_rules(&[dev('c', 195, 7)])).unwrap();
        // r4 = *(u32 *)(r1 + 4): opcode 0x61, dst 4, src 1.
        assert_eq!(
            p[4],
            Insn {
                code: 0x61,
                regs: 0x14,
                off: 4,
                imm: 0
            }
        );
        // if r2 != 2 goto +4
        assert_eq!(
            p[6],
            Insn {
                code: 0x55,
                regs: 2,
                off: 4,
                imm: 2
            }
        );
        assert_eq!(
            p.last(),
            Some(&Insn {
                code: 0x95,
                regs: 0,
                off: 0,
                imm: 0
            })
        );
        assert_eq!(p.len(), 6 + 5 + 2);
    }
}
