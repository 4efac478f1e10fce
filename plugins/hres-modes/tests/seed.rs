//! The numbers of the HRES document (seed resources.yaml on node[01-32]) and the zero, infinite
//! and base rules, checked through the plugin as the host would call it.

use sluice_plugin_hres_modes::HresModes;
use sluice_sdk::hres::check_charges;
use sluice_sdk::testing::{self, conformance};
use sluice_sdk::*;

const FLAT: u32 = 0;
const NATURAL: u32 = 1;
const POWER: u32 = 2;

/// Bitmap of node[a-b], 1-based as in the document.
fn nodes(a: u32, b: u32) -> Vec<u64> {
    (a - 1..b).collect::<NodeBitmap>().words
}

fn layer(resource: u32, count: i64, base: i64, nodes: Vec<u64>, parent: Option<u32>) -> HresLayer {
    HresLayer {
        resource,
        count,
        base,
        used: 0,
        nodes,
        parent,
    }
}

/// The document's resources and layers in its order, with MODE_3 bases summed up the tree.
fn document() -> (Vec<HresResource>, Vec<HresLayer>) {
    let res = |name: &str, mode| HresResource {
        name: name.into(),
        mode,
        variables: vec![],
    };
    let resources = vec![
        res("flat", HresMode::Mode2),
        res("natural", HresMode::Mode1),
        res("power", HresMode::Mode3),
    ];
    let layers = vec![
        layer(FLAT, 24, 0, nodes(1, 32), None), // 0
        layer(FLAT, 16, 0, nodes(1, 16), None),
        layer(FLAT, 16, 0, nodes(17, 32), None),
        layer(FLAT, 12, 0, nodes(1, 8), None), // 3
        layer(FLAT, 12, 0, nodes(9, 16), None),
        layer(FLAT, 12, 0, nodes(17, 24), None),
        layer(FLAT, 12, 0, nodes(25, 32), None),
        layer(NATURAL, 50, 0, nodes(1, 32), None), // 7
        layer(NATURAL, 100, 0, nodes(1, 16), None),
        layer(NATURAL, 100, 0, nodes(17, 32), None),
        layer(POWER, 40000, 5000, nodes(1, 8), Some(14)), // 10
        layer(POWER, 40000, 0, nodes(17, 24), Some(15)),
        layer(POWER, 40000, 0, nodes(9, 16), Some(14)),
        layer(POWER, 40000, 0, nodes(25, 32), Some(15)),
        layer(POWER, 60000, 3000 + 5000, nodes(1, 16), Some(16)), // 14
        layer(POWER, 80000, 2000, nodes(17, 32), Some(16)),
        layer(
            POWER,
            130000,
            10000 + 8000 + 8000 + 2000,
            nodes(1, 32),
            None,
        ), // 16
    ];
    (resources, layers)
}

/// The plugin plus the host's own copy of the layers, committing charges as the host does.
struct Host {
    policy: HresModes,
    layers: Vec<HresLayer>,
}

impl Host {
    fn new(resources: &[HresResource], layers: Vec<HresLayer>, settings: &Settings) -> Self {
        let mut policy = HresModes::from_settings(settings);
        policy.begin_pass(resources, &layers);
        Host { policy, layers }
    }

    fn seed() -> Self {
        let (r, l) = document();
        Host::new(&r, l, &Settings::default())
    }

    /// Charges `count` of `resource` on node[a-b]; commits and returns the charges if accepted.
    fn run(
        &mut self,
        resource: u32,
        count: i64,
        a: u32,
        b: u32,
    ) -> Result<Vec<(u32, i64)>, String> {
        let job: Vec<u32> = (a - 1..b).collect();
        let charges = self.policy.charge(&[Demand { resource, count }], &job)?;
        check_charges(&self.layers, &charges)
            .unwrap_or_else(|e| panic!("host refuses {charges:?}: {e}"));
        for c in &charges {
            self.layers[c.layer as usize].used += c.amount;
        }
        Ok(charges.iter().map(|c| (c.layer, c.amount)).collect())
    }

    fn eligible(&mut self, resource: u32, count: i64, candidates: &[u64]) -> Vec<u32> {
        let out = self
            .policy
            .eligible(&[Demand { resource, count }], candidates);
        NodeBitmap::from_words(out).iter().collect()
    }
}

