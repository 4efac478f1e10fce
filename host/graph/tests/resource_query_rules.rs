//! resource-query's rules (reference §1, §3, §5, §6, §10) as GRUG + jobspecs + commands →
//! expected bytes. Expectations are worked out from the rules, not copied from flux-sched.
//! The graph is flux-sched's `tiny.graphml` test input: tiny0 → rack0 → node0, node1 → socket0,
//! socket1 → core0-17 | core18-35, gpu0 | gpu1, memory0-3 | memory4-7 (2 GB each).

use std::path::{Path, PathBuf};

mod common;

use common::{Printed, Workspace, drive};

use sluice_graph::{MatchFormat, Matcher, policy_by_name, read_grug};

const RULE: &str = "INFO: =============================\n";

fn tiny() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/flux/ex1-tiny-high-allocate/tiny.graphml")
}

fn run_with(
    ws: &Workspace,
    policy: &str,
    filters: &str,
    format: MatchFormat,
    elapse: bool,
    commands: &str,
) -> Printed {
    run_on(&tiny(), ws, policy, filters, format, elapse, commands)
}

fn run_on(
    grug: &Path,
    ws: &Workspace,
    policy: &str,
    filters: &str,
    format: MatchFormat,
    elapse: bool,
    commands: &str,
) -> Printed {
    let graph = read_grug(grug).unwrap();
    let policy = policy_by_name(policy).unwrap();
    let matcher = Matcher::new(graph, "containment", policy, filters).unwrap();
    drive(matcher, format, elapse, &ws.dir, commands)
}

fn run(ws: &Workspace, policy: &str, commands: &str) -> Printed {
    run_with(
        ws,
        policy,
        "ALL:core,ALL:node",
        MatchFormat::Simple,
        false,
        commands,
    )
}

/// A jobspec with `resources` (YAML lines, indented by four) and a duration.
fn jobspec(resources: &str, duration: u64) -> String {
    format!(
        "version: 9999\nresources:\n{resources}attributes:\n  system:\n    duration: {duration}\ntasks:\n  - command: [ \"app\" ]\n    slot: default\n    count:\n      per_slot: 1\n"
    )
}

/// `cluster[1] → rack[1] → node[1] → slot[1] → socket[1] → core[1]`.
fn one_core() -> String {
    jobspec(
        "    - type: cluster\n      count: 1\n      with:\n        - type: rack\n          count: 1\n          with:\n            - type: node\n              count: 1\n              with:\n                - type: slot\n                  count: 1\n                  label: default\n                  with:\n                    - type: socket\n                      count: 1\n                      with:\n                        - type: core\n                          count: 1\n",
        3600,
    )
}

/// The lines of one vertex in `simple` form at `level`.
fn line(level: usize, name: &str, needs: u32, x: bool) -> String {
    format!(
        "      {}{name}[{needs}:{}]\n",
        "---".repeat(level),
        if x { "x" } else { "s" }
    )
}

/// The lines of a one-core match: `core` of `socket` of `node`, then the shared ancestors.
fn one_core_lines(node: u32, socket: u32, core: u32) -> String {
    [
        line(5, &format!("core{core}"), 1, true),
        line(4, &format!("socket{socket}"), 1, true),
        line(3, &format!("node{node}"), 1, false),
        line(2, "rack0", 1, false),
        line(1, "tiny0", 1, false),
    ]
    .concat()
}

fn scheduled(jobid: u64, mode: &str, at: &str) -> String {
    format!("{RULE}INFO: JOBID={jobid}\nINFO: RESOURCES={mode}\nINFO: SCHEDULED AT={at}\n{RULE}")
}

fn no_match(jobid: u64, unsatisfiable: bool) -> String {
    let unsat = if unsatisfiable {
        "INFO: Unsatisfiable request\n"
    } else {
        ""
    };
    format!("{RULE}INFO: No matching resources found\n{unsat}INFO: JOBID={jobid}\n{RULE}")
}

/// The `(node, socket, core, at)` of each one-core job of a `simple` output.
fn placements(out: &str) -> Vec<(String, String, String, String)> {
    let mut jobs = Vec::new();
    let mut names = Vec::new();
    for l in out.lines() {
        if let Some(at) = l.strip_prefix("INFO: SCHEDULED AT=") {
            let find = |p: &str| {
                names
                    .iter()
                    .find(|n: &&String| n.starts_with(p))
                    .cloned()
                    .unwrap_or_default()
            };
            jobs.push((find("node"), find("socket"), find("core"), at.to_owned()));
            names.clear();
        } else if !l.starts_with("INFO") {
            names.push(
                l.trim_start_matches([' ', '-'])
                    .split('[')
                    .next()
                    .unwrap()
                    .to_owned(),
            );
        }
    }
    jobs
}

