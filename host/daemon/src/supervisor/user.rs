//! The user a job runs as: looked up in the password and group databases before the fork, and
//! the complete drop to that user (supplementary groups, gid, uid) in the forked child.

use std::ffi::CStr;
use std::io;

/// A job's owner as the system knows them.
#[derive(Clone, Debug)]
pub struct User {
    /// Uid.
    pub uid: libc::uid_t,
    /// Primary gid, from the password database.
    pub gid: libc::gid_t,
    /// Every group the user belongs to (primary included), from the group database.
    pub groups: Vec<libc::gid_t>,
}

/// Looks `uid` up; a uid with no password entry is refused, so a job never runs with groups
/// or a gid it was not given.
pub fn lookup(uid: u32) -> Result<User, String> {
    let Some((name, gid)) = sluice_client::identity::passwd_entry(uid) else {
        return Err(format!(
            "uid {uid} has no entry in the password database; jobs run only as known users"
        ));
    };
    Ok(User {
        uid,
        gid,
        groups: group_list(&name, gid)?,
    })
}

/// The user's groups by `getgrouplist`, growing the buffer until they fit.
fn group_list(name: &CStr, gid: libc::gid_t) -> Result<Vec<libc::gid_t>, String> {
    let mut n: libc::c_int = 64;
    loop {
        let mut groups = vec![0 as libc::gid_t; n as usize];
        let mut count = n;
        // SAFETY: `groups` holds `count` entries; getgrouplist writes at most that many.
        let rc = unsafe { libc::getgrouplist(name.as_ptr(), gid, groups.as_mut_ptr(), &mut count) };
        if rc >= 0 {
            groups.truncate(count as usize);
            return Ok(groups);
        }
        if n >= 65536 {
            return Err(format!("{}: too many groups", name.to_string_lossy()));
        }
        n = count.max(n * 2);
    }
}

/// Becomes `user` for good: exactly their groups, their gid, their uid, then checks that root
/// cannot be regained. Called in the forked child, before anything of the user's is touched.
pub fn become_user(user: &User) -> io::Result<()> {
    // SAFETY: plain system calls on owned data.
    unsafe {
        if libc::setgroups(user.groups.len(), user.groups.as_ptr()) != 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::setresgid(user.gid, user.gid, user.gid) != 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::setresuid(user.uid, user.uid, user.uid) != 0 {
            return Err(io::Error::last_os_error());
        }
        if user.uid != 0 && (libc::setuid(0) == 0 || libc::geteuid() != user.uid) {
            return Err(io::Error::other("root privileges could be regained"));
        }
    }
    Ok(())
}
