//! Owns no state: a job's candidate start times, release times and slice starts merged in order.

use super::map::{self, NodeSpaceMap};

/// A job's candidate start times: merged as asked for (the common case), or collected and
/// sorted when rarer sources add times. An enum rather than a trait object, so that the
/// merge inlines into the planning loop, which asks for a time a million times in a KTH replay.
pub(super) enum CandidateTimes<'a> {
    Merged(MergedTimes<'a>),
    Collected(std::iter::Copied<std::slice::Iter<'a, i64>>),
}

impl Iterator for CandidateTimes<'_> {
    type Item = i64;

    #[inline]
    fn next(&mut self) -> Option<i64> {
        match self {
            CandidateTimes::Merged(merged) => merged.next(),
            CandidateTimes::Collected(times) => times.next(),
        }
    }
}

/// A job's candidate start times from release times and slice boundaries, ascending and
/// each once, merged as the planning loop asks for them.
pub(super) struct MergedTimes<'a> {
    /// Release times still to merge, ascending.
    releases: &'a [i64],
    /// Slices whose beginnings are still to merge, in time order.
    slices: &'a [map::Slice],
    /// The window's end, after the slices, if it is a candidate.
    window_end: Option<i64>,
    last: Option<i64>,
}

impl<'a> MergedTimes<'a> {
    /// The times in `[from, to)` of the ascending `release_times` and of `map`'s boundaries.
    #[inline]
    pub fn within(release_times: &'a [i64], map: &'a NodeSpaceMap, from: i64, to: i64) -> Self {
        let first = release_times.partition_point(|&t| t < from);
        let last = first + release_times[first..].partition_point(|&t| t < to);
        let (slices, window_end) = map.boundaries_within(from, to);
        MergedTimes {
            releases: &release_times[first..last],
            slices,
            window_end,
            last: None,
        }
    }
}

impl Iterator for MergedTimes<'_> {
    type Item = i64;

    #[inline]
    fn next(&mut self) -> Option<i64> {
        loop {
            let boundary = self.slices.first().map(|s| s.begin).or(self.window_end);
            let t = match (self.releases.first(), boundary) {
                (Some(&r), Some(b)) if r <= b => {
                    self.releases = &self.releases[1..];
                    r
                }
                (_, Some(b)) => {
                    match self.slices.split_first() {
                        Some((_, rest)) => self.slices = rest,
                        None => self.window_end = None,
                    }
                    b
                }
                (Some(&r), None) => {
                    self.releases = &self.releases[1..];
                    r
                }
                (None, None) => return None,
            };
            if self.last != Some(t) {
                self.last = Some(t);
                return Some(t);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use sluice_policy::NodeBitmap;

    use super::*;

    /// Every candidate time of the map's and the releases' within `[from, to)`, collected the
    /// plain way.
    fn times_the_plain_way(map: &NodeSpaceMap, releases: &[i64], from: i64, to: i64) -> Vec<i64> {
        let mut all: Vec<i64> = map.slices().iter().map(|s| s.begin).collect();
        all.push(map.end());
        all.extend(releases);
        all.retain(|t| (from..to).contains(t));
        all.sort_unstable();
        all.dedup();
        all
    }

    #[test]
    fn merged_times_are_the_releases_and_boundaries_in_range_each_once() {
        let nodes = NodeBitmap::full(8);
        let mut map = NodeSpaceMap::new(0, 100, nodes.clone(), 0, 0, 64);
        let two: NodeBitmap = [0, 1].into_iter().collect();
        for (begin, end) in [(10, 20), (20, 40), (55, 70)] {
            map.add_reservation(begin, end, &two, &[], &[])
                .expect("room");
        }
        // Boundaries are 0, 10, 20, 40, 55, 70 and the window's end, 100.
        let releases = [5, 10, 33, 40, 41, 99, 100];
        for (from, to) in [(0, 100), (1, 101), (11, 56), (41, 41), (100, 200), (-5, 3)] {
            let merged: Vec<i64> = MergedTimes::within(&releases, &map, from, to).collect();
            assert_eq!(
                merged,
                times_the_plain_way(&map, &releases, from, to),
                "[{from}, {to})"
            );
        }
    }
}
