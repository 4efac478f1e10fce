//! GRUG generation rules (reference §2.3): recipe text → vertex counts, names, ids, paths, edges.

mod common;

use common::{edge, graph, names, node, path_of};

/// cluster → rack[1] → node[2] (scope 1) → socket[2] → core[3] (scope 1), memory[2] (2 GB, scope 1).
fn small_tree() -> String {
    [
        node("cluster", "cluster", true, ""),
        node("rack", "rack", false, ""),
        node("node", "node", false, ""),
        node("socket", "socket", false, ""),
        node("core", "core", false, ""),
        node(
            "memory",
            "memory",
            false,
            "<data key=\"size\">2</data><data key=\"unit\">GB</data>",
        ),
        edge("cluster", "rack", &[]),
        edge("rack", "node", &[("id_scope", "1"), ("multi_scale", "2")]),
        edge("node", "socket", &[("multi_scale", "2")]),
        edge("socket", "core", &[("id_scope", "1"), ("multi_scale", "3")]),
        edge(
            "socket",
            "memory",
            &[("id_scope", "1"), ("multi_scale", "2")],
        ),
    ]
    .concat()
}

#[test]
fn multiply_generates_scale_copies_under_every_source() {
    let g = graph(&small_tree()).unwrap();
    assert_eq!(g.count_of_type("cluster"), 1);
    assert_eq!(g.count_of_type("rack"), 1);
    assert_eq!(g.count_of_type("node"), 2);
    assert_eq!(g.count_of_type("socket"), 4);
    assert_eq!(g.count_of_type("core"), 12);
    assert_eq!(g.count_of_type("memory"), 8);
    assert_eq!(g.vertex_count(), 28);
    let c = g.subsystem_id("containment").unwrap();
    assert_eq!(g.edge_count(c), 27);
}

#[test]
fn root_is_named_basename_zero_with_path_slash_name() {
    let g = graph(&small_tree()).unwrap();
    let c = g.subsystem_id("containment").unwrap();
    assert_eq!(g.roots(c), vec![0]);
    assert_eq!(g.name(0), "cluster0");
    assert_eq!(g.id(0), 0);
    assert_eq!(g.path(c, 0).as_deref(), Some("/cluster0"));
}

#[test]
fn scope_one_numbers_across_the_grandparent() {
    let g = graph(&small_tree()).unwrap();
    // socket → core with scope 1: the wrap is node → socket's scale 2, so each node's two
    // sockets number their cores 0–5, and the second node starts again at 0.
    assert_eq!(
        names(&g, "core"),
        ["core0", "core1", "core2", "core3", "core4", "core5"].repeat(2)
    );
    // Scope 0 restarts under every parent.
    assert_eq!(
        names(&g, "socket"),
        ["socket0", "socket1", "socket0", "socket1"]
    );
    assert_eq!(
        path_of(&g, "containment", "core5").unwrap(),
        "/cluster0/rack0/node0/socket1/core5"
    );
}

#[test]
fn nodes_get_ranks_in_creation_order_and_others_minus_one() {
    let g = graph(&small_tree()).unwrap();
    let ranks: Vec<i32> = g
        .vertices_of_type("node")
        .iter()
        .map(|&v| g.rank(v))
        .collect();
    assert_eq!(ranks, [0, 1]);
    assert!(g.vertices_of_type("core").iter().all(|&v| g.rank(v) == -1));
}

#[test]
fn size_and_unit_come_from_the_recipe_vertex() {
    let g = graph(&small_tree()).unwrap();
    let memory = g.vertices_of_type("memory");
    assert!(memory.iter().all(|&v| g.size(v) == 2 && g.unit(v) == "GB"));
    let core = g.vertices_of_type("core")[0];
    assert_eq!((g.size(core), g.unit(core)), (1, ""));
}

#[test]
fn creation_order_is_by_recipe_edge_then_by_parent() {
    let g = graph(&small_tree()).unwrap();
    let kinds: Vec<&str> = (0..g.vertex_count() as u32).map(|v| g.kind(v)).collect();
    let mut expected = vec!["cluster", "rack", "node", "node"];
    expected.extend(["socket"; 4]);
    expected.extend(["core"; 12]);
    expected.extend(["memory"; 8]);
    assert_eq!(kinds, expected);
}

