//! The graph's vertices as the columns a match policy reads (the `vertex-scoring` contract).

use sluice_policy::{VertexProperty, VertexTable};

use crate::graph::{ResourceGraph, VertexId};
use crate::match_policy::VertexProperties;

/// The columns of `graph` a policy scores from: type names, each vertex's type and id, and,
/// when given (a policy that reads them), the vertices' properties sorted by vertex then key.
pub fn vertex_table(graph: &ResourceGraph, properties: Option<&VertexProperties>) -> VertexTable {
    let n = graph.vertex_count() as VertexId;
    let types = graph.types();
    let mut props: Vec<VertexProperty> = properties
        .into_iter()
        .flatten()
        .flat_map(|(&vertex, kv)| {
            kv.iter().map(move |(key, value)| VertexProperty {
                vertex,
                key: key.clone(),
                value: value.clone(),
            })
        })
        .collect();
    // The map is unordered by vertex; each vertex's keys are already in order.
    props.sort_by_key(|p| p.vertex);
    VertexTable {
        types: (0..types.len() as u32)
            .map(|t| types.name(t).to_owned())
            .collect(),
        kinds: (0..n).map(|v| graph.kind_id(v)).collect(),
        ids: (0..n).map(|v| graph.id(v)).collect(),
        properties: props,
    }
}
