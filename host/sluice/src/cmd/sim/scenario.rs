//! `sluice sim --log`: a scenario replay — jobs and timed actions on a cluster file, every
//! state change and power program call written as JSON lines, and what power saving cost.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use anyhow::Context;
use sluice_cluster::Cluster;
use sluice_sim::scenario::{Boot, PowerMetrics, Scenario, ScenarioOutcome, run_scenario};

use super::Args;
use super::bundle::{self, BundleMode};

/// Runs the scenario in `trace` on `--config`, logging to `log`, and prints a summary.
pub fn run(args: &Args, trace: &Path, log: &Path) -> anyhow::Result<()> {
    let config = args
        .config
        .as_deref()
        .context("--log needs --config FILE (or --compare A B), the cluster to replay on")?;
    let outcome = replay(args, trace, config, log)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&outcome)?);
    } else {
        print!("{}", summary(&outcome, log));
    }
    Ok(())
}

/// Replays `trace` under two cluster files and prints their power figures side by side.
pub fn compare(args: &Args, trace: &Path, log: &Path, configs: [&Path; 2]) -> anyhow::Result<()> {
    let a = replay(args, trace, configs[0], &with_suffix(log, "a"))?;
    let b = replay(args, trace, configs[1], &with_suffix(log, "b"))?;
    if args.json {
        let value = serde_json::json!({ "a": a, "b": b });
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(());
    }
    let name = |p: &Path| p.display().to_string();
    println!(
        "| | A: {} | B: {} | B − A |",
        name(configs[0]),
        name(configs[1])
    );
    println!("|---|---:|---:|---:|");
    for (label, x, y) in rows(&a.power, &b.power) {
        println!("| {label} | {x:.3} | {y:.3} | {:+.3} |", y - x);
    }
    Ok(())
}

/// One replay, its log written to `log`.
fn replay(args: &Args, trace: &Path, config: &Path, log: &Path) -> anyhow::Result<ScenarioOutcome> {
    let boot: Boot = args
        .boot_time
        .parse()
        .map_err(|e: String| anyhow::anyhow!("--boot-time: {e}"))?;
    let cluster = Cluster::load(config)?;
    let policies = bundle::policies(&cluster, BundleMode::parse(&args.bundle)?)?;
    let scenario = Scenario::open(trace)?;
    let file = File::create(log).with_context(|| format!("cannot create {}", log.display()))?;
    let (outcome, _) = run_scenario(cluster, policies, scenario, boot, BufWriter::new(file))
        .with_context(|| format!("cannot write {}", log.display()))?;
    Ok(outcome)
}

/// `log.jsonl` → `log.a.jsonl`.
fn with_suffix(log: &Path, suffix: &str) -> PathBuf {
    let stem = log
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let ext = log
        .extension()
        .map_or_else(|| "jsonl".to_string(), |e| e.to_string_lossy().into_owned());
    log.with_file_name(format!("{stem}.{suffix}.{ext}"))
}

/// The figures a comparison lists, as (label, A, B).
fn rows(a: &PowerMetrics, b: &PowerMetrics) -> Vec<(&'static str, f64, f64)> {
    let mut rows = vec![
        ("busy node-h", a.busy_node_h, b.busy_node_h),
        ("idle node-h", a.idle_node_h, b.idle_node_h),
        ("booting node-h", a.booting_node_h, b.booting_node_h),
        (
            "powering-down node-h",
            a.powering_down_node_h,
            b.powering_down_node_h,
        ),
        ("off node-h", a.off_node_h, b.off_node_h),
        ("boots", a.boots as f64, b.boots as f64),
        (
            "boot delay (s, summed over jobs)",
            a.boot_delay_s as f64,
            b.boot_delay_s as f64,
        ),
        ("average wait (s)", a.avg_wait_s, b.avg_wait_s),
        ("requeues", a.requeues as f64, b.requeues as f64),
    ];
    if let (Some(x), Some(y)) = (a.energy_kwh, b.energy_kwh) {
        rows.push(("energy (kWh)", x, y));
    }
    if let (Some(x), Some(y)) = (a.peak_kw, b.peak_kw) {
        rows.push(("peak draw (kW)", x, y));
    }
    rows
}

/// The text summary of one replay.
fn summary(o: &ScenarioOutcome, log: &Path) -> String {
    let p = &o.power;
    let energy = match (p.energy_kwh, p.peak_kw) {
        (Some(e), Some(peak)) => format!(", {e:.3} kWh, peak {peak:.3} kW"),
        _ => String::new(),
    };
    format!(
        "replayed {}s: {} jobs ended, {} left, {} refused; programs: {} suspend, {} resume, {} resume-fail; {} log lines in {}\n\
         node-hours: {:.3} busy, {:.3} idle, {:.3} booting, {:.3} powering down, {:.3} off; {} boots, {} s of boot delay, {} requeues, average wait {:.1} s{energy}\n",
        o.end,
        o.jobs_ended,
        o.jobs_left.len(),
        o.refused,
        o.calls.0,
        o.calls.1,
        o.calls.2,
        o.log_lines,
        log.display(),
        p.busy_node_h,
        p.idle_node_h,
        p.booting_node_h,
        p.powering_down_node_h,
        p.off_node_h,
        p.boots,
        p.boot_delay_s,
        p.requeues,
        p.avg_wait_s,
    )
}
