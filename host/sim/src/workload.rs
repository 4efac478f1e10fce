//! Workload sources: any iterator of jobs that can also say how many lines it dropped.

use std::path::Path;

use crate::error::ReadError;
use crate::input::InputReader;
use crate::job::WorkloadJob;
use crate::jsonl::JsonLinesReader;
use crate::swf::{SwfHeader, SwfReader};

/// A stream of jobs in non-decreasing submit order.
pub trait JobSource: Iterator<Item = Result<WorkloadJob, ReadError>> {
    /// Jobs skipped by the reader so far (all of them once the iterator is exhausted).
    fn dropped(&self) -> u64 {
        0
    }

    /// The machine size the source declares (SWF `MaxProcs`, else `MaxNodes`), if any.
    fn machine_procs(&self) -> Option<u64> {
        None
    }

    /// How many jobs the source expects to yield, for progress display only.
    fn expected_jobs(&self) -> Option<u64> {
        None
    }
}

impl<R: std::io::BufRead> JobSource for SwfReader<R> {
    fn dropped(&self) -> u64 {
        SwfReader::dropped(self).total()
    }
    fn machine_procs(&self) -> Option<u64> {
        self.header().machine_procs()
    }
    fn expected_jobs(&self) -> Option<u64> {
        self.header().expected_records()
    }
}

impl<R: std::io::BufRead> JobSource for JsonLinesReader<R> {}

/// A trace file opened by [`Workload::open`]: SWF or JSON lines, plain or gzipped.
pub enum Workload {
    /// A Standard Workload Format trace.
    Swf(SwfReader<InputReader>),
    /// A JSON-lines workload.
    JsonLines(JsonLinesReader<InputReader>),
}

impl Workload {
    /// Opens `path`; `.jsonl`, `.ndjson` and `.json` (optionally `.gz`) are JSON lines, anything
    /// else is SWF.
    pub fn open(path: &Path) -> Result<Self, ReadError> {
        let name = path.to_string_lossy().to_ascii_lowercase();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        if [".jsonl", ".ndjson", ".json"]
            .iter()
            .any(|ext| name.ends_with(ext))
        {
            Ok(Workload::JsonLines(JsonLinesReader::open(path)?))
        } else {
            Ok(Workload::Swf(SwfReader::open(path)?))
        }
    }

    /// The SWF header, for SWF traces.
    pub fn swf_header(&self) -> Option<&SwfHeader> {
        match self {
            Workload::Swf(reader) => Some(reader.header()),
            Workload::JsonLines(_) => None,
        }
    }
}

impl Iterator for Workload {
    type Item = Result<WorkloadJob, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Workload::Swf(reader) => reader.next(),
            Workload::JsonLines(reader) => reader.next(),
        }
    }
}

impl JobSource for Workload {
    fn dropped(&self) -> u64 {
        match self {
            Workload::Swf(reader) => JobSource::dropped(reader),
            Workload::JsonLines(reader) => reader.dropped(),
        }
    }
    fn machine_procs(&self) -> Option<u64> {
        match self {
            Workload::Swf(reader) => reader.machine_procs(),
            Workload::JsonLines(reader) => reader.machine_procs(),
        }
    }
    fn expected_jobs(&self) -> Option<u64> {
        match self {
            Workload::Swf(reader) => reader.expected_jobs(),
            Workload::JsonLines(reader) => reader.expected_jobs(),
        }
    }
}

/// Jobs already in memory (benchmarks, tests), with the reader's drop count carried along.
#[derive(Debug, Clone)]
pub struct MemoryWorkload<'a> {
    jobs: std::slice::Iter<'a, WorkloadJob>,
    dropped: u64,
    procs: Option<u64>,
}

impl<'a> MemoryWorkload<'a> {
    /// Streams `jobs` (which must be in non-decreasing submit order).
    pub fn new(jobs: &'a [WorkloadJob], dropped: u64, procs: Option<u64>) -> Self {
        MemoryWorkload {
            jobs: jobs.iter(),
            dropped,
            procs,
        }
    }
}

impl Iterator for MemoryWorkload<'_> {
    type Item = Result<WorkloadJob, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.jobs.next().cloned().map(Ok)
    }
}

impl JobSource for MemoryWorkload<'_> {
    fn dropped(&self) -> u64 {
        self.dropped
    }
    fn machine_procs(&self) -> Option<u64> {
        self.procs
    }
    fn expected_jobs(&self) -> Option<u64> {
        Some(self.jobs.len() as u64)
    }
}