#[test]
fn high_takes_the_highest_ids_and_a_socket_inside_a_slot_whole() {
    // §4.3 ex. 1's rule: high picks the highest node, socket and core; the socket is inside the
    // slot, so it is held exclusively and a second job takes the other socket.
    let ws = Workspace::new("high", &[("j.yaml", &one_core())]);
    let p = run(
        &ws,
        "high",
        "match allocate j.yaml\nmatch allocate j.yaml\nquit\n",
    );
    let expected = [
        one_core_lines(1, 1, 35),
        scheduled(1, "ALLOCATED", "Now"),
        one_core_lines(1, 0, 17),
        scheduled(2, "ALLOCATED", "Now"),
    ]
    .concat();
    assert_eq!(p.out, expected);
}

#[test]
fn low_takes_the_lowest_ids() {
    let ws = Workspace::new("low", &[("j.yaml", &one_core())]);
    let p = run(
        &ws,
        "low",
        "match allocate j.yaml\nmatch allocate j.yaml\nquit\n",
    );
    let expected = [
        one_core_lines(0, 0, 0),
        scheduled(1, "ALLOCATED", "Now"),
        one_core_lines(0, 1, 18),
        scheduled(2, "ALLOCATED", "Now"),
    ]
    .concat();
    assert_eq!(p.out, expected);
}

#[test]
fn a_failed_allocation_consumes_its_job_id() {
    // Four sockets, each held whole by one job: the fifth fails, still as JOBID=5, and the
    // sixth is JOBID=6 (§1.5 job-id rules).
    let ws = Workspace::new("ids", &[("j.yaml", &one_core())]);
    let p = run(&ws, "high", &"match allocate j.yaml\n".repeat(6));
    assert!(
        p.out
            .ends_with(&[no_match(5, false), no_match(6, false)].concat())
    );
    assert_eq!(p.out.matches("RESOURCES=ALLOCATED").count(), 4);
}

#[test]
fn first_spreads_across_nodes_and_reserves_at_span_ends() {
    // Reference §4.3 bonus: jobs 1-4 now on node1/s1/c35, node0/s1/c35, node1/s0/c17,
    // node0/s0/c17; jobs 5-8 at 3600; 9-10 at 7200.
    let ws = Workspace::new("first", &[("j.yaml", &one_core())]);
    let p = run(
        &ws,
        "first",
        &"match allocate_orelse_reserve j.yaml\n".repeat(10),
    );
    let got = placements(&p.out);
    let want: Vec<(&str, &str, &str)> = vec![
        ("node1", "socket1", "core35"),
        ("node0", "socket1", "core35"),
        ("node1", "socket0", "core17"),
        ("node0", "socket0", "core17"),
    ];
    for (i, (n, s, c)) in want.iter().enumerate() {
        assert_eq!((&got[i].0[..], &got[i].1[..], &got[i].2[..]), (*n, *s, *c));
        assert_eq!(got[i].3, "Now");
    }
    let times: Vec<&str> = got[4..].iter().map(|j| j.3.as_str()).collect();
    assert_eq!(times, ["3600", "3600", "3600", "3600", "7200", "7200"]);
    assert_eq!(p.out.matches("RESOURCES=RESERVED").count(), 6);
}

/// `node[1] → slot[1] → socket[2] → {core[5], gpu[1], memory[6]}` (reference §4.3 ex. 2).
fn two_sockets() -> String {
    jobspec(
        "    - type: node\n      count: 1\n      with:\n        - type: slot\n          count: 1\n          label: default\n          with:\n            - type: socket\n              count: 2\n              with:\n                - type: core\n                  count: 5\n                - type: gpu\n                  count: 1\n                - type: memory\n                  count: 6\n",
        3600,
    )
}

fn two_socket_lines(node: u32) -> String {
    let mut s = String::new();
    for (socket, first_core, gpu, first_mem) in [(0, 0, 0, 0), (1, 18, 1, 4)] {
        for c in first_core..first_core + 5 {
            s += &line(5, &format!("core{c}"), 1, true);
        }
        s += &line(5, &format!("gpu{gpu}"), 1, true);
        for m in first_mem..first_mem + 3 {
            // memory[6] over 2 GB pools: three whole pools, each printed with its size.
            s += &line(5, &format!("memory{m}"), 2, true);
        }
        s += &line(4, &format!("socket{socket}"), 1, true);
    }
    s + &line(3, &format!("node{node}"), 1, false)
        + &line(2, "rack0", 1, false)
        + &line(1, "tiny0", 1, false)
}

