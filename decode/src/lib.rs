//! Captures: TCP stream reassembly from a pcap, and splitting each direction
//! into Slurm frames. Used by the `slurm-decode` dissector and the golden
//! tests; kept out of slurm-wire so that the codec does not depend on the
//! pcap and packet parsers.

use slurm_wire::frame::frame_len;
use slurm_wire::pack::Reader;
use slurm_wire::ProtocolVersion;
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};

#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("not a pcap file: {0}")]
    Pcap(String),
}

/// One direction of one TCP connection, reassembled.
#[derive(Debug, Clone)]
pub struct Direction {
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub bytes: Vec<u8>,
    /// (byte offset, capture time in µs) of each segment start, ascending.
    pub marks: Vec<(usize, u64)>,
    /// Sequence gaps seen (lost segments): the stream after one is cut.
    pub gap: bool,
}

impl Direction {
    /// Capture time of the segment holding byte `off`.
    pub fn time_at(&self, off: usize) -> u64 {
        match self.marks.binary_search_by_key(&off, |&(o, _)| o) {
            Ok(i) => self.marks.get(i).map_or(0, |m| m.1),
            Err(0) => self.marks.first().map_or(0, |m| m.1),
            Err(i) => self.marks.get(i - 1).map_or(0, |m| m.1),
        }
    }
}

/// A TCP connection: client (SYN sender, or first seen) to server.
#[derive(Debug, Clone)]
pub struct Stream {
    pub index: usize,
    pub to_server: Direction,
    pub to_client: Direction,
}

struct Seg {
    seq: u32,
    ts: u64,
    data: Vec<u8>,
}

struct DirAcc {
    src: SocketAddr,
    dst: SocketAddr,
    isn: Option<u32>,
    segs: Vec<Seg>,
}

/// Reads a classic pcap (Ethernet or Linux cooked) and reassembles TCP.
pub fn read_streams(pcap: &[u8]) -> Result<Vec<Stream>, CaptureError> {
    let mut reader =
        pcap_file::pcap::PcapReader::new(pcap).map_err(|e| CaptureError::Pcap(e.to_string()))?;
    let linktype = reader.header().datalink;
    // key: (a, b) direction; order of first appearance of the connection.
    let mut dirs: BTreeMap<(SocketAddr, SocketAddr), DirAcc> = BTreeMap::new();
    let mut conns: Vec<(SocketAddr, SocketAddr)> = Vec::new();
    while let Some(pkt) = reader.next_packet() {
        let pkt = pkt.map_err(|e| CaptureError::Pcap(e.to_string()))?;
        let ts = pkt.timestamp.as_micros() as u64;
        let sliced = match linktype {
            pcap_file::DataLink::LINUX_SLL => etherparse::SlicedPacket::from_linux_sll(&pkt.data),
            _ => etherparse::SlicedPacket::from_ethernet(&pkt.data),
        };
        let Ok(sliced) = sliced else { continue };
        let (src_ip, dst_ip): (IpAddr, IpAddr) = match &sliced.net {
            Some(etherparse::NetSlice::Ipv4(ip)) => (
                ip.header().source_addr().into(),
                ip.header().destination_addr().into(),
            ),
            Some(etherparse::NetSlice::Ipv6(ip)) => (
                ip.header().source_addr().into(),
                ip.header().destination_addr().into(),
            ),
            _ => continue,
        };
        let Some(etherparse::TransportSlice::Tcp(tcp)) = &sliced.transport else {
            continue;
        };
        let src = SocketAddr::new(src_ip, tcp.source_port());
        let dst = SocketAddr::new(dst_ip, tcp.destination_port());
        if !dirs.contains_key(&(src, dst)) && !dirs.contains_key(&(dst, src)) {
            // The SYN sender is the client; otherwise the first talker.
            let client_first = tcp.syn() && !tcp.ack() || !tcp.syn();
            conns.push(if client_first { (src, dst) } else { (dst, src) });
        }
        for key in [(src, dst), (dst, src)] {
            dirs.entry(key).or_insert_with(|| DirAcc {
                src: key.0,
                dst: key.1,
                isn: None,
                segs: Vec::new(),
            });
        }
        let Some(acc) = dirs.get_mut(&(src, dst)) else {
            continue;
        };
        if tcp.syn() {
            acc.isn = Some(tcp.sequence_number().wrapping_add(1));
        }
        let payload = tcp.payload();
        if !payload.is_empty() {
            acc.segs.push(Seg {
                seq: tcp.sequence_number(),
                ts,
                data: payload.to_vec(),
            });
        }
    }
    let mut out = Vec::new();
    for (index, (c, s)) in conns.into_iter().enumerate() {
        let (Some(a), Some(b)) = (dirs.remove(&(c, s)), dirs.remove(&(s, c))) else {
            continue;
        };
        out.push(Stream {
            index: index + 1,
            to_server: assemble(a),
            to_client: assemble(b),
        });
    }
    Ok(out)
}

