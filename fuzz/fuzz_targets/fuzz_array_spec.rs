#![no_main]

// sbatch --array and the task lists inside job ids: bounded by
// MaxArraySize, as ranges and as expanded sets.
use libfuzzer_sys::fuzz_target;
use slurmctld::state::array::{parse_spec, parse_tasks, task_ranges};

const MAX: u32 = 1001;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(spec) = parse_spec(s, MAX) {
        assert!(!spec.tasks.is_empty());
        assert!(spec.tasks.len() <= MAX as usize);
        assert!(spec.tasks.iter().all(|&t| t < MAX));
    }
    if let Ok(r) = task_ranges(s, MAX) {
        assert!(r
            .iter()
            .all(|&(lo, hi, step)| lo <= hi && hi < MAX && step > 0));
        let tasks = parse_tasks(s, MAX).expect("ranges parse, so the set does");
        assert!(tasks.len() <= MAX as usize);
    }
});
