//! Item 5 of issue 33, as an attacker or a bad disk would do it: one flipped byte in a journal
//! of acknowledged jobs. Start-up refuses, naming the file and the offset, and keeps every byte;
//! recovery keeps every readable job and never hands out an acknowledged job's id again; only a
//! torn last record is cut without asking.

mod common;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::{store_with, submit, tmp};
use sluice_daemon::error::StoreError;
use sluice_daemon::image::{Record, State};
use sluice_daemon::journal::{OnDamage, encode};
use sluice_daemon::store::{SnapshotBasis, Store};

/// A store in `dir` holding jobs 1..=n, synced and dropped as by kill -9; returns each record's
/// offset in the journal.
fn journal_of(dir: &Path, records: &[Record]) -> Vec<u64> {
    let mut s = Store::open(dir, OnDamage::Refuse).unwrap();
    let mut offsets = Vec::new();
    for r in records {
        offsets.push(s.journal_bytes());
        s.commit(r.clone()).unwrap();
    }
    s.sync().unwrap();
    offsets
}

fn jobs(n: u64) -> Vec<Record> {
    (1..=n).map(submit).collect()
}

/// Flips one byte at `at` of the journal; returns the damaged bytes.
fn flip(dir: &Path, at: u64) -> Vec<u8> {
    let path = dir.join("journal.log");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[at as usize] ^= 0x20;
    std::fs::write(&path, &bytes).unwrap();
    bytes
}

/// Opening refuses with `Damaged` at `offset`, the message naming the file and the offset, and
/// the journal's bytes are still `bytes`.
fn assert_refused(dir: &Path, offset: u64, bytes: &[u8]) {
    let path = dir.join("journal.log");
    match Store::open(dir, OnDamage::Refuse) {
        Err(e @ StoreError::Damaged { .. }) => {
            let text = e.to_string();
            assert!(text.contains(&path.display().to_string()), "{text}");
            assert!(text.contains(&format!("offset {offset}")), "{text}");
            assert!(text.contains("--recover-damaged-journal"), "{text}");
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a damaged journal was opened"),
    }
    assert_eq!(
        std::fs::read(&path).unwrap(),
        bytes,
        "the bytes were changed"
    );
}

#[test]
fn a_flip_in_the_middle_of_100_jobs_refuses_then_recovers_99_without_reusing_ids() {
    let scratch = tmp("middle");
    let dir = scratch.path();
    let offsets = journal_of(dir, &jobs(100));
    // Inside job 50's payload.
    let bad = offsets[49] + 40;
    let bytes = flip(dir, bad);
    assert_refused(dir, offsets[49], &bytes);
    // Refusing twice changes nothing either.
    assert_refused(dir, offsets[49], &bytes);

    let mut s = Store::open(dir, OnDamage::Recover).unwrap();
    let d = s.recovery.damaged.clone().expect("a recovery report");
    assert_eq!(s.image().jobs.len(), 99);
    assert!(!s.image().jobs.contains_key(&50));
    assert_eq!(d.kept_records, 99);
    assert_eq!(d.ranges, vec![(offsets[49], offsets[50])]);
    // The untouched original sits next to the journal, private.
    let copy = Path::new(&d.copy);
    assert_eq!(copy.parent(), Some(dir));
    assert_eq!(std::fs::read(copy).unwrap(), bytes);
    let mode = std::fs::metadata(copy).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    // New jobs get ids past every acknowledged one.
    assert_eq!(s.image().next_id, 101);
    s.commit(submit(s.image().next_id)).unwrap();
    s.sync().unwrap();
    drop(s);
    // The rewritten journal is clean: a plain start reads all 100 jobs.
    let s = Store::open(dir, OnDamage::Refuse).unwrap();
    assert_eq!(s.image().jobs.len(), 100);
    assert!(s.image().jobs.contains_key(&101));
    assert_eq!(s.recovery.damaged, None);
}

#[test]
fn a_flip_in_the_first_record_refuses_then_recovers_the_other_99() {
    let scratch = tmp("first");
    let dir = scratch.path();
    journal_of(dir, &jobs(100));
    for at in [0u64, 5, 30] {
        // The length field, the checksum, the payload: each is damage, not a torn tail.
        let bytes = flip(dir, at);
        assert_refused(dir, 0, &bytes);
        flip(dir, at);
    }
    let bytes = flip(dir, 30);
    assert_refused(dir, 0, &bytes);
    let s = Store::open(dir, OnDamage::Recover).unwrap();
    assert_eq!(s.image().jobs.len(), 99);
    assert_eq!(s.image().jobs.keys().next(), Some(&2));
    assert_eq!(s.image().next_id, 101);
}

#[test]
fn a_complete_last_record_failing_its_checksum_is_damage_not_a_torn_tail() {
    let scratch = tmp("last");
    let dir = scratch.path();
    let offsets = journal_of(dir, &jobs(10));
    let bytes = flip(dir, offsets[9] + 30);
    assert_refused(dir, offsets[9], &bytes);
}

#[test]
fn a_torn_last_record_alone_is_cut_without_asking() {
    let scratch = tmp("torn");
    let dir = scratch.path();
    journal_of(dir, &jobs(100));
    let path = dir.join("journal.log");
    let good = std::fs::metadata(&path).unwrap().len();
    let frame = encode(&sluice_daemon::journal::Entry {
        seq: 101,
        rec: submit(101),
    });
    for cut in [3, frame.len() / 2, frame.len() - 1] {
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(&frame[..cut])
            .unwrap();
        let s = Store::open(dir, OnDamage::Refuse).unwrap();
        assert_eq!(s.recovery.truncated_bytes, cut as u64);
        assert_eq!(s.image().jobs.len(), 100);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), good);
    }
}

