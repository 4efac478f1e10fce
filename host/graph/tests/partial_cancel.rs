//! `partial-cancel` as resource-query runs it (reference §1.3; Fluxion's `dfu_impl_t::remove`
//! with an R): GRUG or JGF graph + jobspecs + R files + commands → expected bytes, worked out
//! from the rules: a rank's vertices are cancelled whole, its ancestors give the freed counts
//! back from their subtree aggregates, and the job is gone when the root no longer carries it.

mod r_common;

use r_common::{
    RULE, Workspace, cores_on_nodes, no_match, ranked, ranked_cores, run_on, rv1, scheduled,
};
use serde_json::{Value, json};
use sluice_graph::MatchFormat;

/// A JGF R naming cores `cores` of `node` (rank = node) of the ranked graph.
fn jgf_cores(node: u32, cores: &[u32]) -> String {
    let nodes: Vec<Value> = cores
        .iter()
        .map(|c| {
            json!({"id": format!("{}", 100 + 10 * node + c), "metadata": {
                "type": "core", "basename": "core", "name": format!("core{c}"), "id": c,
                "rank": node, "exclusive": true, "size": 1,
                "paths": {"containment": format!("/cluster0/node{node}/core{c}")}}})
        })
        .collect();
    json!({"graph": {"nodes": nodes, "edges": []}}).to_string()
}

/// Both nodes' four cores for job 1, then one rank released by `release1` and the other by
/// `release0`, each followed by what a four-core job finds free.
fn release_one_rank_then_the_other(reader: &str, release1: &str, release0: &str) {
    let ws = Workspace::new(
        &format!("pc-{reader}"),
        &[
            ("all.yaml", &cores_on_nodes(2, 4)),
            ("four.yaml", &cores_on_nodes(1, 4)),
            ("r1.json", release1),
            ("r0.json", release0),
        ],
    );
    let p = run_on(
        ranked(),
        &ws,
        "low",
        MatchFormat::Simple,
        &format!(
            "match allocate all.yaml\npartial-cancel 1 {reader} r1.json\nmatch allocate four.yaml\nmatch allocate four.yaml\ninfo 1\npartial-cancel 1 {reader} r0.json stats\ninfo 1\ncancel 1\nmatch allocate four.yaml\nquit\n"
        ),
    );
    let job1 = [
        ranked_cores(0, &[0, 1, 2, 3]),
        ranked_cores(1, &[0, 1, 2, 3]),
    ]
    .concat();
    // Job 1's two node subtrees print as one post-order walk: the cluster once, last.
    let job1 = job1.replacen("      ---cluster0[1:s]\n", "", 1);
    let expected = [
        job1,
        scheduled(1, "ALLOCATED", "Now"),
        // Rank 1 is free again; rank 0 is still job 1's.
        ranked_cores(1, &[0, 1, 2, 3]),
        scheduled(2, "ALLOCATED", "Now"),
        no_match(3),
        // Releasing a rank walks nothing: both counts are 0.
        format!(
            "{RULE}INFO: PARTIAL CANCEL PREORDER COUNT=\"0\"\nINFO: PARTIAL CANCEL POSTORDER COUNT=\"0\"\n{RULE}"
        ),
        ranked_cores(0, &[0, 1, 2, 3]),
        scheduled(4, "ALLOCATED", "Now"),
    ]
    .concat();
    assert_eq!(p.out, expected);
    assert_eq!(p.stderr, "cancel: ERROR: nonexistent job 1\n");
    let info: Vec<&str> = p.stdout.lines().collect();
    assert_eq!(info.len(), 2, "{}", p.stdout);
    assert!(info[0].starts_with("INFO: 1, ALLOCATED, 0, all.yaml, "));
    assert!(info[1].starts_with("INFO: 1, CANCELED, 0, all.yaml, "));
}

#[test]
fn rv1exec_releases_whole_ranks_and_the_last_one_ends_the_job() {
    release_one_rank_then_the_other(
        "rv1exec",
        &rv1("1", &[("core", "0-3")], "node1"),
        &rv1("0", &[("core", "0-3")], "node0"),
    );
}

#[test]
fn jgf_releases_the_vertices_it_names_and_the_last_ones_end_the_job() {
    release_one_rank_then_the_other(
        "jgf",
        &jgf_cores(1, &[0, 1, 2, 3]),
        &jgf_cores(0, &[0, 1, 2, 3]),
    );
}

