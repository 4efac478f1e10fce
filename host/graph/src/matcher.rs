//! The resource graph with its schedule: per-vertex planners, exclusivity checkers, subtree
//! aggregate filters (planner_multi) and the state one traversal needs.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::graph::{ResourceGraph, SubsystemId, VertexId};
use crate::match_policy::{MatchPolicy, PolicyError, PolicyTable};
use crate::match_request::accum_if;
use crate::planner::{Planner, SpanId};
use crate::planner_multi::PlannerMulti;
use crate::prune_filters::{PruneFilterError, PruneFilters};
use crate::run_record::RunRecord;
use crate::vertex_spans::{JobSpan, VertexSpans};
use crate::visit::CachedVisit;

/// End of resource-query's graph window: 100 years from 0 (`SYSTEM_MAX_DURATION`).
pub const GRAPH_END: i64 = 3_153_600_000;

/// Marks "no edge" in the per-vertex parent-edge table.
const NO_EDGE: u32 = u32::MAX;

/// Marks a vertex whose visits are never recorded (a leaf of the dominant subsystem).
pub(crate) const NO_VISIT_SLOT: u32 = u32::MAX;

/// What a walk reads of a vertex before visiting it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct VertexState {
    /// The walk that last reached it (see `Matcher::colored`).
    pub color: u32,
    /// Its place in `Matcher::visits`, or [`NO_VISIT_SLOT`].
    pub visit_slot: u32,
}

/// Why a matcher could not be set up over a graph.
#[derive(Debug, thiserror::Error)]
pub enum MatcherError {
    /// The dominant subsystem is not in the graph, or has no root.
    #[error("subsystem {0} has no root in the graph")]
    NoRoot(String),
    /// The prune-filter spec was refused.
    #[error(transparent)]
    PruneFilter(#[from] PruneFilterError),
    /// The policy could not score the graph.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// The containment is deeper than the traverser walks (it recurses once per level).
    #[error("the {subsystem} subsystem is {depth} levels deep; at most {MAX_DEPTH} are supported")]
    TooDeep {
        /// The dominant subsystem.
        subsystem: String,
        /// Its depth.
        depth: usize,
    },
    /// An auxiliary subsystem leads to a `cluster` vertex with children, which would carry
    /// a pruning filter in that subsystem (not implemented).
    #[error(
        "auxiliary subsystem {subsystem} leads to {vertex}, a cluster vertex with children: pruning filters in auxiliary subsystems are not supported"
    )]
    AuxiliaryCluster {
        /// The auxiliary subsystem.
        subsystem: String,
        /// The cluster vertex's name.
        vertex: String,
    },
}

/// The deepest graph the traverser walks: it recurses once per level, and a deeper graph (only
/// a JGF document can describe one) would exhaust the stack.
pub const MAX_DEPTH: usize = 256;

/// The number of levels below and including `root` in `subsystem`, counted without recursion.
fn depth(graph: &ResourceGraph, subsystem: SubsystemId, root: VertexId) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(root, 1usize)];
    let mut seen = vec![false; graph.vertex_count()];
    while let Some((v, d)) = stack.pop() {
        if std::mem::replace(&mut seen[v as usize], true) {
            continue;
        }
        deepest = deepest.max(d);
        stack.extend(graph.out_edges(subsystem, v).iter().map(|&t| (t, d + 1)));
    }
    deepest
}

/// A vertex a job holds, and its span in the vertex's subtree planner, if any.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HeldSpans {
    pub vertex: VertexId,
    pub subplan: Option<SpanId>,
}

/// The spans a job holds, vertex by vertex in emission order.
#[derive(Debug, Clone, Default)]
pub(crate) struct JobSpans {
    pub held: Vec<HeldSpans>,
}

