//! Snapshots of the image: written to a temporary file, fsynced, renamed over the old one and the
//! directory fsynced, so a crash leaves either the old snapshot or the new one, never half of one.
//!
//! The file is a one-line JSON header (`{"version":1,"crc":…,"len":…}`) and the image as JSON;
//! the checksum covers the image's bytes exactly as written.

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::image::Image;

/// The header line of a snapshot file.
#[derive(Debug, Serialize, Deserialize)]
struct Header {
    version: u32,
    crc: u32,
    len: usize,
}

/// The current snapshot format.
pub const VERSION: u32 = 1;

/// Writes `image` to `path` atomically.
pub fn write(path: &Path, image: &Image) -> Result<(), StoreError> {
    let io = |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    };
    let body = serde_json::to_vec(image).expect("the image always serializes");
    let header = Header {
        version: VERSION,
        crc: crc32fast::hash(&body),
        len: body.len(),
    };
    let tmp = path.with_extension("tmp");
    {
        let mut f = File::create(&tmp).map_err(io)?;
        serde_json::to_writer(&mut f, &header).map_err(|e| io(e.into()))?;
        f.write_all(b"\n").map_err(io)?;
        f.write_all(&body).map_err(io)?;
        f.sync_all().map_err(io)?;
    }
    fs::rename(&tmp, path).map_err(io)?;
    if let Some(dir) = path.parent() {
        File::open(dir).and_then(|d| d.sync_all()).map_err(io)?;
    }
    Ok(())
}

/// Reads the snapshot at `path`; `None` if there is none.
pub fn read(path: &Path) -> Result<Option<Image>, StoreError> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(StoreError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let corrupt = |message: String| StoreError::Corrupt {
        path: path.to_path_buf(),
        offset: 0,
        message,
    };
    let nl = bytes
        .iter()
        .position(|b| *b == b'\n')
        .ok_or_else(|| corrupt("no header line".into()))?;
    let header: Header =
        serde_json::from_slice(&bytes[..nl]).map_err(|e| corrupt(format!("header: {e}")))?;
    if header.version != VERSION {
        return Err(corrupt(format!(
            "snapshot version {} (this daemon reads {VERSION})",
            header.version
        )));
    }
    let body = &bytes[nl + 1..];
    if body.len() != header.len || crc32fast::hash(body) != header.crc {
        return Err(corrupt("length or checksum mismatch".into()));
    }
    let image = serde_json::from_slice(body).map_err(|e| corrupt(e.to_string()))?;
    Ok(Some(image))
}
