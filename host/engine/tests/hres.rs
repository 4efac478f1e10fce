//! The HRES document's resources.yaml through the engine with hres-modes: the seed's numbers,
//! requests as licenses and `--resources`, reservations of a named layer, the license report, and
//! properties (no layer over-committed, release restores every layer, MODE_3 parents sum children).

mod common;

use common::*;
use proptest::prelude::*;
use sluice_cluster::{Source, parse_resources};
use sluice_engine::request::{parse_licenses, parse_licenses_and_resources};
use sluice_engine::{
    Engine, EngineConfig, JobSpec, JobState, ManualClock, Policies, Reason, ReservationSpec,
    SchedulerKind, SubmitError,
};
use sluice_plugin_hres_modes::HresModes;
use sluice_policy::{FromSettings, HresMode, Settings};

const SEED: &str = include_str!("../../cluster/tests/fixtures/hres_seed_resources.yaml");

/// Layer indices in the engine: resources in file order, layers in their order.
const FLAT_ROOT: usize = 0;
const NATURAL: std::ops::Range<usize> = 7..10;
const POWER: std::ops::Range<usize> = 10..17;

fn seed_engine() -> (Engine, ManualClock) {
    seed_engine_configured(|_| {})
}

/// [`seed_engine`] with the engine settings `configure` leaves.
fn seed_engine_configured(configure: impl FnOnce(&mut EngineConfig)) -> (Engine, ManualClock) {
    let mut c = cluster(32, 4);
    c.hres = parse_resources(Source::new("resources.yaml", SEED), &c.nodes, &c.licenses).unwrap();
    let (mut e, clock) = engine_configured(c, Box::new(SiteFactorPriority), |config| {
        config.scheduler = SchedulerKind::Backfill;
        configure(config);
    });
    e.set_policies(Policies {
        priority: Box::new(SiteFactorPriority),
        selection: Box::new(FirstFit::default()),
        hres: Some(Box::new(HresModes::from_settings(&Settings::default()))),
        gres: Vec::new(),
    })
    .unwrap();
    (e, clock)
}

fn job(nodes: u32, licenses: &str) -> JobSpec {
    JobSpec {
        min_nodes: nodes,
        tasks: nodes,
        licenses: parse_licenses(licenses).unwrap(),
        time_limit: Some(600),
        ..JobSpec::new("alice")
    }
}

fn used(e: &Engine, layers: std::ops::Range<usize>) -> Vec<i64> {
    e.licenses().hres_layers()[layers]
        .iter()
        .map(|l| l.used)
        .collect()
}

fn charges(e: &Engine, id: u32) -> Vec<(u32, i64)> {
    let mut c: Vec<(u32, i64)> = e
        .job(id)
        .unwrap()
        .alloc
        .as_ref()
        .unwrap()
        .hres
        .iter()
        .map(|c| (c.layer, c.amount))
        .collect();
    c.sort_unstable();
    c
}

#[test]
fn natural_makes_250_available_in_total() {
    let (mut e, _clock) = seed_engine();
    let ids: Vec<u32> = (0..30)
        .map(|_| e.submit(job(1, "natural:10")).unwrap())
        .collect();
    e.tick();
    let running = ids
        .iter()
        .filter(|id| e.job(**id).unwrap().state == JobState::Running)
        .count();
    assert_eq!(running, 25);
    assert_eq!(used(&e, NATURAL).iter().sum::<i64>(), 250);
    let waiting = e.job(ids[29]).unwrap();
    assert_eq!(
        (waiting.state, waiting.reason),
        (JobState::Pending, Reason::Licenses)
    );
    let report = e.license_report();
    let natural: Vec<_> = report
        .iter()
        .filter(|r| r.license_name == "natural")
        .collect();
    assert_eq!(natural.len(), 3);
    assert_eq!(natural.iter().map(|r| r.total.unwrap()).sum::<u64>(), 250);
    assert!(
        natural
            .iter()
            .all(|r| r.free == Some(0) && r.mode.as_deref() == Some("MODE_1"))
    );
    assert_eq!(natural[0].nodes.as_deref(), Some("node[01-32]"));
    assert!(
        natural[1]
            .to_string()
            .contains("Nodes=node[01-16] Mode=MODE_1")
    );
}

