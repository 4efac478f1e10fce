//! Memory of the compact graph: 16,384 nodes × 64 cores stays within 200 bytes per vertex.

mod common;

use common::{edge, graph, node};

#[test]
fn sixteen_thousand_nodes_of_sixty_four_cores_fit_in_200_bytes_per_vertex() {
    let body = [
        node("c", "cluster", true, ""),
        node("n", "node", false, ""),
        node("k", "core", false, ""),
        edge("c", "n", &[("multi_scale", "16384")]),
        edge("n", "k", &[("multi_scale", "64")]),
    ]
    .concat();
    let g = graph(&body).unwrap();
    assert_eq!(g.vertex_count(), 1 + 16_384 + 16_384 * 64);
    assert_eq!(g.count_of_type("core"), 16_384 * 64);
    let c = g.subsystem_id("containment").unwrap();
    assert_eq!(g.edge_count(c), g.vertex_count() - 1);
    let per_vertex = g.memory_bytes() as f64 / g.vertex_count() as f64;
    eprintln!(
        "memory_bytes {} for {} vertices: {per_vertex:.1} bytes per vertex",
        g.memory_bytes(),
        g.vertex_count()
    );
    assert!(per_vertex <= 200.0, "{per_vertex} bytes per vertex");
    // The arena is 36 bytes per vertex and each edge 12 (offset, target, relation): anything far
    // below 48 is miscounted.
    assert!(per_vertex >= 40.0, "{per_vertex} bytes per vertex");
    let last = (g.vertex_count() - 1) as u32;
    assert_eq!(g.path(c, last).unwrap(), "/cluster0/node16383/core63");
}
