//! The outcome of one replayed job, and the per-job formulas.

use crate::job::Time;

/// The threshold τ of the bounded slowdown, in seconds (Feitelson's convention).
pub const BSLD_THRESHOLD_S: Time = 10;

/// What happened to one job in the replay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobRecord {
    /// Position in submission order; identical across runs of the same trace.
    pub seq: u64,
    /// The job number from the trace.
    pub id: u64,
    /// Submission time.
    pub submit: Time,
    /// Start time chosen by the scheduler.
    pub start: Time,
    /// End time (start plus the simulated duration).
    pub end: Time,
    /// Processors held.
    pub procs: u32,
    /// Whether the job was cut short at its requested time (`kill-at-limit` only).
    pub killed: bool,
}

impl JobRecord {
    /// Seconds between submission and start.
    pub fn wait(&self) -> Time {
        self.start - self.submit
    }

    /// Seconds the job held its processors in the replay.
    pub fn run(&self) -> Time {
        self.end - self.start
    }

    /// Bounded slowdown: max(1, (wait + run) / max(run, τ)) with τ = 10 s.
    pub fn bounded_slowdown(&self) -> f64 {
        bounded_slowdown(self.wait(), self.run())
    }
}

/// Bounded slowdown max(1, (wait + run) / max(run, τ)) with τ = [`BSLD_THRESHOLD_S`].
pub fn bounded_slowdown(wait: Time, run: Time) -> f64 {
    let response = (wait + run) as f64;
    (response / run.max(BSLD_THRESHOLD_S) as f64).max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_slowdown_cases() {
        // Short jobs are measured against τ, long ones against their run time.
        assert_eq!(bounded_slowdown(0, 0), 1.0);
        assert_eq!(bounded_slowdown(5, 2), 1.0);
        assert_eq!(bounded_slowdown(18, 2), 2.0);
        assert_eq!(bounded_slowdown(300, 100), 4.0);
    }
}
