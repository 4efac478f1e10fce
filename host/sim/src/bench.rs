//! The replay benchmark: simulated jobs per second for EASY against a baseline in the same process.

use std::fmt;
use std::path::Path;
use std::time::Instant;

use crate::error::ReadError;
use crate::replay::{ReplayConfig, ReplayError, replay};
use crate::runtime::RuntimeMode;
use crate::scheduler::{ReplayScheduler, SchedulerKind};
use crate::workload::{JobSource, MemoryWorkload, Workload};

/// The schedulers timed, in the order they run within a round.
const TIMED: [SchedulerKind; 3] = [
    SchedulerKind::Easy,
    SchedulerKind::EasyNaive,
    SchedulerKind::Fcfs,
];

/// Why the benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The trace could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// A replay failed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// Neither `procs` nor the trace header gives the machine size.
    #[error(
        "the machine size is unknown: give --procs or use a trace whose header has MaxProcs or MaxNodes"
    )]
    NoMachineSize,
}

/// Best-of-rounds throughput of one scheduler.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Throughput {
    /// Which scheduler.
    pub scheduler: SchedulerKind,
    /// Fastest replay, in seconds.
    pub best_s: f64,
    /// Jobs replayed per second in the fastest round.
    pub jobs_per_s: f64,
    /// Most jobs in flight at once (the replay's memory follows it, not the trace length).
    pub peak_in_flight: u64,
}

/// The benchmark's findings.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchReport {
    /// Jobs per replay.
    pub jobs: u64,
    /// Machine size.
    pub procs: u32,
    /// Rounds per scheduler.
    pub rounds: usize,
    /// Lines per second for reading and parsing the trace (once, not part of the replay figures).
    pub parse_jobs_per_s: f64,
    /// One entry per timed scheduler, EASY first.
    pub results: Vec<Throughput>,
    /// The schedulers the caller added (e.g. the engine with a bundle), in the order given.
    pub extra: Vec<NamedThroughput>,
}

/// Best-of-rounds throughput of a scheduler the caller supplied.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedThroughput {
    /// Its label, e.g. `slurm (wasm)`.
    pub name: String,
    /// Rounds it ran.
    pub rounds: usize,
    /// Fastest replay, in seconds.
    pub best_s: f64,
    /// Jobs replayed per second in the fastest round.
    pub jobs_per_s: f64,
    /// Most jobs in flight at once.
    pub peak_in_flight: u64,
}

/// A scheduler for the benchmark to time besides the built-in ones: a fresh one per round.
pub struct ExtraScheduler<'a> {
    /// Label in the report.
    pub name: String,
    /// Rounds to run (the engine is slower than the flat schedulers, so it may get fewer).
    pub rounds: usize,
    /// Builds a fresh scheduler for one replay.
    pub build: Box<dyn FnMut() -> Box<dyn ReplayScheduler> + 'a>,
}

impl BenchReport {
    /// Throughput of `kind`, if it was timed.
    pub fn throughput(&self, kind: SchedulerKind) -> Option<&Throughput> {
        self.results.iter().find(|t| t.scheduler == kind)
    }

    /// EASY's jobs/s divided by the naive EASY's: the speed-up from the fast implementation.
    pub fn easy_speedup(&self) -> f64 {
        match (
            self.throughput(SchedulerKind::Easy),
            self.throughput(SchedulerKind::EasyNaive),
        ) {
            (Some(fast), Some(naive)) if naive.jobs_per_s > 0.0 => {
                fast.jobs_per_s / naive.jobs_per_s
            }
            _ => 0.0,
        }
    }
}

impl fmt::Display for BenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} jobs on {} processors, kill-at-limit, trace in memory, best of {} rounds",
            self.jobs, self.procs, self.rounds
        )?;
        writeln!(
            f,
            "  {:<12} {:>12} jobs/s  (read + parse)",
            "reader",
            format_rate(self.parse_jobs_per_s)
        )?;
        for t in &self.results {
            writeln!(
                f,
                "  {:<12} {:>12} jobs/s  ({:.2} ms; peak {} jobs in flight)",
                t.scheduler.as_str(),
                format_rate(t.jobs_per_s),
                t.best_s * 1e3,
                t.peak_in_flight
            )?;
        }
        for t in &self.extra {
            writeln!(
                f,
                "  {:<12} {:>12} jobs/s  ({:.2} ms, best of {}; peak {} jobs in flight)",
                t.name,
                format_rate(t.jobs_per_s),
                t.best_s * 1e3,
                t.rounds,
                t.peak_in_flight
            )?;
        }
        write!(f, "  easy / easy-naive = {:.2}x", self.easy_speedup())?;
        if let Some(easy) = self.throughput(SchedulerKind::Easy) {
            for t in self.extra.iter().filter(|t| t.jobs_per_s > 0.0) {
                write!(
                    f,
                    "\n  easy / {} = {:.1}x",
                    t.name,
                    easy.jobs_per_s / t.jobs_per_s
                )?;
            }
        }
        Ok(())
    }
}

