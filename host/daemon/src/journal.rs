//! The append-only journal: checksummed frames ([`crate::frames`]), synced before an answer
//! leaves, in a file only the daemon's user can read.
//!
//! Opening it cuts only a torn last frame (a crash mid-write). A bad range followed by intact
//! frames, or a complete frame failing its checksum, is damage: the journal is left as it is and
//! start-up refuses, unless asked to recover, which copies the file aside and keeps every frame
//! still readable. Disk space is reserved ahead of the records (`fallocate`), so a full file
//! system refuses new changes before they are made rather than failing a sync after.

use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::error::StoreError;
pub use crate::frames::{Entry, encode};
use crate::frames::{Scan, Verdict, scan};
pub use sluice_api::DamagedJournal;

/// Space reserved ahead of the records at a time.
const RESERVE_CHUNK: u64 = 1 << 20;

/// What to do with a damaged journal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnDamage {
    /// Refuse to open it, leaving every byte as it is.
    #[default]
    Refuse,
    /// Copy it aside, then keep every intact frame (`serve --recover-damaged-journal`).
    Recover,
}

/// An open journal file, positioned at its end.
pub struct Journal {
    path: PathBuf,
    out: BufWriter<File>,
    /// Bytes of valid records in the file.
    len: u64,
    /// Records appended but not yet synced.
    unsynced: usize,
    /// Offset up to which disk space is allocated.
    reserved: u64,
    /// Whether the last reservation failed (logged once until one succeeds again).
    short: bool,
}

/// What reading a journal found.
#[derive(Debug, Default)]
pub struct Replay {
    /// Every intact record, in order.
    pub records: Vec<Entry>,
    /// Bytes of a torn last frame that were cut off (0 after a clean stop).
    pub truncated: u64,
    /// What recovery from damage did, if the journal was damaged and recovery was asked for.
    pub damaged: Option<DamagedJournal>,
    /// The highest job id the damaged bytes seem to name (0 if none): recovery hands out no id
    /// a lost record may have acknowledged.
    pub damaged_ids: u64,
}