#[test]
fn orelse_reserve_books_whole_pools_two_jobs_per_span() {
    // §4.3 ex. 2: two jobs fit at a time (each needs both sockets of a node); lowest ids first;
    // reservations at the previous spans' ends, 3600 and 7200.
    let ws = Workspace::new("reserve", &[("j.yaml", &two_sockets())]);
    let p = run(
        &ws,
        "low",
        &"match allocate_orelse_reserve j.yaml\n".repeat(6),
    );
    let expected = [
        two_socket_lines(0),
        scheduled(1, "ALLOCATED", "Now"),
        two_socket_lines(1),
        scheduled(2, "ALLOCATED", "Now"),
        two_socket_lines(0),
        scheduled(3, "RESERVED", "3600"),
        two_socket_lines(1),
        scheduled(4, "RESERVED", "3600"),
        two_socket_lines(0),
        scheduled(5, "RESERVED", "7200"),
        two_socket_lines(1),
        scheduled(6, "RESERVED", "7200"),
    ]
    .concat();
    assert_eq!(p.out, expected);
}

/// `socket[1] → core[19]`: more cores than any socket has.
fn nineteen_cores() -> String {
    jobspec(
        "    - type: node\n      count: 1\n      with:\n        - type: slot\n          count: 1\n          label: default\n          with:\n            - type: socket\n              count: 1\n              with:\n                - type: core\n                  count: 19\n",
        3600,
    )
}

#[test]
fn unsatisfiable_requests_say_so_only_when_satisfiability_is_asked() {
    let ws = Workspace::new(
        "unsat",
        &[("big.yaml", &nineteen_cores()), ("j.yaml", &one_core())],
    );
    let p = run(
        &ws,
        "low",
        "match allocate big.yaml\nmatch allocate_with_satisfiability big.yaml\nmatch allocate_orelse_reserve big.yaml\nmatch satisfiability big.yaml\nmatch satisfiability j.yaml\nmatch allocate j.yaml\n",
    );
    let expected = [
        no_match(1, false),
        no_match(2, true),
        no_match(3, true),
        format!("{RULE}INFO: Unsatisfiable request\n{RULE}"),
        format!("{RULE}INFO: Satisfiable request\n{RULE}"),
        // satisfiability consumed no job id.
        one_core_lines(0, 0, 0),
        scheduled(4, "ALLOCATED", "Now"),
    ]
    .concat();
    assert_eq!(p.out, expected);
}

#[test]
fn unreadable_or_invalid_jobspecs_consume_no_job_id() {
    let bad = "version: 9999\nresources: []\ntasks: []\n";
    let ws = Workspace::new("bad", &[("bad.yaml", bad), ("j.yaml", &one_core())]);
    let p = run(
        &ws,
        "high",
        "match allocate missing.yaml\nmatch allocate bad.yaml\nmatch allocate j.yaml\n",
    );
    assert!(
        p.stderr.starts_with("ERROR: can't open missing.yaml\n"),
        "{}",
        p.stderr
    );
    // resource-query's line carries libjobspec's text alone; the place follows on its own.
    let line = (p.stderr.lines())
        .find(|l| l.starts_with("match_allocate: ERROR: Jobspec error for 1: "))
        .unwrap_or_else(|| panic!("{}", p.stderr));
    assert!(!line.contains("bad.yaml"), "{line}");
    assert!(p.stderr.contains("\n  at bad.yaml"), "{}", p.stderr);
    let expected = [
        no_match(1, false),
        one_core_lines(1, 1, 35),
        scheduled(1, "ALLOCATED", "Now"),
    ]
    .concat();
    assert_eq!(p.out, expected);
}

#[test]
fn hinodex_takes_the_whole_node_and_prints_every_vertex_under_it() {
    let ws = Workspace::new("nodex", &[("j.yaml", &one_core())]);
    let p = run(
        &ws,
        "hinodex",
        "match allocate j.yaml\nmatch allocate j.yaml\nmatch allocate j.yaml\n",
    );
    let mut whole = String::new();
    for (socket, cores, gpu, mems) in [(0, 0..18, 0, 0..4), (1, 18..36, 1, 4..8)] {
        for c in cores {
            whole += &line(5, &format!("core{c}"), 1, true);
        }
        whole += &line(5, &format!("gpu{gpu}"), 1, true);
        for m in mems {
            whole += &line(5, &format!("memory{m}"), 2, true);
        }
        whole += &line(4, &format!("socket{socket}"), 1, true);
    }
    let node = |n: u32| {
        whole.clone()
            + &line(3, &format!("node{n}"), 1, true)
            + &line(2, "rack0", 1, false)
            + &line(1, "tiny0", 1, false)
    };
    let expected = [
        node(1),
        scheduled(1, "ALLOCATED", "Now"),
        node(0),
        scheduled(2, "ALLOCATED", "Now"),
        no_match(3, false),
    ]
    .concat();
    assert_eq!(p.out, expected);
}

