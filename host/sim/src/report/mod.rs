//! The report folder: SVG plots and a short markdown summary of one or more replays.

pub mod svg;

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use crate::histogram::lower_bound;
use crate::metrics::Metrics;
use crate::replay::ReplayOutput;
use svg::{Bars, Labels, Line};

/// File names inside a report folder.
pub const UTILIZATION_SVG: &str = "utilization.svg";
/// Queue length over time.
pub const QUEUE_SVG: &str = "queue.svg";
/// Wait-time distribution.
pub const WAITS_SVG: &str = "waits.svg";
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
    std::fs::write(dir.join(UTILIZATION_SVG), utilization_chart(runs))?;
    std::fs::write(dir.join(QUEUE_SVG), queue_chart(runs))?;
    std::fs::write(dir.join(WAITS_SVG), waits_chart(runs))
}

/// Utilization (busy processors / machine size) per time bucket, x in days since the first submission.
pub fn utilization_chart(runs: &[&ReplayOutput]) -> String {
    let labels: Vec<String> = runs.iter().map(|r| r.label()).collect();
    let lines: Vec<Line<'_>> = runs
        .iter()
        .zip(&labels)
        .map(|(run, name)| Line {
            name,
            points: in_days(&run.timeline.busy.averages(), run.timeline.origin())
                .map(|(x, busy)| (x, busy / f64::from(run.metrics.procs.max(1))))
                .collect(),
        })
        .collect();
    let title = format!(
        "Utilization ({}-second buckets)",
        bucket_width(runs, |r| r.timeline.busy.width())
    );
    let labels = Labels {
        title: &title,
        x: "days since first submission",
        y: "utilization",
    };
    svg::line_chart(&labels, &lines, Some(1.0))
}

/// Average number of waiting jobs per time bucket.
pub fn queue_chart(runs: &[&ReplayOutput]) -> String {
    let labels: Vec<String> = runs.iter().map(|r| r.label()).collect();
    let lines: Vec<Line<'_>> = runs
        .iter()
        .zip(&labels)
        .map(|(run, name)| Line {
            name,
            points: in_days(&run.timeline.queued.averages(), run.timeline.origin()).collect(),
        })
        .collect();
    let title = format!(
        "Queue length ({}-second buckets)",
        bucket_width(runs, |r| r.timeline.queued.width())
    );
    let labels = Labels {
        title: &title,
        x: "days since first submission",
        y: "jobs waiting",
    };
    svg::line_chart(&labels, &lines, None)
}

/// Wait-time histogram with power-of-two bins, one bar series per run.
pub fn waits_chart(runs: &[&ReplayOutput]) -> String {
    let bins = runs
        .iter()
        .map(|r| r.timeline.waits.bins().len())
        .max()
        .unwrap_or(0)
        .max(1);
    let categories: Vec<String> = (0..bins).map(|b| duration_label(lower_bound(b))).collect();
    let labels: Vec<String> = runs.iter().map(|r| r.label()).collect();
    let series: Vec<Bars<'_>> = runs
        .iter()
        .zip(&labels)
        .map(|(run, name)| {
            let counts = run.timeline.waits.bins();
            Bars {
                name,
                values: (0..bins)
                    .map(|b| counts.get(b).map_or(0.0, |&(_, c)| c as f64))
                    .collect(),
            }
        })
        .collect();
    let labels = Labels {
        title: "Wait-time distribution",
        x: "wait at least (power-of-two bins)",
        y: "jobs",
    };
    svg::bar_chart(&labels, &categories, &series)
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

fn in_days(points: &[(i64, f64)], origin: i64) -> impl Iterator<Item = (f64, f64)> + '_ {
    points
        .iter()
        .map(move |&(t, v)| ((t - origin) as f64 / 86_400.0, v))
}

fn bucket_width(runs: &[&ReplayOutput], width: impl Fn(&ReplayOutput) -> i64) -> i64 {
    runs.iter().map(|r| width(r)).max().unwrap_or(0)
}

/// `0 s`, `45 s`, `8 min`, `4.6 h`, `2.1 d`.
pub fn duration_label(seconds: i64) -> String {
    match seconds {
        s if s < 60 => format!("{s} s"),
        s if s < 3_600 => format!("{} min", s / 60),
        s if s < 86_400 => format!("{:.1} h", s as f64 / 3_600.0),
        s => format!("{:.1} d", s as f64 / 86_400.0),
    }
}
