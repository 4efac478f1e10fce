//! `update`: replays an existing R onto the graph as Fluxion's readers and update walk do
//! (`dfu_impl_t::update` with a reader): the R's vertices are found by path and rank, checked
//! for availability and planned, the R's edges marked, then the update walk tags, aggregates
//! and emits them as for a match.

use std::collections::{HashMap, HashSet};

use crate::graph::VertexId;
use crate::jgf_r::{JgfR, RVertex};
use crate::match_writers::MatchWriter;
use crate::matcher::{GRAPH_END, HeldSpans, JobSpans, Matcher};
use crate::rv1exec::{Rv1Exec, split_hostname};
use crate::visit::{AllocType, JobMeta};

/// An R to replay or release, as one of the readers `update` and `partial-cancel` take.
#[derive(Debug, Clone)]
pub enum RDocument {
    /// JSON Graph Format (`jgf`).
    Jgf(JgfR),
    /// RFC 20 R version 1 (`rv1exec`).
    Rv1Exec(Rv1Exec),
}

/// Why an R could not be replayed: Fluxion's message lines (each ending in a newline), empty
/// where Fluxion sets only `errno`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ReplayError(pub String);

fn fail(text: impl Into<String>) -> ReplayError {
    ReplayError(text.into())
}

/// What a reader decided before the walk: marks for the edges, and units planned per vertex.
#[derive(Default)]
struct ReplayPlan {
    marks: Vec<(u32, u32, bool)>,
    root_mark: Option<(u32, bool)>,
    /// Per vertex, the units the reader plans (its whole size), in reading order.
    planned: Vec<(VertexId, u32)>,
    claimed: HashSet<VertexId>,
}

fn units(n: i64) -> u32 {
    n.clamp(0, i64::from(u32::MAX >> 1)) as u32
}

impl Matcher {
    /// The vertices at containment `path`, found by walking names down from the root.
    pub(crate) fn vertices_at_path(&self, path: &str) -> Vec<VertexId> {
        let mut parts = path.split('/');
        if parts.next() != Some("") {
            return Vec::new();
        }
        let Some(first) = parts.next() else {
            return Vec::new();
        };
        let mut level: Vec<VertexId> = if self.graph.name(self.root) == first {
            vec![self.root]
        } else {
            Vec::new()
        };
        for part in parts {
            level = level
                .iter()
                .flat_map(|&u| self.graph.out_edges(self.dom, u).iter().copied())
                .filter(|&t| self.graph.name(t) == part)
                .collect();
            level.sort_unstable();
            level.dedup();
        }
        level.retain(|&v| self.graph.path(self.dom, v).as_deref() == Some(path));
        level
    }

    /// The vertex at `path` in `subsystem` with `rank` (Fluxion's `by_path` lookup).
    fn vertex_at(&self, subsystem: &str, path: &str, rank: i64) -> Option<VertexId> {
        let dom_name = self.graph.subsystems().name(u32::from(self.dom));
        if subsystem == dom_name {
            return self
                .vertices_at_path(path)
                .into_iter()
                .find(|&v| i64::from(self.graph.rank(v)) == rank);
        }
        let s = self.graph.subsystem_id(subsystem)?;
        let name = path.rsplit('/').next()?;
        (0..self.graph.vertex_count() as VertexId).find(|&v| {
            self.graph.name(v) == name
                && i64::from(self.graph.rank(v)) == rank
                && self.graph.path(s, v).as_deref() == Some(path)
        })
    }

    /// Finds the graph vertex a JGF R node names (`find_vtx`), with Fluxion's refusals.
    pub(crate) fn find_r_vertex(&self, r: &RVertex) -> Result<VertexId, String> {
        let mut found: Option<VertexId> = None;
        for (subsystem, path) in &r.paths {
            let Some(u) = self.vertex_at(subsystem, path, r.rank) else {
                return Err(format!(
                    "exist: inconsistent input vertex: nonexistent path ({path}) {}.\n",
                    r.vertex_id
                ));
            };
            match found {
                None => found = Some(u),
                Some(v) if v != u => {
                    return Err(format!(
                        "find_vtx: inconsistent input vertex for {path} (id={}).\n{u} != {v}.\n",
                        r.vertex_id
                    ));
                }
                Some(_) => {}
            }
        }
        let Some(v) = found else {
            return Err(format!(
                "exist: inconsistent input vertex: nonexistent path () {}.\n",
                r.vertex_id
            ));
        };
        let diff = self.diff(v, r);
        if !diff.is_empty() {
            return Err(format!(
                "find_vtx: inconsistent input vertex for {}.\n{diff}.\n",
                r.vertex_id
            ));
        }
        Ok(v)
    }

