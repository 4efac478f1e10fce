//! `sluice sim`: replay a workload trace on a virtual clock and report what the scheduler did.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use sluice_sim::compare::compare;
use sluice_sim::csv::CsvWriter;
use sluice_sim::progress::ProgressBar;
use sluice_sim::report::{self, metric_rows};
use sluice_sim::{
    JobSource, ReplayConfig, ReplayOutput, RuntimeMode, SchedulerKind, Workload, bench, replay,
};

/// How many moved jobs a comparison lists.
const COMPARE_TOP: usize = 20;

const ENGINE_NOT_BUILT: &str = "the engine-backed replay (--scheduler slurm, --compare A.toml B.toml) is not built yet: \
     it needs the Slurm-like engine and plugin bundles; use --scheduler fcfs, easy or conservative";

/// Arguments of `sluice sim`.
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    /// `sluice sim bench`: replay a trace repeatedly and report simulated jobs per second.
    #[command(subcommand)]
    pub command: Option<SimCommand>,
    /// Workload to replay: SWF (plain or .gz) or JSON lines (.jsonl, .ndjson, .json, optionally .gz).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Processors of the flat machine; overrides --config and the trace header (MaxProcs, else MaxNodes).
    #[arg(long, value_name = "N")]
    pub procs: Option<u32>,
    /// Scheduler: fcfs, easy (Mu'alem & Feitelson), conservative, or slurm (the full engine).
    #[arg(long, default_value = "easy", value_parser = ["fcfs", "easy", "conservative", "slurm"])]
    pub scheduler: String,
    /// kill-at-limit: a job ends at min(run time, requested time); run-to-completion: it runs its
    /// full recorded run time.
    #[arg(long, default_value = "kill-at-limit", value_parser = ["kill-at-limit", "run-to-completion"])]
    pub runtime: String,
    /// sluice cluster file; for the flat schedulers only its total CPU count is used.
    #[arg(long, value_name = "F")]
    pub config: Option<PathBuf>,
    /// Print the metrics as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Write one CSV row per job (id,submit,start,end,procs,wait,bsld), in end-time order.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write plots (SVG) and a summary into this folder; with --compare-scheduler, the comparison.
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Replay the same trace with this scheduler too and compare the two runs.
    #[arg(long, value_name = "OTHER", value_parser = ["fcfs", "easy", "conservative", "slurm"])]
    pub compare_scheduler: Option<String>,
    /// Replay the same trace under two plugin bundles and compare them (needs the engine).
    #[arg(long, num_args = 2, value_names = ["A.toml", "B.toml"])]
    pub compare: Option<Vec<PathBuf>>,
}

/// Subcommands of `sluice sim`.
#[derive(clap::Subcommand)]
pub enum SimCommand {
    /// Replay a trace with EASY, a naive EASY and FCFS and print jobs/s and the EASY speed-up.
    Bench(BenchArgs),
}

/// Arguments of `sluice sim bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// Trace to replay (read into memory once; reading is timed separately).
    #[arg(long, value_name = "FILE")]
    pub trace: PathBuf,
    /// Processors; default from the trace header.
    #[arg(long, value_name = "N")]
    pub procs: Option<u32>,
    /// Replays per scheduler; the fastest counts.
    #[arg(long, default_value_t = 20)]
    pub rounds: usize,
}

/// Runs `sluice sim`.
pub fn run(args: Args) -> anyhow::Result<()> {
    if let Some(SimCommand::Bench(bench_args)) = args.command {
        let report = bench::run(&bench_args.trace, bench_args.procs, bench_args.rounds)?;
        println!("{report}");
        return Ok(());
    }
    if args.compare.is_some()
        || args.scheduler == "slurm"
        || args.compare_scheduler.as_deref() == Some("slurm")
    {
        bail!(ENGINE_NOT_BUILT);
    }
    let trace = args
        .trace
        .as_deref()
        .context("--trace FILE is required (or use `sluice sim bench --trace FILE`)")?;
    let runtime: RuntimeMode = args.runtime.parse()?;
    let primary: SchedulerKind = args.scheduler.parse()?;
    let other: Option<SchedulerKind> = args
        .compare_scheduler
        .as_deref()
        .map(str::parse)
        .transpose()?;
    let keep_records = other.is_some();

    let first = replay_trace(
        &args,
        trace,
        primary,
        runtime,
        keep_records,
        args.csv.as_deref(),
    )?;
    let Some(other) = other else {
        if let Some(dir) = &args.report {
            report::write_report(dir, &first, &trace.display().to_string())
                .with_context(|| format!("cannot write the report into {}", dir.display()))?;
        }
        print_single(&first, args.json)?;
        return Ok(());
    };
    let second = replay_trace(&args, trace, other, runtime, keep_records, None)?;
    let comparison = compare(&first, &second, COMPARE_TOP)?;
    if let Some(dir) = &args.report {
        comparison
            .write(dir, &first, &second)
            .with_context(|| format!("cannot write the comparison into {}", dir.display()))?;
    }
    if args.json {
        let value = serde_json::json!({ "a": first.metrics, "b": second.metrics, "jobs_moved": comparison.moved_total });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        print!("{}", comparison.to_markdown());
    }
    Ok(())
}

/// One streaming replay of `trace`, with a progress bar and, if asked, the per-job CSV.
fn replay_trace(
    args: &Args,
    trace: &Path,
    kind: SchedulerKind,
    runtime: RuntimeMode,
    keep_records: bool,
    csv: Option<&Path>,
) -> anyhow::Result<ReplayOutput> {
    let mut workload = Workload::open(trace)?;
    let procs = machine_procs(args, &workload)?;
    let config = ReplayConfig {
        procs,
        runtime,
        keep_records,
    };
    let mut scheduler = kind.build(procs);
    let mut progress = ProgressBar::stderr(workload.expected_jobs());
    let output = match csv {
        Some(path) => {
            let file =
                File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
            let mut writer = CsvWriter::new(BufWriter::new(file))?;
            let output = replay(
                &mut workload,
                &mut scheduler,
                &config,
                (&mut writer, &mut progress),
            )?;
            writer.finish()?.flush()?;
            output
        }
        None => replay(&mut workload, &mut scheduler, &config, &mut progress)?,
    };
    progress.clear();
    Ok(output)
}

/// --procs, else the cluster file's CPU total, else the trace header.
fn machine_procs(args: &Args, workload: &Workload) -> anyhow::Result<u32> {
    if let Some(procs) = args.procs {
        return Ok(procs);
    }
    if let Some(path) = &args.config {
        let cluster = sluice_cluster::Cluster::load(path)?;
        return u32::try_from(cluster.total_cpus()).context("the cluster has more than 2^32 CPUs");
    }
    workload
        .machine_procs()
        .and_then(|p| u32::try_from(p).ok())
        .context("the machine size is unknown: give --procs N or --config F (the trace header has no MaxProcs or MaxNodes)")
}

fn print_single(output: &ReplayOutput, json: bool) -> anyhow::Result<()> {
    let m = &output.metrics;
    if json {
        println!("{}", serde_json::to_string(m)?);
        return Ok(());
    }
    println!("{} on {} processors", output.label(), m.procs);
    for (name, value) in metric_rows(m) {
        println!("  {name:<22} {value}");
    }
    println!("  {:<22} {:.3}", "wall (s)", m.wall_s);
    println!("  {:<22} {:.0}", "jobs/s", m.jobs_per_s);
    Ok(())
}
