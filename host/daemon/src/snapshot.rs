//! Snapshots of the image: written to a temporary file, fsynced, renamed over the old one and the
//! directory fsynced, so a crash leaves either the old snapshot or the new one, never half of one.
//!
//! The file is 0600 (it holds every submitter's environment). A write that fails (a full disk)
//! removes its temporary file and leaves the old snapshot and the journal as they were.
//!
//! The file is a one-line JSON header (`{"version":1,"crc":…,"len":…}`) and the image as JSON;
//! the checksum covers the image's bytes exactly as written.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
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
    let written = write_file(&tmp, &header, &body).and_then(|()| fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(io(e));
    }
    if let Some(dir) = path.parent() {
        File::open(dir).and_then(|d| d.sync_all()).map_err(io)?;
    }
    Ok(())
}

/// Writes header and body to a new private file at `tmp` and syncs it.
fn write_file(tmp: &Path, header: &Header, body: &[u8]) -> std::io::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(tmp)?;
    serde_json::to_writer(&mut f, header)?;
    f.write_all(b"\n")?;
    f.write_all(body)?;
    f.sync_all()
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
