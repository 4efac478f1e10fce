//! Owns the time the engine runs on: wall time for the daemon, virtual time for the simulator.
//!
//! The clock the engine runs on: wall time for the daemon, virtual time for the simulator.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// A source of time. The engine never reads the system time itself, so the live daemon and the
/// simulator drive the same code and a replay is deterministic.
pub trait Clock: Send + Sync {
    /// Current time, Unix seconds: what submit, start and end times and time limits are counted in.
    fn now(&self) -> i64;

    /// A monotonic reading in microseconds that `max_sched_time` and `bf_max_time` are counted on.
    ///
    /// A virtual clock may advance it on every reading to charge a cost per job tested.
    fn micros(&self) -> u64;
}

/// The system clock, for the live daemon.
#[derive(Debug)]
pub struct WallClock {
    origin: Instant,
}

impl WallClock {
    /// A wall clock whose budget readings start now.
    pub fn new() -> Self {
        Self {
            origin: Instant::now(),
        }
    }
}

impl Default for WallClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for WallClock {
    fn now(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0)
    }

    fn micros(&self) -> u64 {
        self.origin.elapsed().as_micros() as u64
    }
}

#[derive(Debug, Default)]
struct ManualInner {
    now: AtomicI64,
    extra_micros: AtomicU64,
    tick_micros: AtomicU64,
}

/// A virtual clock that only moves when told; clones share the same time.
///
/// Budget readings are `now` in microseconds plus every tick charged so far, so a test can make
/// each reading cost `tick_micros` and watch `max_sched_time` cut a pass short.
#[derive(Clone, Debug, Default)]
pub struct ManualClock {
    inner: Arc<ManualInner>,
}

impl ManualClock {
    /// A clock standing at `now` (Unix seconds) whose budget readings cost nothing.
    pub fn new(now: i64) -> Self {
        let clock = Self::default();
        clock.set(now);
        clock
    }

    /// Moves the clock to `now`; moving backwards is ignored because Slurm's times never go back.
    pub fn set(&self, now: i64) {
        self.inner.now.fetch_max(now, Ordering::SeqCst);
    }

    /// Moves the clock forward by `seconds`.
    pub fn advance(&self, seconds: i64) {
        self.inner.now.fetch_add(seconds.max(0), Ordering::SeqCst);
    }

    /// Makes every budget reading advance the budget clock by `micros`.
    pub fn set_tick_micros(&self, micros: u64) {
        self.inner.tick_micros.store(micros, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> i64 {
        self.inner.now.load(Ordering::SeqCst)
    }

    fn micros(&self) -> u64 {
        let tick = self.inner.tick_micros.load(Ordering::SeqCst);
        let extra = self.inner.extra_micros.fetch_add(tick, Ordering::SeqCst) + tick;
        (self.now().max(0) as u64)
            .saturating_mul(1_000_000)
            .saturating_add(extra)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_is_shared_and_never_goes_back() {
        let a = ManualClock::new(100);
        let b = a.clone();
        b.advance(20);
        assert_eq!(a.now(), 120);
        a.set(50);
        assert_eq!(b.now(), 120);
    }

    #[test]
    fn ticks_charge_budget_readings() {
        let c = ManualClock::new(10);
        assert_eq!(c.micros(), 10_000_000);
        c.set_tick_micros(5);
        let first = c.micros();
        let second = c.micros();
        assert_eq!(second - first, 5);
    }
}
