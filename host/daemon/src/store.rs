//! The durable store: the image, its snapshot and the journal since, and recovery from both.
//!
//! A job id once acknowledged is never handed out again: the next id is above every id any
//! readable record names, so a recovered journal whose damage swallowed a submission does not
//! reuse that job's id. Changes asked for by clients are admitted only when the journal has room
//! for them and for the daemon's own records after them ([`Store::admit`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::StoreError;
pub use sluice_api::RecoveryReport;

use crate::image::{Image, Record};
use crate::journal::{Entry, Journal, OnDamage};
use crate::snapshot;

/// The image and the files that keep it.
pub struct Store {
    dir: PathBuf,
    journal: Journal,
    image: Image,
    since_snapshot: usize,
    /// What the last open recovered.
    pub recovery: RecoveryReport,
    /// No snapshot is tried before this (one just failed, likely for want of space).
    snapshot_retry: Option<Instant>,
}

/// Journal room kept for the daemon's own records (jobs starting and ending) beyond a client's
/// change: a client change is refused before it would eat into it.
pub const OWN_RECORDS_ROOM: u64 = 256 << 10;
/// How long after a failed snapshot the next is tried.
const SNAPSHOT_RETRY: Duration = Duration::from_secs(30);

impl Store {
    /// Opens the store in `dir`: snapshot, then every journal record after it; a torn last record
    /// is cut, a damaged journal refused or recovered as `on_damage` says.
    pub fn open(dir: &Path, on_damage: OnDamage) -> Result<Self, StoreError> {
        let started = Instant::now();
        std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let snap = snapshot::read(&dir.join("snapshot.json"))?;
        let had_snapshot = snap.is_some();
        let mut image = snap.unwrap_or_else(|| Image::new(1));
        let (journal, replay) = Journal::open(&dir.join("journal.log"), on_damage)?;
        let mut report = RecoveryReport {
            snapshot: had_snapshot,
            truncated_bytes: replay.truncated,
            damaged: replay.damaged,
            ..RecoveryReport::default()
        };
        let mut named = 0;
        for entry in &replay.records {
            named = named.max(entry.rec.job_id().unwrap_or(0));
            if entry.seq <= image.seq {
                report.skipped += 1;
                continue;
            }
            if let Some(id) = entry.rec.job_id()
                && !image.jobs.contains_key(&id)
                && !matches!(entry.rec, Record::Submit { .. })
                && let Some(d) = report.damaged.as_mut()
                && !d.lost_jobs.contains(&id)
            {
                d.lost_jobs.push(id);
            }
            image.apply(&entry.rec);
            image.seq = entry.seq.max(image.seq);
            report.replayed += 1;
        }
        image.next_id = image.next_id.max(named + 1);
        report.millis = started.elapsed().as_secs_f64() * 1e3;
        Ok(Self {
            dir: dir.to_path_buf(),
            journal,
            since_snapshot: report.replayed,
            image,
            recovery: report,
            snapshot_retry: None,
        })
    }

    /// Reserves journal room for a client's change of about `bytes`, plus room for the daemon's
    /// own records after it; [`StoreError::Full`] (nothing changed) when the disk has none.
    pub fn admit(&mut self, bytes: u64) -> Result<(), StoreError> {
        self.journal.ensure_room(bytes + OWN_RECORDS_ROOM)
    }

    /// Whether a snapshot is due: `every` records since the last, and no failed one just before.
    pub fn snapshot_due(&self, every: usize) -> bool {
        self.since_snapshot >= every && self.snapshot_retry.is_none_or(|t| Instant::now() >= t)
    }

    /// The current image.
    pub fn image(&self) -> &Image {
        &self.image
    }

    /// Appends `record` to the journal (buffered) and applies it to the image. The change is
    /// acknowledged only after [`Store::sync`].
    pub fn commit(&mut self, record: Record) -> Result<(), StoreError> {
        let entry = Entry {
            seq: self.image.seq + 1,
            rec: record,
        };
        self.journal.append(&entry)?;
        self.image.apply(&entry.rec);
        self.image.seq = entry.seq;
        self.since_snapshot += 1;
        Ok(())
    }

    /// Makes every committed record durable.
    pub fn sync(&mut self) -> Result<(), StoreError> {
        self.journal.sync()
    }

    /// Whether records await a sync.
    pub fn has_unsynced(&self) -> bool {
        self.journal.has_unsynced()
    }

    /// Records committed since the last snapshot.
    pub fn since_snapshot(&self) -> usize {
        self.since_snapshot
    }

    /// Writes a snapshot (with the engine's current usage per association) and empties the journal.
    pub fn snapshot(
        &mut self,
        usage: BTreeMap<String, f64>,
        limit_use: crate::image::LimitUseImage,
        now: i64,
    ) -> Result<(), StoreError> {
        self.journal.sync()?;
        self.image.usage = usage;
        self.image.limit_use = limit_use;
        self.image.usage_time = now;
        if let Err(e) = snapshot::write(&self.dir.join("snapshot.json"), &self.image) {
            self.snapshot_retry = Some(Instant::now() + SNAPSHOT_RETRY);
            return Err(e);
        }
        self.snapshot_retry = None;
        // A crash here leaves records the snapshot holds; their sequence numbers skip them.
        self.journal.reset()?;
        self.since_snapshot = 0;
        Ok(())
    }

    /// Bytes in the journal.
    pub fn journal_bytes(&self) -> u64 {
        self.journal.len()
    }
}