    /// Fluxion's `diff (resource_pool_t, fetch_helper_t)` text.
    fn diff(&self, v: VertexId, r: &RVertex) -> String {
        let g = &self.graph;
        let mut d = String::new();
        if g.kind(v) != r.kind {
            d += &format!("type=({}, {})", g.kind(v), r.kind);
        }
        if g.basename(v) != r.basename {
            d += &format!(" basename=({}, {})", g.basename(v), r.basename);
        }
        if g.size(v) != r.size {
            d += &format!(" size=({}, {})", g.size(v), r.size);
        }
        if g.id(v) != r.id {
            d += &format!(" id=({}, {})", g.id(v), r.id);
        }
        if g.name(v) != r.name {
            d += &format!(" name=({}, {})", g.name(v), r.name);
        }
        let mut mine: Vec<(String, String)> = (0..g.subsystems().len() as u32)
            .filter_map(|s| {
                let sub = s as crate::graph::SubsystemId;
                g.path(sub, v)
                    .map(|p| (g.subsystems().name(s).to_owned(), p))
            })
            .collect();
        let mut theirs = r.paths.clone();
        mine.sort();
        theirs.sort();
        if mine != theirs {
            d += " paths=(";
            for (k, p) in &mine {
                d += &format!("{k}={p} ");
            }
            d += ", ";
            for (k, p) in &theirs {
                d += &format!("{k}={p} ");
            }
            d += ")";
        }
        d
    }

    /// The dominant edge from `source` to `target`, if any; `Err` when no subsystem has one.
    fn edge_between(&self, source: VertexId, target: VertexId) -> Result<Option<u32>, ()> {
        if let Some(e) = self
            .graph
            .out_edge_range(self.dom, source)
            .find(|&e| self.graph.edge_target(self.dom, e) == target)
        {
            return Ok(Some(e as u32));
        }
        let elsewhere = (0..self.graph.subsystems().len()).any(|s| {
            self.graph
                .out_edges(s as crate::graph::SubsystemId, source)
                .contains(&target)
        });
        if elsewhere { Ok(None) } else { Err(()) }
    }

    /// Whether `v` has `units` free through `[at, at + duration)` and the window holds it.
    fn replay_fits(&self, plan: &ReplayPlan, v: VertexId, at: i64, duration: i64) -> bool {
        !plan.claimed.contains(&v) && self.avail_during(v, at, duration) >= self.graph.size(v)
    }

    fn in_window(at: i64, duration: i64) -> bool {
        at.checked_add(duration).is_some_and(|end| end <= GRAPH_END)
    }

    /// Replays `r` as job `jobid` over `[at, at + duration)`, emitting the job's vertices to
    /// `writer` as the update walk of a match would.
    pub fn update_from_r(
        &mut self,
        r: &RDocument,
        jobid: u64,
        at: i64,
        duration: i64,
        writer: &mut dyn MatchWriter,
    ) -> Result<(), ReplayError> {
        if at < 0 || duration <= 0 {
            return Err(fail(format!("update: invalid time ({at}, {duration}).\n")));
        }
        let plan = match r {
            RDocument::Jgf(jgf) => self.plan_jgf(jgf, at, duration)?,
            RDocument::Rv1Exec(rv1) => self.plan_rv1exec(rv1, at, duration)?,
        };
        self.apply_replay(plan, jobid, at, duration, writer)
    }

