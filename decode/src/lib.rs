//! Captures: TCP stream reassembly from a pcap, and splitting each direction
//! into Slurm frames. Used by the `slurm-decode` dissector and the golden
//! tests; kept out of slurm-wire so that the codec does not depend on the
//! pcap and packet parsers.
//!
//! A connection that opens with slurmdbd's REQUEST_PERSIST_INIT (to port
//! 6819, or wherever DbdPort says) is a DBD stream: its messages go to the
//! DBD codec, in the release the server's SLURM_PERSIST_RC names. One that
//! opens with an RPC frame of REQUEST_PERSIST_INIT (slurmdbd's update
//! connection to a controller) carries `u32 length | u16 type | body`
//! messages of the RPC namespace after it (ACCOUNTING_UPDATE_MSG,
//! RESPONSE_SLURM_RC), the answer to the opening being SLURM_PERSIST_RC.

use slurm_wire::dbd::{persist, DbdMessage, DbdMsgType, PersistInitReqMsg};
use slurm_wire::frame::frame_len;
use slurm_wire::header::flags;
use slurm_wire::pack::{decode_exact, encode_to_vec, Reader};
use slurm_wire::{DecodeError, DecodeErrorKind, Frame, Message, MsgType, ProtocolVersion};
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
        if n < 4 + 16 || ProtocolVersion::from_wire(version).is_none() || rest.len() < n {
            return None;
        }
        out.push((off, rest.get(..n)?));
        off += n;
    }
    Some(out)
}

/// Splits a DBD direction into `u32 length | u16 type | body` messages, or
/// `None` when it does not divide into them.
pub fn split_persist(bytes: &[u8]) -> Option<Vec<(usize, &[u8])>> {
    let mut out = Vec::new();
    let mut off = 0;
    while off < bytes.len() {
        let rest = bytes.get(off..)?;
        let (_, n) = persist::next_msg(rest, persist::MAX_PERSIST_MSG).ok()??;
        out.push((off, rest.get(..n)?));
        off += n;
    }
    Some(out)
}

/// The header's release when `bytes` open with slurmdbd's REQUEST_PERSIST_INIT
/// (`u32 length | u16 6500 or 6501 | header...`): an RPC frame begins with a
/// release instead, so the two cannot be confused.
pub fn dbd_opening(bytes: &[u8]) -> Option<ProtocolVersion> {
    let (raw, _) = persist::next_msg(bytes, persist::MAX_PERSIST_MSG).ok()??;
    let v = ProtocolVersion::from_wire(Reader::new(raw.body).u16().ok()?)?;
    matches!(
        DbdMsgType::from_wire(v, raw.msg_type),
        Some(DbdMsgType::PersistInit | DbdMsgType::PersistInitTls)
    )
    .then_some(v)
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
    /// Whether it travelled on a slurmdbd persistent connection.
    pub dbd: bool,
    /// On such a connection, a body of the RPC namespace (the dbd's update
    /// connection to a controller).
    pub rpc_body: bool,
    /// The release it is read in (an RPC header's; a DBD connection's), if known.
    pub version: Option<ProtocolVersion>,
    /// The type's upstream name, `UNKNOWN(n)` when the release has no such
    /// number, `?` when the release is unknown.
    pub name: String,
    pub outcome: Result<Decoded, DecodeError>,
}

impl CapturedMsg<'_> {
    /// A DBD message of a known type whose body has no codec yet: shown, not
    /// counted as a failure while the accounting codecs land family by family.
    pub fn awaits_codec(&self) -> bool {
        self.dbd
            && !self.rpc_body
            && matches!(&self.outcome, Err(e) if matches!(e.kind, DecodeErrorKind::UnsupportedBody(..)))
    }
}

#[derive(Debug)]
pub enum Decoded {
    /// An RPC frame: header, credential, body.
    Rpc {
        frame: slurm_wire::Frame,
        msg: Box<slurm_wire::Message>,
    },
    /// A message on a slurmdbd connection.
    Dbd(DbdMessage),
    /// The RPC frame of REQUEST_PERSIST_INIT that opens a persistent
    /// connection to a controller.
    PersistInit {
        frame: Frame,
        req: PersistInitReqMsg,
    },
    /// An RPC body on such a connection, after its `u16` type.
    PersistRpc(Box<Message>),
}

/// What is not Slurm framing (srun I/O, HTTP replies, cut streams).
#[derive(Debug)]
pub struct RawRun {
    pub stream: usize,
    pub dir: &'static str,
    pub len: usize,
}

/// Decodes a frame and checks that re-encoding gives back the same bytes.
pub fn decode_frame_strict(raw: &[u8]) -> Result<Decoded, DecodeError> {
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
    Ok(Decoded::Rpc {
        frame,
        msg: Box::new(msg),
    })
}

