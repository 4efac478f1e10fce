//! Wait-time distribution in powers of two, in constant memory.

use crate::job::Time;

/// Bins: `0` for no wait, then `[2^(k-1), 2^k)` seconds for bin k; the last bin is open-ended.
const BINS: usize = 26;

/// A histogram of wait times with logarithmic bins (0 s, 1 s, 2–3 s, 4–7 s, … ≥ 2^24 s).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitHistogram {
    counts: [u64; BINS],
}

impl Default for WaitHistogram {
    fn default() -> Self {
        WaitHistogram { counts: [0; BINS] }
    }
}

impl WaitHistogram {
    /// Counts one wait.
    pub fn add(&mut self, wait: Time) {
        let bin = if wait <= 0 {
            0
        } else {
            (64 - (wait as u64).leading_zeros() as usize).min(BINS - 1)
        };
        self.counts[bin] += 1;
    }

    /// (lower bound in seconds, count) per bin, up to the last non-empty bin.
    pub fn bins(&self) -> Vec<(Time, u64)> {
        let last = self.counts.iter().rposition(|&c| c > 0).unwrap_or(0);
        (0..=last)
            .map(|bin| (lower_bound(bin), self.counts[bin]))
            .collect()
    }
}

/// The smallest wait that falls in `bin`.
pub fn lower_bound(bin: usize) -> Time {
    if bin == 0 { 0 } else { 1 << (bin - 1) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_fall_in_power_of_two_bins() {
        let mut h = WaitHistogram::default();
        for wait in [0, 1, 2, 3, 4, 7, 8] {
            h.add(wait);
        }
        assert_eq!(h.bins(), [(0, 1), (1, 1), (2, 2), (4, 2), (8, 1)]);
    }
}
