//! Item 6 of issue 33: the state directory is the daemon's own. A directory another user made
//! first (with a planted journal), a symlink in place of the directory or of a state file, or a
//! file others may write is refused with the path and what was expected; what the daemon
//! creates is private.

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::Path;

use common::{second_user, submit, submit_as, tmp};
use sluice_client::Untrusted;
use sluice_daemon::journal::{Entry, OnDamage, encode};
use sluice_daemon::state_dir;
use sluice_daemon::store::{SnapshotBasis, Store};

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().mode() & 0o7777
}

fn refused(dir: &Path) -> Untrusted {
    match state_dir::prepare(dir) {
        Err(e) => e,
        Ok(p) => panic!("{} was accepted", p.display()),
    }
}

#[test]
fn a_new_state_directory_and_its_files_are_private() {
    let scratch = tmp("new");
    let dir = scratch.path().join("state");
    let dir = state_dir::prepare(&dir).unwrap();
    assert_eq!(mode(&dir), state_dir::dir_mode());
    // No one but the owner may list it; root's lets others reach the socket by name.
    assert_eq!(mode(&dir) & 0o066, 0);
    let mut s = Store::open(&dir, OnDamage::Refuse).unwrap();
    s.commit(submit(1)).unwrap();
    s.sync().unwrap();
    s.snapshot(SnapshotBasis::default()).unwrap();
    s.commit(submit(2)).unwrap();
    s.sync().unwrap();
    for f in ["journal.log", "snapshot.json"] {
        assert_eq!(mode(&dir.join(f)), 0o600, "{f}");
    }
    assert!(!dir.join("snapshot.tmp").exists());
}

#[test]
fn a_state_directory_made_first_by_another_user_is_refused() {
    let Some(user) = second_user() else { return };
    let scratch = tmp("planted");
    // /tmp-like parent: anyone may create entries, no one may rename others'.
    std::fs::set_permissions(scratch.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    let dir = scratch.path().join("sluice-0");
    let planted = scratch.path().join("frame");
    std::fs::write(
        &planted,
        encode(&Entry {
            seq: 1,
            rec: submit_as(1, 0, "root"),
        }),
    )
    .unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o644)).unwrap();
    // The other user prepares the directory as the daemon itself would, and plants the frame.
    user.sh(&format!(
        "mkdir -m 0700 {d} && cp {p} {d}/journal.log && chmod 600 {d}/journal.log",
        d = dir.display(),
        p = planted.display()
    ));
    let e = refused(&dir);
    assert_eq!(e.path, dir);
    assert!(
        e.found.contains(&format!("owned by uid {}", user.uid)),
        "{e}"
    );
    let text = e.to_string();
    assert!(text.contains(&dir.display().to_string()), "{text}");
    assert!(
        text.contains("expected a directory owned by uid 0"),
        "{text}"
    );
    // Even chowned to root, the planted journal (still the user's) is refused.
    std::os::unix::fs::chown(&dir, Some(0), Some(0)).unwrap();
    let e = refused(&dir);
    assert_eq!(e.path, dir.join("journal.log"));
    assert!(
        e.found.contains(&format!("owned by uid {}", user.uid)),
        "{e}"
    );
}

#[test]
fn a_directory_inside_another_users_directory_is_refused() {
    let Some(user) = second_user() else { return };
    let scratch = tmp("parent");
    std::fs::set_permissions(scratch.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    let theirs = scratch.path().join("theirs");
    user.sh(&format!("mkdir -m 0755 {}", theirs.display()));
    let dir = theirs.join("state");
    std::fs::create_dir(&dir).unwrap();
    // The user could rename `state` away and put their own in its place.
    let e = refused(&dir);
    assert_eq!(e.path, theirs);
}

#[test]
fn a_symlinked_directory_or_journal_is_refused() {
    let scratch = tmp("symlink");
    let real = scratch.path().join("real");
    state_dir::prepare(&real).unwrap();
    let link = scratch.path().join("link");
    symlink(&real, &link).unwrap();
    let e = refused(&link);
    assert_eq!(e.found, "a symlink");

    let target = scratch.path().join("elsewhere");
    std::fs::write(&target, b"").unwrap();
    symlink(&target, real.join("journal.log")).unwrap();
    let e = refused(&real);
    assert_eq!(e.path, real.join("journal.log"));
    assert_eq!(e.found, "a symlink");
    // The store itself does not follow it either.
    assert!(Store::open(&real, OnDamage::Refuse).is_err());
    assert_eq!(std::fs::read(&target).unwrap(), b"");
}

#[test]
fn files_or_directories_others_may_write_are_refused_and_readable_ones_tightened() {
    let scratch = tmp("modes");
    let dir = state_dir::prepare(&scratch.path().join("state")).unwrap();
    let set = |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m));

    set(&dir, 0o777).unwrap();
    assert!(refused(&dir).found.contains("writable by group or others"));
    set(&dir, 0o755).unwrap();
    state_dir::prepare(&dir).unwrap();
    assert_eq!(mode(&dir), state_dir::dir_mode());

    let journal = dir.join("journal.log");
    std::fs::write(&journal, b"").unwrap();
    set(&journal, 0o664).unwrap();
    let e = refused(&dir);
    assert_eq!(e.path, journal);
    assert!(e.found.contains("writable by group or others"), "{e}");
    set(&journal, 0o644).unwrap();
    state_dir::prepare(&dir).unwrap();
    assert_eq!(mode(&journal), 0o600);
}

#[test]
fn every_state_file_owned_by_another_user_is_refused_by_name() {
    let Some(user) = second_user() else { return };
    let scratch = tmp("owners");
    let dir = state_dir::prepare(&scratch.path().join("state")).unwrap();
    for name in state_dir::STATE_FILES {
        let path = dir.join(name);
        std::fs::write(&path, b"").unwrap();
        std::os::unix::fs::chown(&path, Some(user.uid), Some(user.gid)).unwrap();
        let e = refused(&dir);
        assert_eq!(e.path, path);
        assert!(
            e.found.contains(&format!("owned by uid {}", user.uid)),
            "{e}"
        );
        std::fs::remove_file(&path).unwrap();
    }
    let spool = dir.join("jobs");
    std::fs::create_dir(&spool).unwrap();
    std::os::unix::fs::chown(&spool, Some(user.uid), Some(user.gid)).unwrap();
    assert_eq!(refused(&dir).path, spool);
}

#[test]
fn a_code_cache_another_user_could_write_is_refused() {
    let Some(user) = second_user() else { return };
    let scratch = tmp("cache");
    std::fs::set_permissions(scratch.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    // As /tmp/sluice/components would be when the daemon has no HOME: made first by a user.
    let planted = scratch.path().join("sluice");
    user.sh(&format!(
        "mkdir -p -m 0755 {}/components",
        planted.display()
    ));
    let e = state_dir::prepare_code_dir(&planted.join("components")).unwrap_err();
    assert!(
        e.found.contains(&format!("owned by uid {}", user.uid)),
        "{e}"
    );
    // A sticky, world-writable cache is no better: anyone could add a compiled component.
    let shared = scratch.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    assert!(state_dir::prepare_code_dir(&shared).is_err());
    let own = state_dir::prepare_code_dir(&scratch.path().join("own/components")).unwrap();
    assert_eq!(mode(&own), 0o700);
}
