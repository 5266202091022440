#![no_main]
use libfuzzer_sys::fuzz_target;
use slurm_wire::auth::{hash, AuthBlob, VerifyPolicy};
use slurm_wire::pack::{Reader, Writer};

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    if let Ok(a) = AuthBlob::decode(&mut r) {
        let used = r.position();
        let mut w = Writer::new();
        a.encode(&mut w);
        assert_eq!(w.as_slice(), &data[..used]);
    }
    // The payload check sees attacker-chosen payloads after decryption.
    if let Some((&t, rest)) = data.split_first() {
        let _ = hash::check_payload(rest, u16::from(t), data, VerifyPolicy::default());
    }
});
