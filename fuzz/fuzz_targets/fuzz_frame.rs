#![no_main]
use libfuzzer_sys::fuzz_target;
use slurm_wire::Frame;

fuzz_target!(|data: &[u8]| {
    if let Ok(f) = Frame::decode(data) {
        if let Ok(m) = f.message() {
            assert_eq!(m.encode_to_vec(f.header.version), f.body, "body re-encodes identically");
        }
    }
});
