//! Opening a workload file, transparently gunzipping it when it starts with the gzip magic bytes.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use flate2::read::MultiGzDecoder;

use crate::error::ReadError;

/// A buffered reader over a plain or gzipped file.
pub type InputReader = Box<dyn BufRead + Send>;

/// Opens `path` for line reading; gzip is detected by content, not by the file name.
pub fn open(path: &Path) -> Result<InputReader, ReadError> {
    let io_error = |source| ReadError::Io {
        file: path.display().to_string(),
        source,
    };
    let file = File::open(path).map_err(io_error)?;
    let mut buffered = BufReader::with_capacity(1 << 16, file);
    let gzipped = buffered
        .fill_buf()
        .map_err(io_error)?
        .starts_with(&[0x1f, 0x8b]);
    if gzipped {
        let decoder: Box<dyn Read + Send> = Box::new(MultiGzDecoder::new(buffered));
        Ok(Box::new(BufReader::with_capacity(1 << 16, decoder)))
    } else {
        Ok(Box::new(buffered))
    }
}
