//! GRES devices through the engine: requests, picks near the job's cores by gres/gpu, a count-only
//! `nic` through gres-count, steps, environment, resize, requeue, the node report and faults.

mod common;

use std::sync::Arc;

use common::*;
use proptest::prelude::*;
use sluice_cluster::{Cluster, Gres, GresDevice, NodeId};
use sluice_engine::request::parse_gres;
use sluice_engine::{
    Engine, EngineConfig, JobSpec, JobState, ManualClock, Policies, Reason, SchedulerKind,
    SubmitError,
};
use sluice_plugin_gres_count::CountOnly;
use sluice_plugin_gres_gpu::Gpu;
use sluice_plugin_select_cons_tres::ConsTres;
use sluice_policy::{GresNodeConfig, GresPolicy, NodeDevices, PickRequest};

fn gpus(gres_type: &str, first: u32, cores: &[&[u32]]) -> Gres {
    Gres {
        name: "gpu".into(),
        gres_type: Some(gres_type.into()),
        count: cores.len() as u64,
        no_consume: false,
        flags: vec![],
        devices: cores
            .iter()
            .enumerate()
            .map(|(i, c)| GresDevice {
                index: first + i as u32,
                file: format!("/dev/nvidia{}", first + i as u32),
                cores: c.to_vec(),
                links: vec![],
            })
            .collect(),
    }
}

fn nics(count: u64) -> Gres {
    Gres {
        name: "nic".into(),
        gres_type: None,
        count,
        no_consume: false,
        flags: vec![],
        devices: vec![],
    }
}

/// node01: a100 0-1 (cores 0-3), v100 2-3 (cores 4-7), 2 nics; node02: a100 0-3 (0-3, 0-3, 4-7,
/// 4-7), 2 nics; node03: nothing. 8 CPUs each.
fn gpu_cluster() -> Cluster {
    let mut c = cluster(3, 8);
    let low: &[u32] = &[0, 1, 2, 3];
    let high: &[u32] = &[4, 5, 6, 7];
    c.nodes[0].gres = vec![
        gpus("a100", 0, &[low, low]),
        gpus("v100", 2, &[high, high]),
        nics(2),
    ];
    c.nodes[1].gres = vec![gpus("a100", 0, &[low, low, high, high]), nics(2)];
    c
}

fn policies(gres: Vec<(String, Box<dyn GresPolicy + Send>)>) -> Policies {
    Policies {
        priority: Box::new(SiteFactorPriority),
        selection: Box::new(FirstFit::default()),
        hres: None,
        gres,
    }
}

fn bundled() -> Vec<(String, Box<dyn GresPolicy + Send>)> {
    vec![
        (
            "gpu".into(),
            Box::new(Gpu::default()) as Box<dyn GresPolicy + Send>,
        ),
        ("nic".into(), Box::new(CountOnly::default())),
    ]
}

fn gres_engine(c: Cluster) -> (Engine, ManualClock) {
    gres_engine_with(c, policies(bundled()))
}

/// An FCFS engine with GRES debugging on and the given policies.
fn gres_engine_with(c: Cluster, policies: Policies) -> (Engine, ManualClock) {
    let clock = ManualClock::new(T0);
    let mut config = EngineConfig::for_cluster(&c);
    config.scheduler = SchedulerKind::Fcfs;
    config.debug_gres = true;
    let e = Engine::try_with_config(c, policies, Arc::new(clock.clone()), config)
        .expect("valid GRES configuration");
    (e, clock)
}

fn job(cpus: u32, gres: &str) -> JobSpec {
    JobSpec {
        tasks: cpus,
        gres: parse_gres(gres).unwrap(),
        time_limit: Some(600),
        ..JobSpec::new("alice")
    }
}

fn devices(e: &Engine, id: u32, name: &str) -> Vec<Vec<u32>> {
    let j = e.job(id).unwrap();
    j.gres
        .records
        .iter()
        .filter(|r| r.name == name)
        .flat_map(|r| r.bit_alloc.clone())
        .collect()
}

