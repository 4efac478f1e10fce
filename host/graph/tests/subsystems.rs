//! Auxiliary subsystems (`-S C+PA` and the like) as GRUG + jobspecs + commands → expected bytes,
//! worked out from Fluxion's `dom_exp`/`aux_upv` at fd257f71 (reference §1.1 `-S`, §2, §6),
//! not copied from flux-sched. The recipe, written for these tests:
//!
//! - containment: `pw0 → rack0 → pdu0, node0, node1` (the pdu first), `node → core0, core1`;
//! - power: `powerpanel0 → pdu0` (ASSOCIATE_IN), `pdu0 → node0, node1` (ASSOCIATE_BY_PATH_IN,
//!   same rack), `node → power0` (10 KW, multiplied);
//! - ibnet: `ibswitch0 → rack0` (ASSOCIATE_IN), `rack0 → leaf0` (multiplied).
//!
//! What the rules give: the walk explores each visited vertex's auxiliary out-edges after its
//! dominant children, adding candidates whose score and count are those the last dominant child
//! left (none: unqualified). A level that chooses drops them, one that does not hands them up,
//! and an auxiliary type whose candidates all reached the root unqualified fails the match. So
//! `pdu0`, a containment leaf whose power edges lead to up nodes, fails every walk that visits
//! it without a request of its own; `rack0`'s `leaf0` comes after the pdu and nodes succeeded
//! and is always qualified. Nothing auxiliary is planned or printed.

use std::path::Path;

mod common;

use common::{Workspace, document, drive, edge, node};
use sluice_graph::{
    GrugError, GrugLimits, MatchFormat, Matcher, Recipe, generate, policy_by_name,
    predefined_subsystems,
};

const RULE: &str = "INFO: =============================\n";

/// The recipe described in the header, with `racks` racks (each with its pdu and two nodes).
fn recipe_body(racks: u32) -> String {
    let power = "<data key=\"subsystem\">power</data>";
    let ibnet = "<data key=\"subsystem\">ibnet</data>";
    let as_power = [
        ("e_subsystem", "power"),
        ("relation", "supplies_to"),
        ("rrelation", "draws_from"),
    ];
    let with = |base: &[(&'static str, &'static str)], more: &[(&'static str, &'static str)]| {
        let mut v = base.to_vec();
        v.extend_from_slice(more);
        v
    };
    [
        "<node id=\"cluster\"><data key=\"root\">1</data><data key=\"type\">cluster</data><data key=\"basename\">pw</data></node>\n".to_string(),
        node("rack", "rack", false, ""),
        node("pdu", "pdu", false, ""),
        node("node", "node", false, ""),
        node("core", "core", false, ""),
        node("powerpanel", "powerpanel", true, power),
        "<node id=\"pdu_power\"><data key=\"type\">pdu</data><data key=\"basename\">pdu</data><data key=\"subsystem\">power</data></node>\n".to_string(),
        "<node id=\"node_power\"><data key=\"type\">node</data><data key=\"basename\">node</data><data key=\"subsystem\">power</data></node>\n".to_string(),
        "<node id=\"node_power_capacity\"><data key=\"type\">power</data><data key=\"basename\">power</data><data key=\"subsystem\">power</data><data key=\"size\">10</data><data key=\"unit\">KW</data></node>\n".to_string(),
        node("ibswitch", "ibswitch", true, ibnet),
        "<node id=\"ib_rack\"><data key=\"type\">rack</data><data key=\"basename\">rack</data><data key=\"subsystem\">ibnet</data></node>\n".to_string(),
        "<node id=\"leaf\"><data key=\"type\">leafswitch</data><data key=\"basename\">leaf</data><data key=\"subsystem\">ibnet</data></node>\n".to_string(),
        edge("cluster", "rack", &[("multi_scale", &racks.to_string())]),
        edge("rack", "pdu", &[("id_scope", "1")]),
        edge("rack", "node", &[("id_scope", "1"), ("multi_scale", "2")]),
        edge("node", "core", &[("multi_scale", "2")]),
        edge(
            "powerpanel",
            "pdu_power",
            &with(&as_power, &[("gen_method", "ASSOCIATE_IN")]),
        ),
        edge(
            "pdu_power",
            "node_power",
            &with(&as_power, &[("gen_method", "ASSOCIATE_BY_PATH_IN")]),
        ),
        edge("node_power", "node_power_capacity", &as_power),
        edge(
            "ibswitch",
            "ib_rack",
            &[
                ("e_subsystem", "ibnet"),
                ("relation", "connected_down"),
                ("gen_method", "ASSOCIATE_IN"),
            ],
        ),
        edge(
            "ib_rack",
            "leaf",
            &[("e_subsystem", "ibnet"), ("relation", "connected_down")],
        ),
    ]
    .concat()
}

