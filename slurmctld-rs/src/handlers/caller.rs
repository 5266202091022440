//! Who sent a request: what every handler needs besides the body.

use slurm_rpc::Incoming;
use slurm_wire::ProtocolVersion;
use std::net::SocketAddr;

/// The requester, from the credential (never the body), and the release
/// the reply goes out in.
#[derive(Debug, Clone, Copy)]
pub struct Caller {
    pub uid: u32,
    pub gid: u32,
    pub version: ProtocolVersion,
    pub peer: SocketAddr,
}

impl Caller {
    pub fn of(req: &Incoming) -> Caller {
        Caller {
            uid: req.identity.uid,
            gid: req.identity.gid,
            version: req.version(),
            peer: req.peer,
        }
    }
}
