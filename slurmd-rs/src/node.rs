//! Which node this daemon is, and what it reports: slurm.conf's NodeName
//! line merged with the detected hardware.

use crate::hw::Hardware;
use slurm_conf::SlurmConf;
use std::collections::HashMap;

#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum NodeError {
    #[error("node {0} is not in slurm.conf")]
    UnknownNode(String),
    #[error("no NodeName in slurm.conf matches this host ({0}); use -N")]
    NoMatch(String),
    #[error("slurm.conf: {0}")]
    Conf(Box<slurm_conf::ConfError>),
}

/// This node as it registers.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeCfg {
    pub name: String,
    pub hostname: String,
    pub port: u16,
    pub hw: Hardware,
    pub tmp_disk: u32,
    pub cpu_spec_list: Option<String>,
}

/// Resolves the node: `-N` name, else the line whose NodeName or
/// NodeHostname is this host. Hardware is the detected one, except with
/// `SlurmdParameters=config_overrides` (the configured values are
/// reported) or when the configured CPU count matches the detected one
/// (the configured layout is reported so the node does not drain on a
/// layout the admin chose to describe differently, as stock does).
pub fn resolve(
    conf: &SlurmConf,
    name_flag: Option<&str>,
    hostname: &str,
    detected: Hardware,
    detected_tmp_disk: u32,
) -> Result<NodeCfg, NodeError> {
    let mut found = None;
    for nc in &conf.nodes {
        let entries = nc.expand().map_err(|e| NodeError::Conf(Box::new(e)))?;
        for e in entries {
            let hit = match name_flag {
                Some(n) => e.name == n,
                None => e.name == hostname || e.hostname == hostname,
            };
            if hit {
                found = Some((nc, e));
                break;
            }
        }
        if found.is_some() {
            break;
        }
    }
    let Some((nc, entry)) = found else {
        return Err(match name_flag {
            Some(n) => NodeError::UnknownNode(n.to_string()),
            None => NodeError::NoMatch(hostname.to_string()),
        });
    };
    let overrides = conf.slurmd_parameters.has("config_overrides");
    let mut hw = detected;
    let mut tmp_disk = detected_tmp_disk;
    if overrides || nc.cpus == detected.cpus {
        hw.boards = nc.boards.max(1);
        hw.sockets = nc.sockets.max(1);
        hw.cores_per_socket = nc.cores_per_socket.max(1);
        hw.threads_per_core = nc.threads_per_core.max(1);
        hw.cpus = nc.cpus.max(1);
    }
    if overrides {
        if nc.real_memory > 0 {
            hw.real_memory = nc.real_memory;
        }
        tmp_disk = nc.tmp_disk;
    }
    Ok(NodeCfg {
        hostname: if name_flag.is_some() {
            entry.hostname.clone()
        } else {
            hostname.to_string()
        },
        port: entry.port.unwrap_or(conf.slurmd_port),
        name: entry.name,
        hw,
        tmp_disk,
        cpu_spec_list: nc.cpu_spec_list.clone(),
    })
}

/// SlurmdSpoolDir, SlurmdPidFile or SlurmdLogFile with `%h` (host name),
/// then `%n` (node name) replaced. Like stock, only the first of each is:
/// a site's `/x/%n/%n.log` means the same file under both daemons.
pub fn expand_node_path(path: &str, node: &str, host: &str) -> String {
    path.replacen("%h", host, 1).replacen("%n", node, 1)
}

