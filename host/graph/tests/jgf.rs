//! JGF reader and writer: hand-written documents → vertex and edge facts, each refusal, and
//! round trips GRUG → graph → JGF → graph.

mod common;

use std::path::Path;

use serde_json::{Value, json};
use sluice_graph::{
    JgfError, JgfExtras, JgfLimits, ResourceGraph, VertexId, jgf_value, read_grug, read_jgf,
    write_jgf,
};

/// A JGF node; `extra` members are merged into its metadata.
fn node(key: &str, uniq: u64, kind: &str, id: i64, path: &str, extra: Value) -> Value {
    let mut meta = json!({
        "type": kind, "basename": kind, "name": format!("{kind}{id}"), "id": id,
        "uniq_id": uniq, "rank": -1, "exclusive": false, "unit": "", "size": 1,
        "paths": { "containment": path },
    });
    for (k, v) in extra.as_object().unwrap() {
        meta[k] = v.clone();
    }
    json!({ "id": key, "metadata": meta })
}

/// A containment edge in the current format.
fn contains(source: &str, target: &str) -> Value {
    json!({ "source": source, "target": target, "metadata": { "subsystem": "containment" } })
}

/// cluster0 → node0 (rank 0) → core0, core1, memory0 (4 GB, exclusive, a property); a power
/// subsystem where pdu0 supplies node0.
fn small_document() -> Value {
    json!({ "graph": {
        "nodes": [
            node("c", 0, "cluster", 0, "/cluster0", json!({})),
            node("n", 1, "node", 0, "/cluster0/node0",
                 json!({ "rank": 0, "paths": { "containment": "/cluster0/node0",
                                               "power": "/pdu0/node0" } })),
            node("k0", 2, "core", 0, "/cluster0/node0/core0", json!({})),
            node("k1", 3, "core", 1, "/cluster0/node0/core1", json!({})),
            node("m", 4, "memory", 0, "/cluster0/node0/memory0",
                 json!({ "size": 4, "unit": "GB", "exclusive": true,
                         "properties": { "perf_class": "3" } })),
            node("p", 5, "pdu", 0, "/pdu0", json!({ "paths": { "power": "/pdu0" } })),
        ],
        "edges": [
            contains("c", "n"), contains("n", "k0"), contains("n", "k1"), contains("n", "m"),
            { "source": "p", "target": "n",
              "metadata": { "subsystem": "power", "relation": "supplies_to" } },
        ],
    }})
}

fn read(doc: &Value) -> Result<sluice_graph::JgfGraph, JgfError> {
    read_jgf(&doc.to_string(), JgfLimits::default())
}

fn vertex(g: &ResourceGraph, name: &str) -> VertexId {
    (0..g.vertex_count() as VertexId)
        .find(|&v| g.name(v) == name)
        .unwrap_or_else(|| panic!("no vertex {name}"))
}

