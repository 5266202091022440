//! The log's record framing, and the scan that tells a torn tail from a
//! corrupt middle.
//!
//! Format 6 record: `"SRec" | len u32 | fnv1a(marker, len) u32 | seq u64 |
//! time i64 | command | fnv1a(len, seq, time, command) u32`, where `len`
//! counts `seq | time | command`. The header's own checksum means a
//! damaged length is seen as damage, never as "the record runs past the
//! end". Formats 1-5 (`len u32 | seq | time | command | fnv1a`, `len`
//! counting what follows it) are still read, for an upgrade.
//!
//! A record that does not check out is a torn tail (cut, as from a crash or
//! ENOSPC mid-write: it was never acknowledged) only when no whole valid
//! record follows it anywhere in the file; otherwise the file is corrupt
//! in the middle, and records that were acknowledged follow: the start
//! stops, naming the offset.

use super::shared::fnv1a;

const MARKER: &[u8; 4] = b"SRec";
/// Header (marker, len, header checksum) of a format 6 record.
const HEADER: usize = 12;
/// Smallest body: seq, time and a command tag.
const MIN_BODY: usize = 17;
/// Largest body accepted: above any command (job scripts included).
pub const MAX_BODY: usize = 1 << 30;

/// The first format whose log records carry a marker and a checked length.
pub const FRAMED: u32 = 6;

/// One whole record.
#[derive(Debug, Clone, PartialEq)]
pub struct Record<'a> {
    /// Where it starts in the file.
    pub offset: usize,
    pub seq: u64,
    pub time: i64,
    /// The encoded command.
    pub command: &'a [u8],
}

/// What a scan of the log found.
#[derive(Debug)]
pub struct Scan<'a> {
    pub records: Vec<Record<'a>>,
    /// End of the last whole record: where the log continues.
    pub good_end: usize,
    /// A torn last record was found (starting at `good_end`).
    pub torn: bool,
}

/// Damage followed by valid records.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{what} (a valid record follows at byte {next})")]
pub struct MidCorruption {
    pub offset: usize,
    pub what: &'static str,
    pub next: usize,
}

/// The record form of `seq | time | command`.
pub fn encode(seq: u64, time: i64, command: &[u8]) -> Vec<u8> {
    let len = (16 + command.len()) as u32;
    let mut rec = Vec::with_capacity(HEADER + 16 + command.len() + 4);
    rec.extend_from_slice(MARKER);
    rec.extend_from_slice(&len.to_be_bytes());
    let hsum = fnv1a(&rec);
    rec.extend_from_slice(&hsum.to_be_bytes());
    rec.extend_from_slice(&seq.to_be_bytes());
    rec.extend_from_slice(&time.to_be_bytes());
    rec.extend_from_slice(command);
    let mut sum_over = len.to_be_bytes().to_vec();
    sum_over.extend_from_slice(&rec[HEADER..]);
    rec.extend_from_slice(&fnv1a(&sum_over).to_be_bytes());
    rec
}

/// Why a record at some offset is not whole.
enum Defect {
    /// Ends before the record could (the file stops inside it).
    Short,
    Bad(&'static str),
}

fn be_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// How a format frames its records. A record's contents (`seq | time |
/// command`) are the same in every format, so only the framing differs.
trait Framing {
    /// Whether a record may start at `o` (cheap, before a full check).
    fn may_start(b: &[u8], o: usize) -> bool;
    /// The whole record at `at`, and where it ends.
    fn record_at(b: &[u8], at: usize) -> Result<(Record<'_>, usize), Defect>;
}

/// Format 6 on: marker, length and the header's own checksum.
struct Framed;

/// Formats 1-5: `len u32 | seq | time | command | fnv1a`, `len` counting
/// what follows it.
struct Unframed;

impl Framing for Framed {
    fn may_start(b: &[u8], o: usize) -> bool {
        b[o..].starts_with(MARKER)
    }

    fn record_at(b: &[u8], at: usize) -> Result<(Record<'_>, usize), Defect> {
        let h = b.get(at..at + HEADER).ok_or(Defect::Short)?;
        if &h[..4] != MARKER {
            return Err(Defect::Bad("no record marker"));
        }
        if be_u32(h, 8) != Some(fnv1a(&h[..8])) {
            return Err(Defect::Bad("record header checksum mismatch"));
        }
        let len = be_u32(h, 4).unwrap_or_default() as usize;
        if !(MIN_BODY..=MAX_BODY).contains(&len) {
            return Err(Defect::Bad("record length out of range"));
        }
        let body_at = at + HEADER;
        let end = body_at + len + 4;
        let body = b.get(body_at..body_at + len).ok_or(Defect::Short)?;
        let sum = be_u32(b, body_at + len).ok_or(Defect::Short)?;
        let mut over = Vec::with_capacity(4 + len);
        over.extend_from_slice(&h[4..8]);
        over.extend_from_slice(body);
        if fnv1a(&over) != sum {
            return Err(Defect::Bad("record checksum mismatch"));
        }
        Ok((split(at, body), end))
    }
}

impl Framing for Unframed {
    fn may_start(_: &[u8], _: usize) -> bool {
        true
    }

