//! The graph's vertices as the columns a match policy reads (the `vertex-scoring` contract).

use std::collections::{BTreeMap, HashMap};

use sluice_policy::{VertexProperty, VertexTable};

use crate::graph::{ResourceGraph, VertexId};

/// Vertex properties set with `set-property`, by vertex.
pub type VertexProperties = HashMap<VertexId, BTreeMap<String, String>>;

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

#[cfg(test)]
mod tests {
    use super::*;

    fn graph() -> ResourceGraph {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/flux/ex1-tiny-high-allocate/tiny.graphml");
        crate::read_grug(&path).unwrap()
    }

    #[test]
    fn columns_hold_each_vertex_type_and_id_at_its_uniq_id() {
        let g = graph();
        let t = vertex_table(&g, None);
        assert_eq!(t.len(), g.vertex_count());
        for v in 0..g.vertex_count() as VertexId {
            assert_eq!(t.types[t.kinds[v as usize] as usize], g.kind(v));
            assert_eq!(t.ids[v as usize], g.id(v));
        }
        assert!(t.properties.is_empty());
    }

    #[test]
    fn properties_cross_sorted_by_vertex_then_key_only_when_asked() {
        let g = graph();
        let mut props = VertexProperties::new();
        for (v, key, value) in [(3, "perf_class", "2"), (1, "zone", "a"), (1, "colour", "b")] {
            props
                .entry(v)
                .or_default()
                .insert(key.to_owned(), value.to_owned());
        }
        let t = vertex_table(&g, Some(&props));
        let listed: Vec<(u32, &str)> = t
            .properties
            .iter()
            .map(|p| (p.vertex, p.key.as_str()))
            .collect();
        assert_eq!(listed, [(1, "colour"), (1, "zone"), (3, "perf_class")]);
        assert!(vertex_table(&g, None).properties.is_empty());
    }
}