fn env(e: &mut Engine, id: u32, key: &str) -> Option<String> {
    e.job_env(id, 0)
        .unwrap()
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
}

#[test]
fn without_any_gres_jobs_still_get_the_lowest_free_cpu_ids_and_give_them_back() {
    let (mut e, _clock) = gres_engine(cluster(1, 8));
    let a = e.submit(job(3, "")).unwrap();
    let b = e.submit(job(2, "")).unwrap();
    e.tick();
    let ids = |e: &Engine, id| e.job(id).unwrap().cpu_ids.node(0).map(<[u32]>::to_vec);
    assert_eq!(
        (ids(&e, a), ids(&e, b)),
        (Some(vec![0, 1, 2]), Some(vec![3, 4]))
    );
    e.job_finished(a, 0).unwrap();
    let c = e.submit(job(4, "")).unwrap();
    e.tick();
    assert_eq!(ids(&e, c), Some(vec![0, 1, 2, 5]));
}

#[test]
fn an_exclusive_job_holds_the_gpus_it_did_not_ask_for_and_gives_them_back() {
    let mut c = gpu_cluster();
    c.nodes.truncate(2);
    c.partitions[0].nodes.truncate(2);
    // cons_tres gives an exclusive job every free GRES of its node.
    let (mut e, _clock) = gres_engine_with(
        c,
        Policies {
            selection: Box::new(ConsTres::default()),
            ..policies(bundled())
        },
    );
    let whole = e
        .submit(JobSpec {
            exclusive: true,
            ..job(1, "")
        })
        .unwrap();
    e.tick();
    assert_eq!(devices(&e, whole, "gpu"), vec![vec![0, 1, 2, 3]]);
    assert_eq!(
        e.job(whole).unwrap().cpu_ids.node(0),
        Some(&[0, 1, 2, 3, 4, 5, 6, 7][..])
    );
    e.job_finished(whole, 0).unwrap();
    let gpu = e.submit(job(1, "gpu:a100:2")).unwrap();
    e.tick();
    assert_eq!(devices(&e, gpu, "gpu"), vec![vec![0, 1]], "given back");
}

#[test]
fn gpus_are_picked_close_to_the_job_cores_and_given_back() {
    let mut c = gpu_cluster();
    c.nodes[0].gres = vec![gpus(
        "a100",
        0,
        &[&[0, 1, 2, 3], &[0, 1, 2, 3], &[4, 5, 6, 7], &[4, 5, 6, 7]],
    )];
    c.nodes.truncate(1);
    c.partitions[0].nodes.truncate(1);
    let (mut e, _clock) = gres_engine(c);
    let a = e.submit(job(4, "gpu:1")).unwrap();
    let b = e.submit(job(4, "gpu:1")).unwrap();
    e.tick();
    let cpu_ids = &e.job(a).unwrap().cpu_ids;
    assert_eq!(
        (cpu_ids.len(), cpu_ids.node(0)),
        (1, Some(&[0, 1, 2, 3][..]))
    );
    assert_eq!(devices(&e, a, "gpu"), vec![vec![0]]);
    let cpu_ids = &e.job(b).unwrap().cpu_ids;
    assert_eq!(
        (cpu_ids.len(), cpu_ids.node(0)),
        (1, Some(&[4, 5, 6, 7][..]))
    );
    assert_eq!(
        devices(&e, b, "gpu"),
        vec![vec![2]],
        "device 1 is free too, but device 2 is close to cores 4-7"
    );
    assert_eq!(env(&mut e, b, "SLURM_JOB_GPUS").as_deref(), Some("2"));
    assert_eq!(env(&mut e, b, "CUDA_VISIBLE_DEVICES").as_deref(), Some("2"));
    let report = e.node_report("node01").unwrap();
    assert_eq!(report.gres, "gpu:a100:4");
    assert_eq!(report.gres_used, "gpu:a100:2(IDX:0,2)");
    assert_eq!(report.devices[2].job, Some(b));
    assert!(report.to_string().contains("GresUsed=gpu:a100:2(IDX:0,2)"));
    e.job_finished(a, 0).unwrap();
    e.job_finished(b, 0).unwrap();
    let report = e.node_report("node01").unwrap();
    assert_eq!(report.gres_used, "gpu:a100:0(IDX:N/A)");
    assert!(report.devices.iter().all(|d| d.job.is_none()));
    let json = serde_json::to_string(&report).unwrap();
    assert!(json.contains("\"gres_used\""));
}

