//! Flux-style resource graph and graph matching for sluice: `sluice resource-query` (issue 37).
//!
//! What is here:
//! - [`Recipe`] and [`read_grug`]/[`generate`]: the GRUG reader. GraphML recipes (keys, nodes,
//!   edges) are read with line:column errors, then the resource graph is generated as
//!   resource-query's depth-first emitter does: `MULTIPLY` (`multi_scale` copies),
//!   `ASSOCIATE_IN`, `ASSOCIATE_BY_PATH_IN`, ids from `id_scope`/`id_start`/`id_stride`, names
//!   `basename + id`, a path per subsystem, ranks for `node` vertices in creation order, `size`
//!   and `unit`. Unknown attributes, cycles, a missing root and oversized recipes are errors.
//! - [`ResourceGraph`]: a struct-of-arrays vertex arena (type interned in Fluxion's order, name,
//!   id, rank, size, unit, a parent link per subsystem from which paths are rebuilt) with out-edges
//!   per subsystem in CSR vectors; [`ResourceGraph::memory_bytes`] reports its footprint: 48.0 bytes
//!   per vertex for `cluster → node[16384] → core[64]` (`tests/graph_memory.rs`), against about
//!   4 KB in resource-query. Generation briefly holds 16 more bytes per edge before the CSR
//!   layout.
//! - [`Jobspec`]: the RFC 14 jobspec reader (YAML with line:column errors): `version` 1…9999,
//!   resources with `type`, `count` (integer or `{min, max, operator, operand}` with `+ * ^`),
//!   `with`, `exclusive`, `unit`, `label`, `id`, slots, `tasks`, `attributes.system.duration`,
//!   and [`Count::select`] (Fluxion's `calc_count`). Refusals carry libjobspec's own texts
//!   (capitalised as Fluxion prints them), the file, line, column and the place in the document.
//! - [`read_jgf`] and [`write_jgf`]/[`jgf_value`]: JSON Graph Format as Fluxion's `-f jgf`
//!   reader takes it (nodes with `metadata` type, basename, name, id, uniq_id, rank, exclusive,
//!   size, unit, paths, properties; edges with `metadata.subsystem` or the older
//!   `metadata.name` map) and as the `jgf` match writer needs it (the whole graph or a set of
//!   vertices). Fluxion's defaults for absent fields apply; errors name the JSON path and what
//!   was expected (missing fields, wrong types, unknown edge ends, duplicate ids, containment
//!   cycles, paths no edge explains, oversized documents). Exclusivity and properties, which the
//!   compact graph does not hold, travel beside it in [`JgfExtras`]; a `name` other than
//!   basename + id is refused for the same reason.
//!
//! - [`Planner`]: Fluxion's time-aware planner for one resource type (`planner_add_span`,
//!   `rem_span`, `reduce_span`, `avail_time_first/next`, `avail_resources_at/during`,
//!   `avail_during`, with its edge rules), kept as an ordered map of scheduled points so queries
//!   are O(log n + k).
//! - [`PlannerMulti`]: `planner_multi`, one planner per resource type over a shared window;
//!   candidate times from the first type, accepted when every other type fits.
//!
//! - [`Matcher`]: the graph made schedulable as resource-query sets it up: per vertex what jobs
//!   hold on it (answering both Fluxion's per-vertex planner and its exclusivity checker, in
//!   8 bytes when nothing is held), and a
//!   [`PlannerMulti`] per vertex over its subtree's totals of the `-p/--prune-filters` types
//!   ([`PruneFilters`], default `ALL:core,ALL:node`, leaf types no filter covers anchored at
//!   `cluster`). Its depth-first-and-up traverser follows Fluxion's `dfu_impl` step for step:
//!   `test` (resource, slot and pristine matches), `prune` (status, availability, exclusivity,
//!   subtree aggregates), static or dynamic (`first`) exploration, slots bundled from whole
//!   candidates, best-k choice in libstdc++ `std::sort` order, `resolve`/`enforce`, then the
//!   update walk that plans, tags and emits. [`MatchOp`]: `allocate`,
//!   `allocate_orelse_reserve` (candidate times from the root's aggregates),
//!   `allocate_with_satisfiability`, `satisfiability`, `without_allocating[_future]`, with
//!   `request_feasible`; `cancel`. A visit whose subtree is unchanged since it was recorded
//!   is replayed rather than walked again (identical results and visit counts).
//! - [`TraverserPolicy`] (`-T`): `simple`, or `flexible` as Fluxion's `dfu_flexible_t` at
//!   fd257f71 does it: sibling slots are alternatives ("or-slots"; the mix yielding the most
//!   slots is found by `select_or_config`'s dynamic programming over the counts found under the
//!   slot's vertex), `xor_slot` branches are expanded into at most [`MAX_XOR_EXPANSION`]
//!   candidate trees tried in turn, slots lower the level's pruning aggregates to the least
//!   demanding alternative. Deviation: the or-slot search gives up (no match) past
//!   [`MAX_OR_SLOT_STATES`] states or on an alternative that takes nothing, where Fluxion
//!   recurses without bound.
//! - [`MatchPolicy`]: how candidates are ranked, as a trait whose data is one table per graph
//!   (the contract's `vertex-scoring` columns, [`vertex_table`]; a component implements it in
//!   `sluice-runtime`) ([`IdPolicy`]: `high`, `low`, `hinode`, `lonode`, `hinodex`, `lonodex`,
//!   `first`, `firstnodex` and custom `policy=…` strings, linked in from the `match-id` plugin; [`VariationPolicy`]: `variation`, by the
//!   `perf_class` property; [`LocalityPolicy`]: `locality`, runs of contiguous ids first).
//! - [`MatchWriter`]s: `simple`, `pretty_simple`, `jgf`, `rlite`, `rv1`, `rv1_nosched`, in
//!   resource-query's bytes.
//! - [`Matcher::find`]: `find` expressions (`status`, `sched-now`, `sched-future`, `jobid-*`,
//!   `names`, `property`, `agfilter`; `and`/`or`/parentheses, left to right).
//! - [`predefined_subsystems`]: `-S/--match-subsystems` (`CA`, `IBA`, `IBBA`, `PA`, `PFS1BA`,
//!   `C+IBA`, `C+IBBA`, `C+PA`, `C+PFS1BA`, `IB+IBBA`, `C+P+IBA`, `VA`, `V+PFS1BA`, `ALL`, and
//!   lower case), and [`Matcher::set_auxiliary_subsystems`]: after a vertex's dominant children
//!   its auxiliary out-edges are explored as Fluxion's `aux_upv` does at fd257f71 (status, own
//!   planner, exclusivity), adding unchosen candidates that travel up with the dominant ones; an
//!   auxiliary type that reaches the root unqualified fails the match. Nothing auxiliary is
//!   planned or printed (Fluxion's `upd_upv` is empty). `slot` matching looks at out-edges of
//!   every subsystem, and a GRUG association over an existing (source, target) edge moves that
//!   edge to its subsystem, as in Fluxion.
//! - [`Session`]: resource-query's command interpreter (`match`, `multi-match`, `update`,
//!   `cancel`, `partial-cancel`, `find`, `info`, `list`, `stat`, `cat`, `set-/get-property`,
//!   `set-/get-status`, `help`, `quit`) with its output streams, job ids and messages;
//!   `sluice resource-query` drives it.
//! - [`Rv1Exec`] and [`JgfR`]: an R as Fluxion's `rv1exec` reader takes it (RFC 20 version 1:
//!   `R_lite` rank and child idsets, `nodelist`) and as its `jgf` reader takes one for an
//!   update; [`Matcher::update_from_r`] replays an R as a job (`update`: the reader's lookups
//!   by path and rank, availability checks and messages, then the update walk), and
//!   [`Matcher::partial_cancel`] releases what an R names (`partial-cancel`: whole ranks for
//!   rv1exec, the listed vertices for JGF, then the ancestors' aggregates reduced by what was
//!   freed; the job ends when the root loses its tag).
//!
//! Not here: the pruning filter Fluxion gives a `cluster` vertex in an auxiliary subsystem
//! (a graph whose auxiliary edges lead to a `cluster` vertex with children is refused), RFC 31
//! constraints (refused), `attach`, `remove`, the `jgf_shorthand` reader for `update`, JGF id
//! remapping and the `properties` of an rv1exec R, `find`'s aggregate-filter report
//! (`agfilter=true` is accepted but adds no data), and the `jgf_shorthand`/`rv1_shorthand`
//! writers. Where one span stands for Fluxion's separate planner and exclusivity-checker spans,
//! a partial cancel that leaves an ancestor planned (an exclusive rack or cluster) keeps its
//! exclusivity span too, and vertices an R plans but its edges never reach are held as tags of
//! the job.
//!
//! Paths follow Fluxion's copy semantics: when an association moves a vertex's path, paths
//! already built on the old one keep it (they are then stored as text).

