//! Replaying unchanged subtrees changes nothing but time: random command sequences over the
//! tiny and medium graphs print the same bytes, visit counts included, with replay on and off.

use std::path::Path;

use proptest::prelude::*;
use sluice_graph::{Flow, MatchFormat, Matcher, Outputs, Session, policy_by_name, read_grug};

const POLICIES: [&str; 8] = [
    "high",
    "low",
    "first",
    "hinode",
    "lonode",
    "hinodex",
    "lonodex",
    "firstnodex",
];

/// Jobspecs of several shapes: slots at different levels, omitted prefixes, whole pools,
/// exclusive requests, ranges.
const SPECS: [&str; 5] = [
    "version: 9999\nresources:\n  - type: node\n    count: 1\n    with:\n      - type: slot\n        count: 1\n        label: default\n        with:\n          - type: socket\n            count: 1\n            with:\n              - type: core\n                count: 2\nattributes:\n  system:\n    duration: 3600\ntasks:\n  - command: [ \"app\" ]\n    slot: default\n    count:\n      per_slot: 1\n",
    "version: 9999\nresources:\n  - type: slot\n    count: 2\n    label: default\n    with:\n      - type: core\n        count: 3\nattributes:\n  system:\n    duration: 7200\ntasks:\n  - command: [ \"app\" ]\n    slot: default\n    count:\n      per_slot: 1\n",
    "version: 9999\nresources:\n  - type: node\n    count: 1\n    exclusive: true\n    with:\n      - type: slot\n        count: 1\n        label: default\n        with:\n          - type: core\n            count: 1\nattributes:\n  system:\n    duration: 1800\ntasks:\n  - command: [ \"app\" ]\n    slot: default\n    count:\n      per_slot: 1\n",
    "version: 9999\nresources:\n  - type: socket\n    count: 1\n    with:\n      - type: slot\n        count: 1\n        label: default\n        with:\n          - type: core\n            count:\n              min: 2\n              max: 9\n              operator: \"+\"\n              operand: 3\n          - type: memory\n            count: 4\nattributes:\n  system:\n    duration: 3600\ntasks:\n  - command: [ \"app\" ]\n    slot: default\n    count:\n      per_slot: 1\n",
    "version: 9999\nresources:\n  - type: node\n    count: 2\n    with:\n      - type: slot\n        count: 1\n        label: default\n        with:\n          - type: socket\n            count: 2\n            with:\n              - type: core\n                count: 4\n              - type: gpu\n                count: 1\nattributes:\n  system:\n    duration: 5400\ntasks:\n  - command: [ \"app\" ]\n    slot: default\n    count:\n      per_slot: 1\n",
];

fn run(
    grug: &Path,
    policy: &str,
    replay: bool,
    dir: &Path,
    commands: &[String],
) -> (String, String) {
    let graph = read_grug(grug).unwrap();
    let policy = policy_by_name(policy).unwrap();
    let matcher = Matcher::new(graph, "containment", policy, "ALL:core,ALL:node").unwrap();
    let mut session = Session::new(matcher, MatchFormat::Simple, true);
    session.matcher_mut().set_visit_replay(replay);
    session.set_base_dir(dir);
    let (mut out, mut stdout, mut stderr) = (Vec::new(), Vec::new(), Vec::new());
    for line in commands {
        let mut io = Outputs {
            out: &mut out,
            stdout: &mut stdout,
            stderr: &mut stderr,
        };
        assert_eq!(session.execute(line, &mut io).unwrap(), Flow::Continue);
    }
    // ELAPSE lines carry wall time; everything else must agree.
    let keep = |b: Vec<u8>| {
        String::from_utf8(b)
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with("INFO: ELAPSE="))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    };
    (keep(out), keep(stdout))
}

/// Random commands over `nodes`, the paths of the nodes whose status and properties change.
fn command(nodes: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (0..SPECS.len(), 0..3usize).prop_map(|(s, op)| {
            let op = ["allocate", "allocate_orelse_reserve", "allocate_with_satisfiability"][op];
            format!("match {op} spec{s}.yaml")
        }),
        1 => (1..12u32).prop_map(|j| format!("cancel {j}")),
        1 => (0..nodes.len(), any::<bool>()).prop_map(|(n, up)| {
            format!("set-status {} {}", nodes[n], if up { "up" } else { "down" })
        }),
        1 => (0..nodes.len(), 0..4u32).prop_map(|(n, class)| {
            format!("set-property {} perf_class={class}", nodes[n])
        }),
    ]
}

/// A directory holding the jobspecs of [`SPECS`].
fn spec_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("sluice-graph-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, spec) in SPECS.iter().enumerate() {
        std::fs::write(dir.join(format!("spec{i}.yaml")), spec).unwrap();
    }
    dir
}

const TINY_NODES: &[&str] = &["/tiny0/rack0/node0", "/tiny0/rack0/node1"];

/// Nodes of the medium graph's first rack (18 nodes: two runs of eight siblings replayed at
/// once, and two replayed one by one) and of its last.
const MEDIUM_NODES: &[&str] = &[
    "/medium0/rack0/node0",
    "/medium0/rack0/node7",
    "/medium0/rack0/node8",
    "/medium0/rack0/node13",
    "/medium0/rack0/node17",
    "/medium0/rack3/node60",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn replay_prints_what_a_fresh_walk_prints(
        policy in 0..POLICIES.len(),
        commands in prop::collection::vec(command(TINY_NODES), 1..24),
    ) {
        let dir = spec_dir("replay");
        let grug = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/flux/ex1-tiny-high-allocate/tiny.graphml");
        let fresh = run(&grug, POLICIES[policy], false, &dir, &commands);
        let replayed = run(&grug, POLICIES[policy], true, &dir, &commands);
        prop_assert_eq!(&fresh.0, &replayed.0);
        prop_assert_eq!(&fresh.1, &replayed.1);
    }

    /// The medium graph's racks hold 18 nodes each, so its matches replay runs of siblings
    /// (`visit_run`) besides single visits; changing a node must end its run's replay.
    #[test]
    fn replayed_runs_of_siblings_print_what_a_fresh_walk_prints(
        policy in 0..POLICIES.len(),
        commands in prop::collection::vec(command(MEDIUM_NODES), 1..32),
    ) {
        let dir = spec_dir("runs");
        let grug = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/flux/ex3-medium-first-omit-prefix/medium.graphml");
        let fresh = run(&grug, POLICIES[policy], false, &dir, &commands);
        let replayed = run(&grug, POLICIES[policy], true, &dir, &commands);
        prop_assert_eq!(&fresh.0, &replayed.0);
        prop_assert_eq!(&fresh.1, &replayed.1);
    }
}

#[test]
fn medium_first_case_is_the_same_with_and_without_replay() {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/flux/ex3-medium-first-omit-prefix");
    let commands: Vec<String> = (1..=9)
        .cycle()
        .take(40)
        .map(|i| format!("match allocate_orelse_reserve test00{i}.yaml"))
        .collect();
    for policy in ["first", "high", "lonodex"] {
        let fresh = run(&dir.join("medium.graphml"), policy, false, &dir, &commands);
        let replayed = run(&dir.join("medium.graphml"), policy, true, &dir, &commands);
        assert_eq!(fresh, replayed, "{policy}");
        assert!(fresh.0.contains("RESOURCES=RESERVED"), "{policy}");
    }
}