#[test]
fn typed_requests_get_their_type_on_a_mixed_node() {
    let (mut e, _clock) = gres_engine(gpu_cluster());
    let a = e.submit(job(1, "gpu:v100:2")).unwrap();
    let b = e.submit(job(1, "gpu:a100:1,nic:1")).unwrap();
    e.tick();
    let node = |e: &Engine, id| e.job(id).unwrap().alloc.as_ref().unwrap().placement.nodes[0];
    assert_eq!((node(&e, a), node(&e, b)), (0, 0));
    assert_eq!(devices(&e, a, "gpu"), vec![vec![2, 3]]);
    assert_eq!(devices(&e, b, "gpu"), vec![vec![0]]);
    assert_eq!(
        devices(&e, b, "nic"),
        vec![vec![0]],
        "nic units from gres-count"
    );
    assert_eq!(env(&mut e, b, "SLURM_JOB_NICS").as_deref(), Some("0"));
    assert_eq!(e.job(b).unwrap().gres.text, "gpu:a100:1,nic:1");
    // node01 still has one a100; a second v100 request must not go there though the
    // per-name count (one gpu free) would allow it.
    let c = e.submit(job(1, "gpu:v100:1")).unwrap();
    let d = e.submit(job(1, "gpu:a100:1")).unwrap();
    e.tick();
    assert_eq!(e.job(c).unwrap().state, JobState::Pending);
    assert_eq!(e.job(c).unwrap().reason, Reason::Resources);
    assert_eq!(
        e.job(d).unwrap().state,
        JobState::Pending,
        "FCFS keeps d behind c"
    );
    e.set_scheduler(SchedulerKind::Backfill);
    e.backfill();
    assert_eq!(
        node(&e, d),
        0,
        "the last a100 of node01, on the lowest node"
    );
    assert_eq!(devices(&e, d, "gpu"), vec![vec![1]]);
}

#[test]
fn requests_nobody_can_hold_are_refused_with_the_reason() {
    let (mut e, _clock) = gres_engine(gpu_cluster());
    let err = |e: &mut Engine, spec: JobSpec| e.submit(spec).unwrap_err();
    assert_eq!(
        err(&mut e, job(1, "fpga:1")),
        SubmitError::UnknownGres("fpga".into())
    );
    assert!(matches!(
        err(&mut e, job(1, "gpu:h100:1")),
        SubmitError::UnknownGresType { .. }
    ));
    match err(&mut e, job(1, "gpu:a100:5")) {
        SubmitError::GresCount { request, max } => {
            assert_eq!((request.as_str(), max), ("gpu:a100:5", 4))
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        err(&mut e, job(1, "gpu:a100:3,gpu:v100:2")),
        SubmitError::GresCount { .. }
    ));
    let both = JobSpec {
        gpus_per_node: Some(1),
        ..job(1, "gpu:1")
    };
    assert!(matches!(err(&mut e, both), SubmitError::GresConflict(_)));
    // Two of the three nodes have GPUs: three nodes with one each fit nowhere.
    let three = JobSpec {
        min_nodes: 3,
        tasks: 3,
        ..job(1, "gpu:1")
    };
    assert_eq!(err(&mut e, three), SubmitError::NodeConfig);
    let ok = JobSpec {
        gpus: Some(3),
        min_nodes: 2,
        tasks: 2,
        ..JobSpec::new("alice")
    };
    let id = e.submit(ok).unwrap();
    let j = e.job(id).unwrap();
    assert_eq!(j.gres.text, "gpus:3");
    assert_eq!(j.gres.records[0].per_node, 2);
    assert_eq!(j.gres.records[0].per_job, Some(3));
    let per_node = JobSpec {
        gpus_per_node: Some(2),
        gpu_type: Some("a100".into()),
        ..JobSpec::new("alice")
    };
    let id = e.submit(per_node).unwrap();
    assert_eq!(e.job(id).unwrap().gres.text, "gpus-per-node:a100:2");
    e.tick();
    assert_eq!(devices(&e, id, "gpu").concat().len(), 2);
}

