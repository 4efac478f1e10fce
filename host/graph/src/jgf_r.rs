//! A JGF document as an R (a job's vertices and edges) for `update` and `partial-cancel`, read
//! with Fluxion's defaults and messages (`resource_reader_jgf_t::fetch_jgf`, `fill_fetcher`,
//! `apply_defaults`, `unpack_edge`).

use serde_json::{Map, Value};

use crate::rv1exec::{MAX_IDS, decode_idset};

/// Most nodes or edges an R may list.
pub const MAX_R_ELEMENTS: usize = 1 << 22;

/// A refusal, worded as Fluxion's JGF reader words it (function name first).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JgfRError(pub String);

/// One JGF node of an R, with Fluxion's defaults applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RVertex {
    /// The JGF node's outer `id`.
    pub vertex_id: String,
    /// `type`.
    pub kind: String,
    /// `basename` (default: the type).
    pub basename: String,
    /// `name` (default: basename + id).
    pub name: String,
    /// `id` (default: uniq_id, or a node's host-name suffix).
    pub id: i64,
    /// `rank` (default -1).
    pub rank: i64,
    /// `exclusive` (default false).
    pub exclusive: bool,
    /// `size` (default 1).
    pub size: i64,
    /// `paths`, subsystem → path.
    pub paths: Vec<(String, String)>,
}

/// One JGF edge of an R.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct REdge {
    /// Source node's outer id.
    pub source: String,
    /// Target node's outer id.
    pub target: String,
}

/// A JGF R: its nodes and edges in document order, and `free_ranks` when given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JgfR {
    /// The nodes.
    pub vertices: Vec<RVertex>,
    /// The edges.
    pub edges: Vec<REdge>,
    /// Ranks named by a top-level `free_ranks` idset.
    pub free_ranks: Option<Vec<u32>>,
}

fn err(function: &str, text: impl std::fmt::Display) -> JgfRError {
    JgfRError(format!("{function}: {text}"))
}

