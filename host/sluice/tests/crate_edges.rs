//! The CLI's edge with the daemon crate: it names only the entry points at the daemon's root
//! (`sluice_daemon::serve`, `sluice_daemon::run_supervisor`, …), never a module inside it; what
//! it shares with the daemon is `sluice-api`'s and `sluice-client`'s.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The paths into the daemon crate that go below its root: `sluice_daemon::client::Client`,
/// or `module::item` inside a `use sluice_daemon::{…}` group.
fn deep_paths(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices("sluice_daemon::") {
        let rest = &text[at + "sluice_daemon::".len()..];
        let named = if let Some(group) = rest.strip_prefix('{') {
            &group[..group.find('}').unwrap_or(group.len())]
        } else {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            &rest[..end]
        };
        if named.contains("::") {
            found.push(format!("sluice_daemon::{named}"));
        }
    }
    found
}

#[test]
fn the_cli_uses_the_daemon_crate_only_through_its_root() {
    let mut files = Vec::new();
    sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let mut deep = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for path in deep_paths(&text) {
            deep.push(format!("{}: {path}", file.display()));
        }
    }
    assert!(
        deep.is_empty(),
        "the CLI reaches into the daemon crate (move what it needs to sluice-api or \
         sluice-client, or make it an entry point at the daemon's root):\n{}",
        deep.join("\n")
    );
}

#[test]
fn a_path_below_the_root_is_seen_in_either_form() {
    assert_eq!(
        deep_paths("use sluice_daemon::client::Client;"),
        ["sluice_daemon::client::Client"]
    );
    assert_eq!(deep_paths("use sluice_daemon::{a::B, serve};").len(), 1);
    assert!(
        deep_paths("sluice_daemon::serve(opts); use sluice_daemon::{Token, serve};").is_empty()
    );
}
