//! Compiled components are cached on disk by content hash and reused, within a bound (least
//! recently used evicted); a damaged cache entry is ignored and rebuilt; in memory, one compiled
//! component is shared by every generation of the same bytes and freed with the last of them.

use std::path::PathBuf;

use sluice_policy::PluginKind;
use sluice_runtime::compile::{CacheBound, WasmEngine};
use sluice_runtime::policy_set::SwapOutcome;
use sluice_runtime::{Limits, Loader, PluginSpec, PolicySet};

#[test]
fn compiled_artifact_is_cached_by_content_hash_and_survives_damage() {
    let dir = std::env::temp_dir().join(format!("sluice-cache-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let engine = WasmEngine::new(Some(dir.clone()));
    let bytes = std::fs::read(sluice_plugin_artifacts::component(
        "sluice-plugin-priority-basic",
    ))
    .unwrap();
    engine.compile("basic", &bytes).unwrap();
    let entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(entries.len(), 1, "one artifact per component");
    let name = entries[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .to_string();
    assert!(
        name.ends_with(".cwasm") && name.len() > 64,
        "keyed by sha256: {name}"
    );

    // Same bytes: same entry, loadable.
    engine.compile("basic", &bytes).unwrap();
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);

    // A damaged entry is ignored and rewritten.
    std::fs::write(&entries[0], b"damaged").unwrap();
    let loader = Loader::new(engine);
    let spec = PluginSpec {
        kind: PluginKind::Priority,
        plugin: sluice_plugin_artifacts::component("sluice-plugin-priority-basic").into(),
        settings: Default::default(),
        limits: Limits::default(),
    };
    loader
        .load(&spec)
        .expect("a damaged cache entry must not stop loading");
    assert!(
        std::fs::metadata(&entries[0]).unwrap().len() > 1000,
        "entry rebuilt"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The bundle's priority policies and the examples' as component files: distinct bytes.
const PRIORITY_COMPONENTS: [&str; 3] = [
    "sluice-plugin-priority-basic",
    "sluice-example-deadline-priority",
    "sluice-example-multifactor-boost",
];

fn priority_spec(component: &str) -> PluginSpec {
    PluginSpec {
        kind: PluginKind::Priority,
        plugin: sluice_plugin_artifacts::component(component).into(),
        settings: Default::default(),
        limits: Limits::default(),
    }
}

/// An empty cache directory of this test's own.
fn cache_dir(test: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cache-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Swaps `component` in the way the daemon does: staged off the pass, published between them.
fn swap(set: &mut PolicySet, loader: &Loader, component: &str) {
    set.stage(loader, priority_spec(component)).join().unwrap();
    let outcomes = set.apply_staged();
    assert!(
        matches!(outcomes[..], [SwapOutcome::Published { .. }]),
        "{outcomes:?}"
    );
}

#[test]
fn swaps_share_one_compiled_component_per_bytes_and_free_it_with_the_last_generation() {
    let engine = WasmEngine::new(Some(cache_dir("shared")));
    let loader = Loader::new(engine.clone());
    let mut set = PolicySet::load(&loader, &[]).unwrap();
    let [a, b, c] = PRIORITY_COMPONENTS;

    // The same bytes again and again: active and previous share one compiled component.
    for _ in 0..4 {
        swap(&mut set, &loader, a);
    }
    assert_eq!(engine.compiled_in_memory(), 1);
    let first = engine.compile("a", &std::fs::read(priority_spec(a).plugin).unwrap());
    let again = engine.compile("a", &std::fs::read(priority_spec(a).plugin).unwrap());
    assert!(
        std::sync::Arc::ptr_eq(&first.unwrap(), &again.unwrap()),
        "the same bytes compile to the one shared component"
    );

    // A→B→A→B: both stay shared, nothing more is held.
    for component in [b, a, b] {
        swap(&mut set, &loader, component);
    }
    assert_eq!(engine.compiled_in_memory(), 2);

    // C then B: A is neither active nor previous, so its compiled code is gone.
    swap(&mut set, &loader, c);
    swap(&mut set, &loader, b);
    assert_eq!(engine.compiled_in_memory(), 2, "B and C only");

    // With the set gone, nothing holds a compiled component any more.
    drop(set);
    assert_eq!(engine.compiled_in_memory(), 0);
}

#[test]
fn the_disk_cache_keeps_its_bound_evicting_the_least_recently_used() {
    let dir = cache_dir("bound");
    let engine = WasmEngine::new(Some(dir.clone())).with_cache_bound(CacheBound {
        bytes: u64::MAX,
        entries: 2,
    });
    let [a, b, c] = PRIORITY_COMPONENTS.map(|c| std::fs::read(priority_spec(c).plugin).unwrap());
    let artifacts = || -> Vec<String> {
        std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    };
    let added = |before: &[String]| -> String {
        let now = artifacts();
        let new: Vec<&String> = now.iter().filter(|n| !before.contains(n)).collect();
        assert_eq!(new.len(), 1, "{before:?} → {now:?}");
        new[0].clone()
    };
    // Each compiled component is dropped at once, so the next use of its bytes reads the disk.
    engine.compile("a", &a).unwrap();
    let a_name = added(&[]);
    engine.compile("b", &b).unwrap();
    let b_name = added(std::slice::from_ref(&a_name));
    // A is used again, so B is the least recently used when C arrives.
    std::thread::sleep(std::time::Duration::from_millis(20));
    engine.compile("a", &a).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    engine.compile("c", &c).unwrap();
    let kept = artifacts();
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert!(
        kept.contains(&a_name) && !kept.contains(&b_name),
        "{kept:?}"
    );

    // A size bound below two artifacts keeps only the one just written.
    let largest = kept
        .iter()
        .map(|n| std::fs::metadata(dir.join(n)).unwrap().len())
        .max()
        .unwrap();
    let engine = WasmEngine::new(Some(dir.clone())).with_cache_bound(CacheBound {
        bytes: largest,
        entries: 64,
    });
    engine.compile("b", &b).unwrap();
    assert_eq!(artifacts(), [b_name]);
    let _ = std::fs::remove_dir_all(&dir);
}
