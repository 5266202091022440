//! The write-ahead log's decoder: framing (torn tail or damage), command
//! decoding and replay never panic or allocate without bound.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let b = common::file(b"SRSWAL\0\0", data);
    let mut c = common::controller();
    let _ = slurmctld::persist::replay_log(Path::new("rs_state.wal"), &b, &mut c, 0);
    // Whole records with any body: the command decoder alone, as each
    // format reads it.
    for format in 1..=slurmctld::persist::FORMAT_VERSION {
        let _ = slurmctld::persist::decode_record(format, data);
    }
});
