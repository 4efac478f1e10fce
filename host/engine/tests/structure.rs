//! The engine's module structure: no two modules import each other, directly or through others.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every module of `src` by path (`backfill::planner`), with its source less comments and tests.
fn modules(src: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path
                .strip_prefix(src)
                .expect("under src")
                .with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
                parts.pop();
            }
            let text = std::fs::read_to_string(&path).expect("read module");
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            let code: String = code
                .lines()
                .map(|l| l.split("//").next().unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n");
            out.insert(parts.join("::"), code);
        }
    }
    out
}

/// The longest module path that `path` (segments after `crate::`) starts with.
fn module_of<'a>(path: &[&str], known: &'a BTreeMap<String, String>) -> Option<&'a str> {
    (1..=path.len())
        .rev()
        .find_map(|n| known.get_key_value(&path[..n].join("::")))
        .map(|(k, _)| k.as_str())
}

/// Whether `first` names a child module of `name`.
fn is_child(name: &str, first: &str, known: &BTreeMap<String, String>) -> bool {
    let child = if name.is_empty() {
        first.to_string()
    } else {
        format!("{name}::{first}")
    };
    !first.is_empty() && known.contains_key(&child)
}

/// The modules each module names: in `use crate::…`, `use super::…` and `use child::…` lines
/// (each item of a brace list) and in `crate::…` paths written inline.
fn imports(known: &BTreeMap<String, String>) -> BTreeMap<&str, BTreeSet<&str>> {
    let mut edges = BTreeMap::new();
    for (name, code) in known {
        let parent: Vec<&str> = name.split("::").filter(|s| !s.is_empty()).collect();
        let parent = &parent[..parent.len().saturating_sub(1)];
        let mut targets = BTreeSet::new();
        let mut add = |path: Vec<&str>| {
            if let Some(m) = module_of(&path, known).filter(|m| *m != name.as_str()) {
                targets.insert(m);
            }
        };
        for stmt in code.split(';') {
            let Some(body) = stmt.trim().split_once("use ").map(|(_, b)| b.trim()) else {
                continue;
            };
            let (base, rest) = if let Some(rest) = body.strip_prefix("crate::") {
                (Vec::new(), rest)
            } else if let Some(rest) = body.strip_prefix("super::") {
                (parent.to_vec(), rest)
            } else if is_child(name, body.split("::").next().unwrap_or_default(), known) {
                // `use planner::…` in `backfill`: a path from this module.
                (name.split("::").filter(|s| !s.is_empty()).collect(), body)
            } else {
                continue;
            };
            let (prefix, items) = match rest.split_once('{') {
                Some((p, items)) => (p.trim_end_matches(':'), items.trim_end_matches('}')),
                None => (rest, ""),
            };
            let mut head = base.clone();
            head.extend(prefix.split("::").filter(|s| !s.is_empty()));
            if items.is_empty() {
                add(head);
                continue;
            }
            for item in items.split(',') {
                let mut path = head.clone();
                path.extend(item.trim().split("::").filter(|s| !s.is_empty()));
                add(path);
            }
        }
        for (i, _) in code.match_indices("crate::") {
            let path: Vec<&str> = code[i + 7..]
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .next()
                .unwrap_or_default()
                .split("::")
                .filter(|s| !s.is_empty())
                .collect();
            add(path);
        }
        edges.insert(name.as_str(), targets);
    }
    edges
}

/// A circle of imports, if any: the modules along it from the first back to itself.
fn find_circle<'a>(edges: &BTreeMap<&'a str, BTreeSet<&'a str>>) -> Option<Vec<&'a str>> {
    // Depth first, with the path of modules being visited.
    fn visit<'a>(
        at: &'a str,
        edges: &BTreeMap<&'a str, BTreeSet<&'a str>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<&'a str>> {
        if let Some(start) = path.iter().position(|m| *m == at) {
            let mut circle = path[start..].to_vec();
            circle.push(at);
            return Some(circle);
        }
        if !done.insert(at) {
            return None;
        }
        path.push(at);
        for next in edges.get(at).into_iter().flatten() {
            if let Some(circle) = visit(next, edges, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|m| visit(m, edges, &mut Vec::new(), &mut done))
}

#[test]
fn no_modules_import_each_other_in_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let known = modules(&src);
    let edges = imports(&known);
    assert!(
        edges.get("backfill").is_some_and(|e| e.contains("engine")),
        "the import reading must see backfill's `use crate::engine::Engine`"
    );
    assert_eq!(find_circle(&edges), None);
}

#[test]
fn a_circle_is_found_when_there_is_one() {
    let edges: BTreeMap<&str, BTreeSet<&str>> = [
        ("a", BTreeSet::from(["b"])),
        ("b", BTreeSet::from(["c"])),
        ("c", BTreeSet::from(["a"])),
        ("d", BTreeSet::new()),
    ]
    .into_iter()
    .collect();
    assert_eq!(find_circle(&edges), Some(vec!["a", "b", "c", "a"]));
}

#[test]
fn every_file_says_in_its_first_line_what_it_owns() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for (name, _) in modules(&src) {
        if name.is_empty() {
            continue; // lib.rs: the crate's own documentation
        }
        let path = name.replace("::", "/");
        let file = [
            src.join(format!("{path}.rs")),
            src.join(path).join("mod.rs"),
        ]
        .into_iter()
        .find(|p| p.exists())
        .expect("module file");
        let text = std::fs::read_to_string(&file).expect("read module");
        let first = text.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("//! Owns "),
            "{}: first line should say what state it owns: {first}",
            file.display()
        );
    }
}
