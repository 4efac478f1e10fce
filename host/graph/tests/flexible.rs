//! The flexible traverser (`-T flexible`, Fluxion's `dfu_flexible_t`) as GRUG + jobspecs +
//! commands → expected bytes, worked out from `dfu_flexible.cpp`'s rules (or-slots chosen by
//! `select_or_config`, `xor_slot` branches tried in turn), not copied from flux-sched's outputs.
//! The graph is flux-sched's `tiny.graphml`: tiny0 → rack0 → node0, node1 → socket0, socket1 →
//! core0-17 | core18-35, gpu0 | gpu1, memory0-3 | memory4-7 (2 GB each); ids are per node, so
//! with `high` a vertex scores its id + 2 and equal scores keep exploration order.

mod common;

use std::path::{Path, PathBuf};

use common::{Printed, Workspace, drive};
use sluice_graph::{
    Interner, Jobspec, MatchFormat, Matcher, TraverserPolicy, policy_by_name, read_grug,
};

const RULE: &str = "INFO: =============================\n";

fn tiny() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/flux/ex1-tiny-high-allocate/tiny.graphml")
}

fn run(ws: &Workspace, policy: &str, traverser: TraverserPolicy, commands: &str) -> Printed {
    let graph = read_grug(&tiny()).unwrap();
    let mut matcher = Matcher::new(
        graph,
        "containment",
        policy_by_name(policy).unwrap(),
        "ALL:core,ALL:node",
    )
    .unwrap();
    matcher.set_traverser(traverser);
    drive(matcher, MatchFormat::Simple, false, &ws.dir, commands)
}

fn flexible(ws: &Workspace, policy: &str, commands: &str) -> Printed {
    run(ws, policy, TraverserPolicy::Flexible, commands)
}

/// A jobspec with `resources` (YAML lines) and a one-hour duration.
fn jobspec(resources: &str) -> String {
    format!(
        "version: 9999\nresources:\n{resources}attributes:\n  system:\n    duration: 3600\ntasks:\n  - command: [ \"app\" ]\n    slot: default\n    count:\n      per_slot: 1\n"
    )
}

/// `items` (each a YAML block starting `- type: …`) indented by `depth` levels of two spaces.
fn indent(depth: usize, items: &[String]) -> String {
    let pad = "  ".repeat(depth);
    items
        .iter()
        .flat_map(|i| i.lines().map(|l| format!("{pad}{l}\n")).collect::<Vec<_>>())
        .collect()
}

/// One request of `kind` and `count`, with an optional slot label and children.
fn req(kind: &str, count: u32, label: Option<&str>, with: &[String]) -> String {
    let mut s = format!("- type: {kind}\n  count: {count}\n");
    if let Some(l) = label {
        s += &format!("  label: {l}\n");
    }
    if !with.is_empty() {
        s += "  with:\n";
        s += &indent(2, with);
    }
    s
}

fn leaf(kind: &str, count: u32) -> String {
    req(kind, count, None, &[])
}

/// `cluster[1] → rack[1] → node[1] → socket[1] → socket_with`.
fn under_a_socket(socket_with: &[String]) -> String {
    let socket = req("socket", 1, None, socket_with);
    let node = req("node", 1, None, &[socket]);
    let rack = req("rack", 1, None, &[node]);
    jobspec(&indent(1, &[req("cluster", 1, None, &[rack])]))
}

/// The lines of one vertex in `simple` form at `level`.
fn line(level: usize, name: &str, needs: u32, x: bool) -> String {
    format!(
        "      {}{name}[{needs}:{}]\n",
        "---".repeat(level),
        if x { "x" } else { "s" }
    )
}

/// A job's lines: `cores` and the other `leaves` (name, needs) of one socket, taken whole, then
/// the socket and its ancestors, shared.
fn socket_job(node: u32, socket: u32, cores: &[u32], leaves: &[(&str, u32)]) -> String {
    let mut s: String = cores
        .iter()
        .map(|c| line(5, &format!("core{c}"), 1, true))
        .collect();
    for (name, needs) in leaves {
        s += &line(5, name, *needs, true);
    }
    s += &line(4, &format!("socket{socket}"), 1, false);
    s += &line(3, &format!("node{node}"), 1, false);
    s += &line(2, "rack0", 1, false);
    s += &line(1, "tiny0", 1, false);
    s
}

fn cores(range: std::ops::RangeInclusive<u32>) -> Vec<u32> {
    range.collect()
}