#[test]
fn natural_draws_from_its_group_first_and_makes_250_available() {
    let mut host = Host::seed();
    assert_eq!(host.run(NATURAL, 1, 1, 4), Ok(vec![(8, 1)]));
    let mut on_first_group = 1;
    while host.run(NATURAL, 1, 1, 4).is_ok() {
        on_first_group += 1;
    }
    assert_eq!(
        on_first_group, 150,
        "100 of node[01-16] plus the 50 of node[01-32]"
    );
    assert_eq!((host.layers[8].used, host.layers[7].used), (100, 50));
    let mut on_second_group = 0;
    while host.run(NATURAL, 1, 17, 20).is_ok() {
        on_second_group += 1;
    }
    assert_eq!(on_first_group + on_second_group, 250);
    assert!(host.eligible(NATURAL, 1, &nodes(1, 32)).is_empty());
}

#[test]
fn natural_eligibility_follows_sufficient_layers() {
    let mut host = Host::seed();
    assert_eq!(host.eligible(NATURAL, 100, &nodes(1, 32)).len(), 32);
    assert_eq!(
        host.eligible(NATURAL, 101, &nodes(1, 32)),
        Vec::<u32>::new()
    );
    host.run(NATURAL, 60, 1, 1).unwrap();
    assert_eq!(
        host.eligible(NATURAL, 50, &nodes(1, 32)).len(),
        32,
        "root's 50 still cover node[01-16]"
    );
    assert_eq!(
        host.eligible(NATURAL, 51, &nodes(1, 32)),
        (16..32).collect::<Vec<_>>()
    );
}

#[test]
fn flat_on_four_nodes_draws_from_12_16_and_24() {
    let mut host = Host::seed();
    assert_eq!(host.run(FLAT, 2, 1, 4), Ok(vec![(0, 2), (1, 2), (3, 2)]));
}

#[test]
fn flat_never_allocates_more_than_24() {
    let mut host = Host::seed();
    let groups = [(1, 8), (9, 16), (17, 24), (25, 32)];
    let mut total = 0;
    for round in 0..100 {
        let (a, b) = groups[round % 4];
        if host.run(FLAT, 1, a, b).is_ok() {
            total += 1;
        }
    }
    assert_eq!(total, 24);
    assert!(host.eligible(FLAT, 1, &nodes(1, 32)).is_empty());
}

#[test]
fn power_on_sixteen_nodes_charges_each_layer_its_share() {
    let mut host = Host::seed();
    let charges = host.run(POWER, 1000, 1, 16).unwrap();
    assert_eq!(
        charges,
        vec![(10, 8000), (12, 8000), (14, 16000), (16, 16000)]
    );
}

#[test]
fn power_is_refused_where_a_layer_is_short_after_its_base() {
    let mut host = Host::seed();
    let err = host.run(POWER, 10000, 1, 4).unwrap_err();
    assert!(
        err.contains("layer 10"),
        "node[01-08] has 35000 after base: {err}"
    );
    assert!(
        host.run(POWER, 10000, 9, 12).is_ok(),
        "node[09-16] has 40000"
    );

    let mut host = Host::seed();
    let spread = |host: &mut Host, nodes: &[u32]| -> Result<Vec<(u32, i64)>, String> {
        let charges = host.policy.charge(
            &[Demand {
                resource: POWER,
                count: 10000,
            }],
            nodes,
        )?;
        Ok(charges.iter().map(|c| (c.layer, c.amount)).collect())
    };
    // Ten nodes fit the root's 102000; eleven (2 + 3 + 3 + 3) exceed it and only it.
    let eleven = [0, 1, 8, 9, 10, 16, 17, 18, 24, 25, 26];
    let err = spread(&mut host, &eleven).unwrap_err();
    assert!(err.contains("layer 16"), "{err}");
    assert!(spread(&mut host, &eleven[1..]).is_ok());
}

