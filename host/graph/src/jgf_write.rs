//! JGF writer: a resource graph, or a chosen set of its vertices, as JSON Graph Format that [`crate::read_jgf`] reads back.

use serde_json::{Map, Value, json};

use crate::graph::{ResourceGraph, SubsystemId, VertexId};
use crate::jgf::JgfExtras;

/// The relation the reader assumes when an edge names none.
const DEFAULT_RELATION: &str = "contains";

/// The whole graph as a JGF document (see [`jgf_value`]).
pub fn write_jgf(graph: &ResourceGraph, extras: &JgfExtras) -> String {
    jgf_value(graph, extras, None).to_string()
}

/// The JGF document of `graph`, or of the vertices in `selection` (in that order) and the edges
/// between them, as the `jgf` match writer emits a matched sub-graph.
///
/// Node ids are the vertices' `uniq_id`s as text; every vertex carries its path in each subsystem
/// it belongs to; an edge carries `relation` only when it is not `contains`. A vertex id outside
/// the graph panics, as the graph's own accessors do.
pub fn jgf_value(
    graph: &ResourceGraph,
    extras: &JgfExtras,
    selection: Option<&[VertexId]>,
) -> Value {
    let n = graph.vertex_count();
    let all: Vec<VertexId>;
    let vertices = match selection {
        Some(s) => s,
        None => {
            all = (0..n as VertexId).collect();
            &all
        }
    };
    let mut chosen = vec![false; n];
    for &v in vertices {
        chosen[v as usize] = true;
    }
    let subsystems: Vec<(SubsystemId, &str)> = (0..graph.subsystems().len())
        .map(|s| (s as SubsystemId, graph.subsystems().name(s as u32)))
        .collect();
    let nodes: Vec<Value> = vertices
        .iter()
        .map(|&v| node(graph, extras, &subsystems, v))
        .collect();
    let mut edges = Vec::new();
    for &v in vertices {
        for &(s, subsystem) in &subsystems {
            let targets = graph.out_edges(s, v);
            for (&t, relation) in targets.iter().zip(graph.out_relations(s, v)) {
                if !chosen[t as usize] {
                    continue;
                }
                let mut meta = Map::new();
                meta.insert("subsystem".into(), subsystem.into());
                if relation != DEFAULT_RELATION {
                    meta.insert("relation".into(), relation.into());
                }
                edges.push(json!({
                    "source": v.to_string(),
                    "target": t.to_string(),
                    "metadata": meta,
                }));
            }
        }
    }
    json!({ "graph": { "nodes": nodes, "edges": edges } })
}

/// One `graph.nodes[]` entry.
fn node(
    graph: &ResourceGraph,
    extras: &JgfExtras,
    subsystems: &[(SubsystemId, &str)],
    v: VertexId,
) -> Value {
    let paths: Map<String, Value> = subsystems
        .iter()
        .filter_map(|&(s, name)| Some((name.to_string(), Value::from(graph.path(s, v)?))))
        .collect();
    let mut meta = json!({
        "type": graph.kind(v),
        "basename": graph.basename(v),
        "name": graph.name(v),
        "id": graph.id(v),
        "uniq_id": v,
        "rank": graph.rank(v),
        "exclusive": extras.is_exclusive(v),
        "unit": graph.unit(v),
        "size": graph.size(v),
        "paths": paths,
    });
    if let Some(props) = extras.properties.get(&v) {
        meta["properties"] = json!(props);
    }
    json!({ "id": v.to_string(), "metadata": meta })
}
