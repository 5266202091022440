#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use slurm_conf::TopologyConf;

fn no_files(_: &Path) -> std::io::Result<Vec<u8>> {
    Err(std::io::Error::from(std::io::ErrorKind::NotFound))
}

fuzz_target!(|data: &[u8]| {
    if let Ok(t) = TopologyConf::parse_with_loader(data, Path::new("topology.conf"), &no_files) {
        let _ = t.roots().count();
        let _ = t.path_to_root("n1");
    }
});
