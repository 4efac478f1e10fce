//! Planner rules (reference §5.1, Fluxion's planner.h): spans added → query → expected answer.

use proptest::prelude::*;
use sluice_graph::{Planner, PlannerError, PlannerMulti, Span};

/// A planner over `[0, end)` with `total` units and the given `(start, duration, request)` spans.
fn planner(end: i64, total: u64, spans: &[(i64, i64, u64)]) -> Planner {
    let mut p = Planner::new(0, end, total).unwrap();
    for &(start, duration, request) in spans {
        p.add_span(start, duration, request).unwrap();
    }
    p
}

/// Every answer of one `avail_time_first` / `avail_time_next` walk, in order.
fn walk(p: &mut Planner, at: i64, duration: i64, request: u64) -> Vec<i64> {
    let mut times = Vec::new();
    let mut next = p.avail_time_first(at, duration, request).unwrap();
    while let Some(t) = next {
        times.push(t);
        next = p.avail_time_next().unwrap();
    }
    times
}

#[test]
fn a_new_planner_has_its_total_free_over_the_whole_window() {
    let p = planner(100, 8, &[]);
    assert_eq!(p.avail_resources_at(0), Ok(8));
    assert_eq!(p.avail_resources_at(99), Ok(8));
    assert_eq!(p.avail_resources_during(0, 100), Ok(8));
    assert_eq!((p.base_time(), p.duration(), p.total()), (0, 100, 8));
}

#[test]
fn a_window_needs_a_duration_of_at_least_one() {
    assert_eq!(
        Planner::new(0, 0, 4).unwrap_err(),
        PlannerError::ZeroDuration(0)
    );
    assert_eq!(
        Planner::new(0, 10, u64::MAX).unwrap_err(),
        PlannerError::CountTooLarge(u64::MAX)
    );
}

#[test]
fn a_span_holds_its_units_from_its_start_inclusive_to_its_end_exclusive() {
    let p = planner(100, 8, &[(10, 20, 3)]);
    assert_eq!(p.avail_resources_at(9), Ok(8));
    assert_eq!(p.avail_resources_at(10), Ok(5));
    assert_eq!(p.avail_resources_at(29), Ok(5));
    assert_eq!(p.avail_resources_at(30), Ok(8));
}

#[test]
fn span_ids_count_up_from_one_and_refusals_consume_none() {
    let mut p = planner(100, 4, &[]);
    assert_eq!(p.add_span(0, 10, 4), Ok(1));
    assert!(p.add_span(5, 10, 1).is_err());
    assert_eq!(p.add_span(10, 10, 1), Ok(2));
    p.rem_span(1).unwrap();
    assert_eq!(p.add_span(0, 10, 1), Ok(3));
    assert_eq!(
        p.span(2),
        Some(Span {
            start: 10,
            duration: 10,
            request: 1
        })
    );
    assert_eq!(p.span_count(), 2);
}

#[test]
fn a_span_that_does_not_fit_is_refused_with_the_first_short_instant() {
    let mut p = planner(100, 4, &[(20, 10, 3)]);
    assert_eq!(
        p.add_span(15, 10, 2),
        Err(PlannerError::DoesNotFit {
            request: 2,
            available: 1,
            at: 20
        })
    );
    assert_eq!(
        p.add_span(25, 10, 2),
        Err(PlannerError::DoesNotFit {
            request: 2,
            available: 1,
            at: 25
        })
    );
    // Touching the span's exclusive end is no overlap.
    assert!(p.add_span(30, 10, 4).is_ok());
    assert!(p.add_span(10, 10, 4).is_ok());
    assert_eq!(p.avail_resources_during(0, 100), Ok(0));
}

#[test]
fn a_request_above_the_total_is_a_range_error() {
    let mut p = planner(100, 4, &[]);
    let exceeds = PlannerError::RequestExceedsTotal {
        request: 5,
        total: 4,
    };
    assert_eq!(p.add_span(0, 10, 5), Err(exceeds.clone()));
    assert_eq!(p.avail_during(0, 10, 5), Err(exceeds.clone()));
    assert_eq!(p.avail_time_first(0, 10, 5), Err(exceeds));
}

