//! Replaying unchanged subtrees: a visit of vertex `u` depends only on the request level, the
//! job's window and what lies in `u`'s subtree, so while nothing under `u` has changed its
//! recorded effects (what it handed up, the edges it marked, its visit counts and messages)
//! are replayed instead of walking the subtree again. Results, marks and counts are exactly
//! those of a fresh walk; only the time differs.
//!
//! Only used when the dominant subsystem is a tree (a vertex reached twice in one walk would
//! need its color, which a replay does not set).

use crate::graph::VertexId;
use crate::match_request::Request;
use crate::matcher::{Matcher, NO_VISIT_SLOT};
use crate::scoring::Scoring;
use crate::visit::{CachedVisit, Errno, JobMeta, RecordingStart, VisitKey, Visited};

impl Matcher {
    /// Whether visits of `u` are recorded: interior vertices of a tree.
    pub(crate) fn cacheable(&self, u: VertexId) -> bool {
        self.replay_visits
            && self.is_tree
            && self.vertex_state[u as usize].visit_slot != NO_VISIT_SLOT
    }

    /// Turns visit replay on (the default) or off; results are the same either way, which is
    /// what the switch is for: checking that.
    pub fn set_visit_replay(&mut self, on: bool) {
        self.replay_visits = on;
        self.visits.iter_mut().for_each(|v| *v = None);
        self.runs.iter_mut().for_each(Vec::clear);
    }

    pub(crate) fn visit_key(
        &self,
        meta: &JobMeta,
        resources: &[Request],
        pristine: bool,
        excl: bool,
    ) -> VisitKey {
        VisitKey::new(
            resources,
            self.request_generation,
            pristine,
            excl,
            meta,
            self.ml_scores,
        )
    }

    /// Replays `u`'s recorded visit if it was made with `key` and nothing under `u` changed
    /// since.
    pub(crate) fn replay(
        &mut self,
        u: VertexId,
        key: &VisitKey,
        excl: &mut bool,
        resources: &[Request],
        to_parent: &mut Scoring,
    ) -> Option<Result<(), Errno>> {
        let slot = self.vertex_state[u as usize].visit_slot as usize;
        let cached = self.visits[slot].as_mut()?;
        if cached.key != *key || cached.stamp < self.changed[slot] {
            return None;
        }
        self.preorder += cached.preorder;
        self.postorder += cached.postorder;
        self.ml_scores += cached.ml_delta;
        if !cached.message.is_empty() {
            self.err_message.push_str(&cached.message);
        }
        let result = match &cached.result {
            Ok(visited) => {
                visited.apply_ref(to_parent);
                Ok(())
            }
            Err(e) => Err(*e),
        };
        if !cached.marks.is_empty() {
            // Lent out while the marks are set again, then put back.
            let marks = std::mem::take(&mut cached.marks);
            for &(edge, needs, x) in &marks {
                self.mark(edge, needs, x);
            }
            if let Some(cached) = self.visits[slot].as_mut() {
                cached.marks = marks;
            }
        }
        if result.is_ok() {
            *excl = *excl || self.exclusive_request(resources, u);
        }
        Some(result)
    }

    pub(crate) fn recording_start(&self) -> RecordingStart {
        RecordingStart {
            marks: self.mark_log.len(),
            message: self.err_message.len(),
            preorder: self.preorder,
            postorder: self.postorder,
            ml_scores: self.ml_scores,
        }
    }

    pub(crate) fn record(
        &mut self,
        u: VertexId,
        key: VisitKey,
        start: RecordingStart,
        result: &Result<Visited, Errno>,
    ) {
        let entry = CachedVisit {
            key,
            stamp: self.clock,
            result: result.clone(),
            marks: self.mark_log[start.marks..].to_vec(),
            message: self.err_message[start.message..].to_owned(),
            preorder: self.preorder - start.preorder,
            postorder: self.postorder - start.postorder,
            ml_delta: self.ml_scores - start.ml_scores,
        };
        self.visits[self.vertex_state[u as usize].visit_slot as usize] = Some(entry);
    }

    /// Starts a batch of changes to the schedule: visits recorded before it are stale for
    /// every vertex touched in it.
    pub(crate) fn begin_changes(&mut self) {
        self.clock += 1;
    }

    /// Records that `v`'s own state changed, which changes every subtree containing it (only
    /// interior vertices keep the mark: only their visits are recorded).
    pub(crate) fn touch(&mut self, v: VertexId) {
        let mut v = v;
        loop {
            let slot = self.vertex_state[v as usize].visit_slot;
            if slot != NO_VISIT_SLOT {
                if self.changed[slot as usize] == self.clock {
                    return;
                }
                self.changed[slot as usize] = self.clock;
            }
            let pe = self.parent_edge[v as usize];
            if pe == u32::MAX {
                return;
            }
            v = self.edge_source[pe as usize];
        }
    }
}
