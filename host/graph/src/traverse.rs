//! The depth-first-and-up traverser's selection walk (Fluxion's `dfu_impl_t::select`):
//! match requests to vertices, prune, gather candidates and choose the best per level.

use crate::graph::{SubsystemId, VertexId};
use crate::match_request::{Request, aggregate_of};
use crate::matcher::Matcher;
use crate::scoring::{EdgeGroup, EvalEdge, ROOT_EDGE, Scoring};
use crate::visit::{AllocType, Errno, JobMeta, Visited};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MatchKind {
    Resource,
    Slot,
    PristineNone,
    None,
}

/// `calc_count` with an unsigned-int availability, as Fluxion counts.
pub(crate) fn calc_count(r: &Request, qc: u32) -> u32 {
    r.count.select(u64::from(qc)).min(u64::from(u32::MAX)) as u32
}

pub(crate) fn effective_max(r: &Request) -> u64 {
    r.count.select(u64::from(u32::MAX))
}

impl Matcher {
    /// Starts a new traversal: fresh edge marks and colors.
    pub(crate) fn tick(&mut self) {
        self.seq = self.seq.wrapping_add(1);
        if self.seq == 0 {
            self.mark_seq.iter_mut().for_each(|s| *s = 0);
            self.seq = 1;
        }
        self.mark_log.clear();
        self.root_mark = None;
        self.reset_colors();
    }

    /// One full selection walk from the root for `resources` (`select`).
    pub(crate) fn select(
        &mut self,
        resources: &[Request],
        meta: &JobMeta,
        excl: bool,
    ) -> Result<(), Errno> {
        self.tick();
        self.preorder = 0;
        self.postorder = 0;
        let root = self.root;
        let mut dfu = Scoring::default();
        let mut x_in = excl;
        self.aux_frames.clear();
        self.aux_open();
        self.dom_dfv(meta, root, resources, true, &mut x_in, &mut dfu)?;
        let avail = dfu.avail;
        let group = EdgeGroup {
            score: dfu.overall,
            count: avail,
            exclusive: excl,
            root: true,
            edges: smallvec::smallvec![EvalEdge {
                count: avail,
                needs: avail,
                exclusive: excl,
                edge: ROOT_EDGE,
            }],
        };
        dfu.add(self.graph.kind_id(root), group);
        let mut needs = 0;
        let resolved = self.resolve_graph(resources, &mut dfu, &mut needs);
        self.root_mark = Some((needs, x_in));
        resolved.map_err(|_| Errno::NoDev)
    }

    fn resolve_graph(
        &mut self,
        resources: &[Request],
        dfu: &mut Scoring,
        needs: &mut u32,
    ) -> Result<(), ()> {
        let mut met = true;
        // `locality`: one interval set of scores over every top-level type, as Fluxion's
        // comparator accumulates it.
        let mut runs = std::collections::BTreeSet::new();
        for r in resources {
            let qc = dfu.qualified(r.kind);
            let count = calc_count(r, qc);
            if count == 0 {
                met = false;
                break;
            }
            if self.root_by_runs {
                runs.extend(dfu.scores(r.kind));
                dfu.rank_by_runs(r.kind, &runs);
            }
            dfu.choose_best_k(r.kind, count, self.higher_first);
        }
        self.ml_scores = 0;
        if !met {
            return Err(());
        }
        *needs = 1;
        let root_kind = self.graph.kind_id(self.root);
        for r in resources.iter().filter(|r| r.kind == root_kind) {
            let count = calc_count(r, dfu.avail);
            if count == 0 {
                return Err(());
            }
            *needs = count;
        }
        if dfu.iter().any(|(_, e)| e.qualified == 0) || !self.aux_remaining() {
            return Err(());
        }
        self.enforce(dfu, true);
        Ok(())
    }

    /// Marks the chosen edges of every constrained type for the update walk; with
    /// `unconstrained`, also the edges up to the root through levels that chose nothing.
    fn enforce(&mut self, dfu: &Scoring, unconstrained: bool) {
        for (_, evals) in dfu.iter() {
            if evals.best_k == 0 {
                continue;
            }
            for group in &evals.groups[..evals.best_i as usize] {
                if group.root {
                    continue;
                }
                for e in &group.edges {
                    self.mark(e.edge, e.needs, e.exclusive);
                    if unconstrained {
                        self.enforce_up(dfu, e.edge);
                    }
                }
            }
        }
    }

    fn enforce_up(&mut self, dfu: &Scoring, edge: u32) {
        let mut parent = self.edge_source[edge as usize];
        loop {
            let pe = self.parent_edge[parent as usize];
            if pe == u32::MAX || self.mark_of(pe as usize).is_some() {
                break;
            }
            parent = self.edge_source[pe as usize];
            let tgt = self.graph.edge_target(self.dom, pe as usize);
            let constrained = dfu
                .get(self.graph.kind_id(tgt))
                .is_none_or(|e| e.best_k != 0);
            if !constrained {
                let size = self.graph.size(tgt).clamp(0, i64::from(u32::MAX)) as u32;
                self.mark(pe, size, false);
            }
        }
    }

