//! Helpers shared by the cross-crate tests: loaders, specs and fixture plugins.

use sluice_policy::{PluginKind, Setting, SettingValue, Settings};
use sluice_runtime::backend::PriorityBackend;
use sluice_runtime::compile::WasmEngine;
use sluice_runtime::{Limits, Loaded, Loader, PluginSpec};

/// A loader sharing one compiled-component cache across the test run, so each fixture is
/// compiled once per machine rather than once per test.
pub fn loader() -> Loader {
    let cache = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("component-cache");
    Loader::new(WasmEngine::new(Some(cache)))
}

/// Settings with one text key.
pub fn text_setting(key: &str, value: &str) -> Settings {
    Settings(vec![Setting {
        key: key.into(),
        value: SettingValue::Text(value.into()),
    }])
}

/// Multifactor settings with every weight the fixtures' jobs can tell apart non-zero (Slurm's
/// defaults are all zero, which makes every priority the same).
pub fn weighted_multifactor() -> Settings {
    Settings::default()
        .with("weight.age", SettingValue::Integer(1000))
        .with("weight.fairshare", SettingValue::Integer(10_000))
        .with("weight.jobsize", SettingValue::Integer(500))
        .with("weight.partition", SettingValue::Integer(700))
        .with("weight.qos", SettingValue::Integer(300))
}

/// Bundled priority policy `name` with `settings`: as the component the host runs and linked
/// in natively.
pub fn priority_both_ways(
    loader: &Loader,
    name: &str,
    settings: &Settings,
) -> (Box<dyn PriorityBackend>, Box<dyn PriorityBackend>) {
    let spec = PluginSpec {
        kind: PluginKind::Priority,
        plugin: name.into(),
        settings: settings.clone(),
        limits: Limits::default(),
    };
    let Loaded::Priority(wasm) = loader.load(&spec).unwrap() else {
        unreachable!()
    };
    let Loaded::Priority(native) = Loader::builtin(PluginKind::Priority, name, settings).unwrap()
    else {
        unreachable!()
    };
    (wasm.backend, native.backend)
}

/// Tight limits so that hostile fixtures are stopped quickly.
pub fn tight_limits() -> Limits {
    Limits {
        memory_bytes: 32 << 20,
        fuel_per_call: 200_000_000,
    }
}

/// A spec for the test guest `guest` (a file stem of `tests/guests/examples`).
pub fn guest_spec(kind: PluginKind, guest: &str, settings: Settings, limits: Limits) -> PluginSpec {
    PluginSpec {
        kind,
        plugin: sluice_plugin_artifacts::test_guest(guest).to_string(),
        settings,
        limits,
    }
}

/// The test guest `guest` as a plugin of `kind`, loaded without the smoke call so that the
/// first call a test makes is the instance's first.
pub fn unsmoked_component(kind: PluginKind, guest: &str) -> Loaded {
    let spec = guest_spec(kind, guest, Settings::default(), Limits::default());
    let bytes = std::fs::read(&spec.plugin).unwrap();
    loader().component(kind, guest, &bytes, &spec).unwrap()
}

/// The hostile priority guest in `mode`.
pub fn hostile_priority(mode: &str) -> PluginSpec {
    guest_spec(
        PluginKind::Priority,
        "hostile_priority",
        text_setting("mode", mode),
        tight_limits(),
    )
}

/// The hostile selection guest in `mode`.
pub fn hostile_selection(mode: &str) -> PluginSpec {
    guest_spec(
        PluginKind::Selection,
        "hostile_selection",
        text_setting("mode", mode),
        tight_limits(),
    )
}
