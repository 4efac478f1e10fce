//! flux-sched's two shared cases run as their `run.sh` runs them (`-L <grug> -S CA -P <policy>
//! -t actual.R.out < cmds.in`), compared byte for byte with `expected.R.out`.

use std::path::Path;

use sluice_graph::{IdPolicy, MatchFormat, Matcher, Outputs, Session, read_grug};

/// Runs `cmds.in` of the case in `dir` against `grug` with `policy`; the `-t` output.
fn run_case(dir: &Path, grug: &str, policy: &str) -> String {
    let graph = read_grug(&dir.join(grug)).unwrap();
    let policy = Box::new(IdPolicy::from_name(policy).unwrap());
    let matcher = Matcher::new(graph, "containment", policy, "ALL:core,ALL:node").unwrap();
    let mut session = Session::new(matcher, MatchFormat::Simple, false);
    session.set_base_dir(dir);
    let (mut out, mut stdout, mut stderr) = (Vec::new(), Vec::new(), Vec::new());
    let commands = std::fs::read_to_string(dir.join("cmds.in")).unwrap();
    for line in commands.lines() {
        let mut io = Outputs {
            out: &mut out,
            stdout: &mut stdout,
            stderr: &mut stderr,
        };
        if session.execute(line, &mut io).unwrap() == sluice_graph::Flow::Quit {
            break;
        }
    }
    assert!(stderr.is_empty(), "{}", String::from_utf8_lossy(&stderr));
    String::from_utf8(out).unwrap()
}

fn case_dir(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/flux")
        .join(name)
}

#[test]
fn ex1_tiny_high_allocate_matches_expected_bytes() {
    let dir = case_dir("ex1-tiny-high-allocate");
    let actual = run_case(&dir, "tiny.graphml", "high");
    let expected = std::fs::read_to_string(dir.join("expected.R.out")).unwrap();
    assert_eq!(actual, expected);
}

#[test]
fn ex3_medium_first_omit_prefix_matches_expected_bytes() {
    let dir = case_dir("ex3-medium-first-omit-prefix");
    let actual = run_case(&dir, "medium.graphml", "first");
    let expected = std::fs::read_to_string(dir.join("expected.R.out")).unwrap();
    assert_eq!(actual, expected);
}
