//! Who is calling: a uid from the Unix socket's peer credentials, its user name from the
//! password database, and whether it may act on other users' jobs.

use std::ffi::CStr;

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
        Self::of_uid(unsafe { libc::geteuid() })
    }
}

/// The password database's name for `uid`.
pub fn user_name(uid: u32) -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 4096];
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: the buffers outlive the call and getpwuid_r writes only within them.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut out) };
    if rc != 0 || out.is_null() {
        return None;
    }
    let name = unsafe { CStr::from_ptr(pwd.pw_name) };
    Some(name.to_string_lossy().into_owned())
}

/// The primary group of `uid`, for running a job as its owner.
pub fn primary_gid(uid: u32) -> Option<u32> {
    let mut buf = vec![0 as libc::c_char; 4096];
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: as in `user_name`.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut out) };
    (rc == 0 && !out.is_null()).then_some(pwd.pw_gid)
}
