//! The state directory is the daemon's own: created private, and refused when another user owns
//! it, could write to it or to a directory above it, or put a symlink in its place.
//!
//! As Slurm's StateSaveLocation, root's default is `/var/lib/sluice`; another user's daemon keeps
//! its state under `$XDG_STATE_HOME/sluice` (else `~/.local/state/sluice`), both as
//! `sluice_client::default_dir` names them, since clients look for the daemon there. The
//! directory is 0700, except that root's is 0711: root's daemon serves every user on
//! `sluice.sock`, so others may pass through the directory to reach the socket, but not list
//! it; every file in it is 0600.

use std::fs;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sluice_client::Untrusted;

/// The files of a state directory the daemon reads or writes, checked at start-up.
pub const STATE_FILES: [&str; 8] = [
    "lock",
    "journal.log",
    "snapshot.json",
    "snapshot.tmp",
    "daemon.toml",
    "accounting.db",
    "accounting.db-wal",
    "accounting.db-shm",
];

/// The directories inside the state directory: the job spool, each job's script and
/// environment (`job_files`) and the compiled-component cache used when the usual one is not
/// safe.
pub const OWN_DIRS: [&str; 3] = ["jobs", crate::job_files::DIR, "components"];

fn untrusted(path: &Path, found: impl Into<String>, expected: impl Into<String>) -> Untrusted {
    Untrusted {
        path: path.to_path_buf(),
        found: found.into(),
        expected: expected.into(),
    }
}

/// The metadata of `path`, following a final symlink or not; `None` when nothing is there.
fn existing(path: &Path, follow: bool, what: &str) -> Result<Option<fs::Metadata>, Untrusted> {
    let m = if follow {
        fs::metadata(path)
    } else {
        fs::symlink_metadata(path)
    };
    match m {
        Ok(m) => Ok(Some(m)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(untrusted(path, e.to_string(), what)),
    }
}

/// Refuses `m` unless the daemon's user owns it (or root, when `root_too`).
fn check_owner(path: &Path, m: &fs::Metadata, root_too: bool, want: &str) -> Result<(), Untrusted> {
    if m.uid() == euid() || (root_too && m.uid() == 0) {
        return Ok(());
    }
    Err(untrusted(path, format!("owned by uid {}", m.uid()), want))
}

/// Refuses `m` when group or others may write to it.
fn check_not_shared(path: &Path, m: &fs::Metadata, want: &str) -> Result<(), Untrusted> {
    let mode = m.mode() & 0o7777;
    if mode & 0o022 == 0 {
        return Ok(());
    }
    Err(untrusted(
        path,
        format!("mode {mode:o}: writable by group or others"),
        want,
    ))
}

/// The daemon's effective uid.
fn euid() -> u32 {
    unsafe { libc::geteuid() }
}

/// The mode the directory is created with and tightened to.
pub fn dir_mode() -> u32 {
    if euid() == 0 { 0o711 } else { 0o700 }
}

/// Creates `dir` if needed and checks it, every directory above it and the state files in it;
/// returns its canonical path, which the daemon uses from then on (so no symlink above it can
/// be re-pointed later). Modes of its own files that others could read are tightened.
pub fn prepare(dir: &Path) -> Result<PathBuf, Untrusted> {
    let io = |e: std::io::Error| untrusted(dir, e.to_string(), "a directory the daemon can create");
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(io)?;
    }
    match fs::DirBuilder::new().mode(dir_mode()).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io(e)),
    }
    check_dir(dir)?;
    let canonical = fs::canonicalize(dir).map_err(io)?;
    for ancestor in canonical.ancestors().skip(1) {
        check_ancestor(ancestor)?;
    }
    for name in STATE_FILES {
        check_file(&canonical.join(name))?;
    }
    for sub in OWN_DIRS {
        check_own_dir(&canonical.join(sub))?;
    }
    Ok(canonical)
}

