//! Hot swap: loads happen off the scheduling path, publication happens between passes, a
//! broken candidate is refused while the old policy keeps running, rollback restores.

use sluice_policy::{PluginKind, PriorityPolicy, fixtures};
use sluice_runtime::policy_set::SwapOutcome;
use sluice_runtime::{Limits, PluginSpec, PolicySet};

use crate::support::*;

fn basic_spec() -> PluginSpec {
    PluginSpec {
        kind: PluginKind::Priority,
        plugin: "basic".into(),
        settings: Default::default(),
        limits: Limits::default(),
    }
}

#[test]
fn swaps_under_load_never_mix_generations_and_refuse_broken_candidates() {
    let loader = loader();
    let mut set = PolicySet::load(&loader, &[basic_spec()]).unwrap();
    let ctx = fixtures::priority_context(1_700_000_000, 32, 3, 3);
    let jobs = fixtures::job_table(&ctx, 2_000, 3);
    let expected = set.priority.compute(&ctx, &jobs);

    let mut published = Vec::new();
    let mut refused = 0;
    let mut loads = Vec::new();
    for round in 0..12 {
        // Alternate good and broken candidates; each loads on its own thread.
        let spec = if round % 3 == 2 {
            hostile_priority("trap")
        } else {
            hostile_priority("ok")
        };
        loads.push(set.stage(&loader, spec));
        for _ in 0..5 {
            let generation_before = set.priority.active_id();
            let answer = set.priority.compute(&ctx, &jobs);
            // Within a pass the generation cannot change: the set is borrowed by the pass.
            assert_eq!(set.priority.active_id(), generation_before);
            // Both good policies are FIFO by submit time, so every pass gives the same order.
            assert_eq!(answer.priority.len(), jobs.len());
            assert_eq!(order(&answer.priority), order(&expected.priority));
            for outcome in set.apply_staged() {
                match outcome {
                    SwapOutcome::Published { generation, .. } => published.push(generation),
                    SwapOutcome::Refused(e) => {
                        assert!(e.to_string().contains("smoke call failed"), "{e}");
                        refused += 1;
                    }
                }
            }
        }
    }
    for handle in loads {
        handle.join().unwrap();
    }
    for outcome in set.apply_staged() {
        match outcome {
            SwapOutcome::Published { generation, .. } => published.push(generation),
            SwapOutcome::Refused(_) => refused += 1,
        }
    }
    assert_eq!(published.len(), 8, "every good candidate was published");
    assert_eq!(refused, 4, "every broken candidate was refused");
    assert!(
        published.windows(2).all(|w| w[0] < w[1]),
        "generations increase: {published:?}"
    );
    assert_eq!(set.priority.active_id(), *published.last().unwrap());
    let before = set.priority.active_id();
    let restored = set.rollback(PluginKind::Priority).unwrap();
    assert_ne!(
        restored, before,
        "rollback makes the previous generation active"
    );
    assert_eq!(
        order(&set.priority.compute(&ctx, &jobs).priority),
        order(&expected.priority)
    );
}

fn order(priorities: &[u32]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..priorities.len()).collect();
    idx.sort_by_key(|&i| (std::cmp::Reverse(priorities[i]), i));
    idx
}