/// Opens `path` for reading and writing without following a symlink; a new file is 0600.
pub fn open_private(path: &Path, create: bool) -> std::io::Result<File> {
    OpenOptions::new()
        .create(create)
        .read(true)
        .write(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// Creates `path`, which must not exist yet, for reading and writing, 0600, without following
/// a symlink.
fn create_private(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

impl Journal {
    /// Opens (creating if needed) the journal at `path` and reads every intact record; a torn
    /// last frame is cut, damage is refused or recovered as `on_damage` says.
    pub fn open(path: &Path, on_damage: OnDamage) -> Result<(Self, Replay), StoreError> {
        let io = |source| StoreError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = open_private(path, true).map_err(io)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io)?;
        let found = scan(&bytes);
        let mut replay = Replay::default();
        let valid = match found.verdict(&bytes) {
            Verdict::Clean => bytes.len() as u64,
            Verdict::TornTail(at) => {
                replay.truncated = bytes.len() as u64 - at;
                tracing::warn!(
                    "{}: cut {} bytes of a torn last record after offset {at}",
                    path.display(),
                    replay.truncated
                );
                file.set_len(at).map_err(io)?;
                file.sync_all().map_err(io)?;
                at
            }
            Verdict::Damaged(at) => match on_damage {
                OnDamage::Refuse => {
                    return Err(StoreError::Damaged {
                        path: path.to_path_buf(),
                        offset: at,
                        bad_bytes: found.bad_bytes(),
                        records_after: found.frames.iter().filter(|(r, _)| r.start > at).count(),
                    });
                }
                OnDamage::Recover => {
                    let damaged = set_aside(path, &bytes, &found)?;
                    replay.damaged_ids = found
                        .bad
                        .iter()
                        .map(|r| ids_named(&bytes[r.start as usize..r.end as usize]))
                        .max()
                        .unwrap_or(0);
                    file = open_private(path, false).map_err(io)?;
                    replay.damaged = Some(damaged);
                    file.metadata().map_err(io)?.len()
                }
            },
        };
        replay.records = found.frames.into_iter().map(|(_, e)| e).collect();
        file.seek(SeekFrom::Start(valid)).map_err(io)?;
        let mut journal = Self {
            path: path.to_path_buf(),
            out: BufWriter::new(file),
            len: valid,
            unsynced: 0,
            reserved: 0,
            short: false,
        };
        // Without room the daemon still starts: reads work and changes are refused until there
        // is (ensure_room logs the shortage once).
        let _ = journal.ensure_room(RESERVE_CHUNK);
        Ok((journal, replay))
    }

    /// Buffers one record; it is durable only after [`Journal::sync`].
    pub fn append(&mut self, record: &Entry) -> Result<(), StoreError> {
        let frame = encode(record);
        // The daemon's own decisions (a job started or ended) are written even without a
        // reservation: the write may still find room, and if it does not, the sync reports it.
        let _ = self.ensure_room(frame.len() as u64);
        self.out
            .write_all(&frame)
            .map_err(|source| StoreError::Io {
                path: self.path.clone(),
                source,
            })?;
        self.len += frame.len() as u64;
        self.unsynced += 1;
        Ok(())
    }

    /// Makes sure `need` bytes after the records are allocated on disk, reserving a chunk more
    /// when they are not; [`StoreError::Full`] when the file system has no room.
    pub fn ensure_room(&mut self, need: u64) -> Result<(), StoreError> {
        if self.reserved >= self.len + need {
            return Ok(());
        }
        let fd = self.out.get_ref().as_raw_fd();
        // A chunk ahead when there is room for it, else just what is needed now.
        let mut want = need + RESERVE_CHUNK;
        let mut r = fallocate(fd, self.len, want);
        if r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOSPC) {
            want = need;
            r = fallocate(fd, self.len, want);
        }
        if r == 0 {
            self.reserved = self.len + want;
            if std::mem::take(&mut self.short) {
                tracing::info!("{}: journal space reserved again", self.path.display());
            }
            return Ok(());
        }
        let err = std::io::Error::last_os_error();
        let result = match err.raw_os_error() {
            Some(libc::ENOSPC) | Some(libc::EDQUOT) => Err(StoreError::Full {
                path: self.path.clone(),
                need,
            }),
            // A file system that cannot reserve: go by its free space instead.
            Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) => {
                if free_bytes(&self.path).is_some_and(|free| free >= want) {
                    Ok(())
                } else {
                    Err(StoreError::Full {
                        path: self.path.clone(),
                        need,
                    })
                }
            }
            _ => Err(StoreError::Io {
                path: self.path.clone(),
                source: err,
            }),
        };
        if let Err(e) = &result
            && !std::mem::replace(&mut self.short, true)
        {
            tracing::warn!("{e}");
        }
        result
    }

    /// Whether records await a sync.
    pub fn has_unsynced(&self) -> bool {
        self.unsynced > 0
    }

    /// Writes buffered records and fsyncs the file (group commit: one sync for a whole batch).
    pub fn sync(&mut self) -> Result<(), StoreError> {
        if self.unsynced == 0 {
            return Ok(());
        }
        let io = |source| StoreError::Io {
            path: self.path.clone(),
            source,
        };
        self.out.flush().map_err(io)?;
        self.out.get_ref().sync_data().map_err(io)?;
        self.unsynced = 0;
        Ok(())
    }

    /// Drops the records before byte `at` (a snapshot holds them) and keeps those after, behind
    /// `head` (the snapshot's checkpoint, so a start-up can tell whether the snapshot is
    /// there); written to a new file, synced, and renamed over the journal: a crash leaves
    /// either the whole old journal (whose held records recovery skips by sequence) or the new
    /// one.
    pub fn drop_before(&mut self, at: u64, head: &Entry) -> Result<(), StoreError> {
        let at = at.min(self.len);
        let tmp = self.path.with_extension("log.tmp");
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| StoreError::Io { path, source }
        };
        self.out.flush().map_err(io(&self.path))?;
        let mut from = File::open(&self.path).map_err(io(&self.path))?;
        from.seek(SeekFrom::Start(at)).map_err(io(&self.path))?;
        let _ = fs::remove_file(&tmp);
        let mut to = create_private(&tmp).map_err(io(&tmp))?;
        let head = encode(head);
        to.write_all(&head).map_err(io(&tmp))?;
        let kept = std::io::copy(&mut from.take(self.len - at), &mut to).map_err(io(&tmp))?;
        to.sync_all().map_err(io(&tmp))?;
        fs::rename(&tmp, &self.path).map_err(io(&self.path))?;
        if let Some(dir) = self.path.parent() {
            File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(io(dir))?;
        }
        self.out = BufWriter::new(to);
        self.len = head.len() as u64 + kept;
        self.unsynced = 0;
        self.reserved = self.len;
        let _ = self.ensure_room(RESERVE_CHUNK);
        Ok(())
    }

    /// Bytes of records in the file, synced or not.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the journal holds no record.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Allocates `len` bytes of `fd` from `offset` without changing its size; 0 or -1 (errno set).