/// The state directory itself: a real directory, the daemon's user's, writable by no one else.
fn check_dir(dir: &Path) -> Result<(), Untrusted> {
    let m = fs::symlink_metadata(dir)
        .map_err(|e| untrusted(dir, e.to_string(), "the state directory"))?;
    let want = format!(
        "a directory owned by uid {} with mode {:o} (not a symlink)",
        euid(),
        dir_mode()
    );
    if m.file_type().is_symlink() {
        return Err(untrusted(dir, "a symlink", want));
    }
    if !m.is_dir() {
        return Err(untrusted(dir, "not a directory", want));
    }
    check_owner(dir, &m, false, &want)?;
    check_not_shared(dir, &m, &want)?;
    let mode = m.mode() & 0o7777;
    if mode & 0o777 != dir_mode() {
        tracing::warn!("{}: mode {mode:o} set to {:o}", dir.display(), dir_mode());
        fs::set_permissions(dir, fs::Permissions::from_mode(dir_mode()))
            .map_err(|e| untrusted(dir, e.to_string(), "a directory whose mode can be set"))?;
    }
    Ok(())
}

/// A directory above the state directory: root's or the daemon's user's, and writable by no one
/// else unless sticky (as `/tmp`), so nobody else can rename the state directory away.
fn check_ancestor(dir: &Path) -> Result<(), Untrusted> {
    let m = fs::symlink_metadata(dir)
        .map_err(|e| untrusted(dir, e.to_string(), "a readable directory"))?;
    let want = format!(
        "a directory above the state owned by root or uid {}, not writable by group or others unless sticky",
        euid()
    );
    check_owner(dir, &m, true, &want)?;
    let sticky = m.mode() & 0o1000 != 0;
    if sticky {
        return Ok(());
    }
    check_not_shared(dir, &m, &want)
}

/// A state file, if it exists: a regular file of the daemon's user, writable by no one else;
/// readable by others is tightened to 0600 (earlier versions wrote 0644).
pub fn check_file(path: &Path) -> Result<(), Untrusted> {
    let Some(m) = existing(path, false, "a readable file")? else {
        return Ok(());
    };
    let want = format!("a regular file owned by uid {} with mode 600", euid());
    if m.file_type().is_symlink() {
        return Err(untrusted(path, "a symlink", want));
    }
    if !m.is_file() {
        return Err(untrusted(path, "not a regular file", want));
    }
    check_owner(path, &m, false, &want)?;
    check_not_shared(path, &m, &want)?;
    let mode = m.mode() & 0o7777;
    if mode & 0o077 != 0 {
        tracing::warn!("{}: mode {mode:o} tightened to 600", path.display());
        fs::set_permissions(path, fs::Permissions::from_mode(0o600))
            .map_err(|e| untrusted(path, e.to_string(), "a file whose mode can be set"))?;
    }
    Ok(())
}

/// A directory inside the state directory, if it exists: a real directory of the daemon's user,
/// writable by no one else.
fn check_own_dir(path: &Path) -> Result<(), Untrusted> {
    let Some(m) = existing(path, false, "a readable directory")? else {
        return Ok(());
    };
    let want = format!(
        "a directory owned by uid {}, not writable by group or others",
        euid()
    );
    if m.file_type().is_symlink() || !m.is_dir() {
        return Err(untrusted(path, "not a directory (or a symlink)", want));
    }
    check_owner(path, &m, false, &want)?;
    check_not_shared(path, &m, &want)
}

/// A settings file named outside the state directory (`serve --daemon-config`): it decides who
/// is an admin, so it must be root's or the daemon's user's and writable by no one else (a
/// symlink is followed: configuration management often installs one).
pub fn check_settings(path: &Path) -> Result<(), Untrusted> {
    let Some(m) = existing(path, true, "a readable file")? else {
        return Ok(());
    };
    let want = format!(
        "a file owned by root or uid {}, not writable by group or others",
        euid()
    );
    check_owner(path, &m, true, &want)?;
    check_not_shared(path, &m, &want)
}

/// A directory the daemon loads code from, such as the compiled-component cache: created 0700 if
/// missing, and refused unless it and every directory above it are root's or the daemon's
/// user's and writable by no one else (the cache itself not even when sticky: anyone could add
/// a file to it). Returns its canonical path.
pub fn prepare_code_dir(dir: &Path) -> Result<PathBuf, Untrusted> {
    let io = |e: std::io::Error| untrusted(dir, e.to_string(), "a directory the daemon can create");
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io)?;
    let canonical = fs::canonicalize(dir).map_err(io)?;
    let m = fs::metadata(&canonical).map_err(io)?;
    check_not_shared(
        &canonical,
        &m,
        "a directory writable only by root or the daemon's user",
    )?;
    for d in canonical.ancestors() {
        check_ancestor(d)?;
    }
    Ok(canonical)
}