#[test]
fn a_span_of_duration_zero_is_refused() {
    let mut p = planner(100, 4, &[]);
    assert_eq!(p.add_span(0, 0, 1), Err(PlannerError::ZeroDuration(0)));
    assert_eq!(p.avail_during(0, 0, 1), Err(PlannerError::ZeroDuration(0)));
    assert_eq!(
        p.avail_time_first(0, 0, 1),
        Err(PlannerError::ZeroDuration(0))
    );
    assert_eq!(
        p.avail_resources_during(0, 0),
        Err(PlannerError::ZeroDuration(0))
    );
}

#[test]
fn a_span_outside_the_window_is_refused_but_its_end_may_be_one_past_it() {
    let mut p = Planner::new(10, 100, 4).unwrap();
    let before = p.add_span(9, 5, 1).unwrap_err();
    assert!(matches!(
        before,
        PlannerError::OutsideWindow {
            start: 9,
            base: 10,
            end: 110,
            ..
        }
    ));
    assert!(matches!(
        p.add_span(105, 7, 1),
        Err(PlannerError::OutsideWindow { .. })
    ));
    // Fluxion's bound is `start + duration - 1 <= end`.
    assert_eq!(p.add_span(105, 6, 1), Ok(1));
    assert_eq!(p.avail_resources_at(110), Ok(3));
}

#[test]
fn a_request_of_zero_always_fits_and_changes_no_count() {
    let mut p = planner(100, 2, &[(0, 50, 2)]);
    assert_eq!(p.add_span(10, 10, 0), Ok(2));
    assert_eq!(p.avail_resources_at(15), Ok(0));
    assert_eq!(p.avail_during(0, 100, 0), Ok(true));
    // Its boundaries are scheduled points, so they are candidates.
    assert_eq!(walk(&mut p, 1, 5, 0), vec![10, 20, 50]);
}

#[test]
fn removing_a_span_frees_its_units_and_its_points() {
    let mut p = planner(100, 4, &[(10, 20, 3), (20, 20, 1)]);
    assert_eq!(p.avail_resources_at(25), Ok(0));
    p.rem_span(1).unwrap();
    assert_eq!(p.avail_resources_at(15), Ok(4));
    assert_eq!(p.avail_resources_at(25), Ok(3));
    // The removed span's start (10) and end (30) are no longer candidates.
    assert_eq!(walk(&mut p, 1, 5, 4), vec![40]);
    assert_eq!(p.rem_span(1), Err(PlannerError::UnknownSpan(1)));
    assert_eq!(p.rem_span(7), Err(PlannerError::UnknownSpan(7)));
}

#[test]
fn reducing_a_span_frees_part_of_its_units_and_removes_it_when_none_are_left() {
    let mut p = planner(100, 8, &[(10, 10, 5)]);
    assert_eq!(p.reduce_span(1, 0), Ok(false));
    assert_eq!(p.reduce_span(1, 2), Ok(false));
    assert_eq!(p.avail_resources_at(10), Ok(5));
    assert_eq!(p.span(1).map(|s| s.request), Some(3));
    assert_eq!(
        p.reduce_span(1, 4),
        Err(PlannerError::ReduceExceedsSpan {
            id: 1,
            to_remove: 4,
            request: 3
        })
    );
    assert_eq!(p.reduce_span(1, 3), Ok(true));
    assert_eq!(p.span_count(), 0);
    assert_eq!(p.avail_resources_at(10), Ok(8));
    // A span of 0 units is removed by freeing 0 (Fluxion's rule for planner_multi's zeros).
    p.add_span(10, 10, 0).unwrap();
    assert_eq!(p.reduce_span(2, 0), Ok(true));
    assert_eq!(p.reduce_span(2, 0), Err(PlannerError::UnknownSpan(2)));
    // Its points went with it: nothing but the base is a candidate.
    assert_eq!(walk(&mut p, 0, 5, 8), vec![0]);
}

