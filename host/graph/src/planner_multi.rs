//! Fluxion's `planner_multi`: one [`Planner`] per resource type over a shared window.

use std::collections::BTreeMap;

use smallvec::SmallVec;

use crate::planner::{Planner, PlannerError, SpanId};

/// Several resource types planned together: a span holds a count of each type at once.
///
/// Candidate times come from the first type's planner; a time is accepted when every other type
/// has its count free for the whole duration (reference §5.1).
#[derive(Debug, Clone)]
pub struct PlannerMulti {
    types: Vec<String>,
    planners: Vec<Planner>,
    /// Per multi-span id, the id of its span in each type's planner (inline for the one or
    /// two types the default prune filters track).
    spans: BTreeMap<SpanId, SmallVec<[SpanId; 2]>>,
    next_span_id: SpanId,
    /// Counts of the current `avail_time_first` walk (the duration is in planner 0's walk).
    walk: Option<(i64, Vec<u64>)>,
}

impl PlannerMulti {
    /// A planner_multi over `[base, base + duration)` with a `(type, total)` pair per type.
    pub fn new(base: i64, duration: i64, resources: &[(&str, u64)]) -> Result<Self, PlannerError> {
        if resources.is_empty() {
            return Err(PlannerError::NoResourceTypes);
        }
        let planners = resources
            .iter()
            .map(|&(_, total)| Planner::new(base, duration, total))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            types: resources.iter().map(|&(t, _)| t.to_owned()).collect(),
            planners,
            spans: BTreeMap::new(),
            next_span_id: 0,
            walk: None,
        })
    }

    /// The tracked resource types, in the order counts are given.
    pub fn resource_types(&self) -> &[String] {
        &self.types
    }

    /// The planner of the `i`-th resource type.
    pub fn planner_at(&self, i: usize) -> Option<&Planner> {
        self.planners.get(i)
    }

    /// How many spans are planned (`planner_multi_span_size`).
    pub fn span_count(&self) -> usize {
        self.spans.len()
    }

    /// First instant of the shared window.
    pub fn base_time(&self) -> i64 {
        self.planners[0].base_time()
    }

    /// Length of the shared window.
    pub fn duration(&self) -> i64 {
        self.planners[0].duration()
    }

    /// Plans `requests[i]` units of each type `i` over `[start, start + duration)`.
    ///
    /// All or nothing: when one type refuses, the spans already added for the others are
    /// removed again. As in Fluxion, ids count up from 0 and a refused span still uses one.
    pub fn add_span(
        &mut self,
        start: i64,
        duration: i64,
        requests: &[u64],
    ) -> Result<SpanId, PlannerError> {
        self.check_len(requests)?;
        let id = self.next_span_id;
        self.next_span_id += 1;
        let mut added = SmallVec::<[SpanId; 2]>::new();
        for (planner, &request) in self.planners.iter_mut().zip(requests) {
            match planner.add_span(start, duration, request) {
                Ok(span) => added.push(span),
                Err(refusal) => {
                    for (planner, span) in self.planners.iter_mut().zip(added) {
                        planner
                            .rem_span(span)
                            .expect("a span added just now is still planned");
                    }
                    return Err(refusal);
                }
            }
        }
        self.spans.insert(id, added);
        self.walk = None;
        Ok(id)
    }

    /// Removes a span from every type's planner.
    pub fn rem_span(&mut self, id: SpanId) -> Result<(), PlannerError> {
        let spans = self
            .spans
            .remove(&id)
            .ok_or(PlannerError::UnknownSpan(id))?;
        // A type a partial cancel already emptied has no span left (-1).
        for (planner, span) in self.planners.iter_mut().zip(spans) {
            if span >= 0 {
                planner.rem_span(span)?;
            }
        }
        self.walk = None;
        Ok(())
    }

    /// Frees part of a span (`planner_multi_reduce_span`, for partial cancels): `reduced`
    /// units of each named type; types this planner does not track are skipped, and types
    /// not named are reduced by 0, which removes their span when it holds nothing. Answers
    /// whether the whole span is gone, which happens when every type's span is.
    pub fn reduce_span(
        &mut self,
        id: SpanId,
        reduced: &[(&str, u64)],
    ) -> Result<bool, PlannerError> {
        let mut spans = self
            .spans
            .get(&id)
            .cloned()
            .ok_or(PlannerError::UnknownSpan(id))?;
        let mut amounts = vec![0u64; self.types.len()];
        for &(kind, count) in reduced {
            if let Some(i) = self.types.iter().position(|t| t == kind) {
                amounts[i] = count;
            }
        }
        for (i, planner) in self.planners.iter_mut().enumerate() {
            if spans[i] < 0 {
                // Emptied by an earlier reduction: Fluxion's reduce fails on the inactive
                // span and moves on.
                continue;
            }
            if planner.reduce_span(spans[i], amounts[i])? {
                spans[i] = -1;
            }
        }
        self.walk = None;
        if spans.iter().all(|&s| s < 0) {
            self.spans.remove(&id);
            return Ok(true);
        }
        self.spans.insert(id, spans);
        Ok(false)
    }

    /// Units of each type free at instant `at`.
    pub fn avail_resources_at(&self, at: i64) -> Result<Vec<i64>, PlannerError> {
        self.planners
            .iter()
            .map(|p| p.avail_resources_at(at))
            .collect()
    }

    /// The fewest units of each type free at any instant of `[at, at + duration)`.
    pub fn avail_resources_during(&self, at: i64, duration: i64) -> Result<Vec<i64>, PlannerError> {
        self.planners
            .iter()
            .map(|p| p.avail_resources_during(at, duration))
            .collect()
    }

    /// Whether `requests[i]` units of every type `i` are free for all of `[at, at + duration)`.
    pub fn avail_during(
        &self,
        at: i64,
        duration: i64,
        requests: &[u64],
    ) -> Result<bool, PlannerError> {
        self.check_len(requests)?;
        for (planner, &request) in self.planners.iter().zip(requests) {
            if !planner.avail_during(at, duration, request)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The earliest scheduled point of the first type's planner, at or after `on_or_after`,
    /// where every type has its count free for `[t, t + duration)`; `None` when there is none.
    ///
    /// A count above its type's total is refused up front (Fluxion would walk every candidate
    /// and then answer ENOENT).
    pub fn avail_time_first(
        &mut self,
        on_or_after: i64,
        duration: i64,
        requests: &[u64],
    ) -> Result<Option<i64>, PlannerError> {
        self.check_len(requests)?;
        for (planner, &request) in self.planners.iter().zip(requests) {
            if request > planner.total() {
                return Err(PlannerError::RequestExceedsTotal {
                    request,
                    total: planner.total(),
                });
            }
        }
        self.walk = None;
        let first = self.planners[0].avail_time_first(on_or_after, duration, requests[0])?;
        self.walk = Some((duration, requests.to_vec()));
        self.accept_from(first)
    }

    /// The next answer of the walk [`PlannerMulti::avail_time_first`] started, in time order.
    pub fn avail_time_next(&mut self) -> Result<Option<i64>, PlannerError> {
        if self.walk.is_none() {
            return Err(PlannerError::NoIteration);
        }
        let candidate = self.planners[0].avail_time_next()?;
        self.accept_from(candidate)
    }

    /// From `candidate` on, the first of planner 0's candidates the other types accept.
    fn accept_from(&mut self, mut candidate: Option<i64>) -> Result<Option<i64>, PlannerError> {
        let (duration, requests) = self.walk.clone().ok_or(PlannerError::NoIteration)?;
        while let Some(at) = candidate {
            let mut others = self.planners[1..].iter().zip(&requests[1..]);
            if others.try_fold(true, |ok, (p, &request)| {
                Ok::<_, PlannerError>(ok && p.avail_during(at, duration, request)?)
            })? {
                return Ok(Some(at));
            }
            candidate = self.planners[0].avail_time_next()?;
        }
        Ok(None)
    }

    fn check_len(&self, requests: &[u64]) -> Result<(), PlannerError> {
        if requests.len() == self.planners.len() {
            Ok(())
        } else {
            Err(PlannerError::WrongCountLength {
                expected: self.planners.len(),
                got: requests.len(),
            })
        }
    }
}
