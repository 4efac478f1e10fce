//! Streaming SWF reader: parses the header up front, then yields one job per data line.

use std::io::BufRead;
use std::path::Path;

use super::header::SwfHeader;
use super::line::{FIELD_NAMES, LineError, parse_fields};
use crate::error::ReadError;
use crate::input;
use crate::job::{SwfFields, Time, WorkloadJob};

/// How many data lines were skipped, and why.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DropCounts {
    /// Field 4 (run time) was negative: the job never ran or the log lost it.
    pub negative_run_time: u64,
    /// Neither field 8 nor field 5 gave a positive processor count.
    pub no_processors: u64,
}

impl DropCounts {
    /// All dropped lines.
    pub fn total(&self) -> u64 {
        self.negative_run_time + self.no_processors
    }
}

/// An iterator over the jobs of an SWF trace that holds one line in memory at a time.
///
/// Mapping: processors = field 8 (requested) if positive, else field 5 (allocated); requested
/// time = field 9 if positive, else the run time (field 4); lines with a negative run time or no
/// processors are skipped and counted in [`SwfReader::dropped`]. Comment lines after the first data
/// line are ignored. Submit times must not decrease.
pub struct SwfReader<R> {
    input: R,
    file: String,
    header: SwfHeader,
    line_no: u64,
    buffer: String,
    /// The first data line, read while looking for the end of the header.
    pending: bool,
    last_submit: Time,
    dropped: DropCounts,
    failed: bool,
}

impl SwfReader<input::InputReader> {
    /// Opens a plain or gzipped SWF file and reads its header.
    pub fn open(path: &Path) -> Result<Self, ReadError> {
        SwfReader::new(input::open(path)?, path.display().to_string())
    }
}

impl<R: BufRead> SwfReader<R> {
    /// Reads the header from `input`; `file` names the source in error messages.
    pub fn new(input: R, file: impl Into<String>) -> Result<Self, ReadError> {
        let mut reader = SwfReader {
            input,
            file: file.into(),
            header: SwfHeader::default(),
            line_no: 0,
            buffer: String::new(),
            pending: false,
            last_submit: Time::MIN,
            dropped: DropCounts::default(),
            failed: false,
        };
        while reader.read_line()? {
            let line = reader.buffer.trim_start();
            if line.starts_with(';') {
                reader.header.push_line(line.trim_end());
            } else if !line.trim().is_empty() {
                reader.pending = true;
                break;
            }
        }
        Ok(reader)
    }

    /// The header comments read before the first job.
    pub fn header(&self) -> &SwfHeader {
        &self.header
    }

    /// The lines skipped so far (complete once the iterator is exhausted).
    pub fn dropped(&self) -> DropCounts {
        self.dropped
    }

    fn read_line(&mut self) -> Result<bool, ReadError> {
        self.buffer.clear();
        let read = self
            .input
            .read_line(&mut self.buffer)
            .map_err(|source| ReadError::Io {
                file: self.file.clone(),
                source,
            })?;
        self.line_no += 1;
        Ok(read > 0)
    }

    /// Turns the buffered data line into a job, `None` if it is dropped.
    fn parse_buffered(&mut self) -> Result<Option<WorkloadJob>, ReadError> {
        let f = parse_fields(&self.buffer).map_err(|err| match err {
            LineError::Count(found) => ReadError::FieldCount {
                file: self.file.clone(),
                line: self.line_no,
                found,
            },
            LineError::NotANumber { index, text } => ReadError::Field {
                file: self.file.clone(),
                line: self.line_no,
                field: format!("{} ({})", index + 1, FIELD_NAMES[index]),
                expected: "a number (-1 if unknown)",
                found: text.to_string(),
            },
        })?;
        let [
            id,
            submit,
            _wait,
            run_time,
            allocated,
            _cpu,
            _mem,
            requested,
            requested_time,
            ..,
        ] = f;
        if id < 0 {
            return Err(self.field_error(1, "a non-negative job number", id));
        }
        if submit < 0 {
            return Err(self.field_error(2, "a non-negative submit time", submit));
        }
        if submit < self.last_submit {
            return Err(ReadError::Unsorted {
                file: self.file.clone(),
                line: self.line_no,
                field: "2 (submit time)",
                previous: self.last_submit,
                found: submit,
            });
        }
        self.last_submit = submit;
        let procs = if requested > 0 { requested } else { allocated };
        if run_time < 0 {
            self.dropped.negative_run_time += 1;
            return Ok(None);
        }
        if procs <= 0 {
            self.dropped.no_processors += 1;
            return Ok(None);
        }
        let procs = u32::try_from(procs).map_err(|_| {
            self.field_error(
                if requested > 0 { 8 } else { 5 },
                "at most 2^32-1 processors",
                procs,
            )
        })?;
        Ok(Some(WorkloadJob {
            id: id as u64,
            submit,
            run_time,
            requested_time: if requested_time > 0 {
                requested_time
            } else {
                run_time
            },
            procs,
            swf: SwfFields {
                user: f[11],
                group: f[12],
                executable: f[13],
                queue: f[14],
                partition: f[15],
                preceding_job: f[16],
                think_time: f[17],
            },
            slurm: None,
        }))
    }

    fn field_error(&self, field: usize, expected: &'static str, found: i64) -> ReadError {
        ReadError::Field {
            file: self.file.clone(),
            line: self.line_no,
            field: format!("{field} ({})", FIELD_NAMES[field - 1]),
            expected,
            found: found.to_string(),
        }
    }

    fn next_job(&mut self) -> Result<Option<WorkloadJob>, ReadError> {
        loop {
            if self.pending {
                self.pending = false;
            } else if !self.read_line()? {
                return Ok(None);
            }
            let line = self.buffer.trim_start();
            if line.is_empty() || line.starts_with(';') {
                continue;
            }
            if let Some(job) = self.parse_buffered()? {
                return Ok(Some(job));
            }
        }
    }
}

impl<R: BufRead> Iterator for SwfReader<R> {
    type Item = Result<WorkloadJob, ReadError>;

    /// Yields the next kept job; after the first error it yields nothing more.
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let result = self.next_job().transpose();
        if matches!(result, Some(Err(_))) {
            self.failed = true;
        }
        result
    }
}