fn matcher(racks: u32, subsystems: &str, policy: &str) -> Result<Matcher, String> {
    matcher_of(&recipe_body(racks), subsystems, policy)
}

fn matcher_of(body: &str, subsystems: &str, policy: &str) -> Result<Matcher, String> {
    let recipe = Recipe::parse(&document(body), Path::new("power-ib.graphml")).unwrap();
    let graph = generate(&recipe, GrugLimits::default()).unwrap();
    let subsystems = predefined_subsystems(subsystems).map_err(|e| e.to_string())?;
    let (dominant, auxiliary) = subsystems.split_first().unwrap();
    let mut m = Matcher::new(
        graph,
        dominant.name,
        policy_by_name(policy).unwrap(),
        "ALL:core,ALL:node",
    )
    .map_err(|e| e.to_string())?;
    let auxiliary: Vec<&str> = auxiliary.iter().map(|s| s.name).collect();
    m.set_auxiliary_subsystems(&auxiliary)
        .map_err(|e| e.to_string())?;
    Ok(m)
}

/// The `-t` stream of a session on the one-rack recipe with matcher `subsystems` and `policy`.
fn run(ws: &Workspace, subsystems: &str, policy: &str, commands: &str) -> String {
    run_racks(ws, 1, subsystems, policy, commands)
}

fn run_racks(ws: &Workspace, racks: u32, subsystems: &str, policy: &str, commands: &str) -> String {
    run_body(ws, &recipe_body(racks), subsystems, policy, commands)
}

fn run_body(ws: &Workspace, body: &str, subsystems: &str, policy: &str, commands: &str) -> String {
    let matcher = matcher_of(body, subsystems, policy).unwrap();
    let printed = drive(matcher, MatchFormat::Simple, false, &ws.dir, commands);
    assert_eq!(printed.stderr, "");
    printed.out
}

/// A jobspec with `resources` (YAML lines, indented by four), one hour long.
fn jobspec(resources: &str) -> String {
    format!(
        "version: 9999\nresources:\n{resources}attributes:\n  system:\n    duration: 3600\ntasks:\n  - command: [ \"app\" ]\n    slot: default\n    count:\n      per_slot: 1\n"
    )
}

/// `node[1] → slot[1] → core[1]`: the walk starts pristine, so `pdu0` is visited.
fn node_core() -> String {
    jobspec(
        "    - type: node\n      count: 1\n      with:\n        - type: slot\n          count: 1\n          label: default\n          with:\n            - type: core\n              count: 1\n",
    )
}

/// `rack[1] → node[1] → slot[1] → core[1]`: under the rack only nodes match, so `pdu0` is
/// refused before its auxiliary edges are explored.
fn rack_node_core() -> String {
    jobspec(
        "    - type: rack\n      count: 1\n      with:\n        - type: node\n          count: 1\n          with:\n            - type: slot\n              count: 1\n              label: default\n              with:\n                - type: core\n                  count: 1\n",
    )
}

fn line(level: usize, name: &str, needs: u32, x: bool) -> String {
    format!(
        "      {}{name}[{needs}:{}]\n",
        "---".repeat(level),
        if x { "x" } else { "s" }
    )
}

fn allocated(jobid: u64) -> String {
    format!("{RULE}INFO: JOBID={jobid}\nINFO: RESOURCES=ALLOCATED\nINFO: SCHEDULED AT=Now\n{RULE}")
}

fn no_match(jobid: u64) -> String {
    format!("{RULE}INFO: No matching resources found\nINFO: JOBID={jobid}\n{RULE}")
}

/// One core of `node` (under `rack0`, `pw0`), optionally below the rack request's level.
fn one_core(node: u32, core: u32) -> String {
    [
        line(4, &format!("core{core}"), 1, true),
        line(3, &format!("node{node}"), 1, false),
        line(2, "rack0", 1, false),
        line(1, "pw0", 1, false),
    ]
    .concat()
}