#[test]
fn releasing_everything_at_once_is_a_full_cancel() {
    let both = {
        let mut a: Value = serde_json::from_str(&jgf_cores(0, &[0, 1, 2, 3])).unwrap();
        let b: Value = serde_json::from_str(&jgf_cores(1, &[0, 1, 2, 3])).unwrap();
        let more = b["graph"]["nodes"].as_array().unwrap().clone();
        a["graph"]["nodes"].as_array_mut().unwrap().extend(more);
        a.to_string()
    };
    let ws = Workspace::new(
        "pc-full",
        &[
            ("all.yaml", &cores_on_nodes(2, 4)),
            ("both.json", &both),
            ("ranks.json", &rv1("0-1", &[("core", "0-3")], "node[0-1]")),
        ],
    );
    for (reader, file) in [("jgf", "both.json"), ("rv1exec", "ranks.json")] {
        let p = run_on(
            ranked(),
            &ws,
            "low",
            MatchFormat::Simple,
            &format!(
                "match allocate all.yaml\npartial-cancel 1 {reader} {file}\ninfo 1\nmatch allocate all.yaml\nquit\n"
            ),
        );
        // The second job gets exactly what the first had.
        let lines = &p.out[..p.out.find(RULE).unwrap()];
        let expected = [
            lines,
            &scheduled(1, "ALLOCATED", "Now"),
            lines,
            &scheduled(2, "ALLOCATED", "Now"),
        ]
        .concat();
        assert_eq!(p.out, expected, "{reader}");
        assert!(
            p.stdout.starts_with("INFO: 1, CANCELED, 0, all.yaml, "),
            "{reader}"
        );
        assert_eq!(p.stderr, "", "{reader}");
    }
}

#[test]
fn refusals_use_resource_querys_messages_and_leave_the_job_alone() {
    let ws = Workspace::new(
        "pc-errors",
        &[
            ("all.yaml", &cores_on_nodes(2, 4)),
            ("one.yaml", &cores_on_nodes(1, 4)),
            ("r1.json", &rv1("1", &[("core", "0-3")], "node1")),
            ("r5.json", &rv1("5", &[("core", "0")], "node5")),
            ("bad.json", "{\"version\": 1, \"execution\":"),
            (
                "v2.json",
                "{\"version\": 2, \"execution\": {\"R_lite\": []}}",
            ),
            ("other.json", &jgf_cores(1, &[0])),
        ],
    );
    // Job 1 holds node0's cores only; job 2 is a reservation.
    let p = run_on(
        ranked(),
        &ws,
        "low",
        MatchFormat::Simple,
        "match allocate one.yaml\nmatch allocate_orelse_reserve all.yaml\n\
         partial-cancel 1 rv1exec\n\
         partial-cancel 1 hwloc r1.json\n\
         partial-cancel 1 rv1exec missing.json\n\
         partial-cancel 7 rv1exec r1.json\n\
         partial-cancel 2 rv1exec r1.json\n\
         partial-cancel 1 rv1exec bad.json stats\n\
         partial-cancel 1 rv1exec v2.json\n\
         partial-cancel 1 rv1exec r5.json\n\
         partial-cancel 1 rv1exec r1.json\n\
         partial-cancel 1 jgf other.json\n\
         partial-cancel 1 jgf bad.json\n\
         info 1\nquit\n",
    );
    let failed = "ERROR: error encountered while removing job 1\n";
    assert_eq!(
        p.stderr,
        [
            "ERROR: malformed command\n",
            "ERROR: unsupported reader hwloc\n",
            "ERROR: can't open missing.json\n",
            "ERROR: nonexistent job 7\n",
            "ERROR: reservations not currently supported by partial cancel\n",
            failed,
            failed,
            failed,
            failed,
            failed,
            failed,
        ]
        .concat()
    );
    let reader = "remove: partial_cancel returned error.\n";
    let info = p.stdout.lines().last().unwrap();
    assert_eq!(
        &p.stdout[..p.stdout.len() - info.len() - 1],
        [
            reader,
            reader,
            "remove5 not found in by_rank map.\n",
            // Rank 1 has no vertex of job 1, so nothing of it was freed.
            "remove: 1 not found in rank_to_counts.\n",
            // node1's core0 is not job 1's.
            reader,
            reader,
        ]
        .concat()
    );
    assert!(
        info.starts_with("INFO: 1, ALLOCATED, 0, one.yaml, "),
        "{info}"
    );
    // A failed release still prints the requested counts.
    assert!(
        p.out.contains("PARTIAL CANCEL PREORDER COUNT=\"0\""),
        "{}",
        p.out
    );
}