#[test]
fn avail_during_checks_every_instant_of_the_range() {
    let p = planner(100, 4, &[(20, 10, 3)]);
    assert_eq!(p.avail_during(0, 20, 4), Ok(true));
    assert_eq!(p.avail_during(0, 21, 4), Ok(false));
    assert_eq!(p.avail_during(25, 10, 1), Ok(true));
    assert_eq!(p.avail_during(25, 10, 2), Ok(false));
    assert_eq!(p.avail_during(30, 70, 4), Ok(true));
    assert!(matches!(
        p.avail_during(30, 71, 1),
        Err(PlannerError::OutsideWindow { .. })
    ));
}

#[test]
fn avail_resources_during_is_the_minimum_over_the_range() {
    let p = planner(100, 8, &[(10, 10, 3), (15, 10, 2)]);
    assert_eq!(p.avail_resources_during(0, 10), Ok(8));
    assert_eq!(p.avail_resources_during(0, 11), Ok(5));
    assert_eq!(p.avail_resources_during(12, 20), Ok(3));
    assert_eq!(p.avail_resources_during(20, 10), Ok(6));
    assert!(p.avail_resources_during(50, 51).is_err());
}

#[test]
fn avail_resources_at_accepts_the_window_end_but_nothing_past_it() {
    let p = Planner::new(5, 10, 3).unwrap();
    assert_eq!(p.avail_resources_at(15), Ok(3));
    assert!(matches!(
        p.avail_resources_at(16),
        Err(PlannerError::OutsideWindow { start: 16, .. })
    ));
    assert!(p.avail_resources_at(4).is_err());
}

#[test]
fn avail_time_first_answers_the_earliest_scheduled_point_that_fits() {
    // Example 2's shape: one unit, back-to-back one-hour jobs; reservations land on span ends.
    let mut p = planner(86_400, 1, &[(0, 3600, 1), (3600, 3600, 1)]);
    assert_eq!(p.avail_time_first(1, 3600, 1), Ok(Some(7200)));
    assert_eq!(p.avail_time_next(), Ok(None));
}

#[test]
fn answers_are_scheduled_points_never_arbitrary_instants() {
    let mut p = planner(100, 4, &[]);
    assert_eq!(p.avail_time_first(0, 10, 4), Ok(Some(0)));
    // No point at or after 1 on an empty planner: ENOENT, although 1 is free.
    assert_eq!(p.avail_time_first(1, 10, 4), Ok(None));
}

#[test]
fn avail_time_next_walks_the_later_points_in_time_order() {
    let mut p = planner(100, 4, &[(10, 10, 2), (30, 10, 4), (50, 10, 1)]);
    // Points 0 10 20 30 40 50 60; free 4, 2, 4, 0, 4, 3, 4 from each.
    assert_eq!(walk(&mut p, 0, 15, 2), vec![0, 10, 40, 50, 60]);
    assert_eq!(walk(&mut p, 0, 15, 3), vec![40, 50, 60]);
    assert_eq!(walk(&mut p, 11, 5, 4), vec![20, 40, 60]);
}

#[test]
fn a_candidate_whose_range_passes_the_window_end_ends_the_walk() {
    let mut p = planner(100, 4, &[(0, 80, 4), (80, 10, 1)]);
    assert_eq!(walk(&mut p, 0, 20, 3), vec![80]);
    assert_eq!(walk(&mut p, 0, 20, 4), Vec::<i64>::new());
    assert_eq!(walk(&mut p, 0, 10, 4), vec![90]);
}

#[test]
fn avail_time_first_needs_an_instant_inside_the_window() {
    let mut p = Planner::new(10, 100, 4).unwrap();
    assert!(matches!(
        p.avail_time_first(9, 1, 1),
        Err(PlannerError::OutsideWindow { .. })
    ));
    assert!(matches!(
        p.avail_time_first(110, 1, 1),
        Err(PlannerError::OutsideWindow { .. })
    ));
    assert_eq!(p.avail_time_first(10, 100, 4), Ok(Some(10)));
    assert_eq!(p.avail_time_first(10, 101, 4), Ok(None));
}

