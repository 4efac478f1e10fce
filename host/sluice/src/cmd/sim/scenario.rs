//! `sluice sim --log`: a scenario replay — jobs and timed actions on a cluster file, every
//! state change and power program call written as JSON lines.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use anyhow::Context;
use sluice_cluster::Cluster;
use sluice_sim::scenario::{Boot, Scenario, run_scenario};

use super::Args;
use super::bundle::{self, BundleMode};

/// Runs the scenario in `trace` on `--config`, logging to `log`, and prints a summary.
pub fn run(args: &Args, trace: &Path, log: &Path) -> anyhow::Result<()> {
    let config = args
        .config
        .as_deref()
        .context("--log needs --config FILE, the cluster to replay on")?;
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
    let summary = serde_json::json!({
        "end_s": outcome.end,
        "jobs_ended": outcome.jobs_ended,
        "jobs_left": outcome.jobs_left,
        "refused": outcome.refused,
        "suspend_calls": outcome.calls.0,
        "resume_calls": outcome.calls.1,
        "resume_fail_calls": outcome.calls.2,
        "log_lines": outcome.log_lines,
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        println!(
            "replayed {}s: {} jobs ended, {} left, {} refused; programs: {} suspend, {} resume, {} resume-fail; {} log lines in {}",
            outcome.end,
            outcome.jobs_ended,
            outcome.jobs_left.len(),
            outcome.refused,
            outcome.calls.0,
            outcome.calls.1,
            outcome.calls.2,
            outcome.log_lines,
            log.display()
        );
    }
    Ok(())
}
