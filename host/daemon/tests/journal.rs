//! Journal and store: checksummed frames, a torn tail cut off, replay equal to the state before the crash.

mod common;

use std::io::Write;

use common::{store_with, submit, tmp};
use sluice_daemon::error::StoreError;
use sluice_daemon::image::{Image, Record, State};
use sluice_daemon::journal::{Entry, Journal, OnDamage, encode};
use sluice_daemon::store::{SnapshotBasis, Store};

#[test]
fn records_round_trip_and_a_torn_tail_is_cut() {
    let scratch = tmp("torn");
    let dir = scratch.path();
    let path = dir.join("journal.log");
    {
        let (mut j, replay) = Journal::open(&path, OnDamage::Refuse).unwrap();
        assert!(replay.records.is_empty());
        for i in 1..=5 {
            j.append(&Entry {
                seq: i,
                rec: submit(i),
            })
            .unwrap();
        }
        j.sync().unwrap();
    }
    let good_len = std::fs::metadata(&path).unwrap().len();
    // A crash mid-write: half of a sixth frame.
    let frame = encode(&Entry {
        seq: 6,
        rec: submit(6),
    });
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(&frame[..frame.len() / 2])
        .unwrap();
    let (mut j, replay) = Journal::open(&path, OnDamage::Refuse).unwrap();
    assert_eq!(replay.records.len(), 5);
    assert_eq!(replay.truncated, (frame.len() / 2) as u64);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), good_len);
    // Appending after the cut lands on a clean boundary.
    j.append(&Entry {
        seq: 6,
        rec: submit(6),
    })
    .unwrap();
    j.sync().unwrap();
    drop(j);
    let (_, replay) = Journal::open(&path, OnDamage::Refuse).unwrap();
    assert_eq!(replay.records.len(), 6);
    assert_eq!(replay.records[5].seq, 6);
}

