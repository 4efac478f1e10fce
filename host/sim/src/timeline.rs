//! Everything the report plots, gathered during the replay in constant memory.

use crate::histogram::WaitHistogram;
use crate::job::Time;
use crate::series::StepSeries;

/// Initial bucket width of the time series; coarsened as the trace grows.
const INITIAL_BUCKET_S: Time = 60;

/// Busy processors and queue length over time, and the wait distribution.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// Processors in use (average per bucket).
    pub busy: StepSeries,
    /// Jobs waiting (average per bucket).
    pub queued: StepSeries,
    /// Wait-time distribution.
    pub waits: WaitHistogram,
}

impl Timeline {
    /// An empty timeline starting at `origin` (the first submission).
    pub fn new(origin: Time) -> Self {
        Timeline {
            busy: StepSeries::new(origin, INITIAL_BUCKET_S),
            queued: StepSeries::new(origin, INITIAL_BUCKET_S),
            waits: WaitHistogram::default(),
        }
    }

    /// The time the series start at (the first submission).
    pub fn origin(&self) -> Time {
        self.busy.origin()
    }

    /// Records the state after every event at `now`.
    pub fn state(&mut self, now: Time, busy: u32, queued: usize) {
        self.busy.set(now, u64::from(busy));
        self.queued.set(now, queued as u64);
    }
}
