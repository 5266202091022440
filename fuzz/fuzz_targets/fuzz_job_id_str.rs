#![no_main]

// scancel / scontrol update, hold, requeue job id strings: never more
// tasks than MaxArraySize, none at or past it.
use libfuzzer_sys::fuzz_target;
use slurmctld::state::array::parse_job_id_str;

const MAX: u32 = 1001;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    for max in [MAX, 0, 1] {
        if let Ok((id, tasks)) = parse_job_id_str(s, max) {
            assert_ne!(id, 0);
            if let Some(t) = tasks {
                assert!(!t.is_empty());
                assert!(t.len() <= max as usize, "{s:?}: {} tasks", t.len());
                assert!(t.iter().all(|&x| x < max), "{s:?}");
            }
        }
    }
});
