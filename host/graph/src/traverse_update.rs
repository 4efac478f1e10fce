//! The traverser's update walk (Fluxion's `dfu_impl_update.cpp`): plan the chosen vertices,
//! update exclusivity checkers and subtree aggregates, emit the match; and cancellation.

use std::collections::HashSet;

use crate::graph::VertexId;
use crate::match_request::{accum_if, aggregate_of};
use crate::match_writers::{Emitted, MatchWriter};
use crate::matcher::{HeldSpans, JobSpans, Matcher};
use crate::visit::{AllocType, JobMeta};

/// What one vertex of the update walk is given by its parent.
#[derive(Debug, Clone, Copy)]
struct Visit {
    needs: u32,
    excl: bool,
    shadow: bool,
}

impl Matcher {
    /// Walks the edges the last selection marked, plans them for the job and emits them;
    /// false when the selection left nothing to update.
    pub(crate) fn update(&mut self, meta: &JobMeta, writer: &mut dyn MatchWriter) -> bool {
        let Some((needs, excl)) = self.root_mark else {
            return false;
        };
        self.reset_colors();
        self.begin_changes();
        let root = self.root;
        let shadow = self.exclusive.contains(&self.graph.kind_id(root));
        let mut job = JobSpans { held: Vec::new() };
        let mut aggregates = Vec::new();
        let visit = Visit {
            needs,
            excl,
            shadow,
        };
        let n = self.upd_dfv(root, 0, visit, meta, &mut aggregates, &mut job, writer);
        if meta.alloc != AllocType::NoAlloc && !job.held.is_empty() {
            self.jobs.insert(meta.jobid, job);
        }
        if n > 0 {
            writer.emit_time(meta.at, meta.at + meta.duration);
        }
        n > 0
    }

    #[allow(clippy::too_many_arguments)]
    fn upd_dfv(
        &mut self,
        u: VertexId,
        level: usize,
        visit: Visit,
        meta: &JobMeta,
        to_parent: &mut Vec<(u32, i64)>,
        job: &mut JobSpans,
        writer: &mut dyn MatchWriter,
    ) -> usize {
        let shadow = visit.shadow || self.exclusive.contains(&self.graph.kind_id(u));
        let excl = visit.excl || shadow;
        let level = level + 1;
        self.color(u);
        let mut below = Vec::new();
        let mut n_plans = 0;
        for e in self.graph.out_edge_range(self.dom, u) {
            // Marks do not change during the update walk, so they are read as it goes.
            let mark = self.mark_of(e);
            if !shadow && mark.is_none() {
                continue;
            }
            let tgt = self.graph.edge_target(self.dom, e);
            if self.colored(tgt) {
                continue;
            }
            let (needs, x) = match mark {
                Some((needs, x)) if !shadow => (needs, x),
                _ => (
                    self.graph.size(tgt).clamp(0, i64::from(u32::MAX)) as u32,
                    true,
                ),
            };
            let child = Visit {
                needs,
                excl: x,
                shadow,
            };
            let n = self.upd_dfv(tgt, level, child, meta, &mut below, job, writer);
            if n > 0 {
                if self.stop_on_first {
                    self.update_weight(u, e as u32, tgt, meta);
                }
                writer.emit_edge(&self.graph, self.dom, u, tgt);
                n_plans += n;
            }
        }
        let needs = visit.needs;
        let mut n = n_plans;
        if meta.alloc == AllocType::NoAlloc {
            n += usize::from(excl);
        } else {
            if excl {
                n += 1;
            }
            if n > 0 {
                let planned = if excl { needs } else { 0 };
                let allocated = meta.alloc == AllocType::Alloc;
                self.hold(u, meta.jobid, meta.at, meta.duration, planned, allocated);
                let subplan = self.add_aggregate_span(u, meta, &below);
                job.held.push(HeldSpans { vertex: u, subplan });
                let kind = self.graph.kind_id(u);
                let size = self.graph.size(u);
                let freed = if excl { size } else { size - i64::from(needs) };
                accum_if(&self.filters, kind, freed, to_parent);
                for &(k, c) in &below {
                    accum_if(&self.filters, k, c, to_parent);
                }
            }
        }
        if n > 0 {
            writer.emit_vertex(&Emitted {
                graph: &self.graph,
                vertex: u,
                level,
                needs,
                exclusive: excl,
                properties: self.properties.get(&u),
            });
        }
        n
    }

    fn add_aggregate_span(
        &mut self,
        u: VertexId,
        meta: &JobMeta,
        below: &[(u32, i64)],
    ) -> Option<i64> {
        if below.is_empty() {
            return None;
        }
        let counts: smallvec::SmallVec<[u64; 4]> = self
            .subplan_types(u)
            .iter()
            .map(|&t| aggregate_of(below, t).max(0) as u64)
            .collect();
        self.touch(u);
        let plan = self.subplans[u as usize].as_mut()?;
        plan.add_span(meta.at, meta.duration, &counts).ok()
    }

    /// `upd_by_outedges`: `first` explores a child next time by its remaining amount of the
    /// last tracked type, now.
    fn update_weight(&mut self, u: VertexId, edge: u32, tgt: VertexId, meta: &JobMeta) {
        let Some(plan) = &self.subplans[tgt as usize] else {
            return;
        };
        let last = plan.resource_types().len() - 1;
        let avail = plan
            .planner_at(last)
            .and_then(|p| p.avail_resources_at(meta.now).ok())
            .unwrap_or(-1);
        if avail == 0 && plan.span_count() == 0 {
            return;
        }
        let weight = avail.max(0) as u64;
        self.touch(u);
        let old = self.weights.insert(edge, weight).unwrap_or(u64::MAX);
        if let Some(order) = self.child_order.get_mut(&u) {
            order.remove(&(old, tgt));
            order.insert((weight, tgt), edge);
        }
    }

    /// Removes every span of `jobid`; the visit counts are those of Fluxion's walk from the
    /// root over the job's vertices. False when the job holds nothing.
    pub(crate) fn cancel_spans(&mut self, jobid: u64) -> bool {
        let Some(job) = self.jobs.remove(&jobid) else {
            return false;
        };
        self.begin_changes();
        let tagged: HashSet<VertexId> = job.held.iter().map(|h| h.vertex).collect();
        self.preorder = 0;
        self.postorder = 0;
        if tagged.contains(&self.root) {
            let mut stack = vec![self.root];
            while let Some(v) = stack.pop() {
                self.preorder += 1;
                if !tagged.contains(&v) {
                    continue;
                }
                self.postorder += 1;
                stack.extend(self.graph.out_edges(self.dom, v).iter().copied());
            }
        }
        for held in job.held {
            self.release(held, jobid);
        }
        true
    }
}
