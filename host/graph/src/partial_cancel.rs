//! `partial-cancel`: releases the part of an allocation an R names, rank by rank, as Fluxion's
//! `dfu_impl_t::remove (root, R, reader, jobid, full_cancel)` does: the named vertices are
//! cancelled whole, then every ancestor of each rank's top vertex gives back the freed counts
//! from its subtree aggregate; the job is gone when the root no longer carries it.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::graph::VertexId;
use crate::matcher::{HeldSpans, JobSpans, Matcher};
use crate::update::{RDocument, ReplayError};

/// Fluxion's message when a reader refuses the R of a partial cancel (its own text is not
/// passed on).
const READER_FAILED: &str = "remove: partial_cancel returned error.\n";

/// The job's tags and aggregate spans, indexed by vertex while a partial cancel edits them.
struct Tags {
    held: Vec<Option<HeldSpans>>,
    at: HashMap<VertexId, usize>,
}

impl Tags {
    fn new(job: JobSpans) -> Self {
        let at = job
            .held
            .iter()
            .enumerate()
            .map(|(i, h)| (h.vertex, i))
            .collect();
        Tags {
            held: job.held.into_iter().map(Some).collect(),
            at,
        }
    }

    fn get(&self, v: VertexId) -> Option<HeldSpans> {
        self.at.get(&v).and_then(|&i| self.held[i])
    }

    fn take(&mut self, v: VertexId) -> Option<HeldSpans> {
        let i = self.at.remove(&v)?;
        self.held[i].take()
    }

    fn into_job(self) -> JobSpans {
        JobSpans {
            held: self.held.into_iter().flatten().collect(),
        }
    }
}

/// Freed units per rank and type, and each rank's top vertex (shortest path).
#[derive(Default)]
struct Freed {
    counts: BTreeMap<i64, BTreeMap<u32, i64>>,
    roots: BTreeMap<i64, (usize, VertexId)>,
}

impl Freed {
    fn add_root(&mut self, rank: i64, len: usize, v: VertexId) {
        let entry = self.roots.entry(rank).or_insert((usize::MAX, v));
        if len < entry.0 {
            *entry = (len, v);
        }
    }
}

impl Matcher {
    /// Releases what `r` names from job `jobid`'s allocation; answers whether the job is now
    /// gone entirely. On failure the message is Fluxion's, and what was released before the
    /// failure stays released, as there.
    pub fn partial_cancel(&mut self, jobid: u64, r: &RDocument) -> Result<bool, ReplayError> {
        self.preorder = 0;
        self.postorder = 0;
        self.begin_changes();
        let job = self.jobs.remove(&jobid).unwrap_or_default();
        let mut tags = Tags::new(job);
        let result = self.partial_cancel_tagged(jobid, r, &mut tags);
        let job = tags.into_job();
        if !job.held.is_empty() {
            self.jobs.insert(jobid, job);
        }
        result.map_err(ReplayError)
    }

    fn partial_cancel_tagged(
        &mut self,
        jobid: u64,
        r: &RDocument,
        tags: &mut Tags,
    ) -> Result<bool, String> {
        let mut freed = Freed::default();
        match r {
            RDocument::Jgf(jgf) => {
                self.release_jgf_vertices(jobid, jgf, tags, &mut freed)
                    .map_err(|()| READER_FAILED.to_owned())?;
            }
            RDocument::Rv1Exec(rv1) => {
                let ranks: Vec<i64> = rv1.ranks().into_iter().map(i64::from).collect();
                self.release_ranks(jobid, &ranks, tags, &mut freed)?;
            }
        }
        if freed.roots.is_empty() {
            return Err("remove: rank_to_root is empty.\n".into());
        }
        let mut parents: BTreeMap<VertexId, BTreeMap<u32, i64>> = BTreeMap::new();
        for (rank, &(_, top)) in &freed.roots {
            let Some(counts) = freed.counts.get(rank) else {
                return Err(format!("remove: {rank} not found in rank_to_counts.\n"));
            };
            let mut v = top;
            while let Some(p) = self.parent_of(v) {
                let entry = parents.entry(p).or_default();
                for (&kind, &n) in counts {
                    *entry.entry(kind).or_default() += n;
                }
                v = p;
            }
        }
        if tags.get(self.root).is_none() {
            // Fluxion's exhaustive fallback frees every unit the job still plans.
            for v in 0..self.graph.vertex_count() as VertexId {
                if self.spans[v as usize]
                    .planned_by(jobid)
                    .is_some_and(|p| p > 0)
                {
                    self.touch(v);
                    self.spans[v as usize].set_planned(jobid, 0);
                }
            }
            return Ok(false);
        }
        for (v, counts) in parents {
            self.reduce_ancestor(jobid, v, &counts, tags)?;
        }
        Ok(tags.get(self.root).is_none())
    }

    fn parent_of(&self, v: VertexId) -> Option<VertexId> {
        let e = self.parent_edge[v as usize];
        (e != u32::MAX).then(|| self.edge_source[e as usize])
    }