/// Decodes a DBD message in release `v` and checks that re-encoding gives
/// back the same bytes.
pub fn decode_dbd_strict(v: ProtocolVersion, raw: &[u8]) -> Result<Decoded, DecodeError> {
    let msg = DbdMessage::decode_framed(v, raw)?;
    match msg.encode(v) {
        Ok(again) if again == raw => Ok(Decoded::Dbd(msg)),
        Ok(again) => Err(mismatch(raw, &again).within("re-encode of DBD message")),
        Err(_) => Err(DecodeError::new(
            DecodeErrorKind::BadValue {
                what: "DBD message that cannot be re-encoded, of length",
                value: raw.len() as u64,
            },
            0,
        )),
    }
}

/// (release, name) an RPC frame's header announces.
pub fn rpc_label(raw: &[u8]) -> (Option<ProtocolVersion>, String) {
    let word = |at: usize| {
        raw.get(at..at + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
    };
    let v = word(4).and_then(ProtocolVersion::from_wire);
    let name = match (v, word(8)) {
        (Some(v), Some(t)) => slurm_wire::MsgType::from_wire(v, t)
            .map_or_else(|| format!("UNKNOWN({t})"), |m| m.name().to_string()),
        (None, Some(t)) => format!("?({t})"),
        _ => "?".into(),
    };
    (v, name)
}

fn dbd_name(v: ProtocolVersion, raw: &[u8]) -> String {
    match raw.get(4..6).map(|b| u16::from_be_bytes([b[0], b[1]])) {
        Some(t) => DbdMsgType::name_of(v, t).map_or_else(|| format!("UNKNOWN({t})"), str::to_owned),
        None => "?".into(),
    }
}

fn mismatch(a: &[u8], b: &[u8]) -> DecodeError {
    let at = a
        .iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    DecodeError::new(
        DecodeErrorKind::BadValue {
            what: "re-encoded length (bytes differ from here)",
            value: b.len() as u64,
        },
        at,
    )
}

/// slurmdbd's default DbdPort.
pub const DBD_PORT: u16 = 6819;

/// Every Slurm message in a capture (in time order) and every raw run.
pub fn decode_streams(streams: &[Stream]) -> (Vec<CapturedMsg<'_>>, Vec<RawRun>) {
    decode_streams_in(streams, None)
}

/// As [`decode_streams`]; `release`, the release the capture's daemons run,
/// also reads DBD connections to port 6819 that were open before the
/// capture began (the controller keeps its own open), whose opening would
/// have said which release they speak.
pub fn decode_streams_in(
    streams: &[Stream],
    release: Option<ProtocolVersion>,
) -> (Vec<CapturedMsg<'_>>, Vec<RawRun>) {
    let mut msgs = Vec::new();
    let mut raws = Vec::new();
    for s in streams {
        let ends = [("C->S", &s.to_server), ("S->C", &s.to_client)];
        if let Some(v) = dbd_opening(&s.to_server.bytes) {
            decode_dbd_stream(s.index, ends, v, true, &mut msgs, &mut raws);
            continue;
        }
        if let Some((v, n)) = persist_rpc_opening(&s.to_server.bytes) {
            decode_persist_rpc_stream(s.index, ends, v, n, &mut msgs, &mut raws);
            continue;
        }
        if let Some(v) = release {
            // without its SYN, the first talker may have been the server
            let [a, b] = ends;
            if a.1.dst.port() == DBD_PORT {
                decode_dbd_stream(s.index, [a, b], v, false, &mut msgs, &mut raws);
                continue;
            }
            if a.1.src.port() == DBD_PORT {
                let ends = [("C->S", b.1), ("S->C", a.1)];
                decode_dbd_stream(s.index, ends, v, false, &mut msgs, &mut raws);
                continue;
            }
        }
        for (dir, d) in ends {
            if d.bytes.is_empty() {
                continue;
            }
            match split_frames(&d.bytes) {
                Some(frames) => {
                    for (off, raw) in frames {
                        let (version, name) = rpc_label(raw);
                        msgs.push(CapturedMsg {
                            stream: s.index,
                            dir,
                            src: d.src,
                            dst: d.dst,
                            time_us: d.time_at(off),
                            raw,
                            dbd: false,
                            rpc_body: false,
                            version,
                            name,
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

/// A slurmdbd connection, client end first, read in release `v`. With
/// `opening`, it starts with the handshake in `v`, and the rest is in the
/// server's answer's `ret_info` (the release both sides then speak).
fn decode_dbd_stream<'a>(
    stream: usize,
    ends: [(&'static str, &'a Direction); 2],
    v: ProtocolVersion,
    opening: bool,
    msgs: &mut Vec<CapturedMsg<'a>>,
    raws: &mut Vec<RawRun>,
) {
    let mut split = Vec::new();
    for (dir, d) in ends {
        if d.bytes.is_empty() {
            continue;
        }
        match split_persist(&d.bytes) {
            Some(frames) => split.push((dir, d, frames)),
            None => raws.push(RawRun {
                stream,
                dir,
                len: d.bytes.len(),
            }),
        }
    }
    let handshake = usize::from(opening);
    let mut agreed = v;
    for (dir, d, frames) in &split {
        for &(off, raw) in frames.iter().take(handshake) {
            let outcome = decode_dbd_strict(v, raw);
            if let Ok(Decoded::Dbd(DbdMessage::PersistRc(rc))) = &outcome {
                agreed = ProtocolVersion::from_wire(rc.ret_info).unwrap_or(v);
            }
            msgs.push(dbd_msg(stream, dir, d, off, raw, v, outcome));
        }
    }
    for (dir, d, frames) in &split {
        for &(off, raw) in frames.iter().skip(handshake) {
            let outcome = decode_dbd_strict(agreed, raw);
            msgs.push(dbd_msg(stream, dir, d, off, raw, agreed, outcome));
        }
    }
}

/// (release, length) of the opening RPC frame when `bytes` start with
/// REQUEST_PERSIST_INIT as a plain RPC (no SLURMDBD_CONNECTION flag) and the
/// rest divides into persistent-connection messages.
pub fn persist_rpc_opening(bytes: &[u8]) -> Option<(ProtocolVersion, usize)> {
    let n = frame_len(bytes).ok()??;
    let word = |at: usize| {
        bytes
            .get(at..at + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
    };
    let v = ProtocolVersion::from_wire(word(4)?)?;
    let init = MsgType::RequestPersistInit.to_wire(v)?;
    let plain = word(6)? & flags::SLURMDBD_CONNECTION == 0;
    (plain && word(8)? == init && split_persist(bytes.get(n..)?).is_some()).then_some((v, n))
}

/// The opening frame of a persistent connection to a controller, checked to
/// re-encode to its bytes.
pub fn decode_persist_init_strict(raw: &[u8]) -> Result<Decoded, DecodeError> {
    let frame = Frame::decode_prefixed(raw)?;
    let req: PersistInitReqMsg =
        decode_exact(&frame.body, frame.header.version).map_err(|e| e.within("persist_init"))?;
    let body = encode_to_vec(&req, frame.header.version);
    if body != frame.body {
        return Err(mismatch(&frame.body, &body).within("re-encode of body"));
    }
    let again = frame.encode();
    if again != raw {
        return Err(mismatch(raw, &again).within("re-encode of frame"));
    }
    Ok(Decoded::PersistInit { frame, req })
}

/// A message after that opening: SLURM_PERSIST_RC (the DBD codec's), or an
/// RPC body of the type in front of it, checked to re-encode to its bytes.
pub fn decode_persist_rpc_strict(v: ProtocolVersion, raw: &[u8]) -> Result<Decoded, DecodeError> {
    let m = persist::decode_one(raw)?;
    let Some(ty) = MsgType::from_wire(v, m.msg_type) else {
        return Err(DecodeError::new(
            DecodeErrorKind::UnknownMsgType {
                version: v,
                number: m.msg_type,
            },
            0,
        ));
    };
    if ty == MsgType::PersistRc {
        return decode_dbd_strict(v, raw);
    }
    let msg = Message::decode(v, ty, m.body)?;
    let again = msg.encode_to_vec(v);
    if again != m.body {
        return Err(mismatch(m.body, &again).within("re-encode of body"));
    }
    Ok(Decoded::PersistRpc(Box::new(msg)))
}

/// A persistent connection to a controller, client end first: the opening
/// frame (`n` bytes, in release `v`), then messages in the release the
/// answer's `ret_info` names.
fn decode_persist_rpc_stream<'a>(
    stream: usize,
    [(cdir, c), (sdir, srv)]: [(&'static str, &'a Direction); 2],
    v: ProtocolVersion,
    n: usize,
    msgs: &mut Vec<CapturedMsg<'a>>,
    raws: &mut Vec<RawRun>,
) {
    let open = &c.bytes[..n];
    let (version, name) = rpc_label(open);
    msgs.push(CapturedMsg {
        stream,
        dir: cdir,
        src: c.src,
        dst: c.dst,
        time_us: c.time_at(0),
        raw: open,
        dbd: false,
        rpc_body: false,
        version,
        name,
        outcome: decode_persist_init_strict(open),
    });
    let answers = match split_persist(&srv.bytes) {
        Some(f) => f,
        None => {
            raws.push(RawRun {
                stream,
                dir: sdir,
                len: srv.bytes.len(),
            });
            Vec::new()
        }
    };
    let agreed = answers
        .first()
        .and_then(|&(_, raw)| match decode_dbd_strict(v, raw) {
            Ok(Decoded::Dbd(DbdMessage::PersistRc(rc))) => ProtocolVersion::from_wire(rc.ret_info),
            _ => None,
        })
        .unwrap_or(v);
    let requests = split_persist(&c.bytes[n..]).unwrap_or_default();
    let ends = [(cdir, c, n, requests), (sdir, srv, 0, answers)];
    for (dir, d, base, frames) in ends {
        for (off, raw) in frames {
            let first = dir == sdir && off == 0;
            let rv = if first { v } else { agreed };
            let name = raw
                .get(4..6)
                .map(|b| u16::from_be_bytes([b[0], b[1]]))
                .map_or("?".into(), |t| {
                    MsgType::from_wire(rv, t)
                        .map_or_else(|| format!("UNKNOWN({t})"), |m| m.name().to_string())
                });
            msgs.push(CapturedMsg {
                stream,
                dir,
                src: d.src,
                dst: d.dst,
                time_us: d.time_at(base + off),
                raw,
                dbd: true,
                rpc_body: true,
                version: Some(rv),
                name,
                outcome: decode_persist_rpc_strict(rv, raw),
            });
        }
    }
}

fn dbd_msg<'a>(
    stream: usize,
    dir: &'static str,
    d: &Direction,
    off: usize,
    raw: &'a [u8],
    v: ProtocolVersion,
    outcome: Result<Decoded, DecodeError>,
) -> CapturedMsg<'a> {
    CapturedMsg {
        stream,
        dir,
        src: d.src,
        dst: d.dst,
        time_us: d.time_at(off),
        raw,
        dbd: true,
        rpc_body: false,
        version: Some(v),
        name: dbd_name(v, raw),
        outcome,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(dbd: bool, kind: DecodeErrorKind) -> CapturedMsg<'static> {
        let a: SocketAddr = "10.0.0.1:1".parse().unwrap();
        CapturedMsg {
            stream: 1,
            dir: "C->S",
            src: a,
            dst: a,
            time_us: 0,
            raw: &[],
            dbd,
            rpc_body: false,
            version: Some(ProtocolVersion::V24_11),
            name: "DBD_REGISTER_CTLD".into(),
            outcome: Err(DecodeError::new(kind, 0)),
        }
    }

    #[test]
    fn only_a_dbd_body_without_codec_awaits_one() {
        let none = || DecodeErrorKind::UnsupportedBody("X", ProtocolVersion::V24_11);
        assert!(msg(true, none()).awaits_codec());
        // an RPC body without codec stays a failure, as before
        assert!(!msg(false, none()).awaits_codec());
        let cut = DecodeErrorKind::Truncated {
            needed: 2,
            remaining: 1,
        };
        assert!(!msg(true, cut).awaits_codec());
    }

    #[test]
    fn an_rpc_frame_is_not_a_dbd_opening() {
        let init = [0, 0, 0, 20, 0x2a, 0x00, 0x19, 0x64];
        assert_eq!(dbd_opening(&init), None, "truncated");
        // u32 length | u16 6500 | u16 24.11 (header version) | ...
        let mut dbd = vec![0, 0, 0, 6, 0x19, 0x64, 0x2a, 0x00, 0, 0];
        assert_eq!(dbd_opening(&dbd), Some(ProtocolVersion::V24_11));
        // an RPC frame: u32 length | u16 version | u16 flags | ...
        dbd[4..6].copy_from_slice(&[0x2a, 0x00]);
        assert_eq!(dbd_opening(&dbd), None);
    }

    #[test]
    fn a_plain_persist_init_frame_opens_an_rpc_persistent_connection() {
        // u32 length | u16 24.11 | u16 flags | u16 6500 | ...: an RPC frame of 20 bytes
        let mut init = vec![0, 0, 0, 20, 0x2a, 0x00, 0x00, 0x01, 0x19, 0x64];
        init.resize(24, 0);
        assert_eq!(
            persist_rpc_opening(&init),
            Some((ProtocolVersion::V24_11, 24))
        );
        // then u32 length | u16 10001 | body
        let mut more = init.clone();
        more.extend([0, 0, 0, 6, 0x27, 0x11, 0, 0, 0, 0]);
        assert_eq!(
            persist_rpc_opening(&more),
            Some((ProtocolVersion::V24_11, 24))
        );
        // what follows must divide into messages
        more.push(0);
        assert_eq!(persist_rpc_opening(&more), None);
        // with SLURMDBD_CONNECTION it would be the DBD form's frame, not this
        let mut dbd = init.clone();
        dbd[6..8].copy_from_slice(&flags::SLURMDBD_CONNECTION.to_be_bytes());
        assert_eq!(persist_rpc_opening(&dbd), None);
        // another RPC type is an ordinary connection
        let mut ping = init;
        ping[8..10].copy_from_slice(&1008u16.to_be_bytes());
        assert_eq!(persist_rpc_opening(&ping), None);
    }
}
