//! The message header (`header_t`): version, flags, type, body length,
//! forwarding, the returned-message list and the originating address.

use crate::error::{DecodeError, DecodeErrorKind, Result};
use crate::msg::Message;
use crate::msg_type::MsgType;
use crate::pack::{Reader, Wire, Writer};
use crate::types::SlurmAddr;
use crate::ProtocolVersion;

/// Header flag bits.
pub mod flags {
    pub const GLOBAL_AUTH_KEY: u16 = 0x0001;
    pub const SLURMDBD_CONNECTION: u16 = 0x0002;
    pub const KEEP_BUFFER: u16 = 0x0004;
    pub const DROP_PRIV: u16 = 0x0008;
    pub const USE_BCAST_NETWORK: u16 = 0x0010;
    pub const CTLD_QUEUE_PROCESSING: u16 = 0x0020;
    /// From 23.02: no auth blob follows the header.
    pub const NO_AUTH_CRED: u16 = 0x0040;
    /// From 23.11: the forward block carries a net credential.
    pub const PACK_ADDRS: u16 = 0x0080;
}

/// `forward_t`: nodes this message must be relayed to.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Forward {
    pub cnt: u16,
    pub nodelist: Option<String>,
    /// Milliseconds.
    pub timeout: u32,
    pub tree_width: u16,
    /// Only with `flags::PACK_ADDRS`, 23.11+.
    pub net_cred: Option<String>,
    /// 24.11+: levels of the tree below the receiver of this header.
    pub tree_depth: u16,
}

impl Forward {
    fn decode(r: &mut Reader<'_>, v: ProtocolVersion, hflags: u16) -> Result<Self> {
        let mut f = Forward {
            cnt: r.u16()?,
            ..Default::default()
        };
        if f.cnt > 0 {
            f.nodelist = r.str()?;
            f.timeout = r.u32()?;
            f.tree_width = r.u16()?;
            if v >= ProtocolVersion::V23_11 && hflags & flags::PACK_ADDRS != 0 {
                f.net_cred = r.str()?;
            }
            if v >= ProtocolVersion::V24_11 {
                f.tree_depth = r.u16()?;
            }
        }
        Ok(f)
    }

    fn encode(&self, w: &mut Writer, v: ProtocolVersion, hflags: u16) {
        w.u16(self.cnt);
        if self.cnt > 0 {
            w.str(self.nodelist.as_deref());
            w.u32(self.timeout);
            w.u16(self.tree_width);
            if v >= ProtocolVersion::V23_11 && hflags & flags::PACK_ADDRS != 0 {
                w.str(self.net_cred.as_deref());
            }
            if v >= ProtocolVersion::V24_11 {
                w.u16(self.tree_depth);
            }
        }
    }
}

/// One entry of the returned-message list that forwarding nodes fill in.
#[derive(Debug, Clone, PartialEq)]
pub struct RetEntry {
    pub err: u32,
    pub node_name: Option<String>,
    pub body: Message,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub version: ProtocolVersion,
    pub flags: u16,
    /// Raw number: an unknown type must still yield a header, so that the
    /// daemon can answer with a clear error.
    pub msg_type: u16,
    pub body_length: u32,
    pub forward: Forward,
    pub ret_list: Vec<RetEntry>,
    pub orig_addr: SlurmAddr,
}

impl Header {
    pub fn new(version: ProtocolVersion, msg_type: MsgType) -> Self {
        Self {
            version,
            flags: 0,
            msg_type: msg_type.to_wire(version).unwrap_or(0),
            body_length: 0,
            forward: Forward::default(),
            ret_list: Vec::new(),
            orig_addr: SlurmAddr::Unspec,
        }
    }

    /// The typed message type, if the number means something in this version.
    pub fn typed_msg_type(&self) -> Result<MsgType> {
        MsgType::from_wire(self.version, self.msg_type).ok_or_else(|| {
            DecodeError::new(
                DecodeErrorKind::UnknownMsgType {
                    version: self.version,
                    number: self.msg_type,
                },
                0,
            )
        })
    }

