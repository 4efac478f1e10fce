//! The durable store: the image, its snapshot and the journal since, and recovery from both.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::error::StoreError;
pub use sluice_api::RecoveryReport;

use crate::image::{Image, Record};
use crate::journal::{Entry, Journal};
use crate::snapshot;

/// The image and the files that keep it.
pub struct Store {
    dir: PathBuf,
    journal: Journal,
    image: Image,
    since_snapshot: usize,
    /// What the last open recovered.
    pub recovery: RecoveryReport,
}

impl Store {
    /// Opens the store in `dir`: snapshot, then every journal record after it; a torn tail is cut.
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        let started = Instant::now();
        std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let snap = snapshot::read(&dir.join("snapshot.json"))?;
        let had_snapshot = snap.is_some();
        let mut image = snap.unwrap_or_else(|| Image::new(1));
        let (journal, replay) = Journal::open(&dir.join("journal.log"))?;
        let mut report = RecoveryReport {
            snapshot: had_snapshot,
            truncated_bytes: replay.truncated,
            ..RecoveryReport::default()
        };
        for entry in &replay.records {
            if entry.seq <= image.seq {
                report.skipped += 1;
                continue;
            }
            image.apply(&entry.rec);
            image.seq = entry.seq;
            report.replayed += 1;
        }
        report.millis = started.elapsed().as_secs_f64() * 1e3;
        Ok(Self {
            dir: dir.to_path_buf(),
            journal,
            since_snapshot: report.replayed,
            image,
            recovery: report,
        })
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

    /// Records committed since the last snapshot.
    pub fn since_snapshot(&self) -> usize {
        self.since_snapshot
    }

    /// Writes a snapshot (with the engine's current usage per association) and empties the journal.
    pub fn snapshot(&mut self, usage: BTreeMap<String, f64>, now: i64) -> Result<(), StoreError> {
        self.journal.sync()?;
        self.image.usage = usage;
        self.image.usage_time = now;
        snapshot::write(&self.dir.join("snapshot.json"), &self.image)?;
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
