//! Owns the pacing of passes: when the main loop and backfill last ran, and what the next owes.

use sluice_cluster::SchedulerParams;

/// When passes last ran, and whether one is asked for or owed.
pub(crate) struct Pacing {
    /// Something changed that the event-triggered main loop should look at.
    pub requested: bool,
    /// When the periodic main loop last ran.
    pub last_main: i64,
    /// When backfill last ran.
    pub last_backfill: i64,
    /// Whether a tick ran without the backfill pass `bf_interval` did not yet allow, so that
    /// the pass is owed once it does ([`crate::Engine::backfill_owed_at`]).
    pub backfill_owed: bool,
}

impl Pacing {
    /// Pacing that starts counting both intervals at `now`.
    pub fn new(now: i64) -> Self {
        Self {
            requested: false,
            last_main: now,
            last_backfill: now,
            backfill_owed: false,
        }
    }

    /// When the periodic main loop is next due: `sched_interval` after the last one.
    pub fn main_loop_due_at(&self, params: &SchedulerParams) -> i64 {
        self.last_main + params.sched_interval.max(1)
    }

    /// When a backfill pass is next due: `bf_interval` after the last one.
    pub fn backfill_due_at(&self, params: &SchedulerParams) -> i64 {
        self.last_backfill + params.bf_interval.max(1)
    }
}
