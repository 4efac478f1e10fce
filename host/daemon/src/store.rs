//! The durable store: the image, its snapshot and the journal since, and recovery from both.
//!
//! A job id once acknowledged is never handed out again: the next id is above every id any
//! readable record names, so a recovered journal whose damage swallowed a submission does not
//! reuse that job's id. Changes asked for by clients are admitted only when the journal has room
//! for them and for the daemon's own records after them ([`Store::admit`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::error::StoreError;
pub use sluice_api::RecoveryReport;

use crate::image::{Image, Record};
use crate::journal::{Entry, Journal, OnDamage};
use crate::snapshot;

/// What the engine adds to a snapshot besides the journaled image: its usage and limits' use,
/// as of `time`.
#[derive(Clone, Debug, Default)]
pub struct SnapshotBasis {
    /// Each association's own raw usage ([`crate::image::Image::usage`]).
    pub usage: BTreeMap<String, f64>,
    /// The decayed use limits are held to ([`crate::image::Image::limit_use`]).
    pub limit_use: crate::image::LimitUseImage,
    /// When both were taken from the engine.
    pub time: i64,
}

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
    /// A snapshot being written off the driver's thread.
    writing: Option<Writing>,
}

/// A snapshot on its way to disk: the journal bytes it holds, and the writer's answer.
struct Writing {
    journal_at: u64,
    /// Records committed since the last snapshot that this one holds.
    records: usize,
    done: mpsc::Receiver<Result<(), StoreError>>,
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
            writing: None,
        })
    }

    /// Reserves journal room for a client's change of about `bytes`, plus room for the daemon's
    /// own records after it; [`StoreError::Full`] (nothing changed) when the disk has none.
    pub fn admit(&mut self, bytes: u64) -> Result<(), StoreError> {
        self.journal.ensure_room(bytes + OWN_RECORDS_ROOM)
    }

    /// Whether a snapshot is due: `every` records since the last, and no failed one just before.
    pub fn snapshot_due(&self, every: usize) -> bool {
        self.since_snapshot >= every
            && self.writing.is_none()
            && self.snapshot_retry.is_none_or(|t| Instant::now() >= t)
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

    /// Writes a snapshot (with the engine's current usage per association) and empties the
    /// journal, waiting for both: [`Store::begin_snapshot`] and [`Store::finish_snapshot`].
    pub fn snapshot(&mut self, basis: SnapshotBasis) -> Result<(), StoreError> {
        self.finish_snapshot(true)?;
        self.begin_snapshot(basis)?;
        self.finish_snapshot(true).map(drop)
    }

    /// Starts a snapshot, written by a thread of its own from a copy of the image, so the driver
    /// goes on while the disk works; [`Store::finish_snapshot`] then drops from the journal what
    /// it holds. Records committed meanwhile stay in the journal.
    pub fn begin_snapshot(&mut self, basis: SnapshotBasis) -> Result<(), StoreError> {
        if self.writing.is_some() {
            return Ok(());
        }
        self.journal.sync()?;
        self.image.usage = basis.usage;
        self.image.limit_use = basis.limit_use;
        self.image.usage_time = basis.time;
        let image = self.image.clone();
        let path = self.dir.join("snapshot.json");
        let (tx, done) = mpsc::channel();
        std::thread::Builder::new()
            .name("snapshot".into())
            .spawn(move || drop(tx.send(snapshot::write(&path, &image))))
            .map_err(|source| StoreError::Io {
                path: self.dir.join("snapshot.json"),
                source,
            })?;
        self.writing = Some(Writing {
            journal_at: self.journal.len(),
            records: self.since_snapshot,
            done,
        });
        Ok(())
    }

    /// Completes a snapshot [`Store::begin_snapshot`] started, once its file is on disk:
    /// `Ok(true)` when one completed. A snapshot that failed leaves the journal whole and the
    /// next is tried after a pause.
    pub fn finish_snapshot(&mut self, wait: bool) -> Result<bool, StoreError> {
        let Some(w) = &self.writing else {
            return Ok(false);
        };
        let answer = if wait {
            w.done.recv().map_err(|_| mpsc::TryRecvError::Disconnected)
        } else {
            w.done.try_recv()
        };
        let written = match answer {
            Err(mpsc::TryRecvError::Empty) => return Ok(false),
            Err(mpsc::TryRecvError::Disconnected) => Err(StoreError::Io {
                path: self.dir.join("snapshot.json"),
                source: std::io::Error::other("the snapshot writer stopped"),
            }),
            Ok(written) => written,
        };
        let (at, w_records) = (w.journal_at, w.records);
        self.writing = None;
        if let Err(e) = written {
            self.snapshot_retry = Some(Instant::now() + SNAPSHOT_RETRY);
            return Err(e);
        }
        self.snapshot_retry = None;
        self.since_snapshot -= w_records;
        self.journal.drop_before(at)?;
        Ok(true)
    }

    /// Bytes in the journal.
    pub fn journal_bytes(&self) -> u64 {
        self.journal.len()
    }
}
