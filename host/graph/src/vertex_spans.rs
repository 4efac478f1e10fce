//! What jobs hold on one vertex: Fluxion keeps two planners per vertex (its own units, and an
//! exclusivity checker counting jobs), but a vertex is only ever asked how many of its units
//! are planned over a window and whether any job uses it then, and few jobs plan units of one
//! vertex at a time; short lists answer both and cost 8 bytes when nothing is held.

use smallvec::SmallVec;

/// One job's hold on a vertex over `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct JobSpan {
    pub start: i64,
    pub end: i64,
    pub jobid: u64,
    /// Units of the vertex's own pool the job plans (0 when it only passes through).
    pub planned: u32,
    /// Whether the job was allocated (not reserved) when it was planned.
    pub allocated: bool,
}

/// The spans on one vertex: those that plan its units apart from those that only pass through
/// it (an ancestor of what a job holds), since only the first count against its units and a
/// root is passed through by every job.
#[derive(Debug, Clone, Default)]
pub(crate) struct VertexSpans(Option<Box<Held>>);

#[derive(Debug, Clone, Default)]
struct Held {
    /// Inline for one: a leaf is planned by one job at a time in the common case, and it is
    /// most of a graph's vertices.
    planned: SmallVec<[JobSpan; 1]>,
    passing: Vec<JobSpan>,
}

impl VertexSpans {
    /// Every span, planning ones first.
    pub fn spans(&self) -> impl Iterator<Item = &JobSpan> {
        self.0
            .iter()
            .flat_map(|h| h.planned.iter().chain(h.passing.iter()))
    }

    pub fn push(&mut self, span: JobSpan) {
        let held = self.0.get_or_insert_with(Box::default);
        if span.planned > 0 {
            held.planned.push(span);
            return;
        }
        let list = &mut held.passing;
        list.reserve_exact(if list.capacity() > list.len() {
            0
        } else {
            list.len().max(1)
        });
        list.push(span);
    }

    /// Drops every span of `jobid`.
    pub fn remove_job(&mut self, jobid: u64) {
        if let Some(held) = &mut self.0 {
            held.planned.retain(|s| s.jobid != jobid);
            held.passing.retain(|s| s.jobid != jobid);
            if held.planned.is_empty() && held.passing.is_empty() {
                self.0 = None;
            }
        }
    }

    /// The units job `jobid` plans here, if it holds the vertex at all (0 when it only
    /// passes through).
    pub fn planned_by(&self, jobid: u64) -> Option<u32> {
        self.spans().find(|s| s.jobid == jobid).map(|s| s.planned)
    }

    /// Drops the job's span only where it plans no units: a partial cancel takes an
    /// ancestor's exclusivity span but leaves its planned units.
    pub fn remove_passing(&mut self, jobid: u64) {
        if self.planned_by(jobid) == Some(0) {
            self.remove_job(jobid);
        }
    }

    /// Sets the units job `jobid` plans here, keeping its window: a replayed R plans what
    /// the R says, not what the update walk would.
    pub fn set_planned(&mut self, jobid: u64, planned: u32) {
        let Some(span) = self.spans().find(|s| s.jobid == jobid).copied() else {
            return;
        };
        if span.planned != planned {
            self.remove_job(jobid);
            self.push(JobSpan { planned, ..span });
        }
    }

    /// The most units planned at any instant of `[at, end)` (the planner's
    /// `total - avail_resources_during`): the sum peaks at `at` or where a span starts.
    pub fn planned_peak(&self, at: i64, end: i64) -> i64 {
        let Some(held) = &self.0 else { return 0 };
        let spans = &held.planned;
        let at_instant = |t: i64| -> i64 {
            spans
                .iter()
                .filter(|s| s.start <= t && t < s.end)
                .map(|s| i64::from(s.planned))
                .sum()
        };
        let mut peak = at_instant(at);
        for s in spans.iter().filter(|s| s.start > at && s.start < end) {
            peak = peak.max(at_instant(s.start));
        }
        peak
    }

    /// Whether some job holds the vertex during `[at, end)` (the exclusivity checker).
    pub fn in_use(&self, at: i64, end: i64) -> bool {
        self.spans().any(|s| s.start < end && at < s.end)
    }

    /// Whether an allocated job planned units here (Fluxion's non-empty `allocations`).
    pub fn allocated(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|h| h.planned.iter().any(|s| s.allocated))
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.0.as_ref().map_or(0, |h| {
            let spilled = if h.planned.spilled() {
                h.planned.capacity()
            } else {
                0
            };
            std::mem::size_of::<Held>()
                + (spilled + h.passing.capacity()) * std::mem::size_of::<JobSpan>()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{JobSpan, VertexSpans};

    fn span(start: i64, end: i64, jobid: u64, planned: u32) -> JobSpan {
        JobSpan {
            start,
            end,
            jobid,
            planned,
            allocated: true,
        }
    }

    #[test]
    fn peaks_overlaps_and_removal() {
        let mut v = VertexSpans::default();
        assert_eq!(v.planned_peak(0, 10), 0);
        assert!(!v.in_use(0, 10));
        v.push(span(0, 10, 1, 2));
        v.push(span(5, 20, 2, 3));
        v.push(span(20, 30, 3, 0));
        assert_eq!(v.planned_peak(0, 5), 2);
        assert_eq!(v.planned_peak(0, 6), 5);
        assert_eq!(v.planned_peak(10, 20), 3);
        assert_eq!(v.planned_peak(20, 25), 0);
        assert!(v.in_use(29, 40));
        assert!(!v.in_use(30, 40));
        v.remove_job(2);
        assert_eq!(v.planned_peak(0, 20), 2);
        v.remove_job(1);
        v.remove_job(3);
        assert!(v.spans().next().is_none() && v.0.is_none());
    }
}