fn format_rate(rate: f64) -> String {
    let digits = format!("{:.0}", rate);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Reads `trace` into memory once, then replays it `rounds` times with each of EASY, the naive EASY
/// and FCFS (interleaved, so that drift in machine speed hits all alike) and keeps each one's
/// fastest round. Timing is reported, never checked.
pub fn run(trace: &Path, procs: Option<u32>, rounds: usize) -> Result<BenchReport, BenchError> {
    run_with(trace, procs, rounds, Vec::new())
}

/// [`run`], then times each of `extra` the same way (its own number of rounds). Machine size:
/// `procs`, else the trace header.
pub fn run_with(
    trace: &Path,
    procs: Option<u32>,
    rounds: usize,
    extra: Vec<ExtraScheduler<'_>>,
) -> Result<BenchReport, BenchError> {
    let read_start = Instant::now();
    let mut workload = Workload::open(trace)?;
    let jobs: Vec<_> = workload.by_ref().collect::<Result<_, _>>()?;
    let parse_s = read_start.elapsed().as_secs_f64();
    let procs = procs
        .or_else(|| workload.machine_procs().and_then(|p| u32::try_from(p).ok()))
        .ok_or(BenchError::NoMachineSize)?;
    let config = ReplayConfig {
        procs,
        runtime: RuntimeMode::KillAtLimit,
        keep_records: false,
    };
    let rounds = rounds.max(1);
    let mut best = [f64::INFINITY; TIMED.len()];
    let mut peak = [0u64; TIMED.len()];
    let mut replayed = 0;
    for _ in 0..rounds {
        for (slot, kind) in TIMED.iter().enumerate() {
            let mut source = MemoryWorkload::new(&jobs, workload.dropped(), None);
            let mut scheduler = kind.build(procs);
            let output = replay(&mut source, &mut scheduler, &config, ())?;
            replayed = output.metrics.jobs;
            best[slot] = best[slot].min(output.metrics.wall_s);
            peak[slot] = output.metrics.peak_in_flight;
        }
    }
    let mut extra_results = Vec::new();
    for mut other in extra {
        let rounds = other.rounds.max(1);
        let mut best_s = f64::INFINITY;
        let mut jobs_done = 0;
        let mut peak_in_flight = 0;
        for _ in 0..rounds {
            let mut source = MemoryWorkload::new(&jobs, workload.dropped(), None);
            let mut scheduler = (other.build)();
            let output = replay(&mut source, &mut scheduler, &config, ())?;
            best_s = best_s.min(output.metrics.wall_s);
            jobs_done = output.metrics.jobs;
            peak_in_flight = output.metrics.peak_in_flight;
        }
        extra_results.push(NamedThroughput {
            name: other.name,
            rounds,
            best_s,
            jobs_per_s: if best_s > 0.0 {
                jobs_done as f64 / best_s
            } else {
                0.0
            },
            peak_in_flight,
        });
    }
    let rate = |seconds: f64| {
        if seconds > 0.0 {
            replayed as f64 / seconds
        } else {
            0.0
        }
    };
    Ok(BenchReport {
        jobs: replayed,
        procs,
        rounds,
        parse_jobs_per_s: if parse_s > 0.0 {
            jobs.len() as f64 / parse_s
        } else {
            0.0
        },
        results: TIMED
            .iter()
            .zip(best)
            .zip(peak)
            .map(|((&scheduler, best_s), peak_in_flight)| Throughput {
                scheduler,
                best_s,
                jobs_per_s: rate(best_s),
                peak_in_flight,
            })
            .collect(),
        extra: extra_results,
    })
}