fn fallocate(fd: std::os::fd::RawFd, offset: u64, len: u64) -> libc::c_int {
    unsafe {
        libc::fallocate(
            fd,
            libc::FALLOC_FL_KEEP_SIZE,
            offset as libc::off_t,
            len as libc::off_t,
        )
    }
}

/// Bytes free to the daemon's user on the file system holding `path`.
pub fn free_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    (unsafe { libc::statvfs(c.as_ptr(), &mut st) } == 0)
        .then(|| st.f_bavail as u64 * st.f_frsize as u64)
}

/// Recovers a damaged journal: the whole file is copied next to it (evidence first), then the
/// journal is replaced, atomically, by its intact frames.
fn set_aside(path: &Path, bytes: &[u8], found: &Scan) -> Result<DamagedJournal, StoreError> {
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |source: std::io::Error| StoreError::Io { path: p, source }
    };
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let name = path
        .file_name()
        .map_or("journal.log".into(), |n| n.to_string_lossy().into_owned());
    let copy = path.with_file_name(format!("{name}.damaged-{stamp}"));
    {
        let mut f = create_private(&copy).map_err(io(&copy))?;
        f.write_all(bytes).map_err(io(&copy))?;
        f.sync_all().map_err(io(&copy))?;
    }
    let tmp = path.with_file_name(format!("{name}.recovering"));
    let _ = fs::remove_file(&tmp);
    {
        let mut f = create_private(&tmp).map_err(io(&tmp))?;
        for (range, _) in &found.frames {
            let payload = &bytes[range.start as usize + crate::frames::HEADER..range.end as usize];
            f.write_all(&crate::frames::reframe(payload))
                .map_err(io(&tmp))?;
        }
        f.sync_all().map_err(io(&tmp))?;
    }
    fs::rename(&tmp, path).map_err(io(path))?;
    if let Some(dir) = path.parent() {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io(dir))?;
    }
    let ranges: Vec<(u64, u64)> = found.bad.iter().map(|r| (r.start, r.end)).collect();
    tracing::error!(
        "{}: damaged at {} byte range(s) {:?} ({} bytes); the original is kept as {}; {} intact records kept",
        path.display(),
        ranges.len(),
        ranges,
        found.bad_bytes(),
        copy.display(),
        found.frames.len()
    );
    Ok(DamagedJournal {
        copy: copy.to_string_lossy().into_owned(),
        ranges,
        bad_bytes: found.bad_bytes(),
        kept_records: found.frames.len(),
        lost_jobs: Vec::new(),
    })
}

/// The highest number that follows `"id":`, `"last_id":` or `"job_id":` in `bytes`: what job
/// ids a damaged record may have held, read without trusting its framing.
fn ids_named(bytes: &[u8]) -> u64 {
    const KEYS: [&[u8]; 3] = [b"\"id\":", b"\"last_id\":", b"\"job_id\":"];
    let mut highest = 0;
    for key in KEYS {
        let mut at = 0;
        while let Some(i) = bytes[at..].windows(key.len()).position(|w| w == key) {
            at += i + key.len();
            let digits = bytes[at..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .take(19);
            let value = digits.fold(0u64, |v, d| v * 10 + u64::from(d - b'0'));
            highest = highest.max(value);
        }
    }
    highest
}
