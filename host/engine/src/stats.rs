//! Owns the counters the engine keeps about itself: the last passes, every pass's totals, and
//! plugins' broken answers.

use serde::Serialize;

/// Counters of the last passes, for logs and benchmarks.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PassStats {
    /// Records (job × partition) in the sorted queue.
    pub queued: usize,
    /// Records tried.
    pub tested: usize,
    /// Jobs started.
    pub started: usize,
    /// Backfill reservations made.
    pub reserved: usize,
    /// Why the pass stopped early, if it did (`max_sched_time`, `default_queue_depth`, `bf_max_job_test`, …).
    pub stopped_by: Option<&'static str>,
}

/// Answers a plugin gave that broke the contract, counted per kind.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Faults {
    /// Priority answers refused.
    pub priority: u64,
    /// Placements refused.
    pub selection: u64,
    /// HRES answers refused.
    pub hres: u64,
    /// GRES device picks refused.
    pub gres: u64,
}

/// Totals over every pass of one kind since the engine was built, timed on the engine's clock
/// (`Clock::micros`): what sdiag's cycle statistics and the daemon's metrics are made of.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PassTotals {
    /// Passes run.
    pub cycles: u64,
    /// Length of the last pass, microseconds.
    pub last_micros: u64,
    /// Longest pass, microseconds.
    pub max_micros: u64,
    /// All passes' lengths, microseconds.
    pub total_micros: u64,
    /// Records tried, over all passes (the depth sdiag averages).
    pub total_depth: u64,
    /// Jobs started, over all passes.
    pub total_started: u64,
    /// When the last pass ran (the engine clock's Unix seconds).
    pub last_at: i64,
}

impl PassTotals {
    /// Counts one pass of `micros` that ran at `at` with what `stats` says it tried and started.
    pub(crate) fn record(&mut self, micros: u64, at: i64, stats: &PassStats) {
        self.cycles += 1;
        self.last_micros = micros;
        self.max_micros = self.max_micros.max(micros);
        self.total_micros = self.total_micros.saturating_add(micros);
        self.total_depth += stats.tested as u64;
        self.total_started += stats.started as u64;
        self.last_at = at;
    }
}
