//! The traverser's exploration of a vertex's children (Fluxion's `explore_statically`,
//! `explore_dynamically` for `first`, and `dom_slot` with `cnt_slot` for slots).

use std::collections::BTreeMap;

use crate::graph::VertexId;
use crate::match_request::Request;
use crate::matcher::Matcher;
use crate::run_record::RUN_LEN;
use crate::scoring::{EdgeGroup, EvalEdge, Scoring};
use crate::traverse::{calc_count, effective_max};
use crate::visit::{Errno, JobMeta};

/// Granule-aware progress toward enough shares of one type (`share_tally_t`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Tally {
    pub(crate) per_share: u64,
    prev_total: u32,
    accum: u64,
    shares: u64,
}

impl Tally {
    pub(crate) fn new(per_share: u64) -> Self {
        Tally {
            per_share,
            ..Tally::default()
        }
    }

    pub(crate) fn satisfies(&self, multiplier: u64) -> bool {
        self.per_share == 0 || self.shares >= multiplier
    }

    /// Counts what a child match added since the last look (`tally_shares`): everything it
    /// brought, merged candidates included, is one indivisible bundle.
    pub(crate) fn add_total(&mut self, total: u32) {
        if total > self.prev_total {
            let delta = total - self.prev_total;
            self.prev_total = total;
            self.add(u64::from(delta));
        }
    }

    fn add(&mut self, count: u64) {
        self.accum += count;
        if self.per_share > 0 && self.accum >= self.per_share {
            self.shares += 1;
            self.accum = 0;
        }
    }
}

impl Matcher {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn explore(
        &mut self,
        meta: &JobMeta,
        u: VertexId,
        resources: &[Request],
        pristine: bool,
        excl: &mut bool,
        dfu: &mut Scoring,
        multiplier: u64,
    ) -> Result<(), Errno> {
        if self.stop_on_first {
            self.explore_dynamically(meta, u, resources, pristine, excl, dfu, multiplier)
        } else {
            self.explore_statically(meta, u, resources, pristine, excl, dfu)
        }
    }

    /// Records a child visit's candidate under its type.
    fn add_child(&self, dfu: &mut Scoring, tgt: VertexId, edge: usize, x: bool) {
        let group = EdgeGroup::single(dfu.overall, dfu.avail, x, false, edge as u32);
        dfu.add(self.graph.kind_id(tgt), group);
    }

    fn explore_statically(
        &mut self,
        meta: &JobMeta,
        u: VertexId,
        resources: &[Request],
        pristine: bool,
        excl: &mut bool,
        dfu: &mut Scoring,
    ) -> Result<(), Errno> {
        let mut rc = Err(Errno::Busy);
        let range = self.graph.out_edge_range(self.dom, u);
        // Every child may become a candidate; a bounded head start saves regrowing.
        dfu.capacity_hint = range.len().min(1024);
        let mut e = range.start;
        if self.explores_in_runs(u, &range) {
            let mut runs = self.take_runs(u, range.len());
            for record in runs.iter_mut() {
                let edges = e..e + RUN_LEN;
                if self.explore_run(meta, edges, record, resources, pristine, *excl, dfu) {
                    rc = Ok(());
                }
                e += RUN_LEN;
            }
            self.put_runs(u, runs);
        }
        for e in e..range.end {
            if self
                .explore_child(meta, e, resources, pristine, *excl, dfu)
                .is_some()
            {
                rc = Ok(());
            }
        }
        rc
    }

    /// Visits the child through edge `e` unless this walk reached it already, and records it
    /// as a candidate when it matched: with the exclusivity it was matched under.
    pub(crate) fn explore_child(
        &mut self,
        meta: &JobMeta,
        e: usize,
        resources: &[Request],
        pristine: bool,
        excl: bool,
        dfu: &mut Scoring,
    ) -> Option<bool> {
        let tgt = self.graph.edge_target(self.dom, e);
        if self.colored(tgt) {
            return None;
        }
        let mut x = excl;
        self.dom_dfv(meta, tgt, resources, pristine, &mut x, dfu)
            .ok()?;
        self.add_child(dfu, tgt, e, x);
        Some(x)
    }

    /// `u`'s out-edges by (edge weight, child uniq_id), created on first use.
    fn take_child_order(&mut self, u: VertexId) -> BTreeMap<(u64, VertexId), u32> {
        if let Some(order) = self.child_order.remove(&u) {
            return order;
        }
        self.graph
            .out_edge_range(self.dom, u)
            .map(|e| {
                let w = self.weights.get(&(e as u32)).copied().unwrap_or(u64::MAX);
                ((w, self.graph.edge_target(self.dom, e)), e as u32)
            })
            .collect()
    }