impl JgfR {
    /// Reads a JGF R.
    pub fn parse(text: &str) -> Result<Self, JgfRError> {
        let doc: Value = serde_json::from_str(text).map_err(|e| {
            err(
                "fetch_jgf",
                format_args!("json_loads returned an error: {e}."),
            )
        })?;
        let graph = doc
            .get("graph")
            .ok_or_else(|| err("fetch_jgf", "JGF does not contain a required key (graph)."))?;
        let free_ranks = match doc.get("free_ranks") {
            None => None,
            Some(v) => {
                let text = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let mut budget = MAX_IDS;
                Some(
                    decode_idset(&text.replace('"', ""), &mut budget)
                        .map_err(|_| err("fetch_jgf", "failed to decode ranks."))?,
                )
            }
        };
        let nodes = graph
            .get("nodes")
            .ok_or_else(|| err("fetch_jgf", "JGF does not contain a required key (nodes)."))?;
        let edges = graph
            .get("edges")
            .ok_or_else(|| err("fetch_jgf", "JGF does not contain a required key (edges)."))?;
        let empty = Vec::new();
        let nodes = nodes.as_array().unwrap_or(&empty);
        let edges = edges.as_array().unwrap_or(&empty);
        if nodes.len() > MAX_R_ELEMENTS || edges.len() > MAX_R_ELEMENTS {
            return Err(err(
                "fetch_jgf",
                format_args!("more than {MAX_R_ELEMENTS} nodes or edges."),
            ));
        }
        let vertices = nodes
            .iter()
            .map(parse_vertex)
            .collect::<Result<Vec<_>, _>>()?;
        let edges = edges
            .iter()
            .map(|e| {
                let end = |k: &str| e.get(k).and_then(Value::as_str).map(str::to_owned);
                match (end("source"), end("target")) {
                    (Some(source), Some(target)) => Ok(REdge { source, target }),
                    _ => Err(err("unpack_edge", "encountered a malformed edge.")),
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(JgfR {
            vertices,
            edges,
            free_ranks,
        })
    }
}

fn parse_vertex(element: &Value) -> Result<RVertex, JgfRError> {
    let vertex_id = element
        .get("id")
        .and_then(Value::as_str)
        .ok_or_else(|| err("fill_fetcher", "JGF vertex id key is not found in a node."))?
        .to_owned();
    let metadata = element.get("metadata").ok_or_else(|| {
        err(
            "fill_fetcher",
            format_args!("key (metadata) is not found in an JGF node for {vertex_id}."),
        )
    })?;
    let malformed = || {
        err(
            "fill_fetcher",
            format_args!("malformed metadata in an JGF node for {vertex_id}"),
        )
    };
    let meta: &Map<String, Value> = metadata.as_object().ok_or_else(malformed)?;
    let opt_str = |k: &str| -> Result<Option<String>, JgfRError> {
        match meta.get(k) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(malformed()),
        }
    };
    let opt_int = |k: &str| -> Result<Option<i64>, JgfRError> {
        match meta.get(k) {
            None => Ok(None),
            Some(v) => v.as_i64().map(Some).ok_or_else(malformed),
        }
    };
    let kind = opt_str("type")?.ok_or_else(malformed)?;
    let basename = opt_str("basename")?;
    let name = opt_str("name")?;
    let id = opt_int("id")?;
    let uniq_id = opt_int("uniq_id")?;
    let rank = opt_int("rank")?.unwrap_or(-1);
    let exclusive = match meta.get("exclusive") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(malformed()),
    };
    let size = opt_int("size")?.unwrap_or(1);
    let paths = meta
        .get("paths")
        .and_then(Value::as_object)
        .ok_or_else(malformed)?
        .iter()
        .map(|(s, p)| p.as_str().map(|p| (s.clone(), p.to_owned())))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(malformed)?;
    let uniq_id = match uniq_id {
        Some(u) => u,
        None => vertex_id.trim().parse().map_err(|_| {
            err(
                "apply_defaults",
                format_args!(
                    "value for key (uniq_id) could not be inferred from outer 'id' field {vertex_id}."
                ),
            )
        })?,
    };
    let id = id.unwrap_or_else(|| {
        let suffix = name
            .as_deref()
            .filter(|_| kind == "node")
            .and_then(crate::rv1exec::split_hostname);
        suffix.map_or(uniq_id, |(_, n)| n)
    });
    let basename = basename.unwrap_or_else(|| kind.clone());
    let name = name.unwrap_or_else(|| format!("{basename}{id}"));
    Ok(RVertex {
        vertex_id,
        kind,
        basename,
        name,
        id,
        rank,
        exclusive,
        size,
        paths,
    })
}

#[cfg(test)]
mod tests {
    use super::JgfR;

    #[test]
    fn defaults_and_refusals_follow_fluxions_reader() {
        let r = JgfR::parse(
            r#"{"graph":{"nodes":[{"id":"7","metadata":{"type":"core","paths":{"containment":"/c0/core3"},"id":3}}],"edges":[]}}"#,
        )
        .unwrap();
        let v = &r.vertices[0];
        assert_eq!(
            (v.name.as_str(), v.rank, v.size, v.exclusive),
            ("core3", -1, 1, false)
        );
        assert_eq!(
            JgfR::parse(r#"{"nodes":[]}"#).unwrap_err().0,
            "fetch_jgf: JGF does not contain a required key (graph)."
        );
        assert_eq!(
            JgfR::parse(r#"{"graph":{"nodes":[{"id":"x","metadata":{"type":"core","paths":{}}}],"edges":[]}}"#)
                .unwrap_err()
                .0,
            "apply_defaults: value for key (uniq_id) could not be inferred from outer 'id' field x."
        );
        assert!(
            JgfR::parse(r#"{"graph":{"nodes":[{"id":"1","metadata":{"paths":{}}}],"edges":[]}}"#)
                .unwrap_err()
                .0
                .starts_with("fill_fetcher: malformed metadata")
        );
    }
}
