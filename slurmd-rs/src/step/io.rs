//! The srun I/O stream (PROTOCOL-MAP §6): an `io_init_msg` that proves we
//! hold the step credential, then frames with a fixed, unversioned 10-byte
//! header `u16 type, u16 gtaskid, u16 ltaskid, u32 length` followed by
//! `length` bytes; length 0 is end of file for that stream of that task.

use slurm_wire::pack::Writer;

/// Frame types.
pub const STDIN: u16 = 0;
pub const STDOUT: u16 = 1;
pub const STDERR: u16 = 2;
pub const ALLSTDIN: u16 = 3;
pub const CONNECTION_TEST: u16 = 4;

/// Header size on the wire.
pub const HDR_LEN: usize = 10;
/// Largest payload slurmstepd puts in one frame (`SLURM_IO_MAX_MSG_LEN`).
pub const MAX_MSG_LEN: usize = 1024;
/// Largest payload we accept from srun (stdin), to bound memory.
pub const MAX_IN_LEN: u32 = 1 << 20;

/// `io_hdr_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoHdr {
    pub r#type: u16,
    pub gtaskid: u16,
    pub ltaskid: u16,
    pub length: u32,
}

impl IoHdr {
    pub fn encode(&self) -> [u8; HDR_LEN] {
        let mut b = [0u8; HDR_LEN];
        b[0..2].copy_from_slice(&self.r#type.to_be_bytes());
        b[2..4].copy_from_slice(&self.gtaskid.to_be_bytes());
        b[4..6].copy_from_slice(&self.ltaskid.to_be_bytes());
        b[6..10].copy_from_slice(&self.length.to_be_bytes());
        b
    }

    pub fn decode(b: &[u8; HDR_LEN]) -> Self {
        IoHdr {
            r#type: u16::from_be_bytes([b[0], b[1]]),
            gtaskid: u16::from_be_bytes([b[2], b[3]]),
            ltaskid: u16::from_be_bytes([b[4], b[5]]),
            length: u32::from_be_bytes([b[6], b[7], b[8], b[9]]),
        }
    }
}

/// One output frame (header and payload) for task `gtid`/`ltid`; an empty
/// `data` is the end-of-file frame.
pub fn frame(r#type: u16, gtid: u32, ltid: u32, data: &[u8]) -> Vec<u8> {
    let h = IoHdr {
        r#type,
        // Task ids travel as u16 (upstream's limit).
        gtaskid: gtid as u16,
        ltaskid: ltid as u16,
        length: data.len() as u32,
    };
    let mut v = Vec::with_capacity(HDR_LEN + data.len());
    v.extend_from_slice(&h.encode());
    v.extend_from_slice(data);
    v
}

/// `io_init_msg_t` as slurmstepd writes it: `u32 length` of what follows,
/// `u16 version` (srun's), `u32 nodeid`, `u32 stdout_objs`,
/// `u32 stderr_objs`, `str io_key` (the credential's signature).
pub fn init_msg(
    version: u16,
    nodeid: u32,
    stdout_objs: u32,
    stderr_objs: u32,
    key: &str,
) -> Vec<u8> {
    let mut w = Writer::new();
    w.u32(0);
    w.u16(version);
    w.u32(nodeid);
    w.u32(stdout_objs);
    w.u32(stderr_objs);
    w.str(Some(key));
    let len = (w.len() - 4) as u32;
    w.patch_u32(0, len);
    w.into_vec()
}

/// Cuts task output into frames that end at line boundaries, as stock's
/// stepd does, so that srun never interleaves two tasks' lines mid-line.
/// A line longer than a frame is split at the frame size.
#[derive(Debug, Default)]
pub struct LineFramer {
    pending: Vec<u8>,
}

impl LineFramer {
    /// Adds bytes read from a task; returns the payloads ready to send.
    pub fn push(&mut self, data: &[u8]) -> Vec<Vec<u8>> {
        self.pending.extend_from_slice(data);
        let mut out = Vec::new();
        loop {
            let limit = self.pending.len().min(MAX_MSG_LEN);
            let head = self.pending.get(..limit).unwrap_or_default();
            let cut = match head.iter().rposition(|&b| b == b'\n') {
                Some(nl) => nl + 1,
                None if self.pending.len() >= MAX_MSG_LEN => MAX_MSG_LEN,
                None => break,
            };
            out.push(self.pending.drain(..cut).collect());
        }
        out
    }

    /// What is left at end of file (a last line without newline).
    pub fn finish(&mut self) -> Option<Vec<u8>> {
        (!self.pending.is_empty()).then(|| std::mem::take(&mut self.pending))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The io stream slurmstepd 24.11 sent in fixtures/24.11/srun.pcap,
    /// with its (long) key replaced by a short one.
    #[test]
    fn init_and_frames_match_stock_layout() {
        let key = "MUNGE:abc:";
        let m = init_msg(0x2a00, 0, 1, 1, key);
        let mut want = Vec::new();
        want.extend_from_slice(&(2 + 4 + 4 + 4 + 4 + key.len() as u32 + 1).to_be_bytes());
        want.extend_from_slice(&[0x2a, 0x00, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1]);
        want.extend_from_slice(&(key.len() as u32 + 1).to_be_bytes());
        want.extend_from_slice(key.as_bytes());
        want.push(0);
        assert_eq!(m, want);
        // "n24\n" on stdout of task 0, then EOF on stdout and stderr.
        assert_eq!(
            frame(STDOUT, 0, 0, b"n24\n"),
            [hex("00010000000000000004"), b"n24\n".to_vec()].concat()
        );
        assert_eq!(frame(STDOUT, 0, 0, b""), hex("00010000000000000000")[..]);
        assert_eq!(frame(STDERR, 3, 1, b""), hex("00020003000100000000")[..]);
    }

    #[test]
    fn header_round_trip() {
        // srun 26.05 closing stdin for all tasks: ALLSTDIN, task ids -1, EOF.
        let raw: [u8; HDR_LEN] = hex("0003ffffffff00000000").try_into().unwrap();
        let h = IoHdr::decode(&raw);
        assert_eq!(
            h,
            IoHdr {
                r#type: ALLSTDIN,
                gtaskid: 0xffff,
                ltaskid: 0xffff,
                length: 0
            }
        );
        assert_eq!(h.encode(), raw);
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len() / 2)
            .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn output_frames_end_at_line_boundaries() {
        let mut f = LineFramer::default();
        assert!(f.push(b"partial").is_empty());
        assert_eq!(f.push(b" line\nnext"), vec![b"partial line\n".to_vec()]);
        let long = vec![b'x'; MAX_MSG_LEN + 10];
        let frames = f.push(&long);
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0].len(), MAX_MSG_LEN);
        assert_eq!(f.finish().map(|r| r.len()), Some(14));
        assert_eq!(f.finish(), None);
    }
}
