//! The conformance cases every plugin of a kind must pass: the default bundle runs them in its
//! tests, `sluice plugin test` runs them against a component, and the SDK harness against a
//! site's own policy. The cases here check the contract on one instance; [`protocol`] calls a
//! kind's functions in the orders the host uses across instances, and [`declared`] checks what
//! a policy's own cases file says its settings do.

pub mod declared;
pub mod protocol;

use crate::{
    Demand, GresPolicy, HresPolicy, NodeBitmap, NodeTable, PlaceMode, PriorityPolicy,
    SelectionPolicy, fixtures, gres, hres,
};

/// The outcome of one case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseResult {
    /// What the case checks.
    pub name: String,
    /// `Ok` or what went wrong.
    pub outcome: Result<(), String>,
}

fn case(name: impl Into<String>, outcome: Result<(), String>) -> CaseResult {
    CaseResult {
        name: name.into(),
        outcome,
    }
}

fn ensure(ok: bool, why: impl FnOnce() -> String) -> Result<(), String> {
    if ok { Ok(()) } else { Err(why()) }
}

/// Runs the priority cases.
pub fn priority(policy: &mut dyn PriorityPolicy) -> Vec<CaseResult> {
    let ctx = fixtures::priority_context(1_700_000_000, 32, 4, 3);
    let empty = fixtures::job_table(&ctx, 0, 1);
    let jobs = fixtures::job_table(&ctx, 500, 2);
    let mut out = Vec::new();
    let a = policy.compute(&ctx, &empty);
    out.push(case(
        "empty queue gives empty answer",
        a.check(0).map_err(|e| e.to_string()),
    ));
    let first = policy.compute(&ctx, &jobs);
    out.push(case(
        "one priority per job, factors aligned",
        first.check(jobs.len()).map_err(|e| e.to_string()),
    ));
    let second = policy.compute(&ctx, &jobs);
    out.push(case(
        "same input gives same priorities",
        ensure(first.priority == second.priority, || {
            "two calls on the same queue disagreed".into()
        }),
    ));
    let shares = policy.shares(&ctx);
    out.push(case(
        "shares name known associations",
        ensure(
            shares
                .iter()
                .all(|s| (s.association as usize) < ctx.associations.len()),
            || "a share row points past the association list".into(),
        ),
    ));
    out
}

/// Runs the selection cases.
pub fn selection(policy: &mut dyn SelectionPolicy) -> Vec<CaseResult> {
    let mut out = Vec::new();
    let mut table = fixtures::node_table(64);
    policy.begin_pass(&table);

    let mut small = fixtures::job_requests(64, 1, 3).remove(0);
    small.min_nodes = 1;
    small.max_nodes = 1;
    small.tasks = 4;
    small.cpus_per_task = 1;
    small.exclusive = false;
    small.gres_per_node.clear();
    let fits = match policy.place(&small, PlaceMode::Test) {
        Some(p) => table.check_placement(&small, &p).map_err(|e| e.to_string()),
        None => Err("a 4-cpu job on an empty 64-node cluster was refused".into()),
    };
    out.push(case("a small job fits an empty cluster", fits));

    let mut huge = small.clone();
    huge.min_nodes = 65;
    huge.max_nodes = 65;
    huge.tasks = 65 * 64;
    out.push(case(
        "a job larger than the cluster is refused",
        ensure(policy.place(&huge, PlaceMode::Test).is_none(), || {
            "a 65-node job was placed on 64 nodes".into()
        }),
    ));

    let mut narrow = small.clone();
    narrow.candidates = [5u32, 9].into_iter().collect::<NodeBitmap>().words;
    let respected = match policy.place(&narrow, PlaceMode::Test) {
        Some(p) => ensure(p.nodes.iter().all(|n| *n == 5 || *n == 9), || {
            let nodes: Vec<String> = p.nodes.iter().map(u32::to_string).collect();
            format!("placed on nodes {}", nodes.join(","))
        }),
        None => Err("a job with two free candidates was refused".into()),
    };
    out.push(case("placements stay within candidates", respected));

    let mut fault = Ok(());
    let mut placed = 0;
    for req in fixtures::job_requests(64, 400, 4) {
        if let Some(p) = policy.place(&req, PlaceMode::Allocate) {
            if let Err(e) = table.check_placement(&req, &p) {
                fault = Err(format!("job {}: {e}", req.job_id));
                break;
            }
            table.commit(&p);
            placed += 1;
        }
    }
    out.push(case("allocations never overcommit a node", fault));
    out.push(case(
        "allocations fill the cluster",
        ensure(placed > 0, || "nothing was placed".into()),
    ));
    out.push(case(
        "every node gets its tasks per node",
        tasks_per_node(policy),
    ));
    out.push(case(
        "jobs that share cpus never overcommit a sharing row",
        shared_rows(policy),
    ));
    out
}

