//! Comparing two replays of the same trace: metrics side by side, the jobs that moved most, overlaid
//! plots and a plot of their wait difference.

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use crate::job::Time;
use crate::metrics::Metrics;
use crate::record::JobRecord;
use crate::replay::ReplayOutput;
use crate::report::{self, WaitDelta, metric_rows};

/// The comparison's markdown file inside its folder.
pub const COMPARISON_MD: &str = "comparison.md";

/// One job whose start time differs between the two runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartDifference {
    /// The job number from the trace.
    pub id: u64,
    /// Submission time.
    pub submit: Time,
    /// Start in run A.
    pub start_a: Time,
    /// Start in run B.
    pub start_b: Time,
}

impl StartDifference {
    /// `start_b − start_a`: positive when B started the job later.
    pub fn delta(&self) -> Time {
        self.start_b - self.start_a
    }
}

/// Two runs' metrics and the jobs whose starts differ most.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Label of run A.
    pub label_a: String,
    /// Label of run B.
    pub label_b: String,
    /// Metrics of run A.
    pub a: Metrics,
    /// Metrics of run B.
    pub b: Metrics,
    /// Jobs by decreasing |start_b − start_a|, ties by submission order; only jobs that moved.
    pub moved: Vec<StartDifference>,
    /// How many jobs started at a different time.
    pub moved_total: u64,
}

/// Why two runs cannot be compared job by job.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompareError {
    /// A run was made without `keep_records`.
    #[error("run `{0}` kept no per-job records; replay with keep_records to compare")]
    NoRecords(String),
    /// The runs did not replay the same jobs.
    #[error(
        "the runs replayed different jobs ({a} vs {b}); compare runs of the same trace and machine"
    )]
    DifferentJobs {
        /// Jobs in run A.
        a: usize,
        /// Jobs in run B.
        b: usize,
    },
}

/// Compares two replays of the same trace, keeping the `top` jobs whose start moved most.
///
/// Jobs are matched by submission order, which is identical for the same trace and machine size
/// (job numbers need not be unique).
pub fn compare(a: &ReplayOutput, b: &ReplayOutput, top: usize) -> Result<Comparison, CompareError> {
    let mut moved: Vec<(u64, StartDifference)> = matched(a, b)?
        .filter(|(ra, rb)| ra.start != rb.start)
        .map(|(ra, rb)| {
            (
                ra.seq,
                StartDifference {
                    id: ra.id,
                    submit: ra.submit,
                    start_a: ra.start,
                    start_b: rb.start,
                },
            )
        })
        .collect();
    let moved_total = moved.len() as u64;
    moved.sort_by_key(|&(seq, d)| (std::cmp::Reverse(d.delta().abs()), seq));
    moved.truncate(top);
    Ok(Comparison {
        label_a: a.label(),
        label_b: b.label(),
        a: a.metrics.clone(),
        b: b.metrics.clone(),
        moved: moved.into_iter().map(|(_, d)| d).collect(),
        moved_total,
    })
}

/// Each job's records in run A and run B, in submission order, after checking that both runs
/// kept their records and replayed the same jobs.
fn matched(
    a: &ReplayOutput,
    b: &ReplayOutput,
) -> Result<impl Iterator<Item = (JobRecord, JobRecord)>, CompareError> {
    for run in [a, b] {
        if run.records.is_empty() && run.metrics.jobs > 0 {
            return Err(CompareError::NoRecords(run.label()));
        }
    }
    let (starts_a, starts_b) = (by_seq(&a.records), by_seq(&b.records));
    let different = CompareError::DifferentJobs {
        a: starts_a.len(),
        b: starts_b.len(),
    };
    if starts_a.len() != starts_b.len()
        || starts_a
            .iter()
            .zip(&starts_b)
            .any(|(ra, rb)| ra.seq != rb.seq || ra.id != rb.id)
    {
        return Err(different);
    }
    Ok(starts_a.into_iter().zip(starts_b))
}

fn by_seq(records: &[JobRecord]) -> Vec<JobRecord> {
    let mut sorted = records.to_vec();
    sorted.sort_by_key(|r| r.seq);
    sorted
}

impl Comparison {
    /// The comparison as markdown: a metrics table and a table of the jobs that moved most.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# A: {} vs B: {}\n", self.label_a, self.label_b);
        let _ = writeln!(out, "| metric | A | B | B − A |\n|---|---:|---:|---:|");
        let rows_b = metric_rows(&self.b);
        for ((name, va), (_, vb)) in metric_rows(&self.a).into_iter().zip(rows_b) {
            let diff = match (va.parse::<f64>(), vb.parse::<f64>()) {
                (Ok(x), Ok(y)) => format!("{:+.4}", y - x)
                    .trim_end_matches('0')
                    .trim_end_matches('.')
                    .to_string(),
                _ => String::new(),
            };
            let _ = writeln!(out, "| {name} | {va} | {vb} | {diff} |");
        }
        let _ = writeln!(
            out,
            "\n{} of {} jobs started at a different time. The {} that moved most:\n",
            self.moved_total,
            self.a.jobs,
            self.moved.len()
        );
        let _ = writeln!(
            out,
            "| job | submit | start A | start B | B − A (s) |\n|---:|---:|---:|---:|---:|"
        );
        for d in &self.moved {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {:+} |",
                d.id,
                d.submit,
                d.start_a,
                d.start_b,
                d.delta()
            );
        }
        let _ = writeln!(
            out,
            "\nOverlaid plots: [utilization]({}), [queue length]({}), [wait distribution]({}); \
             [wait difference B − A by submission time]({}).",
            report::UTILIZATION_SVG,
            report::QUEUE_SVG,
            report::WAITS_SVG,
            report::DIFFERENCE_SVG
        );
        out
    }

    /// Writes `comparison.md`, the overlaid plots of `a` and `b` and their difference plot into
    /// `dir`.
    pub fn write(&self, dir: &Path, a: &ReplayOutput, b: &ReplayOutput) -> io::Result<()> {
        report::write_plots(dir, &[a, b])?;
        let deltas: Vec<WaitDelta> = matched(a, b)
            .map_err(io::Error::other)?
            .map(|(ra, rb)| WaitDelta {
                submit: ra.submit,
                delta: rb.wait() - ra.wait(),
            })
            .collect();
        let origin = a.timeline.origin();
        std::fs::write(
            dir.join(report::DIFFERENCE_SVG),
            report::difference_chart(&self.label_a, &self.label_b, origin, &deltas)?,
        )?;
        std::fs::write(dir.join(COMPARISON_MD), self.to_markdown())
    }
}
