#![no_main]
use libfuzzer_sys::fuzz_target;
use slurm_wire::pack::{Reader, Writer};
use slurm_wire::Header;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    if let Ok(h) = Header::decode(&mut r) {
        let used = r.position();
        let mut w = Writer::new();
        h.encode(&mut w);
        assert_eq!(w.as_slice(), &data[..used], "header re-encodes identically");
    }
});
