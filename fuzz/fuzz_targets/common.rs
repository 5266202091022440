// A small cluster to load state into.
use slurmctld::state::config::ClusterConf;
use slurmctld::state::Controller;

const CONF: &str = "ClusterName=f\nSlurmctldHost=ctl\nSlurmUser=root\n\
NodeName=n[1-4] CPUs=4 RealMemory=1000 Gres=gpu:2\n\
PartitionName=debug Nodes=n[1-4] Default=YES State=UP\n";

pub fn controller() -> Controller {
    let conf = slurm_conf::SlurmConf::parse_str(CONF, "/etc/slurm/slurm.conf").expect("conf");
    Controller::new(ClusterConf::new(conf, 0).expect("cluster"), 1000)
}

/// `magic | version | body`: the first input byte picks the format.
pub fn file(magic: &[u8; 8], data: &[u8]) -> Vec<u8> {
    let (v, body) = data.split_first().map(|(v, b)| (*v, b)).unwrap_or((0, &[][..]));
    let mut b = magic.to_vec();
    b.extend_from_slice(&u32::from(1 + v % 7).to_be_bytes());
    b.extend_from_slice(body);
    b
}
