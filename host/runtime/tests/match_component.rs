//! The bundle's ID match component against the graph crate's native ID policies: the same
//! tables and traits on GRUG-generated graphs, and the contract checks on its answers.

use std::collections::HashMap;
use std::path::Path;

use sluice_graph::{IdPolicy, MatchPolicy, ResourceGraph, read_grug, vertex_table};
use sluice_policy::{SettingValue, Settings};
use sluice_runtime::compile::WasmEngine;
use sluice_runtime::wasm::vertex_scoring::MatchComponent;
use sluice_runtime::{Fault, Limits, LoadError};

const ID_POLICIES: [&str; 9] = [
    "first",
    "firstnodex",
    "high",
    "low",
    "hinode",
    "lonode",
    "hinodex",
    "lonodex",
    "policy=low node_centric=true stop_on_1_matches=true",
];

fn grug(path: &str) -> ResourceGraph {
    read_grug(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../graph/tests/data")
            .join(path),
    )
    .unwrap()
}

fn component(
    engine: &WasmEngine,
    policy: &str,
    limits: Limits,
) -> Result<MatchComponent, LoadError> {
    let settings = Settings::default().with("policy", SettingValue::Text(policy.into()));
    MatchComponent::new(
        engine,
        "match-id (bundle component)",
        sluice_bundle::match_id_component(),
        settings,
        limits,
    )
}

#[test]
fn match_component_gives_the_native_id_tables_and_traits() {
    let engine = WasmEngine::new(None);
    let graphs = [
        grug("two-racks.graphml"),
        grug("flux/ex3-medium-first-omit-prefix/medium.graphml"),
    ];
    for policy in ID_POLICIES {
        let native = IdPolicy::from_name(policy).unwrap();
        let wasm = component(&engine, policy, Limits::default()).unwrap();
        for graph in &graphs {
            let none = HashMap::new();
            let expected = native.table(graph, &none).unwrap();
            assert_eq!(wasm.table(graph, &none).unwrap(), expected, "{policy}");
            assert_eq!(expected.own.len(), graph.vertex_count());
        }
        assert_eq!(wasm.prefers_higher(), native.prefers_higher(), "{policy}");
        assert_eq!(wasm.slot_prefers_higher(), native.slot_prefers_higher());
        assert_eq!(wasm.stop_on_first_match(), native.stop_on_first_match());
        assert_eq!(wasm.exclusive_types(), native.exclusive_types(), "{policy}");
        assert_eq!(wasm.ranks_root_by_runs(), native.ranks_root_by_runs());
        assert!(!wasm.reads_properties());
    }
}

#[test]
fn match_component_refuses_a_policy_it_does_not_have_at_load() {
    let engine = WasmEngine::new(None);
    let Err(err) = component(&engine, "variation", Limits::default()) else {
        panic!("the ID component has no variation policy");
    };
    assert!(matches!(err, LoadError::World { .. }), "{err}");
    assert!(
        err.to_string().contains("invalid policy option: variation"),
        "{err}"
    );
}

#[test]
fn match_component_out_of_fuel_is_a_policy_error_naming_the_budget() {
    let engine = WasmEngine::new(None);
    let graph = grug("flux/ex3-medium-first-omit-prefix/medium.graphml");
    // Enough to describe, far too little to score a graph of a few hundred vertices.
    let limits = Limits {
        fuel_per_call: 20_000,
        ..Limits::default()
    };
    let wasm = component(&engine, "hinode", limits).unwrap();
    let err = wasm.table(&graph, &HashMap::new()).unwrap_err();
    assert!(err.to_string().contains("budget exhausted"), "{err}");
    // The columns alone, as the host would send them: the call faults the same way.
    let fault = wasm.score(&vertex_table(&graph, None)).unwrap_err();
    assert_eq!(fault, Fault::Budget(20_000));
}

#[test]
fn a_scheduler_plugin_is_not_a_match_policy() {
    let engine = WasmEngine::new(None);
    let bytes = sluice_bundle::find(sluice_policy::PluginKind::Priority, "basic")
        .unwrap()
        .component();
    let Err(err) = MatchComponent::new(
        &engine,
        "basic",
        bytes,
        Settings::default(),
        Limits::default(),
    ) else {
        panic!("a priority component loaded as a match policy");
    };
    assert!(err.to_string().contains("is a priority plugin"), "{err}");
}

#[test]
fn inspect_names_a_match_policy_given_as_a_scheduler_plugin() {
    let engine = WasmEngine::new(None);
    let bytes = sluice_bundle::match_id_component();
    let component = engine.compile("match-id", bytes).unwrap();
    assert_eq!(
        engine.inspect_match("match-id", &component).unwrap(),
        sluice_policy::WIT_VERSION
    );
    let err = engine.inspect("match-id", &component).unwrap_err();
    assert!(
        err.to_string()
            .contains("is a match policy (sluice:policy/vertex-scoring@0.9.0)"),
        "{err}"
    );
}
