#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use slurm_conf::SlurmConf;

// Includes resolve to nothing so the fuzzer never reads the file system.
fn no_files(_: &Path) -> std::io::Result<Vec<u8>> {
    Err(std::io::Error::from(std::io::ErrorKind::NotFound))
}

fuzz_target!(|data: &[u8]| {
    if let Ok(conf) = SlurmConf::parse_with_loader(data, Path::new("slurm.conf"), &no_files) {
        for node in &conf.nodes {
            let _ = node.expand();
        }
        let _ = conf.raw("ClusterName");
    }
});
