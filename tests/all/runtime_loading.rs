//! Loading refuses what is not a plugin of the expected kind, with an error that says why.

use sluice_policy::PluginKind;
use sluice_runtime::{Limits, LoadError, PluginSpec};

use crate::support::*;

fn spec(kind: PluginKind, plugin: &str) -> PluginSpec {
    PluginSpec {
        kind,
        plugin: plugin.into(),
        settings: Default::default(),
        limits: Limits::default(),
    }
}

#[test]
fn wrong_world_is_refused_naming_both_kinds() {
    let path = sluice_plugin_artifacts::component("sluice-plugin-priority-basic");
    let err = loader()
        .load(&spec(PluginKind::Selection, path))
        .err()
        .expect("must be refused");
    let text = err.to_string();
    assert!(matches!(err, LoadError::World { .. }), "{text}");
    assert!(
        text.contains("priority plugin") && text.contains("expected a selection plugin"),
        "{text}"
    );
}

#[test]
fn garbage_is_not_a_component() {
    let dir = tempfile::Builder::new()
        .prefix("sluice-garbage-")
        .tempdir()
        .unwrap();
    let path = dir.path().join("garbage.wasm");
    std::fs::write(&path, b"\0asm but not really").unwrap();
    let err = loader()
        .load(&spec(PluginKind::Priority, path.to_str().unwrap()))
        .err()
        .unwrap();
    assert!(matches!(err, LoadError::Compile { .. }), "{err}");
    assert!(
        err.to_string().contains("garbage.wasm"),
        "the error names the file: {err}"
    );
}

#[test]
fn missing_file_and_unknown_name_say_what_was_expected() {
    let err = loader()
        .load(&spec(PluginKind::Priority, "/nonexistent/x.wasm"))
        .err()
        .unwrap();
    assert!(matches!(err, LoadError::Read { .. }), "{err}");
    let err = loader()
        .load(&spec(PluginKind::Priority, "no-such-policy"))
        .err()
        .unwrap();
    assert!(
        err.to_string().contains("basic"),
        "lists the bundle's names: {err}"
    );
}

#[test]
fn a_plugin_that_fails_its_smoke_call_is_refused() {
    let err = loader()
        .load(&hostile_priority("trap"))
        .err()
        .expect("smoke call must fail");
    assert!(matches!(err, LoadError::Smoke { .. }), "{err}");
}

/// Issue 33, item 9: a 200 MB file is judged by its first bytes and its size, never read whole.
#[test]
fn big_files_are_refused_from_their_first_bytes_or_their_size() {
    let dir = tempfile::Builder::new()
        .prefix("sluice-big-")
        .tempdir()
        .unwrap();
    for (name, head, why) in [
        (
            "big-garbage.wasm",
            &b"GIF89a.."[..],
            "not a valid component or native library",
        ),
        (
            "big-component.wasm",
            &b"\0asm\x0d\0\x01\0"[..],
            "more than the 67108864",
        ),
    ] {
        let path = dir.path().join(name);
        let file = std::fs::File::create(&path).unwrap();
        std::io::Write::write_all(&mut &file, head).unwrap();
        file.set_len(200 << 20).unwrap(); // sparse: no 200 MB written
        let err = loader()
            .load(&spec(PluginKind::Priority, path.to_str().unwrap()))
            .err()
            .unwrap();
        assert!(
            matches!(err, LoadError::Format { .. } | LoadError::Refused { .. }),
            "{err}"
        );
        assert!(err.to_string().contains(why), "{name}: {err}");
    }
}