    fn plan_jgf(&self, jgf: &JgfR, at: i64, duration: i64) -> Result<ReplayPlan, ReplayError> {
        let mut plan = ReplayPlan::default();
        // Per JGF node id: vertex, whether it is a root, its size and exclusivity.
        let mut vmap: HashMap<&str, (VertexId, bool, u32, bool)> = HashMap::new();
        let skip: Option<HashSet<i64>> = jgf
            .free_ranks
            .as_ref()
            .map(|r| r.iter().map(|&x| i64::from(x)).collect());
        for node in &jgf.vertices {
            if vmap.contains_key(node.vertex_id.as_str()) {
                return Err(fail(format!(
                    "find_vtx: found duplicate JGF node id for {}.\n",
                    node.vertex_id
                )));
            }
            let v = self.find_r_vertex(node).map_err(fail)?;
            if skip.as_ref().is_some_and(|s| s.contains(&node.rank)) {
                continue;
            }
            let is_root = node
                .paths
                .iter()
                .any(|(_, p)| p.rfind('/') == Some(0) && p.len() > 1);
            vmap.insert(
                node.vertex_id.as_str(),
                (v, is_root, units(node.size), node.exclusive),
            );
            let name = self.graph.name(v);
            if !Self::in_window(at, duration) {
                return Err(fail(if node.exclusive {
                    format!("update_vtx_plan: can't add span into {name}.\n")
                } else {
                    format!(
                        "update_vtx_plan: planner_avail_resource_during return -1 for {name}.\n"
                    )
                }));
            }
            if !self.replay_fits(&plan, v, at, duration) {
                return Err(fail(if node.exclusive {
                    format!("update_vtx_plan: can't add span into {name}.\n")
                } else {
                    format!("update_vtx_plan: {name} is unavailable.\n")
                }));
            }
            if node.exclusive {
                plan.claimed.insert(v);
                plan.planned.push((v, units(self.graph.size(v))));
            }
        }
        for edge in &jgf.edges {
            let (Some(&src), Some(&tgt)) = (
                vmap.get(edge.source.as_str()),
                vmap.get(edge.target.as_str()),
            ) else {
                if skip.is_some() {
                    continue;
                }
                return Err(fail(format!(
                    "unpack_edge: source and/or target vertex not found{} -> {}.\n",
                    edge.source, edge.target
                )));
            };
            if src.1 {
                plan.root_mark = Some((src.2, src.3));
                if let Some(entry) = vmap.get_mut(edge.source.as_str()) {
                    entry.1 = false;
                }
            }
            match self.edge_between(src.0, tgt.0) {
                Ok(Some(e)) => plan.marks.push((e, tgt.2, tgt.3)),
                Ok(None) => {}
                Err(()) => {
                    return Err(fail(format!(
                        "update_tgt_edge: JGF edge from {} to {} not found in resource graph.\n",
                        edge.source, edge.target
                    )));
                }
            }
        }
        Ok(plan)
    }

    fn plan_rv1exec(
        &self,
        rv1: &Rv1Exec,
        at: i64,
        duration: i64,
    ) -> Result<ReplayPlan, ReplayError> {
        let mut plan = ReplayPlan::default();
        let Some(nodelist) = &rv1.nodelist else {
            return Err(fail(""));
        };
        let ranks = rv1.ranks();
        let root = self.root;
        plan.root_mark = Some((units(self.graph.size(root)), false));
        let root_path = self.graph.path(self.dom, root).unwrap_or_default();
        let node_kind = self.graph.types().get("node");
        let mut updated: HashMap<u32, usize> = HashMap::new();
        let mut by_rank: HashMap<i32, usize> = HashMap::new();
        for v in 0..self.graph.vertex_count() as VertexId {
            *by_rank.entry(self.graph.rank(v)).or_default() += 1;
        }
        for entry in &rv1.entries {
            let Some(children) = &entry.children else {
                return Err(fail(""));
            };
            for &rank in &entry.ranks {
                let index = ranks.binary_search(&rank).unwrap_or(usize::MAX);
                let Some(host) = nodelist.get(index) else {
                    return Err(fail(""));
                };
                let Some((_, id)) = split_hostname(host) else {
                    return Err(fail(format!(
                        "unpack_rank: error splitting hostname={host}; "
                    )));
                };
                let failed_rank = format!("unpack_rank: failed unpacking rank for {host}.\n");
                let path = format!("{root_path}/{host}");
                let node = self
                    .vertices_at_path(&path)
                    .into_iter()
                    .find(|&v| {
                        self.graph.rank(v) as i64 == i64::from(rank)
                            && self.graph.id(v) == id
                            && self.graph.size(v) == 1
                            && Some(self.graph.kind_id(v)) == node_kind
                    })
                    .ok_or_else(|| {
                        fail(format!(
                            "add_or_update: couldn't find vertex in graph for {host}.\n{failed_rank}"
                        ))
                    })?;
                self.replay_vertex(&mut plan, node, root, at, duration, false)
                    .map_err(|m| fail(format!("{m}{failed_rank}")))?;
                for (kind, ids) in children {
                    for &cid in ids {
                        let name = format!("{kind}{cid}");
                        let failed_child =
                            format!("unpack_child: failed unpacking child for {name}.\n");
                        let child = self
                            .vertices_at_path(&format!("{path}/{name}"))
                            .into_iter()
                            .find(|&v| {
                                self.graph.rank(v) as i64 == i64::from(rank)
                                    && self.graph.id(v) == i64::from(cid)
                                    && self.graph.size(v) == 1
                                    && self.graph.kind(v) == kind.as_str()
                            })
                            .ok_or_else(|| {
                                fail(format!(
                                    "add_or_update: couldn't find vertex in graph for {name}.\n{failed_child}"
                                ))
                            })?;
                        self.replay_vertex(&mut plan, child, node, at, duration, true)
                            .map_err(|m| fail(format!("{m}{failed_child}")))?;
                        *updated.entry(rank).or_default() += 1;
                    }
                }
                // The node is planned only when the R names every vertex of its rank.
                let Some(&count) = updated.get(&rank) else {
                    return Err(fail(format!(
                        "update_exclusivity: rank not found in agfilters map.\nunpack_rank: exclusive filter update failed for {host}.\n"
                    )));
                };
                let of_rank = i32::try_from(rank)
                    .ok()
                    .and_then(|r| by_rank.get(&r))
                    .copied()
                    .unwrap_or(0);
                if count + 1 == of_rank {
                    plan.claimed.insert(node);
                    plan.planned.push((node, units(self.graph.size(node))));
                    *updated.entry(rank).or_default() += 1;
                }
            }
        }
        Ok(plan)
    }

