//! flux-sched's two shared cases: their GRUGs and jobspecs load and give the vertex counts the
//! reference's recipe rules imply (the expected outputs are not used).

use std::path::{Path, PathBuf};

use sluice_graph::{Jobspec, read_grug};

fn case(name: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/flux")
        .join(name);
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipped: {} is absent", dir.display());
        None
    }
}

#[test]
fn tiny_recipe_generates_one_rack_two_nodes_and_their_sockets() {
    let Some(dir) = case("ex1-tiny-high-allocate") else {
        return;
    };
    let g = read_grug(&dir.join("tiny.graphml")).unwrap();
    // tiny → rack×1 → node×2 → socket×2 → core×18, gpu×1, memory×4 (reference §2.1: 100 vertices).
    let counts: Vec<usize> = ["cluster", "rack", "node", "socket", "core", "gpu", "memory"]
        .iter()
        .map(|t| g.count_of_type(t))
        .collect();
    assert_eq!(counts, [1, 1, 2, 4, 72, 4, 16]);
    assert_eq!(g.vertex_count(), 100);
    let c = g.subsystem_id("containment").unwrap();
    let cores = g.vertices_of_type("core");
    assert_eq!(
        g.path(c, cores[35]).unwrap(),
        "/tiny0/rack0/node0/socket1/core35"
    );
    assert_eq!(
        g.path(c, cores[36]).unwrap(),
        "/tiny0/rack0/node1/socket0/core0"
    );
    let memory = g.vertices_of_type("memory");
    assert_eq!((g.size(memory[0]), g.unit(memory[0])), (2, "GB"));
    assert_eq!(g.name(memory[7]), "memory7");
    let js = Jobspec::from_file(&dir.join("test001.yaml"), g.types()).unwrap();
    assert_eq!(js.duration(), Some(3600.0));
}

#[test]
fn medium_recipe_numbers_nodes_across_the_cluster() {
    let Some(dir) = case("ex3-medium-first-omit-prefix") else {
        return;
    };
    let g = read_grug(&dir.join("medium.graphml")).unwrap();
    // medium → rack×4 → node×18 → socket×2 → core×18, gpu×1, memory×4 (reference §2.1: 3,533).
    assert_eq!(g.count_of_type("rack"), 4);
    assert_eq!(g.count_of_type("node"), 72);
    assert_eq!(g.count_of_type("socket"), 144);
    assert_eq!(g.count_of_type("core"), 144 * 18);
    assert_eq!(g.vertex_count(), 3533);
    let c = g.subsystem_id("containment").unwrap();
    let nodes = g.vertices_of_type("node");
    assert_eq!(g.path(c, nodes[71]).unwrap(), "/medium0/rack3/node71");
    assert_eq!(g.rank(nodes[71]), 71);
    for i in 1..=9 {
        let file = dir.join(format!("test00{i}.yaml"));
        let js = Jobspec::from_file(&file, g.types()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(js.duration(), Some(43200.0), "{}", file.display());
    }
}
