//! Matches per second and bytes per vertex on flux-sched #448's shape and a 16K-node graph:
//! `cargo run --release -p sluice-graph --example match_bench [NODES CORES JOBS POLICY]`.
//!
//! Like resource-query's whole-process figures, the time includes reading the GRUG and
//! generating the graph, priming the filters, every match and writing its `simple` output.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use sluice_graph::{
    Flow, GrugLimits, IdPolicy, MatchFormat, Matcher, Outputs, Recipe, Session, generate,
};

const KEYS: &str = include_str!("../tests/data/keys.graphml.part");

/// `cluster → node[nodes] → core[cores]`, as flux-sched's `benchmark.graphml.in`.
fn recipe(nodes: u64, cores: u64) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n{KEYS}<graph id=\"bench\" edgedefault=\"directed\">\n\
<node id=\"cluster\"><data key=\"root\">1</data><data key=\"type\">cluster</data><data key=\"basename\">cluster</data></node>\n\
<node id=\"node\"><data key=\"type\">node</data><data key=\"basename\">node</data></node>\n\
<node id=\"core\"><data key=\"type\">core</data><data key=\"basename\">core</data></node>\n\
<edge id=\"c2n\" source=\"cluster\" target=\"node\"><data key=\"id_scope\">1</data><data key=\"multi_scale\">{nodes}</data></edge>\n\
<edge id=\"n2c\" source=\"node\" target=\"core\"><data key=\"id_scope\">1</data><data key=\"multi_scale\">{cores}</data></edge>\n\
</graph>\n</graphml>\n"
    )
}

const JOBSPEC: &str = "version: 9999\nresources:\n  - type: cluster\n    count: 1\n    with:\n      - type: node\n        count: 1\n        with:\n          - type: slot\n            count: 1\n            label: default\n            with:\n              - type: core\n                count: 1\nattributes:\n  system:\n    duration: 3600\ntasks:\n  - command: [ \"app\" ]\n    slot: default\n    count:\n      per_slot: 1\n";

/// CPU time this process has run for, in seconds (Linux `schedstat`); wall time on a shared
/// machine also counts the time other processes held the cores.
fn cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/self/schedstat").ok()?;
    let ns: f64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

fn run(nodes: u64, cores: u64, jobs: u64, policy: &str) {
    let dir = std::env::temp_dir().join(format!("sluice-match-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bench.yaml"), JOBSPEC).unwrap();
    let text = recipe(nodes, cores);
    let cpu_start = cpu_seconds();
    let start = Instant::now();
    let recipe = Recipe::parse(&text, Path::new("bench.graphml")).unwrap();
    let graph = generate(&recipe, GrugLimits::default()).unwrap();
    let vertices = graph.vertex_count();
    let graph_bytes = graph.memory_bytes();
    let policy = Box::new(IdPolicy::from_name(policy).unwrap());
    let matcher = Matcher::new(graph, "containment", policy, "ALL:core,ALL:node").unwrap();
    let schedule_bytes = matcher.memory_bytes();
    let loaded = start.elapsed().as_secs_f64();
    let mut session = Session::new(matcher, MatchFormat::Simple, false);
    session.set_base_dir(&dir);
    let mut out = std::io::sink();
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let matching = Instant::now();
    for _ in 0..jobs {
        let mut io = Outputs {
            out: &mut out,
            stdout: &mut stdout,
            stderr: &mut stderr,
        };
        let flow = session
            .execute("match allocate bench.yaml", &mut io)
            .unwrap();
        assert_eq!(flow, Flow::Continue);
    }
    let matched = matching.elapsed().as_secs_f64();
    let total = start.elapsed().as_secs_f64();
    let cpu = match (cpu_start, cpu_seconds()) {
        (Some(a), Some(b)) => format!(", {:.0} matches/s of CPU time", jobs as f64 / (b - a)),
        _ => String::new(),
    };
    let planned_bytes = session.matcher().memory_bytes();
    std::fs::remove_dir_all(&dir).ok();
    println!(
        "cluster→node[{nodes}]→core[{cores}], {jobs} one-core jobs, {}: load {loaded:.3} s, \
matches {matched:.3} s, {:.0} matches/s whole process ({:.0}/s matching only{cpu}); \
{:.1} B/vertex loaded ({} vertices: graph {:.1} + schedule {:.1}), {:.1} B/vertex after matching",
        session.matcher().policy_name(),
        jobs as f64 / total,
        jobs as f64 / matched,
        (graph_bytes + schedule_bytes) as f64 / vertices as f64,
        vertices,
        graph_bytes as f64 / vertices as f64,
        schedule_bytes as f64 / vertices as f64,
        (graph_bytes + planned_bytes) as f64 / vertices as f64,
    );
    std::io::stdout().flush().unwrap();
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() == 4 {
        let n = |i: usize| args[i].parse::<u64>().expect("a number");
        run(n(0), n(1), n(2), &args[3]);
        return;
    }
    // flux-sched #448: 8,192 one-core jobs fill cluster→node[256]→core[32] under `high`.
    run(256, 32, 8192, "high");
    run(256, 32, 8192, "first");
    // The 16K-node graph of flux-sched #1171 (cores only): resource-query's default policy
    // (`first`) and `high`, which explores every node on every match.
    run(16384, 64, 16384, "first");
    run(16384, 64, 1000, "high");
}
