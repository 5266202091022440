//! Property: for every message type and every protocol version that has it,
//! encoding any value and decoding it back gives a value that re-encodes to
//! the same bytes and decodes to itself.

use arbitrary::{Arbitrary, Unstructured};
use proptest::collection::vec;
use proptest::prelude::any;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use slurm_wire::{Message, MsgType, ProtocolVersion};
use std::cell::RefCell;
use std::collections::BTreeSet;

fn check(msg: &Message) -> Result<bool, TestCaseError> {
    let ty = msg.msg_type();
    let mut any_version = false;
    for v in ProtocolVersion::ALL {
        if ty.to_wire(v).is_none() {
            continue;
        }
        any_version = true;
        let bytes = msg.encode_to_vec(v);
        let back = Message::decode(v, ty, &bytes)
            .map_err(|e| TestCaseError::fail(format!("{ty} at {v}: {e}\nvalue: {msg:?}")))?;
        let again = back.encode_to_vec(v);
        if again != bytes {
            return Err(TestCaseError::fail(format!(
                "{ty} at {v}: re-encoding differs"
            )));
        }
        let back2 = Message::decode(v, ty, &again)
            .map_err(|e| TestCaseError::fail(format!("{ty} at {v} (2nd): {e}")))?;
        if back2 != back {
            return Err(TestCaseError::fail(format!(
                "{ty} at {v}: decode is not stable"
            )));
        }
    }
    Ok(any_version)
}

#[test]
fn every_message_round_trips_in_every_version() {
    let seen: RefCell<BTreeSet<MsgType>> = RefCell::new(BTreeSet::new());
    let mut runner = TestRunner::new(Config {
        cases: 1500,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&vec(any::<u8>(), 0..6000), |data| {
            let mut u = Unstructured::new(&data);
            let Ok(msg) = Message::arbitrary(&mut u) else {
                return Ok(());
            };
            if check(&msg)? {
                seen.borrow_mut().insert(msg.msg_type());
            }
            Ok(())
        })
        .unwrap();
    let missing: Vec<_> = Message::SUPPORTED
        .iter()
        .filter(|t| !seen.borrow().contains(t))
        .collect();
    assert!(missing.is_empty(), "never generated: {missing:?}");
}

/// Found by fuzz_msg_job: a 23.02 allocation reply with node_cnt 0 and an
/// empty (present) node address array must re-encode identically.
#[test]
fn empty_node_addr_array_reencodes() {
    let hex = "294100000000000000000000000000000000000000000000000000000000000000000000000000000000010000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000";
    let data: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let v = ProtocolVersion::ALL[usize::from(data[0]) % ProtocolVersion::ALL.len()];
    let body = &data[2..];
    let m = Message::decode(v, MsgType::ResponseResourceAllocation, body).unwrap();
    assert_eq!(m.encode_to_vec(v), body);
}
