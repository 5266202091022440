#![no_main]
//! sbatch's --output/--error patterns as the node expands them: any text,
//! never a panic, and a name bounded by the pattern's length (each
//! conversion adds at most a capped width or one of the context's names).

use libfuzzer_sys::fuzz_target;
use slurmd::fname::{expand, FnameCtx};

fuzz_target!(|data: &[u8]| {
    let Ok(format) = std::str::from_utf8(data) else {
        return;
    };
    let ctx = FnameCtx {
        job_id: u32::MAX,
        array_job_id: 7,
        array_task_id: 3,
        job_name: "name".into(),
        user_name: "user".into(),
        hostname: "host".into(),
        node_id: 1,
        work_dir: "/w".into(),
    };
    let out = expand(format, &ctx);
    assert!(out.len() <= 3 + format.len() * 12, "{format:?} -> {} bytes", out.len());
});