    pub fn decode(r: &mut Reader<'_>) -> Result<Self> {
        let at = r.position();
        let raw = r.u16()?;
        let version = ProtocolVersion::from_wire(raw)
            .ok_or_else(|| DecodeError::new(DecodeErrorKind::UnsupportedVersion(raw), at))?;
        let flags = r.u16()?;
        let msg_type = r.u16()?;
        let body_length = r.u32()?;
        let forward = Forward::decode(r, version, flags).map_err(|e| e.within("forward"))?;
        let ret_cnt = r.u16()?;
        let mut ret_list = Vec::new();
        for _ in 0..ret_cnt {
            let err = r.u32()?;
            let at = r.position();
            let num = r.u16()?;
            let ty = MsgType::from_wire(version, num).ok_or_else(|| {
                DecodeError::new(
                    DecodeErrorKind::UnknownMsgType {
                        version,
                        number: num,
                    },
                    at,
                )
            })?;
            let node_name = r.str()?;
            let body = Message::decode_from(r, version, ty).map_err(|e| e.within("ret_list"))?;
            ret_list.push(RetEntry {
                err,
                node_name,
                body,
            });
        }
        let orig_addr = SlurmAddr::decode(r, version).map_err(|e| e.within("orig_addr"))?;
        Ok(Self {
            version,
            flags,
            msg_type,
            body_length,
            forward,
            ret_list,
            orig_addr,
        })
    }

    pub fn encode(&self, w: &mut Writer) {
        let v = self.version;
        w.u16(v.to_wire());
        w.u16(self.flags);
        w.u16(self.msg_type);
        w.u32(self.body_length);
        self.forward.encode(w, v, self.flags);
        w.u16(u16::try_from(self.ret_list.len()).unwrap_or(u16::MAX));
        for e in self.ret_list.iter().take(u16::MAX as usize) {
            w.u32(e.err);
            w.u16(e.body.msg_type().to_wire(v).unwrap_or(0));
            w.str(e.node_name.as_deref());
            e.body.encode_body(w, v);
        }
        self.orig_addr.encode(w, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::common::Empty;

    /// The forward block as stock packs it: 24.11 added `tree_depth`
    /// after `tree_width`; 23.11 ends at `tree_width`.
    #[test]
    fn forward_block_layout_by_version() {
        for (v, depth_on_wire) in [
            (ProtocolVersion::V23_11, false),
            (ProtocolVersion::V24_11, true),
            (ProtocolVersion::V26_05, true),
        ] {
            let mut w = Writer::new();
            w.u16(v.to_wire());
            w.u16(0); // flags
            w.u16(1008); // REQUEST_PING
            w.u32(0);
            w.u16(2);
            w.str(Some("n[2-3]"));
            w.u32(20_000);
            w.u16(16);
            if depth_on_wire {
                w.u16(3);
            }
            w.u16(0); // ret_cnt
            SlurmAddr::Unspec.encode(&mut w, v);
            let bytes = w.into_vec();
            let mut r = Reader::new(&bytes);
            let h = Header::decode(&mut r).unwrap();
            assert_eq!(r.position(), bytes.len(), "{v}");
            let want_depth = if depth_on_wire { 3 } else { 0 };
            assert_eq!(
                h.forward,
                Forward {
                    cnt: 2,
                    nodelist: Some("n[2-3]".into()),
                    timeout: 20_000,
                    tree_width: 16,
                    net_cred: None,
                    tree_depth: want_depth,
                },
                "{v}"
            );
            let mut again = Writer::new();
            h.encode(&mut again);
            assert_eq!(again.into_vec(), bytes, "{v}");
        }
    }

    /// A failed forward's entry has no body and round-trips.
    #[test]
    fn forward_failed_entries_round_trip() {
        let v = ProtocolVersion::V24_11;
        let mut h = Header::new(v, MsgType::ResponseSlurmRc);
        h.ret_list.push(RetEntry {
            err: 1001,
            node_name: Some("n7".into()),
            body: Message::ResponseForwardFailed(Empty {}),
        });
        let mut w = Writer::new();
        h.encode(&mut w);
        let bytes = w.into_vec();
        let back = Header::decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(back.ret_list, h.ret_list);
    }
}