    fn path_len(&self, v: VertexId) -> usize {
        self.graph.path(self.dom, v).map_or(usize::MAX, |p| p.len())
    }

    /// The JGF reader's `cancel_vtx` for every node of the R.
    fn release_jgf_vertices(
        &mut self,
        jobid: u64,
        jgf: &crate::jgf_r::JgfR,
        tags: &mut Tags,
        freed: &mut Freed,
    ) -> Result<(), ()> {
        if jobid == 0 || jobid > i64::MAX as u64 {
            return Err(());
        }
        let isect = jgf.free_ranks.is_some();
        let mut skip: BTreeSet<i64> = jgf
            .free_ranks
            .iter()
            .flatten()
            .map(|&r| i64::from(r))
            .collect();
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        for node in &jgf.vertices {
            if !seen.insert(node.vertex_id.as_str()) {
                return Err(());
            }
            let v = self.find_r_vertex(node).map_err(|_| ())?;
            if isect && skip.contains(&node.rank) {
                continue;
            }
            let held = tags.take(v);
            if let Some(span) = held.and_then(|h| h.subplan)
                && let Some(plan) = self.subplans[v as usize].as_mut()
            {
                plan.rem_span(span).map_err(|_| ())?;
            }
            self.touch(v);
            let Some(planned) = self.spans[v as usize].planned_by(jobid) else {
                return Err(());
            };
            self.spans[v as usize].remove_job(jobid);
            if planned == 0 {
                return Err(());
            }
            let rank = i64::from(self.graph.rank(v));
            *freed
                .counts
                .entry(rank)
                .or_default()
                .entry(self.graph.kind_id(v))
                .or_default() += i64::from(planned);
            skip.insert(rank);
            let len = self.path_len(v);
            freed.add_root(rank, len, v);
        }
        Ok(())
    }

    /// The vertex-cancel phase for an R that names ranks only (`rv1exec`).
    fn release_ranks(
        &mut self,
        jobid: u64,
        ranks: &[i64],
        tags: &mut Tags,
        freed: &mut Freed,
    ) -> Result<(), String> {
        let mut by_rank: BTreeMap<i64, Vec<VertexId>> = BTreeMap::new();
        let wanted: BTreeSet<i64> = ranks.iter().copied().collect();
        for v in 0..self.graph.vertex_count() as VertexId {
            let rank = i64::from(self.graph.rank(v));
            if wanted.contains(&rank) {
                by_rank.entry(rank).or_default().push(v);
            }
        }
        for &rank in ranks {
            let Some(vertices) = by_rank.get(&rank) else {
                return Err(format!("remove{rank} not found in by_rank map.\n"));
            };
            for &v in vertices {
                if let Some(held) = tags.take(v) {
                    let name = self.graph.name(v);
                    let Some(planned) = self.spans[v as usize].planned_by(jobid) else {
                        return Err(format!(
                            "rem_exclusive_filter: jobid isn't found in x_spans table.\n remove: cancel_vertex failed\n.{name}.\n"
                        ));
                    };
                    let allocated = self.spans[v as usize]
                        .spans()
                        .any(|s| s.jobid == jobid && s.allocated);
                    self.release(held, jobid);
                    if planned > 0 && allocated {
                        *freed
                            .counts
                            .entry(rank)
                            .or_default()
                            .entry(self.graph.kind_id(v))
                            .or_default() += i64::from(planned);
                    }
                }
                let len = self.path_len(v);
                freed.add_root(rank, len, v);
            }
        }
        Ok(())
    }

    /// `cancel_vertex` with `PARTIAL_CANCEL` on an ancestor: its subtree aggregate gives back
    /// `counts`; it loses the job's tag when nothing is left, and its exclusivity span always.
    fn reduce_ancestor(
        &mut self,
        jobid: u64,
        v: VertexId,
        counts: &BTreeMap<u32, i64>,
        tags: &mut Tags,
    ) -> Result<(), String> {
        let Some(held) = tags.get(v) else {
            return Ok(());
        };
        let Some(span) = held.subplan else {
            return Ok(());
        };
        let names: Vec<(String, u64)> = counts
            .iter()
            .map(|(&k, &n)| (self.graph.types().name(k).to_owned(), n.max(0) as u64))
            .collect();
        let refs: Vec<(&str, u64)> = names.iter().map(|(k, n)| (k.as_str(), *n)).collect();
        let Some(plan) = self.subplans[v as usize].as_mut() else {
            return Ok(());
        };
        let removed = plan.reduce_span(span, &refs).map_err(|_| {
            let name = self.graph.name(v);
            format!(
                "mod_agfilter: planner_multi_reduce_span returned -1.\n{name} Invalid argument.\nremove: cancel_vertex failed\n.{name}.\n"
            )
        })?;
        self.touch(v);
        if removed {
            tags.take(v);
        }
        self.spans[v as usize].remove_passing(jobid);
        Ok(())
    }
}
