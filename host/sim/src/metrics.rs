//! Summary metrics of a replay, accumulated job by job in constant memory.

use serde::Serialize;

use crate::job::Time;
use crate::record::JobRecord;

/// The headline numbers of one replay (the `--json` object).
///
/// Every field but `wall_s` and `jobs_per_s` depends only on the inputs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metrics {
    /// Scheduler name.
    pub scheduler: String,
    /// Runtime semantics (`kill-at-limit` or `run-to-completion`).
    pub runtime: String,
    /// Machine size in processors.
    pub procs: u32,
    /// Jobs replayed to completion.
    pub jobs: u64,
    /// Jobs skipped: unusable trace lines plus jobs larger than the machine.
    pub dropped: u64,
    /// Jobs larger than the machine (part of `dropped`).
    pub dropped_oversize: u64,
    /// Jobs the scheduler refused at submission, e.g. the engine for an unknown partition or a
    /// time limit over MaxTime (part of `dropped`).
    pub refused: u64,
    /// Jobs cut short at their requested time (`kill-at-limit`).
    pub killed: u64,
    /// Most jobs in flight (queued or running) at one time: what the replay's memory follows,
    /// whatever the trace's length.
    pub peak_in_flight: u64,
    /// Mean wait in seconds.
    pub avg_wait_s: f64,
    /// Mean bounded slowdown (τ = 10 s).
    pub avg_bsld: f64,
    /// Longest wait in seconds.
    pub max_wait_s: Time,
    /// Σ run × procs / (procs × (last end − first submit)), run being the replayed duration.
    pub utilization: f64,
    /// Last end − first submit, in seconds.
    pub makespan_s: Time,
    /// Wall-clock seconds the replay took (reading the trace included).
    pub wall_s: f64,
    /// `jobs / wall_s`.
    pub jobs_per_s: f64,
}

/// Running sums from which [`Metrics`] are computed.
#[derive(Debug, Clone, Default)]
pub struct MetricsAccumulator {
    jobs: u64,
    killed: u64,
    wait_sum: i128,
    bsld_sum: f64,
    max_wait: Time,
    area: i128,
    first_submit: Option<Time>,
    last_end: Option<Time>,
}

impl MetricsAccumulator {
    /// Notes a submission (the first one fixes the start of the makespan).
    pub fn submitted(&mut self, submit: Time) {
        self.first_submit.get_or_insert(submit);
    }

    /// Adds a finished job.
    pub fn finished(&mut self, record: &JobRecord) {
        self.jobs += 1;
        self.killed += u64::from(record.killed);
        self.wait_sum += i128::from(record.wait());
        self.bsld_sum += record.bounded_slowdown();
        self.max_wait = self.max_wait.max(record.wait());
        self.area += i128::from(record.run()) * i128::from(record.procs);
        self.last_end = Some(self.last_end.map_or(record.end, |e| e.max(record.end)));
    }

    /// The metrics so far; `wall_s` is what the caller measured.
    pub fn finish(
        &self,
        scheduler: &str,
        runtime: &str,
        procs: u32,
        dropped: u64,
        dropped_oversize: u64,
        wall_s: f64,
    ) -> Metrics {
        let jobs = self.jobs.max(1) as f64;
        let makespan = match (self.first_submit, self.last_end) {
            (Some(first), Some(last)) => last - first,
            _ => 0,
        };
        let capacity = i128::from(procs) * i128::from(makespan);
        Metrics {
            scheduler: scheduler.to_string(),
            runtime: runtime.to_string(),
            procs,
            jobs: self.jobs,
            dropped,
            dropped_oversize,
            refused: 0,
            killed: self.killed,
            peak_in_flight: 0,
            avg_wait_s: self.wait_sum as f64 / jobs,
            avg_bsld: if self.jobs == 0 {
                0.0
            } else {
                self.bsld_sum / jobs
            },
            max_wait_s: self.max_wait,
            utilization: if capacity > 0 {
                self.area as f64 / capacity as f64
            } else {
                0.0
            },
            makespan_s: makespan,
            wall_s,
            jobs_per_s: if wall_s > 0.0 {
                self.jobs as f64 / wall_s
            } else {
                0.0
            },
        }
    }
}