#[test]
fn a_pristine_pdu_with_up_nodes_fails_the_match_under_c_pa() {
    let ws = Workspace::new("pristine", &[("node.yaml", &node_core())]);
    let commands = "match allocate node.yaml\nmatch allocate node.yaml\nquit\n";
    // Containment alone: `high` takes node1's core1, then core0.
    let ca = run(&ws, "CA", "high", commands);
    assert_eq!(
        ca,
        [one_core(1, 1), allocated(1), one_core(1, 0), allocated(2)].concat()
    );
    // With power: pdu0 is visited before the nodes with nothing chosen yet, its power edges
    // reach node0 and node1 (up, free) and leave unqualified `node` candidates at the root.
    for matcher in ["C+PA", "c+pa", "C+P+IBA"] {
        assert_eq!(
            run(&ws, matcher, "high", commands),
            [no_match(1), no_match(2)].concat(),
            "{matcher}"
        );
    }
    // ibnet's leaf0 is explored from rack0 after its children succeeded: always qualified.
    assert_eq!(run(&ws, "C+IBA", "high", commands), ca);
}

#[test]
fn a_pdu_refused_by_status_adds_no_candidates() {
    let ws = Workspace::new("down", &[("node.yaml", &node_core())]);
    let commands = "match allocate node.yaml\nset-status /pw0/rack0/pdu0 down\nmatch allocate node.yaml\nset-status /pw0/rack0/pdu0 up\nmatch allocate node.yaml\nquit\n";
    assert_eq!(
        run(&ws, "C+PA", "high", commands),
        [no_match(1), one_core(1, 1), allocated(2), no_match(3)].concat()
    );
}

#[test]
fn a_pdu_whose_nodes_are_held_whole_adds_no_candidates() {
    // Two racks. Exclusive nodes are planned in their own planners, so once rack1's nodes are
    // held whole pdu1's power edges lead nowhere; with pdu0 down, rack0's free nodes match.
    let ws = Workspace::new(
        "whole",
        &[
            ("node.yaml", &node_core()),
            (
                "rack-whole.yaml",
                &jobspec(
                    "    - type: rack\n      count: 1\n      with:\n        - type: node\n          count: 1\n          exclusive: true\n          with:\n            - type: slot\n              count: 1\n              label: default\n              with:\n                - type: core\n                  count: 2\n",
                ),
            ),
        ],
    );
    let node_whole = |node: u32| {
        [
            line(4, "core0", 1, true),
            line(4, "core1", 1, true),
            line(3, &format!("node{node}"), 1, true),
            line(2, "rack1", 1, false),
            line(1, "pw0", 1, false),
        ]
        .concat()
    };
    let commands = "set-status /pw0/rack0/pdu0 down\nmatch allocate rack-whole.yaml\nmatch allocate rack-whole.yaml\nmatch allocate node.yaml\nset-status /pw0/rack0/pdu0 up\nmatch allocate node.yaml\nquit\n";
    let expected = |last: String| {
        [
            node_whole(3),
            allocated(1),
            node_whole(2),
            allocated(2),
            one_core(1, 1),
            allocated(3),
            last,
        ]
        .concat()
    };
    assert_eq!(
        run_racks(&ws, 2, "CA", "high", commands),
        expected([one_core(1, 0), allocated(4)].concat())
    );
    // pdu0 up again sees node0 and node1 up with room: unqualified candidates, no match.
    assert_eq!(
        run_racks(&ws, 2, "C+PA", "high", commands),
        expected(no_match(4))
    );
}

#[test]
fn requests_below_a_rack_never_visit_the_pdu() {
    let ws = Workspace::new("rack", &[("rack.yaml", &rack_node_core())]);
    let commands =
        "match allocate rack.yaml\nmatch allocate rack.yaml\nmatch allocate rack.yaml\nquit\n";
    let expected = [
        one_core(1, 1),
        allocated(1),
        one_core(1, 0),
        allocated(2),
        one_core(0, 1),
        allocated(3),
    ]
    .concat();
    for matcher in ["CA", "C+PA", "C+IBA", "C+P+IBA"] {
        assert_eq!(run(&ws, matcher, "high", commands), expected, "{matcher}");
    }
}

