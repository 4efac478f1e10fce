//! Plugins get no capabilities: the WASI a component is given links, runs and grants nothing.

use sluice_policy::{PluginKind, fixtures};
use sluice_runtime::Limits;
use sluice_runtime::loader::Loaded;

use crate::support::*;

/// What the capability probe saw, slot by slot (see `tests/guests/examples/capability_probe.rs`).
fn capabilities_seen(mode: &str) -> Result<Vec<u32>, sluice_runtime::Fault> {
    let spec = guest_spec(
        PluginKind::Priority,
        "capability_probe",
        text_setting("mode", mode),
        Limits::default(),
    );
    let bytes = std::fs::read(&spec.plugin).unwrap();
    let loaded = loader().component(PluginKind::Priority, "probe", &bytes, &spec);
    let Loaded::Priority(mut generation) = loaded.expect("a default Rust build links") else {
        panic!("not a priority plugin");
    };
    let ctx = fixtures::priority_context(1_700_000_000, 8, 1, 2);
    let jobs = fixtures::job_table(&ctx, 12, 1);
    generation.backend.compute(&ctx, &jobs).map(|p| p.priority)
}

/// Issue 38: a component built with its toolchain's defaults loads and runs, and the WASI it
/// is given grants nothing, although the host process has an environment, files and a network.
#[test]
fn host_grants_no_capabilities() {
    assert!(std::env::vars_os().count() > 0 && std::path::Path::new("/etc/passwd").exists());
    let seen = capabilities_seen("probe").expect("probing WASI must not fault");
    let names = [
        "environment variables",
        "arguments",
        "a writable /tmp",
        "a readable /etc/passwd",
        "a listable /",
        "a TCP connection",
        "a name lookup",
    ];
    for (slot, what) in names.iter().enumerate() {
        assert_eq!(seen[slot], 0, "the plugin got {what}: {seen:?}");
    }
    assert_eq!(seen[7], 0, "the wall clock stands at the epoch: {seen:?}");
    assert_eq!(seen[9], 1, "stdout and stderr accept and discard: {seen:?}");
    // Randomness is seeded: a fresh instance sees the same, so a replay is reproducible.
    let again = capabilities_seen("probe").unwrap();
    assert_eq!(seen[8], again[8], "randomness is deterministic");
}

/// A plugin that sleeps would block the scheduling thread on real time: it faults at once.
#[test]
fn a_plugin_that_sleeps_faults_at_once() {
    let t0 = std::time::Instant::now();
    let err = capabilities_seen("sleep").expect_err("sleeping must fault");
    assert!(err.to_string().contains("may not sleep"), "{err}");
    assert!(t0.elapsed() < std::time::Duration::from_secs(600));
}

/// A guest panic still faults: its message goes to a discarded stderr, then it aborts.
#[test]
fn a_panicking_guest_is_a_trap() {
    let spec = hostile_priority("panic");
    let loaded = loader().component(
        PluginKind::Priority,
        "panic",
        &std::fs::read(&spec.plugin).unwrap(),
        &spec,
    );
    let mut loaded = loaded.expect("instantiation itself needs no capability");
    let err = sluice_runtime::loader::smoke(&mut loaded).expect_err("the panic must fault");
    assert!(matches!(err, sluice_runtime::Fault::Trap(_)), "{err}");
}