#[test]
fn changing_the_plan_ends_the_walk() {
    let mut p = planner(100, 4, &[(10, 10, 1)]);
    assert_eq!(p.avail_time_next(), Err(PlannerError::NoIteration));
    assert_eq!(p.avail_time_first(0, 5, 1), Ok(Some(0)));
    let id = p.add_span(50, 10, 1).unwrap();
    assert_eq!(p.avail_time_next(), Err(PlannerError::NoIteration));
    assert_eq!(p.avail_time_first(0, 5, 1), Ok(Some(0)));
    p.rem_span(id).unwrap();
    assert_eq!(p.avail_time_next(), Err(PlannerError::NoIteration));
}

#[test]
fn the_vertex_window_of_fluxion_does_not_overflow() {
    // Every graph vertex gets planner_new(0, INT64_MAX, size).
    let mut p = Planner::new(0, i64::MAX, 64).unwrap();
    let id = p.add_span(0, 3600, 64).unwrap();
    assert_eq!(p.avail_time_first(1, i64::MAX - 3600, 1), Ok(Some(3600)));
    assert_eq!(p.avail_time_first(1, i64::MAX - 3599, 1), Ok(None));
    assert!(p.add_span(i64::MAX - 1, 2, 1).is_err());
    p.rem_span(id).unwrap();
    assert_eq!(p.avail_during(0, i64::MAX, 64), Ok(true));
}

/// A planner_multi over `[0, 100)` with 4 cores and 2 nodes, as a subtree planner tracks them.
fn cores_and_nodes() -> PlannerMulti {
    PlannerMulti::new(0, 100, &[("core", 4), ("node", 2)]).unwrap()
}

#[test]
fn a_multi_span_holds_a_count_of_every_type() {
    let mut p = cores_and_nodes();
    assert_eq!(p.add_span(10, 10, &[3, 1]), Ok(0));
    assert_eq!(p.add_span(10, 10, &[1, 1]), Ok(1));
    assert_eq!(p.avail_resources_at(15), Ok(vec![0, 0]));
    assert_eq!(p.avail_resources_at(20), Ok(vec![4, 2]));
    assert_eq!(p.avail_resources_during(0, 11), Ok(vec![0, 0]));
    assert_eq!(p.resource_types(), ["core", "node"]);
    assert_eq!((p.base_time(), p.duration()), (0, 100));
}

#[test]
fn a_refused_multi_span_leaves_no_trace_but_uses_an_id() {
    let mut p = cores_and_nodes();
    p.add_span(0, 10, &[1, 2]).unwrap();
    // Cores fit, nodes do not: the core span added on the way is taken back.
    assert_eq!(
        p.add_span(5, 10, &[1, 1]),
        Err(PlannerError::DoesNotFit {
            request: 1,
            available: 0,
            at: 5
        })
    );
    assert_eq!(p.avail_resources_at(5), Ok(vec![3, 0]));
    assert_eq!(p.planner_at(0).unwrap().span_count(), 1);
    assert_eq!(p.add_span(10, 10, &[1, 1]), Ok(2));
    p.rem_span(0).unwrap();
    assert_eq!(p.avail_resources_at(5), Ok(vec![4, 2]));
    assert_eq!(p.rem_span(0), Err(PlannerError::UnknownSpan(0)));
}

#[test]
fn multi_counts_must_match_the_types() {
    let mut p = cores_and_nodes();
    let wrong = PlannerError::WrongCountLength {
        expected: 2,
        got: 1,
    };
    assert_eq!(p.add_span(0, 10, &[1]), Err(wrong.clone()));
    assert_eq!(p.avail_during(0, 10, &[1]), Err(wrong.clone()));
    assert_eq!(p.avail_time_first(0, 10, &[1]), Err(wrong));
    assert_eq!(
        p.avail_time_first(0, 10, &[1, 3]),
        Err(PlannerError::RequestExceedsTotal {
            request: 3,
            total: 2
        })
    );
    assert_eq!(
        PlannerMulti::new(0, 10, &[]).unwrap_err(),
        PlannerError::NoResourceTypes
    );
}

