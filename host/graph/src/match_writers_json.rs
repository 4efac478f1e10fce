//! The JSON match writers: `jgf` (the matched subgraph), `rlite` (RFC 20 `R_lite`), `rv1`
//! (RFC 20 R with the JGF as `scheduling`) and `rv1_nosched`, printed as jansson's
//! `json_dumps(o, JSON_INDENT(0))` does: one line, `", "` and `": "` separators, keys in
//! insertion order.

use std::collections::BTreeMap;

use crate::graph::{ResourceGraph, SubsystemId, VertexId};
use crate::match_writers::{Emitted, MatchWriter};

/// A JSON string literal.
fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("a string always serializes")
}

/// An object from `(key, already-encoded value)` pairs, in order.
fn object(pairs: &[(&str, String)]) -> String {
    let body: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{}: {v}", quote(k)))
        .collect();
    format!("{{{}}}", body.join(", "))
}

/// An array of already-encoded values.
fn array(items: &[String]) -> String {
    format!("[{}]", items.join(", "))
}

/// flux's idset encoding of ids: sorted ranges `a-b` joined by commas.
fn encode_ids(ids: &[i64]) -> String {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            sorted[i].to_string()
        } else {
            format!("{}-{}", sorted[i], sorted[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// `jgf`: the matched vertices (emission order) and the edges between them.
#[derive(Debug, Default)]
pub struct JgfWriter {
    nodes: Vec<String>,
    edges: Vec<String>,
}

impl JgfWriter {
    /// `{"graph": {"nodes": […], "edges": […]}}` of what was emitted, and a fresh start;
    /// `None` when nothing was.
    fn take_value(&mut self) -> Option<String> {
        let nodes = std::mem::take(&mut self.nodes);
        let edges = std::mem::take(&mut self.edges);
        if nodes.is_empty() && edges.is_empty() {
            return None;
        }
        Some(object(&[(
            "graph",
            object(&[("nodes", array(&nodes)), ("edges", array(&edges))]),
        )]))
    }
}

impl MatchWriter for JgfWriter {
    fn emit_vertex(&mut self, e: &Emitted<'_>) {
        let g = e.graph;
        let v = e.vertex;
        let mut meta = vec![("type", quote(g.kind(v)))];
        if g.basename(v) != g.kind(v) {
            meta.push(("basename", quote(g.basename(v))));
        }
        if g.name(v) != format!("{}{}", g.basename(v), g.id(v)) {
            meta.push(("name", quote(&g.name(v))));
        }
        meta.push(("id", g.id(v).to_string()));
        meta.push(("rank", g.rank(v).to_string()));
        if let Some(props) = e.properties.filter(|p| !p.is_empty()) {
            let pairs: Vec<(&str, String)> = props
                .iter()
                .map(|(k, val)| (k.as_str(), quote(val)))
                .collect();
            meta.push(("properties", object(&pairs)));
        }
        if !g.unit(v).is_empty() {
            meta.push(("unit", quote(g.unit(v))));
        }
        if e.exclusive {
            meta.push(("exclusive", "true".into()));
        }
        if e.needs != 1 {
            meta.push(("size", e.needs.to_string()));
        }
        let paths: Vec<(String, String)> = (0..g.subsystems().len() as SubsystemId)
            .filter_map(|s| {
                g.path(s, v)
                    .map(|p| (g.subsystems().name(u32::from(s)).to_owned(), p))
            })
            .collect();
        if !paths.is_empty() {
            let pairs: Vec<(&str, String)> =
                paths.iter().map(|(s, p)| (s.as_str(), quote(p))).collect();
            meta.push(("paths", object(&pairs)));
        }
        self.nodes.push(object(&[
            ("id", quote(&v.to_string())),
            ("metadata", object(&meta)),
        ]));
    }

    fn emit_edge(&mut self, g: &ResourceGraph, s: SubsystemId, source: VertexId, target: VertexId) {
        let mut pairs = vec![
            ("source", quote(&source.to_string())),
            ("target", quote(&target.to_string())),
        ];
        let subsystem = g.subsystems().name(u32::from(s));
        if subsystem != "containment" {
            pairs.push(("metadata", object(&[("subsystem", quote(subsystem))])));
        }
        self.edges.push(object(&pairs));
    }

    fn take(&mut self) -> String {
        self.take_value().map(|v| v + "\n").unwrap_or_default()
    }
}

/// `rlite`: per node, the ids of its matched cores and GPUs; nodes with the same children are
/// grouped under a rank set.
#[derive(Debug, Default)]
pub struct RliteWriter {
    /// Ids of matched cores (0) and gpus (1) since the last node.
    reducer: [Vec<i64>; 2],
    /// Per children signature, the (rank, name) of the nodes that have it.
    gatherer: BTreeMap<String, Vec<(i32, String)>>,
    /// Per `key=value` property, the ranks of matched nodes that carry it.
    properties: BTreeMap<String, Vec<i64>>,
}

/// What an rlite writer hands to the R writers.
struct Rlite {
    r_lite: String,
    nodelist: String,
    properties: Option<String>,
}

impl RliteWriter {
    fn take_parts(&mut self) -> Option<Rlite> {
        let gatherer = std::mem::take(&mut self.gatherer);
        let properties = std::mem::take(&mut self.properties);
        self.reducer = Default::default();
        if gatherer.is_empty() {
            return None;
        }
        let mut entries = Vec::new();
        let mut hosts: Vec<(i32, String)> = Vec::new();
        for (children, mut nodes) in gatherer {
            nodes.sort_by_key(|(rank, _)| *rank);
            let ranks: Vec<i64> = nodes.iter().map(|(r, _)| i64::from(*r)).collect();
            entries.push(object(&[
                ("rank", quote(&encode_ids(&ranks))),
                ("children", children),
            ]));
            hosts.extend(nodes);
        }
        hosts.sort_by_key(|(rank, _)| *rank);
        let names: Vec<&str> = hosts.iter().map(|(_, n)| n.as_str()).collect();
        let nodelist = array(&[quote(&sluice_hostlist::compress(&names))]);
        let properties = (!properties.is_empty()).then(|| {
            let pairs: Vec<(&str, String)> = properties
                .iter()
                .map(|(k, ranks)| (k.as_str(), quote(&encode_ids(ranks))))
                .collect();
            object(&pairs)
        });
        Some(Rlite {
            r_lite: array(&entries),
            nodelist,
            properties,
        })
    }
}

impl MatchWriter for RliteWriter {
    fn emit_vertex(&mut self, e: &Emitted<'_>) {
        let g = e.graph;
        let v = e.vertex;
        match g.kind(v) {
            "core" => self.reducer[0].push(g.id(v)),
            "gpu" => self.reducer[1].push(g.id(v)),
            "node" | "storage_node" => {
                if self.reducer.iter().all(Vec::is_empty) {
                    return;
                }
                let mut pairs = Vec::new();
                for (kind, ids) in ["core", "gpu"].iter().zip(&mut self.reducer) {
                    if !ids.is_empty() {
                        pairs.push((*kind, quote(&encode_ids(ids))));
                        ids.clear();
                    }
                }
                self.gatherer
                    .entry(object(&pairs))
                    .or_default()
                    .push((g.rank(v), g.name(v)));
                for (k, val) in e.properties.into_iter().flatten() {
                    let key = if val.is_empty() {
                        k.clone()
                    } else {
                        format!("{k}={val}")
                    };
                    self.properties
                        .entry(key)
                        .or_default()
                        .push(i64::from(g.rank(v)));
                }
            }
            _ => {}
        }
    }

    fn take(&mut self) -> String {
        self.take_parts()
            .map(|r| r.r_lite + "\n")
            .unwrap_or_default()
    }
}

/// `rv1` and `rv1_nosched`: RFC 20 R version 1, with or without the JGF `scheduling` key.
#[derive(Debug, Default)]
pub struct Rv1Writer {
    rlite: RliteWriter,
    jgf: Option<JgfWriter>,
    starttime: i64,
    expiration: i64,
}

impl Rv1Writer {
    /// `rv1` (with `scheduling`).
    pub fn with_scheduling() -> Self {
        Rv1Writer {
            jgf: Some(JgfWriter::default()),
            ..Rv1Writer::default()
        }
    }

    /// `rv1_nosched`.
    pub fn without_scheduling() -> Self {
        Rv1Writer::default()
    }
}

impl MatchWriter for Rv1Writer {
    fn emit_vertex(&mut self, e: &Emitted<'_>) {
        self.rlite.emit_vertex(e);
        if let Some(jgf) = &mut self.jgf {
            jgf.emit_vertex(e);
        }
    }

    fn emit_edge(&mut self, g: &ResourceGraph, s: SubsystemId, source: VertexId, target: VertexId) {
        if let Some(jgf) = &mut self.jgf {
            jgf.emit_edge(g, s, source, target);
        }
    }

    fn emit_time(&mut self, start: i64, end: i64) {
        self.starttime = start;
        self.expiration = end;
    }

    fn take(&mut self) -> String {
        let scheduling = self.jgf.as_mut().map(JgfWriter::take_value);
        let Some(rlite) = self.rlite.take_parts() else {
            return String::new();
        };
        let mut execution = vec![("R_lite", rlite.r_lite), ("nodelist", rlite.nodelist)];
        if let Some(p) = rlite.properties {
            execution.push(("properties", p));
        }
        execution.push(("starttime", self.starttime.to_string()));
        execution.push(("expiration", self.expiration.to_string()));
        let mut top = vec![
            ("version", "1".to_owned()),
            ("execution", object(&execution)),
        ];
        match scheduling {
            Some(Some(jgf)) => top.push(("scheduling", jgf)),
            Some(None) => return String::new(),
            None => {}
        }
        object(&top) + "\n"
    }
}
