//! Who is calling: a uid from the Unix socket's peer credentials, its user name from the
//! password database, and whether it may act on other users' jobs.

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
        Self::of_uid(unsafe { libc::geteuid() })
    }
}

/// The password database's name for `uid`.
pub fn user_name(uid: u32) -> Option<String> {
    passwd_entry(uid).map(|(name, _)| name.to_string_lossy().into_owned())
}

/// The password database's entry for `uid`: its user name and primary gid.
pub(crate) fn passwd_entry(uid: u32) -> Option<(CString, u32)> {
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