#[test]
fn exclusive_true_outside_a_slot_takes_that_vertex_whole() {
    let spec = one_core().replace(
        "            - type: node\n              count: 1\n",
        "            - type: node\n              count: 1\n              exclusive: true\n",
    );
    let ws = Workspace::new("excl", &[("x.yaml", &spec), ("j.yaml", &one_core())]);
    let p = run(
        &ws,
        "high",
        "match allocate x.yaml\nmatch allocate j.yaml\n",
    );
    // Job 1 holds node1 whole (all 72 lines under it), so job 2 lands on node0.
    let job1 = p.out.split(RULE).next().unwrap();
    assert_eq!(job1.lines().count(), 2 * (18 + 1 + 4 + 1) + 3);
    assert!(job1.contains(&line(3, "node1", 1, true)));
    assert!(
        p.out
            .ends_with(&[one_core_lines(0, 1, 35), scheduled(2, "ALLOCATED", "Now")].concat())
    );
}

#[test]
fn a_count_with_only_a_minimum_takes_everything_available() {
    let spec = jobspec(
        "    - type: node\n      count: 1\n      with:\n        - type: socket\n          count: 1\n          with:\n            - type: slot\n              count: 1\n              label: default\n              with:\n                - type: core\n                  count:\n                    min: 1\n",
        3600,
    );
    let ws = Workspace::new("min", &[("j.yaml", &spec)]);
    let p = run(&ws, "high", "match allocate j.yaml\n");
    let mut expected = String::new();
    for c in 18..36 {
        expected += &line(5, &format!("core{c}"), 1, true);
    }
    // The socket is above the slot: shared, like every omitted prefix level.
    expected += &line(4, "socket1", 1, false);
    expected += &line(3, "node1", 1, false);
    expected += &line(2, "rack0", 1, false);
    expected += &line(1, "tiny0", 1, false);
    expected += &scheduled(1, "ALLOCATED", "Now");
    assert_eq!(p.out, expected);
}

#[test]
fn cancel_frees_a_job_and_reports_its_walk_on_request() {
    let ws = Workspace::new("cancel", &[("j.yaml", &one_core())]);
    let p = run(
        &ws,
        "high",
        "match allocate j.yaml\nmatch allocate j.yaml\ncancel 1 stats\ncancel 1\nmatch allocate j.yaml\ninfo 1\ninfo 3\ncancel 9\n",
    );
    // Job 1 held tiny0, rack0, node1, socket1, core35: the walk from the root visits those five
    // and stops at each unheld child (node0; socket0; socket1's other 22 children): 29 and 5.
    let stats = format!(
        "{RULE}INFO: CANCEL PREORDER COUNT=\"29\"\nINFO: CANCEL POSTORDER COUNT=\"5\"\n{RULE}"
    );
    let expected = [
        one_core_lines(1, 1, 35),
        scheduled(1, "ALLOCATED", "Now"),
        one_core_lines(1, 0, 17),
        scheduled(2, "ALLOCATED", "Now"),
        stats,
        one_core_lines(1, 1, 35),
        scheduled(3, "ALLOCATED", "Now"),
    ]
    .concat();
    assert_eq!(p.out, expected);
    assert_eq!(
        p.stderr,
        "cancel: ERROR: nonexistent job 1\ncancel: ERROR: nonexistent job 9\n"
    );
    let info: Vec<&str> = p.stdout.lines().collect();
    assert!(
        info[0].starts_with("INFO: 1, CANCELED, 0, j.yaml, "),
        "{}",
        info[0]
    );
    assert!(
        info[1].starts_with("INFO: 3, ALLOCATED, 0, j.yaml, "),
        "{}",
        info[1]
    );
}

#[test]
fn a_down_node_is_skipped_and_status_is_reported() {
    let ws = Workspace::new("status", &[("j.yaml", &one_core())]);
    let p = run(
        &ws,
        "high",
        "set-status /tiny0/rack0/node1 down\nget-status /tiny0/rack0/node1\nmatch allocate j.yaml\nset-status /tiny0/rack0/node1 up\nget-status /tiny0/rack0/node1\nget-status /tiny0/nowhere\nset-status /tiny0/rack0/node1 sideways\n",
    );
    let expected = [
        "/tiny0/rack0/node1 is down\n".to_owned(),
        one_core_lines(0, 1, 35),
        scheduled(1, "ALLOCATED", "Now"),
        "/tiny0/rack0/node1 is up\n".to_owned(),
        "Could not find path /tiny0/nowhere in resource graph.\n".to_owned(),
    ]
    .concat();
    assert_eq!(p.out, expected);
    assert_eq!(p.stderr, "ERROR: unrecognized status\n");
}

