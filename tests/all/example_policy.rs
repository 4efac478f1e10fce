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

#[test]
fn example_component_is_conformant() {
    let (cases, faults) = probe::conformance(loader().load(&spec(Settings::default())).unwrap());
    assert!(faults.is_empty(), "{faults:?}");
    assert!(cases.iter().all(|c| c.outcome.is_ok()), "{cases:?}");
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