#[test]
fn out_edges_follow_creation_order_with_relation() {
    let g = graph(&small_tree()).unwrap();
    let c = g.subsystem_id("containment").unwrap();
    let socket = g.vertices_of_type("socket")[0];
    let children: Vec<String> = g.out_edges(c, socket).iter().map(|&v| g.name(v)).collect();
    assert_eq!(children, ["core0", "core1", "core2", "memory0", "memory1"]);
    assert!(g.out_relations(c, socket).all(|r| r == "contains"));
    let core = g.vertices_of_type("core")[0];
    assert!(g.out_edges(c, core).is_empty());
}

#[test]
fn scope_zero_ignores_stride_and_starts_at_id_start() {
    let body = [
        node("c", "cluster", true, ""),
        node("n", "node", false, ""),
        edge(
            "c",
            "n",
            &[("multi_scale", "3"), ("id_start", "5"), ("id_stride", "4")],
        ),
    ]
    .concat();
    assert_eq!(
        names(&graph(&body).unwrap(), "node"),
        ["node5", "node6", "node7"]
    );
}

#[test]
fn scope_one_applies_stride_and_start() {
    let body = [
        node("c", "cluster", true, ""),
        node("r", "rack", false, ""),
        node("n", "node", false, ""),
        edge("c", "r", &[("multi_scale", "2")]),
        edge(
            "r",
            "n",
            &[
                ("multi_scale", "2"),
                ("id_scope", "1"),
                ("id_start", "10"),
                ("id_stride", "3"),
            ],
        ),
    ]
    .concat();
    // id = start + (j % wrap)·scale·stride + i·stride with wrap 2: 10, 13, 16, 19.
    assert_eq!(
        names(&graph(&body).unwrap(), "node"),
        ["node10", "node13", "node16", "node19"]
    );
}

#[test]
fn scope_beyond_depth_numbers_globally() {
    let body = [
        node("c", "cluster", true, ""),
        node("r", "rack", false, ""),
        node("n", "node", false, ""),
        node("k", "core", false, ""),
        edge("c", "r", &[("multi_scale", "2")]),
        edge("r", "n", &[("multi_scale", "2")]),
        edge("n", "k", &[("multi_scale", "2"), ("id_scope", "9")]),
    ]
    .concat();
    let g = graph(&body).unwrap();
    let expected: Vec<String> = (0..8).map(|i| format!("core{i}")).collect();
    assert_eq!(names(&g, "core"), expected);
}

#[test]
fn negative_scope_gives_names_without_ids() {
    let body = [
        node("c", "cluster", true, ""),
        node("s", "ssd", false, ""),
        edge("c", "s", &[("multi_scale", "2"), ("id_scope", "-1")]),
    ]
    .concat();
    let g = graph(&body).unwrap();
    assert_eq!(names(&g, "ssd"), ["ssd", "ssd"]);
    assert_eq!(g.id(g.vertices_of_type("ssd")[0]), -1);
    assert_eq!(path_of(&g, "containment", "ssd").unwrap(), "/cluster0/ssd");
}

#[test]
fn recipe_types_are_interned_after_the_builtin_types_in_reading_order() {
    let g = graph(&small_tree()).unwrap();
    let types = g.types();
    assert_eq!(types.get("storage_node"), Some(9));
    // `memory` is the first recipe type that is not built in.
    assert_eq!(types.get("memory"), Some(10));
    assert_eq!(types.len(), 11);
}

/// Containment cluster → rack[2] → pdu[1] (scope 1), node[2] (scope 1); a power subsystem
/// whose panel takes every pdu, and each pdu the nodes of its own rack.
fn power_recipe() -> String {
    let power = "<data key=\"subsystem\">power</data>";
    [
        node("cluster", "cluster", true, ""),
        node("rack", "rack", false, ""),
        node("pdu", "pdu", false, ""),
        node("node", "node", false, ""),
        node("panel", "powerpanel", true, power),
        node("pdu_power", "pdu", false, power),
        node("node_power", "node", false, power),
        edge("cluster", "rack", &[("multi_scale", "2")]),
        edge("rack", "pdu", &[("id_scope", "1")]),
        edge("rack", "node", &[("id_scope", "1"), ("multi_scale", "2")]),
        edge(
            "panel",
            "pdu_power",
            &[
                ("e_subsystem", "power"),
                ("relation", "drawn"),
                ("gen_method", "ASSOCIATE_IN"),
            ],
        ),
        edge(
            "pdu_power",
            "node_power",
            &[
                ("e_subsystem", "power"),
                ("relation", "drawn"),
                ("gen_method", "ASSOCIATE_BY_PATH_IN"),
                ("as_tgt_uplvl", "1"),
                ("as_src_uplvl", "1"),
            ],
        ),
    ]
    .concat()
}