#[test]
fn properties_are_set_replaced_and_listed_in_key_order() {
    let ws = Workspace::new("props", &[]);
    let p = run(
        &ws,
        "high",
        "get-property /tiny0/rack0/node0\nset-property /tiny0/rack0/node0 perf_class=3\nset-property /tiny0/rack0/node0 alpha=1\nset-property /tiny0/rack0/node0 perf_class=2\nget-property /tiny0/rack0/node0\nset-property /tiny0/rack0/node0 novalue=\nset-property /tiny0/x a=b\n",
    );
    assert_eq!(
        p.out,
        "No properties were found for /tiny0/rack0/node0 (vtx's uniq_id=2).\nalpha=1\nperf_class=2\nIncorrect input format. \nPlease use `set-property <resource> PROPERTY=VALUE`.\nCouldn't find path /tiny0/x in resource graph.\n"
    );
}

#[test]
fn pretty_simple_prints_the_root_first_with_words() {
    let ws = Workspace::new("pretty", &[("j.yaml", &one_core())]);
    let p = run_with(
        &ws,
        "high",
        "ALL:core,ALL:node",
        MatchFormat::PrettySimple,
        false,
        "match allocate j.yaml\n",
    );
    let expected = [
        "      ---tiny0[1:shared]\n",
        "      ------rack0[1:shared]\n",
        "      ---------node1[1:shared]\n",
        "      ------------socket1[1:exclusive]\n",
        "      ---------------core35[1:exclusive]\n",
    ]
    .concat()
        + &scheduled(1, "ALLOCATED", "Now");
    assert_eq!(p.out, expected);
}

#[test]
fn prune_filters_do_not_change_what_high_chooses() {
    // t3011 runs one expected file under several filter sets.
    let ws = Workspace::new("filters", &[("j.yaml", &one_core())]);
    let commands = "match allocate_orelse_reserve j.yaml\n".repeat(6);
    let reference = run(&ws, "high", &commands).out;
    for filters in [
        "ALL:core",
        "ALL:core,ALL:gpu",
        "ALL:core,ALL:gpu,ALL:memory",
    ] {
        let p = run_with(&ws, "high", filters, MatchFormat::Simple, false, &commands);
        assert_eq!(p.out, reference, "filters {filters}");
    }
}

#[test]
fn visit_counts_follow_the_traversal() {
    // Reference §6.2 (t3029): tiny, node → socket → slot → core[18]: high visits 100/80,
    // 77/61, 52/41, 29/22 for four jobs; first 27/22 each.
    let spec = jobspec(
        "    - type: node\n      count: 1\n      with:\n        - type: socket\n          count: 1\n          with:\n            - type: slot\n              count: 1\n              label: default\n              with:\n                - type: core\n                  count: 18\n",
        3600,
    );
    let ws = Workspace::new("visits", &[("j.yaml", &spec)]);
    let commands = "match allocate j.yaml\n".repeat(4);
    let counts = |policy: &str| {
        let p = run_with(
            &ws,
            policy,
            "ALL:core,ALL:node",
            MatchFormat::Simple,
            true,
            &commands,
        );
        let values = |key: &str| -> Vec<u32> {
            p.stdout
                .lines()
                .filter_map(|l| l.strip_prefix(key))
                .map(|v| v.parse().unwrap())
                .collect()
        };
        let pre = values("INFO: PREORDER VISIT COUNT=");
        let post = values("INFO: POSTORDER VISIT COUNT=");
        pre.into_iter().zip(post).collect::<Vec<_>>()
    };
    assert_eq!(counts("high"), [(100, 80), (77, 61), (52, 41), (29, 22)]);
    assert_eq!(counts("first"), [(27, 22); 4]);
}

#[test]
fn siblings_of_one_type_are_refused_with_resource_querys_message() {
    let spec = jobspec(
        "    - type: node\n      count: 1\n      with:\n        - type: slot\n          count: 1\n          label: default\n          with:\n            - type: core\n              count: 1\n            - type: core\n              count: 1\n",
        3600,
    );
    let ws = Workspace::new("siblings", &[("j.yaml", &spec)]);
    let p = run(
        &ws,
        "high",
        "match allocate j.yaml\nmatch allocate j.yaml\n",
    );
    assert_eq!(p.out, [no_match(1, false), no_match(2, false)].concat());
    assert!(
        p.stderr
            .contains("siblings in jobspec request same resource type : core")
    );
}

