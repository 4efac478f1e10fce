//! Fluxion's time-aware planner: one resource type, a total count, spans over a time window.

use std::collections::BTreeMap;

/// Identifier of a span inside one [`Planner`]; ids start at 1 and are never reused.
pub type SpanId = i64;

/// Why a planner call was refused (Fluxion's EINVAL / ERANGE / ENOENT cases, with the reason).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlannerError {
    /// A planner window, span or query needs a duration of at least one time unit.
    #[error("duration must be at least 1, got {0}")]
    ZeroDuration(i64),
    /// A resource total or request above `i64::MAX` cannot be counted.
    #[error("resource count {0} is larger than the planner can count")]
    CountTooLarge(u64),
    /// The time (or span) lies outside the planner's window.
    #[error("time {start} (duration {duration}) lies outside the planner window [{base}, {end})")]
    OutsideWindow {
        /// Start of the refused time range.
        start: i64,
        /// Duration of the refused time range (0 for an instant).
        duration: i64,
        /// First instant of the window.
        base: i64,
        /// End of the window.
        end: i64,
    },
    /// More units were requested than the pool has in total (Fluxion's ERANGE).
    #[error("request of {request} exceeds the total of {total}")]
    RequestExceedsTotal {
        /// Units requested.
        request: u64,
        /// Units in the pool.
        total: u64,
    },
    /// The span does not fit: at `at` only `available` units are free.
    #[error("request of {request} does not fit: only {available} free at {at}")]
    DoesNotFit {
        /// Units requested.
        request: u64,
        /// Units free at the first instant where the request does not fit.
        available: i64,
        /// That instant.
        at: i64,
    },
    /// No span has this id (never added, or already removed).
    #[error("no span with id {0}")]
    UnknownSpan(SpanId),
    /// `reduce_span` was asked to free more units than the span holds.
    #[error("cannot free {to_remove} units from span {id}, which holds {request}")]
    ReduceExceedsSpan {
        /// The span.
        id: SpanId,
        /// Units asked to be freed.
        to_remove: u64,
        /// Units the span holds.
        request: u64,
    },
    /// A planner_multi call gave a count per resource type for a different number of types.
    #[error("expected a count for each of the {expected} resource types, got {got}")]
    WrongCountLength {
        /// Resource types the planner_multi tracks.
        expected: usize,
        /// Counts given.
        got: usize,
    },
    /// A planner_multi needs at least one resource type.
    #[error("a planner_multi needs at least one resource type")]
    NoResourceTypes,
    /// `avail_time_next` needs a preceding `avail_time_first` with no change to the plan since.
    #[error("avail_time_next without a current avail_time_first (or the plan changed since)")]
    NoIteration,
}

/// One span: `request` units in use over `[start, start + duration)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// First instant of the span.
    pub start: i64,
    /// Length of the span (at least 1).
    pub duration: i64,
    /// Units the span holds.
    pub request: u64,
}

/// A scheduled point: from `at` (the map key) until the next point, `remaining` units are free.
#[derive(Debug, Clone, Copy)]
struct Point {
    remaining: i64,
    /// Span boundaries at this instant; the base point holds one extra so it is never removed.
    refs: u32,
}

/// State of an `avail_time_first` / `avail_time_next` walk.
#[derive(Debug, Clone, Copy)]
struct Iteration {
    /// Next point to look at (the walk has returned or rejected everything before it).
    cursor: i64,
    duration: i64,
    request: i64,
}

/// A pool of `total` units of one resource type over the window `[base, base + duration)`.
///
/// The state is an ordered map of scheduled points (instants where the free count changes), so
/// every query is O(log n + k) for the k points it looks at, never a scan of each time unit.
#[derive(Debug, Clone)]
pub struct Planner {
    base: i64,
    end: i64,
    total: i64,
    points: BTreeMap<i64, Point>,
    spans: BTreeMap<SpanId, Span>,
    last_span_id: SpanId,
    iteration: Option<Iteration>,
}

impl Planner {
    /// A planner with `total` free units over `[base, base + duration)` (`planner_new`).
    pub fn new(base: i64, duration: i64, total: u64) -> Result<Self, PlannerError> {
        if duration < 1 {
            return Err(PlannerError::ZeroDuration(duration));
        }
        let total = i64::try_from(total).map_err(|_| PlannerError::CountTooLarge(total))?;
        // Fluxion gives every vertex a window of INT64_MAX from 0; saturate rather than overflow.
        let end = base.saturating_add(duration);
        let mut points = BTreeMap::new();
        points.insert(
            base,
            Point {
                remaining: total,
                refs: 1,
            },
        );
        Ok(Self {
            base,
            end,
            total,
            points,
            spans: BTreeMap::new(),
            last_span_id: 0,
            iteration: None,
        })
    }

