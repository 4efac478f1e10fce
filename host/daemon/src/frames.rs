//! The journal's frame format and the scan that tells a torn tail from damage.
//!
//! A frame is `len: u32 LE | crc32(payload): u32 LE | payload`, the payload one JSON-encoded
//! [`Entry`] (always `{"seq":…`). The scan reads every frame it can: after a bad byte range it
//! looks for the next frame that starts with that prefix, passes its checksum and parses, so
//! records after a damaged one are still found. JSON escapes every `"` and control byte inside
//! strings, so a frame can never be smuggled inside a job's script and found by the scan.

use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::image::Record;

/// Bytes of a frame header: length then checksum.
pub const HEADER: usize = 8;
/// A record longer than this is never written (request bodies are far smaller), so a longer
/// length field is damage rather than an allocation to attempt.
pub const MAX_RECORD: usize = 64 << 20;
/// How every payload begins (serde writes a struct's fields in order).
const PAYLOAD_PREFIX: &[u8] = b"{\"seq\":";

/// One framed record with its sequence number; a snapshot remembers the last number it holds,
/// so records it already contains are skipped if a crash came between snapshot and truncation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Sequence number, from 1.
    pub seq: u64,
    /// The change.
    pub rec: Record,
}

/// One record as a frame.
pub fn encode(record: &Entry) -> Vec<u8> {
    let payload = serde_json::to_vec(record).expect("journal records always serialize");
    reframe(&payload)
}

/// Every frame found in a journal's bytes, and the byte ranges no frame covers.
#[derive(Debug, Default)]
pub struct Scan {
    /// Intact records with the byte range of their frame, in file order.
    pub frames: Vec<(Range<u64>, Entry)>,
    /// Ranges that are not intact frames, in file order.
    pub bad: Vec<Range<u64>>,
    /// Length of the bytes scanned.
    pub len: u64,
}

/// What a scan means for start-up.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every byte belongs to an intact frame.
    Clean,
    /// Only the last frame is incomplete (a crash mid-write): cut at this offset.
    TornTail(u64),
    /// A bad range with intact frames after it, or a complete frame that fails its checksum:
    /// the first bad byte's offset.
    Damaged(u64),
}

/// The frame starting at `at`, if one is intact there: its record and its length in bytes.
fn frame_at(bytes: &[u8], at: usize) -> Option<(Entry, usize)> {
    let rest = &bytes[at..];
    if rest.len() < HEADER + PAYLOAD_PREFIX.len() {
        return None;
    }
    let len = u32::from_le_bytes(rest[..4].try_into().expect("4 bytes")) as usize;
    let crc = u32::from_le_bytes(rest[4..8].try_into().expect("4 bytes"));
    if len > MAX_RECORD || rest.len() - HEADER < len || !rest[HEADER..].starts_with(PAYLOAD_PREFIX)
    {
        return None;
    }
    let payload = &rest[HEADER..HEADER + len];
    if crc32fast::hash(payload) != crc {
        return None;
    }
    let entry = serde_json::from_slice(payload).ok()?;
    Some((entry, HEADER + len))
}

/// Reads every intact frame of `bytes`, resynchronising after bad ranges.
pub fn scan(bytes: &[u8]) -> Scan {
    let mut out = Scan {
        len: bytes.len() as u64,
        ..Scan::default()
    };
    let mut bad_from: Option<usize> = None;
    let mut at = 0usize;
    while at < bytes.len() {
        match frame_at(bytes, at) {
            Some((entry, n)) => {
                if let Some(from) = bad_from.take() {
                    out.bad.push(from as u64..at as u64);
                }
                out.frames.push((at as u64..(at + n) as u64, entry));
                at += n;
            }
            None => {
                bad_from.get_or_insert(at);
                at += 1;
            }
        }
    }
    if let Some(from) = bad_from {
        // A last record whose length field alone is damaged is kept (its header is the bad
        // range), so recovery loses nothing of it; the verdict is damage all the same.
        match relengthed(bytes, from) {
            Some(entry) => {
                out.bad.push(from as u64..(from + 4) as u64);
                out.frames.push((from as u64..bytes.len() as u64, entry));
            }
            None => out.bad.push(from as u64..bytes.len() as u64),
        }
    }
    out
}

/// The frame of `payload` with its header computed afresh: what recovery writes for every
/// record it keeps, so a record whose length field was damaged is whole again.
pub fn reframe(payload: &[u8]) -> Vec<u8> {
    let mut frame = Vec::with_capacity(HEADER + payload.len());
    frame.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    frame.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    frame.extend_from_slice(payload);
    frame
}

impl Scan {
    /// Whether the bad ranges are a torn last frame (cut without asking) or damage.
    pub fn verdict(&self, bytes: &[u8]) -> Verdict {
        let Some(first) = self.bad.first() else {
            return Verdict::Clean;
        };
        if self.bad.len() == 1
            && first.end == self.len
            && incomplete(&bytes[first.start as usize..])
        {
            Verdict::TornTail(first.start)
        } else {
            Verdict::Damaged(first.start)
        }
    }

    /// Bytes in bad ranges.
    pub fn bad_bytes(&self) -> u64 {
        self.bad.iter().map(|r| r.end - r.start).sum()
    }
}

/// Whether `tail` is the start of a frame that the file ends before: a header cut short, or a
/// plausible length that runs past the end over a prefix of a record. A complete frame failing
/// its checksum is not, and neither is a whole record under a length that points past it (a
/// damaged length byte) nor bytes that are no JSON: a write cut short leaves a prefix of its
/// payload, which never passes the header's checksum nor parses whole.
fn incomplete(tail: &[u8]) -> bool {
    if tail.len() < HEADER {
        return true;
    }
    let len = u32::from_le_bytes(tail[..4].try_into().expect("4 bytes")) as usize;
    len <= MAX_RECORD
        && tail.len() - HEADER < len
        && !whole_payload(tail)
        && json_prefix(&tail[HEADER..])
}

/// Whether `payload` is what a write cut short leaves of a record: JSON that ends early
/// (zeros a file system may show past the written bytes aside), not JSON that is whole or
/// wrong.
fn json_prefix(payload: &[u8]) -> bool {
    let end = payload.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1);
    match serde_json::from_slice::<serde::de::IgnoredAny>(&payload[..end]) {
        Ok(_) => false,
        Err(e) => e.classify() == serde_json::error::Category::Eof,
    }
}

/// Whether `tail`'s bytes after its header hold a whole record, whatever its length field
/// says: they pass the header's checksum, or parse as one record.
fn whole_payload(tail: &[u8]) -> bool {
    let Some(payload) = tail.get(HEADER..) else {
        return false;
    };
    let crc = u32::from_le_bytes(tail[4..8].try_into().expect("4 bytes"));
    payload.starts_with(PAYLOAD_PREFIX)
        && (crc32fast::hash(payload) == crc || serde_json::from_slice::<Entry>(payload).is_ok())
}

/// The last frame of `bytes`, from `at` to the end, when only its length field is wrong: its
/// payload passes its checksum and parses. Recovery keeps such a record.
fn relengthed(bytes: &[u8], at: usize) -> Option<Entry> {
    let tail = &bytes[at..];
    let payload = tail.get(HEADER..)?;
    let crc = u32::from_le_bytes(tail[4..8].try_into().expect("4 bytes"));
    if !payload.starts_with(PAYLOAD_PREFIX) || crc32fast::hash(payload) != crc {
        return None;
    }
    serde_json::from_slice(payload).ok()
}