#[test]
fn a_configuration_the_policy_refuses_is_an_error() {
    let mut c = gpu_cluster();
    c.nodes[1].gres[0].devices[1].file = "/dev/nvidia0".into();
    let clock = ManualClock::new(T0);
    let config = EngineConfig::for_cluster(&c);
    let err = Engine::try_with_config(
        c.clone(),
        policies(bundled()),
        Arc::new(clock.clone()),
        config.clone(),
    )
    .err()
    .expect("a duplicate File is refused by gres/gpu");
    assert_eq!(err.name, "gpu");
    assert!(err.reasons[0].contains("node02"), "{err}");
    // Without a gpu policy the host takes the configuration as it is, as Slurm does without a plugin.
    assert!(Engine::try_with_config(c, policies(Vec::new()), Arc::new(clock), config).is_ok());
}

/// Answers every pick with the first configured device, free or not.
struct Greedy;

impl GresPolicy for Greedy {
    fn validate(&mut self, nodes: &[GresNodeConfig]) -> Vec<Result<(), String>> {
        nodes.iter().map(|_| Ok(())).collect()
    }
    fn pick(&mut self, requests: &[PickRequest]) -> Vec<Vec<u32>> {
        requests.iter().map(|r| vec![0; r.count as usize]).collect()
    }
    fn env(&mut self, _alloc: &NodeDevices, _step: bool) -> Vec<(String, String)> {
        Vec::new()
    }
}

#[test]
fn a_pick_that_breaks_the_contract_leaves_the_job_pending() {
    let (mut e, _clock) = gres_engine(gpu_cluster());
    let a = e.submit(job(1, "gpu:a100:1")).unwrap();
    e.tick();
    assert_eq!(devices(&e, a, "gpu"), vec![vec![0]]);
    e.set_policies(policies(vec![("gpu".into(), Box::new(Greedy))]))
        .unwrap();
    let b = e.submit(job(1, "gpu:a100:1")).unwrap();
    e.tick();
    assert_eq!(e.job(b).unwrap().state, JobState::Pending);
    assert_eq!(e.faults().gres, 1);
    assert_eq!(
        e.nodes().table().free_cpus[0],
        7,
        "nothing of b was committed"
    );
    assert_eq!(e.gres().get(0, 0).alloc(), 1);
}

#[test]
fn steps_use_a_subset_of_the_job_devices() {
    let (mut e, _clock) = gres_engine(gpu_cluster());
    let a = e.submit(job(4, "gpu:a100:2")).unwrap();
    e.tick();
    assert_eq!(devices(&e, a, "gpu"), vec![vec![0, 1]]);
    let want = parse_gres("gpu:1").unwrap();
    let s0 = e.start_step_with_gres(a, "s0", 1, 1, &want).unwrap();
    let s1 = e.start_step_with_gres(a, "s1", 1, 1, &want).unwrap();
    assert!(
        e.start_step_with_gres(a, "s2", 1, 1, &want).is_err(),
        "both devices in use"
    );
    let step_gpus = |e: &mut Engine, s| {
        e.step_env(a, s, 0)
            .unwrap()
            .into_iter()
            .find(|(k, _)| k == "SLURM_STEP_GPUS")
            .map(|(_, v)| v)
    };
    assert_eq!(step_gpus(&mut e, s0).as_deref(), Some("0"));
    assert_eq!(step_gpus(&mut e, s1).as_deref(), Some("1"));
    assert_eq!(
        e.job(a).unwrap().gres.records[0].bit_step_alloc,
        vec![vec![0, 1]]
    );
    e.end_step(a, s0, 0).unwrap();
    assert_eq!(
        e.job(a).unwrap().gres.records[0].bit_step_alloc,
        vec![vec![1]]
    );
    let s2 = e.start_step_with_gres(a, "s2", 1, 1, &want).unwrap();
    assert_eq!(step_gpus(&mut e, s2).as_deref(), Some("0"));
}

