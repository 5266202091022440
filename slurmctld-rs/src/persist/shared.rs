//! Items every part of the persisted formats uses: the checksum, decode
//! errors, and the encodings of users, protocol versions and nested wire
//! messages.

use crate::state::job::UserInfo;
use slurm_wire::pack::{Reader, Wire, Writer};
use slurm_wire::ProtocolVersion;

pub(super) type DecResult<T> = std::result::Result<T, slurm_wire::DecodeError>;

pub(super) fn fnv1a(b: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for x in b {
        h ^= u32::from(*x);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

pub(super) fn bad(r: &Reader<'_>, what: &'static str, value: u64) -> slurm_wire::DecodeError {
    slurm_wire::DecodeError::new(
        slurm_wire::DecodeErrorKind::BadValue { what, value },
        r.position(),
    )
}

pub(super) fn version(r: &mut Reader<'_>) -> DecResult<ProtocolVersion> {
    let at = r.position();
    let raw = r.u16()?;
    ProtocolVersion::from_wire(raw).ok_or_else(|| {
        slurm_wire::DecodeError::new(
            slurm_wire::DecodeErrorKind::BadValue {
                what: "protocol version",
                value: u64::from(raw),
            },
            at,
        )
    })
}

pub(super) fn put_nested<T: Wire>(w: &mut Writer, t: &T, v: ProtocolVersion) {
    let mut inner = Writer::new();
    t.encode(&mut inner, v);
    w.mem(inner.as_slice());
}

pub(super) fn get_nested<T: Wire>(r: &mut Reader<'_>, v: ProtocolVersion) -> DecResult<T> {
    let b = r.mem()?;
    slurm_wire::pack::decode_exact(b, v)
}

pub(super) fn req_str(r: &mut Reader<'_>) -> DecResult<String> {
    Ok(r.str()?.unwrap_or_default())
}

pub(super) fn put_user(w: &mut Writer, u: &UserInfo) {
    w.u32(u.uid);
    w.u32(u.gid);
    w.str(u.name.as_deref());
    w.str(u.gecos.as_deref());
    w.str(u.dir.as_deref());
    w.str(u.shell.as_deref());
    w.count(u.gids.len());
    for g in &u.gids {
        w.u32(*g);
    }
}

pub(super) fn get_user(r: &mut Reader<'_>) -> DecResult<UserInfo> {
    let uid = r.u32()?;
    let gid = r.u32()?;
    let name = r.str()?;
    let gecos = r.str()?;
    let dir = r.str()?;
    let shell = r.str()?;
    let n = r.count(4)?;
    let mut gids = Vec::with_capacity(n);
    for _ in 0..n {
        gids.push(r.u32()?);
    }
    Ok(UserInfo {
        uid,
        gid,
        name,
        gecos,
        dir,
        shell,
        gids,
    })
}
