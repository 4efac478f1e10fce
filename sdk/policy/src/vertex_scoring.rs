//! Graph matching: a policy scores the vertices of a resource graph once, as columns.

use crate::contract::ContractError;

/// Largest magnitude of a score: sums over the traverser's 256 levels stay far inside `i64`,
/// and the values are exact in a double for policies written in JavaScript or Python.
pub const MAX_SCORE: i64 = 1 << 53;

/// One property of one vertex.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VertexProperty {
    /// The vertex (its uniq id, the position in the columns).
    pub vertex: u32,
    /// Property name.
    pub key: String,
    /// Property value.
    pub value: String,
}

/// The graph's vertices as columns: vertex `v` is position `v` of every column.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VertexTable {
    /// Resource type names; `kinds` index into it.
    pub types: Vec<String>,
    /// Each vertex's type, as an index into `types`.
    pub kinds: Vec<u32>,
    /// Each vertex's id.
    pub ids: Vec<i64>,
    /// Properties sorted by vertex then key; empty unless the policy reads them.
    pub properties: Vec<VertexProperty>,
}

impl VertexTable {
    /// Number of vertices.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Whether the graph has no vertices.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// The index of type `name` in `types`, if the graph has it.
    pub fn type_index(&self, name: &str) -> Option<u32> {
        self.types.iter().position(|t| t == name).map(|i| i as u32)
    }
}

/// A policy's scores: a candidate `v` scores `1 + own[v] + Σ factor[a]` over its ancestors.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VertexScores {
    /// Each vertex's own score.
    pub own: Vec<i64>,
    /// What each vertex adds to the scores below it; empty when every factor is 0.
    pub factor: Vec<i64>,
}

impl VertexScores {
    /// Checks the answer for a graph of `vertices` vertices: `own` one per vertex, `factor`
    /// empty or one per vertex, every value within ±[`MAX_SCORE`].
    pub fn check(&self, vertices: usize) -> Result<(), ContractError> {
        ContractError::check_length("own scores", vertices, self.own.len())?;
        if !self.factor.is_empty() {
            ContractError::check_length("score factors", vertices, self.factor.len())?;
        }
        let bad = self
            .own
            .iter()
            .chain(&self.factor)
            .position(|s| s.unsigned_abs() > MAX_SCORE as u64);
        match bad {
            None => Ok(()),
            Some(i) => Err(ContractError::Invalid(format!(
                "score of vertex {} is beyond ±2^53",
                i % vertices.max(1)
            ))),
        }
    }
}

/// How the traverser uses a policy's scores; fixed for the life of a policy instance.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MatchTraits {
    /// Higher scores are taken first.
    pub prefers_higher: bool,
    /// A slot's candidates are ordered higher first.
    pub slot_prefers_higher: bool,
    /// The root's final choice ranks by runs of consecutive scores (`locality`).
    pub ranks_root_by_runs: bool,
    /// Exploration stops as soon as enough children are found (`stop_on_1_matches`).
    pub stop_on_first_match: bool,
    /// Types every match takes whole.
    pub exclusive_types: Vec<String>,
    /// `score` reads vertex properties.
    pub reads_properties: bool,
}

/// A graph-matching policy (`match-policy` world): scores vertices once per graph, never per
/// visit.
pub trait VertexScoring {
    /// The policy's traits, or why its settings name no policy (asked once, at load).
    fn describe(&self) -> Result<MatchTraits, String>;
    /// Scores every vertex of `vertices`, or says why the graph cannot be scored.
    fn score(&self, vertices: &VertexTable) -> Result<VertexScores, String>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_refuses_short_columns_and_huge_scores() {
        let ok = VertexScores {
            own: vec![1, 2, 3],
            factor: vec![],
        };
        assert!(ok.check(3).is_ok());
        assert!(ok.check(4).is_err());
        let factor = VertexScores {
            own: vec![1, 2, 3],
            factor: vec![0, 5],
        };
        assert!(factor.check(3).is_err());
        let huge = VertexScores {
            own: vec![1, MAX_SCORE + 1, 3],
            factor: vec![],
        };
        assert_eq!(
            huge.check(3).unwrap_err().to_string(),
            "score of vertex 1 is beyond ±2^53"
        );
    }
}