    /// Marks an edge for the update walk, and logs it for visit recording.
    pub(crate) fn mark(&mut self, edge: u32, needs: u32, exclusive: bool) {
        if let Some(e) = self.mark_seq.get_mut(edge as usize) {
            *e = self.seq;
            self.mark_value[edge as usize] =
                needs.min(u32::MAX >> 1) | (u32::from(exclusive) << 31);
        }
        self.mark_log.push((edge, needs, exclusive));
    }

    fn exclusivity(&self, resources: &[Request], u: VertexId) -> bool {
        let kind = self.graph.kind_id(u);
        resources
            .iter()
            .any(|r| r.kind == kind && r.exclusive == Some(true))
    }

    /// `dom_dfv`: visit `u` with the requests of the current jobspec level, replaying the
    /// recorded visit when `u`'s subtree is unchanged since (see `visit_cache`).
    pub(crate) fn dom_dfv(
        &mut self,
        meta: &JobMeta,
        u: VertexId,
        resources: &[Request],
        pristine: bool,
        excl: &mut bool,
        to_parent: &mut Scoring,
    ) -> Result<(), Errno> {
        if !self.cacheable(u) {
            let visited = self.visit(meta, u, resources, pristine, excl)?;
            visited.apply(to_parent);
            return Ok(());
        }
        let key = self.visit_key(meta, resources, pristine, *excl);
        if let Some(result) = self.replay(u, &key, excl, resources, to_parent) {
            return result;
        }
        let start = self.recording_start();
        let result = self.visit(meta, u, resources, pristine, excl);
        self.record(u, key, start, &result);
        let visited = result?;
        visited.apply(to_parent);
        Ok(())
    }

    /// One visit of `u`; what it hands its parent is returned rather than applied.
    fn visit(
        &mut self,
        meta: &JobMeta,
        u: VertexId,
        resources: &[Request],
        pristine: bool,
        excl: &mut bool,
    ) -> Result<Visited, Errno> {
        let x_in = *excl || self.exclusivity(resources, u);
        let mut x_inout = x_in;
        let mut check_pres = pristine;
        let (next, nslots, kind) = if self.flexible {
            self.test_flexible(u, resources, &mut check_pres)
        } else {
            self.test(u, resources, &mut check_pres)
        };
        self.preorder += 1;
        if kind == MatchKind::None {
            return Err(Errno::Busy);
        }
        self.prune(meta, x_in, u, resources)?;
        if !self.table.factor.is_empty() {
            self.ml_scores += self.table.factor[u as usize];
        }
        self.color(u);
        let mut dfu = Scoring::default();
        self.aux_open();
        if kind == MatchKind::Slot {
            // The slot's own scoring level keeps its children's auxiliary candidates.
            self.aux_open();
            let _ = self.dom_slot(meta, u, next, nslots, check_pres, &mut dfu);
            self.aux_close(false);
        } else {
            let _ = self.explore(meta, u, next, check_pres, &mut x_inout, &mut dfu, 1);
            if !self.aux.is_empty() {
                self.explore_aux(meta, u, next, x_inout, &dfu);
            }
        }
        *excl = x_in;
        let avail = self.avail_during(u, meta.at, meta.duration);
        if avail == 0 {
            self.aux_close(false);
            return Err(Errno::Busy);
        }
        if let Err(e) = self.finish_vtx(u, resources, &mut dfu) {
            self.aux_close(false);
            return Err(e);
        }
        let overall = dfu.overall;
        let merged = self.resolve(dfu);
        self.aux_close(merged.is_some());
        self.postorder += 1;
        Ok(Visited {
            merged,
            avail: avail.clamp(0, i64::from(u32::MAX)) as u32,
            overall,
        })
    }

    /// Whether a request of this level asks for `u`'s type exclusively.
    pub(crate) fn exclusive_request(&self, resources: &[Request], u: VertexId) -> bool {
        self.exclusivity(resources, u)
    }

