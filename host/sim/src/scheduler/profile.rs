//! An availability profile: free processors over future time, as a step function.

use crate::job::Time;

/// Free processors from `now` on: step `i` holds from its time until the next step's time, and the
/// last step lasts forever.
#[derive(Debug, Clone, Default)]
pub(super) struct Profile {
    steps: Vec<(Time, u32)>,
}

impl Profile {
    /// Rebuilds the profile at `now` from the processors free now and the believed releases, which
    /// must come in non-decreasing time order and all lie after `now`.
    pub(super) fn reset(
        &mut self,
        now: Time,
        free: u32,
        releases: impl Iterator<Item = (Time, u32)>,
    ) {
        self.steps.clear();
        self.steps.push((now, free));
        for (end, procs) in releases {
            let &mut (last_time, last_free) =
                self.steps.last_mut().expect("profile starts non-empty");
            if end == last_time {
                self.steps.last_mut().expect("non-empty").1 += procs;
            } else {
                self.steps.push((end, last_free + procs));
            }
        }
    }

    /// Processors free at the profile's start.
    pub(super) fn free_now(&self) -> u32 {
        self.steps[0].1
    }

    /// The earliest step time at which `procs` processors stay free for `duration` seconds, and that
    /// step's index. A zero duration is planned as one second so the job still needs free processors.
    pub(super) fn earliest_start(&self, procs: u32, duration: Time) -> (Time, usize) {
        let duration = duration.max(1);
        let mut i = 0;
        'candidates: while i < self.steps.len() {
            let (start, free) = self.steps[i];
            if free < procs {
                i += 1;
                continue;
            }
            let end = start + duration;
            let mut j = i + 1;
            while j < self.steps.len() && self.steps[j].0 < end {
                if self.steps[j].1 < procs {
                    i = j + 1;
                    continue 'candidates;
                }
                j += 1;
            }
            return (start, i);
        }
        // The last step has every processor free, and jobs never exceed the machine.
        unreachable!("a job larger than the machine reached the profile")
    }

    /// Takes `procs` processors from step `first` for `duration` seconds (at least one).
    pub(super) fn reserve(&mut self, first: usize, procs: u32, duration: Time) {
        let end = self.steps[first].0 + duration.max(1);
        let after = self.steps[first..]
            .iter()
            .position(|&(t, _)| t >= end)
            .map_or(self.steps.len(), |p| first + p);
        if after == self.steps.len() || self.steps[after].0 != end {
            let free_before = self.steps[after - 1].1;
            self.steps.insert(after, (end, free_before));
        }
        for step in &mut self.steps[first..after] {
            step.1 -= procs;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_start_skips_holes_too_short_for_the_job() {
        let mut p = Profile::default();
        // 2 free now, 4 at t=10, 1 at ... (built by reserving), 10 from t=30.
        p.reset(0, 2, [(10, 2), (30, 6)].into_iter());
        p.reserve(1, 3, 5); // t=10..15 drops to 1 free
        assert_eq!(p.steps, [(0, 2), (10, 1), (15, 4), (30, 10)]);
        assert_eq!(p.earliest_start(2, 10), (0, 0));
        assert_eq!(p.earliest_start(2, 11), (15, 2));
        assert_eq!(p.earliest_start(5, 1), (30, 3));
    }

    #[test]
    fn reserving_past_the_last_step_adds_its_end() {
        let mut p = Profile::default();
        p.reset(0, 4, std::iter::empty());
        p.reserve(0, 3, 0);
        assert_eq!(p.steps, [(0, 1), (1, 4)]);
        assert_eq!(p.free_now(), 1);
    }
}
