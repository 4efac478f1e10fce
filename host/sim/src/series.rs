//! Time-weighted averages of a step function in a bounded number of buckets.

use crate::job::Time;

/// Most buckets a series keeps; reaching it merges neighbours and doubles the bucket width.
const MAX_BUCKETS: usize = 1024;

/// Bucketed integral of a step function over time (e.g. busy processors), in constant memory.
///
/// Buckets start [`StepSeries::new`]'s `width` seconds wide; when time runs past the last bucket
/// they are merged pairwise and the width doubles, so a year-long trace still fits in at most
/// 1,024 buckets and a short one keeps fine detail. Integrals are exact integers, so plots are
/// byte-identical across runs.
#[derive(Debug, Clone, PartialEq)]
pub struct StepSeries {
    origin: Time,
    width: Time,
    /// Σ value × seconds per bucket.
    integrals: Vec<u128>,
    last_time: Time,
    value: u64,
}

impl StepSeries {
    /// A series starting at `origin` with value 0 and buckets `width` seconds wide (at least 1).
    pub fn new(origin: Time, width: Time) -> Self {
        StepSeries {
            origin,
            width: width.max(1),
            integrals: Vec::new(),
            last_time: origin,
            value: 0,
        }
    }

    /// The function takes `value` from time `at` on (times must not decrease).
    pub fn set(&mut self, at: Time, value: u64) {
        self.advance(at);
        self.value = value;
    }

    /// Integrates the current value up to `to`.
    pub fn advance(&mut self, to: Time) {
        let mut from = self.last_time.max(self.origin);
        if to <= from {
            return;
        }
        while ((to - self.origin) as u64).div_ceil(self.width as u64) > MAX_BUCKETS as u64 {
            self.coarsen();
        }
        while from < to {
            let bucket = ((from - self.origin) / self.width) as usize;
            let bucket_end = self.origin + (bucket as Time + 1) * self.width;
            let until = bucket_end.min(to);
            if self.integrals.len() <= bucket {
                self.integrals.resize(bucket + 1, 0);
            }
            self.integrals[bucket] += u128::from(self.value) * (until - from) as u128;
            from = until;
        }
        self.last_time = to;
    }

    fn coarsen(&mut self) {
        let merged = self
            .integrals
            .chunks(2)
            .map(|pair| pair.iter().sum())
            .collect();
        self.integrals = merged;
        self.width *= 2;
    }

    /// The time bucket 0 starts at.
    pub fn origin(&self) -> Time {
        self.origin
    }

    /// Bucket width in seconds.
    pub fn width(&self) -> Time {
        self.width
    }

    /// (bucket start, average value over the bucket) for every bucket up to the last update; the
    /// last bucket is averaged over the part that has elapsed.
    pub fn averages(&self) -> Vec<(Time, f64)> {
        let elapsed = self.last_time - self.origin;
        self.integrals
            .iter()
            .enumerate()
            .map(|(i, &integral)| {
                let start = i as Time * self.width;
                let span = (elapsed - start).clamp(1, self.width);
                (self.origin + start, integral as f64 / span as f64)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn averages_are_time_weighted() {
        let mut s = StepSeries::new(0, 10);
        s.set(0, 4);
        s.set(5, 0);
        s.set(15, 2);
        s.advance(20);
        assert_eq!(s.averages(), [(0, 2.0), (10, 1.0)]);
    }

    #[test]
    fn long_series_coarsen_and_keep_the_total() {
        let mut s = StepSeries::new(0, 1);
        s.set(0, 3);
        s.advance(5_000);
        assert!(s.averages().len() <= MAX_BUCKETS);
        assert_eq!(s.width(), 8);
        let total: f64 = s.averages().iter().map(|&(_, avg)| avg * 8.0).sum();
        assert_eq!(total, 15_000.0);
    }
}
