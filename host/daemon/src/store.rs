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

use std::sync::Arc;

use crate::error::StoreError;
pub use sluice_api::{DamagedJournal, RecoveryReport};

use crate::image::{Image, Record};
use crate::job_files::{self, JobFiles};
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
    /// Jobs in the image not yet ended: each may still write records of its own (start, end,
    /// exit), whose journal room is kept for it.
    live_jobs: u64,
    /// When ended jobs were last looked for to purge.
    purge_scan: Option<Instant>,
}

/// Journal room kept for each job not yet ended, for the records the daemon writes about it
/// later without asking (started, ended, exited, accounted).
pub const JOB_RECORDS_ROOM: u64 = 1 << 10;
/// How often the image is looked through for records to purge.
const PURGE_SCAN_EVERY: Duration = Duration::from_secs(5);
/// Bytes left free on the file system beyond new jobs' files, for the snapshot and the
/// journal's next reservations.
const FILES_MARGIN: u64 = 1 << 20;

/// A snapshot on its way to disk: the journal bytes it holds, and the writer's answer.
struct Writing {
    journal_at: u64,
    /// Records committed since the last snapshot that this one holds.
    records: usize,
    /// The snapshot's last record and next job id, which the emptied journal starts with.
    checkpoint: Entry,
    done: mpsc::Receiver<Result<(), StoreError>>,
}

/// Journal room kept for the daemon's own records (jobs starting and ending) beyond a client's
/// change: a client change is refused before it would eat into it.
pub const OWN_RECORDS_ROOM: u64 = 256 << 10;
/// How long after a failed snapshot the next is tried.
const SNAPSHOT_RETRY: Duration = Duration::from_secs(30);

impl Store {
    /// Opens the store in `dir`: snapshot, then every journal record after it; a torn last record
    /// is cut, a damaged journal refused or recovered as `on_damage` says, and so is a journal
    /// that does not follow its snapshot (one missing, older, or records missing between them).
    pub fn open(dir: &Path, on_damage: OnDamage) -> Result<Self, StoreError> {
        let started = Instant::now();
        std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let snap = snapshot::read(&dir.join("snapshot.json"))?;
        let snapshot_seq = snap.as_ref().map(|i| i.seq);
        let mut image = snap.unwrap_or_else(|| Image::new(1));
        let (journal, replay) = Journal::open(&dir.join("journal.log"), on_damage)?;
        let mismatch = sequence_gap(snapshot_seq, &replay.records);
        if let Some(message) = &mismatch
            && on_damage == OnDamage::Refuse
        {
            return Err(StoreError::Mismatch {
                dir: dir.to_path_buf(),
                message: message.clone(),
            });
        }
        let mut report = RecoveryReport {
            snapshot: snapshot_seq.is_some(),
            truncated_bytes: replay.truncated,
            damaged: replay.damaged,
            ..RecoveryReport::default()
        };
        if let Some(message) = &mismatch {
            report.damaged.get_or_insert_with(|| DamagedJournal {
                copy: String::new(),
                ranges: Vec::new(),
                bad_bytes: 0,
                kept_records: replay.records.len(),
                lost_jobs: Vec::new(),
            });
            tracing::error!(
                "{}: snapshot.json and journal.log do not agree: {message}; starting from what is readable",
                dir.display()
            );
        }
        let mut named = replay.damaged_ids;
        let mut store_files = Vec::new();
        for entry in &replay.records {
            named = named.max(entry.rec.highest_job_id().unwrap_or(0));
            if entry.seq <= image.seq {
                report.skipped += 1;
                continue;
            }
            if let Some(id) = entry.rec.job_id()
                && !image.jobs.contains_key(&id)
                && !matches!(
                    entry.rec,
                    Record::Submit { .. } | Record::SubmitArray { .. }
                )
                && let Some(d) = report.damaged.as_mut()
                && !d.lost_jobs.contains(&id)
            {
                d.lost_jobs.push(id);
            }
            image.apply(&entry.rec);
            image.seq = entry.seq.max(image.seq);
            store_files.extend(entry.rec.submitted_ids());
            report.replayed += 1;
        }
        if let Some(d) = &report.damaged
            && !d.lost_jobs.is_empty()
        {
            tracing::error!(
                "{}: jobs the journal names whose submission is lost (their records are gone): {:?}",
                dir.display(),
                d.lost_jobs
            );
        }
        // A counter that never goes back: past every id a readable record or the damaged
        // bytes name, so no acknowledged job's id is handed out again.
        image.next_id = image.next_id.max(named + 1);
        report.millis = started.elapsed().as_secs_f64() * 1e3;
        let live_jobs = image.jobs.values().filter(|j| !j.state.is_final()).count() as u64;
        let mut store = Self {
            dir: dir.to_path_buf(),
            journal,
            since_snapshot: report.replayed,
            image,
            recovery: report,
            snapshot_retry: None,
            writing: None,
            live_jobs,
            purge_scan: None,
        };
        // Replayed submissions write their files again (the journal had them, the files may
        // not have reached the disk).
        for id in store_files {
            store.keep_files(id);
        }
        if store.recovery.damaged.is_some() {
            // What was recovered becomes the snapshot, so the next start finds snapshot and
            // journal in step again (the recovered journal may lack records in its middle).
            let basis = SnapshotBasis {
                usage: store.image.usage.clone(),
                limit_use: store.image.limit_use.clone(),
                time: store.image.usage_time,
            };
            if let Err(e) = store.snapshot(basis) {
                tracing::error!(
                    "snapshot after recovery failed (the next start recovers again): {e}"
                );
            }
        }
        Ok(store)
    }

