//! The real daemon binary against issue 33's attacks on its state (items 5, 6 and the full disk
//! of 9): a state directory planted by another user, a flipped journal byte, a full file system.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use sluice_api::{Job, JobSubmitted};
use sluice_client::Client;
use sluice_client::ClientError;
use sluice_daemon::journal::{Entry, encode};

mod common;
#[path = "../../daemon/tests/common/mod.rs"]
mod store_common;

use common::{BIN, Daemon, all_jobs, state_dir, wrap};
use store_common::{SmallDisk, second_user, submit_as};

/// `sluice serve --state-dir DIR ARGS…` expected to refuse to start: its stderr.
fn refused_start(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(BIN)
        .args(["serve", "--state-dir"])
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "the daemon started: {err}");
    err
}

/// Submits a held job named `name`.
fn held(c: &mut Client, name: &str, dir: &Path) -> Result<u64, ClientError> {
    let mut req = wrap(name, "true", dir);
    req.hold = true;
    c.post::<_, JobSubmitted>("/v1/jobs", &req)
        .map(|s| s.job_id)
}

#[test]
fn roots_daemon_refuses_a_state_directory_another_user_made_first() {
    let Some(user) = second_user() else { return };
    let scratch = state_dir("planted");
    std::fs::set_permissions(scratch.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    let dir = scratch.path().join("sluice-0");
    let frame = scratch.path().join("frame");
    let marker = scratch.path().join("ran-as-root");
    let mut evil = submit_as(1, 0, "root");
    if let sluice_daemon::image::Record::Submit { request, .. } = &mut evil {
        request.script = format!("#!/bin/sh\ntouch {}\n", marker.display());
    }
    std::fs::write(&frame, encode(&Entry { seq: 1, rec: evil })).unwrap();
    std::fs::set_permissions(&frame, std::fs::Permissions::from_mode(0o644)).unwrap();
    user.sh(&format!(
        "mkdir -m 0755 {d} && cp {f} {d}/journal.log",
        d = dir.display(),
        f = frame.display()
    ));
    let err = refused_start(&dir, &[]);
    assert!(err.contains(&dir.display().to_string()), "{err}");
    assert!(err.contains(&format!("owned by uid {}", user.uid)), "{err}");
    assert!(err.contains("expected a directory owned by uid 0"), "{err}");
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(!marker.exists(), "the planted job ran as root");
}

#[test]
fn a_symlinked_state_directory_is_refused_and_a_new_one_is_private() {
    let scratch = state_dir("private");
    let dir = scratch.path().join("state");
    // Made by the test with the usual 0755 (the daemon log goes there): the daemon tightens it.
    std::fs::create_dir(&dir).unwrap();
    let daemon = Daemon::start(&dir);
    let mut c = Client::new(&dir);
    held(&mut c, "p", &dir).unwrap();
    let mode = |p: &Path| std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode(&dir), sluice_daemon::state_dir::dir_mode());
    for f in ["journal.log", "snapshot.json", "lock"] {
        assert_eq!(mode(&dir.join(f)), 0o600, "{f}");
    }
    drop(daemon);
    let link = scratch.path().join("link");
    std::os::unix::fs::symlink(&dir, &link).unwrap();
    let err = refused_start(&link, &[]);
    assert!(err.contains("a symlink"), "{err}");
}

#[test]
fn a_flipped_journal_byte_refuses_start_until_recovery_is_asked_for() {
    let scratch = state_dir("damaged");
    let dir = scratch.path();
    let daemon = Daemon::start(dir);
    let mut c = Client::new(dir);
    // The start-up snapshot emptied the journal: these 100 are its only records.
    let ids: Vec<u64> = (0..100)
        .map(|i| held(&mut c, &format!("d{i}"), dir).unwrap())
        .collect();
    daemon.kill9();
    let path = dir.join("journal.log");
    let mut bytes = std::fs::read(&path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x20;
    std::fs::write(&path, &bytes).unwrap();

    let err = refused_start(dir, &[]);
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(err.contains("damaged at byte offset"), "{err}");
    assert!(err.contains("--recover-damaged-journal"), "{err}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        bytes,
        "the journal was changed"
    );

    let _daemon = Daemon::start_with(dir, &["--recover-damaged-journal"]);
    let log = common::log_of(dir);
    assert!(log.contains("the original is kept as"), "{log}");
    let jobs = all_jobs(dir);
    assert_eq!(jobs.len(), 99, "every readable job is back");
    let mut c = Client::new(dir);
    let next = held(&mut c, "after", dir).unwrap();
    assert!(next > *ids.iter().max().unwrap(), "id {next} reused");
    let copies: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("journal.log.damaged-")
        })
        .collect();
    assert_eq!(copies.len(), 1);
    assert_eq!(std::fs::read(copies[0].path()).unwrap(), bytes);
}

#[test]
fn a_full_disk_answers_507_keeps_reads_restarts_and_recovers_when_space_is_freed() {
    let Some(disk) = SmallDisk::mount("serve-full", 8192) else {
        return;
    };
    let dir = disk.path().join("state");
    std::fs::create_dir(&dir).unwrap();
    let daemon = Daemon::start(&dir);
    let mut c = Client::new(&dir);
    let mut last = 0;
    for i in 0..20 {
        last = held(&mut c, &format!("f{i}"), &dir).unwrap();
    }
    let filler = disk.fill();
    // The journal's reserve is the daemon's; past it, submissions are refused with 507.
    let mut n = 0;
    let refusal = loop {
        match held(&mut c, &format!("g{n}"), &dir) {
            Ok(id) => last = id,
            Err(e) => break e,
        }
        n += 1;
        assert!(n < 20_000, "a full disk never refused a submission");
    };
    match &refusal {
        ClientError::Refused { status, message } => {
            assert_eq!(*status, 507, "{message}");
            assert!(message.contains("no space left"), "{message}");
        }
        e => panic!("not an answer: {e}"),
    }
    // Reads keep working, and the daemon is still up.
    let jobs: Vec<Job> = all_jobs(&dir);
    assert_eq!(jobs.len() as u64, last);
    // A restart on the full disk needs no room for a snapshot.
    drop(daemon);
    let daemon = Daemon::start(&dir);
    assert_eq!(all_jobs(&dir).len() as u64, last);
    // Freed space is used again.
    std::fs::remove_file(&filler).unwrap();
    let mut c = Client::new(&dir);
    let id = held(&mut c, "after", &dir).unwrap();
    assert_eq!(id, last + 1);
    drop(daemon);
}