#[test]
fn multi_candidates_come_from_the_first_type_and_need_every_type_free() {
    let mut p = cores_and_nodes();
    p.add_span(0, 10, &[4, 0]).unwrap();
    p.add_span(10, 20, &[0, 2]).unwrap();
    p.add_span(40, 10, &[2, 0]).unwrap();
    // Core points 0 10 30 40 50 (the node span adds core points too, with request 0).
    assert_eq!(p.avail_during(10, 5, &[4, 0]), Ok(true));
    assert_eq!(p.avail_during(10, 5, &[4, 1]), Ok(false));
    assert_eq!(p.avail_time_first(1, 5, &[1, 1]), Ok(Some(30)));
    assert_eq!(p.avail_time_next(), Ok(Some(40)));
    assert_eq!(p.avail_time_next(), Ok(Some(50)));
    assert_eq!(p.avail_time_next(), Ok(None));
    assert_eq!(p.avail_time_first(1, 15, &[3, 1]), Ok(Some(50)));
    p.rem_span(1).unwrap();
    assert_eq!(p.avail_time_next(), Err(PlannerError::NoIteration));
}

/// Window length of the random schedules; spans may end one past it (Fluxion's bound).
const END: i64 = 24;

/// Units in use at each instant `0..=END`, counted one time unit at a time.
fn in_use(spans: &[(i64, i64, u64)]) -> Vec<u64> {
    let mut used = vec![0; END as usize + 1];
    for &(start, duration, request) in spans {
        for t in start..start + duration {
            used[t as usize] += request;
        }
    }
    used
}

/// The walk computed by brute force: scheduled points ≥ `at`, checked one instant at a time.
fn brute_walk(total: u64, spans: &[(i64, i64, u64)], at: i64, d: i64, request: u64) -> Vec<i64> {
    let spans: Vec<_> = spans.iter().map(|&(s, dur, r)| (s, dur, vec![r])).collect();
    brute_multi_walk(&[total], &spans, at, d, &[request])
}

