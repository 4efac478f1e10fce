//! `sluice demo` and `sluice plugin …` as a site admin runs them: exit codes and what they print.

use std::path::Path;
use std::process::{Command, Output};

fn sluice(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(args)
        .env(
            "SLUICE_CACHE_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-component-cache"),
        )
        .output()
        .expect("sluice runs")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn demo_schedules_every_job_with_the_wasm_bundle_and_survives_a_hot_swap() {
    let out = sluice(&["demo", "--jobs", "60"]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("summary: 60 submitted, 60 started"), "{t}");
    assert!(
        t.contains("hot swap between passes: priority multifactor -> basic: generation "),
        "{t}"
    );
    assert!(
        t.contains("rollback of priority to the previous generation: generation "),
        "{t}"
    );
    assert!(
        t.contains("multifactor (bundle component)"),
        "the components answered: {t}"
    );
    assert!(
        t.contains("by backfill") || t.contains("by main scheduler"),
        "{t}"
    );
    // What a user reads carries no Rust debug formatting: no `Name { field: … }`, no `Ok(…)`,
    // no quoted strings.
    for debug in ["Published", "Ok(", "Err(", " { ", "\""] {
        assert!(!t.contains(debug), "debug formatting {debug:?} in: {t}");
    }
    // The plugin table's columns line up whatever the generation's role: every row's
    // generation number ends where the header's GENERATION does.
    let header = t
        .lines()
        .find(|l| l.contains("GENERATION"))
        .expect("a plugin table");
    let end = header.find("GENERATION").unwrap() + "GENERATION".len();
    let rows: Vec<&str> = t
        .lines()
        .filter(|l| l.contains("(bundle component)") || l.contains("builtin:"))
        .collect();
    assert!(rows.len() >= 8, "{t}");
    for row in rows {
        let before = &row[..end];
        assert!(
            before.ends_with(|c: char| c.is_ascii_digit())
                && !row[end..].starts_with(|c: char| c.is_ascii_digit()),
            "misaligned row {row:?} in: {t}"
        );
    }
}

#[test]
fn check_reports_kind_and_version_and_refuses_garbage() {
    let path = sluice_plugin_artifacts::component("sluice-plugin-select-cons-tres");
    let out = sluice(&["plugin", "check", path, "--json"]);
    assert!(out.status.success(), "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["kind"], "selection");
    assert_eq!(v["wit_version"], sluice_policy::WIT_VERSION);

    // A component built against another contract is refused, with what to do about it.
    let old = sluice_plugin_artifacts::test_guest("priority_other_contract");
    let out = sluice(&["plugin", "check", old]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("sluice:policy/priority@0.6.0") && text(&out).contains("rebuild it"),
        "{}",
        text(&out)
    );

    let garbage = Path::new(env!("CARGO_TARGET_TMPDIR")).join("garbage.wasm");
    std::fs::write(&garbage, b"not a component").unwrap();
    let out = sluice(&["plugin", "check", garbage.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("not a valid component"),
        "{}",
        text(&out)
    );
}

#[test]
fn check_loads_and_calls_a_native_library() {
    // The binary frees what a native plugin allocated: it must share the plugin's allocator
    // (a custom global allocator in `sluice` crashed here).
    for (name, kind) in [
        ("sluice-plugin-priority-multifactor", "priority"),
        ("sluice-plugin-select-cons-tres", "selection"),
    ] {
        let path = sluice_plugin_artifacts::native_library(name);
        let out = sluice(&["plugin", "check", path, "--json"]);
        assert!(out.status.success(), "{name}: {}", text(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["kind"], kind, "{name}");
        assert_eq!(v["smoke_call"], "ok", "{name}: {v}");
    }
}

#[test]
fn test_passes_the_bundle_and_fails_a_hostile_plugin() {
    let good = sluice(&[
        "plugin",
        "test",
        sluice_plugin_artifacts::component("sluice-plugin-hres-modes"),
    ]);
    assert!(good.status.success(), "{}", text(&good));
    assert!(text(&good).contains("0 failed"));
    let bad = sluice(&[
        "plugin",
        "test",
        sluice_plugin_artifacts::test_guest("hostile_priority"),
    ]);
    assert!(
        bad.status.success(),
        "the hostile guest in its default (ok) mode is conformant: {}",
        text(&bad)
    );
}