/// A resource graph made schedulable: resource-query's graph database plus one matcher.
pub struct Matcher {
    pub(crate) graph: ResourceGraph,
    pub(crate) dom: SubsystemId,
    pub(crate) root: VertexId,
    pub(crate) policy: Box<dyn MatchPolicy>,
    pub(crate) table: PolicyTable,
    pub(crate) higher_first: bool,
    pub(crate) slot_higher_first: bool,
    pub(crate) root_by_runs: bool,
    pub(crate) stop_on_first: bool,
    /// Whether the flexible traverser (or-slots, `xor_slot`) is in use.
    pub(crate) flexible: bool,
    pub(crate) filters: PruneFilters,
    /// Per resource type, the types its subtree planner tracks, in column order.
    pub(crate) subplan_columns: Vec<Vec<u32>>,
    /// Types taken whole by the policy (`*nodex`).
    pub(crate) policy_exclusive: Vec<u32>,
    /// Types taken whole by the current match (policy's plus the jobspec's `exclusive: true`).
    pub(crate) exclusive: Vec<u32>,
    /// Per vertex, what jobs hold on it (its own planner and exclusivity checker in one).
    pub(crate) spans: Vec<VertexSpans>,
    pub(crate) subplans: Vec<Option<Box<PlannerMulti>>>,
    pub(crate) down: HashSet<VertexId>,
    pub(crate) properties: HashMap<VertexId, BTreeMap<String, String>>,
    pub(crate) nodes_up: usize,
    /// Per vertex, its first in-edge in the dominant subsystem.
    pub(crate) parent_edge: Vec<u32>,
    /// Per dominant edge, its source.
    pub(crate) edge_source: Vec<VertexId>,
    /// Edges chosen by the current traversal: needs and exclusivity.
    /// Per dominant edge, the traversal that last chose it, and with what needs (the top bit
    /// says exclusive): marks of older traversals are stale without being cleared.
    pub(crate) mark_seq: Vec<u32>,
    pub(crate) mark_value: Vec<u32>,
    /// The current traversal's number.
    pub(crate) seq: u32,
    /// The virtual edge into the root, set by a successful traversal.
    pub(crate) root_mark: Option<(u32, bool)>,
    /// Edge weights for `first` (absent = `u64::MAX`).
    pub(crate) weights: HashMap<u32, u64>,
    /// Per vertex visited by `first`, its out-edges keyed by (weight, child uniq_id); walked
    /// from the largest key (Fluxion's `by_outedges`).
    pub(crate) child_order: HashMap<VertexId, BTreeMap<(u64, VertexId), u32>>,
    /// Per vertex, its color and visit slot side by side: a walk reads both for every child
    /// it reaches, and on a large graph each array read apart was a cache miss of its own.
    pub(crate) vertex_state: Vec<VertexState>,
    epoch: u32,
    pub(crate) preorder: u32,
    pub(crate) postorder: u32,
    pub(crate) ml_scores: i64,
    pub(crate) err_message: String,
    pub(crate) jobs: HashMap<u64, JobSpans>,
    /// Marks in the order set, so a recorded visit knows which are its own.
    pub(crate) mark_log: Vec<(u32, u32, bool)>,
    /// Whether visits may be replayed: every vertex has at most one dominant in-edge and no
    /// auxiliary subsystem is walked.
    pub(crate) is_tree: bool,
    /// Auxiliary subsystems, walked after the dominant one at every vertex (`-S C+PA`).
    pub(crate) aux: Vec<SubsystemId>,
    /// The open scoring levels' auxiliary candidates, outermost (the root's) first.
    pub(crate) aux_frames: Vec<crate::aux_scores::AuxScores>,
    /// Whether visit replay is on.
    pub(crate) replay_visits: bool,
    /// Per interior vertex, its last recorded visit. Kept inline and in vertex order, since
    /// a match replays most of them one after the other and their keys are read first.
    pub(crate) visits: Vec<Option<CachedVisit>>,
    /// Per interior vertex (by visit slot), the recorded runs of its children (`visit_run`).
    pub(crate) runs: Vec<Vec<Option<RunRecord>>>,
    /// Per interior vertex (by visit slot), the change batch that last changed its subtree.
    pub(crate) changed: Vec<u64>,
    /// The current change batch.
    pub(crate) clock: u64,
    /// Bumped whenever the request tree is rebuilt, so recorded visits of an old tree (whose
    /// memory a new one may reuse) never match.
    pub(crate) request_generation: u64,
    /// The last jobspec's resources and the request tree built from them.
    pub(crate) prepared: Option<Prepared>,
}

/// A jobspec's request tree kept for the next match of the same resources.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    pub resources: Vec<crate::jobspec::Resource>,
    /// The candidate request trees, tried in turn (one but for `xor_slot`s); `None` when
    /// their expansion exceeded its bound.
    pub variants: Option<Vec<Vec<crate::match_request::Request>>>,
    pub dfv: Vec<(u32, i64)>,
    pub exclusive: Vec<u32>,
}