#[test]
fn associate_in_links_every_vertex_of_the_type_without_new_vertices() {
    let g = graph(&power_recipe()).unwrap();
    assert_eq!(g.count_of_type("pdu"), 2);
    assert_eq!(g.count_of_type("node"), 4);
    assert_eq!(g.count_of_type("powerpanel"), 1);
    assert_eq!(g.vertex_count(), 1 + 2 + 2 + 4 + 1);
    let p = g.subsystem_id("power").unwrap();
    let panel = g.vertices_of_type("powerpanel")[0];
    let pdus: Vec<String> = g.out_edges(p, panel).iter().map(|&v| g.name(v)).collect();
    assert_eq!(pdus, ["pdu0", "pdu1"]);
    assert!(g.out_relations(p, panel).all(|r| r == "drawn"));
    assert_eq!(path_of(&g, "power", "pdu1").unwrap(), "/powerpanel0/pdu1");
    assert_eq!(
        path_of(&g, "containment", "pdu1").unwrap(),
        "/cluster0/rack1/pdu1"
    );
}

#[test]
fn associate_by_path_in_links_only_vertices_under_the_same_ancestor() {
    let g = graph(&power_recipe()).unwrap();
    let p = g.subsystem_id("power").unwrap();
    let c = g.subsystem_id("containment").unwrap();
    assert_eq!(g.edge_count(p), 2 + 4);
    assert_eq!(g.edge_count(c), 2 + 2 + 4);
    let pdu1 = g.vertices_of_type("pdu")[1];
    let nodes: Vec<String> = g.out_edges(p, pdu1).iter().map(|&v| g.name(v)).collect();
    assert_eq!(nodes, ["node2", "node3"]);
    assert_eq!(
        path_of(&g, "power", "node3").unwrap(),
        "/powerpanel0/pdu1/node3"
    );
    let core_free_node = g.vertices_of_type("node")[0];
    assert!(g.is_member(p, core_free_node) && g.is_member(c, core_free_node));
    assert!(!g.is_member(p, g.vertices_of_type("rack")[0]));
    assert_eq!(g.roots(p), vec![g.vertices_of_type("powerpanel")[0]]);
}

#[test]
fn recipe_in_a_data_file_loads() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/two-racks.graphml");
    let g = sluice_graph::read_grug(&path).unwrap();
    assert_eq!(g.count_of_type("node"), 4);
    assert_eq!(g.count_of_type("core"), 16);
    assert_eq!(
        path_of(&g, "containment", "core15").unwrap(),
        "/lab0/rack1/node3/core15"
    );
}

/// Nodes generated under racks with cores, then associated in containment under a storage unit.
fn reassociated_nodes() -> String {
    [
        node("cluster", "cluster", true, ""),
        node("rack", "rack", false, ""),
        node("node", "node", false, ""),
        node("core", "core", false, ""),
        node("unit", "mtl2unit", false, ""),
        node("node_again", "node", false, ""),
        edge("cluster", "rack", &[("multi_scale", "2")]),
        edge("rack", "node", &[("id_scope", "1")]),
        edge("node", "core", &[("multi_scale", "2"), ("id_scope", "2")]),
        edge("cluster", "unit", &[]),
        edge("unit", "node_again", &[("gen_method", "ASSOCIATE_IN")]),
    ]
    .concat()
}

