//! Helpers the store tests share: scratch directories, journal records, a second unprivileged
//! user, and a small file system to fill.
// Each test crate uses a different subset of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use sluice_daemon::image::Record;
use sluice_daemon::journal::OnDamage;
use sluice_daemon::request::SubmitRequest;
use sluice_daemon::store::Store;

/// A fresh directory for test `name`, removed when the returned guard drops.
pub fn tmp(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("sluice-store-{name}-"))
        .tempdir()
        .unwrap()
}

/// The submission of job `id` by alice (uid 1000).
pub fn submit(id: u64) -> Record {
    submit_as(id, 1000, "alice")
}

/// The submission of job `id` by `user` (`uid`).
pub fn submit_as(id: u64, uid: u32, user: &str) -> Record {
    Record::Submit {
        id,
        time: 1000 + id as i64,
        uid,
        user: user.into(),
        request: Box::new(SubmitRequest {
            name: Some(format!("job{id}")),
            script: "#!/bin/sh\ntrue\n".into(),
            ..SubmitRequest::default()
        }),
        hold: false,
        array: None,
    }
}

/// A store opened in `dir` with jobs 1 to `jobs` submitted and synced.
pub fn store_with(dir: &Path, jobs: u64) -> Store {
    let mut s = Store::open(dir, OnDamage::Refuse).unwrap();
    for i in 1..=jobs {
        s.commit(submit(i)).unwrap();
    }
    s.sync().unwrap();
    s
}

/// Whether the tests run as root (needed to create users and mount file systems).
pub fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

/// A second, unprivileged local account (created once, kept: tests run in parallel).
pub struct User {
    /// Its uid.
    pub uid: u32,
    /// Its primary gid.
    pub gid: u32,
}

/// The account `sluicestate`, created with `useradd` if missing; `None` unless root.
pub fn second_user() -> Option<User> {
    if !is_root() {
        eprintln!("SKIPPED: needs root to create a second user");
        return None;
    }
    const NAME: &str = "sluicestate";
    let id = |flag: &str| -> Option<u32> {
        let out = Command::new("id").args([flag, NAME]).output().ok()?;
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    };
    if id("-u").is_none() {
        // Two tests may race to create it; the loser's useradd fails and the lookup succeeds.
        let _ = Command::new("useradd")
            .args(["--no-create-home", "--shell", "/usr/sbin/nologin", NAME])
            .status();
    }
    Some(User {
        uid: id("-u").expect("useradd sluicestate"),
        gid: id("-g").expect("the user's group"),
    })
}

impl User {
    /// Runs `sh -c script` as this user (groups dropped), failing the test if it fails.
    pub fn sh(&self, script: &str) {
        use std::os::unix::process::CommandExt;
        let status = Command::new("/bin/sh")
            .args(["-c", script])
            .uid(self.uid)
            .gid(self.gid)
            .status()
            .unwrap();
        assert!(status.success(), "as uid {}: {script}", self.uid);
    }
}

/// A tmpfs of `kib` KiB mounted on a fresh directory, unmounted when dropped; `None` unless
/// root (and the mount is allowed).
pub struct SmallDisk {
    /// The mount point (and its guard).
    pub dir: tempfile::TempDir,
}

impl SmallDisk {
    /// Mounts it.
    pub fn mount(name: &str, kib: u32) -> Option<Self> {
        if !is_root() {
            eprintln!("SKIPPED: needs root to mount a small file system");
            return None;
        }
        let dir = tmp(name);
        let ok = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={kib}k,mode=0700"),
                "tmpfs",
            ])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("SKIPPED: cannot mount a tmpfs here");
            return None;
        }
        Some(Self { dir })
    }

    /// The mount point.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes a file until the file system is full; returns its path.
    pub fn fill(&self) -> PathBuf {
        use std::io::Write;
        let path = self.path().join("filler");
        let mut f = std::fs::File::create(&path).unwrap();
        let block = vec![0xA5u8; 4096];
        loop {
            match f.write(&block) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{e}");
                    break;
                }
            }
        }
        let _ = f.sync_all();
        path
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}