/// Where every configured node's slurmd listens (NodeAddr and Port, else
/// SlurmdPort), by node name: the addresses forwarded messages go to.
pub fn peer_addrs(conf: &SlurmConf) -> Result<HashMap<String, (String, u16)>, NodeError> {
    let mut out = HashMap::new();
    for nc in &conf.nodes {
        for e in nc.expand().map_err(|e| NodeError::Conf(Box::new(e)))? {
            let port = e.port.unwrap_or(conf.slurmd_port);
            out.insert(e.name, (e.addr, port));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hw(cpus: u16) -> Hardware {
        Hardware {
            cpus,
            boards: 1,
            sockets: 1,
            cores_per_socket: cpus,
            threads_per_core: 1,
            real_memory: 24105,
        }
    }

    fn conf(extra: &str) -> SlurmConf {
        SlurmConf::parse_str(
            &format!(
                "ClusterName=c\nSlurmctldHost=ctl\n{extra}\n\
                 NodeName=n[1-2] CPUs=16 RealMemory=64000 TmpDisk=100 Port=[7001-7002]\n\
                 NodeName=vm CPUs=2 Sockets=2 CoresPerSocket=1\n\
                 PartitionName=p Nodes=ALL\n"
            ),
            "/etc/slurm/slurm.conf",
        )
        .unwrap()
    }

    #[test]
    fn by_flag_with_overrides() {
        let c = conf("SlurmdParameters=config_overrides");
        let n = resolve(&c, Some("n2"), "vm", hw(2), 5).unwrap();
        assert_eq!(n.name, "n2");
        assert_eq!(n.port, 7002);
        assert_eq!(n.hw.cpus, 16);
        assert_eq!(n.hw.real_memory, 64000);
        assert_eq!(n.tmp_disk, 100);
        assert_eq!(n.hostname, "n2");
    }

    #[test]
    fn detected_without_overrides() {
        let c = conf("");
        let n = resolve(&c, Some("n1"), "vm", hw(2), 5).unwrap();
        assert_eq!((n.hw.cpus, n.hw.real_memory, n.tmp_disk), (2, 24105, 5));
        assert_eq!(n.port, 7001);
        // By host name; the configured layout wins when the CPU count agrees.
        let n = resolve(&c, None, "vm", hw(2), 5).unwrap();
        assert_eq!(n.name, "vm");
        assert_eq!(n.port, 6818);
        assert_eq!((n.hw.sockets, n.hw.cores_per_socket), (2, 1));
        assert_eq!(n.hw.real_memory, 24105);
    }

    #[test]
    fn unknown_nodes() {
        let c = conf("");
        assert_eq!(
            resolve(&c, Some("zz"), "vm", hw(2), 0),
            Err(NodeError::UnknownNode("zz".into()))
        );
        assert_eq!(
            resolve(&c, None, "other", hw(2), 0),
            Err(NodeError::NoMatch("other".into()))
        );
    }

    #[test]
    fn a_bad_node_line_is_a_conf_error() {
        let c = SlurmConf::parse_str(
            "ClusterName=c\nSlurmctldHost=ctl\nNodeName=n[1-3] NodeAddr=a,b\n",
            "/etc/slurm/slurm.conf",
        )
        .unwrap();
        let source = c.nodes[0].expand().unwrap_err();
        let want = NodeError::Conf(Box::new(source.clone()));
        assert_eq!(peer_addrs(&c), Err(want.clone()));
        assert_eq!(resolve(&c, Some("n1"), "vm", hw(2), 0), Err(want.clone()));
        assert_eq!(want.to_string(), format!("slurm.conf: {source}"));
        assert!(want.to_string().contains("NodeAddr count (2)"), "{want}");
    }

    #[test]
    fn peers_by_name_with_their_address_and_port() {
        let c = SlurmConf::parse_str(
            "ClusterName=c\nSlurmctldHost=ctl\nSlurmdPort=6900\n\
             NodeName=n[1-2] NodeAddr=10.0.0.[1-2] Port=[7001-7002]\n\
             NodeName=vm NodeHostname=host9\n",
            "/etc/slurm/slurm.conf",
        )
        .unwrap();
        let p = peer_addrs(&c).unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p["n1"], ("10.0.0.1".to_string(), 7001));
        assert_eq!(p["n2"], ("10.0.0.2".to_string(), 7002));
        // No NodeAddr: NodeHostname stands in for it, on SlurmdPort.
        assert_eq!(p["vm"], ("host9".to_string(), 6900));
    }

    #[test]
    fn spool_dir_patterns() {
        assert_eq!(
            expand_node_path("/var/spool/slurmd/%n.%h", "n1", "vm"),
            "/var/spool/slurmd/n1.vm"
        );
        // Stock substitutes the first of each only, and knows no `%%`.
        assert_eq!(
            expand_node_path("/l/%n/%n-%h%h-%%n.log", "n1", "vm"),
            "/l/n1/%n-vm%h-%%n.log"
        );
    }
}
