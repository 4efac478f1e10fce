//! A jobspec's resources as the traverser walks them: types numbered by the graph, and each
//! request's subtree aggregates of the pruning types (Fluxion's `prime_jobspec`).

use crate::graph::ResourceGraph;
use crate::jobspec::Resource;
use crate::jobspec_count::Count;
use crate::prune_filters::PruneFilters;

/// Type number of a jobspec type the graph has never seen: it matches no vertex.
pub(crate) const UNKNOWN_TYPE: u32 = u32::MAX;

/// One resource request of a jobspec.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    /// The type's number in the graph ([`UNKNOWN_TYPE`] when the graph lacks it).
    pub kind: u32,
    /// Whether this is a `slot`.
    pub slot: bool,
    pub count: Count,
    pub exclusive: Option<bool>,
    pub label: String,
    pub with: Vec<Request>,
    /// Per pruning type, how many units the subtree below this request asks for.
    pub aggregates: Vec<(u32, i64)>,
}

/// Adds `count` to `kind`'s entry when `kind` is a pruning type (`accum_if`).
pub(crate) fn accum_if(filters: &PruneFilters, kind: u32, count: i64, to: &mut Vec<(u32, i64)>) {
    if !filters.is_pruning_type(kind) {
        return;
    }
    match to.iter_mut().find(|(k, _)| *k == kind) {
        Some((_, c)) => *c += count,
        None => to.push((kind, count)),
    }
}

/// Lowers `kind`'s entry to `count` when `kind` is a pruning type (`min_if` of the flexible
/// traverser: of alternative slots only the least demanding may prune).
pub(crate) fn min_if(filters: &PruneFilters, kind: u32, count: i64, to: &mut Vec<(u32, i64)>) {
    if !filters.is_pruning_type(kind) {
        return;
    }
    match to.iter_mut().find(|(k, _)| *k == kind) {
        Some((_, c)) => *c = (*c).min(count),
        None => to.push((kind, count)),
    }
}

/// The count of `kind` in an aggregate list (0 when absent).
pub(crate) fn aggregate_of(list: &[(u32, i64)], kind: u32) -> i64 {
    list.iter().find(|(k, _)| *k == kind).map_or(0, |(_, c)| *c)
}

/// Converts jobspec resources, filling every request's aggregates and `to_parent` with the
/// top level's; types requested `exclusive: true` are added to `exclusive`. With `or_slots`
/// (the flexible traverser), a `slot` or `xor_slot` is one alternative among its siblings:
/// it lowers the level's aggregates to its own rather than adding to them.
pub(crate) fn prime_requests(
    resources: &[Resource],
    graph: &ResourceGraph,
    filters: &PruneFilters,
    or_slots: bool,
    exclusive: &mut Vec<u32>,
    to_parent: &mut Vec<(u32, i64)>,
) -> Vec<Request> {
    let slot = graph.types().get("slot").unwrap_or(UNKNOWN_TYPE);
    let xor_slot = graph.types().get("xor_slot").unwrap_or(UNKNOWN_TYPE);
    resources
        .iter()
        .map(|r| {
            let kind = graph.types().get(&r.kind).unwrap_or(UNKNOWN_TYPE);
            if r.exclusive == Some(true) && !exclusive.contains(&kind) {
                exclusive.push(kind);
            }
            let min = i64::try_from(r.count.min).unwrap_or(i64::MAX);
            accum_if(filters, kind, min, to_parent);
            let mut aggregates = Vec::new();
            let with = prime_requests(
                &r.with,
                graph,
                filters,
                or_slots,
                exclusive,
                &mut aggregates,
            );
            if or_slots && (kind == slot || kind == xor_slot) {
                for &(k, c) in &aggregates {
                    min_if(filters, k, min.saturating_mul(c), to_parent);
                }
                // A type this alternative does without cannot prune the level at all.
                let lacking: Vec<u32> = to_parent
                    .iter()
                    .map(|&(k, _)| k)
                    .filter(|&k| !aggregates.iter().any(|&(t, _)| t == k))
                    .collect();
                for k in lacking {
                    min_if(filters, k, 0, to_parent);
                }
            } else {
                for &(k, c) in &aggregates {
                    accum_if(filters, k, min.saturating_mul(c), to_parent);
                }
            }
            Request {
                kind,
                slot: kind == slot,
                count: r.count,
                exclusive: r.exclusive,
                label: r.label.clone().unwrap_or_default(),
                with,
                aggregates,
            }
        })
        .collect()
}
