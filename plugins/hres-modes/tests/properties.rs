//! Properties over random layer sets and job sequences: the host never sees an over-committed
//! layer in any mode, and MODE_3 use at each layer is the sum of its children's.

use proptest::prelude::*;
use sluice_plugin_hres_modes::HresModes;
use sluice_sdk::hres::check_charges;
use sluice_sdk::*;

const NODES: u32 = 24;

fn resource(mode: HresMode) -> Vec<HresResource> {
    vec![HresResource {
        name: "r".into(),
        mode,
        variables: vec![],
    }]
}

/// A layer count: infinite, zero or finite, with a base no larger than it.
fn count_and_base() -> impl Strategy<Value = (i64, i64)> {
    prop_oneof![
        Just((-1, 0)),
        Just((0, 0)),
        (1i64..40).prop_flat_map(|c| (Just(c), 0..=c / 4))
    ]
}

/// Flat layers (modes 1 and 2) over random node ranges.
fn flat_layers() -> impl Strategy<Value = Vec<HresLayer>> {
    let one = (0..NODES, 1..NODES, count_and_base()).prop_map(|(a, len, (count, base))| {
        let nodes = (a..(a + len).min(NODES)).collect::<NodeBitmap>().words;
        HresLayer {
            resource: 0,
            count,
            base,
            used: 0,
            nodes,
            parent: None,
        }
    });
    proptest::collection::vec(one, 1..6)
}

/// Jobs: a non-empty node set and a count.
fn jobs(max_count: i64) -> impl Strategy<Value = Vec<(Vec<u32>, i64)>> {
    let job = (
        proptest::collection::btree_set(0..NODES, 1..6),
        0..max_count,
    )
        .prop_map(|(nodes, count)| (nodes.into_iter().collect(), count));
    proptest::collection::vec(job, 1..40)
}

/// A uniform-depth tree over NODES nodes: root, 2 or 3 middle layers, leaves of 4 nodes, with
/// bases summed up the tree as the host does.
fn tree() -> impl Strategy<Value = Vec<HresLayer>> {
    let leaves = (NODES / 4) as usize;
    (
        2u32..=3,
        proptest::collection::vec(count_and_base(), leaves + 4),
    )
        .prop_map(move |(mids, cb)| {
            let range = |a: u32, b: u32| (a..b).collect::<NodeBitmap>().words;
            let per_mid = NODES.div_ceil(mids * 4) * 4;
            let mut layers = vec![HresLayer {
                resource: 0,
                count: cb[0].0,
                base: cb[0].1,
                used: 0,
                nodes: range(0, NODES),
                parent: None,
            }];
            for m in 0..mids {
                let (count, base) = cb[1 + m as usize];
                let nodes = range(m * per_mid, ((m + 1) * per_mid).min(NODES));
                layers.push(HresLayer {
                    resource: 0,
                    count,
                    base,
                    used: 0,
                    nodes,
                    parent: Some(0),
                });
            }
            for leaf in 0..NODES / 4 {
                let (count, base) = cb[4 + leaf as usize];
                let parent = 1 + leaf * 4 / per_mid;
                layers.push(HresLayer {
                    resource: 0,
                    count,
                    base,
                    used: 0,
                    nodes: range(leaf * 4, leaf * 4 + 4),
                    parent: Some(parent),
                });
            }
            // Children's bases count in their parents', leaves first.
            for i in (1..layers.len()).rev() {
                let (base, parent) = (layers[i].base, layers[i].parent.unwrap() as usize);
                layers[parent].base += base;
            }
            // Keep finite layers able to hold their base, as the host refuses base > count.
            layers
                .iter_mut()
                .filter(|l| l.count >= 0)
                .for_each(|l| l.count = l.count.max(l.base));
            layers
        })
}

/// Runs the jobs through the plugin as the host would; returns what each layer was charged.
fn run(
    mode: HresMode,
    mut host: Vec<HresLayer>,
    jobs: &[(Vec<u32>, i64)],
) -> Result<Vec<i64>, TestCaseError> {
    let mut policy = HresModes::default();
    policy.begin_pass(&resource(mode), &host);
    let mut charged = vec![0i64; host.len()];
    for (nodes, count) in jobs {
        let demand = [Demand {
            resource: 0,
            count: *count,
        }];
        if let Ok(charges) = policy.charge(&demand, nodes) {
            prop_assert!(
                check_charges(&host, &charges).is_ok(),
                "{charges:?} over-commits {host:?}"
            );
            for c in charges {
                host[c.layer as usize].used += c.amount;
                charged[c.layer as usize] += c.amount;
            }
        }
        for l in host.iter().filter(|l| !l.is_infinite()) {
            prop_assert!(l.used + l.base <= l.count, "layer over-committed: {l:?}");
        }
    }
    Ok(charged)
}

proptest! {
    #[test]
    fn modes_1_and_2_never_over_commit(layers in flat_layers(), jobs in jobs(15), second in any::<bool>()) {
        let mode = if second { HresMode::Mode2 } else { HresMode::Mode1 };
        run(mode, layers, &jobs)?;
    }

    #[test]
    fn mode_3_never_over_commits_and_sums_up_the_tree(layers in tree(), jobs in jobs(12)) {
        let charged = run(HresMode::Mode3, layers.clone(), &jobs)?;
        for (i, _) in layers.iter().enumerate() {
            let children: Vec<usize> = (0..layers.len()).filter(|&c| layers[c].parent == Some(i as u32)).collect();
            if !children.is_empty() {
                let sum: i64 = children.iter().map(|&c| charged[c]).sum();
                prop_assert_eq!(charged[i], sum, "layer {} is not the sum of its children", i);
            }
        }
    }

    #[test]
    fn eligible_nodes_are_candidates(layers in flat_layers(), candidates in proptest::collection::vec(any::<u64>(), 0..2), count in 0i64..20) {
        for mode in [HresMode::Mode1, HresMode::Mode2, HresMode::Mode3] {
            let mut policy = HresModes::default();
            policy.begin_pass(&resource(mode), &layers);
            let out = NodeBitmap::from_words(policy.eligible(&[Demand { resource: 0, count }], &candidates));
            prop_assert!(out.words.len() <= candidates.len());
            prop_assert!(out.is_subset_of(&NodeBitmap::from_words(candidates.clone())));
        }
    }
}
