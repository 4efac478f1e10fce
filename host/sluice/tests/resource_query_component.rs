//! `sluice resource-query --match-policy-file`: flux-sched's two shared cases run as their
//! `run.sh` runs them, with the bundle's ID match component in place of the native policy.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_sluice");

fn case_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../graph/tests/data/flux")
        .join(name)
}

fn match_component() -> &'static str {
    sluice_plugin_artifacts::component("sluice-plugin-match-id")
}

/// Runs resource-query in the case's folder with `args`, commands from `cmds.in`; the `-t`
/// output, or stderr when the command fails.
fn resource_query(case: &str, args: &[&str]) -> Result<String, String> {
    let dir = case_dir(case);
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("actual.R.out");
    let commands = std::fs::File::open(dir.join("cmds.in")).unwrap();
    let run = Command::new(BIN)
        .current_dir(&dir)
        .env("SLUICE_CACHE_DIR", scratch.path().join("cache"))
        .arg("resource-query")
        .args(args)
        .arg("-t")
        .arg(&out)
        .stdin(commands)
        .stdout(Stdio::null())
        .output()
        .unwrap();
    if !run.status.success() {
        return Err(String::from_utf8_lossy(&run.stderr).into_owned());
    }
    Ok(std::fs::read_to_string(out).unwrap())
}

fn expected(case: &str) -> String {
    std::fs::read_to_string(case_dir(case).join("expected.R.out")).unwrap()
}

#[test]
fn ex1_tiny_high_through_the_component_matches_expected_bytes() {
    let case = "ex1-tiny-high-allocate";
    let args = ["-L", "tiny.graphml", "-S", "CA", "-P", "high"];
    let with_component = [&args[..], &["--match-policy-file", match_component()]].concat();
    let actual = resource_query(case, &with_component).unwrap();
    assert_eq!(actual, expected(case));
    assert_eq!(actual, resource_query(case, &args).unwrap());
}

#[test]
fn ex3_medium_first_through_the_component_matches_expected_bytes() {
    let case = "ex3-medium-first-omit-prefix";
    let args = ["-L", "medium.graphml", "-S", "CA", "-P", "first"];
    let with_component = [&args[..], &["--match-policy-file", match_component()]].concat();
    assert_eq!(
        resource_query(case, &with_component).unwrap(),
        expected(case)
    );
}

#[test]
fn a_policy_name_the_component_does_not_have_is_refused_at_load() {
    let args = [
        "-L",
        "tiny.graphml",
        "-P",
        "policy=medium",
        "--match-policy-file",
        match_component(),
    ];
    let err = resource_query("ex1-tiny-high-allocate", &args).unwrap_err();
    assert!(err.contains("unknown match policy: policy=medium"), "{err}");
}

#[test]
fn a_scheduler_plugin_is_refused_as_a_match_policy() {
    let priority = sluice_plugin_artifacts::component("sluice-plugin-priority-basic");
    let args = ["-L", "tiny.graphml", "--match-policy-file", priority];
    let err = resource_query("ex1-tiny-high-allocate", &args).unwrap_err();
    assert!(err.contains("is a priority plugin"), "{err}");
    assert!(err.contains("expected a match policy"), "{err}");
}
