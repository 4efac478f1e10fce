//! The report folder: SVG plots (plotters) and a short markdown summary of one or more replays.

pub mod chart;
mod difference;
mod time_axis;

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use crate::metrics::Metrics;
use crate::replay::ReplayOutput;
use chart::{Labels, Series};
pub use difference::{WaitDelta, difference_chart};
pub use time_axis::{TimeAxis, duration_label};

/// File names inside a report folder.
pub const UTILIZATION_SVG: &str = "utilization.svg";
/// Queue length over time.
pub const QUEUE_SVG: &str = "queue.svg";
/// Wait-time distribution, cumulative.
pub const WAITS_SVG: &str = "waits.svg";
/// In a comparison: the mean wait difference by submission time.
pub const DIFFERENCE_SVG: &str = "difference.svg";
/// The markdown summary of a single run.
pub const SUMMARY_MD: &str = "summary.md";

/// Writes the three plots and `summary.md` for one replay into `dir` (created if missing).
///
/// Everything written depends only on the inputs: the wall-clock figures are left out so that two
/// runs produce byte-identical folders.
pub fn write_report(dir: &Path, run: &ReplayOutput, trace: &str) -> io::Result<()> {
    write_plots(dir, &[run])?;
    std::fs::write(dir.join(SUMMARY_MD), summary(run, trace))
}

/// Writes the plots with one series per run, overlaid, into `dir`.
pub fn write_plots(dir: &Path, runs: &[&ReplayOutput]) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join(UTILIZATION_SVG), utilization_chart(runs)?)?;
    std::fs::write(dir.join(QUEUE_SVG), queue_chart(runs)?)?;
    std::fs::write(dir.join(WAITS_SVG), waits_chart(runs)?)
}

/// Utilization (busy processors / machine size) per time bucket.
pub fn utilization_chart(runs: &[&ReplayOutput]) -> io::Result<String> {
    let series = runs
        .iter()
        .map(|run| {
            let procs = f64::from(run.metrics.procs.max(1));
            run.timeline
                .busy
                .averages()
                .into_iter()
                .map(|(t, busy)| (t - run.timeline.origin(), busy / procs))
                .collect()
        })
        .collect();
    let title = format!(
        "Utilization ({} buckets)",
        duration_label(bucket_width(runs, |r| r.timeline.busy.width()))
    );
    over_time(runs, series, &title, "utilization", Some(1.0))
}

/// Average number of waiting jobs per time bucket.
pub fn queue_chart(runs: &[&ReplayOutput]) -> io::Result<String> {
    let series = runs
        .iter()
        .map(|run| {
            run.timeline
                .queued
                .averages()
                .into_iter()
                .map(|(t, queued)| (t - run.timeline.origin(), queued))
                .collect()
        })
        .collect();
    let title = format!(
        "Queue length ({} buckets)",
        duration_label(bucket_width(runs, |r| r.timeline.queued.width()))
    );
    over_time(runs, series, &title, "jobs waiting", None)
}

/// The share of jobs that waited less than a duration, on a logarithmic duration axis: the
/// power-of-two histogram summed up, one line per run.
pub fn waits_chart(runs: &[&ReplayOutput]) -> io::Result<String> {
    let labels: Vec<String> = runs.iter().map(|r| r.label()).collect();
    let lines: Vec<Series<'_>> = runs
        .iter()
        .zip(&labels)
        .map(|(run, name)| {
            let bins = run.timeline.waits.bins();
            let total = bins.iter().map(|&(_, count)| count).sum::<u64>().max(1) as f64;
            let mut below = 0;
            let points = bins
                .iter()
                .enumerate()
                .map(|(bin, &(_, count))| {
                    below += count;
                    // Bin k holds waits below 2^k seconds (bin 0: no wait at all, below 1 s).
                    ((1u64 << bin) as f64, below as f64 * 100.0 / total)
                })
                .collect();
            Series { name, points }
        })
        .collect();
    let x_max = lines
        .iter()
        .filter_map(|line| line.points.last())
        .map(|&(x, _)| x)
        .fold(2.0, f64::max);
    let labels = Labels {
        title: "Wait-time distribution (cumulative)",
        y: "jobs that waited less",
    };
    chart::cumulative_chart(&labels, "wait (logarithmic)", &lines, x_max)
}

/// One line per run over a time axis fitted to the latest bucket; `y_max` fixes the top, else it
/// is the data maximum with some headroom.
fn over_time(
    runs: &[&ReplayOutput],
    series: Vec<Vec<(i64, f64)>>,
    title: &str,
    y_title: &str,
    y_max: Option<f64>,
) -> io::Result<String> {
    let span = series.iter().flatten().map(|&(t, _)| t).max().unwrap_or(0);
    let axis = TimeAxis::fitted(span);
    let labels: Vec<String> = runs.iter().map(|r| r.label()).collect();
    let lines: Vec<Series<'_>> = series
        .iter()
        .zip(&labels)
        .map(|(points, name)| Series {
            name,
            points: points.iter().map(|&(t, v)| (axis.at(t), v)).collect(),
        })
        .collect();
    let y_max = y_max.unwrap_or_else(|| {
        let top = series.iter().flatten().map(|&(_, v)| v).fold(0.0, f64::max);
        if top > 0.0 { top * 1.05 } else { 1.0 }
    });
    let labels = Labels { title, y: y_title };
    chart::time_chart(&labels, axis, &lines, y_max)
}

/// The single-run summary in markdown.
pub fn summary(run: &ReplayOutput, trace: &str) -> String {
    let m = &run.metrics;
    let mut out = String::new();
    let _ = writeln!(out, "# Replay of `{trace}`\n");
    let _ = writeln!(
        out,
        "{} jobs on {} processors with `{}` and `{}`; {} dropped ({} larger than the machine), {} killed at their requested time.\n",
        m.jobs, m.procs, m.scheduler, m.runtime, m.dropped, m.dropped_oversize, m.killed
    );
    let _ = writeln!(out, "| metric | value |\n|---|---:|");
    for (name, value) in metric_rows(m) {
        let _ = writeln!(out, "| {name} | {value} |");
    }
    let _ = writeln!(
        out,
        "\nPlots: [utilization]({UTILIZATION_SVG}), [queue length]({QUEUE_SVG}), [wait distribution]({WAITS_SVG}).\n\
         Bounded slowdown is max(1, (wait + run) / max(run, 10 s)); utilization is Σ run × procs / (procs × makespan), \
         with the makespan from the first submission to the last end."
    );
    out
}

/// The deterministic metrics as (name, formatted value) rows.
pub fn metric_rows(m: &Metrics) -> Vec<(&'static str, String)> {
    vec![
        ("jobs", m.jobs.to_string()),
        ("dropped", m.dropped.to_string()),
        ("killed at limit", m.killed.to_string()),
        ("peak jobs in flight", m.peak_in_flight.to_string()),
        ("avg wait (s)", format!("{:.1}", m.avg_wait_s)),
        ("max wait (s)", m.max_wait_s.to_string()),
        ("avg bounded slowdown", format!("{:.2}", m.avg_bsld)),
        ("utilization", format!("{:.4}", m.utilization)),
        ("makespan (s)", m.makespan_s.to_string()),
    ]
}

fn bucket_width(runs: &[&ReplayOutput], width: impl Fn(&ReplayOutput) -> i64) -> i64 {
    runs.iter().map(|r| width(r)).max().unwrap_or(0)
}
