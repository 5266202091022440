#![no_main]

// --dependency lists, parsed as a submit parses them (against an empty
// controller): at most MAX_DEPENDENCIES elements, and the tasks of one
// element only below MaxArraySize.
use libfuzzer_sys::fuzz_target;
use slurmctld::state::depend::{ids_of, MAX_DEPENDENCIES};
use slurmctld::state::Controller;

const CONF: &str = "\
ClusterName=f
SlurmctldHost=ctl
SlurmUser=root
MaxArraySize=1001
NodeName=n[1-2] CPUs=4 RealMemory=1000
PartitionName=debug Nodes=n[1-2] Default=YES State=UP
";

fn controller() -> &'static Controller {
    static C: std::sync::OnceLock<Controller> = std::sync::OnceLock::new();
    C.get_or_init(|| {
        let conf = slurm_conf::SlurmConf::parse_str(CONF, "/etc/slurm/slurm.conf").unwrap();
        let conf = slurmctld::state::config::ClusterConf::new(conf, 0).unwrap();
        Controller::new(conf, 1000)
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(deps) = controller().dependency_elements(s) {
        assert!(deps.len() <= MAX_DEPENDENCIES);
    }
    if let Ok(ids) = ids_of(s, 1001) {
        assert!(ids.len() <= 1001);
    }
});
