//! Item 9 of issue 33 (full disk): on a full file system a client's change is refused before it
//! is made, reads go on, nothing acknowledged is lost, a failed snapshot leaves nothing behind,
//! a restart needs no room for a snapshot, and changes are taken again once space is freed.

mod common;

use common::{SmallDisk, submit};
use sluice_daemon::error::StoreError;
use sluice_daemon::journal::OnDamage;
use sluice_daemon::store::{SnapshotBasis, Store};

#[test]
fn a_full_disk_refuses_changes_keeps_reads_and_recovers_when_space_is_freed() {
    let Some(disk) = SmallDisk::mount("full", 8192) else {
        return;
    };
    let dir = disk.path().join("state");
    std::fs::create_dir(&dir).unwrap();
    let mut s = Store::open(&dir, OnDamage::Refuse).unwrap();
    for i in 1..=50 {
        s.admit(1000).unwrap();
        s.commit(submit(i)).unwrap();
    }
    s.sync().unwrap();
    let filler = disk.fill();

    // What the journal reserved beforehand is still the daemon's: changes are taken until the
    // reserve is down to the room kept for the daemon's own records, then refused.
    let mut taken = 50;
    let refusal = loop {
        match s.admit(1000) {
            Ok(()) => {
                taken += 1;
                s.commit(submit(taken)).unwrap();
                s.sync().unwrap();
            }
            Err(e) => break e,
        }
        assert!(taken < 10_000, "a full disk never refused a change");
    };
    assert!(matches!(refusal, StoreError::Full { .. }), "{refusal}");
    assert!(refusal.to_string().contains("no space left"), "{refusal}");
    // The daemon's own records (jobs starting and ending) still fit in the room kept for them.
    for _ in 0..10 {
        taken += 1;
        s.commit(submit(taken)).unwrap();
    }
    s.sync().unwrap();
    // Reads are unaffected.
    assert_eq!(s.image().jobs.len(), taken as usize);
    // A snapshot fails without leaving a partial file; the journal keeps everything.
    assert!(s.snapshot(SnapshotBasis::default()).is_err());
    assert!(!dir.join("snapshot.tmp").exists());
    assert!(!dir.join("snapshot.json").exists());
    drop(s);

    // A restart on the full disk reads everything back.
    let mut s = Store::open(&dir, OnDamage::Refuse).unwrap();
    assert_eq!(s.image().jobs.len(), taken as usize);
    assert_eq!(s.image().next_id, taken + 1);
    assert!(s.admit(1000).is_err());

    // Freed space is used again without a restart.
    std::fs::remove_file(&filler).unwrap();
    s.admit(1000).unwrap();
    s.commit(submit(taken + 1)).unwrap();
    s.sync().unwrap();
    s.snapshot(SnapshotBasis::default()).unwrap();
    drop(s);
    let s = Store::open(&dir, OnDamage::Refuse).unwrap();
    assert_eq!(s.image().jobs.len(), taken as usize + 1);
}
