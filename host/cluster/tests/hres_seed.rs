//! The HRES document's resources.yaml loads against node[01-32] and shows, per layer, its nodes and
//! counts; MODE_3 forms the expected tree with base usage summed upward.

use sluice_cluster::{Cluster, HresCount, HresMode, Source, parse_resources};

const SEED: &str = include_str!("fixtures/hres_seed_resources.yaml");

fn load() -> Vec<sluice_cluster::HresResource> {
    let cluster = Cluster::demo();
    parse_resources(
        Source::new("resources.yaml", SEED),
        &cluster.nodes,
        &cluster.licenses,
    )
    .unwrap()
}

/// One line per layer: resource, mode, the layer's nodes compressed, and its count.
fn layer_table(resources: &[sluice_cluster::HresResource]) -> Vec<String> {
    let cluster = Cluster::demo();
    resources
        .iter()
        .flat_map(|r| {
            let cluster = &cluster;
            r.layers.iter().map(move |layer| {
                let names: Vec<&str> = layer
                    .nodes
                    .iter()
                    .map(|id| cluster.node(*id).name.as_str())
                    .collect();
                let count = match layer.count {
                    HresCount::Infinite => "-1".to_owned(),
                    HresCount::Count(c) => c.to_string(),
                };
                format!(
                    "{} {} {} {}",
                    r.name,
                    r.mode.as_str(),
                    sluice_hostlist::compress(&names),
                    count
                )
            })
        })
        .collect()
}

#[test]
fn every_layer_shows_its_nodes_and_count() {
    let table = layer_table(&load());
    for line in &table {
        println!("{line}");
    }
    assert_eq!(
        table,
        [
            "flat MODE_2 node[01-32] 24",
            "flat MODE_2 node[01-16] 16",
            "flat MODE_2 node[17-32] 16",
            "flat MODE_2 node[01-08] 12",
            "flat MODE_2 node[09-16] 12",
            "flat MODE_2 node[17-24] 12",
            "flat MODE_2 node[25-32] 12",
            "natural MODE_1 node[01-32] 50",
            "natural MODE_1 node[01-16] 100",
            "natural MODE_1 node[17-32] 100",
            "power MODE_3 node[01-08] 40000",
            "power MODE_3 node[17-24] 40000",
            "power MODE_3 node[09-16] 40000",
            "power MODE_3 node[25-32] 40000",
            "power MODE_3 node[01-16] 60000",
            "power MODE_3 node[17-32] 80000",
            "power MODE_3 node[01-32] 130000",
        ]
    );
    let node_counts: Vec<usize> = load()[0].layers.iter().map(|l| l.nodes.len()).collect();
    assert_eq!(node_counts, [32, 16, 16, 8, 8, 8, 8]);
}

#[test]
fn mode3_power_is_a_uniform_tree_with_base_summed_upward() {
    let resources = load();
    let power = resources.iter().find(|r| r.name == "power").unwrap();
    assert_eq!(power.mode, HresMode::Mode3);
    assert_eq!(power.topology.as_deref(), Some("blok1"));
    assert_eq!(power.variable("full_gpu_node"), Some(2000));
    assert_eq!(power.variable("nope"), None);
    // Layers: 0 node[01-08], 1 node[17-24], 2 node[09-16], 3 node[25-32], 4 node[01-16], 5 node[17-32], 6 root.
    let parents: Vec<Option<usize>> = power.layers.iter().map(|l| l.parent).collect();
    assert_eq!(
        parents,
        [Some(4), Some(5), Some(4), Some(5), Some(6), Some(6), None]
    );
    let depths: Vec<u16> = power.layers.iter().map(|l| l.depth).collect();
    assert_eq!(depths, [2, 2, 2, 2, 1, 1, 0]);
    // Available = count - (own base + children's base): storage 5000 under network1 3000 under acUnits 18000.
    let available: Vec<Option<u64>> = power.layers.iter().map(|l| l.available()).collect();
    assert_eq!(
        available,
        [
            Some(35_000),
            Some(40_000),
            Some(40_000),
            Some(40_000),
            Some(52_000),
            Some(78_000),
            Some(102_000)
        ]
    );
    let natural = resources.iter().find(|r| r.name == "natural").unwrap();
    assert!(
        natural
            .layers
            .iter()
            .all(|l| l.parent.is_none() && l.base_usage == 0)
    );
}

#[test]
fn hres_names_may_not_clash_with_licenses() {
    let cluster = Cluster::demo();
    let licenses = vec![sluice_cluster::License {
        name: "flat".into(),
        count: 3,
    }];
    let err = parse_resources(
        Source::new("resources.yaml", SEED),
        &cluster.nodes,
        &licenses,
    )
    .unwrap_err();
    let message = err.to_string();
    assert!(message.starts_with("resources.yaml:2:3:"), "{message}");
    assert!(message.contains("license"), "{message}");
}
