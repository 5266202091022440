//! Who a request comes from: the passwd and group entries of a uid.

use crate::state::job::UserInfo;

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
