//! Auxiliary subsystems in the selection walk (`-S C+PA` and the like), as Fluxion's
//! `dom_exp`/`aux_upv` walk them at fd257f71.

use crate::aux_scores::AuxScores;
use crate::graph::{SubsystemId, VertexId};
use crate::match_request::Request;
use crate::matcher::{Matcher, MatcherError};
use crate::scoring::Scoring;
use crate::traverse_explore::Tally;
use crate::visit::{AllocType, JobMeta};

impl Matcher {
    /// Adds auxiliary subsystems to the walk, in order after the dominant one. Each must have a
    /// root, as Fluxion's traverser initialisation requires. A `cluster` vertex that an
    /// auxiliary edge leads to and that has out-edges would carry a pruning filter in that
    /// subsystem in Fluxion; that is not implemented, so such a graph is refused.
    pub fn set_auxiliary_subsystems(&mut self, names: &[&str]) -> Result<(), MatcherError> {
        let mut aux = Vec::new();
        for &name in names {
            let s = self
                .graph
                .subsystem_id(name)
                .filter(|&s| !self.graph.roots(s).is_empty())
                .ok_or_else(|| MatcherError::NoRoot(name.into()))?;
            if let Some(v) = self.auxiliary_cluster(s) {
                return Err(MatcherError::AuxiliaryCluster {
                    subsystem: name.into(),
                    vertex: self.graph.name(v).to_string(),
                });
            }
            aux.push(s);
        }
        // A recorded visit does not hold auxiliary candidates, so visits are walked afresh.
        self.is_tree &= aux.is_empty();
        self.aux = aux;
        Ok(())
    }

    fn auxiliary_cluster(&self, s: SubsystemId) -> Option<VertexId> {
        let cluster = self.graph.types().get("cluster")?;
        let subsystems = self.graph.subsystems().len() as SubsystemId;
        (0..self.graph.vertex_count() as VertexId)
            .flat_map(|v| self.graph.out_edges(s, v).iter().copied())
            .find(|&t| {
                self.graph.kind_id(t) == cluster
                    && (0..subsystems).any(|x| !self.graph.out_edges(x, t).is_empty())
            })
    }

    /// Opens the auxiliary candidates of a new scoring level.
    #[inline]
    pub(crate) fn aux_open(&mut self) {
        if !self.aux.is_empty() {
            self.aux_frames.push(AuxScores::default());
        }
    }

    /// Closes the innermost level, handing its candidates to the enclosing one when `merge`.
    #[inline]
    pub(crate) fn aux_close(&mut self, merge: bool) {
        if self.aux.is_empty() {
            return;
        }
        if let Some(frame) = self.aux_frames.pop()
            && merge
            && let Some(parent) = self.aux_frames.last_mut()
        {
            parent.merge(frame);
        }
    }

    /// Whether the root level's auxiliary types all have qualified candidates.
    pub(crate) fn aux_remaining(&self) -> bool {
        self.aux_frames.first().is_none_or(AuxScores::all_qualified)
    }

    /// Explores `u`'s out-edges in every auxiliary subsystem (`dom_exp` after the dominant one).
    ///
    /// A target passes when it is up, has room in its own planner and the exclusivity checks
    /// of the current level allow it; it then adds a candidate under (subsystem, its type)
    /// whose score and count are whatever the last dominant child left in `dfu` (none:
    /// unqualified). No policy chooses among these and the update walk plans and emits none of
    /// them (Fluxion's `upd_upv` is empty), so their one effect is at the root: an auxiliary
    /// type whose candidates all arrived unqualified fails the match (`has_remaining`). They
    /// travel up with a level's dominant candidates: merged by a level that chose nothing,
    /// dropped by one that chose and by a slot's bundling. Under `first` the walk stops once
    /// every requested type is satisfied, and reading a requested type's total registers it,
    /// as `std::map::operator[]` does. Fluxion's recursion below the target changes nothing
    /// it returns and is not repeated.
    pub(crate) fn explore_aux(
        &mut self,
        meta: &JobMeta,
        u: VertexId,
        resources: &[Request],
        x_in: bool,
        dfu: &Scoring,
    ) {
        for i in 0..self.aux.len() {
            let s = self.aux[i];
            if self.stop_on_first {
                self.aux_dynamically(meta, s, u, resources, x_in, dfu);
            } else {
                for e in self.graph.out_edge_range(s, u) {
                    let t = self.graph.edge_target(s, e);
                    if self.aux_upv(meta, t, resources, x_in) {
                        self.aux_add(s, t, dfu);
                    }
                }
            }
        }
    }

    /// `explore_dynamically` in an auxiliary subsystem: targets by (edge weight, uniq_id)
    /// from the largest, where auxiliary edges keep their initial weight.
    fn aux_dynamically(
        &mut self,
        meta: &JobMeta,
        s: SubsystemId,
        u: VertexId,
        resources: &[Request],
        x_in: bool,
        dfu: &Scoring,
    ) {
        let mut tallies: Vec<(u32, Tally)> = Vec::new();
        for r in resources {
            let per_share = crate::traverse::effective_max(r);
            match tallies.iter_mut().find(|(k, _)| *k == r.kind) {
                Some((_, t)) => t.per_share = per_share,
                None => tallies.push((r.kind, Tally::new(per_share))),
            }
        }
        let mut order: Vec<VertexId> = self.graph.out_edges(s, u).to_vec();
        order.sort_unstable_by(|a, b| b.cmp(a));
        let mut satisfied: Vec<u32> = Vec::new();
        for t in order {
            if satisfied.contains(&self.graph.kind_id(t)) || !self.aux_upv(meta, t, resources, x_in)
            {
                continue;
            }
            self.aux_add(s, t, dfu);
            if let Some(frame) = self.aux_frames.last_mut() {
                for (kind, tally) in tallies.iter_mut() {
                    tally.add_total(frame.entry(s, *kind).3);
                }
            }
            let sat = |k: u32| {
                tallies
                    .iter()
                    .find(|(t, _)| *t == k)
                    .is_some_and(|(_, t)| t.satisfies(1))
            };
            for r in resources {
                if sat(r.kind) && !satisfied.contains(&r.kind) {
                    satisfied.push(r.kind);
                }
            }
            if resources.iter().all(|r| sat(r.kind)) {
                break;
            }
        }
    }

    fn aux_add(&mut self, s: SubsystemId, t: VertexId, dfu: &Scoring) {
        let kind = self.graph.kind_id(t);
        if let Some(frame) = self.aux_frames.last_mut() {
            frame.add(s, kind, dfu.overall, dfu.avail);
        }
    }

    /// `aux_upv`'s pruning of target `t`: status, its own planner, and exclusivity for the
    /// requests of its type.
    fn aux_upv(&mut self, meta: &JobMeta, t: VertexId, resources: &[Request], x_in: bool) -> bool {
        if meta.alloc != AllocType::Satisfiability && !self.is_up(t) {
            return false;
        }
        if self.avail_during(t, meta.at, meta.duration) == 0 {
            return false;
        }
        let kind = self.graph.kind_id(t);
        resources
            .iter()
            .filter(|r| r.kind == kind && !r.slot)
            .all(|r| self.by_excl(meta, x_in, t, r).is_ok())
    }
}