#[test]
fn comments_unknown_words_and_everything_after_quit_are_ignored() {
    let ws = Workspace::new("quit", &[("j.yaml", &one_core())]);
    let p = run(
        &ws,
        "high",
        "# a comment\n\nfrobnicate now\nm allocate j.yaml\nq\nmatch allocate j.yaml\n",
    );
    assert_eq!(
        p.out,
        [one_core_lines(1, 1, 35), scheduled(1, "ALLOCATED", "Now")].concat()
    );
    let p = run(
        &ws,
        "high",
        "match allocate\nmatch sideways j.yaml\nhelp cancel\nhelp nothing\n",
    );
    assert_eq!(
        p.stderr,
        "ERROR: malformed command\nERROR: unknown subcmd sideways\n"
    );
    assert_eq!(
        p.stdout,
        "INFO: cancel (c) -- Cancel an allocation or reservation: resource-query> cancel jobid (optional subcmd: stats)\nERROR: unknown command: nothing\n"
    );
}

#[test]
fn multi_match_runs_each_jobspec_with_its_own_id() {
    let ws = Workspace::new("multi", &[("j.yaml", &one_core())]);
    let p = run(
        &ws,
        "high",
        "multi-match allocate j.yaml j.yaml\nM allocate j.yaml\n",
    );
    assert_eq!(p.stderr, "ERROR: malformed command\n");
    assert_eq!(
        p.out,
        [
            one_core_lines(1, 1, 35),
            scheduled(1, "ALLOCATED", "Now"),
            one_core_lines(1, 0, 17),
            scheduled(2, "ALLOCATED", "Now"),
        ]
        .concat()
    );
}

/// The JGF of job 1 under `high` (core35 of node1's socket1; uniq ids by creation order:
/// tiny0 0, rack0 1, node0-1 2-3, sockets 4-7, cores 8-79).
fn job1_jgf() -> String {
    let vertex =
        |uniq: u32, meta: &str| format!("{{\"id\": \"{uniq}\", \"metadata\": {{{meta}}}}}");
    let path = |p: &str| format!("\"paths\": {{\"containment\": \"{p}\"}}");
    let nodes = [
        vertex(
            79,
            &format!(
                "\"type\": \"core\", \"id\": 35, \"rank\": -1, \"exclusive\": true, {}",
                path("/tiny0/rack0/node1/socket1/core35")
            ),
        ),
        vertex(
            7,
            &format!(
                "\"type\": \"socket\", \"id\": 1, \"rank\": -1, \"exclusive\": true, {}",
                path("/tiny0/rack0/node1/socket1")
            ),
        ),
        vertex(
            3,
            &format!(
                "\"type\": \"node\", \"id\": 1, \"rank\": 1, {}",
                path("/tiny0/rack0/node1")
            ),
        ),
        vertex(
            1,
            &format!(
                "\"type\": \"rack\", \"id\": 0, \"rank\": -1, {}",
                path("/tiny0/rack0")
            ),
        ),
        vertex(
            0,
            &format!(
                "\"type\": \"cluster\", \"basename\": \"tiny\", \"id\": 0, \"rank\": -1, {}",
                path("/tiny0")
            ),
        ),
    ];
    let edge = |s: u32, t: u32| format!("{{\"source\": \"{s}\", \"target\": \"{t}\"}}");
    let edges = [edge(7, 79), edge(3, 7), edge(1, 3), edge(0, 1)];
    format!(
        "{{\"graph\": {{\"nodes\": [{}], \"edges\": [{}]}}}}",
        nodes.join(", "),
        edges.join(", ")
    )
}

#[test]
fn json_writers_print_jansson_bytes() {
    let ws = Workspace::new("json", &[("j.yaml", &one_core())]);
    let run_format = |format: MatchFormat| {
        run_with(
            &ws,
            "high",
            "ALL:core,ALL:node",
            format,
            false,
            "match allocate j.yaml\n",
        )
        .out
    };
    let block = scheduled(1, "ALLOCATED", "Now");
    let r_lite = "[{\"rank\": \"1\", \"children\": {\"core\": \"35\"}}]";
    assert_eq!(run_format(MatchFormat::Rlite), format!("{r_lite}\n{block}"));
    let execution = format!(
        "\"execution\": {{\"R_lite\": {r_lite}, \"nodelist\": [\"node1\"], \"starttime\": 0, \"expiration\": 3600}}"
    );
    assert_eq!(
        run_format(MatchFormat::Rv1Nosched),
        format!("{{\"version\": 1, {execution}}}\n{block}")
    );
    assert_eq!(
        run_format(MatchFormat::Jgf),
        format!("{}\n{block}", job1_jgf())
    );
    assert_eq!(
        run_format(MatchFormat::Rv1),
        format!(
            "{{\"version\": 1, {execution}, \"scheduling\": {}}}\n{block}",
            job1_jgf()
        )
    );
}

