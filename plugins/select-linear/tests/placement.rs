//! Exact placements of select/linear on small hand-made tables.

use sluice_plugin_select_linear::Linear;
use sluice_sdk::testing::fixtures::tasks_job as job;
use sluice_sdk::testing::{self, allocate_all, fixtures};
use sluice_sdk::*;

/// Up nodes of 8 CPUs, 1000 MB and one GPU, weight 1, with the given free CPUs.
fn table(free_cpus: &[u32]) -> NodeTable {
    let n = free_cpus.len();
    NodeTable {
        cpus: vec![8; n],
        free_cpus: free_cpus.to_vec(),
        memory_mb: vec![1000; n],
        free_memory_mb: free_cpus
            .iter()
            .map(|&f| if f == 8 { 1000 } else { 0 })
            .collect(),
        weight: vec![1; n],
        power: vec![Power::Up; n],
        gres_kinds: vec!["gpu".into()],
        gres_total: vec![1; n],
        gres_free: vec![1; n],
        row_free_cpus: vec![],
        share_rows: 0,
    }
}

#[test]
fn every_node_is_given_whole() {
    let t = table(&[8, 8, 8]);
    let p = allocate_all(&mut Linear::default(), &t, &[job(1, 1, 1, 1, 3)])
        .remove(0)
        .unwrap();
    assert_eq!(
        (p.nodes, p.cpus, p.memory_mb, p.gres),
        (vec![0], vec![8], vec![1000], vec![1])
    );
}

#[test]
fn busy_nodes_are_skipped_and_best_fit_applies() {
    // Idle runs [0-1] and [3-5]: the tightest sufficient run wins, then the largest insufficient.
    let t = table(&[8, 8, 2, 8, 8, 8, 0]);
    let jobs = [job(1, 4, 1, 1, 7), job(2, 16, 1, 2, 7), job(3, 9, 1, 2, 7)];
    let out = allocate_all(&mut Linear::default(), &t, &jobs);
    assert_eq!(out[0].as_ref().unwrap().nodes, vec![0]);
    assert_eq!(out[1].as_ref().unwrap().nodes, vec![3, 4]);
    assert_eq!(out[2].as_ref().unwrap().nodes, vec![1, 5]);
}

#[test]
fn weight_and_power_order_nodes() {
    let mut t = table(&[8, 8, 8]);
    t.weight = vec![5, 1, 1];
    t.power = vec![Power::Up, Power::PoweredDown, Power::PoweringUp];
    let out = allocate_all(
        &mut Linear::default(),
        &t,
        &[job(1, 1, 1, 1, 3), job(2, 1, 1, 1, 3)],
    );
    let nodes: Vec<_> = out.iter().map(|p| p.as_ref().unwrap().nodes[0]).collect();
    assert_eq!(nodes, vec![0, 2]);
}

#[test]
fn gres_and_memory_must_fit_a_whole_node() {
    let t = table(&[8, 8]);
    let mut req = job(1, 1, 1, 1, 2);
    req.gres_per_node = vec![(0, 2)];
    assert!(allocate_all(&mut Linear::default(), &t, &[req.clone()])[0].is_none());
    req.gres_per_node = vec![];
    req.memory_per_node_mb = 2000;
    assert!(allocate_all(&mut Linear::default(), &t, &[req])[0].is_none());
}

#[test]
fn test_mode_keeps_and_release_restores() {
    let t = table(&[8]);
    let mut policy = Linear::default();
    policy.begin_pass(&t);
    let req = job(1, 1, 1, 1, 1);
    assert!(policy.place(&req, PlaceMode::Test).is_some());
    let p = policy.place(&req, PlaceMode::Allocate).unwrap();
    assert!(
        policy.place(&req, PlaceMode::Test).is_none(),
        "a one-task job still takes the whole node"
    );
    policy.release(1, &p);
    assert!(policy.place(&req, PlaceMode::Test).is_some());
}

#[test]
fn a_full_pass_never_breaks_the_contract() {
    let t = fixtures::node_table(256);
    let jobs = fixtures::job_requests(256, 2000, 3);
    let out = allocate_all(&mut Linear::default(), &t, &jobs);
    let used: usize = out.iter().flatten().map(|p| p.nodes.len()).sum();
    assert!(used > 200 && used <= 256, "{used} nodes allocated");
}

#[test]
fn conformance() {
    testing::assert_conformant(&testing::conformance::selection(&mut Linear::default()));
}

#[test]
fn tasks_per_node_spreads_the_tasks_over_whole_nodes() {
    // -n 8 --ntasks-per-node=4: one 8-CPU node would hold the CPUs, but not four tasks a node.
    let t = table(&[8, 8, 8]);
    let req = JobRequest {
        tasks_per_node: 4,
        ..job(1, 8, 1, 3, 3)
    };
    let p = allocate_all(&mut Linear::default(), &t, &[req.clone()])
        .remove(0)
        .unwrap();
    assert_eq!((p.nodes, p.cpus), (vec![0, 1], vec![8, 8]));
    // Three CPUs per task: four tasks need 12 CPUs on a node, more than any has.
    let wide = JobRequest {
        cpus_per_task: 3,
        ..req
    };
    assert!(
        allocate_all(&mut Linear::default(), &t, &[wide])
            .remove(0)
            .is_none()
    );
}

#[test]
fn under_force_a_job_that_shares_takes_a_whole_row_of_each_node() {
    // Two idle 8-CPU nodes with two sharing rows (OverSubscribe=FORCE:2).
    let t = NodeTable {
        share_rows: 2,
        row_free_cpus: vec![8; 4],
        ..table(&[8, 8])
    };
    let sharing = |id| JobRequest {
        share_rows: 2,
        ..job(id, 1, 1, 1, 2)
    };
    let placed = allocate_all(
        &mut Linear::default(),
        &t,
        &(1..=5).map(sharing).collect::<Vec<_>>(),
    );
    let got: Vec<Option<(Vec<u32>, Vec<u32>, Vec<u32>)>> = placed
        .into_iter()
        .map(|p| p.map(|p| (p.nodes, p.cpus, p.rows)))
        .collect();
    // Row 0 of each node first (CPUs no job holds), then row 1; a fifth job finds no row.
    assert_eq!(
        got,
        vec![
            Some((vec![0], vec![8], vec![0])),
            Some((vec![1], vec![8], vec![0])),
            Some((vec![0], vec![8], vec![1])),
            Some((vec![1], vec![8], vec![1])),
            None,
        ]
    );
    // Once row 0 of both nodes is taken, a job that does not share finds no idle node.
    let alone = job(6, 1, 1, 1, 2);
    let placed = allocate_all(&mut Linear::default(), &t, &[sharing(1), sharing(2), alone]);
    assert!(placed[1].is_some());
    assert_eq!(placed[2], None);
}