    /// Reserves journal room for a client's change of about `bytes`, plus room for the records
    /// of the jobs not yet ended and the daemon's own; [`StoreError::Full`] (nothing changed)
    /// when the disk has none.
    pub fn admit(&mut self, bytes: u64) -> Result<(), StoreError> {
        self.admit_jobs(bytes, 0, 0)
    }

    /// Reserves journal room for a client's change of about `bytes` that adds `jobs` jobs, plus
    /// room for the records every job not yet ended may still write and for the daemon's own
    /// records after it, and checks that the file system has `files` bytes more for the new
    /// jobs' scripts and environments; [`StoreError::Full`] (nothing changed) when it has not.
    pub fn admit_jobs(&mut self, bytes: u64, jobs: u64, files: u64) -> Result<(), StoreError> {
        let owed = (self.live_jobs + jobs) * JOB_RECORDS_ROOM;
        self.journal.ensure_room(bytes + owed + OWN_RECORDS_ROOM)?;
        if files > 0 && !job_files_fit(&self.dir, files) {
            return Err(StoreError::Full {
                path: self.dir.join(job_files::DIR),
                need: files,
            });
        }
        Ok(())
    }

    /// Ended jobs whose records may leave the image: accounted, and ended at or before
    /// `horizon` (MinJobAge ago). Looked for at most every few seconds; empty between.
    pub fn purgeable(&mut self, horizon: i64) -> Vec<u64> {
        if self
            .purge_scan
            .is_some_and(|t| t.elapsed() < PURGE_SCAN_EVERY)
        {
            return Vec::new();
        }
        self.purge_scan = Some(Instant::now());
        self.image
            .jobs
            .values()
            .filter(|j| j.state.is_final() && j.accounted)
            .filter(|j| j.end_time.is_some_and(|t| t <= horizon))
            .map(|j| j.id)
            .collect()
    }

    /// Moves job `id`'s script and environment out of the image into its files; a job whose
    /// files cannot be written keeps them in the image (and so in the next snapshot).
    fn keep_files(&mut self, id: u64) {
        let Some(job) = self.image.jobs.get_mut(&id).map(Arc::make_mut) else {
            return;
        };
        if job.stored {
            return;
        }
        if job.state.is_final() {
            // An ended job never runs again: its script and environment are not needed.
            job.request.script = String::new();
            job.request.env = BTreeMap::new();
            job.stored = true;
            return;
        }
        let files = JobFiles::of(&self.dir, id);
        match files.save(&job.request.script, &job.request.env) {
            Ok(()) => {
                job.request.script = String::new();
                job.request.env = BTreeMap::new();
                job.stored = true;
            }
            Err(e) => tracing::warn!(
                "job {id}: {}: {e}; its script and environment stay in memory",
                files.script.display()
            ),
        }
    }

