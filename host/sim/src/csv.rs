//! The per-job CSV: `id,submit,start,end,procs,wait,bsld`, one row per job in end-time order.

use std::io::{self, Write};

use crate::record::JobRecord;
use crate::replay::ReplayObserver;

/// The CSV header line.
pub const HEADER: &str = "id,submit,start,end,procs,wait,bsld";

/// Streams job records as CSV rows while the replay runs.
pub struct CsvWriter<W: Write> {
    out: W,
}

impl<W: Write> CsvWriter<W> {
    /// Writes the header to `out`.
    pub fn new(mut out: W) -> io::Result<Self> {
        writeln!(out, "{HEADER}")?;
        Ok(CsvWriter { out })
    }

    /// Writes one row; the slowdown has four decimals so the bytes never depend on float printing.
    pub fn write(&mut self, r: &JobRecord) -> io::Result<()> {
        writeln!(
            self.out,
            "{},{},{},{},{},{},{:.4}",
            r.id,
            r.submit,
            r.start,
            r.end,
            r.procs,
            r.wait(),
            r.bounded_slowdown()
        )
    }

    /// Flushes and returns the underlying writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

impl<W: Write> ReplayObserver for CsvWriter<W> {
    fn job_finished(&mut self, record: &JobRecord) -> io::Result<()> {
        self.write(record)
    }
}
