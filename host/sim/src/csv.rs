//! The per-job CSV: `id,submit,start,end,procs,wait,bsld`, one row per job in end-time order.

use std::io::{self, Write};

use serde::{Serialize, Serializer};

use crate::record::JobRecord;
use crate::replay::ReplayObserver;

/// The CSV header line.
pub const HEADER: &str = "id,submit,start,end,procs,wait,bsld";

/// One CSV row; its fields, in order, are the [`HEADER`] columns.
#[derive(Serialize)]
struct Row {
    id: u64,
    submit: i64,
    start: i64,
    end: i64,
    procs: u32,
    wait: i64,
    bsld: FourDecimals,
}

impl From<&JobRecord> for Row {
    fn from(r: &JobRecord) -> Self {
        Row {
            id: r.id,
            submit: r.submit,
            start: r.start,
            end: r.end,
            procs: r.procs,
            wait: r.wait(),
            bsld: FourDecimals(r.bounded_slowdown()),
        }
    }
}

/// A float written with four decimals, so the bytes never depend on shortest-float printing.
struct FourDecimals(f64);

impl Serialize for FourDecimals {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&format_args!("{:.4}", self.0))
    }
}

/// Streams job records as CSV rows while the replay runs.
pub struct CsvWriter<W: Write> {
    out: ::csv::Writer<W>,
}

impl<W: Write> CsvWriter<W> {
    /// Writes the header to `out`, also when no job follows.
    pub fn new(out: W) -> io::Result<Self> {
        let mut out = ::csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(out);
        out.write_record(HEADER.split(','))?;
        Ok(CsvWriter { out })
    }

    /// Writes one row.
    pub fn write(&mut self, record: &JobRecord) -> io::Result<()> {
        Ok(self.out.serialize(Row::from(record))?)
    }

    /// Flushes and returns the underlying writer.
    pub fn finish(self) -> io::Result<W> {
        self.out.into_inner().map_err(|e| e.into_error())
    }
}

impl<W: Write> ReplayObserver for CsvWriter<W> {
    fn job_finished(&mut self, record: &JobRecord) -> io::Result<()> {
        self.write(record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_follow_the_header_with_four_decimal_slowdowns() {
        let mut writer = CsvWriter::new(Vec::new()).unwrap();
        writer
            .write(&JobRecord {
                seq: 0,
                id: 7,
                submit: 10,
                start: 40,
                end: 70,
                procs: 4,
                killed: false,
            })
            .unwrap();
        let text = String::from_utf8(writer.finish().unwrap()).unwrap();
        assert_eq!(
            text,
            "id,submit,start,end,procs,wait,bsld\n7,10,40,70,4,30,2.0000\n"
        );
    }

    #[test]
    fn an_empty_replay_still_has_the_header() {
        let writer = CsvWriter::new(Vec::new()).unwrap();
        assert_eq!(writer.finish().unwrap(), format!("{HEADER}\n").into_bytes());
    }
}