#[test]
fn flat_on_four_nodes_draws_from_12_16_and_24_and_never_more_than_24() {
    let (mut e, _clock) = seed_engine();
    let first = e.submit(job(4, "flat:2")).unwrap();
    e.tick();
    assert_eq!(
        e.job(first)
            .unwrap()
            .alloc
            .as_ref()
            .unwrap()
            .placement
            .nodes,
        vec![0, 1, 2, 3]
    );
    assert_eq!(
        charges(&e, first),
        vec![(0, 2), (1, 2), (3, 2)],
        "root 24, node[01-16] 16, node[01-08] 12"
    );
    for _ in 0..20 {
        e.submit(job(4, "flat:2")).unwrap();
    }
    e.tick();
    e.backfill();
    assert_eq!(e.running_ids().count(), 12);
    assert_eq!(e.licenses().hres_layers()[FLAT_ROOT].used, 24);
    for l in &e.licenses().hres_layers()[..7] {
        assert!(l.used <= l.count, "{l:?}");
    }
}

#[test]
fn power_on_sixteen_nodes_charges_each_layer_its_share() {
    let (mut e, _clock) = seed_engine();
    let a = e.submit(job(16, "power:1000")).unwrap();
    e.tick();
    assert_eq!(
        e.job(a).unwrap().alloc.as_ref().unwrap().placement.nodes,
        (0..16).collect::<Vec<_>>()
    );
    assert_eq!(
        charges(&e, a),
        vec![(10, 8000), (12, 8000), (14, 16000), (16, 16000)]
    );
    e.job_finished(a, 0).unwrap();
    let b = e.submit(job(16, "power:full_node")).unwrap();
    e.tick();
    assert_eq!(
        charges(&e, b),
        vec![(10, 8000), (12, 8000), (14, 16000), (16, 16000)],
        "full_node is 1000"
    );
    assert!(matches!(
        e.submit(job(1, "power:foo")),
        Err(SubmitError::Licenses(_))
    ));
    assert!(
        matches!(
            e.submit(job(1, "power:1,power:2")),
            Err(SubmitError::Licenses(_))
        ),
        "one MODE_3 resource per job"
    );
}

#[test]
fn mode3_over_a_layer_after_its_base_is_refused() {
    let (mut e, _clock) = seed_engine();
    // node[01-08] has 40000 - 5000 base: four nodes at 10000 do not fit (test_154_1's -w node[1-4]).
    let a = e.submit(job(4, "power:10000")).unwrap();
    e.tick();
    let j = e.job(a).unwrap();
    assert_eq!((j.state, j.reason), (JobState::Pending, Reason::Licenses));
    assert!(used(&e, POWER).iter().all(|u| *u == 0));
    // node[09-16] has its 40000 (test_154_1's -w node[9-12]).
    e.create_reservation(&ReservationSpec {
        name: "w".into(),
        start: T0,
        end: T0 + 86_400,
        nodes: vec!["node[09-12]".into()],
        users: vec!["alice".into()],
        ..ReservationSpec::default()
    })
    .unwrap();
    let b = e
        .submit(JobSpec {
            reservation: Some("w".into()),
            ..job(4, "power:10000")
        })
        .unwrap();
    e.tick();
    assert_eq!(e.job(b).unwrap().state, JobState::Running);
    assert_eq!(charges(&e, b), vec![(12, 40000), (14, 40000), (16, 40000)]);
}

#[test]
fn licenses_and_resources_request_hres_alike() {
    let both = parse_licenses_and_resources("flat:2", "natural:1").unwrap();
    assert_eq!(both, parse_licenses("flat:2,natural:1").unwrap());
    let (mut e, _clock) = seed_engine();
    let a = e
        .submit(JobSpec {
            licenses: both,
            ..job(1, "")
        })
        .unwrap();
    e.tick();
    let c = charges(&e, a);
    let flat: Vec<_> = c.iter().filter(|(l, _)| *l < 7).collect();
    let natural: Vec<_> = c
        .iter()
        .filter(|(l, _)| NATURAL.contains(&(*l as usize)))
        .collect();
    assert_eq!(flat, vec![&(0, 2), &(1, 2), &(3, 2)]);
    assert_eq!(natural.len(), 1, "MODE_1 charges one layer");
    assert_eq!(natural[0].1, 1);
}

