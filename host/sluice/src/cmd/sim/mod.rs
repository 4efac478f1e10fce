//! `sluice sim`: replay a workload trace on a virtual clock and report what the scheduler did.

mod bundle;
mod scenario;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use sluice_cluster::Cluster;
use sluice_sim::bench::ExtraScheduler;
use sluice_sim::compare::compare;
use sluice_sim::csv::CsvWriter;
use sluice_sim::progress::ProgressBar;
use sluice_sim::report::{self, metric_rows};
use sluice_sim::scheduler::{EngineOptions, EngineScheduler, FlatMachine, Passes};
use sluice_sim::{
    JobSource, ReplayConfig, ReplayOutput, ReplayScheduler, RuntimeMode, SchedulerKind, Workload,
    bench, replay,
};

use bundle::BundleMode;

/// How many moved jobs a comparison lists.
const COMPARE_TOP: usize = 20;

/// Rounds `sluice sim bench` gives each engine-backed replay (they take far longer than EASY's).
const ENGINE_BENCH_ROUNDS: usize = 3;

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
    /// With --scheduler slurm on a flat machine: CPUs per generated node (1: one node per processor).
    #[arg(long, value_name = "C", default_value_t = 1)]
    pub cpus_per_node: u32,
    /// With --scheduler slurm: run the bundle as WebAssembly components (wasm) or linked in (native).
    #[arg(long, default_value = "wasm", value_parser = ["wasm", "native"])]
    pub bundle: String,
    /// With --scheduler slurm: passes as configured (sched_interval, bf_interval) but only when a
    /// job arrived or ended since the last one (event), or also when nothing did (periodic, slower).
    #[arg(long, default_value = "event", value_parser = ["event", "periodic"])]
    pub passes: String,
    /// Scheduler: fcfs, easy (Mu'alem & Feitelson), conservative, easy-accasim (AccaSim's EASY),
    /// or slurm (the full engine).
    #[arg(long, default_value = "easy", value_parser = ["fcfs", "easy", "conservative", "easy-accasim", "slurm"])]
    pub scheduler: String,
    /// kill-at-limit: a job ends at min(run time, requested time); run-to-completion: it runs its
    /// full recorded run time.
    #[arg(long, default_value = "kill-at-limit", value_parser = ["kill-at-limit", "run-to-completion"])]
    pub runtime: String,
    /// sluice cluster file: the cluster, scheduler parameters and plugin bundle of --scheduler
    /// slurm; for the flat schedulers only its total CPU count is used.
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
    #[arg(long, value_name = "OTHER", value_parser = ["fcfs", "easy", "conservative", "easy-accasim", "slurm"])]
    pub compare_scheduler: Option<String>,
    /// Replay the same trace with the engine under two cluster files (their plugin bundles) and
    /// compare the runs; --report DIR gets the comparison and overlaid plots.
    #[arg(long, num_args = 2, value_names = ["A.toml", "B.toml"], conflicts_with_all = ["config", "compare_scheduler"])]
    pub compare: Option<Vec<PathBuf>>,
    /// Scenario replay: run the engine on --config with the trace's jobs and timed actions
    /// (register, update, cancel) and write every node and job state change and power program
    /// call to this JSON-lines file; prints power figures (node-hours per state, boots, boot
    /// delay, energy). With --compare A B: both, logs FILE.a.jsonl and FILE.b.jsonl.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["compare_scheduler", "csv", "report"])]
    pub log: Option<PathBuf>,
    /// With --log: seconds after ResumeProgram at which a resumed node registers, or `manual`
    /// (only `register` actions bring nodes up).
    #[arg(long, value_name = "S|manual", default_value = "60", requires = "log")]
    pub boot_time: String,
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
    /// Cluster file whose bundle the engine-backed replays use (default: a flat machine).
    #[arg(long, value_name = "F")]
    pub config: Option<PathBuf>,
    /// Skip the engine-backed replays.
    #[arg(long)]
    pub no_engine: bool,
}

/// Which scheduler one replay uses.
#[derive(Debug, Clone)]
enum Choice {
    /// A fast flat-machine scheduler.
    Flat(SchedulerKind),
    /// The engine with the bundle of this cluster file (or the flat machine's default bundle).
    Engine(Option<PathBuf>),
}

fn choice(name: &str, config: Option<&Path>) -> anyhow::Result<Choice> {
    Ok(if name == "slurm" {
        Choice::Engine(config.map(Path::to_path_buf))
    } else {
        Choice::Flat(name.parse()?)
    })
}