impl Matcher {
    /// Sets `graph` up for matching in subsystem `dominant` with `policy` and the prune-filter
    /// spec `filters` (e.g. `ALL:core,ALL:node`), priming every subtree aggregate.
    pub fn new(
        graph: ResourceGraph,
        dominant: &str,
        policy: Box<dyn MatchPolicy>,
        filters: &str,
    ) -> Result<Self, MatcherError> {
        let dom = graph
            .subsystem_id(dominant)
            .ok_or_else(|| MatcherError::NoRoot(dominant.into()))?;
        let root = *graph
            .roots(dom)
            .first()
            .ok_or_else(|| MatcherError::NoRoot(dominant.into()))?;
        let levels = depth(&graph, dom, root);
        if levels > MAX_DEPTH {
            return Err(MatcherError::TooDeep {
                subsystem: dominant.into(),
                depth: levels,
            });
        }
        let filters = PruneFilters::parse(filters, graph.types())?;
        let table = policy.table(&graph, &HashMap::new())?;
        let policy_exclusive: Vec<u32> = policy
            .exclusive_types()
            .iter()
            .filter_map(|t| graph.types().get(t))
            .collect();
        let n = graph.vertex_count();
        let mut edge_source = vec![0; graph.edge_count(dom)];
        let mut parent_edge = vec![NO_EDGE; n];
        for v in 0..n as VertexId {
            for e in graph.out_edge_range(dom, v) {
                edge_source[e] = v;
                let t = graph.edge_target(dom, e) as usize;
                if parent_edge[t] == NO_EDGE {
                    parent_edge[t] = e as u32;
                }
            }
        }
        let nodes_up = graph
            .vertices_of_type("node")
            .iter()
            .map(|&v| graph.size(v).max(0) as usize)
            .sum();
        let edge_count = graph.edge_count(dom);
        let mut in_degree = vec![0u8; n];
        for e in 0..graph.edge_count(dom) {
            let t = graph.edge_target(dom, e) as usize;
            in_degree[t] = in_degree[t].saturating_add(1);
        }
        let is_tree = in_degree.iter().all(|&d| d <= 1);
        let mut interior = 0u32;
        let vertex_state: Vec<VertexState> = (0..n as VertexId)
            .map(|v| {
                let visit_slot = if graph.out_edge_range(dom, v).is_empty() {
                    NO_VISIT_SLOT
                } else {
                    interior += 1;
                    interior - 1
                };
                VertexState {
                    color: 0,
                    visit_slot,
                }
            })
            .collect();
        let mut m = Matcher {
            higher_first: policy.prefers_higher(),
            slot_higher_first: policy.slot_prefers_higher(),
            root_by_runs: policy.ranks_root_by_runs(),
            stop_on_first: policy.stop_on_first_match(),
            flexible: false,
            exclusive: policy_exclusive.clone(),
            policy_exclusive,
            graph,
            dom,
            root,
            policy,
            table,
            filters,
            subplan_columns: Vec::new(),
            spans: vec![VertexSpans::default(); n],
            subplans: (0..n).map(|_| None).collect(),
            down: HashSet::new(),
            properties: HashMap::new(),
            nodes_up,
            parent_edge,
            edge_source,
            mark_seq: vec![0; edge_count],
            mark_value: vec![0; edge_count],
            seq: 0,
            root_mark: None,
            weights: HashMap::new(),
            child_order: HashMap::new(),
            vertex_state,
            epoch: 1,
            preorder: 0,
            postorder: 0,
            ml_scores: 0,
            err_message: String::new(),
            jobs: HashMap::new(),
            mark_log: Vec::new(),
            is_tree,
            aux: Vec::new(),
            aux_frames: Vec::new(),
            replay_visits: true,
            visits: (0..interior).map(|_| None).collect(),
            runs: vec![Vec::new(); interior as usize],
            changed: vec![0; interior as usize],
            clock: 1,
            request_generation: 0,
            prepared: None,
        };
        m.reset_colors();
        let mut top = Vec::new();
        m.prime(root, &mut top);
        // Priming settles the filters; every prune and plan then reads the columns per type.
        m.subplan_columns = (0..m.graph.types().len() as u32)
            .map(|kind| m.filters.types_at(kind))
            .collect();
        Ok(m)
    }

