//! Compiled components are cached on disk by content hash and reused; a damaged cache entry is
//! ignored and rebuilt.

use sluice_policy::PluginKind;
use sluice_runtime::compile::WasmEngine;
use sluice_runtime::{Limits, Loader, PluginSpec};

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