#[test]
fn ids_named_only_by_records_after_the_damage_are_never_handed_out_again() {
    let scratch = tmp("ids");
    let dir = scratch.path();
    let mut records = jobs(10);
    records.push(Record::Started {
        id: 10,
        time: 2000,
        partition: "compute".into(),
        nodes: vec!["node01".into()],
        cpus: 1,
        account: "physics".into(),
        configuring: false,
    });
    records.push(Record::Ended {
        id: 10,
        time: 2001,
        state: State::Completed,
        exit_code: Some(0),
        reason: None,
    });
    let offsets = journal_of(dir, &records);
    // Job 10's submission is lost; its start and end are readable.
    let bytes = flip(dir, offsets[9] + 40);
    assert_refused(dir, offsets[9], &bytes);
    let s = Store::open(dir, OnDamage::Recover).unwrap();
    assert_eq!(s.image().jobs.len(), 9);
    assert_eq!(s.image().next_id, 11);
    let d = s.recovery.damaged.clone().unwrap();
    assert_eq!(d.lost_jobs, vec![10]);
}

#[test]
fn damage_after_a_snapshot_keeps_the_snapshot_and_the_readable_records() {
    let scratch = tmp("snap");
    let dir = scratch.path();
    {
        let mut s = store_with(dir, 20);
        s.snapshot(SnapshotBasis::default()).unwrap();
    }
    let offsets = journal_of(dir, &(21..=30).map(submit).collect::<Vec<_>>());
    let bytes = flip(dir, offsets[0] + 40);
    assert_refused(dir, offsets[0], &bytes);
    let s = Store::open(dir, OnDamage::Recover).unwrap();
    assert_eq!(s.image().jobs.len(), 29);
    assert!(!s.image().jobs.contains_key(&21));
    assert_eq!(s.image().next_id, 31);
}