#[test]
fn a_flipped_byte_before_intact_records_is_refused_and_the_file_kept() {
    let scratch = tmp("crc");
    let dir = scratch.path();
    let path = dir.join("journal.log");
    {
        let (mut j, _) = Journal::open(&path, OnDamage::Refuse).unwrap();
        for i in 1..=3 {
            j.append(&Entry {
                seq: i,
                rec: submit(i),
            })
            .unwrap();
        }
        j.sync().unwrap();
    }
    let mut bytes = std::fs::read(&path).unwrap();
    let second = encode(&Entry {
        seq: 1,
        rec: submit(1),
    })
    .len();
    bytes[second + 20] ^= 0x55; // inside the second record's payload
    std::fs::write(&path, &bytes).unwrap();
    match Journal::open(&path, OnDamage::Refuse) {
        Err(StoreError::Damaged {
            offset,
            records_after,
            ..
        }) => {
            assert_eq!(offset as usize, second);
            assert_eq!(records_after, 1);
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a damaged journal was opened"),
    }
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

#[test]
fn store_replay_equals_the_state_before_the_crash() {
    let scratch = tmp("store");
    let dir = scratch.path();
    let before: Image;
    {
        let mut s = store_with(dir, 20);
        s.commit(Record::Started {
            id: 3,
            time: 2000,
            partition: "compute".into(),
            nodes: vec!["node01".into()],
            cpus: 4,
            account: "physics".into(),
            configuring: false,
        })
        .unwrap();
        s.commit(Record::Cancel { id: 5, time: 2001 }).unwrap();
        // A snapshot in the middle (with the use limits are held to), then more records in
        // the journal.
        let mut kept = sluice_daemon::image::LimitUseImage::default();
        kept.qos.insert(
            "high".into(),
            sluice_engine::limits::SpentUse {
                tres_secs: [("cpu".to_string(), 120.0)].into(),
                wall_secs: 60.0,
            },
        );
        s.snapshot(SnapshotBasis {
            limit_use: kept,
            time: 2001,
            ..SnapshotBasis::default()
        })
        .unwrap();
        s.commit(Record::Ended {
            id: 3,
            time: 2100,
            state: State::Completed,
            exit_code: Some(0),
            reason: None,
        })
        .unwrap();
        s.commit(submit(21)).unwrap();
        s.sync().unwrap();
        before = s.image().clone();
        // No clean shutdown: the store is just dropped, as by kill -9.
    }
    let s = Store::open(dir, OnDamage::Refuse).unwrap();
    assert!(s.recovery.snapshot);
    assert_eq!(s.recovery.replayed, 2);
    assert_eq!(s.image(), &before);
    assert_eq!(s.image().limit_use.qos["high"].wall_secs, 60.0);
    assert_eq!(s.image().jobs[&3].state, State::Completed);
    assert_eq!(s.image().jobs[&5].state, State::Cancelled);
    assert_eq!(s.image().next_id, 22);
    // Usage of the run ended after the snapshot counts from the snapshot (2001) on: 99 s × 4 CPUs.
    assert_eq!(s.image().usage.get("physics/alice"), Some(&396.0));
}

#[test]
fn records_a_snapshot_already_holds_are_skipped() {
    let scratch = tmp("skip");
    let dir = scratch.path();
    let mut s = store_with(dir, 3);
    // Simulate a crash between the snapshot's rename and the journal's truncation.
    let journal = std::fs::read(dir.join("journal.log")).unwrap();
    s.snapshot(SnapshotBasis::default()).unwrap();
    drop(s);
    std::fs::write(dir.join("journal.log"), journal).unwrap();
    let s = Store::open(dir, OnDamage::Refuse).unwrap();
    assert_eq!(s.recovery.skipped, 3);
    assert_eq!(s.recovery.replayed, 0);
    assert_eq!(s.image().jobs.len(), 3);
}

#[test]
fn a_snapshot_written_in_the_background_keeps_the_records_committed_meanwhile() {
    let scratch = tmp("background");
    let dir = scratch.path();
    let mut s = store_with(dir, 3);
    s.begin_snapshot(SnapshotBasis::default()).unwrap();
    assert!(!s.snapshot_due(0), "a second snapshot while one is written");
    // Committed while the snapshot is written: after it, only these stay in the journal.
    for i in 4..=5 {
        s.commit(submit(i)).unwrap();
    }
    s.sync().unwrap();
    assert!(s.finish_snapshot(true).unwrap());
    assert_eq!(s.since_snapshot(), 2);
    let (_, replay) = Journal::open(&dir.join("journal.log"), OnDamage::Refuse).unwrap();
    // The snapshot's checkpoint (its last record's number) leads them.
    let seqs: Vec<u64> = replay.records.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [3, 4, 5]);
    assert!(matches!(
        replay.records[0].rec,
        Record::Checkpoint { next_id: 4 }
    ));
    // Appends go on in the new journal file.
    s.commit(submit(6)).unwrap();
    s.sync().unwrap();
    drop(s);
    let s = Store::open(dir, OnDamage::Refuse).unwrap();
    assert!(s.recovery.snapshot);
    assert_eq!(s.recovery.replayed, 3);
    assert_eq!(s.recovery.skipped, 1);
    assert_eq!(s.image().jobs.len(), 6);
}

/// An array of `tasks` tasks from id `first`, each running a 64 KiB script.
fn array(first: u64, tasks: u32) -> Record {
    Record::SubmitArray {
        id: first,
        last_id: first + u64::from(tasks) - 1,
        time: 1000,
        uid: 1000,
        user: "alice".into(),
        request: Box::new(sluice_daemon::request::SubmitRequest {
            script: format!("#!/bin/sh\n#{}\n", "x".repeat(64 << 10)),
            env: [("HOME".to_string(), "/home/alice".to_string())].into(),
            ..Default::default()
        }),
        hold: true,
        tasks: (0..tasks).collect(),
        throttle: 0,
    }
}

#[test]
fn an_array_is_one_record_a_torn_write_keeps_none_of() {
    let scratch = tmp("array");
    let dir = scratch.path();
    let mut s = store_with(dir, 2);
    s.commit(array(3, 1000)).unwrap();
    s.sync().unwrap();
    assert_eq!(s.image().jobs.len(), 1002);
    assert_eq!(s.image().next_id, 1003);
    let at = {
        let (_, replay) = Journal::open(&dir.join("journal.log"), OnDamage::Refuse).unwrap();
        assert_eq!(replay.records.len(), 3, "one record for the whole array");
        std::fs::metadata(dir.join("journal.log")).unwrap().len()
    };
    drop(s);
    // The array's frame cut anywhere: no task of it comes back.
    let path = dir.join("journal.log");
    let whole = std::fs::read(&path).unwrap();
    let frame_start = whole.len()
        - encode(&Entry {
            seq: 3,
            rec: array(3, 1000),
        })
        .len();
    assert!(frame_start as u64 <= at);
    std::fs::write(
        &path,
        &whole[..frame_start + (whole.len() - frame_start) / 2],
    )
    .unwrap();
    let s = Store::open(dir, OnDamage::Refuse).unwrap();
    assert_eq!(s.image().jobs.len(), 2);
    assert!(s.recovery.truncated_bytes > 0);
}

#[test]
fn scripts_live_in_files_the_image_only_points_to_and_purged_jobs_take_theirs_along() {
    let scratch = tmp("files");
    let dir = scratch.path();
    let mut s = Store::open(dir, OnDamage::Refuse).unwrap();
    s.commit(array(1, 3)).unwrap();
    s.sync().unwrap();
    for id in 1..=3 {
        let job = &s.image().jobs[&id];
        assert!(job.stored && job.request.script.is_empty() && job.request.env.is_empty());
        let (script, env) = s.job_files(id).unwrap().load().unwrap();
        assert!(script.len() > 64 << 10);
        assert_eq!(env["HOME"], "/home/alice");
    }
    // A snapshot relies on the files; the journal that carried them is dropped.
    s.snapshot(SnapshotBasis::default()).unwrap();
    let snapshot = std::fs::metadata(dir.join("snapshot.json")).unwrap().len();
    assert!(
        snapshot < 16 << 10,
        "the snapshot holds no script ({snapshot} bytes)"
    );
    // Lost files of a job still in the journal come back from its record.
    s.commit(array(4, 1)).unwrap();
    s.sync().unwrap();
    drop(s);
    std::fs::remove_file(dir.join("scripts/4.sh")).unwrap();
    let mut s = Store::open(dir, OnDamage::Refuse).unwrap();
    assert!(s.job_files(4).unwrap().load().unwrap().0.len() > 64 << 10);
    assert!(s.job_files(1).unwrap().load().is_ok());
    // Ended, accounted and purged: record and files are gone.
    s.commit(Record::Cancel { id: 1, time: 2000 }).unwrap();
    s.commit(Record::Accounted { ids: vec![1] }).unwrap();
    assert_eq!(s.purgeable(1999), Vec::<u64>::new());
    s.commit(Record::Purged { ids: vec![1] }).unwrap();
    assert!(!s.image().jobs.contains_key(&1));
    assert!(!dir.join("scripts/1.sh").exists() && !dir.join("scripts/1.env").exists());
}
