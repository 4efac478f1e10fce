//! JGF reader: JSON Graph Format documents, as Fluxion's `-f jgf` reader takes them, into a [`ResourceGraph`].

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};

use crate::graph::{GraphBuilder, ResourceGraph, SubsystemId, VertexId, VertexSpec};
use crate::jgf_error::JgfError;

/// The subsystem whose edges must form a forest (Fluxion's dominant subsystem).
const CONTAINMENT: &str = "containment";
/// The relation of an edge that names its subsystem but no relation.
const DEFAULT_RELATION: &str = "contains";

/// Bounds on what a JGF document may make the reader build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JgfLimits {
    /// Most nodes accepted.
    pub max_nodes: usize,
    /// Most edges accepted.
    pub max_edges: usize,
    /// Most distinct subsystems accepted (each costs four bytes per vertex).
    pub max_subsystems: usize,
}

impl Default for JgfLimits {
    /// Two million vertices, resource-query's own ceiling for `--reserve-vtx-vec`, and as many
    /// edges per subsystem-pair again.
    fn default() -> Self {
        JgfLimits {
            max_nodes: 2_000_000,
            max_edges: 4_000_000,
            max_subsystems: 64,
        }
    }
}

/// What JGF carries per vertex beyond the compact graph: exclusivity and properties.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JgfExtras {
    /// Per vertex, its `exclusive` flag (empty or short means false).
    pub exclusive: Vec<bool>,
    /// Per vertex with properties, its `properties` object (key → value).
    pub properties: BTreeMap<VertexId, BTreeMap<String, String>>,
}

impl JgfExtras {
    /// Whether vertex `v` is marked exclusive.
    pub fn is_exclusive(&self, v: VertexId) -> bool {
        self.exclusive.get(v as usize).copied().unwrap_or(false)
    }
}

/// A graph read from JGF with the per-vertex facts the compact graph does not hold.
#[derive(Debug, Clone)]
pub struct JgfGraph {
    /// The resource graph; vertices are numbered in ascending `uniq_id` order.
    pub graph: ResourceGraph,
    /// Exclusivity and properties of the vertices.
    pub extras: JgfExtras,
}

/// One `graph.nodes[]` entry, checked.
struct Node<'a> {
    index: usize,
    key: &'a str,
    uniq_id: u64,
    kind: &'a str,
    basename: &'a str,
    name: Option<&'a str>,
    id: i64,
    rank: i32,
    size: i64,
    unit: &'a str,
    exclusive: bool,
    paths: Vec<(&'a str, &'a str)>,
    properties: BTreeMap<String, String>,
}