    /// `update_vertex` and `update_edges` of the rv1exec reader for one vertex under `parent`.
    fn replay_vertex(
        &self,
        plan: &mut ReplayPlan,
        v: VertexId,
        parent: VertexId,
        at: i64,
        duration: i64,
        planned: bool,
    ) -> Result<(), String> {
        let name = self.graph.name(v);
        if !Self::in_window(at, duration) {
            return Err(format!(
                "update_vertex: planner_avail_resource_during return -1 for {name}.\n"
            ));
        }
        if !self.replay_fits(plan, v, at, duration) {
            return Err(format!("update_vertex: {name} is unavailable.\n"));
        }
        if planned {
            plan.claimed.insert(v);
            plan.planned.push((v, units(self.graph.size(v))));
        }
        match self.edge_between(parent, v) {
            Ok(Some(e)) => {
                plan.marks.push((e, units(self.graph.size(v)), true));
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(()) => Err("update_edges: rv1exec edge not found in resource graph.\n".into()),
        }
    }

    fn apply_replay(
        &mut self,
        plan: ReplayPlan,
        jobid: u64,
        at: i64,
        duration: i64,
        writer: &mut dyn MatchWriter,
    ) -> Result<(), ReplayError> {
        self.tick();
        for &(e, needs, x) in &plan.marks {
            self.mark(e, needs, x);
        }
        let meta = JobMeta {
            at,
            now: 0,
            duration,
            jobid,
            alloc: AllocType::Alloc,
        };
        let walked = match plan.root_mark {
            Some(mark) => {
                self.root_mark = Some(mark);
                if !self.update(&meta, writer) {
                    return Err(fail(""));
                }
                true
            }
            // The R never reached the root: Fluxion plans the reader's vertices only.
            None => false,
        };
        // The reader, not the walk, decides what each vertex plans.
        let wanted: HashMap<VertexId, u32> = plan.planned.iter().copied().collect();
        let mut job = if walked {
            self.jobs.remove(&jobid).unwrap_or_default()
        } else {
            JobSpans::default()
        };
        let held: HashSet<VertexId> = job.held.iter().map(|h| h.vertex).collect();
        for h in &job.held {
            let units = wanted.get(&h.vertex).copied().unwrap_or(0);
            self.spans[h.vertex as usize].set_planned(jobid, units);
        }
        for &(v, units) in &plan.planned {
            if !held.contains(&v) {
                self.hold(v, jobid, at, duration, units, true);
                job.held.push(HeldSpans {
                    vertex: v,
                    subplan: None,
                });
            }
        }
        if !job.held.is_empty() {
            self.jobs.insert(jobid, job);
        }
        Ok(())
    }
}
