//! Errors of the JGF reader: each names the JSON path of the offending value and what was expected.

use thiserror::Error;

/// Why a JSON Graph Format document could not be read into a resource graph.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum JgfError {
    /// The text is not JSON.
    #[error("jgf: line {line}, column {column}: {message}")]
    Syntax {
        /// 1-based line of the fault.
        line: usize,
        /// 1-based column of the fault.
        column: usize,
        /// serde_json's description.
        message: String,
    },
    /// A value is missing or has the wrong type or range.
    #[error("jgf: {path}: expected {expected}, found {found}")]
    Invalid {
        /// JSON path of the value, e.g. `graph.nodes[3].metadata.size`.
        path: String,
        /// What the reader needs there.
        expected: String,
        /// What the document holds there (`nothing` when absent).
        found: String,
    },
    /// Two nodes share a node `id` or a `uniq_id`.
    #[error("jgf: {path}: duplicate {field} {value}, first used at {first}")]
    Duplicate {
        /// JSON path of the second use.
        path: String,
        /// `id` or `uniq_id`.
        field: &'static str,
        /// The repeated value.
        value: String,
        /// JSON path of the first use.
        first: String,
    },
    /// An edge names a node id that no node has.
    #[error("jgf: {path}: unknown node id {id:?}")]
    UnknownNode {
        /// JSON path of the edge end, e.g. `graph.edges[2].target`.
        path: String,
        /// The id not found.
        id: String,
    },
    /// The edges of the containment subsystem form a cycle.
    #[error("jgf: containment edges form a cycle through node {id:?} (graph.nodes[{index}])")]
    ContainmentCycle {
        /// Node id of one vertex on the cycle.
        id: String,
        /// Index of that node in `graph.nodes`.
        index: usize,
    },
    /// The document holds more nodes, edges or subsystems than the reader accepts.
    #[error("jgf: {what}: {count} exceeds the limit of {limit}")]
    TooLarge {
        /// `graph.nodes`, `graph.edges` or `subsystems`.
        what: &'static str,
        /// How many the document holds.
        count: usize,
        /// The limit.
        limit: usize,
    },
}

impl JgfError {
    /// An [`JgfError::Invalid`] for `value` at `path`, which should have been `expected`.
    pub(crate) fn invalid(
        path: impl Into<String>,
        expected: impl Into<String>,
        value: Option<&serde_json::Value>,
    ) -> Self {
        JgfError::Invalid {
            path: path.into(),
            expected: expected.into(),
            found: describe(value),
        }
    }
}

/// A short description of a JSON value for error text: its kind and, for scalars, the value.
fn describe(value: Option<&serde_json::Value>) -> String {
    use serde_json::Value;
    match value {
        None => "nothing".into(),
        Some(Value::Null) => "null".into(),
        Some(Value::Bool(b)) => format!("boolean {b}"),
        Some(Value::Number(n)) => format!("number {n}"),
        Some(Value::String(s)) if s.len() <= 64 => format!("string {s:?}"),
        Some(Value::String(_)) => "a string".into(),
        Some(Value::Array(_)) => "an array".into(),
        Some(Value::Object(_)) => "an object".into(),
    }
}