fn allocated(jobid: u64) -> String {
    format!("{RULE}INFO: JOBID={jobid}\nINFO: RESOURCES=ALLOCATED\nINFO: SCHEDULED AT=Now\n{RULE}")
}

fn no_match(jobid: u64) -> String {
    format!("{RULE}INFO: No matching resources found\nINFO: JOBID={jobid}\n{RULE}")
}

fn commands(file: &str, times: usize) -> String {
    format!("match allocate {file}\n").repeat(times) + "quit\n"
}

/// `socket → {slot: core[8], gpu[1]} | {slot: core[10]}`.
fn gpu_or_more_cores(count: u32) -> String {
    under_a_socket(&[
        req(
            "slot",
            count,
            Some("small"),
            &[leaf("core", 8), leaf("gpu", 1)],
        ),
        req("slot", count, Some("big"), &[leaf("core", 10)]),
    ])
}

#[test]
fn an_or_slot_takes_the_best_scored_alternative_that_is_left() {
    // Per socket the table holds two slots (8 cores and the gpu, then the other 10 cores); the
    // socket chooses one by score, so with `high` a free socket gives its top 8 cores and its
    // gpu, and the socket's rest goes to the next job as a 10-core slot. The highest socket
    // of the highest node that passes the 8-core aggregate filter is taken each time.
    let ws = Workspace::new("or", &[("j.yaml", &gpu_or_more_cores(1))]);
    let p = flexible(&ws, "high", &commands("j.yaml", 9));
    assert_eq!(p.out, eight_or_slot_jobs() + &no_match(9));
    assert_eq!(p.stderr, "");
}

/// The eight jobs of [`gpu_or_more_cores`]`(1)` under `high` that fill tiny now.
fn eight_or_slot_jobs() -> String {
    let mut expected = String::new();
    let mut jobid = 1;
    for node in [1, 0] {
        for socket in [1, 0] {
            let base = socket * 18;
            let gpu = format!("gpu{socket}");
            expected += &socket_job(node, socket, &cores(base + 10..=base + 17), &[(&gpu, 1)]);
            expected += &allocated(jobid);
            expected += &socket_job(node, socket, &cores(base..=base + 9), &[]);
            expected += &allocated(jobid + 1);
            jobid += 2;
        }
    }
    expected
}

#[test]
fn an_or_slot_is_reserved_when_the_graph_is_full_now() {
    // §5.2: the ninth job is matched at the first time the root's 8-core aggregate is free
    // (when the first jobs end, 3600), where the graph looks as it did for the first job.
    let ws = Workspace::new("or-reserve", &[("j.yaml", &gpu_or_more_cores(1))]);
    let cmds = "match allocate_orelse_reserve j.yaml\n".repeat(9) + "quit\n";
    let p = flexible(&ws, "high", &cmds);
    let reserved =
        format!("{RULE}INFO: JOBID=9\nINFO: RESOURCES=RESERVED\nINFO: SCHEDULED AT=3600\n{RULE}");
    let expected =
        eight_or_slot_jobs() + &socket_job(1, 1, &cores(28..=35), &[("gpu1", 1)]) + &reserved;
    assert_eq!(p.out, expected);
}

#[test]
fn two_alternatives_together_give_the_slots_neither_gives_alone() {
    // Two slots of either shape: alone, the gpu shape fits once (one gpu) and the 10-core
    // shape once (18 cores); the table's best mix takes both, one of each, so each job holds a
    // whole socket's 18 cores and its gpu.
    let ws = Workspace::new("mix", &[("j.yaml", &gpu_or_more_cores(2))]);
    let p = flexible(&ws, "high", &commands("j.yaml", 5));
    let mut expected = String::new();
    let mut jobid = 1;
    for node in [1, 0] {
        for socket in [1, 0] {
            let base = socket * 18;
            let gpu = format!("gpu{socket}");
            expected += &socket_job(node, socket, &cores(base..=base + 17), &[(&gpu, 1)]);
            expected += &allocated(jobid);
            jobid += 1;
        }
    }
    expected += &no_match(5);
    assert_eq!(p.out, expected);
}

#[test]
fn the_simple_traverser_reads_sibling_slots_as_the_last_one() {
    // Fluxion's simple `match` keeps the last slot below a matched resource: core[10] alone.
    let ws = Workspace::new("simple-or", &[("j.yaml", &gpu_or_more_cores(1))]);
    let p = run(&ws, "high", TraverserPolicy::Simple, &commands("j.yaml", 1));
    let expected = socket_job(1, 1, &cores(26..=35), &[]) + &allocated(1);
    assert_eq!(p.out, expected);
}

