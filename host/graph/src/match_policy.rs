//! Match policies: how the traverser ranks a vertex's candidate children (`-P/--match-policy`).

use sluice_plugin_match_id::{IdError, IdFamily};
use sluice_policy::MatchTraits;

use crate::graph::{ResourceGraph, VertexId};
use crate::vertex_table::{VertexProperties, vertex_table};

/// What a policy hands the traverser, computed once per graph rather than once per visit: the
/// contract's [`VertexScores`](sluice_policy::VertexScores), two columns indexed by vertex.
///
/// Fluxion's ID-based policies score a vertex `1 + factors + id + 1`, where `factors` sums a
/// factor of every ancestor whose type carries one (node-centric policies give `node` vertices
/// `((id + 1) + 1) × 10000 + |uniq_id mod 10000 − 1|`): `own` holds `id + 1`, `factor` the
/// per-node factors (empty when all are 0).
pub type PolicyTable = sluice_policy::VertexScores;

/// Why a policy could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// The ID family refused the name or option string, or a score overflowed.
    #[error(transparent)]
    Id(#[from] IdError),
    /// A policy plugged in from outside (a component) failed or broke the contract.
    #[error("match policy {policy}: {reason}")]
    Plugin {
        /// Where the policy came from.
        policy: String,
        /// What went wrong.
        reason: String,
    },
}

/// A match policy: orders the candidates the traverser found under a vertex.
///
/// The traverser never calls the policy per vertex visit: [`MatchPolicy::table`] is asked once
/// per graph (and again only when a vertex property changes, for policies that read them), and
/// ranking inside a match uses that table plus the fixed answers below. This is the shape a
/// policy needs to sit behind a WebAssembly boundary later: the vertex attributes cross once as
/// a table, the answers come back as columns of scores, and a match costs no component call.
pub trait MatchPolicy: Send {
    /// The name the policy was chosen by (`-P` value).
    fn name(&self) -> &str;
    /// Per-vertex scores for `graph` with its vertices' `properties` (see [`PolicyTable`]).
    fn table(
        &self,
        graph: &ResourceGraph,
        properties: &VertexProperties,
    ) -> Result<PolicyTable, PolicyError>;
    /// Whether the table depends on vertex properties (then a `set-property` renews it).
    fn reads_properties(&self) -> bool {
        false
    }
    /// Whether higher scores are taken first (`high`) or lower ones (`low`).
    fn prefers_higher(&self) -> bool;
    /// Whether a slot's candidates are ordered higher first (the policy's own order for the ID
    /// policies; `variation` keeps Fluxion's default, higher first).
    fn slot_prefers_higher(&self) -> bool {
        self.prefers_higher()
    }
    /// Whether the final choice at the root ranks candidates by the run of consecutive scores
    /// they fall in rather than by score (`locality`: the highest run first, candidates of one
    /// run equal).
    fn ranks_root_by_runs(&self) -> bool {
        false
    }
    /// Whether the traverser stops exploring a vertex's children as soon as enough are found,
    /// in the order of the children's remaining capacity (Fluxion's `stop_on_1_matches`).
    fn stop_on_first_match(&self) -> bool;
    /// Types every match takes whole (`node` for the `*nodex` policies).
    fn exclusive_types(&self) -> Vec<String>;
}

/// Fluxion's multilevel-ID policy family: `high`, `low`, `hinode`, `lonode`, `hinodex`,
/// `lonodex`, `first`, `firstnodex`, and custom `policy=… node_centric=… …` strings, linked in
/// from the bundle's `match-id` plugin (the same source as its component).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdPolicy {
    family: IdFamily,
    traits: MatchTraits,
}

impl IdPolicy {
    /// The policy `name` stands for: a named policy or a custom option string.
    pub fn from_name(name: &str) -> Result<Self, PolicyError> {
        let family = IdFamily::from_name(name)?;
        let traits = family.traits();
        Ok(IdPolicy { family, traits })
    }
}

impl MatchPolicy for IdPolicy {
    fn name(&self) -> &str {
        self.family.name()
    }

    fn table(
        &self,
        graph: &ResourceGraph,
        _properties: &VertexProperties,
    ) -> Result<PolicyTable, PolicyError> {
        Ok(self.family.score(&vertex_table(graph, None))?)
    }

    fn prefers_higher(&self) -> bool {
        self.traits.prefers_higher
    }

    fn stop_on_first_match(&self) -> bool {
        self.traits.stop_on_first_match
    }

    fn exclusive_types(&self) -> Vec<String> {
        self.traits.exclusive_types.clone()
    }
}

/// Fluxion's `variation` policy (`var_aware_t`): a vertex scores `1 + perf_class`, its
/// `perf_class` property read as C's `stoi` does (9999 when absent, unreadable, negative or
/// above 9999), and lower classes are taken first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VariationPolicy;

/// `std::stoi` then the policy's bounds: leading blanks, a sign, digits; anything else 9999.
fn perf_class(value: Option<&String>) -> i64 {
    let Some(text) = value else { return 9999 };
    let t = text.trim_start();
    let (sign, digits) = match t.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, t.strip_prefix('+').unwrap_or(t)),
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    match digits[..end].parse::<i32>() {
        Ok(n) if (0..=9999).contains(&(sign * i64::from(n))) => sign * i64::from(n),
        _ => 9999,
    }
}

impl MatchPolicy for VariationPolicy {
    fn name(&self) -> &str {
        "variation"
    }

    fn table(
        &self,
        graph: &ResourceGraph,
        properties: &VertexProperties,
    ) -> Result<PolicyTable, PolicyError> {
        let own = (0..graph.vertex_count() as VertexId)
            .map(|v| perf_class(properties.get(&v).and_then(|p| p.get("perf_class"))))
            .collect();
        Ok(PolicyTable {
            own,
            factor: Vec::new(),
        })
    }

    fn reads_properties(&self) -> bool {
        true
    }

    fn prefers_higher(&self) -> bool {
        false
    }

    fn slot_prefers_higher(&self) -> bool {
        true
    }

    fn stop_on_first_match(&self) -> bool {
        false
    }

    fn exclusive_types(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Fluxion's `locality` policy (`greater_interval_first_t`): vertices score `id + 2` and are
/// taken highest first, but the root's final choice prefers the highest run of consecutive
/// scores (contiguous ids), treating the members of a run as equal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LocalityPolicy;

impl MatchPolicy for LocalityPolicy {
    fn name(&self) -> &str {
        "locality"
    }

    fn table(
        &self,
        graph: &ResourceGraph,
        _properties: &VertexProperties,
    ) -> Result<PolicyTable, PolicyError> {
        Ok(PolicyTable {
            own: (0..graph.vertex_count() as VertexId)
                .map(|v| graph.id(v) + 1)
                .collect(),
            factor: Vec::new(),
        })
    }

    fn prefers_higher(&self) -> bool {
        true
    }

    fn ranks_root_by_runs(&self) -> bool {
        true
    }

    fn stop_on_first_match(&self) -> bool {
        false
    }

    fn exclusive_types(&self) -> Vec<String> {
        Vec::new()
    }
}

/// The policy `-P name` selects: `variation`, `locality`, a named ID policy or a custom option
/// string.
pub fn policy_by_name(name: &str) -> Result<Box<dyn MatchPolicy>, PolicyError> {
    if name == "variation" {
        return Ok(Box::new(VariationPolicy));
    }
    if name == "locality" {
        return Ok(Box::new(LocalityPolicy));
    }
    Ok(Box::new(IdPolicy::from_name(name)?))
}
