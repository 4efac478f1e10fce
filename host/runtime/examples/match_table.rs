//! Times one match-policy `table` call, the bundle's ID component against the same policies
//! linked in, on flux-sched #448's shape (cluster→node[256]→core[32]) and on
//! node[16384]→core[64]; then matches/s with either policy on the first:
//! `cargo run --release -p sluice-runtime --example match_table [POLICY [JOBS]]`.
//!
//! The component is asked once per graph, so a match costs it nothing; the matches/s line shows
//! that the only difference is the one call at load.

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use sluice_graph::{
    Flow, GrugLimits, IdPolicy, MatchFormat, MatchPolicy, Matcher, Outputs, Recipe, ResourceGraph,
    Session, generate, vertex_table,
};
use sluice_policy::{SettingValue, Settings};
use sluice_runtime::Limits;
use sluice_runtime::compile::WasmEngine;
use sluice_runtime::wasm::vertex_scoring::MatchComponent;

const KEYS: &str = include_str!("../../graph/tests/data/keys.graphml.part");

const JOBSPEC: &str = "version: 9999\nresources:\n  - type: cluster\n    count: 1\n    with:\n      - type: node\n        count: 1\n        with:\n          - type: slot\n            count: 1\n            label: default\n            with:\n              - type: core\n                count: 1\nattributes:\n  system:\n    duration: 3600\ntasks:\n  - command: [ \"app\" ]\n    slot: default\n    count:\n      per_slot: 1\n";

/// `cluster → node[nodes] → core[cores]`, as flux-sched's `benchmark.graphml.in`.
fn graph(nodes: u64, cores: u64) -> ResourceGraph {
    let text = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n{KEYS}<graph id=\"bench\" edgedefault=\"directed\">\n\
<node id=\"cluster\"><data key=\"root\">1</data><data key=\"type\">cluster</data><data key=\"basename\">cluster</data></node>\n\
<node id=\"node\"><data key=\"type\">node</data><data key=\"basename\">node</data></node>\n\
<node id=\"core\"><data key=\"type\">core</data><data key=\"basename\">core</data></node>\n\
<edge id=\"c2n\" source=\"cluster\" target=\"node\"><data key=\"id_scope\">1</data><data key=\"multi_scale\">{nodes}</data></edge>\n\
<edge id=\"n2c\" source=\"node\" target=\"core\"><data key=\"id_scope\">1</data><data key=\"multi_scale\">{cores}</data></edge>\n\
</graph>\n</graphml>\n"
    );
    let recipe = Recipe::parse(&text, Path::new("bench.graphml")).unwrap();
    generate(&recipe, GrugLimits::default()).unwrap()
}

/// Median seconds of `runs` calls of `f`.
fn median(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}

fn component(engine: &WasmEngine, policy: &str) -> MatchComponent {
    let settings = Settings::default().with("policy", SettingValue::Text(policy.into()));
    MatchComponent::new(
        engine,
        "match-id",
        sluice_bundle::match_id_component(),
        settings,
        Limits::default(),
    )
    .unwrap()
}

/// Matches/s of `jobs` one-core matches with `policy`, graph generation and load included,
/// and the vertices the last match visited.
fn matches_per_second(
    policy: Box<dyn MatchPolicy>,
    nodes: u64,
    cores: u64,
    jobs: u64,
) -> (f64, u32) {
    let dir = std::env::temp_dir().join(format!("sluice-match-table-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bench.yaml"), JOBSPEC).unwrap();
    let start = Instant::now();
    let matcher = Matcher::new(
        graph(nodes, cores),
        "containment",
        policy,
        "ALL:core,ALL:node",
    )
    .unwrap();
    let mut session = Session::new(matcher, MatchFormat::Simple, false);
    session.set_base_dir(&dir);
    let (mut out, mut stdout, mut stderr) = (std::io::sink(), Vec::new(), Vec::new());
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
    let rate = jobs as f64 / start.elapsed().as_secs_f64();
    std::fs::remove_dir_all(&dir).ok();
    (rate, session.matcher().visit_counts().0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let policy = args.first().map_or("hinode", String::as_str);
    let jobs: u64 = args.get(1).map_or(2048, |j| j.parse().unwrap());
    let build = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let engine = WasmEngine::new(None);
    let wasm = component(&engine, policy);
    let native = IdPolicy::from_name(policy).unwrap();
    let none = HashMap::new();
    for (nodes, cores, runs) in [(256, 32, 21), (16_384, 64, 5)] {
        let g = graph(nodes, cores);
        assert_eq!(
            wasm.table(&g, &none).unwrap(),
            native.table(&g, &none).unwrap()
        );
        let columns = median(runs, || drop(vertex_table(&g, None)));
        let table = vertex_table(&g, None);
        let call = median(runs, || drop(wasm.score(&table).unwrap()));
        let whole = median(runs, || drop(wasm.table(&g, &none).unwrap()));
        let linked = median(runs, || drop(native.table(&g, &none).unwrap()));
        let n = g.vertex_count();
        println!(
            "{build}, {policy}, node[{nodes}]→core[{cores}] ({n} vertices): table through the \
component {:.3} ms (columns {:.3} ms + call {:.3} ms, {:.1} ns/vertex), linked in {:.3} ms, \
ratio {:.1}×",
            whole * 1e3,
            columns * 1e3,
            call * 1e3,
            call * 1e9 / n as f64,
            linked * 1e3,
            whole / linked
        );
    }
    // The cost of a call itself: a one-vertex table.
    let tiny = sluice_policy::VertexTable {
        types: vec!["node".into()],
        kinds: vec![0],
        ids: vec![0],
        properties: Vec::new(),
    };
    let per_call = median(1001, || drop(wasm.score(&tiny).unwrap()));
    println!(
        "{build}, one call with a one-vertex table: {:.2} µs",
        per_call * 1e6
    );
    // Alternated and best of three each: the machine's speed moves more between runs than the
    // one call at load weighs.
    drop(wasm);
    let (mut with_native, mut with_wasm, mut visits) = (0f64, 0f64, 0);
    for _ in 0..3 {
        let native = IdPolicy::from_name(policy).unwrap();
        let (rate, _) = matches_per_second(Box::new(native), 256, 32, jobs);
        with_native = with_native.max(rate);
        // A fresh component per round, as a new `sluice resource-query` loads one; compiling it
        // is outside the timed load, its `table` call inside.
        let fresh = component(&engine, policy);
        let (rate, v) = matches_per_second(Box::new(fresh), 256, 32, jobs);
        with_wasm = with_wasm.max(rate);
        visits = v;
    }
    println!(
        "{build}, {policy}, node[256]→core[32], {jobs} one-core matches (load included, best of \
3 alternated): component {with_wasm:.0} matches/s, linked in {with_native:.0} matches/s; the \
last match visited {visits} vertices"
    );
    let big = IdPolicy::from_name(policy).unwrap();
    let (_, visits) = matches_per_second(Box::new(big), 16_384, 64, 4);
    println!("{build}, {policy}, node[16384]→core[64]: the 4th match visited {visits} vertices");
}