#[test]
fn first_stops_before_the_pdu_until_the_nodes_weigh_less() {
    // `first` walks rack0's children by (edge weight, uniq_id) from the largest: node1, node0,
    // pdu0 while all weigh u64::MAX. A node's edge weight drops to its free cores once it is
    // used, so the third walk starts with pdu0 and fails under power.
    let ws = Workspace::new("first", &[("node.yaml", &node_core())]);
    let commands = "match allocate node.yaml\nmatch allocate node.yaml\nmatch allocate node.yaml\nmatch allocate node.yaml\nquit\n";
    let ca = [
        one_core(1, 1),
        allocated(1),
        one_core(0, 1),
        allocated(2),
        one_core(1, 0),
        allocated(3),
        one_core(0, 0),
        allocated(4),
    ]
    .concat();
    assert_eq!(run(&ws, "CA", "first", commands), ca);
    assert_eq!(
        run(&ws, "C+PA", "first", commands),
        [
            one_core(1, 1),
            allocated(1),
            one_core(0, 1),
            allocated(2),
            no_match(3),
            no_match(4),
        ]
        .concat()
    );
}

#[test]
fn matchers_need_every_subsystem_to_have_a_root() {
    for name in ["ALL", "IB+IBBA", "V+PFS1BA", "C+PFS1BA"] {
        let err = matcher(1, name, "high").err().unwrap();
        assert!(err.contains("has no root in the graph"), "{name}: {err}");
    }
    assert_eq!(
        matcher(1, "C+QA", "high").err().unwrap(),
        "unknown match subsystems `C+QA`: expected one of CA, IBA, IBBA, PA, PFS1BA, C+IBA, C+IBBA, C+PA, C+PFS1BA, IB+IBBA, C+P+IBA, V+PFS1BA, VA, ALL (or the same in lower case)"
    );
    assert!(matcher(1, "IBA", "high").is_ok());
}

#[test]
fn grug_keeps_every_subsystems_edges_and_paths() {
    let recipe = Recipe::parse(&document(&recipe_body(1)), Path::new("power-ib.graphml")).unwrap();
    let g = generate(&recipe, GrugLimits::default()).unwrap();
    let names = |s: &str, v: &str| -> Vec<String> {
        let s = g.subsystem_id(s).unwrap();
        let v = (0..g.vertex_count() as u32)
            .find(|&x| g.name(x) == v)
            .unwrap();
        g.out_edges(s, v).iter().map(|&t| g.name(t)).collect()
    };
    assert_eq!(names("containment", "rack0"), ["pdu0", "node0", "node1"]);
    assert_eq!(names("power", "pdu0"), ["node0", "node1"]);
    assert_eq!(names("power", "powerpanel0"), ["pdu0"]);
    assert_eq!(names("ibnet", "rack0"), ["leaf0"]);
    assert_eq!(
        common::path_of(&g, "power", "pdu0").as_deref(),
        Some("/powerpanel0/pdu0")
    );
    assert_eq!(
        common::path_of(&g, "ibnet", "rack0").as_deref(),
        Some("/ibswitch0/rack0")
    );
}

#[test]
fn an_association_over_an_existing_edge_moves_it_to_the_new_subsystem() {
    // Fluxion keeps one edge per (source, target): associating rack → node in power takes the
    // containment edges over, in their place.
    let body = [
        node("cluster", "cluster", true, ""),
        node("rack", "rack", false, ""),
        node("node", "node", false, ""),
        node("panel", "panel", true, "<data key=\"subsystem\">power</data>"),
        "<node id=\"prack\"><data key=\"type\">rack</data><data key=\"basename\">rack</data><data key=\"subsystem\">power</data></node>\n".to_string(),
        "<node id=\"pnode\"><data key=\"type\">node</data><data key=\"basename\">node</data><data key=\"subsystem\">power</data></node>\n".to_string(),
        edge("cluster", "rack", &[]),
        edge("rack", "node", &[("multi_scale", "2")]),
        edge(
            "panel",
            "prack",
            &[("e_subsystem", "power"), ("gen_method", "ASSOCIATE_IN")],
        ),
        edge(
            "prack",
            "pnode",
            &[("e_subsystem", "power"), ("gen_method", "ASSOCIATE_IN")],
        ),
    ]
    .concat();
    let g = common::graph(&body).unwrap();
    let containment = g.subsystem_id("containment").unwrap();
    let power = g.subsystem_id("power").unwrap();
    let rack = (0..g.vertex_count() as u32)
        .find(|&v| g.name(v) == "rack0")
        .unwrap();
    assert!(g.out_edges(containment, rack).is_empty());
    let targets: Vec<String> = g
        .out_edges(power, rack)
        .iter()
        .map(|&t| g.name(t))
        .collect();
    assert_eq!(targets, ["node0", "node1"]);
    assert_eq!(g.edge_count(containment) + g.edge_count(power), 4);
}