    #[allow(clippy::too_many_arguments)]
    fn explore_dynamically(
        &mut self,
        meta: &JobMeta,
        u: VertexId,
        resources: &[Request],
        pristine: bool,
        excl: &mut bool,
        dfu: &mut Scoring,
        multiplier: u64,
    ) -> Result<(), Errno> {
        let mut rc = Err(Errno::Busy);
        let mut satisfied: Vec<u32> = Vec::new();
        let mut tallies: Vec<(u32, Tally)> = Vec::new();
        for r in resources {
            let per_share = effective_max(r);
            match tallies.iter_mut().find(|(k, _)| *k == r.kind) {
                Some((_, t)) => t.per_share = per_share,
                None => tallies.push((
                    r.kind,
                    Tally {
                        per_share,
                        ..Tally::default()
                    },
                )),
            }
        }
        tallies.sort_by_key(|(k, _)| *k);
        let order = self.take_child_order(u);
        for (&(_, tgt), &e) in order.iter().rev() {
            if self.colored(tgt) || satisfied.contains(&self.graph.kind_id(tgt)) {
                continue;
            }
            let mut x = *excl;
            if self
                .dom_dfv(meta, tgt, resources, pristine, &mut x, dfu)
                .is_err()
            {
                continue;
            }
            self.add_child(dfu, tgt, e as usize, x);
            for (kind, tally) in tallies.iter_mut() {
                tally.add_total(dfu.total(*kind));
            }
            let sat = |k: u32| {
                tallies
                    .iter()
                    .find(|(t, _)| *t == k)
                    .is_some_and(|(_, t)| t.satisfies(multiplier))
            };
            for r in resources {
                if sat(r.kind) && !satisfied.contains(&r.kind) {
                    satisfied.push(r.kind);
                }
            }
            rc = Ok(());
            if resources.iter().all(|r| sat(r.kind)) {
                break;
            }
        }
        self.child_order.insert(u, order);
        rc
    }

    /// `dom_slot`: gathers the slot's shape under `u` and bundles whole candidates into slots.
    /// The flexible traverser's `shape` is the list of alternative slots instead.
    pub(crate) fn dom_slot(
        &mut self,
        meta: &JobMeta,
        u: VertexId,
        shape: &[Request],
        nslots: u64,
        pristine: bool,
        dfu: &mut Scoring,
    ) -> Result<(), Errno> {
        if self.flexible {
            return self.dom_slot_flexible(meta, u, shape, nslots, pristine, dfu);
        }
        let mut x_inout = true;
        let mut slot_dfu = Scoring::default();
        self.explore(
            meta,
            u,
            shape,
            pristine,
            &mut x_inout,
            &mut slot_dfu,
            nslots,
        )?;
        slot_dfu.choose_all(self.slot_higher_first);
        let qualified_slots = self.count_slots(shape, &mut slot_dfu);
        let mut slots = Vec::new();
        for _ in 0..qualified_slots {
            slots.push(self.fill_slot(shape, &mut slot_dfu)?);
        }
        let slot_kind = shape
            .first()
            .map(|_| self.graph.types().get("slot").unwrap_or(u32::MAX))
            .unwrap_or(u32::MAX);
        for g in slots {
            dfu.add(slot_kind, g);
        }
        if qualified_slots > 0 {
            Ok(())
        } else {
            Err(Errno::Busy)
        }
    }

    /// One slot of `shape`: the next whole candidates of each element's type, taken in the
    /// order `dom_finish_slot` ranked them, until the element's count is reached.
    pub(crate) fn fill_slot(
        &mut self,
        shape: &[Request],
        slot_dfu: &mut Scoring,
    ) -> Result<EdgeGroup, Errno> {
        let mut group = EdgeGroup {
            score: 1,
            count: 1,
            exclusive: true,
            root: false,
            edges: smallvec::SmallVec::new(),
        };
        for elem in shape {
            let qc = slot_dfu.qualified(elem.kind);
            let count = calc_count(elem, qc);
            let evals = slot_dfu.evals(elem.kind);
            let mut j = 0;
            while j < count {
                let Some(g) = evals.next() else {
                    self.err_message += "dom_slot: not enough slots.\n";
                    return Err(Errno::Busy);
                };
                let first = g.edges[0];
                group.score += g.score;
                group.edges.push(EvalEdge {
                    count: first.count,
                    needs: first.count,
                    exclusive: true,
                    edge: first.edge,
                });
                j += first.count;
            }
        }
        Ok(group)
    }

    /// `cnt_slot`: how many disjoint bundles of whole candidates fill one slot, per type.
    fn count_slots(&self, shape: &[Request], slot_dfu: &mut Scoring) -> u64 {
        let mut fit_all = u64::from(u32::MAX);
        for elem in shape {
            let qc = slot_dfu.qualified(elem.kind);
            let count = calc_count(elem, qc);
            let evals = slot_dfu.evals(elem.kind);
            let mut tally = Tally {
                per_share: u64::from(count),
                ..Tally::default()
            };
            if count != 0 {
                for g in &evals.groups {
                    tally.add(u64::from(g.edges[0].count));
                }
            }
            let fit = if count == 0 { 0 } else { tally.shares };
            fit_all = fit_all.min(fit);
            evals.reset();
        }
        fit_all
    }
}
