//! Who a request comes from: the passwd and group entries of a uid.

use crate::state::job::UserInfo;
use slurm_wire::msg::job::ResourceAllocationResponseMsg;

/// The submitting user's passwd entry and groups, as the job credential
/// carries them.
pub fn lookup_user(uid: u32, gid: u32) -> UserInfo {
    use nix::unistd::{Gid, Uid, User};
    let mut u = UserInfo {
        uid,
        gid,
        ..Default::default()
    };
    if let Ok(Some(pw)) = User::from_uid(Uid::from_raw(uid)) {
        u.gecos = pw.gecos.to_str().ok().map(str::to_string);
        u.dir = pw.dir.to_str().map(str::to_string);
        u.shell = pw.shell.to_str().map(str::to_string);
        if let Ok(name) = std::ffi::CString::new(pw.name.clone()) {
            if let Ok(gs) = nix::unistd::getgrouplist(&name, Gid::from_raw(gid)) {
                u.gids = gs.into_iter().map(|g| g.as_raw()).collect();
            }
        }
        u.name = Some(pw.name);
    }
    u
}

/// The name of group `gid`, if it has an entry.
pub fn group_name(gid: u32) -> Option<String> {
    nix::unistd::Group::from_gid(nix::unistd::Gid::from_raw(gid))
        .ok()
        .flatten()
        .map(|g| g.name)
}

/// Names the group of an allocation reply the state machine built (it
/// does no lookups): done where the reply leaves, to srun.
pub fn name_group(m: &mut ResourceAllocationResponseMsg) {
    m.group_name = group_name(m.gid);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// gid 0's name as /etc/group has it.
    fn etc_group_0() -> Option<String> {
        let text = std::fs::read_to_string("/etc/group").ok()?;
        text.lines().find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.len() > 2 && f[2] == "0").then(|| f[0].to_string())
        })
    }

    #[test]
    fn an_allocation_reply_gets_the_name_of_its_group() {
        let mut m = ResourceAllocationResponseMsg {
            gid: 0,
            ..Default::default()
        };
        name_group(&mut m);
        assert!(m.group_name.is_some());
        assert_eq!(m.group_name, etc_group_0());
        // A gid without an entry has no name (stock sends none either).
        m.gid = 0x7fff_fff0;
        name_group(&mut m);
        assert_eq!(m.group_name, None);
    }
}