#[test]
fn rlite_groups_nodes_with_the_same_children_and_compresses_ids() {
    // Two nodes, each giving cores 0-4 and 18-22 and gpus 0-1: one entry for ranks 0-1.
    let ws = Workspace::new("rlite", &[("j.yaml", &two_sockets())]);
    let commands = "match allocate j.yaml\n";
    let p = run_with(
        &ws,
        "low",
        "ALL:core,ALL:node",
        MatchFormat::Rlite,
        false,
        commands,
    );
    assert!(
        p.out.starts_with(
            "[{\"rank\": \"0\", \"children\": {\"core\": \"0-4,18-22\", \"gpu\": \"0-1\"}}]\n"
        ),
        "{}",
        p.out
    );
    let spec = two_sockets().replace(
        "    - type: node\n      count: 1\n",
        "    - type: node\n      count: 2\n",
    );
    let ws = Workspace::new("rlite2", &[("j.yaml", &spec)]);
    let p = run_with(
        &ws,
        "low",
        "ALL:core,ALL:node",
        MatchFormat::Rv1Nosched,
        false,
        commands,
    );
    assert!(p.out.starts_with("{\"version\": 1, \"execution\": {\"R_lite\": [{\"rank\": \"0-1\", \"children\": {\"core\": \"0-4,18-22\", \"gpu\": \"0-1\"}}], \"nodelist\": [\"node[0-1]\"], \"starttime\": 0, \"expiration\": 3600}}\n"), "{}", p.out);
}

fn expression(criteria: &str) -> String {
    format!("{RULE}INFO: EXPRESSION=\"{criteria}\"\n{RULE}")
}

#[test]
fn find_prints_matching_vertices_their_ancestors_and_what_they_inherit() {
    let ws = Workspace::new("find", &[("j.yaml", &one_core())]);
    let p = run(
        &ws,
        "high",
        "match allocate j.yaml\nfind sched-now=allocated\nfind names=node1\nfind status=down or (names=rack0 and status=up)\nfind bogus=1\nfind\n",
    );
    // socket1 is planned for the job, so everything under it counts as allocated; every
    // vertex is printed whole and exclusive, ancestors included.
    let mut allocated = String::new();
    for c in 18..36 {
        allocated += &line(5, &format!("core{c}"), 1, true);
    }
    allocated += &line(5, "gpu1", 1, true);
    for m in 4..8 {
        allocated += &line(5, &format!("memory{m}"), 2, true);
    }
    allocated += &line(4, "socket1", 1, true);
    let ancestors =
        line(3, "node1", 1, true) + &line(2, "rack0", 1, true) + &line(1, "tiny0", 1, true);
    let expected = [
        one_core_lines(1, 1, 35),
        scheduled(1, "ALLOCATED", "Now"),
        allocated + &ancestors,
        expression("sched-now=allocated"),
        ancestors,
        expression("names=node1"),
        line(2, "rack0", 1, true) + &line(1, "tiny0", 1, true),
        expression("status=down or (names=rack0 and status=up)"),
    ]
    .concat();
    assert_eq!(p.out, expected);
    assert_eq!(p.stderr, "ERROR: malformed command: \n");
}

#[test]
fn a_down_rack_takes_its_nodes_out_of_the_up_count() {
    // set-status marks only the rack, but its two nodes leave the up count, so a one-node
    // request fails request_feasible before any walk: never now (allocate), unsatisfiable when
    // asked (allocate_with_satisfiability). A satisfiability walk ignores status.
    let ws = Workspace::new("rack", &[("j.yaml", &one_core())]);
    let p = run(
        &ws,
        "high",
        "set-status /tiny0/rack0 down\nget-status /tiny0/rack0/node0\nmatch allocate j.yaml\nmatch allocate_with_satisfiability j.yaml\nmatch satisfiability j.yaml\nset-status /tiny0/rack0 up\nmatch allocate j.yaml\n",
    );
    let expected = [
        "/tiny0/rack0/node0 is up\n".to_owned(),
        no_match(1, false),
        no_match(2, true),
        format!("{RULE}INFO: Satisfiable request\n{RULE}"),
        one_core_lines(1, 1, 35),
        scheduled(3, "ALLOCATED", "Now"),
    ]
    .concat();
    assert_eq!(p.out, expected);
}

