//! The submitting host of a job (its `alloc_node`), as stock takes it:
//! from the authenticated connection, never from the request body, so that
//! a partition's AllocNodes cannot be passed by naming another host.

use crate::state::config::ClusterConf;
use slurm_wire::msg::job_desc::JobDescMsg;
use std::net::IpAddr;

/// Replaces the body's `alloc_node` with the sender's host when some
/// partition has AllocNodes (the only place it decides anything);
/// otherwise the client's value stays, shown as it sent it.
pub fn settle(conf: &ClusterConf, peer: IpAddr, desc: &mut JobDescMsg) {
    if conf.partitions.iter().all(|p| p.conf.alloc_nodes.is_none()) {
        return;
    }
    // A reverse lookup may block on the resolver.
    desc.alloc_node = Some(slurm_rpc::blocking(|| host_of(peer)));
}

/// The short name `ip` resolves to (up to its first dot, as stock cuts
/// munge's host), this host's own for a local sender, else the address.
pub fn host_of(ip: IpAddr) -> String {
    // A dual-stack listener sees IPv4 senders as ::ffff:a.b.c.d.
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    let name = if ip.is_loopback() {
        nix::unistd::gethostname()
            .ok()
            .and_then(|h| h.into_string().ok())
    } else {
        reverse_lookup(ip)
    };
    match name.as_deref().map(short_name) {
        Some(n) if !n.is_empty() => n.to_string(),
        _ => ip.to_string(),
    }
}

fn short_name(name: &str) -> &str {
    name.split('.').next().unwrap_or(name)
}

/// The name `ip` resolves to (getnameinfo, a name required).
fn reverse_lookup(ip: IpAddr) -> Option<String> {
    let mut host = [0 as libc::c_char; 1025];
    let rc = match ip {
        IpAddr::V4(v4) => {
            // SAFETY: a zeroed sockaddr_in is valid; its fields are set below.
            let mut sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
            sa.sin_family = libc::AF_INET as libc::sa_family_t;
            sa.sin_addr.s_addr = u32::from_ne_bytes(v4.octets());
            // SAFETY: `sa` and `host` outlive the call, with their true sizes.
            unsafe {
                libc::getnameinfo(
                    (&sa as *const libc::sockaddr_in).cast(),
                    std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
                    host.as_mut_ptr(),
                    host.len() as libc::socklen_t,
                    std::ptr::null_mut(),
                    0,
                    libc::NI_NAMEREQD,
                )
            }
        }
        IpAddr::V6(v6) => {
            // SAFETY: as above, for sockaddr_in6.
            let mut sa: libc::sockaddr_in6 = unsafe { std::mem::zeroed() };
            sa.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sa.sin6_addr.s6_addr = v6.octets();
            // SAFETY: as above.
            unsafe {
                libc::getnameinfo(
                    (&sa as *const libc::sockaddr_in6).cast(),
                    std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t,
                    host.as_mut_ptr(),
                    host.len() as libc::socklen_t,
                    std::ptr::null_mut(),
                    0,
                    libc::NI_NAMEREQD,
                )
            }
        }
    };
    if rc != 0 {
        return None;
    }
    // SAFETY: on success getnameinfo wrote a NUL-terminated name into `host`.
    let c = unsafe { std::ffi::CStr::from_ptr(host.as_ptr()) };
    c.to_str().ok().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_cut_at_the_first_dot() {
        assert_eq!(short_name("login1.example.org"), "login1");
        assert_eq!(short_name("login1"), "login1");
    }

    #[test]
    fn a_local_sender_is_this_host() {
        let me = nix::unistd::gethostname().unwrap().into_string().unwrap();
        assert_eq!(host_of("127.0.0.1".parse().unwrap()), short_name(&me));
    }

    #[test]
    fn a_mapped_local_sender_is_this_host_too() {
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert_eq!(host_of(mapped), host_of("127.0.0.1".parse().unwrap()));
    }

    #[test]
    fn an_address_without_a_name_stays_an_address() {
        // TEST-NET-1 (RFC 5737): no reverse name.
        let ip: IpAddr = "192.0.2.77".parse().unwrap();
        let h = host_of(ip);
        assert!(h == "192.0.2.77" || !h.contains('.'), "{h}");
    }

    #[test]
    fn the_body_is_replaced_only_where_alloc_nodes_decide() {
        let conf = |p: &str| {
            crate::state::testkit::cluster_conf(&format!(
                "ClusterName=t\nSlurmctldHost=ctl\nNodeName=n1 CPUs=1\n\
                 PartitionName=p Nodes=n1 Default=YES {p}\n"
            ))
        };
        let mut d = JobDescMsg {
            alloc_node: Some("allowed".into()),
            ..JobDescMsg::unset()
        };
        let lo: IpAddr = "127.0.0.1".parse().unwrap();
        settle(&conf(""), lo, &mut d);
        assert_eq!(d.alloc_node.as_deref(), Some("allowed"));
        settle(&conf("AllocNodes=allowed"), lo, &mut d);
        assert_eq!(d.alloc_node.as_deref(), Some(host_of(lo).as_str()));
    }
}