#[test]
fn power_eligibility_needs_a_leaf_with_room_on_its_path() {
    let mut host = Host::seed();
    assert_eq!(
        host.eligible(POWER, 1000, &nodes(1, 40)).len(),
        32,
        "node[33-40] are in no leaf"
    );
    assert_eq!(
        host.eligible(POWER, 36000, &nodes(1, 32)),
        (8..32).collect::<Vec<_>>()
    );
}

#[test]
fn zero_and_infinite_layers_follow_their_mode() {
    let res = |mode| {
        vec![HresResource {
            name: "r".into(),
            mode,
            variables: vec![],
        }]
    };
    let layers = vec![
        layer(0, 0, 0, nodes(1, 4), None),
        layer(0, 10, 0, nodes(1, 8), None),
        layer(0, -1, 0, nodes(5, 12), None),
    ];
    let all = nodes(1, 16);
    let mut m1 = Host::new(&res(HresMode::Mode1), layers.clone(), &Settings::default());
    assert_eq!(
        m1.eligible(0, 5, &all),
        (0..12).collect::<Vec<_>>(),
        "zero layer adds nothing; infinite adds all"
    );
    assert_eq!(
        m1.run(0, 1000, 9, 12),
        Ok(vec![(2, 1000)]),
        "an infinite layer never refuses"
    );
    let mut m2 = Host::new(&res(HresMode::Mode2), layers.clone(), &Settings::default());
    assert_eq!(
        m2.eligible(0, 5, &all),
        (4..12).collect::<Vec<_>>(),
        "zero layer blocks node[01-04]"
    );
    assert!(m2.run(0, 5, 1, 2).is_err());
    assert_eq!(m2.run(0, 5, 5, 6), Ok(vec![(1, 5), (2, 5)]));
    let tree = vec![
        layer(0, -1, 0, nodes(1, 8), None),
        layer(0, 0, 0, nodes(1, 4), Some(0)),
        layer(0, 7, 0, nodes(5, 8), Some(0)),
    ];
    let mut m3 = Host::new(&res(HresMode::Mode3), tree, &Settings::default());
    assert_eq!(
        m3.eligible(0, 3, &all),
        vec![4, 5, 6, 7],
        "a zero leaf admits nothing"
    );
    assert_eq!(m3.run(0, 3, 5, 6), Ok(vec![(0, 6), (2, 6)]));
    assert!(
        m3.run(0, 1, 5, 8).is_err(),
        "the leaf has 1 left for 4 nodes"
    );
}

#[test]
fn zero_counts_are_dropped_and_bad_demands_refused() {
    let mut host = Host::seed();
    assert_eq!(host.run(FLAT, 0, 1, 4), Ok(vec![]));
    assert_eq!(host.eligible(FLAT, 0, &nodes(1, 40)).len(), 40);
    assert!(host.run(FLAT, -1, 1, 4).is_err());
    assert!(
        host.policy
            .charge(
                &[Demand {
                    resource: 9,
                    count: 1
                }],
                &[0]
            )
            .is_err()
    );
    assert!(host.eligible(9, 1, &nodes(1, 32)).is_empty());
    // Two demands on one resource count as their sum.
    let both = [
        Demand {
            resource: FLAT,
            count: 7,
        },
        Demand {
            resource: FLAT,
            count: 6,
        },
    ];
    assert!(
        host.policy.charge(&both, &[0]).is_err(),
        "13 exceeds node[01-08]'s 12"
    );
}

#[test]
fn mode1_order_setting_picks_the_first_layer_charged() {
    let res = vec![HresResource {
        name: "r".into(),
        mode: HresMode::Mode1,
        variables: vec![],
    }];
    let layers = vec![
        layer(0, 200, 0, nodes(1, 32), None),
        layer(0, 100, 0, nodes(1, 16), None),
    ];
    let mut narrow = Host::new(&res, layers.clone(), &Settings::default());
    assert_eq!(narrow.run(0, 1, 1, 1), Ok(vec![(1, 1)]));
    let by_count = Settings::default().with("mode1_order", SettingValue::Text("count".into()));
    let mut count = Host::new(&res, layers, &by_count);
    assert_eq!(count.run(0, 1, 1, 1), Ok(vec![(0, 1)]));
}

#[test]
fn conformance() {
    testing::assert_conformant(&conformance::hres(&mut HresModes::default()));
}
