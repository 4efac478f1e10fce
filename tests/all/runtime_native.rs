//! The native path: the same policy source loaded as a shared library answers exactly as its
//! component does; a library that is not a sluice plugin is refused.

use sluice_policy::{PluginKind, fixtures};
use sluice_runtime::{Limits, LoadError, Loaded, PluginSpec};

use crate::support::*;

#[test]
fn native_library_answers_like_the_component() {
    let loader = loader();
    let ctx = fixtures::priority_context(1_700_000_000, 32, 3, 3);
    let jobs = fixtures::job_table(&ctx, 1_000, 8);
    let mut answers = Vec::new();
    for plugin in [
        sluice_plugin_artifacts::native_library("sluice-plugin-priority-basic"),
        sluice_plugin_artifacts::component("sluice-plugin-priority-basic"),
    ] {
        let spec = PluginSpec {
            kind: PluginKind::Priority,
            plugin: plugin.into(),
            settings: Default::default(),
            limits: Limits::default(),
        };
        match loader.load(&spec).unwrap() {
            Loaded::Priority(mut g) => answers.push(g.backend.compute(&ctx, &jobs).unwrap()),
            _ => unreachable!(),
        }
    }
    assert_eq!(answers[0], answers[1]);
    assert_eq!(answers[0].priority.len(), 1_000);
}

#[test]
fn a_library_that_is_not_a_plugin_is_refused() {
    let libc = [
        "/lib/x86_64-linux-gnu/libm.so.6",
        "/usr/lib/x86_64-linux-gnu/libm.so.6",
    ]
    .into_iter()
    .find(|p| std::path::Path::new(p).exists());
    let Some(lib) = libc else { return };
    let spec = PluginSpec {
        kind: PluginKind::Priority,
        plugin: lib.into(),
        settings: Default::default(),
        limits: Limits::default(),
    };
    let err = loader().load(&spec).err().unwrap();
    assert!(matches!(err, LoadError::Native { .. }), "{err}");
    assert!(err.to_string().contains("not a sluice plugin"), "{err}");
}

#[test]
fn a_panic_in_a_native_plugin_is_caught_in_the_library_and_contained() {
    let spec = PluginSpec {
        kind: PluginKind::Priority,
        plugin: sluice_plugin_artifacts::test_guest_native("hostile_priority").into(),
        settings: text_setting("mode", "panic"),
        limits: Limits::default(),
    };
    // The smoke call already meets the panic: the load is refused with it, the host lives on.
    let err = loader()
        .load(&spec)
        .err()
        .expect("a panicking plugin is refused");
    assert!(
        err.to_string()
            .contains("panic: hostile fixture panics on purpose"),
        "{err}"
    );
    // A library whose policy works answers through the same path.
    let ok = PluginSpec {
        settings: text_setting("mode", "ok"),
        ..spec
    };
    let Loaded::Priority(mut g) = loader().load(&ok).unwrap() else {
        unreachable!()
    };
    let ctx = fixtures::priority_context(1_700_000_000, 8, 1, 1);
    assert_eq!(
        g.backend
            .compute(&ctx, &fixtures::job_table(&ctx, 3, 1))
            .unwrap()
            .priority
            .len(),
        3
    );
}