fn assemble(acc: DirAcc) -> Direction {
    let base = acc
        .isn
        .or_else(|| acc.segs.iter().map(|s| s.seq).min())
        .unwrap_or(0);
    let mut segs = acc.segs;
    segs.sort_by_key(|s| (s.seq.wrapping_sub(base), s.ts));
    let mut bytes = Vec::new();
    let mut marks = Vec::new();
    let mut gap = false;
    for s in segs {
        let off = s.seq.wrapping_sub(base) as usize;
        let end = off + s.data.len();
        if off > bytes.len() {
            gap = true;
            break;
        }
        if end > bytes.len() {
            let skip = bytes.len() - off;
            marks.push((bytes.len(), s.ts));
            bytes.extend_from_slice(s.data.get(skip..).unwrap_or_default());
        }
    }
    Direction {
        src: acc.src,
        dst: acc.dst,
        bytes,
        marks,
        gap,
    }
}

/// Splits a direction into Slurm frames (offset, frame bytes with prefix),
/// or `None` when the bytes are not RPC framing (srun I/O, HTTP, ...).
pub fn split_frames(bytes: &[u8]) -> Option<Vec<(usize, &[u8])>> {
    let mut out = Vec::new();
    let mut off = 0;
    while off < bytes.len() {
        let rest = bytes.get(off..)?;
        let n = frame_len(rest).ok()??;
        let mut r = Reader::new(rest.get(4..)?);
        let version = r.u16().ok()?;
        // DBD connections put a u16 message type before the header.
        let plausible = ProtocolVersion::from_wire(version).is_some()
            || r.u16().ok().and_then(ProtocolVersion::from_wire).is_some();
        if n < 4 + 16 || !plausible || rest.len() < n {
            return None;
        }
        out.push((off, rest.get(..n)?));
        off += n;
    }
    Some(out)
}

/// One Slurm message found in a capture, with its decode outcome.
#[derive(Debug)]
pub struct CapturedMsg<'a> {
    pub stream: usize,
    /// "C->S" or "S->C".
    pub dir: &'static str,
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub time_us: u64,
    /// The frame, length prefix included.
    pub raw: &'a [u8],
    pub outcome: Result<Decoded, slurm_wire::DecodeError>,
}

#[derive(Debug)]
pub struct Decoded {
    pub frame: slurm_wire::Frame,
    pub msg: slurm_wire::Message,
}

/// What is not Slurm framing (srun I/O, HTTP replies, cut streams).
#[derive(Debug)]
pub struct RawRun {
    pub stream: usize,
    pub dir: &'static str,
    pub len: usize,
}

/// Decodes a frame and checks that re-encoding gives back the same bytes.
pub fn decode_frame_strict(raw: &[u8]) -> Result<Decoded, slurm_wire::DecodeError> {
    let frame = slurm_wire::Frame::decode_prefixed(raw)?;
    let msg = frame.message()?;
    let body = msg.encode_to_vec(frame.header.version);
    if body != frame.body {
        return Err(mismatch(&frame.body, &body).within("re-encode of body"));
    }
    let again = frame.encode();
    if again != raw {
        return Err(mismatch(raw, &again).within("re-encode of frame"));
    }
    Ok(Decoded { frame, msg })
}

fn mismatch(a: &[u8], b: &[u8]) -> slurm_wire::DecodeError {
    let at = a
        .iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    slurm_wire::DecodeError::new(
        slurm_wire::DecodeErrorKind::BadValue {
            what: "re-encoded length (bytes differ from here)",
            value: b.len() as u64,
        },
        at,
    )
}

/// Every Slurm message in a capture (in time order) and every raw run.
pub fn decode_streams(streams: &[Stream]) -> (Vec<CapturedMsg<'_>>, Vec<RawRun>) {
    let mut msgs = Vec::new();
    let mut raws = Vec::new();
    for s in streams {
        for (dir, d) in [("C->S", &s.to_server), ("S->C", &s.to_client)] {
            if d.bytes.is_empty() {
                continue;
            }
            match split_frames(&d.bytes) {
                Some(frames) => {
                    for (off, raw) in frames {
                        msgs.push(CapturedMsg {
                            stream: s.index,
                            dir,
                            src: d.src,
                            dst: d.dst,
                            time_us: d.time_at(off),
                            raw,
                            outcome: decode_frame_strict(raw),
                        });
                    }
                }
                None => raws.push(RawRun {
                    stream: s.index,
                    dir,
                    len: d.bytes.len(),
                }),
            }
        }
    }
    msgs.sort_by_key(|m| m.time_us);
    (msgs, raws)
}