#[test]
fn association_moves_a_path_but_paths_copied_from_the_old_one_stay() {
    let g = graph(&reassociated_nodes()).unwrap();
    assert_eq!(g.count_of_type("node"), 2);
    assert_eq!(
        path_of(&g, "containment", "node1").unwrap(),
        "/cluster0/mtl2unit0/node1"
    );
    // The cores were generated while node1's path was /cluster0/rack1/node1.
    assert_eq!(
        path_of(&g, "containment", "core3").unwrap(),
        "/cluster0/rack1/node1/core3"
    );
    let c = g.subsystem_id("containment").unwrap();
    let unit = g.vertices_of_type("mtl2unit")[0];
    assert_eq!(g.out_edges(c, unit).len(), 2);
    // Both parents now list the node among their containment children.
    let rack1 = g.vertices_of_type("rack")[1];
    assert_eq!(g.out_edges(c, rack1), &[g.vertices_of_type("node")[1]]);
}

#[test]
fn finishing_a_branch_pops_its_scales_before_the_next_sibling_edge() {
    let body = [
        node("c", "cluster", true, ""),
        node("r", "rack", false, ""),
        node("n", "node", false, ""),
        node("k", "core", false, ""),
        node("w", "switch", false, ""),
        edge("c", "r", &[("multi_scale", "3")]),
        edge("r", "n", &[("multi_scale", "2")]),
        edge("n", "k", &[("multi_scale", "2")]),
        edge("r", "w", &[("multi_scale", "3"), ("id_scope", "1")]),
    ]
    .concat();
    let g = graph(&body).unwrap();
    // At rack → switch only cluster → rack's scale 3 is on the stack, so the three racks'
    // switches are numbered 0–8; a stale node scale of 2 would restart the third rack at 0.
    let expected: Vec<String> = (0..9).map(|i| format!("switch{i}")).collect();
    assert_eq!(names(&g, "switch"), expected);
    assert_eq!(
        path_of(&g, "containment", "switch8").unwrap(),
        "/cluster0/rack2/switch8"
    );
}

#[test]
fn a_second_root_of_the_same_subsystem_reuses_the_first() {
    let body = [
        node("c", "cluster", true, ""),
        node("n", "node", false, ""),
        node("c2", "cluster", true, ""),
        node("k", "core", false, ""),
        edge("c", "n", &[]),
        edge("c2", "k", &[]),
    ]
    .concat();
    let g = graph(&body).unwrap();
    assert_eq!(g.count_of_type("cluster"), 1);
    assert_eq!(
        path_of(&g, "containment", "core0").unwrap(),
        "/cluster0/core0"
    );
    let c = g.subsystem_id("containment").unwrap();
    assert_eq!(g.out_edges(c, 0).len(), 2);
}

#[test]
fn sibling_edges_under_the_same_parent_share_the_grandparent_wrap() {
    let g = graph(&small_tree()).unwrap();
    assert_eq!(
        names(&g, "memory"),
        ["memory0", "memory1", "memory2", "memory3"].repeat(2)
    );
}

#[test]
fn association_by_path_within_the_compared_subsystem_sees_paths_it_moved() {
    let body = [
        node("cluster", "cluster", true, ""),
        node("rack", "rack", false, ""),
        node("node", "node", false, ""),
        node("pdu", "pdu", false, ""),
        node("node_again", "node", false, ""),
        edge("cluster", "rack", &[("multi_scale", "2")]),
        edge("rack", "node", &[("multi_scale", "2"), ("id_scope", "1")]),
        edge("rack", "pdu", &[("id_scope", "1")]),
        edge(
            "pdu",
            "node_again",
            &[
                ("gen_method", "ASSOCIATE_BY_PATH_IN"),
                ("relation", "feeds"),
            ],
        ),
    ]
    .concat();
    let g = graph(&body).unwrap();
    let c = g.subsystem_id("containment").unwrap();
    let pdus = g.vertices_of_type("pdu");
    let fed: Vec<Vec<String>> = pdus
        .iter()
        .map(|&p| g.out_edges(c, p).iter().map(|&v| g.name(v)).collect())
        .collect();
    assert_eq!(fed, [["node0", "node1"], ["node2", "node3"]]);
    assert_eq!(
        path_of(&g, "containment", "node3").unwrap(),
        "/cluster0/rack1/pdu1/node3"
    );
    assert!(g.out_relations(c, pdus[0]).all(|r| r == "feeds"));
}
