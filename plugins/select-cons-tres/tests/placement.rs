//! Exact placements of select/cons_tres on small hand-made tables.

use sluice_plugin_select_cons_tres::ConsTres;
use sluice_sdk::testing::fixtures::tasks_job as job;
use sluice_sdk::testing::{self, allocate_all, fixtures};
use sluice_sdk::*;

/// Up nodes of 8 CPUs and 1000 MB, weight 1, 2 GPUs configured, with the given free CPUs.
fn table(free_cpus: &[u32]) -> NodeTable {
    let n = free_cpus.len();
    NodeTable {
        cpus: vec![8; n],
        free_cpus: free_cpus.to_vec(),
        memory_mb: vec![1000; n],
        free_memory_mb: free_cpus
            .iter()
            .map(|&f| if f == 8 { 1000 } else { 500 })
            .collect(),
        weight: vec![1; n],
        power: vec![Power::Up; n],
        gres_kinds: vec!["gpu".into()],
        gres_total: vec![2; n],
        gres_free: vec![2; n],
        row_free_cpus: vec![],
        share_rows: 0,
    }
}

fn place(t: &NodeTable, req: &JobRequest) -> Option<Placement> {
    allocate_all(&mut ConsTres::default(), t, std::slice::from_ref(req)).remove(0)
}

#[test]
fn lowest_weight_first_then_lowest_index() {
    let mut t = table(&[8, 8, 8, 8]);
    t.weight = vec![3, 2, 2, 1];
    let p = place(&t, &job(1, 4, 1, 1, 4)).unwrap();
    assert_eq!(p.nodes, vec![3]);
    t.weight = vec![3, 2, 2, 5];
    let p = place(&t, &job(1, 4, 1, 1, 4)).unwrap();
    assert_eq!(p.nodes, vec![1]);
}

#[test]
fn one_policy_follows_weights_and_power_that_change_between_passes() {
    // The tiers are kept from pass to pass while weights and power stay; a change must show.
    let mut policy = ConsTres::default();
    let mut t = table(&[8, 8, 8, 8]);
    let mut first_pick = |t: &NodeTable| {
        policy.begin_pass(t);
        policy
            .place(&job(1, 4, 1, 1, 4), PlaceMode::Test)
            .map(|p| p.nodes)
    };
    t.weight = vec![3, 2, 2, 1];
    assert_eq!(first_pick(&t), Some(vec![3]));
    assert_eq!(first_pick(&t), Some(vec![3]), "an unchanged table");
    t.weight = vec![3, 2, 2, 5];
    assert_eq!(first_pick(&t), Some(vec![1]), "a new weight");
    t.power[1] = Power::PoweredDown;
    assert_eq!(first_pick(&t), Some(vec![2]), "a node powered down");
}

#[test]
fn powered_up_before_powering_up_before_powered_down() {
    let mut t = table(&[8, 8, 8]);
    t.power = vec![Power::PoweredDown, Power::PoweringUp, Power::Up];
    t.weight = vec![1, 1, 9];
    assert_eq!(place(&t, &job(1, 1, 1, 1, 3)).unwrap().nodes, vec![2]);
    t.power[2] = Power::PoweredDown;
    assert_eq!(place(&t, &job(1, 1, 1, 1, 3)).unwrap().nodes, vec![1]);
}

#[test]
fn next_weight_is_added_only_when_the_lowest_is_not_enough() {
    let mut t = table(&[8, 8, 8, 8]);
    t.weight = vec![1, 2, 1, 2];
    let p = place(&t, &job(1, 16, 2, 2, 4)).unwrap();
    assert_eq!(p.nodes, vec![0, 2]);
    let p = place(&t, &job(1, 24, 3, 3, 4)).unwrap();
    assert_eq!(p.nodes, vec![0, 1, 2]);
}

#[test]
fn tightest_sufficient_run_wins() {
    // Runs of usable nodes: [0-1] 16 CPUs, [3] 4 CPUs, [5-7] 24 CPUs.
    let t = table(&[8, 8, 0, 4, 0, 8, 8, 8]);
    assert_eq!(place(&t, &job(1, 4, 1, 1, 8)).unwrap().nodes, vec![3]);
    let p = place(&t, &job(2, 12, 1, 2, 8)).unwrap();
    assert_eq!((p.nodes, p.cpus), (vec![0, 1], vec![8, 4]));
}

#[test]
fn largest_insufficient_run_first_then_tightest_rest() {
    let t = table(&[8, 8, 0, 4, 0, 8, 8, 8]);
    let p = place(&t, &job(1, 30, 1, 4, 8)).unwrap();
    assert_eq!(p.nodes, vec![0, 5, 6, 7]);
    assert_eq!(p.cpus, vec![8, 8, 8, 6]);
    assert_eq!(p.memory_mb, vec![100; 4]);
}

#[test]
fn a_node_limit_is_not_spent_on_a_preferred_but_small_node() {
    let mut t = table(&[2, 8]);
    t.weight = vec![1, 2];
    assert_eq!(place(&t, &job(1, 6, 1, 1, 2)).unwrap().nodes, vec![1]);
    assert_eq!(place(&t, &job(2, 10, 1, 2, 2)).unwrap().nodes, vec![0, 1]);
}

#[test]
fn node_limits_are_respected() {
    let t = table(&[8; 6]);
    let p = place(&t, &job(1, 3, 3, 3, 6)).unwrap();
    assert_eq!((p.nodes, p.cpus), (vec![0, 1, 2], vec![1, 1, 1]));
    assert!(
        place(&t, &job(2, 20, 1, 2, 6)).is_none(),
        "20 CPUs cannot fit on two 8-CPU nodes"
    );
    let p = place(&t, &job(3, 2, 4, 4, 6)).unwrap();
    assert_eq!(p.nodes.len(), 4, "min nodes wins over a small task count");
}