fn targets(g: &ResourceGraph, subsystem: &str, name: &str) -> Vec<(String, String)> {
    let s = g.subsystem_id(subsystem).unwrap();
    let v = vertex(g, name);
    g.out_edges(s, v)
        .iter()
        .zip(g.out_relations(s, v))
        .map(|(&t, r)| (g.name(t), r.to_string()))
        .collect()
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn reads_vertices_with_their_metadata() {
    let read = read(&small_document()).unwrap();
    let g = &read.graph;
    assert_eq!(g.vertex_count(), 6);
    let mem = vertex(g, "memory0");
    assert_eq!((g.kind(mem), g.size(mem), g.unit(mem)), ("memory", 4, "GB"));
    assert!(read.extras.is_exclusive(mem));
    assert!(!read.extras.is_exclusive(vertex(g, "core0")));
    assert_eq!(read.extras.properties[&mem]["perf_class"], "3");
    assert_eq!(read.extras.properties.len(), 1);
    let n = vertex(g, "node0");
    assert_eq!((g.rank(n), g.rank(vertex(g, "cluster0"))), (0, -1));
    assert_eq!(g.size(vertex(g, "core1")), 1);
    assert_eq!(g.unit(vertex(g, "core1")), "");
}

#[test]
fn reads_edges_per_subsystem_with_their_relation() {
    let g = read(&small_document()).unwrap().graph;
    assert_eq!(
        targets(&g, "containment", "node0"),
        pairs(&[
            ("core0", "contains"),
            ("core1", "contains"),
            ("memory0", "contains")
        ])
    );
    assert_eq!(
        targets(&g, "power", "pdu0"),
        pairs(&[("node0", "supplies_to")])
    );
    assert!(targets(&g, "power", "node0").is_empty());
    assert_eq!(g.edge_count(g.subsystem_id("containment").unwrap()), 4);
    assert_eq!(g.edge_count(g.subsystem_id("power").unwrap()), 1);
}

#[test]
fn paths_are_rebuilt_in_every_subsystem() {
    let g = read(&small_document()).unwrap().graph;
    let (c, p) = (
        g.subsystem_id("containment").unwrap(),
        g.subsystem_id("power").unwrap(),
    );
    let n = vertex(&g, "node0");
    assert_eq!(g.path(c, n).as_deref(), Some("/cluster0/node0"));
    assert_eq!(g.path(p, n).as_deref(), Some("/pdu0/node0"));
    assert_eq!(
        g.path(c, vertex(&g, "core1")).as_deref(),
        Some("/cluster0/node0/core1")
    );
    assert!(!g.is_member(p, vertex(&g, "core1")));
    assert_eq!(g.roots(c), vec![vertex(&g, "cluster0")]);
}

#[test]
fn vertices_follow_uniq_id_not_document_order() {
    let mut doc = small_document();
    doc["graph"]["nodes"].as_array_mut().unwrap().reverse();
    let g = read(&doc).unwrap().graph;
    let order: Vec<String> = (0..g.vertex_count() as VertexId)
        .map(|v| g.name(v))
        .collect();
    assert_eq!(
        order,
        ["cluster0", "node0", "core0", "core1", "memory0", "pdu0"]
    );
}

#[test]
fn older_edge_name_map_is_read_as_subsystem_and_relation() {
    let mut doc = small_document();
    doc["graph"]["edges"][0]["metadata"] = json!({ "name": { "containment": "contains" } });
    doc["graph"]["edges"][4]["metadata"] = json!({ "name": { "power": "supplies_to" } });
    let g = read(&doc).unwrap().graph;
    assert_eq!(
        targets(&g, "containment", "cluster0"),
        pairs(&[("node0", "contains")])
    );
    assert_eq!(
        targets(&g, "power", "pdu0"),
        pairs(&[("node0", "supplies_to")])
    );
}

#[test]
fn absent_fields_take_fluxions_defaults() {
    let doc = json!({ "graph": { "nodes": [
        { "id": "0", "metadata": { "type": "core", "basename": "core", "id": 7, "uniq_id": 0,
                                    "paths": { "containment": "/core7" } } },
        // uniq_id from the node id, basename from the type, id from the uniq_id.
        { "id": "12", "metadata": { "type": "gpu", "paths": { "containment": "/gpu12" } } },
        // a node's id from the trailing digits of its (host) name.
        { "id": "3", "metadata": { "type": "node", "basename": "fluke", "name": "fluke41",
                                    "paths": { "containment": "/fluke41" }, "properties": null } },
    ], "edges": [] } });
    let read = read(&doc).unwrap();
    let g = &read.graph;
    assert_eq!(
        (g.name(0), g.rank(0), g.size(0), g.unit(0)),
        ("core7".into(), -1, 1, "")
    );
    assert!(!read.extras.is_exclusive(0));
    // Vertices in uniq_id order: core (0), node (3), gpu (12).
    assert_eq!(
        (g.kind(1), g.id(1), g.name(1)),
        ("node", 41, "fluke41".into())
    );
    assert_eq!((g.kind(2), g.basename(2), g.id(2)), ("gpu", "gpu", 12));
    assert!(read.extras.properties.is_empty());
}

#[test]
fn an_edge_without_a_subsystem_is_containment() {
    let mut doc = small_document();
    doc["graph"]["edges"][1]["metadata"] = json!({});
    doc["graph"]["edges"][2]
        .as_object_mut()
        .unwrap()
        .remove("metadata");
    let g = read(&doc).unwrap().graph;
    assert_eq!(
        targets(&g, "containment", "node0"),
        pairs(&[
            ("core0", "contains"),
            ("core1", "contains"),
            ("memory0", "contains")
        ])
    );
}

/// The error of `doc` after `edit`.
fn refusal(edit: impl FnOnce(&mut Value)) -> JgfError {
    let mut doc = small_document();
    edit(&mut doc);
    read(&doc).expect_err("the document should be refused")
}

fn invalid_at(err: &JgfError) -> (&str, &str) {
    match err {
        JgfError::Invalid {
            path,
            expected,
            found: _,
        } => (path, expected),
        other => panic!("not an invalid-value error: {other}"),
    }
}

#[test]
fn text_that_is_not_json_gives_line_and_column() {
    let err = read_jgf(
        "{\n  \"graph\": {\n    \"nodes\": [,]\n",
        JgfLimits::default(),
    )
    .unwrap_err();
    match err {
        JgfError::Syntax { line, column, .. } => assert_eq!((line, column), (3, 15)),
        other => panic!("not a syntax error: {other}"),
    }
}

#[test]
fn missing_graph_or_nodes_is_named() {
    let err = read_jgf("{\"nodes\": []}", JgfLimits::default()).unwrap_err();
    assert_eq!(invalid_at(&err), ("graph", "an object"));
    let err = refusal(|d| d["graph"]["nodes"] = json!({}));
    assert_eq!(invalid_at(&err), ("graph.nodes", "an array"));
    assert_eq!(
        err.to_string(),
        "jgf: graph.nodes: expected an array, found an object"
    );
}

#[test]
fn missing_metadata_field_is_named_with_its_path() {
    let err = refusal(|d| {
        d["graph"]["nodes"][2]["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("type");
    });
    assert_eq!(
        err.to_string(),
        "jgf: graph.nodes[2].metadata.type: expected a non-empty string, found nothing"
    );
}

#[test]
fn wrong_types_and_ranges_are_refused() {
    let err = refusal(|d| d["graph"]["nodes"][4]["metadata"]["size"] = json!("4"));
    assert_eq!(
        err.to_string(),
        format!(
            "jgf: graph.nodes[4].metadata.size: expected an integer from 0 to {}, found string \"4\"",
            i64::MAX
        )
    );
    let err = refusal(|d| d["graph"]["nodes"][1]["metadata"]["rank"] = json!(1u64 << 40));
    assert_eq!(invalid_at(&err).0, "graph.nodes[1].metadata.rank");
    let err = refusal(|d| d["graph"]["nodes"][1]["metadata"]["uniq_id"] = json!(-1));
    assert_eq!(invalid_at(&err).0, "graph.nodes[1].metadata.uniq_id");
    let err = refusal(|d| d["graph"]["nodes"][3]["metadata"]["exclusive"] = json!("yes"));
    assert_eq!(
        invalid_at(&err),
        ("graph.nodes[3].metadata.exclusive", "a boolean")
    );
    let err = refusal(|d| d["graph"]["nodes"][3]["metadata"]["status"] = json!("down"));
    assert_eq!(invalid_at(&err).0, "graph.nodes[3].metadata.status");
    let err = refusal(|d| d["graph"]["nodes"][0]["id"] = json!(0));
    assert_eq!(invalid_at(&err), ("graph.nodes[0].id", "a string"));
    let err = refusal(|d| d["graph"]["nodes"][4]["metadata"]["properties"]["x"] = json!(1));
    assert_eq!(invalid_at(&err).0, "graph.nodes[4].metadata.properties.x");
}

#[test]
fn a_name_other_than_basename_and_id_is_refused() {
    let err = refusal(|d| d["graph"]["nodes"][2]["metadata"]["name"] = json!("core9"));
    assert_eq!(invalid_at(&err).0, "graph.nodes[2].metadata.name");
}

#[test]
fn edges_to_unknown_nodes_are_refused() {
    let err = refusal(|d| d["graph"]["edges"][2]["target"] = json!("nowhere"));
    assert_eq!(
        err,
        JgfError::UnknownNode {
            path: "graph.edges[2].target".into(),
            id: "nowhere".into()
        }
    );
    let err = refusal(|d| d["graph"]["edges"][0]["source"] = json!("x"));
    assert!(
        matches!(err, JgfError::UnknownNode { ref path, .. } if path == "graph.edges[0].source")
    );
}

#[test]
fn malformed_edges_and_edge_lists_are_refused() {
    let err = refusal(|d| d["graph"]["edges"][1]["metadata"] = json!({ "name": {} }));
    assert_eq!(invalid_at(&err).0, "graph.edges[1].metadata.name");
    let err = refusal(|d| d["graph"]["edges"][1]["metadata"] = json!("containment"));
    assert_eq!(invalid_at(&err), ("graph.edges[1].metadata", "an object"));
    let err = refusal(|d| d["graph"]["edges"][1]["metadata"]["subsystem"] = json!(""));
    assert_eq!(
        invalid_at(&err),
        ("graph.edges[1].metadata.subsystem", "a non-empty string")
    );
    let err = refusal(|d| {
        d["graph"].as_object_mut().unwrap().remove("edges");
    });
    assert_eq!(invalid_at(&err), ("graph.edges", "an array"));
}

#[test]
fn a_node_without_paths_is_refused() {
    let err = refusal(|d| {
        d["graph"]["nodes"][3]["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("paths");
    });
    assert_eq!(
        invalid_at(&err),
        ("graph.nodes[3].metadata.paths", "an object")
    );
    let err = refusal(|d| d["graph"]["nodes"][3]["id"] = json!("core"));
    assert!(matches!(err, JgfError::UnknownNode { .. }), "{err}");
    let err = refusal(|d| {
        let n = &mut d["graph"]["nodes"][3];
        n["id"] = json!("core");
        n["metadata"].as_object_mut().unwrap().remove("uniq_id");
    });
    assert_eq!(invalid_at(&err).0, "graph.nodes[3].metadata.uniq_id");
}

#[test]
fn duplicate_node_ids_and_uniq_ids_are_refused() {
    let err = refusal(|d| d["graph"]["nodes"][3]["id"] = json!("k0"));
    assert_eq!(
        err,
        JgfError::Duplicate {
            path: "graph.nodes[3].id".into(),
            field: "id",
            value: "\"k0\"".into(),
            first: "graph.nodes[2].id".into(),
        }
    );
    let err = refusal(|d| d["graph"]["nodes"][5]["metadata"]["uniq_id"] = json!(1));
    assert!(
        matches!(err, JgfError::Duplicate { field: "uniq_id", ref first, .. }
        if first == "graph.nodes[1].metadata.uniq_id")
    );
}

#[test]
fn a_cycle_in_containment_is_refused() {
    let err = refusal(|d| {
        d["graph"]["edges"]
            .as_array_mut()
            .unwrap()
            .push(contains("k0", "c"));
    });
    assert!(matches!(err, JgfError::ContainmentCycle { .. }), "{err}");
    let err = refusal(|d| {
        d["graph"]["edges"].as_array_mut().unwrap().push(
            json!({ "source": "n", "target": "n", "metadata": { "subsystem": "containment" } }),
        );
    });
    assert!(
        matches!(err, JgfError::ContainmentCycle { index: 1, .. }),
        "{err}"
    );
}

#[test]
fn a_cycle_outside_containment_is_read() {
    let mut doc = small_document();
    doc["graph"]["edges"]
        .as_array_mut()
        .unwrap()
        .push(json!({ "source": "n", "target": "p", "metadata": { "subsystem": "power" } }));
    let g = read(&doc).unwrap().graph;
    assert_eq!(
        targets(&g, "power", "node0"),
        pairs(&[("pdu0", "contains")])
    );
    assert_eq!(
        g.path(g.subsystem_id("power").unwrap(), vertex(&g, "pdu0"))
            .as_deref(),
        Some("/pdu0")
    );
}

#[test]
fn a_path_that_no_edge_explains_is_refused() {
    let err = refusal(|d| {
        d["graph"]["nodes"][2]["metadata"]["paths"]["containment"] = json!("/cluster0/core0")
    });
    assert_eq!(
        invalid_at(&err).0,
        "graph.nodes[2].metadata.paths.containment"
    );
    let err =
        refusal(|d| d["graph"]["nodes"][2]["metadata"]["paths"]["containment"] = json!("cluster0"));
    assert_eq!(
        invalid_at(&err),
        (
            "graph.nodes[2].metadata.paths.containment",
            "a path starting with \"/\""
        )
    );
}

#[test]
fn documents_beyond_the_limits_are_refused() {
    let limits = JgfLimits {
        max_nodes: 5,
        ..JgfLimits::default()
    };
    let err = read_jgf(&small_document().to_string(), limits).unwrap_err();
    assert_eq!(
        err,
        JgfError::TooLarge {
            what: "graph.nodes",
            count: 6,
            limit: 5
        }
    );
    let limits = JgfLimits {
        max_edges: 4,
        ..JgfLimits::default()
    };
    let err = read_jgf(&small_document().to_string(), limits).unwrap_err();
    assert!(matches!(
        err,
        JgfError::TooLarge {
            what: "graph.edges",
            count: 5,
            limit: 4
        }
    ));
    let limits = JgfLimits {
        max_subsystems: 1,
        ..JgfLimits::default()
    };
    let err = read_jgf(&small_document().to_string(), limits).unwrap_err();
    assert_eq!(err.to_string(), "jgf: subsystems: 2 exceeds the limit of 1");
}

/// Asserts two graphs hold the same vertices (in order) and the same edges and paths in every
/// subsystem, subsystems matched by name.
fn assert_same(a: &ResourceGraph, b: &ResourceGraph) {
    assert_eq!(a.vertex_count(), b.vertex_count());
    for v in 0..a.vertex_count() as VertexId {
        assert_eq!(
            (
                a.kind(v),
                a.basename(v),
                a.id(v),
                a.rank(v),
                a.size(v),
                a.unit(v)
            ),
            (
                b.kind(v),
                b.basename(v),
                b.id(v),
                b.rank(v),
                b.size(v),
                b.unit(v)
            ),
            "vertex {v}"
        );
    }
    assert_eq!(a.subsystems().len(), b.subsystems().len());
    for s in 0..a.subsystems().len() as u16 {
        let name = a.subsystems().name(s as u32);
        let t = b.subsystem_id(name).expect("subsystem kept");
        assert_eq!(a.edge_count(s), b.edge_count(t), "{name}");
        for v in 0..a.vertex_count() as VertexId {
            assert_eq!(a.path(s, v), b.path(t, v), "{name} path of {v}");
            assert_eq!(a.out_edges(s, v), b.out_edges(t, v), "{name} edges of {v}");
            assert!(a.out_relations(s, v).eq(b.out_relations(t, v)));
        }
    }
}

fn round_trip(g: &ResourceGraph) {
    let text = write_jgf(g, &JgfExtras::default());
    let back = read_jgf(&text, JgfLimits::default()).unwrap();
    assert_same(g, &back.graph);
    assert_eq!(write_jgf(&back.graph, &back.extras), text);
}

#[test]
fn hand_written_graph_round_trips_with_exclusivity_and_properties() {
    let read = read(&small_document()).unwrap();
    let text = write_jgf(&read.graph, &read.extras);
    let back = read_jgf(&text, JgfLimits::default()).unwrap();
    assert_same(&read.graph, &back.graph);
    assert_eq!(read.extras, back.extras);
}

#[test]
fn generated_recipe_round_trips() {
    let body = [
        common::node("cluster", "cluster", true, ""),
        common::node("node", "node", false, ""),
        common::node("core", "core", false, ""),
        common::node(
            "memory",
            "memory",
            false,
            "<data key=\"size\">2</data><data key=\"unit\">GB</data>",
        ),
        common::edge("cluster", "node", &[("multi_scale", "3")]),
        common::edge("node", "core", &[("id_scope", "1"), ("multi_scale", "4")]),
        common::edge("node", "memory", &[("multi_scale", "2")]),
    ]
    .concat();
    let g = common::graph(&body).unwrap();
    assert_eq!(g.vertex_count(), 1 + 3 + 12 + 6);
    round_trip(&g);
}

#[test]
fn crate_test_recipe_round_trips() {
    let g = read_grug(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/two-racks.graphml"))
        .unwrap();
    round_trip(&g);
}

#[test]
fn shared_recipes_round_trip() {
    for file in [
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/data/flux/ex1-tiny-high-allocate/tiny.graphml"
        ),
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/data/flux/ex3-medium-first-omit-prefix/medium.graphml"
        ),
    ] {
        let path = Path::new(file);
        if !path.is_file() {
            eprintln!("skipped: {} is absent", path.display());
            continue;
        }
        round_trip(&read_grug(path).unwrap());
    }
}

#[test]
fn a_vertex_set_is_written_with_the_edges_among_it() {
    let read = read(&small_document()).unwrap();
    let g = &read.graph;
    let chosen = [
        vertex(g, "cluster0"),
        vertex(g, "node0"),
        vertex(g, "core1"),
    ];
    let doc = jgf_value(g, &read.extras, Some(&chosen));
    assert_eq!(doc["graph"]["nodes"].as_array().unwrap().len(), 3);
    assert_eq!(doc["graph"]["nodes"][2]["metadata"]["name"], "core1");
    assert_eq!(
        doc["graph"]["nodes"][1]["metadata"]["paths"],
        json!({ "containment": "/cluster0/node0", "power": "/pdu0/node0" })
    );
    let edges: Vec<(&str, &str)> = doc["graph"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["source"].as_str().unwrap(), e["target"].as_str().unwrap()))
        .collect();
    assert_eq!(edges, [("0", "1"), ("1", "3")]);
}

#[test]
fn no_value_of_any_kind_in_any_field_panics_the_reader() {
    let kinds = [
        json!(null),
        json!(true),
        json!(-5),
        json!(1e300),
        json!(u64::MAX),
        json!("x"),
        json!("/"),
        json!([]),
        json!({}),
        json!({ "containment": 3 }),
    ];
    let base = small_document();
    let mut refused = 0;
    for (list, fields) in [
        (
            "nodes",
            &[
                "type",
                "basename",
                "name",
                "id",
                "uniq_id",
                "rank",
                "status",
                "exclusive",
                "unit",
                "size",
                "paths",
                "properties",
            ][..],
        ),
        ("edges", &["subsystem", "relation", "name"][..]),
    ] {
        for i in 0..base["graph"][list].as_array().unwrap().len() {
            for field in fields {
                for kind in &kinds {
                    let mut doc = base.clone();
                    doc["graph"][list][i]["metadata"][*field] = kind.clone();
                    refused += usize::from(read(&doc).is_err());
                }
            }
        }
    }
    // Most of these replacements break a rule; the point is that none of them panics.
    assert!(refused > 100, "only {refused} refusals");
}

#[test]
fn deeply_nested_json_is_refused_not_overflowed() {
    let text = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(matches!(
        read_jgf(&text, JgfLimits::default()),
        Err(JgfError::Syntax { .. })
    ));
}