#[test]
fn xor_slots_are_tried_in_order_and_the_next_branch_is_taken_when_the_first_fails() {
    // Top level: either two cores and a gpu, or four cores and 2 GB of memory, each matched
    // where a socket holds the types. Sockets' slots are merged up to the root, which keeps the
    // best-scored one (equal scores: the first explored). The gpus run out after four jobs;
    // then the memory branch is taken.
    let spec = jobspec(&indent(
        1,
        &[
            req("xor_slot", 1, None, &[leaf("core", 2), leaf("gpu", 1)]),
            req(
                "xor_slot",
                1,
                Some("default"),
                &[leaf("core", 4), leaf("memory", 2)],
            ),
        ],
    ));
    let ws = Workspace::new("xor", &[("j.yaml", &spec)]);
    let p = flexible(&ws, "high", &commands("j.yaml", 6));
    let expected = [
        socket_job(0, 1, &[34, 35], &[("gpu1", 1)]),
        allocated(1),
        socket_job(1, 1, &[34, 35], &[("gpu1", 1)]),
        allocated(2),
        socket_job(0, 0, &[16, 17], &[("gpu0", 1)]),
        allocated(3),
        socket_job(1, 0, &[16, 17], &[("gpu0", 1)]),
        allocated(4),
        socket_job(0, 1, &cores(30..=33), &[("memory7", 2)]),
        allocated(5),
        socket_job(1, 1, &cores(30..=33), &[("memory7", 2)]),
        allocated(6),
    ]
    .concat();
    assert_eq!(p.out, expected);
}

#[test]
fn without_alternatives_flexible_matches_as_simple_does() {
    // Shapes of the simple traverser's rule tests: slot below a node with sockets inside,
    // a prefix-free socket-level slot, exclusive storage beside the slot, ranges; every policy
    // family (static, `first`'s dynamic exploration, node-exclusive, locality).
    let slot_socket_core = jobspec(&indent(
        1,
        &[req(
            "cluster",
            1,
            None,
            &[req(
                "rack",
                1,
                None,
                &[req(
                    "node",
                    1,
                    None,
                    &[req(
                        "slot",
                        1,
                        Some("default"),
                        &[req("socket", 1, None, &[leaf("core", 1)])],
                    )],
                )],
            )],
        )],
    ));
    let pristine = jobspec(&indent(
        1,
        &[req(
            "slot",
            3,
            Some("default"),
            &[leaf("core", 5), leaf("memory", 2)],
        )],
    ));
    let node_level = jobspec(&indent(
        1,
        &[req(
            "node",
            1,
            None,
            &[req(
                "slot",
                1,
                Some("default"),
                &[req("socket", 2, None, &[leaf("core", 4), leaf("gpu", 1)])],
            )],
        )],
    ));
    let ranged = jobspec(
        "  - type: slot\n    count:\n      min: 1\n      max: 3\n      operator: \"+\"\n      operand: 1\n    label: default\n    with:\n      - type: core\n        count: 6\n",
    );
    let files = [
        ("a.yaml", slot_socket_core.as_str()),
        ("b.yaml", pristine.as_str()),
        ("c.yaml", node_level.as_str()),
        ("d.yaml", ranged.as_str()),
    ];
    let ws = Workspace::new("same", &files);
    let mut cmds = String::new();
    for _ in 0..3 {
        for (f, _) in &files {
            cmds += &format!("match allocate {f}\nmatch allocate_orelse_reserve {f}\n");
        }
    }
    cmds += "quit\n";
    for policy in ["high", "low", "first", "lonodex", "locality"] {
        let simple = run(&ws, policy, TraverserPolicy::Simple, &cmds);
        let flex = flexible(&ws, policy, &cmds);
        assert!(simple.out.contains("RESERVED"), "{policy}: {}", simple.out);
        assert_eq!(flex.out, simple.out, "{policy}");
        assert_eq!(flex.stderr, simple.stderr, "{policy}");
    }
}

/// Runs a shared case's `cmds.in` on its GRUG with `traverser`; the `-t` output.
fn shared_case(name: &str, grug: &str, policy: &str, traverser: TraverserPolicy) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/flux")
        .join(name);
    let mut matcher = Matcher::new(
        read_grug(&dir.join(grug)).unwrap(),
        "containment",
        policy_by_name(policy).unwrap(),
        "ALL:core,ALL:node",
    )
    .unwrap();
    matcher.set_traverser(traverser);
    let commands = std::fs::read_to_string(dir.join("cmds.in")).unwrap();
    drive(matcher, MatchFormat::Simple, false, &dir, &commands).out
}