/// The planner_multi walk by brute force: candidates are the first type's scheduled points.
fn brute_multi_walk(
    totals: &[u64],
    spans: &[(i64, i64, Vec<u64>)],
    at: i64,
    d: i64,
    requests: &[u64],
) -> Vec<i64> {
    let used: Vec<Vec<u64>> = (0..totals.len())
        .map(|i| {
            in_use(
                &spans
                    .iter()
                    .map(|(s, dur, r)| (*s, *dur, r[i]))
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    let mut points: Vec<i64> = std::iter::once(0)
        .chain(spans.iter().flat_map(|&(s, dur, _)| [s, s + dur]))
        .filter(|&t| t >= at)
        .collect();
    points.sort_unstable();
    points.dedup();
    // Nothing is in use past END + 1, the furthest a span may end.
    let fits = |i: usize, t: i64| {
        (t..(t + d).min(END + 1)).all(|u| totals[i] - used[i][u as usize] >= requests[i])
    };
    let mut times = Vec::new();
    for t in points.into_iter().filter(|&t| fits(0, t)) {
        // The first type's first fitting point whose range passes the window's end ends the walk.
        if t + d > END {
            break;
        }
        if (1..totals.len()).all(|i| fits(i, t)) {
            times.push(t);
        }
    }
    times
}

proptest! {
    #[test]
    fn avail_time_first_and_next_agree_with_a_per_instant_check(
        total in 0u64..5,
        tries in prop::collection::vec((0i64..END, 1i64..10, 0u64..5), 0..12),
        removals in prop::collection::vec(any::<prop::sample::Index>(), 0..4),
        reductions in prop::collection::vec((any::<prop::sample::Index>(), 0u64..5), 0..4),
        at in 0i64..END,
        d in 1i64..12,
        request in 0u64..5,
    ) {
        let mut p = Planner::new(0, END, total).unwrap();
        let mut live: Vec<(i64, (i64, i64, u64))> = Vec::new();
        for (start, duration, req) in tries {
            let expected_ok = req <= total
                && start + duration - 1 <= END
                && {
                    let used = in_use(&live.iter().map(|l| l.1).collect::<Vec<_>>());
                    (start..start + duration).all(|t| used[t as usize] + req <= total)
                };
            match p.add_span(start, duration, req) {
                Ok(id) => {
                    prop_assert!(expected_ok);
                    live.push((id, (start, duration, req)));
                }
                Err(_) => prop_assert!(!expected_ok),
            }
        }
        for index in removals {
            if live.is_empty() {
                break;
            }
            let (id, _) = live.remove(index.index(live.len()));
            p.rem_span(id).unwrap();
        }
        for (index, to_remove) in reductions {
            if live.is_empty() {
                break;
            }
            let k = index.index(live.len());
            let (id, (_, _, held)) = live[k];
            match p.reduce_span(id, to_remove) {
                Ok(true) => {
                    prop_assert_eq!(to_remove, held);
                    live.remove(k);
                }
                Ok(false) => {
                    prop_assert!(to_remove < held);
                    live[k].1 .2 -= to_remove;
                }
                Err(_) => prop_assert!(to_remove > held),
            }
        }
        let spans: Vec<_> = live.iter().map(|l| l.1).collect();
        let used = in_use(&spans);
        for t in 0..=END {
            prop_assert_eq!(p.avail_resources_at(t).unwrap(), total as i64 - used[t as usize] as i64);
        }
        if request > total {
            prop_assert!(p.avail_time_first(at, d, request).is_err());
            return Ok(());
        }
        prop_assert_eq!(walk(&mut p, at, d, request), brute_walk(total, &spans, at, d, request));
        if at + d <= END {
            let fits = (at..at + d).all(|t| used[t as usize] + request <= total);
            prop_assert_eq!(p.avail_during(at, d, request), Ok(fits));
        }
    }

    #[test]
    fn planner_multi_walk_agrees_with_a_per_instant_check(
        totals in (0u64..4, 0u64..4),
        tries in prop::collection::vec((0i64..END, 1i64..10, 0u64..4, 0u64..4), 0..10),
        at in 0i64..END,
        d in 1i64..12,
        requests in (0u64..4, 0u64..4),
    ) {
        let totals = [totals.0, totals.1];
        let requests = [requests.0, requests.1];
        let mut p = PlannerMulti::new(0, END, &[("core", totals[0]), ("node", totals[1])]).unwrap();
        let mut live = Vec::new();
        for (start, duration, cores, nodes) in tries {
            if p.add_span(start, duration, &[cores, nodes]).is_ok() {
                live.push((start, duration, vec![cores, nodes]));
            }
        }
        for (i, total) in totals.iter().enumerate() {
            let used = in_use(&live.iter().map(|(s, dur, r)| (*s, *dur, r[i])).collect::<Vec<_>>());
            prop_assert!(used.iter().all(|u| u <= total));
            // A refused span left nothing behind in any type's planner.
            for t in 0..=END {
                let free = p.avail_resources_at(t).unwrap()[i];
                prop_assert_eq!(free, *total as i64 - used[t as usize] as i64);
            }
        }
        if requests[0] > totals[0] || requests[1] > totals[1] {
            prop_assert!(p.avail_time_first(at, d, &requests).is_err());
            return Ok(());
        }
        let mut times = Vec::new();
        let mut next = p.avail_time_first(at, d, &requests).unwrap();
        while let Some(t) = next {
            times.push(t);
            next = p.avail_time_next().unwrap();
        }
        prop_assert_eq!(times, brute_multi_walk(&totals, &live, at, d, &requests));
    }
}