#[test]
fn a_reservation_holds_hres_on_its_named_layer() {
    let (mut e, _clock) = seed_engine();
    e.create_reservation(&ReservationSpec {
        name: "nat".into(),
        start: T0,
        end: T0 + 86_400,
        licenses: vec!["natural(node[01-16]):30".into()],
        users: vec!["bob".into()],
        ..ReservationSpec::default()
    })
    .unwrap();
    let row = |e: &Engine, nodes: &str| {
        e.license_report()
            .into_iter()
            .find(|r| r.nodes.as_deref() == Some(nodes) && r.license_name == "natural")
            .unwrap()
    };
    assert_eq!(
        (row(&e, "node[01-16]").reserved, row(&e, "node[01-16]").free),
        (30, Some(70))
    );
    let a = e.submit(job(1, "natural:80")).unwrap();
    e.tick();
    assert!(
        e.job(a).unwrap().alloc.as_ref().unwrap().placement.nodes[0] >= 16,
        "node[01-16] has 70 left outside the reservation"
    );
    assert_eq!(charges(&e, a), vec![(9, 80)]);
    let b = e.submit(job(1, "natural:80")).unwrap();
    e.tick();
    assert_eq!(e.job(b).unwrap().reason, Reason::Licenses);
    let c = e
        .submit(JobSpec {
            reservation: Some("nat".into()),
            ..JobSpec {
                user: "bob".into(),
                ..job(1, "natural:30")
            }
        })
        .unwrap();
    e.tick();
    assert_eq!(charges(&e, c), vec![(8, 30)]);
    let r = row(&e, "node[01-16]");
    assert_eq!((r.used, r.reserved, r.free), (30, 0, Some(70)));
}

/// (resource, count, nodes) drawn for the property tests.
fn demand() -> impl Strategy<Value = (usize, i64, u32)> {
    (0usize..3, 1i64..40, 1u32..6).prop_map(|(r, c, n)| match r {
        0 => (r, c % 13, n),
        1 => (r, c * 3, n),
        _ => (r, c * 1000, n),
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// In every mode: no finite layer is ever used beyond its count after base; each layer's use is
    /// exactly the sum of running jobs' charges; MODE_3 parents carry the sum of their children;
    /// and when every job has ended every layer is back at zero.
    #[test]
    fn layers_stay_within_counts_and_come_back_exactly(ops in proptest::collection::vec((demand(), 0u8..3), 1..30)) {
        let (mut e, _clock) = seed_engine();
        let names = ["flat", "natural", "power"];
        for ((r, count, nodes), op) in ops {
            let victim = e.running_ids().next();
            if op == 0 {
                if let Some(id) = victim {
                    e.job_finished(id, 0).unwrap();
                }
            } else if count > 0 {
                let _ = e.submit(job(nodes, &format!("{}:{count}", names[r])));
            }
            e.tick();
            let layers = e.licenses().hres_layers().to_vec();
            let resources = e.licenses().hres_resources().to_vec();
            let mut expected = vec![0i64; layers.len()];
            for id in e.running_ids() {
                for c in &e.job(id).unwrap().alloc.as_ref().unwrap().hres {
                    expected[c.layer as usize] += c.amount;
                }
            }
            for (i, l) in layers.iter().enumerate() {
                prop_assert_eq!(l.used, expected[i], "layer {} bookkeeping", i);
                prop_assert!(l.is_infinite() || l.used <= l.count - l.base, "layer {} over-committed: {:?}", i, l);
                if resources[l.resource as usize].mode == HresMode::Mode3 {
                    let children: Vec<_> = layers.iter().filter(|c| c.parent == Some(i as u32)).collect();
                    if !children.is_empty() {
                        prop_assert_eq!(l.used, children.iter().map(|c| c.used).sum::<i64>(), "layer {}", i);
                    }
                }
            }
        }
        let running: Vec<u32> = e.running_ids().collect();
        for id in running {
            e.job_finished(id, 0).unwrap();
        }
        prop_assert!(e.licenses().hres_layers().iter().all(|l| l.used == 0));
    }
}

#[test]
fn with_bf_licenses_backfill_plans_hres_jobs_and_holds_what_they_will_draw() {
    let (mut e, _clock) = seed_engine_configured(|config| config.params.bf_licenses = true);
    let flat = |limit: u64, site_factor: i64| JobSpec {
        time_limit: Some(limit),
        site_factor,
        ..job(1, "flat:12")
    };
    // Two jobs fill flat's top layer (24) until 600 and 1200.
    let short = e.submit(flat(600, 0)).unwrap();
    let long = e.submit(flat(1200, 0)).unwrap();
    e.tick();
    assert_eq!(used(&e, FLAT_ROOT..FLAT_ROOT + 1), vec![24]);
    assert!(
        [short, long]
            .iter()
            .all(|&id| e.job(id).unwrap().state == JobState::Running)
    );
    let first = e.submit(flat(600, 10)).unwrap();
    let second = e.submit(flat(600, 5)).unwrap();
    e.backfill();
    // The first gets the top layer's half that frees at 600; the second must wait for the long
    // job, since what the first will draw then is held for it.
    assert_eq!(e.job(first).unwrap().start_time, Some(T0 + 600));
    assert_eq!(e.job(second).unwrap().start_time, Some(T0 + 1200));
}