#[test]
fn memory_gres_and_cpus_per_task_filter_nodes() {
    let mut t = table(&[8, 8, 8, 8]);
    t.free_memory_mb = vec![50, 1000, 1000, 1000];
    t.gres_free = vec![2, 0, 2, 1];
    let mut req = job(1, 2, 1, 1, 4);
    req.gres_per_node = vec![(0, 2)];
    let p = place(&t, &req).unwrap();
    assert_eq!((p.nodes, p.gres), (vec![2], vec![2]));

    let t = table(&[3, 8, 5]);
    let mut req = job(2, 2, 1, 1, 3);
    req.cpus_per_task = 4;
    assert_eq!(place(&t, &req).unwrap().nodes, vec![1]);
    req.tasks = 3;
    assert!(
        place(&t, &req).is_none(),
        "three 4-CPU tasks do not fit one 8-CPU node"
    );
}

#[test]
fn exclusive_takes_a_whole_idle_node() {
    let t = table(&[6, 8, 8]);
    let mut req = job(1, 1, 1, 1, 3);
    req.exclusive = true;
    let p = place(&t, &req).unwrap();
    assert_eq!(
        (p.nodes, p.cpus, p.memory_mb, p.gres),
        (vec![1], vec![8], vec![1000], vec![2])
    );
}

#[test]
fn allocate_subtracts_test_does_not_release_gives_back() {
    let t = table(&[8]);
    let mut policy = ConsTres::default();
    policy.begin_pass(&t);
    let req = job(1, 8, 1, 1, 1);
    assert!(policy.place(&req, PlaceMode::Test).is_some());
    assert!(
        policy.place(&req, PlaceMode::Test).is_some(),
        "test mode must not consume"
    );
    let p = policy.place(&req, PlaceMode::Allocate).unwrap();
    assert!(
        policy.place(&job(2, 1, 1, 1, 1), PlaceMode::Test).is_none(),
        "the node is full"
    );
    policy.release(1, &p);
    assert_eq!(policy.place(&req, PlaceMode::Allocate), Some(p));
}

#[test]
fn candidates_and_unknown_gres_kinds_are_respected() {
    let t = table(&[8; 200]);
    let mut req = job(1, 16, 2, 2, 200);
    req.candidates = [7u32, 150, 151].into_iter().collect::<NodeBitmap>().words;
    assert_eq!(place(&t, &req).unwrap().nodes, vec![150, 151]);
    req.gres_per_node = vec![(3, 1)];
    assert!(place(&t, &req).is_none());
}

#[test]
fn a_full_pass_never_breaks_the_contract() {
    let t = fixtures::node_table(512);
    let jobs = fixtures::job_requests(512, 4000, 11);
    let out = allocate_all(&mut ConsTres::default(), &t, &jobs);
    let placed = out.iter().flatten().count();
    assert!(
        placed > 100 && placed < jobs.len(),
        "placed {placed} of {}",
        jobs.len()
    );
}

#[test]
fn conformance() {
    testing::assert_conformant(&testing::conformance::selection(&mut ConsTres::default()));
}

/// Job `id` of `tasks` one-CPU tasks on `nodes` nodes (`-N`) at `per_node` tasks each, over
/// `candidates` nodes.
fn per_node_job(id: u32, tasks: u32, nodes: u32, per_node: u32, candidates: usize) -> JobRequest {
    JobRequest {
        tasks_per_node: per_node,
        ..job(id, tasks, nodes, nodes, candidates)
    }
}

#[test]
fn tasks_per_node_gives_every_node_exactly_its_tasks() {
    // sbatch -N 2 --ntasks-per-node=4 on two idle 8-CPU nodes: 4 + 4, not 7 + 1.
    let t = table(&[8, 8]);
    let p = place(&t, &per_node_job(1, 8, 2, 4, 2)).unwrap();
    assert_eq!((p.nodes, p.cpus), (vec![0, 1], vec![4, 4]));
    // -n 6 with --ntasks-per-node=4: each node still gets four tasks' CPUs.
    let p = place(&t, &per_node_job(2, 6, 2, 4, 2)).unwrap();
    assert_eq!(p.cpus, vec![4, 4]);
    // Two CPUs per task: eight CPUs on each node.
    let mut req = per_node_job(3, 4, 2, 2, 2);
    req.cpus_per_task = 2;
    assert_eq!(place(&t, &req).unwrap().cpus, vec![4, 4]);
    req.tasks_per_node = 4;
    req.tasks = 8;
    assert_eq!(place(&t, &req).unwrap().cpus, vec![8, 8]);
}

#[test]
fn a_node_that_cannot_hold_its_tasks_per_node_is_not_chosen() {
    // Node 0 has 3 CPUs free: it cannot run four tasks, so nodes 1 and 2 are chosen.
    let t = table(&[3, 8, 8]);
    let p = place(&t, &per_node_job(1, 8, 2, 4, 3)).unwrap();
    assert_eq!((p.nodes, p.cpus), (vec![1, 2], vec![4, 4]));
    let t = table(&[3, 8]);
    assert!(place(&t, &per_node_job(2, 8, 2, 4, 2)).is_none());
    // Ten tasks at four per node need three nodes; a job limited to two cannot have them.
    let t = table(&[8, 8, 8]);
    assert!(place(&t, &per_node_job(3, 10, 2, 4, 3)).is_none());
    let p = place(
        &t,
        &JobRequest {
            max_nodes: 3,
            ..per_node_job(4, 10, 2, 4, 3)
        },
    )
    .unwrap();
    assert_eq!(p.cpus, vec![4, 4, 4]);
}