/// Two idle 4-CPU nodes with two sharing rows (`OverSubscribe=FORCE:2`) and jobs of one to
/// four CPUs that may share them, allocated until the policy refuses one: every placement must
/// keep within the free CPUs of the rows it names (a policy that shares nothing, and places
/// on CPUs no job holds, passes too).
fn shared_rows(policy: &mut dyn SelectionPolicy) -> Result<(), String> {
    let mut table = NodeTable {
        share_rows: 2,
        row_free_cpus: vec![4; 4],
        ..fixtures::cpu_nodes(4, &[4, 4])
    };
    policy.begin_pass(&table);
    for id in 1..=24 {
        let mut req = fixtures::tasks_job(id, 1 + id % 4, 1, 1, table.len());
        req.memory_per_node_mb = 10;
        req.share_rows = 2;
        let Some(p) = policy.place(&req, PlaceMode::Allocate) else {
            continue;
        };
        table
            .check_placement(&req, &p)
            .map_err(|e| format!("job {id}: {e}"))?;
        table.commit(&p);
    }
    Ok(())
}

/// `-N 2 --ntasks-per-node=4` on three 8-CPU nodes, the first with only 3 CPUs free: the two
/// others must be chosen, each with at least four CPUs (Slurm's cons_tres gives 4 + 4).
fn tasks_per_node(policy: &mut dyn SelectionPolicy) -> Result<(), String> {
    let table = fixtures::cpu_nodes(8, &[3, 8, 8]);
    policy.begin_pass(&table);
    let mut req = fixtures::tasks_job(1, 8, 2, 2, table.len());
    req.tasks_per_node = 4;
    match policy.place(&req, PlaceMode::Test) {
        Some(p) => table.check_placement(&req, &p).map_err(|e| e.to_string()),
        None => Err(
            "a job of two nodes with four tasks each was refused on two free 8-cpu nodes".into(),
        ),
    }
}

/// Runs the GRES cases.
pub fn gres(policy: &mut dyn GresPolicy) -> Vec<CaseResult> {
    let nodes = fixtures::gpu_nodes(4);
    let results = policy.validate(&nodes);
    let mut out = vec![case(
        "validate answers once per node",
        ensure(results.len() == nodes.len(), || {
            format!("{} answers for {} nodes", results.len(), nodes.len())
        }),
    )];
    let requests = vec![
        fixtures::gpu_pick(0, 1, vec![0, 1, 2, 3], (32..40).collect()),
        fixtures::gpu_pick(1, 2, vec![1, 3], (0..8).collect()),
    ];
    let picks = policy.pick(&requests);
    out.push(case(
        "picks are free, distinct and counted",
        gres::check_picks(&requests, &picks).map_err(|e| e.to_string()),
    ));
    out
}

/// Runs the HRES cases.
pub fn hres(policy: &mut dyn HresPolicy) -> Vec<CaseResult> {
    let (resources, layers) = fixtures::hres_document();
    policy.begin_pass(&resources, &layers);
    let candidates = NodeBitmap::full(32).words;
    let demands = [Demand {
        resource: 1,
        count: 2,
    }];
    let eligible = NodeBitmap::from_words(policy.eligible(&demands, &candidates));
    let mut out = vec![case(
        "eligible nodes are candidates",
        ensure(
            eligible.is_subset_of(&NodeBitmap::from_words(candidates.clone())),
            || "eligible set grew".into(),
        ),
    )];
    let charged = match policy.charge(&demands, &[0, 1, 2, 3]) {
        Ok(charges) => hres::check_charges(&layers, &charges).map_err(|e| e.to_string()),
        Err(reason) => Err(format!(
            "a 2-unit request on an idle cluster was refused: {reason}"
        )),
    };
    out.push(case("charges fit the layers", charged));
    out
}