/// Sets the journal's 4 length bytes at `at` to `len`; returns the damaged bytes.
fn set_length(dir: &Path, at: u64, len: u32) -> Vec<u8> {
    let path = dir.join("journal.log");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[at as usize..at as usize + 4].copy_from_slice(&len.to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    bytes
}

#[test]
fn a_damaged_length_in_the_last_record_is_damage_and_its_job_is_kept_not_reused() {
    // Issue 46, item 9: an acknowledged job, one length byte of its (last) frame flipped
    // so the length points past the end: that is no torn write.
    let scratch = tmp("length");
    let dir = scratch.path();
    let offsets = journal_of(dir, &jobs(10));
    let path = dir.join("journal.log");
    let len = std::fs::metadata(&path).unwrap().len() - offsets[9] - 8;
    for wrong in [len as u32 + 0x20, len as u32 + 0x0100, len as u32 + 1] {
        let bytes = set_length(dir, offsets[9], wrong);
        assert_refused(dir, offsets[9], &bytes);
    }
    // Recovery keeps the record whole: its payload passed its checksum.
    let s = Store::open(dir, OnDamage::Recover).unwrap();
    assert_eq!(s.image().jobs.len(), 10);
    assert!(s.image().jobs.contains_key(&10));
    assert_eq!(s.image().next_id, 11);
    drop(s);
    let s = Store::open(dir, OnDamage::Refuse).unwrap();
    assert_eq!(s.image().jobs.len(), 10);
}

#[test]
fn a_lost_last_submission_leaves_its_id_unused_after_recovery() {
    // Job 10's frame is damaged beyond reading (payload and length): recovery cannot keep it,
    // yet the id its damaged bytes name is not handed out again.
    let scratch = tmp("lostid");
    let dir = scratch.path();
    let offsets = journal_of(dir, &jobs(10));
    flip(dir, offsets[9] + 60);
    let bytes = set_length(dir, offsets[9], 1 << 16);
    assert_refused(dir, offsets[9], &bytes);
    let s = Store::open(dir, OnDamage::Recover).unwrap();
    assert_eq!(s.image().jobs.len(), 9);
    assert_eq!(s.image().next_id, 11);
}

#[test]
fn a_deleted_snapshot_is_noticed_and_named() {
    // Issue 46, item 9: snapshot.json deleted; the journal holds the 3 jobs after it.
    let scratch = tmp("nosnap");
    let dir = scratch.path();
    {
        let mut s = store_with(dir, 20);
        s.snapshot(SnapshotBasis::default()).unwrap();
        for i in 21..=23 {
            s.commit(submit(i)).unwrap();
        }
        s.sync().unwrap();
    }
    std::fs::remove_file(dir.join("snapshot.json")).unwrap();
    let journal = std::fs::read(dir.join("journal.log")).unwrap();
    match Store::open(dir, OnDamage::Refuse) {
        Err(e @ StoreError::Mismatch { .. }) => {
            let text = e.to_string();
            assert!(text.contains("snapshot.json is missing"), "{text}");
            assert!(text.contains("journal.log"), "{text}");
            assert!(text.contains(&dir.display().to_string()), "{text}");
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(s) => panic!(
            "started without its snapshot, with {} jobs",
            s.image().jobs.len()
        ),
    }
    assert_eq!(std::fs::read(dir.join("journal.log")).unwrap(), journal);
    // Asked to, it starts from what is readable, and hands out no id the snapshot held.
    let s = Store::open(dir, OnDamage::Recover).unwrap();
    assert!(s.recovery.damaged.is_some());
    assert_eq!(s.image().jobs.len(), 3);
    assert_eq!(s.image().next_id, 24);
}

#[test]
fn an_older_snapshot_or_a_gap_in_the_journal_is_refused() {
    let scratch = tmp("oldsnap");
    let dir = scratch.path();
    let old;
    {
        let mut s = store_with(dir, 5);
        s.snapshot(SnapshotBasis::default()).unwrap();
        old = std::fs::read(dir.join("snapshot.json")).unwrap();
        for i in 6..=10 {
            s.commit(submit(i)).unwrap();
        }
        s.snapshot(SnapshotBasis::default()).unwrap();
        s.commit(submit(11)).unwrap();
        s.sync().unwrap();
    }
    let new = std::fs::read(dir.join("snapshot.json")).unwrap();
    std::fs::write(dir.join("snapshot.json"), &old).unwrap();
    let err = Store::open(dir, OnDamage::Refuse).err().expect("refused");
    assert!(
        err.to_string().contains("records 6 to 10 are lost"),
        "{err}"
    );
    std::fs::write(dir.join("snapshot.json"), &new).unwrap();
    assert_eq!(
        Store::open(dir, OnDamage::Refuse)
            .unwrap()
            .image()
            .jobs
            .len(),
        11
    );

    // A whole frame cut out of the middle of a journal, cleanly.
    let scratch = tmp("gap");
    let dir = scratch.path();
    let offsets = journal_of(dir, &jobs(5));
    let path = dir.join("journal.log");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.drain(offsets[2] as usize..offsets[3] as usize);
    std::fs::write(&path, &bytes).unwrap();
    let err = Store::open(dir, OnDamage::Refuse).err().expect("refused");
    assert!(err.to_string().contains("lacks records 3 to 3"), "{err}");
}