/// Runs `sluice sim`.
pub fn run(args: Args) -> anyhow::Result<()> {
    if let Some(SimCommand::Bench(bench_args)) = &args.command {
        return run_bench(bench_args);
    }
    let trace = args
        .trace
        .as_deref()
        .context("--trace FILE is required (or use `sluice sim bench --trace FILE`)")?;
    if let Some(log) = &args.log {
        return match &args.compare {
            Some(files) => scenario::compare(&args, trace, log, [&files[0], &files[1]]),
            None => scenario::run(&args, trace, log),
        };
    }
    let runtime: RuntimeMode = args.runtime.parse()?;
    let (primary, other) = match &args.compare {
        Some(files) => (
            Choice::Engine(Some(files[0].clone())),
            Some(Choice::Engine(Some(files[1].clone()))),
        ),
        None => (
            choice(&args.scheduler, args.config.as_deref())?,
            args.compare_scheduler
                .as_deref()
                .map(|name| choice(name, args.config.as_deref()))
                .transpose()?,
        ),
    };
    let keep_records = other.is_some();

    let first = replay_trace(
        &args,
        trace,
        &primary,
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
    let second = replay_trace(&args, trace, &other, runtime, keep_records, None)?;
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

/// `sluice sim bench`: the flat schedulers, then the engine with the bundle as components and
/// natively linked.
fn run_bench(args: &BenchArgs) -> anyhow::Result<()> {
    let mut extra = Vec::new();
    if !args.no_engine {
        let procs = match args.procs {
            Some(procs) => procs,
            None => Workload::open(&args.trace)?
                .machine_procs()
                .and_then(|p| u32::try_from(p).ok())
                .context("the machine size is unknown: give --procs N")?,
        };
        for mode in [BundleMode::Wasm, BundleMode::Native] {
            let (cluster, options) =
                engine_setup(args.config.as_deref(), procs, 1, Passes::Event, "slurm")?;
            // Load once to fail early and warm the compile cache; each round loads afresh.
            bundle::policies(&cluster, mode)?;
            extra.push(ExtraScheduler {
                name: format!("slurm/{}", mode.as_str()),
                rounds: ENGINE_BENCH_ROUNDS.min(args.rounds.max(1)),
                build: Box::new(move || {
                    let policies = bundle::policies(&cluster, mode)
                        .expect("the bundle loaded a moment ago loads again");
                    Box::new(EngineScheduler::new(
                        cluster.clone(),
                        policies,
                        options.clone(),
                    )) as Box<dyn ReplayScheduler>
                }),
            });
        }
    }
    let report = bench::run_with(&args.trace, args.procs, args.rounds, extra)?;
    println!("{report}");
    Ok(())
}

/// The engine's cluster and options: `config`'s cluster, or a flat machine of `procs`.
fn engine_setup(
    config: Option<&Path>,
    procs: u32,
    cpus_per_node: u32,
    passes: Passes,
    name: &str,
) -> anyhow::Result<(Cluster, EngineOptions)> {
    let cluster = match config {
        Some(path) => Cluster::load(path)?,
        None => FlatMachine {
            procs,
            cpus_per_node,
        }
        .cluster()?,
    };
    let mut options = EngineOptions::for_cluster(name, &cluster);
    options.passes = passes;
    Ok((cluster, options))
}

/// The report name of an engine run under cluster file `path`: its file stem.
fn engine_name(path: Option<&Path>, mode: BundleMode) -> String {
    let base = path
        .and_then(Path::file_stem)
        .map_or_else(|| "slurm".to_string(), |s| s.to_string_lossy().into_owned());
    match mode {
        BundleMode::Wasm => base,
        BundleMode::Native => format!("{base} (native)"),
    }
}

/// One streaming replay of `trace`, with a progress bar and, if asked, the per-job CSV.
fn replay_trace(
    args: &Args,
    trace: &Path,
    choice: &Choice,
    runtime: RuntimeMode,
    keep_records: bool,
    csv: Option<&Path>,
) -> anyhow::Result<ReplayOutput> {
    let mut workload = Workload::open(trace)?;
    let (procs, mut scheduler): (u32, Box<dyn ReplayScheduler>) = match choice {
        Choice::Flat(kind) => {
            let procs = machine_procs(args, &workload)?;
            (procs, kind.build(procs))
        }
        Choice::Engine(config) => {
            let mode = BundleMode::parse(&args.bundle)?;
            let passes: Passes = args.passes.parse()?;
            let flat_procs = match config {
                Some(_) => 0,
                None => machine_procs(args, &workload)?,
            };
            let (cluster, options) = engine_setup(
                config.as_deref(),
                flat_procs,
                args.cpus_per_node,
                passes,
                &engine_name(config.as_deref(), mode),
            )?;
            let procs = match config {
                // The driver's machine is the cluster's CPUs; --procs cannot shrink it.
                Some(_) => u32::try_from(cluster.total_cpus())
                    .context("the cluster has more than 2^32 CPUs")?,
                None => flat_procs,
            };
            let policies = bundle::policies(&cluster, mode)?;
            (
                procs,
                Box::new(EngineScheduler::new(cluster, policies, options)),
            )
        }
    };
    let config = ReplayConfig {
        procs,
        runtime,
        keep_records,
    };
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