    fn record_at(b: &[u8], at: usize) -> Result<(Record<'_>, usize), Defect> {
        let len = be_u32(b, at).ok_or(Defect::Short)? as usize;
        if !(MIN_BODY + 4..=MAX_BODY).contains(&len) {
            return Err(Defect::Bad("record length out of range"));
        }
        let rec = b.get(at + 4..at + 4 + len).ok_or(Defect::Short)?;
        let (data, sum) = rec.split_at(len - 4);
        if be_u32(sum, 0) != Some(fnv1a(data)) {
            return Err(Defect::Bad("record checksum mismatch"));
        }
        Ok((split(at, data), at + 4 + len))
    }
}

/// `seq | time | command` of a checked body (at least MIN_BODY bytes).
fn split(offset: usize, body: &[u8]) -> Record<'_> {
    let seq = u64::from_be_bytes(body[..8].try_into().unwrap_or_default());
    let time = i64::from_be_bytes(body[8..16].try_into().unwrap_or_default());
    Record {
        offset,
        seq,
        time,
        command: &body[16..],
    }
}

/// The first whole record starting after `at`, if any.
fn next_valid<F: Framing>(b: &[u8], at: usize) -> Option<usize> {
    (at + 1..b.len()).find(|&o| F::may_start(b, o) && F::record_at(b, o).is_ok())
}

/// Splits the records of a log body starting at `start` (after the file
/// header) in a file of `format`.
pub fn scan(b: &[u8], start: usize, format: u32) -> Result<Scan<'_>, MidCorruption> {
    if format >= FRAMED {
        scan_as::<Framed>(b, start)
    } else {
        scan_as::<Unframed>(b, start)
    }
}

fn scan_as<F: Framing>(b: &[u8], start: usize) -> Result<Scan<'_>, MidCorruption> {
    let mut records = Vec::new();
    let mut at = start;
    while at < b.len() {
        match F::record_at(b, at) {
            Ok((r, end)) => {
                records.push(r);
                at = end;
            }
            Err(d) => {
                if let Some(next) = next_valid::<F>(b, at) {
                    let what = match d {
                        Defect::Short => "record runs into the next one",
                        Defect::Bad(w) => w,
                    };
                    return Err(MidCorruption {
                        offset: at,
                        what,
                        next,
                    });
                }
                return Ok(Scan {
                    records,
                    good_end: at,
                    torn: true,
                });
            }
        }
    }
    Ok(Scan {
        records,
        good_end: at,
        torn: false,
    })
}

/// The record as formats 1-5 framed it (fixtures for the tests of
/// reading old logs).
#[cfg(test)]
pub(crate) fn encode_unframed(seq: u64, time: i64, command: &[u8]) -> Vec<u8> {
    let mut data = seq.to_be_bytes().to_vec();
    data.extend_from_slice(&time.to_be_bytes());
    data.extend_from_slice(command);
    let mut rec = ((data.len() + 4) as u32).to_be_bytes().to_vec();
    rec.extend_from_slice(&data);
    rec.extend_from_slice(&fnv1a(&data).to_be_bytes());
    rec
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(n: u64) -> Vec<u8> {
        let mut b = vec![0u8; 12];
        for i in 1..=n {
            b.extend(encode(i, 1000 + i as i64, &[0]));
        }
        b
    }

    #[test]
    fn whole_records_round_trip() {
        let b = log(3);
        let s = scan(&b, 12, FRAMED).unwrap();
        assert_eq!(s.records.len(), 3);
        assert_eq!(s.records[2].seq, 3);
        assert_eq!(s.records[2].time, 1003);
        assert_eq!(s.records[2].command, &[0]);
        assert_eq!(s.good_end, b.len());
        assert!(!s.torn);
    }

    #[test]
    fn every_cut_of_the_last_record_is_a_torn_tail() {
        let b = log(3);
        let two = scan(&b, 12, FRAMED).unwrap().records[2].offset;
        for cut in two + 1..b.len() {
            let s = scan(&b[..cut], 12, FRAMED).unwrap();
            assert_eq!(
                (s.records.len(), s.good_end, s.torn),
                (2, two, true),
                "{cut}"
            );
        }
        // So is a last record whose size was extended but never written.
        let mut z = b[..two].to_vec();
        z.resize(b.len(), 0);
        let s = scan(&z, 12, FRAMED).unwrap();
        assert_eq!((s.records.len(), s.torn), (2, true));
    }

    #[test]
    fn damage_before_a_valid_record_is_corruption_anywhere_in_a_record() {
        let b = log(3);
        let s = scan(&b, 12, FRAMED).unwrap();
        let (first, second) = (s.records[1].offset, s.records[2].offset);
        for i in first..second {
            let mut bad = b.clone();
            bad[i] ^= 0x40;
            let e = scan(&bad, 12, FRAMED).unwrap_err();
            assert_eq!((e.offset, e.next), (first, second), "byte {i}: {e}");
        }
        // A length made huge is damage, not a record running past the end.
        let mut bad = b.clone();
        bad[first + 4] = 0x7f;
        let e = scan(&bad, 12, FRAMED).unwrap_err();
        assert_eq!(e.what, "record header checksum mismatch");
    }

    #[test]
    fn formats_before_6_are_read_with_their_own_framing() {
        let mut b = vec![0u8; 12];
        for i in 1..=3 {
            b.extend(encode_unframed(i, 1000 + i as i64, &[0]));
        }
        let s = scan(&b, 12, FRAMED - 1).unwrap();
        let got: Vec<(u64, i64)> = s.records.iter().map(|r| (r.seq, r.time)).collect();
        assert_eq!(got, [(1, 1001), (2, 1002), (3, 1003)]);
        assert!(!s.torn);
        // Not as the framed format (no marker), ...
        assert!(scan(&b, 12, FRAMED).unwrap().records.is_empty());
        // ... and damage before a valid record is still corruption.
        let (first, second) = (s.records[1].offset, s.records[2].offset);
        let mut bad = b.clone();
        bad[first + 6] ^= 0x40;
        let e = scan(&bad, 12, FRAMED - 1).unwrap_err();
        assert_eq!((e.offset, e.next), (first, second), "{e}");
    }
}
