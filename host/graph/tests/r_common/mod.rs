//! Helpers for the tests of the commands that read an R (`update`, `partial-cancel`): a
//! scratch directory of jobspecs and R files, a session run over a graph, and expected lines.

#![allow(dead_code)]

use std::path::Path;

use serde_json::{Value, json};
use sluice_graph::{
    JgfLimits, MatchFormat, Matcher, ResourceGraph, policy_by_name, read_grug, read_jgf,
};

/// The block separator of resource-query's `INFO` blocks.
pub const RULE: &str = "INFO: =============================\n";

#[path = "../common/mod.rs"]
mod common;
pub use common::{Printed, Workspace, drive};

/// flux-sched's `tiny.graphml` test input (tiny0 → rack0 → node0, node1 → socket0, socket1 →
/// 18 cores, a gpu and 4 × 2 GB memory each).
pub fn tiny() -> ResourceGraph {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/flux/ex1-tiny-high-allocate/tiny.graphml");
    read_grug(&path).unwrap()
}

/// A graph as an rv1exec R describes one, every vertex below the cluster carrying its node's
/// rank: `cluster0 → node0, node1 → core0-3, gpu0`.
pub fn ranked_jgf() -> String {
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    let mut uniq = 0u64;
    let mut vertex = |kind: &str, id: i64, rank: i64, path: String, nodes: &mut Vec<Value>| {
        let me = uniq;
        uniq += 1;
        nodes.push(json!({"id": me.to_string(), "metadata": {
            "type": kind, "basename": kind, "name": format!("{kind}{id}"), "id": id,
            "uniq_id": me, "rank": rank, "exclusive": false, "unit": "", "size": 1,
            "paths": {"containment": path}}}));
        me
    };
    let root = vertex("cluster", 0, -1, "/cluster0".into(), &mut nodes);
    for n in 0..2 {
        let np = format!("/cluster0/node{n}");
        let node = vertex("node", n, n, np.clone(), &mut nodes);
        edges.push((root, node));
        for c in 0..4 {
            let core = vertex("core", c, n, format!("{np}/core{c}"), &mut nodes);
            edges.push((node, core));
        }
        let gpu = vertex("gpu", 0, n, format!("{np}/gpu0"), &mut nodes);
        edges.push((node, gpu));
    }
    let edges: Vec<Value> = edges
        .iter()
        .map(|(s, t)| {
            json!({"source": s.to_string(), "target": t.to_string(),
                   "metadata": {"subsystem": "containment"}})
        })
        .collect();
    json!({"graph": {"nodes": nodes, "edges": edges}}).to_string()
}

/// The graph of [`ranked_jgf`].
pub fn ranked() -> ResourceGraph {
    read_jgf(&ranked_jgf(), JgfLimits::default()).unwrap().graph
}

/// Runs `commands` over `graph` with `policy`, default prune filters and `format`.
pub fn run_on(
    graph: ResourceGraph,
    ws: &Workspace,
    policy: &str,
    format: MatchFormat,
    commands: &str,
) -> Printed {
    let policy = policy_by_name(policy).unwrap();
    let matcher = Matcher::new(graph, "containment", policy, "ALL:core,ALL:node").unwrap();
    drive(matcher, format, false, &ws.dir, commands)
}

/// A jobspec with `resources` (YAML lines, indented by four) and a duration.
pub fn jobspec(resources: &str, duration: u64) -> String {
    format!(
        "version: 9999\nresources:\n{resources}attributes:\n  system:\n    duration: {duration}\ntasks:\n  - command: [ \"app\" ]\n    slot: default\n    count:\n      per_slot: 1\n"
    )
}

/// `node[nodes] → slot[1] → core[cores]`.
pub fn cores_on_nodes(nodes: u32, cores: u32) -> String {
    jobspec(
        &format!(
            "    - type: node\n      count: {nodes}\n      with:\n        - type: slot\n          count: 1\n          label: default\n          with:\n            - type: core\n              count: {cores}\n"
        ),
        3600,
    )
}

/// One vertex's `simple` line at `level`.
pub fn line(level: usize, name: &str, needs: u32, x: bool) -> String {
    format!(
        "      {}{name}[{needs}:{}]\n",
        "---".repeat(level),
        if x { "x" } else { "s" }
    )
}

/// The block after a job that matched.
pub fn scheduled(jobid: u64, mode: &str, at: &str) -> String {
    format!("{RULE}INFO: JOBID={jobid}\nINFO: RESOURCES={mode}\nINFO: SCHEDULED AT={at}\n{RULE}")
}

/// The block after a job that did not match.
pub fn no_match(jobid: u64) -> String {
    format!("{RULE}INFO: No matching resources found\nINFO: JOBID={jobid}\n{RULE}")
}

/// `simple` lines of cores `cores` (exclusive) on `node` of the ranked graph, then the node
/// and the cluster, shared.
pub fn ranked_cores(node: u32, cores: &[u32]) -> String {
    let mut s: String = cores
        .iter()
        .map(|c| line(3, &format!("core{c}"), 1, true))
        .collect();
    s += &line(2, &format!("node{node}"), 1, false);
    s += &line(1, "cluster0", 1, false);
    s
}

/// An rv1exec R naming `ranks` with `children` (type → idset) and `nodelist`.
pub fn rv1(ranks: &str, children: &[(&str, &str)], nodelist: &str) -> String {
    let children: serde_json::Map<String, Value> = children
        .iter()
        .map(|(k, v)| ((*k).to_owned(), Value::String((*v).to_owned())))
        .collect();
    json!({"version": 1, "execution": {"R_lite": [{"rank": ranks, "children": children}],
        "nodelist": [nodelist], "starttime": 0, "expiration": 3600}})
    .to_string()
}