mod aux_scores;
mod find;
mod graph;
mod grug_error;
mod grug_generate;
mod grug_recipe;
mod interner;
mod introsort;
mod jgf;
mod jgf_error;
mod jgf_r;
mod jgf_write;
mod jobspec;
mod jobspec_count;
mod match_ops;
mod match_policy;
mod match_request;
mod match_writers;
mod match_writers_json;
mod matcher;
mod partial_cancel;
mod planner;
mod planner_multi;
mod prune_filters;
mod run_record;
mod rv1exec;
mod scoring;
mod session;
mod session_r;
mod session_text;
mod subsystems;
mod traverse;
mod traverse_aux;
mod traverse_explore;
mod traverse_flexible;
mod traverse_update;
mod update;
mod vertex_spans;
mod vertex_table;
mod visit;
mod visit_cache;
mod visit_run;

pub use find::FindError;
pub use graph::{GraphBuilder, ResourceGraph, SubsystemId, VertexId, VertexSpec};
pub use grug_error::GrugError;
pub use grug_generate::{GrugLimits, generate, read_grug};
pub use grug_recipe::{GenMethod, Recipe, RecipeEdge, RecipeVertex};
pub use interner::{BUILTIN_TYPES, Interner};
pub use jgf::{JgfExtras, JgfGraph, JgfLimits, read_jgf};
pub use jgf_error::JgfError;
pub use jgf_r::{JgfR, JgfRError, REdge, RVertex};
pub use jgf_write::{jgf_value, write_jgf};
pub use jobspec::{Jobspec, JobspecError, Resource, Task};
pub use jobspec_count::{Count, CountOperator};
pub use match_ops::{MatchFailure, MatchOp};
pub use match_policy::{
    IdPolicy, LocalityPolicy, MatchPolicy, PolicyError, PolicyTable, VariationPolicy,
    policy_by_name,
};
pub use match_writers::{Emitted, MatchWriter, PrettySimpleWriter, SimpleWriter};
pub use match_writers_json::{JgfWriter, RliteWriter, Rv1Writer};
pub use matcher::{GRAPH_END, MAX_DEPTH, Matcher, MatcherError};
pub use planner::{Planner, PlannerError, Span, SpanId};
pub use planner_multi::PlannerMulti;
pub use prune_filters::{
    DEFAULT_PRUNE_FILTERS, PruneFilterError, PruneFilters, join_prune_filter_options,
};
pub use rv1exec::{RliteEntry, Rv1Exec, Rv1ExecError, decode_idset};
pub use session::{Flow, MatchFormat, Outputs, Session};
pub use session_text::format_double;
pub use subsystems::{MatchSubsystem, UnknownSubsystems, predefined_subsystems};
pub use traverse_flexible::{MAX_OR_SLOT_STATES, MAX_XOR_EXPANSION, TraverserPolicy};
pub use update::{RDocument, ReplayError};
pub use vertex_table::{VertexProperties, vertex_table};