/// Reads a JGF document: `graph.nodes[]` (`id`, `metadata` with `type`, `basename`, `name`,
/// `id`, `uniq_id`, `rank`, `status`, `exclusive`, `size`, `unit`, `paths`, `properties`) and
/// `graph.edges[]` (`source`, `target`, `metadata.subsystem` with an optional `relation`, or the
/// older `metadata.name` map from subsystem to relation).
///
/// As in Fluxion, `type` and `paths` are required; an absent `uniq_id` is the node's id read as
/// a number, `basename` the type, `id` the trailing digits of a `node`'s name or else the uniq_id,
/// `size` 1, `rank` -1, an edge without a subsystem is containment. Unlike Fluxion, a `name`
/// must be the basename followed by the id (the compact graph stores no free names), and
/// `status` is checked but not kept.
///
/// Vertices are created in ascending `uniq_id` order; each vertex's path in a subsystem must be
/// `/name` or the path of one of its parents by an edge of that subsystem followed by `/name`.
pub fn read_jgf(text: &str, limits: JgfLimits) -> Result<JgfGraph, JgfError> {
    let doc: Value = serde_json::from_str(text).map_err(|e| JgfError::Syntax {
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let graph = object(doc.get("graph"), "graph")?;
    let nodes = array(graph.get("nodes"), "graph.nodes")?;
    if nodes.len() > limits.max_nodes {
        return Err(JgfError::TooLarge {
            what: "graph.nodes",
            count: nodes.len(),
            limit: limits.max_nodes,
        });
    }
    let edges = array(graph.get("edges"), "graph.edges")?;
    if edges.len() > limits.max_edges {
        return Err(JgfError::TooLarge {
            what: "graph.edges",
            count: edges.len(),
            limit: limits.max_edges,
        });
    }
    let mut parsed = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| parse_node(i, n))
        .collect::<Result<Vec<_>, _>>()?;
    check_unique(&parsed)?;
    parsed.sort_by_key(|n| n.uniq_id);

    let mut builder = GraphBuilder::new();
    let mut by_key: HashMap<&str, VertexId> = HashMap::with_capacity(parsed.len());
    let mut extras = JgfExtras {
        exclusive: Vec::with_capacity(parsed.len()),
        properties: BTreeMap::new(),
    };
    for n in &mut parsed {
        let v = builder.add_vertex(VertexSpec {
            kind: n.kind,
            basename: n.basename,
            id: n.id,
            rank: n.rank,
            size: n.size,
            unit: n.unit,
        });
        by_key.insert(n.key, v);
        extras.exclusive.push(n.exclusive);
        if !n.properties.is_empty() {
            extras
                .properties
                .insert(v, std::mem::take(&mut n.properties));
        }
        if let Some(name) = n.name {
            let expected = builder.graph().name(v);
            if name != expected {
                return Err(JgfError::invalid(
                    format!("graph.nodes[{}].metadata.name", n.index),
                    format!("{expected:?} (basename followed by id)"),
                    Some(&Value::String(name.into())),
                ));
            }
        }
    }
    for n in &parsed {
        for (subsystem, _) in &n.paths {
            register(&mut builder, subsystem, limits)?;
        }
    }

    // Per subsystem, each vertex's in-edge sources, for finding the parent a path names.
    let mut parents: Vec<Vec<Vec<VertexId>>> = Vec::new();
    for (e, edge) in edges.iter().enumerate() {
        for (subsystem, src, dst, relation) in parse_edge(e, edge, &by_key)? {
            let s = register(&mut builder, subsystem, limits)? as usize;
            if parents.len() <= s {
                parents.resize(s + 1, Vec::new());
            }
            if parents[s].is_empty() {
                parents[s] = vec![Vec::new(); parsed.len()];
            }
            parents[s][dst as usize].push(src);
            builder.add_edge(s as SubsystemId, src, dst, relation);
        }
    }
    let containment = builder.graph().subsystem_id(CONTAINMENT);
    if let Some(p) = containment
        .and_then(|s| parents.get(s as usize))
        .filter(|p| !p.is_empty())
    {
        check_acyclic(p, &parsed)?;
    }
    set_paths(&mut builder, &parsed, &parents)?;
    Ok(JgfGraph {
        graph: builder.finish(),
        extras,
    })
}

/// The id of `subsystem`, registering it unless that would pass the limit.
fn register(
    builder: &mut GraphBuilder,
    subsystem: &str,
    limits: JgfLimits,
) -> Result<SubsystemId, JgfError> {
    let known = builder.graph().subsystems();
    if known.get(subsystem).is_none() && known.len() >= limits.max_subsystems {
        return Err(JgfError::TooLarge {
            what: "subsystems",
            count: known.len() + 1,
            limit: limits.max_subsystems,
        });
    }
    Ok(builder.subsystem(subsystem))
}

/// Sets every vertex's path from its parent by edge, checking it against the document's text.
fn set_paths(
    builder: &mut GraphBuilder,
    parsed: &[Node<'_>],
    parents: &[Vec<Vec<VertexId>>],
) -> Result<(), JgfError> {
    // A parent's path is a strict prefix of its child's, so shorter paths are set first.
    let mut order: Vec<(usize, VertexId, &str, &str)> = parsed
        .iter()
        .enumerate()
        .flat_map(|(v, n)| {
            n.paths
                .iter()
                .map(move |&(s, p)| (n.index, v as VertexId, s, p))
        })
        .collect();
    order.sort_by_key(|&(_, _, _, p)| p.len());
    for (index, v, subsystem, path) in order {
        let s = builder.subsystem(subsystem);
        let name = builder.graph().name(v);
        let parent = if path.strip_prefix('/') == Some(name.as_str()) {
            None
        } else {
            let candidates = parents
                .get(s as usize)
                .and_then(|p| p.get(v as usize))
                .map(Vec::as_slice)
                .unwrap_or_default();
            let found = candidates.iter().copied().find(|&u| {
                builder.graph().path(s, u).is_some_and(|up| {
                    path.strip_prefix(up.as_str())
                        .and_then(|rest| rest.strip_prefix('/'))
                        == Some(name.as_str())
                })
            });
            match found {
                Some(u) => Some(u),
                None => {
                    return Err(JgfError::invalid(
                        format!("graph.nodes[{index}].metadata.paths.{subsystem}"),
                        format!(
                            "\"/{name}\" or the {subsystem} path of a parent by a {subsystem} edge followed by \"/{name}\""
                        ),
                        Some(&Value::String(path.into())),
                    ));
                }
            }
        };
        builder.set_path(s, v, parent);
    }
    Ok(())
}

/// Refuses a cycle among containment edges (Kahn's algorithm over in-edge lists).
fn check_acyclic(parents: &[Vec<VertexId>], parsed: &[Node<'_>]) -> Result<(), JgfError> {
    let n = parents.len();
    let mut children: Vec<Vec<VertexId>> = vec![Vec::new(); n];
    let mut indegree = vec![0usize; n];
    for (v, ps) in parents.iter().enumerate() {
        indegree[v] = ps.len();
        for &u in ps {
            children[u as usize].push(v as VertexId);
        }
    }
    let mut ready: Vec<VertexId> = (0..n as VertexId)
        .filter(|&v| indegree[v as usize] == 0)
        .collect();
    let mut seen = 0;
    while let Some(u) = ready.pop() {
        seen += 1;
        for &c in &children[u as usize] {
            indegree[c as usize] -= 1;
            if indegree[c as usize] == 0 {
                ready.push(c);
            }
        }
    }
    if seen == n {
        return Ok(());
    }
    let v = (0..n).find(|&v| indegree[v] > 0).expect("a vertex left");
    Err(JgfError::ContainmentCycle {
        id: parsed[v].key.to_string(),
        index: parsed[v].index,
    })
}

/// Refuses two nodes with one node `id` or one `uniq_id`.
fn check_unique(parsed: &[Node<'_>]) -> Result<(), JgfError> {
    let mut keys: HashMap<&str, usize> = HashMap::with_capacity(parsed.len());
    let mut uniq: HashMap<u64, usize> = HashMap::with_capacity(parsed.len());
    for n in parsed {
        if let Some(first) = keys.insert(n.key, n.index) {
            return Err(JgfError::Duplicate {
                path: format!("graph.nodes[{}].id", n.index),
                field: "id",
                value: format!("{:?}", n.key),
                first: format!("graph.nodes[{first}].id"),
            });
        }
        if let Some(first) = uniq.insert(n.uniq_id, n.index) {
            return Err(JgfError::Duplicate {
                path: format!("graph.nodes[{}].metadata.uniq_id", n.index),
                field: "uniq_id",
                value: n.uniq_id.to_string(),
                first: format!("graph.nodes[{first}].metadata.uniq_id"),
            });
        }
    }
    Ok(())
}

/// The id Fluxion gives a node without one: a `node`'s trailing digits of its name (a hostname),
/// otherwise its uniq_id.
fn default_id(kind: &str, name: Option<&str>, uniq_id: u64) -> Option<i64> {
    let digits = name.filter(|_| kind == "node").map(|n| {
        let stem = n.trim_end_matches(|c: char| c.is_ascii_digit());
        &n[stem.len()..]
    });
    match digits {
        Some(d) if !d.is_empty() => d.parse().ok(),
        _ => i64::try_from(uniq_id).ok(),
    }
}

/// Checks one `graph.nodes[i]` entry.
fn parse_node(i: usize, node: &Value) -> Result<Node<'_>, JgfError> {
    let at = format!("graph.nodes[{i}]");
    let obj = object(Some(node), &at)?;
    let key = string(obj.get("id"), &format!("{at}.id"))?;
    let meta_at = format!("{at}.metadata");
    let meta = object(obj.get("metadata"), &meta_at)?;
    let field = |name: &str| (meta.get(name), format!("{meta_at}.{name}"));
    let (value, path) = field("uniq_id");
    // Fluxion infers an absent uniq_id from the node's own id.
    let uniq_id = match value {
        None => key.parse::<u64>().ok(),
        Some(v) => v.as_u64(),
    }
    .ok_or_else(|| {
        JgfError::invalid(
            &path,
            "a non-negative integer (or a node id that is one)",
            value,
        )
    })?;
    let (value, path) = field("type");
    let kind = nonempty(value, &path)?;
    let (value, path) = field("basename");
    let basename = optional(value, |v| string(Some(v), &path))?.unwrap_or(kind);
    let (value, path) = field("name");
    let name = optional(value, |v| string(Some(v), &path))?;
    let (value, path) = field("id");
    let id = match optional(value, |v| integer(Some(v), &path, -1, i64::MAX))? {
        Some(id) => id,
        None => default_id(kind, name, uniq_id)
            .ok_or_else(|| JgfError::invalid(&path, "an integer from -1 to 2^63-1", value))?,
    };
    let (value, path) = field("rank");
    let rank =
        optional(value, |v| integer(Some(v), &path, -1, i32::MAX as i64))?.map_or(-1, |r| r as i32);
    let (value, path) = field("size");
    let size = optional(value, |v| integer(Some(v), &path, 0, i64::MAX))?.unwrap_or(1);
    let (value, path) = field("unit");
    let unit = optional(value, |v| string(Some(v), &path))?.unwrap_or("");
    let (value, path) = field("exclusive");
    let exclusive = optional(value, |v| {
        v.as_bool()
            .ok_or_else(|| JgfError::invalid(&path, "a boolean", Some(v)))
    })?
    .unwrap_or(false);
    let (value, path) = field("status");
    optional(value, |v| integer(Some(v), &path, 0, 1))?;
    let (value, path) = field("paths");
    let mut paths = Vec::new();
    {
        let map = object(value, &path)?;
        for (subsystem, p) in map {
            let p_at = format!("{path}.{subsystem}");
            let text = string(Some(p), &p_at)?;
            if !text.starts_with('/') {
                return Err(JgfError::invalid(
                    p_at,
                    "a path starting with \"/\"",
                    Some(p),
                ));
            }
            paths.push((subsystem.as_str(), text));
        }
    }
    let (value, path) = field("properties");
    let mut properties = BTreeMap::new();
    if let Some(map) = optional(value.filter(|v| !v.is_null()), |v| object(Some(v), &path))? {
        for (k, p) in map {
            let text = string(Some(p), &format!("{path}.{k}"))?;
            properties.insert(k.clone(), text.to_string());
        }
    }
    Ok(Node {
        index: i,
        key,
        uniq_id,
        kind,
        basename,
        name,
        id,
        rank,
        size,
        unit,
        exclusive,
        paths,
        properties,
    })
}

/// Checks one `graph.edges[e]` entry: its ends and the (subsystem, relation) pairs it stands for.
fn parse_edge<'a>(
    e: usize,
    edge: &'a Value,
    by_key: &HashMap<&str, VertexId>,
) -> Result<Vec<(&'a str, VertexId, VertexId, &'a str)>, JgfError> {
    let at = format!("graph.edges[{e}]");
    let obj = object(Some(edge), &at)?;
    let end = |name: &str| -> Result<VertexId, JgfError> {
        let path = format!("{at}.{name}");
        let key = string(obj.get(name), &path)?;
        by_key
            .get(key)
            .copied()
            .ok_or_else(|| JgfError::UnknownNode {
                path,
                id: key.to_string(),
            })
    };
    let (src, dst) = (end("source")?, end("target")?);
    let meta_at = format!("{at}.metadata");
    let meta = optional(obj.get("metadata"), |m| object(Some(m), &meta_at))?;
    let get = |key: &str| meta.and_then(|m| m.get(key));
    if let Some(subsystem) = get("subsystem") {
        let subsystem = nonempty(Some(subsystem), &format!("{meta_at}.subsystem"))?;
        let relation = optional(get("relation"), |v| {
            nonempty(Some(v), &format!("{meta_at}.relation"))
        })?
        .unwrap_or(DEFAULT_RELATION);
        return Ok(vec![(subsystem, src, dst, relation)]);
    }
    let name_at = format!("{meta_at}.name");
    // Fluxion reads an edge without a subsystem as containment.
    let Some(names) = get("name") else {
        let relation = optional(get("relation"), |v| {
            nonempty(Some(v), &format!("{meta_at}.relation"))
        })?
        .unwrap_or(DEFAULT_RELATION);
        return Ok(vec![(CONTAINMENT, src, dst, relation)]);
    };
    let names = object(Some(names), &name_at)?;
    if names.is_empty() {
        return Err(JgfError::invalid(
            name_at,
            "at least one subsystem",
            get("name"),
        ));
    }
    names
        .iter()
        .map(|(subsystem, relation)| {
            let relation = nonempty(Some(relation), &format!("{name_at}.{subsystem}"))?;
            Ok((subsystem.as_str(), src, dst, relation))
        })
        .collect()
}

/// `value` as an object.
fn object<'a>(value: Option<&'a Value>, path: &str) -> Result<&'a Map<String, Value>, JgfError> {
    value
        .and_then(Value::as_object)
        .ok_or_else(|| JgfError::invalid(path, "an object", value))
}

/// `value` as an array.
fn array<'a>(value: Option<&'a Value>, path: &str) -> Result<&'a [Value], JgfError> {
    value
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .ok_or_else(|| JgfError::invalid(path, "an array", value))
}

/// `value` as a string.
fn string<'a>(value: Option<&'a Value>, path: &str) -> Result<&'a str, JgfError> {
    value
        .and_then(Value::as_str)
        .ok_or_else(|| JgfError::invalid(path, "a string", value))
}

/// `value` as a string that is not empty.
fn nonempty<'a>(value: Option<&'a Value>, path: &str) -> Result<&'a str, JgfError> {
    value
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| JgfError::invalid(path, "a non-empty string", value))
}

/// `value` as an integer in `min..=max`.
fn integer(value: Option<&Value>, path: &str, min: i64, max: i64) -> Result<i64, JgfError> {
    value
        .and_then(Value::as_i64)
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| JgfError::invalid(path, format!("an integer from {min} to {max}"), value))
}

/// Applies `check` to a member that may be absent.
fn optional<'a, T>(
    value: Option<&'a Value>,
    check: impl FnOnce(&'a Value) -> Result<T, JgfError>,
) -> Result<Option<T>, JgfError> {
    value.map(check).transpose()
}
