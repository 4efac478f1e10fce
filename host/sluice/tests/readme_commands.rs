//! The README's first command, `cargo run -- demo`, must pick this package's command line: with
//! more than one binary in the package, cargo needs `default-run` to know which one to run.

#[test]
fn cargo_run_at_the_root_runs_the_command_line() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    assert!(
        readme.contains("cargo run -- demo"),
        "the README's first command changed; update this test"
    );
    let manifest: toml::Table =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
            .unwrap()
            .parse()
            .unwrap();
    let bins: Vec<&str> = manifest
        .get("bin")
        .and_then(|b| b.as_array())
        .map(|b| b.iter().filter_map(|b| b.get("name")?.as_str()).collect())
        .unwrap_or_default();
    let default_run = manifest["package"]
        .get("default-run")
        .and_then(|d| d.as_str());
    if bins.len() > 1 {
        assert_eq!(
            default_run,
            Some("sluice"),
            "binaries {bins:?} need default-run = \"sluice\""
        );
    }
    // And the command line is one of them.
    assert!(bins.contains(&"sluice"), "{bins:?}");
}
