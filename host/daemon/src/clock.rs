//! The daemon's clock: wall time, which recovery can pin to a job's original submit time while
//! it re-queues the job, so its age (and priority) survive a restart.

use std::sync::atomic::{AtomicI64, Ordering};

use sluice_engine::{Clock, WallClock};

const UNPINNED: i64 = i64::MIN;

/// Wall time with an optional pin.
#[derive(Debug)]
pub struct DaemonClock {
    wall: WallClock,
    pinned: AtomicI64,
}

impl DaemonClock {
    /// Wall time, unpinned.
    pub fn new() -> Self {
        Self {
            wall: WallClock::new(),
            pinned: AtomicI64::new(UNPINNED),
        }
    }

    /// Makes `now()` answer `t` until [`DaemonClock::unpin`].
    pub fn pin(&self, t: i64) {
        self.pinned.store(t, Ordering::SeqCst);
    }

    /// Back to wall time.
    pub fn unpin(&self) {
        self.pinned.store(UNPINNED, Ordering::SeqCst);
    }
}

impl Default for DaemonClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for DaemonClock {
    fn now(&self) -> i64 {
        match self.pinned.load(Ordering::SeqCst) {
            UNPINNED => self.wall.now(),
            t => t,
        }
    }

    fn micros(&self) -> u64 {
        self.wall.micros()
    }
}