    /// `test`: which requests of this level `u` answers and which level comes next.
    fn test<'a>(
        &mut self,
        u: VertexId,
        resources: &'a [Request],
        pristine: &mut bool,
    ) -> (&'a [Request], u64, MatchKind) {
        let kind = self.graph.kind_id(u);
        let mut slot: Option<&Request> = None;
        let mut matched_resource: Option<&Request> = None;
        let mut nslots = 0;
        let mut matched = false;
        for r in resources {
            if r.kind == kind {
                if matched {
                    return self.sibling_error(u, resources);
                }
                matched_resource = Some(r);
                for c in r.with.iter().filter(|c| c.slot) {
                    slot = Some(c);
                    nslots = effective_max(c);
                }
                matched = true;
            } else if r.slot {
                if matched {
                    return self.sibling_error(u, resources);
                }
                slot = Some(r);
                nslots = effective_max(r);
                matched = true;
            }
        }
        if let Some(s) = slot.filter(|s| self.slot_match(u, s)) {
            *pristine = false;
            return (&s.with, nslots, MatchKind::Slot);
        }
        if let Some(m) = matched_resource {
            *pristine = false;
            return (&m.with, nslots, MatchKind::Resource);
        }
        let kind = if *pristine {
            MatchKind::PristineNone
        } else {
            MatchKind::None
        };
        (resources, nslots, kind)
    }

    pub(crate) fn sibling_error<'a>(
        &mut self,
        u: VertexId,
        resources: &'a [Request],
    ) -> (&'a [Request], u64, MatchKind) {
        self.err_message += &format!(
            "test: siblings in jobspec request same resource type : {}.\n",
            self.graph.kind(u)
        );
        (resources, 0, MatchKind::None)
    }

    /// Whether `u` has a child of every type a slot asks for, along an out-edge of any
    /// subsystem (Fluxion's `slot_match` does not filter by subsystem).
    pub(crate) fn slot_match(&self, u: VertexId, slot: &Request) -> bool {
        let subsystems = self.graph.subsystems().len() as SubsystemId;
        slot.with.iter().all(|c| {
            (0..subsystems).any(|s| {
                self.graph
                    .out_edges(s, u)
                    .iter()
                    .any(|&t| self.graph.kind_id(t) == c.kind)
            })
        })
    }

    fn prune(
        &mut self,
        meta: &JobMeta,
        x_in: bool,
        u: VertexId,
        resources: &[Request],
    ) -> Result<(), Errno> {
        if meta.alloc != AllocType::Satisfiability && !self.is_up(u) {
            return Err(Errno::Busy);
        }
        if self.avail_during(u, meta.at, meta.duration) == 0 {
            return Err(Errno::Busy);
        }
        let kind = self.graph.kind_id(u);
        let mut result = Ok(());
        for r in resources.iter().filter(|r| r.kind == kind || r.slot) {
            if !r.slot {
                self.by_excl(meta, x_in, u, r)?;
            }
            result = self.by_subplan(meta, u, r);
            // Flexible: alternative slots do not stop the check; the last one checked decides.
            if !(self.flexible && r.slot) {
                result?;
            }
        }
        result
    }

    pub(crate) fn by_excl(
        &mut self,
        meta: &JobMeta,
        x_in: bool,
        u: VertexId,
        r: &Request,
    ) -> Result<(), Errno> {
        if x_in && r.exclusive == Some(false) {
            self.err_message += &format!(
                "by_excl: exclusivity conflicts at jobspec={} : vertex={}",
                r.label,
                self.graph.name(u)
            );
            return Err(Errno::Inval);
        }
        if x_in || r.exclusive == Some(true) {
            let busy_now = meta.at == meta.now
                && matches!(meta.alloc, AllocType::Alloc | AllocType::NoAlloc)
                && self.spans[u as usize].allocated();
            if busy_now || self.in_use_during(u, meta.at, meta.duration) {
                return Err(Errno::Busy);
            }
        }
        Ok(())
    }

    fn by_subplan(&self, meta: &JobMeta, u: VertexId, r: &Request) -> Result<(), Errno> {
        let Some(plan) = &self.subplans[u as usize] else {
            return Ok(());
        };
        if r.aggregates.is_empty() {
            return Ok(());
        }
        let counts: smallvec::SmallVec<[u64; 4]> = self
            .subplan_types(u)
            .iter()
            .map(|&t| aggregate_of(&r.aggregates, t).max(0) as u64)
            .collect();
        match plan.avail_during(meta.at, meta.duration, &counts) {
            Ok(true) => Ok(()),
            _ => Err(Errno::Busy),
        }
    }

    /// `dom_finish_vtx` of the ID policies: choose the best children for a matched request
    /// and score the vertex.
    fn finish_vtx(
        &mut self,
        u: VertexId,
        resources: &[Request],
        dfu: &mut Scoring,
    ) -> Result<(), Errno> {
        let kind = self.graph.kind_id(u);
        let mut met = true;
        for r in resources.iter().filter(|r| r.kind == kind) {
            for c in &r.with {
                let qc = dfu.qualified(c.kind);
                let count = calc_count(c, qc);
                if count == 0 {
                    met = false;
                    break;
                }
                dfu.choose_best_k(c.kind, count, self.higher_first);
            }
        }
        if !self.table.factor.is_empty() {
            self.ml_scores -= self.table.factor[u as usize];
        }
        dfu.overall = if met {
            1 + self.ml_scores + self.table.own[u as usize]
        } else {
            0
        };
        if met { Ok(()) } else { Err(Errno::Busy) }
    }

    /// `resolve`: a level that chose enforces its choice; one that did not hands its
    /// candidates up (returned, to be merged into the parent's).
    fn resolve(&mut self, dfu: Scoring) -> Option<Scoring> {
        if dfu.overall <= 0 {
            return None;
        }
        if dfu.constrain_now {
            self.enforce(&dfu, false);
            None
        } else {
            Some(dfu)
        }
    }
}
