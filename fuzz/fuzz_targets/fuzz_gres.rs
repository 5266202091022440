#![no_main]
//! A job's per-node GRES (`tres_per_node`, from --gres) and a node's
//! `Gres=`: any text, never a panic, and never more items than the text
//! has commas to separate.

use libfuzzer_sys::fuzz_target;
use slurmctld::gres::{parse_node_gres, parse_per_node};

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let items = s.matches(',').count() + 1;
    if let Ok(reqs) = parse_per_node(s) {
        assert!(reqs.len() <= items);
        let have = parse_node_gres(s);
        assert!(have.len() <= items);
        for r in &reqs {
            let _ = r.available_in(&have);
        }
    }
});