    /// The graph being matched.
    pub fn graph(&self) -> &ResourceGraph {
        &self.graph
    }

    /// The policy's name.
    pub fn policy_name(&self) -> &str {
        self.policy.name()
    }

    /// The root of the dominant subsystem.
    pub fn root(&self) -> VertexId {
        self.root
    }

    /// Vertices visited before and after their children by the last traversal.
    pub fn visit_counts(&self) -> (u32, u32) {
        (self.preorder, self.postorder)
    }

    /// Bytes the schedule holds beside the graph (tables per vertex and edge, planners made).
    pub fn memory_bytes(&self) -> usize {
        let n = self.graph.vertex_count();
        // spans, subplans; parent_edge; color and visit slot.
        let per_vertex = std::mem::size_of::<VertexSpans>()
            + std::mem::size_of::<Option<Box<Planner>>>()
            + 4
            + std::mem::size_of::<VertexState>();
        // Per edge: its source and its mark.
        let per_edge = 4 + 8;
        let held: usize = self.spans.iter().map(VertexSpans::heap_bytes).sum();
        let multis = self.subplans.iter().flatten().count()
            * (std::mem::size_of::<PlannerMulti>() + 2 * std::mem::size_of::<Planner>());
        let visits = self.visits.len() * std::mem::size_of::<Option<CachedVisit>>()
            + self
                .visits
                .iter()
                .flatten()
                .map(|c| c.marks.capacity() * std::mem::size_of::<(u32, u32, bool)>())
                .sum::<usize>();
        let runs = self.runs.len() * std::mem::size_of::<Vec<Option<RunRecord>>>()
            + self
                .runs
                .iter()
                .map(|r| {
                    r.capacity() * std::mem::size_of::<Option<RunRecord>>()
                        + r.iter().flatten().map(RunRecord::heap_bytes).sum::<usize>()
                })
                .sum::<usize>();
        n * per_vertex
            + runs
            + self.edge_source.len() * per_edge
            + held
            + multis
            + visits
            + self.changed.len() * 8
    }