    /// First instant of the window.
    pub fn base_time(&self) -> i64 {
        self.base
    }

    /// Length of the window.
    pub fn duration(&self) -> i64 {
        self.end - self.base
    }

    /// Units in the pool.
    pub fn total(&self) -> u64 {
        self.total as u64
    }

    /// Number of spans currently planned.
    pub fn span_count(&self) -> usize {
        self.spans.len()
    }

    /// The span with this id, if it is planned.
    pub fn span(&self, id: SpanId) -> Option<Span> {
        self.spans.get(&id).copied()
    }

    /// Plans `request` units over `[start, start + duration)` and returns the new span's id.
    ///
    /// Refused when the duration is below 1, the span starts before the window or ends after it
    /// (Fluxion's own bound lets the span's end be one past the window's end), the request
    /// exceeds the total, or the units are not free for the whole span (the first instant where
    /// they are not is in the error). A request of 0 is accepted and adds scheduled points only.
    pub fn add_span(
        &mut self,
        start: i64,
        duration: i64,
        request: u64,
    ) -> Result<SpanId, PlannerError> {
        if duration < 1 {
            return Err(PlannerError::ZeroDuration(duration));
        }
        let last = start
            .checked_add(duration)
            .filter(|&last| start >= self.base && last - 1 <= self.end)
            .ok_or_else(|| self.outside(start, duration))?;
        let count = self.count(request)?;
        if let Some((at, available)) = self.first_short(start, last, count) {
            return Err(PlannerError::DoesNotFit {
                request,
                available,
                at,
            });
        }
        self.pin_point(start);
        self.pin_point(last);
        for point in self.points.range_mut(start..last).map(|(_, p)| p) {
            point.remaining -= count;
        }
        self.last_span_id += 1;
        self.spans.insert(
            self.last_span_id,
            Span {
                start,
                duration,
                request,
            },
        );
        self.iteration = None;
        Ok(self.last_span_id)
    }

    /// Removes a span, freeing its units, and drops scheduled points no span needs any more.
    pub fn rem_span(&mut self, id: SpanId) -> Result<(), PlannerError> {
        let span = self
            .spans
            .remove(&id)
            .ok_or(PlannerError::UnknownSpan(id))?;
        let last = span.start + span.duration;
        for point in self.points.range_mut(span.start..last).map(|(_, p)| p) {
            point.remaining += span.request as i64;
        }
        self.unpin_point(span.start);
        self.unpin_point(last);
        self.iteration = None;
        Ok(())
    }

    /// Frees `to_remove` of a span's units (`planner_reduce_span`, for partial cancels); answers
    /// whether the span was removed, which happens when it is left with none.
    ///
    /// Freeing 0 units of a span that holds some changes nothing. Unlike Fluxion, which restarts
    /// its candidate tree here, a reduction also ends the current `avail_time` walk.
    pub fn reduce_span(&mut self, id: SpanId, to_remove: u64) -> Result<bool, PlannerError> {
        let span = self.span(id).ok_or(PlannerError::UnknownSpan(id))?;
        if to_remove == span.request {
            self.rem_span(id)?;
            return Ok(true);
        }
        if to_remove > span.request {
            return Err(PlannerError::ReduceExceedsSpan {
                id,
                to_remove,
                request: span.request,
            });
        }
        if to_remove > 0 {
            let last = span.start + span.duration;
            for point in self.points.range_mut(span.start..last).map(|(_, p)| p) {
                point.remaining += to_remove as i64;
            }
            if let Some(planned) = self.spans.get_mut(&id) {
                planned.request -= to_remove;
            }
            self.iteration = None;
        }
        Ok(false)
    }

    /// Units free at instant `at`, for `base ≤ at ≤ end` (Fluxion accepts the window's end).
    pub fn avail_resources_at(&self, at: i64) -> Result<i64, PlannerError> {
        if at < self.base || at > self.end {
            return Err(self.outside(at, 0));
        }
        Ok(self.state_at(at).1)
    }

    /// The fewest units free at any instant of `[at, at + duration)`.
    pub fn avail_resources_during(&self, at: i64, duration: i64) -> Result<i64, PlannerError> {
        let last = self.checked_range(at, duration)?;
        let (from, first) = self.state_at(at);
        Ok(self
            .points
            .range(from..last)
            .map(|(_, p)| p.remaining)
            .fold(first, i64::min))
    }

