//! Every policy of the default bundle passes the conformance cases (the contract's and the
//! host's call orders across fresh instances) as the component the host runs, and the same
//! policy linked in natively gives the same answers.

use sluice_policy::conformance::CaseResult;
use sluice_policy::{Association, PriorityContext, Settings, fixtures};
use sluice_runtime::{Limits, PluginSpec, probe};

use crate::support::*;

fn failures(cases: &[CaseResult]) -> Vec<String> {
    cases
        .iter()
        .filter_map(|c| c.outcome.as_ref().err().map(|e| format!("{}: {e}", c.name)))
        .collect()
}

#[test]
fn every_bundled_component_is_conformant() {
    let loader = loader();
    for bundled in sluice_bundle::BUNDLE {
        let spec = PluginSpec {
            kind: bundled.kind,
            plugin: bundled.name.into(),
            settings: Default::default(),
            limits: Limits::default(),
        };
        let report =
            probe::run(&loader, &spec, &[]).unwrap_or_else(|e| panic!("{}: {e}", bundled.name));
        assert!(!report.cases.is_empty());
        assert!(
            report.faults.is_empty(),
            "{}: faults {:?}",
            bundled.name,
            report.faults
        );
        assert_eq!(
            failures(&report.cases),
            Vec::<String>::new(),
            "{}",
            bundled.name
        );
    }
}

#[test]
fn bundled_component_and_builtin_agree() {
    let loader = loader();
    let ctx = fixtures::priority_context(1_700_000_000, 32, 4, 3);
    let jobs = fixtures::job_table(&ctx, 2_000, 17);
    // Slurm's default weights are all zero, which would compare constant answers.
    let weighted = weighted_multifactor();
    for (name, settings) in [("multifactor", weighted), ("basic", Settings::default())] {
        let (mut wasm, mut native) = priority_both_ways(&loader, name, &settings);
        let answer = wasm.compute(&ctx, &jobs).unwrap();
        let mut distinct = answer.priority.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert!(
            distinct.len() > 100,
            "{name}: only {} distinct priorities",
            distinct.len()
        );
        assert_eq!(answer, native.compute(&ctx, &jobs).unwrap(), "{name}");
    }
}

/// Root and `users` users under it, as a trace replay without accounts has them: usage in few
/// distinct values (many users tie, some at none) and shares 1–3, so the FairShare factor is
/// the flat level's count, which the component does in SIMD lanes and the builtin does not.
fn flat_context(users: u32) -> PriorityContext {
    let mut ctx = fixtures::priority_context(1_700_000_000, 32, 0, 0);
    let mut rng = fixtures::Rng::new(11);
    for u in 0..users {
        let usage = (rng.below(7) * 1_000) as f64;
        ctx.associations.push(Association {
            name: format!("u{u}"),
            parent: Some(0),
            is_user: true,
            raw_shares: 1 + u % 3,
            priority: 0,
            raw_usage: usage,
        });
        ctx.associations[0].raw_usage += usage;
    }
    ctx
}

#[test]
fn bundled_multifactor_ranks_a_flat_tree_as_the_builtin_does() {
    let loader = loader();
    let settings = weighted_multifactor();
    // A user count of each remainder by four, so the count's tail is covered.
    for users in [1, 2, 3, 117, 214] {
        let ctx = flat_context(users);
        let jobs = fixtures::job_table(&ctx, 400, u64::from(users));
        let (mut wasm, mut native) = priority_both_ways(&loader, "multifactor", &settings);
        let answer = wasm.compute(&ctx, &jobs).unwrap();
        let fairshare = |a: &sluice_policy::Priorities| {
            let f = a.factors.iter().find(|f| f.name == "FAIRSHARE").unwrap();
            let mut distinct: Vec<u64> = f.values.iter().map(|v| v.to_bits()).collect();
            distinct.sort_unstable();
            distinct.dedup();
            distinct.len()
        };
        if users > 3 {
            assert!(
                fairshare(&answer) > 3,
                "{users} users: too few ranks to compare"
            );
        }
        assert_eq!(
            answer,
            native.compute(&ctx, &jobs).unwrap(),
            "{users} users"
        );
    }
}
