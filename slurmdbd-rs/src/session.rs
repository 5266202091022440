//! What a persistent connection knows once its opening is accepted.

use slurm_wire::ProtocolVersion;

/// One authenticated persistent connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The release both sides speak from the handshake on.
    pub version: ProtocolVersion,
    /// From the opening's credential, never from a body.
    pub uid: u32,
    /// The uid is SlurmUser's or root's: it may send the controller's
    /// messages (job and step records, registration).
    pub privileged: bool,
    /// SlurmUser's uid (stock records it as the reason's author of the
    /// events it makes up).
    pub slurm_user_uid: u32,
    pub cluster_name: Option<String>,
    /// `persist_conn_type_t` as the client declared it.
    pub persist_type: u16,
    /// The peer's address as text: a registering controller's
    /// control_host, as stock records it.
    pub peer_host: String,
}

/// An address as stock prints a peer's: IPv4 for an IPv4-mapped IPv6 one.
pub fn host_text(ip: std::net::IpAddr) -> String {
    ip.to_canonical().to_string()
}

/// The release a connection runs at for a client of release `sent` (the
/// init body's `version`): the newest we speak that is not newer than the
/// client's, so a client newer than 26.05 is answered 26.05 and talks that
/// (stock answers the client's own, which an older dbd then misreads).
/// `None` below 22.05.
pub fn negotiate(sent: u16) -> Option<ProtocolVersion> {
    ProtocolVersion::ALL
        .into_iter()
        .rev()
        .find(|v| v.to_wire() <= sent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_release_not_above_the_clients() {
        assert_eq!(negotiate(0x2600), Some(ProtocolVersion::V22_05));
        assert_eq!(negotiate(0x2A00), Some(ProtocolVersion::V24_11));
        assert_eq!(negotiate(0x2D00), Some(ProtocolVersion::V26_05));
        assert_eq!(negotiate(0x2E00), Some(ProtocolVersion::V26_05));
        assert_eq!(negotiate(u16::MAX), Some(ProtocolVersion::V26_05));
        // Between two releases (no such client exists): the older one.
        assert_eq!(negotiate(0x2A01), Some(ProtocolVersion::V24_11));
        assert_eq!(negotiate(0x25FF), None);
        assert_eq!(negotiate(0), None);
    }

    #[test]
    fn mapped_addresses_are_shown_as_ipv4() {
        let v4: std::net::IpAddr = "::ffff:10.1.2.3".parse().unwrap();
        assert_eq!(host_text(v4), "10.1.2.3");
        let v6: std::net::IpAddr = "fd00::1".parse().unwrap();
        assert_eq!(host_text(v6), "fd00::1");
    }
}