    /// Where job `id`'s script and environment are, if the image does not hold them.
    pub fn job_files(&self, id: u64) -> Option<JobFiles> {
        self.image
            .jobs
            .get(&id)
            .is_some_and(|j| j.stored)
            .then(|| JobFiles::of(&self.dir, id))
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
        let about = entry
            .rec
            .job_id()
            .filter(|_| entry.rec.submitted_ids().is_empty());
        let was_live = about.is_some_and(|id| self.is_live(id));
        self.image.apply(&entry.rec);
        self.image.seq = entry.seq;
        self.since_snapshot += 1;
        if let Some(id) = about {
            match (was_live, self.is_live(id)) {
                (true, false) => self.live_jobs = self.live_jobs.saturating_sub(1),
                (false, true) => self.live_jobs += 1,
                _ => {}
            }
        }
        for id in entry.rec.submitted_ids() {
            self.live_jobs += 1;
            self.keep_files(id);
        }
        if let Record::Purged { ids } = &entry.rec {
            for &id in ids {
                JobFiles::of(&self.dir, id).remove();
            }
        }
        Ok(())
    }

    /// Whether job `id` is in the image and not yet ended.
    fn is_live(&self, id: u64) -> bool {
        self.image
            .jobs
            .get(&id)
            .is_some_and(|j| !j.state.is_final())
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
        let dir = self.dir.clone();
        let (tx, done) = mpsc::channel();
        let checkpoint = Entry {
            seq: image.seq,
            rec: Record::Checkpoint {
                next_id: image.next_id,
            },
        };
        std::thread::Builder::new()
            .name("snapshot".into())
            .spawn(move || {
                // The snapshot holds no script: the job files it relies on reach the disk
                // before it replaces the journal records that carry them.
                let written = job_files::sync(&dir)
                    .map_err(|source| StoreError::Io {
                        path: dir.join(job_files::DIR),
                        source,
                    })
                    .and_then(|()| snapshot::write(&path, &image));
                drop(tx.send(written))
            })
            .map_err(|source| StoreError::Io {
                path: self.dir.join("snapshot.json"),
                source,
            })?;
        self.writing = Some(Writing {
            journal_at: self.journal.len(),
            records: self.since_snapshot,
            checkpoint,
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
        let checkpoint = w.checkpoint.clone();
        self.writing = None;
        if let Err(e) = written {
            self.snapshot_retry = Some(Instant::now() + SNAPSHOT_RETRY);
            return Err(e);
        }
        self.snapshot_retry = None;
        self.since_snapshot -= w_records;
        self.journal.drop_before(at, &checkpoint)?;
        Ok(true)
    }

    /// Bytes in the journal.
    pub fn journal_bytes(&self) -> u64 {
        self.journal.len()
    }
}

/// What does not follow between a snapshot whose last record is `snapshot` (`None`: no
/// snapshot) and the journal's `records`, if anything: a journal that begins after a snapshot
/// that is missing or older than the one it followed, or records missing between them or
/// within the journal.
fn sequence_gap(snapshot: Option<u64>, records: &[Entry]) -> Option<String> {
    let first = records.first()?;
    if let Record::Checkpoint { .. } = first.rec {
        match snapshot {
            None => {
                return Some(format!(
                    "snapshot.json is missing, but journal.log begins after a snapshot of records 1 to {} (every job submitted before them is in it)",
                    first.seq
                ));
            }
            Some(s) if s < first.seq => {
                return Some(format!(
                    "snapshot.json holds records 1 to {s}, older than the snapshot of records 1 to {} journal.log begins after (records {} to {} are lost)",
                    first.seq,
                    s + 1,
                    first.seq
                ));
            }
            Some(_) => {}
        }
    }
    let held = snapshot.unwrap_or(0);
    if let Some(next) = records.iter().find(|e| e.seq > held)
        && next.seq != held + 1
    {
        return Some(match snapshot {
            None => format!(
                "snapshot.json is missing, but journal.log begins at record {} (records 1 to {} are lost)",
                next.seq,
                next.seq - 1
            ),
            Some(s) => format!(
                "journal.log's records after snapshot.json's last ({s}) begin at {} (records {} to {} are lost)",
                next.seq,
                s + 1,
                next.seq - 1
            ),
        });
    }
    records.windows(2).find_map(|w| {
        (w[1].seq != w[0].seq + 1).then(|| {
            format!(
                "journal.log lacks records {} to {} (between two intact ones)",
                w[0].seq + 1,
                w[1].seq.saturating_sub(1)
            )
        })
    })
}

/// Whether the file system holding `dir` has `bytes` free for job files and a margin more.
fn job_files_fit(dir: &Path, bytes: u64) -> bool {
    crate::journal::free_bytes(&dir.join("journal.log"))
        .is_none_or(|free| free >= bytes + FILES_MARGIN)
}
