//! Owns the counters the engine keeps about itself: the last passes' and plugins' broken answers.

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
