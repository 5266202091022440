#![no_main]

// --constraint expressions, by 22.05's rules and by later ones: bounded
// in length and features, and every query on the result terminates.
use libfuzzer_sys::fuzz_target;
use slurmctld::constraint::{Constraint, MAX_FEATURES, MAX_LEN};

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    for v22 in [false, true] {
        if let Ok(c) = Constraint::parse_with(s, v22) {
            assert!(s.len() <= MAX_LEN);
            assert!(c.names().len() <= MAX_FEATURES);
            let alts = c.alternatives();
            assert!(alts <= MAX_FEATURES);
            for alt in 0..alts {
                let _ = c.node_ok(Some("a,b,gpu"), alt);
            }
            let _ = c.counted_nodes();
            let _ = c.counts();
        }
    }
});
