//! The SDK example (`examples/deadline-priority`) runs as a component in the host: it loads with
//! its settings, passes the conformance cases, and its deadline boost shows in the answer.

use sluice_policy::{PluginKind, Setting, SettingValue, Settings, fixtures};
use sluice_runtime::{Limits, Loaded, PluginSpec, probe};

use crate::support::*;

fn spec(settings: Settings) -> PluginSpec {
    PluginSpec {
        kind: PluginKind::Priority,
        plugin: sluice_plugin_artifacts::component("sluice-example-deadline-priority").into(),
        settings,
        limits: Limits::default(),
    }
}

/// The example's own cases file, as `sluice plugin test --cases` reads it.
fn declared(example: &str) -> Vec<sluice_policy::conformance::declared::Declared> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(example)
        .join("cases.toml");
    sluice_runtime::cases::read(&path).unwrap()
}

#[test]
fn example_component_is_conformant_and_does_what_its_cases_declare() {
    let report = probe::run(
        &loader(),
        &spec(Settings::default()),
        &declared("deadline-priority"),
    )
    .unwrap();
    assert!(report.faults.is_empty(), "{:?}", report.faults);
    assert!(
        report.cases.len() > 6,
        "contract, protocol and declared cases ran"
    );
    assert!(
        report.cases.iter().all(|c| c.outcome.is_ok()),
        "{:?}",
        report.cases
    );
}

/// Issue 38: a policy that ignores its settings fails `plugin test` when its cases say the
/// settings matter (the hostile guest in mode `ok` reads only `mode`).
#[test]
fn a_policy_that_ignores_its_settings_fails_its_declared_cases() {
    let report = probe::run(
        &loader(),
        &hostile_priority("ok"),
        &declared("deadline-priority"),
    )
    .unwrap();
    let failed: Vec<&str> = report
        .cases
        .iter()
        .filter(|c| c.outcome.is_err())
        .map(|c| c.name.as_str())
        .collect();
    let declared_names: Vec<String> = declared("deadline-priority")
        .into_iter()
        .filter(|c| c.expect != sluice_policy::conformance::declared::Expect::Same)
        .map(|c| c.name)
        .collect();
    assert!(!declared_names.is_empty());
    for name in &declared_names {
        assert!(
            failed.contains(&name.as_str()),
            "{name} must fail: {failed:?}"
        );
    }
}

/// A policy that keeps state across calls (the host would lose it at any fresh instance)
/// answers differently from a fresh instance, and the protocol cases say so.
#[test]
fn a_policy_that_keeps_state_across_calls_fails_the_protocol_cases() {
    let report = probe::run(&loader(), &hostile_priority("drift"), &[]).unwrap();
    let case = report
        .cases
        .iter()
        .find(|c| c.name == "associations added later count as if sent whole")
        .unwrap();
    assert!(case.outcome.is_err(), "{:?}", report.cases);
}

#[test]
fn example_boosts_the_project_near_its_deadline_through_the_component() {
    let ctx = fixtures::priority_context(1_700_000_000, 32, 3, 3);
    let jobs = fixtures::job_table(&ctx, 400, 21);
    let project = "acct1";
    let settings = |deadline: i64| {
        Settings(vec![
            Setting {
                key: "project".into(),
                value: SettingValue::Text(project.into()),
            },
            Setting {
                key: "deadline".into(),
                value: SettingValue::Integer(deadline),
            },
        ])
    };
    let answer = |deadline| match loader().load(&spec(settings(deadline))).unwrap() {
        Loaded::Priority(mut g) => g.backend.compute(&ctx, &jobs).unwrap(),
        _ => unreachable!(),
    };
    let near = answer(ctx.now + 60);
    let past = answer(ctx.now - 60);
    let in_project = |i: usize| {
        let user = &ctx.associations[jobs.association[i] as usize];
        ctx.associations[user.parent.unwrap() as usize].name == project
    };
    let mut boosted = 0;
    for i in 0..jobs.len() {
        if in_project(i) {
            assert!(
                near.priority[i] > past.priority[i],
                "job {i} of the project is boosted before the deadline"
            );
            boosted += 1;
        } else {
            assert_eq!(
                near.priority[i], past.priority[i],
                "job {i} outside the project is unaffected"
            );
        }
    }
    assert!(boosted > 0, "the fixture has project jobs");
}

/// Issue 38: a site policy built on a bundled one (`examples/multifactor-boost` depends on the
/// multifactor crate without its export) builds as a component, exporting itself only, and its
/// component answers as multifactor plus the boost.
#[test]
fn a_policy_built_on_the_bundle_is_a_component_of_its_own() {
    use sluice_policy::{FromSettings, PriorityPolicy};
    let settings = |boost: &str| {
        Settings::default()
            .with("boost.association", SettingValue::Text(boost.into()))
            .with("boost.amount", SettingValue::Integer(7_000))
    };
    let spec = |settings| PluginSpec {
        kind: PluginKind::Priority,
        plugin: sluice_plugin_artifacts::component("sluice-example-multifactor-boost").into(),
        settings,
        limits: Limits::default(),
    };
    let report = probe::run(
        &loader(),
        &spec(Settings::default()),
        &declared("multifactor-boost"),
    )
    .unwrap();
    assert!(report.faults.is_empty(), "{:?}", report.faults);
    assert!(
        report.cases.iter().all(|c| c.outcome.is_ok()),
        "{:?}",
        report.cases
    );
    // 2023-11-18 was a Saturday.
    let ctx = fixtures::priority_context(1_700_308_800, 32, 4, 3);
    let jobs = fixtures::job_table(&ctx, 200, 5);
    let answer = |boost: &str| match loader().load(&spec(settings(boost))).unwrap() {
        Loaded::Priority(mut g) => g.backend.compute(&ctx, &jobs).unwrap(),
        _ => unreachable!(),
    };
    let plain =
        sluice_plugin_priority_multifactor::Multifactor::from_settings(&Settings::default())
            .compute(&ctx, &jobs);
    assert_eq!(answer("nobody").priority, plain.priority);
    let boosted = answer("acct1");
    let raised = (0..jobs.len())
        .filter(|&i| boosted.priority[i] == plain.priority[i] + 7_000)
        .count();
    let same = (0..jobs.len())
        .filter(|&i| boosted.priority[i] == plain.priority[i])
        .count();
    assert!(
        raised > 0 && raised + same == jobs.len(),
        "{raised} raised, {same} unchanged"
    );
}
