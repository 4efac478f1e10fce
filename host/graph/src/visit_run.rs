//! Replaying runs of unchanged siblings at once: when a parent explores many children that
//! are interior vertices (the root over its nodes), the visits of each fixed run of
//! [`RUN_LEN`] consecutive children are recorded together, and while none of them changed the
//! whole run is replayed in one step: its candidates, edge marks, visit counts and messages,
//! exactly those of visiting each child (and so of a fresh walk), without a lookup per child.
//!
//! Like `visit_cache`, only used when the dominant subsystem is a tree.

use std::ops::Range;

use smallvec::SmallVec;

use crate::graph::VertexId;
use crate::match_request::Request;
use crate::matcher::{Matcher, NO_VISIT_SLOT};
use crate::run_record::{RUN_LEN, RunChild, RunRecord};
use crate::scoring::{EdgeGroup, Scoring};
use crate::visit::{JobMeta, VisitKey};

impl Matcher {
    /// Whether `u`'s children (through `edges`) are explored run by run: replay on, a tree,
    /// enough of them, and interior vertices (the first tells: leaves are never recorded, and
    /// a parent of leaves keeps no runs).
    pub(crate) fn explores_in_runs(&self, u: VertexId, edges: &Range<usize>) -> bool {
        self.replay_visits
            && self.is_tree
            && edges.len() >= RUN_LEN
            && self.vertex_state[u as usize].visit_slot != NO_VISIT_SLOT
            && self.cacheable(self.graph.edge_target(self.dom, edges.start))
    }

    /// The run records of `u`'s children, lent out while `u` is explored (see
    /// [`Matcher::put_runs`]).
    pub(crate) fn take_runs(&mut self, u: VertexId, children: usize) -> Vec<Option<RunRecord>> {
        let slot = self.vertex_state[u as usize].visit_slot as usize;
        let mut runs = std::mem::take(&mut self.runs[slot]);
        runs.resize(children / RUN_LEN, None);
        runs
    }

    /// Puts back what [`Matcher::take_runs`] lent.
    pub(crate) fn put_runs(&mut self, u: VertexId, runs: Vec<Option<RunRecord>>) {
        let slot = self.vertex_state[u as usize].visit_slot as usize;
        self.runs[slot] = runs;
    }

    /// Explores the run of children through `edges`, replaying its record when every child
    /// is unchanged since it was made with the same key, else child by child (each replaying
    /// its own record where it can) while recording the run anew. Whether any child matched.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn explore_run(
        &mut self,
        meta: &JobMeta,
        edges: Range<usize>,
        record: &mut Option<RunRecord>,
        resources: &[Request],
        pristine: bool,
        excl: bool,
        dfu: &mut Scoring,
    ) -> bool {
        let key = self.visit_key(meta, resources, pristine, excl);
        if let Some(run) = record
            .as_ref()
            .filter(|r| self.run_unchanged(r, &key, &edges))
        {
            return self.replay_run(run, dfu);
        }
        let start = self.recording_start();
        let merges = dfu.merges;
        let mut children = SmallVec::new();
        let mut recordable = true;
        for e in edges {
            let tgt = self.graph.edge_target(self.dom, e);
            recordable &= self.cacheable(tgt) && !self.colored(tgt);
            if let Some(x) = self.explore_child(meta, e, resources, pristine, excl, dfu) {
                children.push(RunChild {
                    kind: self.graph.kind_id(tgt),
                    edge: e as u32,
                    avail: dfu.avail,
                    score: dfu.overall,
                    exclusive: x,
                });
            }
        }
        let matched = !children.is_empty();
        // A child that handed up unchosen candidates merged them into `dfu`: not kept.
        *record = (recordable && dfu.merges == merges).then(|| RunRecord {
            key,
            stamp: self.clock,
            children,
            marks: SmallVec::from_slice(&self.mark_log[start.marks..]),
            message: self.err_message[start.message..].to_owned(),
            preorder: self.preorder - start.preorder,
            postorder: self.postorder - start.postorder,
            ml_delta: self.ml_scores - start.ml_scores,
        });
        matched
    }

    /// Whether `run` was made with `key` and no child of `edges` changed or was reached
    /// since.
    fn run_unchanged(&self, run: &RunRecord, key: &VisitKey, edges: &Range<usize>) -> bool {
        run.key == *key
            && edges.clone().all(|e| {
                let tgt = self.graph.edge_target(self.dom, e);
                let slot = self.vertex_state[tgt as usize].visit_slot;
                slot != NO_VISIT_SLOT
                    && self.changed[slot as usize] <= run.stamp
                    && !self.colored(tgt)
            })
    }

    /// Applies a run's recorded effects, in the order its children made them.
    fn replay_run(&mut self, run: &RunRecord, dfu: &mut Scoring) -> bool {
        self.preorder += run.preorder;
        self.postorder += run.postorder;
        self.ml_scores += run.ml_delta;
        if !run.message.is_empty() {
            self.err_message.push_str(&run.message);
        }
        let mut rest = &run.children[..];
        while let Some(first) = rest.first() {
            let same = rest.iter().take_while(|c| c.kind == first.kind).count();
            let (kind, children) = (first.kind, &rest[..same]);
            let groups = children
                .iter()
                .map(|c| EdgeGroup::single(c.score, c.avail, c.exclusive, false, c.edge));
            dfu.add_all(kind, groups);
            rest = &rest[same..];
        }
        // What the last child that matched handed up, as after visiting each in turn.
        if let Some(last) = run.children.last() {
            dfu.avail = last.avail;
            dfu.overall = last.score;
        }
        for &(edge, needs, x) in &run.marks {
            self.mark(edge, needs, x);
        }
        !run.children.is_empty()
    }
}
