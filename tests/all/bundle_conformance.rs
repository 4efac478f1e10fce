//! Every policy of the default bundle passes the conformance cases as the component the host
//! runs, and the same policy linked in natively gives the same answers.

use sluice_policy::conformance::CaseResult;
use sluice_policy::{PluginKind, Settings, fixtures};
use sluice_runtime::{Limits, Loaded, Loader, PluginSpec, probe};

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
        let loaded = loader
            .load(&spec)
            .unwrap_or_else(|e| panic!("{}: {e}", bundled.name));
        let (cases, faults) = probe::conformance(loaded);
        assert!(!cases.is_empty());
        assert!(faults.is_empty(), "{}: faults {faults:?}", bundled.name);
        assert_eq!(failures(&cases), Vec::<String>::new(), "{}", bundled.name);
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
        let spec = PluginSpec {
            kind: PluginKind::Priority,
            plugin: name.into(),
            settings: settings.clone(),
            limits: Limits::default(),
        };
        let mut wasm = match loader.load(&spec).unwrap() {
            Loaded::Priority(g) => g.backend,
            _ => unreachable!(),
        };
        let mut native = match Loader::builtin(PluginKind::Priority, name, &settings).unwrap() {
            Loaded::Priority(g) => g.backend,
            _ => unreachable!(),
        };
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
