#![no_main]
//! Message family `slurmdb`: byte 0 picks the version, byte 1 the type.
use libfuzzer_sys::fuzz_target;
use slurm_wire::{Message, MsgType, ProtocolVersion};

const TYPES: &[MsgType] = &[MsgType::AccountingUpdateMsg];

fuzz_target!(|data: &[u8]| {
    let [vb, tb, body @ ..] = data else { return };
    let v = ProtocolVersion::ALL[usize::from(*vb) % ProtocolVersion::ALL.len()];
    let ty = TYPES[usize::from(*tb) % TYPES.len()];
    if let Ok(m) = Message::decode(v, ty, body) {
        assert_eq!(m.encode_to_vec(v), body, "{ty} at {v} re-encodes identically");
    }
});