#[test]
fn shrinking_rebuilds_the_per_position_arrays() {
    let (mut e, _clock) = gres_engine(gpu_cluster());
    let a = e
        .submit(JobSpec {
            min_nodes: 2,
            tasks: 2,
            ..job(2, "gpu:a100:1")
        })
        .unwrap();
    e.tick();
    assert_eq!(devices(&e, a, "gpu"), vec![vec![0], vec![0]]);
    e.shrink(a, &[NodeId(1)]).unwrap();
    let j = e.job(a).unwrap();
    assert_eq!(j.alloc.as_ref().unwrap().placement.nodes, vec![1]);
    assert_eq!(j.gres.records[0].bit_alloc, vec![vec![0]]);
    assert_eq!(j.gres.records[0].cnt_node_alloc, vec![1]);
    assert_eq!(e.gres().get(0, 0).alloc(), 0, "node01 got its GPU back");
    assert_eq!(e.gres().get(1, 0).alloc(), 1);
    assert_eq!(e.nodes().table().free_cpus[0], 8);
    assert_eq!(
        e.job_env(a, 0).unwrap().len(),
        4,
        "position 0 is now node02"
    );
    e.job_finished(a, 0).unwrap();
    assert_eq!(e.gres().get(1, 0).alloc(), 0);
}

#[test]
fn requeue_gives_everything_back_and_starts_again() {
    let (mut e, _clock) = gres_engine(gpu_cluster());
    let a = e.submit(job(1, "gpu:v100:1,nic:2")).unwrap();
    e.tick();
    assert_eq!(devices(&e, a, "gpu"), vec![vec![2]]);
    e.requeue(a).unwrap();
    assert_eq!(e.job(a).unwrap().state, JobState::Pending);
    assert!(
        e.job(a)
            .unwrap()
            .gres
            .records
            .iter()
            .all(|r| r.bit_alloc.is_empty())
    );
    assert_eq!(e.gres().get(0, 0).alloc() + e.gres().get(0, 1).alloc(), 0);
    e.tick();
    assert_eq!(e.job(a).unwrap().state, JobState::Running);
    assert_eq!(devices(&e, a, "nic"), vec![vec![0, 1]]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Whatever jobs come and go, no device has two holders, every holder is a running job that
    /// lists the device on that node, and node counts match the devices held.
    #[test]
    fn devices_are_never_double_allocated(ops in proptest::collection::vec((0u8..4, 0usize..6, 1u32..3), 1..40)) {
        let (mut e, _clock) = gres_engine(gpu_cluster());
        let kinds = ["gpu:1", "gpu:a100:1", "gpu:v100:1", "gpu:a100:2,nic:1", "nic:1", "gpu:2"];
        for (op, k, cpus) in ops {
            let victim = e.running_ids().nth(k % 3);
            if op < 3 {
                let _ = e.submit(job(cpus, kinds[k]));
            } else if let Some(id) = victim {
                e.job_finished(id, 0).unwrap();
            }
            e.tick();
            for n in 0..3 {
                for (k, g) in e.gres().node(n).iter().enumerate() {
                    let held = g.devices.iter().filter(|d| d.job.is_some()).count() as u64;
                    if g.has_devices() {
                        prop_assert_eq!(held, g.alloc());
                    }
                    prop_assert!(g.alloc() <= g.count());
                    prop_assert_eq!(u64::from(e.nodes().table().gres_free[n * 2 + k]), g.count() - g.alloc());
                    for d in g.devices.iter().filter(|d| d.job.is_some()) {
                        let j = e.job(d.job.unwrap()).unwrap();
                        prop_assert_eq!(j.state, JobState::Running);
                        let pos = j.alloc.as_ref().unwrap().placement.nodes.iter().position(|&m| m as usize == n).unwrap();
                        prop_assert!(j.gres.records.iter().any(|r| r.name == g.name && r.bit_alloc[pos].contains(&d.index)));
                    }
                }
            }
        }
    }
}