#[test]
fn an_edge_in_an_undeclared_subsystem_is_refused_with_its_line() {
    let body = [
        node("cluster", "cluster", true, ""),
        node("node", "node", false, ""),
        edge("cluster", "node", &[("e_subsystem", "ibnet")]),
    ]
    .concat();
    let err: GrugError = common::graph(&body).unwrap_err();
    let text = err.to_string();
    let line = document(&body)
        .lines()
        .position(|l| l.contains("<edge id=\"cluster2node\""))
        .unwrap()
        + 1;
    assert!(text.starts_with(&format!("test.graphml:{line}:")), "{text}");
    assert!(
        text.ends_with(
            "edge `cluster2node` names subsystem `ibnet`, which no <node> declares (expected one of containment)"
        ),
        "{text}"
    );
}

#[test]
fn under_first_reading_a_requested_types_total_registers_it() {
    // pdu0 down, a top-level exclusive `core[1]`: each node is visited pristine and its power
    // edge to power0 adds a qualified candidate after its cores. `high` succeeds (node0's core1,
    // first of the equal-scored core1s). Under `first`, the stop test reads the auxiliary total
    // of the requested `core` type, which registers an empty (power, core) entry that reaches
    // the root unqualified: no match.
    let ws = Workspace::new(
        "register",
        &[(
            "core.yaml",
            &jobspec("    - type: core\n      count: 1\n      exclusive: true\n"),
        )],
    );
    let commands = "set-status /pw0/rack0/pdu0 down\nmatch allocate core.yaml\nquit\n";
    assert_eq!(
        run(&ws, "C+PA", "high", commands),
        [one_core(0, 1), allocated(1)].concat()
    );
    assert_eq!(run(&ws, "C+PA", "first", commands), no_match(1));
    assert_eq!(
        run(&ws, "CA", "first", commands),
        [one_core(1, 1), allocated(1)].concat()
    );
}

#[test]
fn a_slot_matches_on_children_of_any_subsystem() {
    // `cluster0 → rack0 → node0 → core0, core1`; with ibnet, `rack0 → core0` too (an ibnet
    // vertex of type core). Fluxion's slot test reads every out-edge, so under `-S CA` a
    // top-level `slot → core` is a slot match at rack0, whose containment children hold no
    // core: no match. Without the ibnet part the slot matches at node0.
    let containment = [
        node("cluster", "cluster", true, ""),
        node("rack", "rack", false, ""),
        node("node", "node", false, ""),
        node("core", "core", false, ""),
        edge("cluster", "rack", &[]),
        edge("rack", "node", &[]),
        edge("node", "core", &[("multi_scale", "2")]),
    ]
    .concat();
    let ibnet = [
        node("ibswitch", "ibswitch", true, "<data key=\"subsystem\">ibnet</data>"),
        "<node id=\"ib_rack\"><data key=\"type\">rack</data><data key=\"basename\">rack</data><data key=\"subsystem\">ibnet</data></node>\n".to_string(),
        "<node id=\"ib_core\"><data key=\"type\">core</data><data key=\"basename\">core</data><data key=\"subsystem\">ibnet</data></node>\n".to_string(),
        edge(
            "ibswitch",
            "ib_rack",
            &[("e_subsystem", "ibnet"), ("gen_method", "ASSOCIATE_IN")],
        ),
        edge("ib_rack", "ib_core", &[("e_subsystem", "ibnet")]),
    ]
    .concat();
    let ws = Workspace::new(
        "slot",
        &[(
            "slot.yaml",
            &jobspec(
                "    - type: slot\n      count: 1\n      label: default\n      with:\n        - type: core\n          count: 1\n",
            ),
        )],
    );
    let commands = "match allocate slot.yaml\nquit\n";
    assert_eq!(
        run_body(&ws, &containment, "CA", "high", commands),
        [
            line(4, "core1", 1, true),
            line(3, "node0", 1, false),
            line(2, "rack0", 1, false),
            line(1, "cluster0", 1, false),
            allocated(1),
        ]
        .concat()
    );
    let both = format!("{containment}{ibnet}");
    assert_eq!(run_body(&ws, &both, "CA", "high", commands), no_match(1));
}
