//! Who is calling and from where: a uid (this process's, or the daemon's socket peer's), its
//! user name, groups and primary gid from the password and group databases, and the host's
//! name. The daemon decides what a caller may do from these; the CLI names its user and host.

use std::ffi::{CStr, CString};

use serde::Serialize;

/// A caller.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Identity {
    /// Its uid.
    pub uid: u32,
    /// Its user name (the uid as digits when the password database has no entry).
    pub user: String,
    /// Whether the password database knows the uid: jobs run only as users it knows, so a
    /// root daemon refuses the submissions of any other.
    #[serde(skip)]
    pub known: bool,
}

impl Identity {
    /// The identity of `uid`.
    pub fn of_uid(uid: u32) -> Self {
        let name = user_name(uid);
        Self {
            uid,
            known: name.is_some(),
            user: name.unwrap_or_else(|| uid.to_string()),
        }
    }

    /// The user running this process.
    pub fn current() -> Self {
        Self::of_uid(rustix::process::geteuid().as_raw())
    }
}

/// The password database's name for `uid`.
pub fn user_name(uid: u32) -> Option<String> {
    passwd_entry(uid).map(|(name, _)| name.to_string_lossy().into_owned())
}

/// The password database's entry for `uid`: its user name and primary gid.
pub fn passwd_entry(uid: u32) -> Option<(CString, u32)> {
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: the buffers outlive the call and getpwuid_r writes only within them.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut out) };
    if rc != 0 || out.is_null() {
        return None;
    }
    // SAFETY: getpwuid_r succeeded, so pw_name points into `buf`, NUL-terminated.
    let name = unsafe { CStr::from_ptr(pwd.pw_name) }.to_owned();
    Some((name, pwd.pw_gid))
}

/// The names of the Unix groups `user` belongs to (its primary group and every other the group
/// database lists), for partitions' `AllowGroups`; empty when the password database does not
/// know the user.
pub fn group_names(user: &str) -> Vec<String> {
    let Ok(name) = CString::new(user) else {
        return Vec::new();
    };
    let Some((_, gid)) = passwd_by_name(&name) else {
        return Vec::new();
    };
    // Bounded: a user in more groups than this is checked against the first 4096.
    let mut gids: Vec<libc::gid_t> = vec![0; 4096];
    let mut count = gids.len() as libc::c_int;
    // SAFETY: `gids` holds `count` entries; getgrouplist writes at most that many.
    unsafe { libc::getgrouplist(name.as_ptr(), gid, gids.as_mut_ptr(), &mut count) };
    gids.truncate(count.clamp(0, 4096) as usize);
    gids.into_iter().filter_map(group_name).collect()
}

/// The uid the password database gives `user`.
pub fn uid_of(user: &str) -> Option<u32> {
    passwd_by_name(&CString::new(user).ok()?).map(|(uid, _)| uid)
}

/// The password database's uid and primary gid of the user named `name`.
fn passwd_by_name(name: &CStr) -> Option<(u32, u32)> {
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: the buffers outlive the call and getpwnam_r writes only within them.
    let rc = unsafe {
        libc::getpwnam_r(
            name.as_ptr(),
            &mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut out,
        )
    };
    (rc == 0 && !out.is_null()).then_some((pwd.pw_uid, pwd.pw_gid))
}

/// The group database's name for `gid`.
fn group_name(gid: libc::gid_t) -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    let mut grp: libc::group = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::group = std::ptr::null_mut();
    // SAFETY: the buffers outlive the call and getgrgid_r writes only within them.
    let rc = unsafe { libc::getgrgid_r(gid, &mut grp, buf.as_mut_ptr(), buf.len(), &mut out) };
    if rc != 0 || out.is_null() {
        return None;
    }
    // SAFETY: getgrgid_r succeeded, so gr_name points into `buf`, NUL-terminated.
    Some(
        unsafe { CStr::from_ptr(grp.gr_name) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// This machine's host name (`SLURM_SUBMIT_HOST`; `localhost` when it has none).
pub fn host_name() -> String {
    let name = rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned();
    if name.is_empty() {
        "localhost".into()
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_host_has_a_name_and_this_process_a_user() {
        assert!(!host_name().is_empty());
        assert!(!Identity::current().user.is_empty());
    }
}
