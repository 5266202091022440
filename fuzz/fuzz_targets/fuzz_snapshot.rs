//! The snapshot decoder, past its checksum (fixed up here so that the body
//! is what gets explored).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

#[path = "common.rs"]
mod common;

fn fnv1a(b: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for x in b {
        h ^= u32::from(*x);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

fuzz_target!(|data: &[u8]| {
    let mut b = common::file(b"SRSSNAP\0", data);
    // seq, state, checksum: the checksum made right unless the input is short.
    if b.len() >= 12 + 8 {
        let sum = fnv1a(&b[20..]);
        b.extend_from_slice(&sum.to_be_bytes());
    }
    let mut c = common::controller();
    let _ = slurmctld::persist::load_snapshot(Path::new("rs_state.snap"), &b, &mut c);
});
