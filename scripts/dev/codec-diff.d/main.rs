//! The comparison program of scripts/dev/codec-diff (built in the target dir, next to the baseline's
//! wire/ extracted as slurm-wire-v0): old and new codec, same inputs, same outcome.

use arbitrary::{Arbitrary, Unstructured};
use std::process::ExitCode;

/// xorshift64*: reproducible from the seed, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// Ok: the re-encodings in every release; Err: kind, offset and field path.
type Outcome = Result<Vec<Vec<u8>>, (String, usize, String)>;

fn old_outcome(vi: usize, ti: usize, b: &[u8]) -> Outcome {
    let v = old::ProtocolVersion::ALL[vi];
    match old::Message::decode(v, old::Message::SUPPORTED[ti], b) {
        Ok(m) => Ok(old::ProtocolVersion::ALL
            .iter()
            .map(|&v| m.encode_to_vec(v))
            .collect()),
        Err(e) => Err((format!("{:?}", e.kind), e.offset, e.path())),
    }
}

fn new_outcome(vi: usize, ti: usize, b: &[u8]) -> Outcome {
    let v = new::ProtocolVersion::ALL[vi];
    match new::Message::decode(v, new::Message::SUPPORTED[ti], b) {
        Ok(m) => Ok(new::ProtocolVersion::ALL
            .iter()
            .map(|&v| m.encode_to_vec(v))
            .collect()),
        Err(e) => Err((format!("{:?}", e.kind), e.offset, e.path())),
    }
}

struct Stats {
    compared: u64,
    ok: u64,
    failures: u64,
    /// Same kind and offset, another field path: reported, not a failure (paths may be renamed).
    path_changes: std::collections::BTreeMap<(String, String), u64>,
}

impl Stats {
    fn check(&mut self, what: &str, vi: usize, ti: usize, b: &[u8]) {
        let (o, n) = (old_outcome(vi, ti, b), new_outcome(vi, ti, b));
        self.compared += 1;
        if o.is_ok() {
            self.ok += 1;
        }
        let same = match (&o, &n) {
            (Err((ko, oo, po)), Err((kn, on, pn))) if ko == kn && oo == on && po != pn => {
                *self
                    .path_changes
                    .entry((po.clone(), pn.clone()))
                    .or_default() += 1;
                true
            }
            _ => o == n,
        };
        if !same {
            self.failures += 1;
            if self.failures <= 10 {
                let name = new::Message::SUPPORTED[ti].name();
                let v = new::ProtocolVersion::ALL[vi];
                let show = |x: &Outcome| match x {
                    Ok(encs) => format!("Ok ({} bytes at {v:?})", encs[vi].len()),
                    Err(e) => format!("Err {e:?}"),
                };
                eprintln!(
                    "DIFF {what} {name} at {v:?} ({} bytes): old {} / new {}",
                    b.len(),
                    show(&o),
                    show(&n)
                );
            }
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let iters: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(2000);
    let seed: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let types = new::Message::SUPPORTED.len();
    assert_eq!(types, old::Message::SUPPORTED.len(), "same message list");
    for (o, n) in old::Message::SUPPORTED.iter().zip(new::Message::SUPPORTED) {
        assert_eq!(o.name(), n.name(), "same message order");
    }
    let versions = new::ProtocolVersion::ALL.len();
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut st = Stats {
        compared: 0,
        ok: 0,
        failures: 0,
        path_changes: Default::default(),
    };
    let mut enc_failures = 0u64;
    let mut built = 0u64;
    let mut reordered_values = 0u64;
    for _ in 0..iters {
        // Values: the same arbitrary bytes build the same value in both (same fields, same order).
        let len = 64 + rng.below(4096);
        let raw = rng.bytes(len);
        let (mut uo, mut un) = (Unstructured::new(&raw), Unstructured::new(&raw));
        let (Ok(mo), Ok(mn)) = (
            old::Message::arbitrary(&mut uo),
            new::Message::arbitrary(&mut un),
        ) else {
            continue;
        };
        built += 1;
        let ti = new::Message::SUPPORTED
            .iter()
            .position(|&t| t == mn.msg_type())
            .expect("supported");
        for vi in 0..versions {
            let bo = mo.encode_to_vec(old::ProtocolVersion::ALL[vi]);
            let bn = mn.encode_to_vec(new::ProtocolVersion::ALL[vi]);
            // A body whose struct fields were reordered builds another value from the same bytes; then
            // each encoding must still read back identically in the other codec (checked just below).
            let reordered = bo != bn;
            if reordered {
                reordered_values += 1;
                st.check("valid-old", vi, ti, &bo);
            }
            let enc_ok = |b: &[u8]| {
                matches!(new_outcome(vi, ti, b), Ok(ref e) if e[vi] == b)
                    && matches!(old_outcome(vi, ti, b), Ok(ref e) if e[vi] == b)
            };
            if !enc_ok(&bn) || (reordered && !enc_ok(&bo)) {
                enc_failures += 1;
                if enc_failures <= 10 {
                    eprintln!(
                        "DIFF encode {} at {:?}: {} vs {} bytes",
                        mn.msg_type().name(),
                        new::ProtocolVersion::ALL[vi],
                        bo.len(),
                        bn.len()
                    );
                }
            }
            st.check("valid", vi, ti, &bn);
            if !bn.is_empty() {
                let cut = rng.below(bn.len());
                st.check("truncated", vi, ti, &bn[..cut]);
                let mut flipped = bn.clone();
                for _ in 0..1 + rng.below(3) {
                    let at = rng.below(flipped.len());
                    flipped[at] ^= 1 << rng.below(8);
                }
                st.check("flipped", vi, ti, &flipped);
                let mut grown = bn.clone();
                grown.push(0);
                st.check("trailing", vi, ti, &grown);
            }
        }
        // Raw bytes, for a random type and version.
        let len = rng.below(256);
        let junk = rng.bytes(len);
        st.check("random", rng.below(versions), rng.below(types), &junk);
    }
    for ((po, pn), k) in &st.path_changes {
        println!("path change ({k}x): {po:?} -> {pn:?}");
    }
    println!(
        "codec-diff: {built} values x {versions} releases ({reordered_values} encodings of reordered structs cross-checked); \
         {} decodes compared ({} Ok); {} decode differences, {} encode differences",
        st.compared, st.ok, st.failures, enc_failures
    );
    if st.failures == 0 && enc_failures == 0 && built > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
