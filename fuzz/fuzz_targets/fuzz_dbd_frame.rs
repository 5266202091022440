#![no_main]
// A slurmdbd persistent-connection stream: split it into messages and type
// each one; whatever decodes must re-encode to the bytes it came from.
use libfuzzer_sys::fuzz_target;
use slurm_wire::dbd::persist::next_msg;
use slurm_wire::dbd::DbdMessage;
use slurm_wire::ProtocolVersion;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, mut rest)) = data.split_first() else {
        return;
    };
    let all = ProtocolVersion::ALL;
    let v = all[usize::from(pick) % all.len()];
    while let Ok(Some((raw, used))) = next_msg(rest, 1 << 20) {
        if let Ok(m) = DbdMessage::decode(v, raw) {
            let again = m.encode(v).expect("a decoded message encodes in its release");
            assert_eq!(again, &rest[..used], "message re-encodes identically");
        }
        rest = &rest[used..];
    }
});