#[test]
fn the_shared_cases_come_out_the_same_under_flexible() {
    // Neither case has alternatives: nine prefix-free and prefixed shapes under `first` on
    // medium, five node-level slots under `high` on tiny.
    for (name, grug, policy) in [
        ("ex1-tiny-high-allocate", "tiny.graphml", "high"),
        ("ex3-medium-first-omit-prefix", "medium.graphml", "first"),
    ] {
        let simple = shared_case(name, grug, policy, TraverserPolicy::Simple);
        let flex = shared_case(name, grug, policy, TraverserPolicy::Flexible);
        assert!(simple.contains("ALLOCATED"), "{name}");
        assert_eq!(flex, simple, "{name}");
    }
}

#[test]
fn a_slot_below_a_matched_resource_must_match_there() {
    // Fluxion's flexible `test`: a matched node whose request holds a slot answers only as a
    // slot match, so `node → slot → core` stops at nodes whose cores sit under sockets. The
    // simple traverser descends, finds the cores, but its node-level choice marks no edge
    // down to the sockets, so it fails too (a partially specified shape, README "Limitations").
    let spec = jobspec(&indent(
        1,
        &[req(
            "node",
            1,
            None,
            &[req("slot", 1, Some("default"), &[leaf("core", 2)])],
        )],
    ));
    let ws = Workspace::new("below", &[("j.yaml", &spec)]);
    let p = flexible(&ws, "high", &commands("j.yaml", 1));
    assert_eq!(p.out, no_match(1));
    let simple = run(&ws, "high", TraverserPolicy::Simple, &commands("j.yaml", 1));
    assert_eq!(simple.out, no_match(1));
}

#[test]
fn too_many_xor_branches_are_refused_with_fluxions_text() {
    // Four siblings with ten xor choices each stand for 10^4 trees, past the bound of 1,000.
    let options: Vec<String> = (0..10)
        .map(|_| req("xor_slot", 1, None, &[leaf("core", 1)]))
        .collect();
    let siblings: Vec<String> = ["node", "socket", "rack", "gpu"]
        .iter()
        .map(|k| req(k, 1, None, &options))
        .collect();
    let spec = jobspec(&indent(1, &siblings));
    let ws = Workspace::new("overflow", &[("j.yaml", &spec)]);
    let p = flexible(
        &ws,
        "high",
        "match allocate j.yaml\nmatch allocate j.yaml\nquit\n",
    );
    assert_eq!(p.out, no_match(1) + &no_match(2));
    let text = "match_allocate: ERROR: select: split_xor_slots failed.\nValue too large for defined data type\n\n";
    assert_eq!(p.stderr, text.repeat(2));
}

#[test]
fn an_alternative_that_requests_nothing_is_refused_not_searched_forever() {
    // An empty slot fits any vertex and takes nothing, so the or-slot table would never end
    // (Fluxion recurses until the stack is gone); the match fails with a reason instead.
    let spec = under_a_socket(&[
        req("slot", 1, Some("a"), &[leaf("core", 1)]),
        req("slot", 1, Some("b"), &[]),
    ]);
    let ws = Workspace::new("empty", &[("j.yaml", &spec)]);
    let p = flexible(&ws, "high", &commands("j.yaml", 1));
    assert_eq!(p.out, no_match(1));
    assert!(
        p.stderr
            .contains("dom_slot: an or-slot alternative requests nothing.\n"),
        "{}",
        p.stderr
    );
}

#[test]
fn the_jobspec_reader_takes_or_slots_and_xor_slots_as_libjobspec_does() {
    let types = Interner::with_builtin_types();
    let file = Path::new("j.yaml");
    // Sibling slots, and an xor_slot without a label (only `slot` needs one).
    let spec = jobspec(&indent(
        1,
        &[
            req("slot", 1, Some("a"), &[leaf("core", 1)]),
            req("slot", 2, Some("b"), &[leaf("core", 2)]),
            req("xor_slot", 1, None, &[leaf("core", 3)]),
        ],
    ));
    let parsed = Jobspec::parse(&spec, file, &types).unwrap();
    let kinds: Vec<&str> = parsed.resources.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(kinds, ["slot", "slot", "xor_slot"]);
    assert_eq!(parsed.resources[2].label, None);
    let unlabelled = jobspec(&indent(1, &[req("slot", 1, None, &[leaf("core", 1)])]));
    let err = Jobspec::parse(&unlabelled, file, &types).unwrap_err();
    assert!(
        err.to_string().ends_with("All slots must be labeled"),
        "{err}"
    );
}