    /// Whether `request` units are free for the whole of `[at, at + duration)`.
    ///
    /// A range reaching past the window is refused (Fluxion's C interface answers "available"
    /// there by returning -1 from a boolean function; no caller relies on that).
    pub fn avail_during(&self, at: i64, duration: i64, request: u64) -> Result<bool, PlannerError> {
        if duration < 1 {
            return Err(PlannerError::ZeroDuration(duration));
        }
        let count = self.count(request)?;
        let last = self.checked_range(at, duration)?;
        Ok(self.first_short(at, last, count).is_none())
    }

    /// The earliest scheduled point `t ≥ on_or_after` where `request` units are free for
    /// `[t, t + duration)` and `t + duration ≤ end`; `None` when there is none (ENOENT).
    ///
    /// Answers are always scheduled points (the base or span boundaries), never arbitrary
    /// instants: on an empty planner, any `on_or_after` past the base finds nothing.
    /// [`Planner::avail_time_next`] continues the walk until the plan changes.
    pub fn avail_time_first(
        &mut self,
        on_or_after: i64,
        duration: i64,
        request: u64,
    ) -> Result<Option<i64>, PlannerError> {
        if on_or_after < self.base || on_or_after >= self.end {
            return Err(self.outside(on_or_after, duration.max(0)));
        }
        if duration < 1 {
            return Err(PlannerError::ZeroDuration(duration));
        }
        let request = self.count(request)?;
        self.iteration = Some(Iteration {
            cursor: on_or_after,
            duration,
            request,
        });
        self.avail_time_next()
    }

    /// The next answer of the walk [`Planner::avail_time_first`] started, in time order.
    pub fn avail_time_next(&mut self) -> Result<Option<i64>, PlannerError> {
        let mut walk = self.iteration.ok_or(PlannerError::NoIteration)?;
        let mut found = None;
        while let Some((&at, point)) = self.points.range(walk.cursor..).next() {
            if point.remaining < walk.request {
                walk.cursor = at.saturating_add(1);
                continue;
            }
            let last = at.checked_add(walk.duration);
            match self.first_short(at, last.unwrap_or(i64::MAX), walk.request) {
                // Every candidate before the short instant would cover it too: skip past it.
                Some((short, _)) => walk.cursor = short.saturating_add(1),
                None => {
                    // Later points end even later, so one past the window ends the walk.
                    found = last.filter(|&last| last <= self.end).map(|_| at);
                    walk.cursor = at.saturating_add(1);
                    break;
                }
            }
        }
        if found.is_none() {
            walk.cursor = i64::MAX;
        }
        self.iteration = Some(walk);
        Ok(found)
    }

    fn count(&self, request: u64) -> Result<i64, PlannerError> {
        match i64::try_from(request) {
            Ok(count) if count <= self.total => Ok(count),
            _ => Err(PlannerError::RequestExceedsTotal {
                request,
                total: self.total as u64,
            }),
        }
    }

    fn outside(&self, start: i64, duration: i64) -> PlannerError {
        PlannerError::OutsideWindow {
            start,
            duration,
            base: self.base,
            end: self.end,
        }
    }

    /// `at + duration`, when `[at, at + duration)` lies inside the window.
    fn checked_range(&self, at: i64, duration: i64) -> Result<i64, PlannerError> {
        if duration < 1 {
            return Err(PlannerError::ZeroDuration(duration));
        }
        at.checked_add(duration)
            .filter(|&last| at >= self.base && last <= self.end)
            .ok_or_else(|| self.outside(at, duration))
    }

    /// The scheduled point in force at `at` (the last one at or before it) and its free count.
    fn state_at(&self, at: i64) -> (i64, i64) {
        let (&from, point) = self
            .points
            .range(..=at)
            .next_back()
            .expect("the base point precedes every instant a caller may ask about");
        (from, point.remaining)
    }

    /// The first instant of `[at, last)` with fewer than `count` units free, and that count.
    fn first_short(&self, at: i64, last: i64, count: i64) -> Option<(i64, i64)> {
        let (_, remaining) = self.state_at(at);
        if remaining < count {
            return Some((at, remaining));
        }
        self.points
            .range(at.saturating_add(1)..last)
            .find(|(_, p)| p.remaining < count)
            .map(|(&t, p)| (t, p.remaining))
    }

    /// Adds one reference to the point at `at`, creating it with the state then in force.
    fn pin_point(&mut self, at: i64) {
        let (_, remaining) = self.state_at(at);
        self.points
            .entry(at)
            .or_insert(Point { remaining, refs: 0 })
            .refs += 1;
    }

    /// Drops one reference to the point at `at`, removing it when no span needs it.
    fn unpin_point(&mut self, at: i64) {
        if let Some(point) = self.points.get_mut(&at) {
            point.refs -= 1;
            if point.refs == 0 {
                self.points.remove(&at);
            }
        }
    }
}
