//! Properties over random tables and queues: the host's checks always pass, test mode agrees with
//! allocate mode, and a one-node job is refused only when no candidate can hold it.

use proptest::prelude::*;
use sluice_plugin_select_cons_tres::ConsTres;
use sluice_sdk::testing::allocate_all;
use sluice_sdk::*;

fn node() -> impl Strategy<Value = (u32, u32, u64, u64, u32, Power, u32, u32)> {
    (
        1u32..16,
        0u32..=100,
        100u64..1000,
        0u64..=100,
        1u32..3,
        0u8..3,
        0u32..4,
        0u32..=100,
    )
        .prop_map(
            |(cpus, free_pct, mem, mem_pct, weight, power, gres, gres_pct)| {
                let power = [Power::Up, Power::PoweringUp, Power::PoweredDown][power as usize];
                let free = if free_pct > 50 {
                    cpus
                } else {
                    cpus * free_pct / 50
                };
                let free_mem = if free == cpus {
                    mem
                } else {
                    mem * mem_pct / 100
                };
                (
                    cpus,
                    free,
                    mem,
                    free_mem,
                    weight,
                    power,
                    gres,
                    gres * gres_pct / 100,
                )
            },
        )
}

fn table() -> impl Strategy<Value = NodeTable> {
    proptest::collection::vec(node(), 1..40).prop_map(|nodes| {
        let mut t = NodeTable {
            gres_kinds: vec!["gpu".into()],
            ..Default::default()
        };
        for (cpus, free, mem, free_mem, weight, power, gres, gres_free) in nodes {
            t.cpus.push(cpus);
            t.free_cpus.push(free);
            t.memory_mb.push(mem);
            t.free_memory_mb.push(free_mem);
            t.weight.push(weight);
            t.power.push(power);
            t.gres_total.push(gres);
            t.gres_free.push(gres_free);
        }
        t
    })
}

fn request() -> impl Strategy<Value = JobRequest> {
    (
        1u32..24,
        1u32..3,
        1u32..4,
        0u32..3,
        0u64..600,
        0u32..3,
        0u8..10,
        any::<u64>(),
        // --ntasks-per-node: none half the time.
        prop_oneof![Just(0u32), 1u32..5],
    )
        .prop_map(
            |(tasks, cpt, min, spread, mem, gres, exclusive, candidates, per_node)| JobRequest {
                job_id: 1,
                min_nodes: min,
                max_nodes: min + spread,
                tasks,
                cpus_per_task: cpt,
                tasks_per_node: per_node,
                memory_per_node_mb: mem,
                gres_per_node: if gres > 0 { vec![(0, gres)] } else { vec![] },
                exclusive: exclusive == 0,
                share_rows: 0,
                candidates: vec![candidates | 1],
            },
        )
}

/// Whether node `n` alone can hold a one-node job.
fn holds(t: &NodeTable, req: &JobRequest, n: usize) -> bool {
    let need = match req.tasks_per_node {
        0 => req.tasks * req.cpus_per_task,
        // More tasks than one node may run: no single node holds the job.
        per_node if req.tasks > per_node => return false,
        per_node => per_node * req.cpus_per_task,
    };
    let idle = t.free_cpus[n] == t.cpus[n] && t.free_memory_mb[n] == t.memory_mb[n];
    let cpus_ok = if req.exclusive {
        idle && t.cpus[n] >= need
    } else {
        t.free_cpus[n] >= need
    };
    let gres = req.gres_per_node.first().map_or(0, |g| g.1);
    NodeBitmap::from_words(req.candidates.clone()).contains(n as u32)
        && cpus_ok
        && t.free_memory_mb[n] >= req.memory_per_node_mb
        && t.gres_free[n] >= gres
}

proptest! {
    #[test]
    fn a_queue_never_breaks_the_contract(t in table(), queue in proptest::collection::vec(request(), 1..30)) {
        allocate_all(&mut ConsTres::default(), &t, &queue);
    }

    /// With --ntasks-per-node, every node of a shared job gets exactly that many tasks' CPUs,
    /// and the nodes hold all the tasks.
    #[test]
    fn tasks_per_node_gives_each_node_exactly_its_tasks(t in table(), queue in proptest::collection::vec(request(), 1..30)) {
        let placed = allocate_all(&mut ConsTres::default(), &t, &queue);
        for (req, p) in queue.iter().zip(&placed) {
            let (Some(p), per_node) = (p, req.tasks_per_node) else { continue };
            if per_node == 0 || req.exclusive {
                continue;
            }
            prop_assert!(p.cpus.iter().all(|&c| c == per_node * req.cpus_per_task), "{:?} for {:?}", p, req);
            prop_assert!(p.nodes.len() as u32 * per_node >= req.tasks);
        }
    }

    #[test]
    fn test_mode_agrees_with_allocate_mode(t in table(), queue in proptest::collection::vec(request(), 1..20)) {
        let mut policy = ConsTres::default();
        policy.begin_pass(&t);
        for req in &queue {
            let tested = policy.place(req, PlaceMode::Test);
            prop_assert_eq!(tested, policy.place(req, PlaceMode::Allocate));
        }
    }

    /// Passes told only which nodes changed place every job where passes given the whole
    /// table do, through changes of free resources and power, placements and releases.
    #[test]
    fn passes_told_the_changes_place_as_whole_passes(
        t in table(),
        steps in proptest::collection::vec(
            (
                proptest::collection::vec((0usize..40, 0u32..=100, 0u8..3, 0u8..4), 0..6),
                proptest::collection::vec(request(), 0..6),
                0u8..3,
            ),
            1..8,
        ),
    ) {
        // The SDK's copy of the table, kept as the component glue keeps it.
        let mut kept = t.clone();
        let (mut told, mut whole) = (ConsTres::default(), ConsTres::default());
        told.begin_pass(&kept);
        let mut placed: Vec<Placement> = Vec::new();
        for (changes, queue, release) in steps {
            let mut changed = Vec::new();
            for (node, free_pct, power, gres) in changes {
                let n = node % kept.len();
                let cpus = kept.cpus[n];
                // Power changes now and then, which moves a node to another tier.
                let power = if power == 0 { [Power::Up, Power::PoweredDown][gres as usize % 2] } else { kept.power[n] };
                let row = [gres.min(kept.gres_total[n] as u8) as u32];
                let free_mem = kept.memory_mb[n] * u64::from(free_pct) / 100;
                prop_assert!(kept.set_free(n, cpus * free_pct / 100, free_mem, power, &row));
                changed.push(n as u32);
            }
            told.begin_pass_changed(&kept, &changed);
            whole.begin_pass(&kept);
            if release == 0 && !placed.is_empty() {
                let p = placed.remove(0);
                told.release(1, &p);
                whole.release(1, &p);
                kept.release(&p);
            }
            for req in &queue {
                let got = told.place(req, PlaceMode::Allocate);
                prop_assert_eq!(&got, &whole.place(req, PlaceMode::Allocate));
                if let Some(p) = got {
                    prop_assert!(kept.try_commit(&p));
                    placed.push(p);
                }
            }
        }
    }

    #[test]
    fn a_one_node_job_fits_iff_some_candidate_holds_it(t in table(), mut req in request()) {
        req.min_nodes = 1;
        req.max_nodes = 1;
        let mut policy = ConsTres::default();
        policy.begin_pass(&t);
        let expected = (0..t.len()).any(|n| holds(&t, &req, n));
        prop_assert_eq!(policy.place(&req, PlaceMode::Test).is_some(), expected);
    }
}