#[test]
fn variation_takes_the_lowest_perf_class_first_ties_in_walk_order() {
    // cluster0 → node0-3 → core0-3. Classes: node0 3, node1 1, node2 2, node3 1, cores none
    // (9999). Lower classes first; ties (node1/node3, the cores) keep the walk's order.
    let body = [
        common::node("cluster", "cluster", true, ""),
        common::node("node", "node", false, ""),
        common::node("core", "core", false, ""),
        common::edge("cluster", "node", &[("multi_scale", "4")]),
        common::edge("node", "core", &[("multi_scale", "4")]),
    ]
    .concat();
    let spec = jobspec(
        "    - type: node\n      count: 1\n      with:\n        - type: slot\n          count: 1\n          label: default\n          with:\n            - type: core\n              count: 1\n",
        3600,
    );
    let ws = Workspace::new(
        "variation",
        &[("j.yaml", &spec), ("g.graphml", &common::document(&body))],
    );
    let mut commands = String::new();
    for (node, class) in [(0, "3"), (1, "1"), (2, "2"), (3, "1x")] {
        commands += &format!("set-property /cluster0/node{node} perf_class={class}\n");
    }
    commands += &"match allocate j.yaml\n".repeat(9);
    let p = run_on(
        &ws.dir.join("g.graphml"),
        &ws,
        "variation",
        "ALL:core,ALL:node",
        MatchFormat::Simple,
        false,
        &commands,
    );
    let job = |id: u64, node: u32, core: u32| {
        format!(
            "      ---------core{core}[1:x]\n      ------node{node}[1:s]\n      ---cluster0[1:s]\n"
        ) + &scheduled(id, "ALLOCATED", "Now")
    };
    // "1x" reads as 1, as stoi does.
    let expected = [
        job(1, 1, 0),
        job(2, 1, 1),
        job(3, 1, 2),
        job(4, 1, 3),
        job(5, 3, 0),
        job(6, 3, 1),
        job(7, 3, 2),
        job(8, 3, 3),
        job(9, 2, 0),
    ]
    .concat();
    assert_eq!(p.out, expected);
}

#[test]
fn locality_keeps_a_job_on_contiguous_ids_where_high_spreads_over_equal_scores() {
    // cluster0 → node0, node1 → core0-3 each (ids local to the node). Two one-core slots are
    // chosen at the root among every free core; each node hands its slots up highest first.
    // high: the two best scores are node0's and node1's core3 (equal; a stable order keeps the
    // walk's). locality: all scores form one run of consecutive values, so every candidate
    // ranks equal and the walk's order decides: node0's core3 then core2.
    let body = [
        common::node("cluster", "cluster", true, ""),
        common::node("node", "node", false, ""),
        common::node("core", "core", false, ""),
        common::edge("cluster", "node", &[("multi_scale", "2")]),
        common::edge("node", "core", &[("multi_scale", "4")]),
    ]
    .concat();
    let spec = jobspec(
        "    - type: slot\n      count: 2\n      label: default\n      with:\n        - type: core\n          count: 1\n",
        3600,
    );
    let ws = Workspace::new(
        "locality",
        &[("two.yaml", &spec), ("g.graphml", &common::document(&body))],
    );
    let run_policy = |policy: &str| {
        run_on(
            &ws.dir.join("g.graphml"),
            &ws,
            policy,
            "ALL:core,ALL:node",
            MatchFormat::Simple,
            false,
            "match allocate two.yaml\nmatch allocate two.yaml\n",
        )
        .out
    };
    let node = |n: u32, cores: &[u32]| {
        cores
            .iter()
            .map(|c| line(3, &format!("core{c}"), 1, true))
            .collect::<String>()
            + &line(2, &format!("node{n}"), 1, false)
    };
    let root = line(1, "cluster0", 1, false);
    assert_eq!(
        run_policy("locality"),
        [
            node(0, &[2, 3]) + &root,
            scheduled(1, "ALLOCATED", "Now"),
            node(0, &[0, 1]) + &root,
            scheduled(2, "ALLOCATED", "Now"),
        ]
        .concat()
    );
    assert_eq!(
        run_policy("high"),
        [
            node(0, &[3]) + &node(1, &[3]) + &root,
            scheduled(1, "ALLOCATED", "Now"),
            node(0, &[2]) + &node(1, &[2]) + &root,
            scheduled(2, "ALLOCATED", "Now"),
        ]
        .concat()
    );
}

#[test]
fn without_allocating_prints_the_match_and_plans_nothing() {
    // MATCHED, under the current job id, which it does not consume; the next allocation gets
    // the same resources.
    let ws = Workspace::new("noalloc", &[("j.yaml", &one_core())]);
    let p = run(
        &ws,
        "high",
        "match without_allocating j.yaml\nmatch allocate j.yaml\nmatch without_allocating_future j.yaml\ninfo 1\n",
    );
    let expected = [
        one_core_lines(1, 1, 35),
        scheduled(1, "MATCHED", "Now"),
        one_core_lines(1, 1, 35),
        scheduled(1, "ALLOCATED", "Now"),
        one_core_lines(1, 0, 17),
        scheduled(2, "MATCHED", "Now"),
    ]
    .concat();
    assert_eq!(p.out, expected);
    assert!(
        p.stdout.starts_with("INFO: 1, ALLOCATED, 0, j.yaml, "),
        "{}",
        p.stdout
    );
}