    pub(crate) fn reset_colors(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.vertex_state.iter_mut().for_each(|s| s.color = 0);
            self.epoch = 1;
        }
    }

    pub(crate) fn colored(&self, v: VertexId) -> bool {
        self.vertex_state[v as usize].color == self.epoch
    }

    pub(crate) fn color(&mut self, v: VertexId) {
        self.vertex_state[v as usize].color = self.epoch;
    }

    /// `prime_pruning_filter`: every vertex with pruning types below it gets a planner_multi
    /// over its subtree's totals; leaf types no filter covers are tracked at `cluster`.
    fn prime(&mut self, u: VertexId, to_parent: &mut Vec<(u32, i64)>) {
        self.color(u);
        let kind = self.graph.kind_id(u);
        let size = self.graph.size(u);
        accum_if(&self.filters, kind, size, to_parent);
        let leaf = (0..self.graph.subsystems().len())
            .all(|s| self.graph.out_edge_range(s as SubsystemId, u).is_empty());
        if leaf {
            if !self.filters.is_pruning_type(kind) {
                if let Some(cluster) = self.graph.types().get("cluster") {
                    self.filters.set(Some(cluster), kind);
                }
                accum_if(&self.filters, kind, size, to_parent);
            }
            return;
        }
        let mut below = Vec::new();
        for e in self.graph.out_edge_range(self.dom, u) {
            let t = self.graph.edge_target(self.dom, e);
            if !self.colored(t) {
                self.prime(t, &mut below);
            }
        }
        for &(k, c) in &below {
            accum_if(&self.filters, k, c, to_parent);
        }
        let types = self.filters.types_at(kind);
        if types.is_empty() {
            return;
        }
        let totals: Vec<(String, u64)> = types
            .iter()
            .map(|&t| {
                let total = crate::match_request::aggregate_of(&below, t).max(0) as u64;
                (
                    self.filters.type_name(t, self.graph.types()).to_owned(),
                    total,
                )
            })
            .collect();
        let refs: Vec<(&str, u64)> = totals.iter().map(|(n, c)| (n.as_str(), *c)).collect();
        self.subplans[u as usize] = PlannerMulti::new(0, i64::MAX, &refs).ok().map(Box::new);
    }

    /// Type numbers of a vertex's subtree planner columns.
    pub(crate) fn subplan_types(&self, u: VertexId) -> &[u32] {
        &self.subplan_columns[self.graph.kind_id(u) as usize]
    }

    /// The current traversal's mark on edge `e`: needs and exclusivity.
    pub(crate) fn mark_of(&self, e: usize) -> Option<(u32, bool)> {
        (self.mark_seq[e] == self.seq).then(|| {
            let v = self.mark_value[e];
            (v & !(1 << 31), v & (1 << 31) != 0)
        })
    }

    /// Units of `v` free through `[at, at + duration)`.
    pub(crate) fn avail_during(&self, v: VertexId, at: i64, duration: i64) -> i64 {
        let end = at.saturating_add(duration);
        self.graph.size(v) - self.spans[v as usize].planned_peak(at, end)
    }

    /// Whether some job holds `v` at an instant of `[at, at + duration)`.
    pub(crate) fn in_use_during(&self, v: VertexId, at: i64, duration: i64) -> bool {
        self.spans[v as usize].in_use(at, at.saturating_add(duration))
    }

    /// Records that job `jobid` holds `v` over `[at, at + duration)`, planning `planned` of its
    /// units.
    pub(crate) fn hold(
        &mut self,
        v: VertexId,
        jobid: u64,
        at: i64,
        duration: i64,
        planned: u32,
        allocated: bool,
    ) {
        self.touch(v);
        self.spans[v as usize].push(JobSpan {
            start: at,
            end: at.saturating_add(duration),
            jobid,
            planned,
            allocated,
        });
    }

    /// Removes what job `jobid` holds on one vertex.
    pub(crate) fn release(&mut self, held: HeldSpans, jobid: u64) {
        self.touch(held.vertex);
        let v = held.vertex as usize;
        self.spans[v].remove_job(jobid);
        if let (Some(span), Some(p)) = (held.subplan, self.subplans[v].as_mut()) {
            let _ = p.rem_span(span);
        }
    }

    /// The vertices whose containment path is `path` (e.g. `/tiny0/rack0/node0`).
    pub fn vertex_by_path(&self, path: &str) -> Option<VertexId> {
        let name = path.rsplit('/').next()?;
        (0..self.graph.vertex_count() as VertexId)
            .filter(|&v| self.graph.name(v) == name)
            .find(|&v| self.graph.path(self.dom, v).as_deref() == Some(path))
    }

    /// Marks a vertex up or down (`set-status`). As in Fluxion only the vertex's own status
    /// changes, but the up-node count moves by the size of every node in its subtree.
    pub fn set_status(&mut self, v: VertexId, up: bool) {
        self.begin_changes();
        self.touch(v);
        let changed = if up {
            self.down.remove(&v)
        } else {
            self.down.insert(v)
        };
        if !changed {
            return;
        }
        let mut nodes = 0usize;
        let mut stack = vec![v];
        while let Some(x) = stack.pop() {
            if self.graph.kind(x) == "node" {
                nodes += self.graph.size(x).max(0) as usize;
            }
            stack.extend(self.graph.out_edges(self.dom, x).iter().copied());
        }
        self.nodes_up = if up {
            self.nodes_up + nodes
        } else {
            self.nodes_up.saturating_sub(nodes)
        };
    }

    /// Whether a vertex is up.
    pub fn is_up(&self, v: VertexId) -> bool {
        !self.down.contains(&v)
    }

    /// Sets a property (`set-property`), replacing an earlier value.
    pub fn set_property(&mut self, v: VertexId, key: &str, value: &str) {
        self.begin_changes();
        self.touch(v);
        self.properties
            .entry(v)
            .or_default()
            .insert(key.to_owned(), value.to_owned());
        if self.policy.reads_properties()
            && let Ok(table) = self.policy.table(&self.graph, &self.properties)
        {
            self.table = table;
        }
    }

    /// A vertex's properties in key order.
    pub fn properties(&self, v: VertexId) -> Option<&BTreeMap<String, String>> {
        self.properties.get(&v).filter(|p| !p.is_empty())
    }
}
