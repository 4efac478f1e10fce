//! Bad GRUG recipes: each refusal names the file, line and column and what was expected.

mod common;

use std::path::Path;

use common::{KEYS, document, edge, graph, node};
use sluice_graph::{GrugError, GrugLimits, Recipe, generate, read_grug};

#[test]
fn malformed_xml_reports_line_and_column() {
    let text = "<?xml version=\"1.0\"?>\n<graphml>\n  <graph>\n  </grph>\n</graphml>\n";
    let err = Recipe::parse(text, Path::new("bad.graphml")).unwrap_err();
    assert!(matches!(err, GrugError::Xml { line: 4, .. }), "{err:?}");
    assert!(err.to_string().starts_with("bad.graphml:4:"), "{err}");
}

#[test]
fn unknown_attribute_declaration_is_refused() {
    let text = format!(
        "<graphml>\n{KEYS}<key id=\"colour\" for=\"node\" attr.name=\"colour\" attr.type=\"string\"/>\n<graph/>\n</graphml>"
    );
    let err = Recipe::parse(&text, Path::new("x.graphml")).unwrap_err();
    let GrugError::UnknownAttribute { name, line, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(name, "colour");
    assert_eq!(*line as usize, 2 + KEYS.lines().count());
    assert!(
        err.to_string()
            .contains("unknown attribute `colour` for `node`"),
        "{err}"
    );
}

#[test]
fn undeclared_data_key_is_refused() {
    let body = "<node id=\"c\"><data key=\"root\">1</data><data key=\"type\">cluster</data><data key=\"colour\">red</data></node>\n";
    let err = graph(body).unwrap_err();
    assert!(err.to_string().contains("undeclared key `colour`"), "{err}");
}

#[test]
fn cycle_in_the_recipe_is_refused_at_the_closing_edge() {
    let body = [
        node("c", "cluster", true, ""),
        node("n", "node", false, ""),
        node("k", "core", false, ""),
        edge("c", "n", &[]),
        edge("n", "k", &[]),
        edge("k", "n", &[]),
    ]
    .concat();
    let err = graph(&body).unwrap_err();
    let GrugError::Cycle { edge, line, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(edge, "k2n");
    let expected_line = document(&body)
        .lines()
        .position(|l| l.contains("id=\"k2n\""))
        .unwrap()
        + 1;
    assert_eq!(*line as usize, expected_line);
}

#[test]
fn self_loop_is_a_cycle() {
    let body = [node("c", "cluster", true, ""), edge("c", "c", &[])].concat();
    assert!(matches!(graph(&body).unwrap_err(), GrugError::Cycle { .. }));
}

#[test]
fn recipe_without_root_is_refused() {
    let body = [
        node("c", "cluster", false, ""),
        node("n", "node", false, ""),
        edge("c", "n", &[]),
    ]
    .concat();
    let err = graph(&body).unwrap_err();
    assert!(matches!(err, GrugError::MissingRoot { .. }), "{err:?}");
    assert!(
        err.to_string().contains("no recipe vertex is a root"),
        "{err}"
    );
}

#[test]
fn non_integer_scale_is_refused_at_its_data_element() {
    let body = [
        node("c", "cluster", true, ""),
        node("n", "node", false, ""),
        edge("c", "n", &[("multi_scale", "many")]),
    ]
    .concat();
    let err = graph(&body).unwrap_err();
    assert!(
        err.to_string()
            .contains("expected an integer for `multi_scale`, found `many`"),
        "{err}"
    );
}

#[test]
fn unknown_generation_method_is_refused() {
    let body = [
        node("c", "cluster", true, ""),
        node("n", "node", false, ""),
        edge("c", "n", &[("gen_method", "CLONE")]),
    ]
    .concat();
    let err = graph(&body).unwrap_err();
    assert!(err.to_string().contains("found `CLONE`"), "{err}");
}

#[test]
fn edge_to_an_unknown_node_is_refused() {
    let body = [node("c", "cluster", true, ""), edge("c", "ghost", &[])].concat();
    let err = graph(&body).unwrap_err();
    assert!(
        err.to_string()
            .contains("expected `target` to name a <node>, found `ghost`"),
        "{err}"
    );
}

#[test]
fn node_without_type_is_refused() {
    let err = graph("<node id=\"c\"><data key=\"root\">1</data></node>\n").unwrap_err();
    assert!(
        err.to_string().contains("expected a `type` for node `c`"),
        "{err}"
    );
}

#[test]
fn generation_beyond_the_vertex_limit_stops_with_an_error() {
    let body = [
        node("c", "cluster", true, ""),
        node("n", "node", false, ""),
        node("k", "core", false, ""),
        edge("c", "n", &[("multi_scale", "1000")]),
        edge("n", "k", &[("multi_scale", "1000000")]),
    ]
    .concat();
    let recipe = Recipe::parse(&document(&body), Path::new("huge.graphml")).unwrap();
    let limits = GrugLimits {
        max_vertices: 10_000,
        max_edges: 10_000,
        ..GrugLimits::default()
    };
    let err = generate(&recipe, limits).unwrap_err();
    assert_eq!(
        err.to_string(),
        "huge.graphml: the recipe generates more than 10000 vertices"
    );
}

#[test]
fn missing_file_is_an_io_error_naming_it() {
    let err = read_grug(Path::new("/nonexistent/x.graphml")).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("/nonexistent/x.graphml: cannot read"),
        "{err}"
    );
}

#[test]
fn extreme_id_start_and_stride_do_not_panic() {
    let body = [
        node("c", "cluster", true, ""),
        node("r", "rack", false, ""),
        node("n", "node", false, ""),
        edge(
            "c",
            "r",
            &[("multi_scale", "2"), ("id_start", "9223372036854775807")],
        ),
        edge(
            "r",
            "n",
            &[
                ("multi_scale", "2"),
                ("id_scope", "1"),
                ("id_start", "9223372036854775807"),
                ("id_stride", "9223372036854775807"),
            ],
        ),
    ]
    .concat();
    let g = graph(&body).unwrap();
    assert_eq!(g.count_of_type("node"), 4);
    assert_eq!(
        g.name(g.vertices_of_type("rack")[0]),
        "rack9223372036854775807"
    );
}

#[test]
fn too_many_subsystems_are_refused_before_generation() {
    let mut body = node("c", "cluster", true, "");
    for i in 0..17 {
        body += &node(
            &format!("v{i}"),
            "node",
            false,
            &format!("<data key=\"subsystem\">s{i}</data>"),
        );
    }
    let err = graph(&body).unwrap_err();
    assert_eq!(
        err.to_string(),
        "test.graphml: the recipe generates more than 16 subsystems"
    );
}
