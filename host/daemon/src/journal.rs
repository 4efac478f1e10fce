//! The append-only journal: length- and checksum-framed records, synced before an answer leaves.
//!
//! A record on disk is `len: u32 LE | crc32(payload): u32 LE | payload` where the payload is one
//! JSON-encoded [`Entry`]. Reading stops at the first frame that is short
//! or fails its checksum: that is the torn tail of a crash mid-write, and it is cut off so the
//! next append starts on a clean boundary.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::StoreError;
use serde::{Deserialize, Serialize};

use crate::image::Record;

/// Bytes of a frame header: length then checksum.
const HEADER: usize = 8;
/// A record longer than this is treated as corruption rather than allocated (a torn length).
const MAX_RECORD: usize = 64 << 20;

/// One framed record with its sequence number; a snapshot remembers the last number it holds,
/// so records it already contains are skipped if a crash came between snapshot and truncation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Sequence number, from 1.
    pub seq: u64,
    /// The change.
    pub rec: Record,
}

/// An open journal file, positioned at its end.
pub struct Journal {
    path: PathBuf,
    out: BufWriter<File>,
    /// Bytes of valid records in the file.
    len: u64,
    /// Records appended but not yet synced.
    unsynced: usize,
}

/// What reading a journal found.
#[derive(Debug, Default)]
pub struct Replay {
    /// Every intact record, in order.
    pub records: Vec<Entry>,
    /// Bytes of a torn or corrupt tail that were cut off (0 after a clean stop).
    pub truncated: u64,
}

impl Journal {
    /// Opens (creating if needed) the journal at `path`, reads every intact record and truncates
    /// whatever follows the last one.
    pub fn open(path: &Path) -> Result<(Self, Replay), StoreError> {
        let io = |source| StoreError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .write(true)
            .truncate(false)
            .open(path)
            .map_err(io)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io)?;
        let (records, valid) = decode_all(&bytes, path)?;
        let truncated = bytes.len() as u64 - valid;
        if truncated > 0 {
            tracing::warn!(
                "{}: cut {truncated} bytes of a torn record after offset {valid}",
                path.display()
            );
            file.set_len(valid).map_err(io)?;
            file.sync_all().map_err(io)?;
        }
        file.seek(SeekFrom::Start(valid)).map_err(io)?;
        Ok((
            Self {
                path: path.to_path_buf(),
                out: BufWriter::new(file),
                len: valid,
                unsynced: 0,
            },
            Replay { records, truncated },
        ))
    }

    /// Buffers one record; it is durable only after [`Journal::sync`].
    pub fn append(&mut self, record: &Entry) -> Result<(), StoreError> {
        let frame = encode(record);
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

    /// Empties the journal after a snapshot has captured everything in it.
    pub fn reset(&mut self) -> Result<(), StoreError> {
        let io = |source| StoreError::Io {
            path: self.path.clone(),
            source,
        };
        self.out.flush().map_err(io)?;
        let file = self.out.get_mut();
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        file.sync_all().map_err(io)?;
        self.len = 0;
        self.unsynced = 0;
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

/// One record as a frame.
pub fn encode(record: &Entry) -> Vec<u8> {
    let payload = serde_json::to_vec(record).expect("journal records always serialize");
    let mut frame = Vec::with_capacity(HEADER + payload.len());
    frame.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    frame.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    frame.extend_from_slice(&payload);
    frame
}

/// Decodes frames from the start of `bytes`; returns the records and the length of the valid prefix.
///
/// A frame whose checksum holds but whose payload does not parse is a real error (a format change
/// or a bug), not a torn write, so it is reported rather than silently cut.
pub fn decode_all(bytes: &[u8], path: &Path) -> Result<(Vec<Entry>, u64), StoreError> {
    let mut records = Vec::new();
    let mut at = 0usize;
    while bytes.len() - at >= HEADER {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes")) as usize;
        let crc = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().expect("4 bytes"));
        if len > MAX_RECORD || bytes.len() - at - HEADER < len {
            break;
        }
        let payload = &bytes[at + HEADER..at + HEADER + len];
        if crc32fast::hash(payload) != crc {
            break;
        }
        let record = serde_json::from_slice(payload).map_err(|e| StoreError::Corrupt {
            path: path.to_path_buf(),
            offset: at as u64,
            message: e.to_string(),
        })?;
        records.push(record);
        at += HEADER + len;
    }
    Ok((records, at as u64))
}
