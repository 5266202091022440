#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use slurm_conf::GresConf;

fn no_files(_: &Path) -> std::io::Result<Vec<u8>> {
    Err(std::io::Error::from(std::io::ErrorKind::NotFound))
}

fuzz_target!(|data: &[u8]| {
    if let Ok(g) = GresConf::parse_with_loader(data, Path::new("gres.conf"), &no_files) {
        let _ = g.for_node("n1").count();
    }
});
