#![no_main]

use libfuzzer_sys::fuzz_target;
use slurm_conf::Hostlist;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(mut hl) = Hostlist::parse(s) {
        assert_eq!(hl.iter().count(), hl.len());
        let _ = hl.to_string();
        hl.uniq();
        let compressed = hl.to_string();
        let _ = Hostlist::parse(&compressed);
    }
});
