//! `update` as resource-query runs it (reference §1.3; Fluxion's `update_run` and its `jgf` and
//! `rv1exec` readers): graph + jobspecs + R files + commands → expected bytes. The rules: a
//! replayed R plans, tags and prints its vertices as the match that made it did, the job then
//! exists for `info` and `cancel`, the job-id counter continues after the replayed id, and
//! refusals carry resource-query's messages.

mod r_common;

use r_common::{
    Workspace, cores_on_nodes, jobspec, line, no_match, ranked, run_on, rv1, scheduled, tiny,
};
use serde_json::Value;
use sluice_graph::MatchFormat;

/// `cluster → rack → node → slot → socket[1] → core[cores]` on tiny.
fn socket_cores(cores: u32) -> String {
    jobspec(
        &format!(
            "    - type: cluster\n      count: 1\n      with:\n        - type: rack\n          count: 1\n          with:\n            - type: node\n              count: 1\n              with:\n                - type: slot\n                  count: 1\n                  label: default\n                  with:\n                    - type: socket\n                      count: 1\n                      with:\n                        - type: core\n                          count: {cores}\n"
        ),
        3600,
    )
}

/// The R of each job in a `-F jgf` output, with its `SCHEDULED AT` time.
fn rs_of(out: &str) -> Vec<(String, String)> {
    let mut rs = Vec::new();
    let mut r = None;
    for l in out.lines() {
        if let Some(at) = l.strip_prefix("INFO: SCHEDULED AT=") {
            let at = if at == "Now" { "0" } else { at };
            rs.push((r.take().unwrap(), at.to_owned()));
        } else if !l.starts_with("INFO:") {
            r = Some(l.to_owned());
        }
    }
    rs
}

/// Runs `matches` (`op file` per job) with `-F jgf`, then replays each job's R in a fresh
/// session, or matches it again where `replayed[i]` is false: the bytes must be the same.
fn replay_equals_match(name: &str, js: &str, ops: &[&str], replayed: &[bool]) {
    let ws = Workspace::new(name, &[("j.yaml", js)]);
    let commands: String = ops
        .iter()
        .map(|op| format!("match {op} j.yaml\n"))
        .collect();
    let first = run_on(tiny(), &ws, "high", MatchFormat::Jgf, &commands);
    let rs = rs_of(&first.out);
    assert_eq!(rs.len(), ops.len(), "{}", first.out);
    let mut commands = String::new();
    for (i, ((r, at), op)) in rs.iter().zip(ops).enumerate() {
        let jobid = i + 1;
        if replayed[i] {
            ws.write(&format!("r{jobid}.json"), r);
            let sub = if at == "0" { "allocate" } else { "reserve" };
            commands += &format!("update {sub} jgf r{jobid}.json {jobid} {at} 3600\n");
        } else {
            commands += &format!("match {op} j.yaml\n");
        }
    }
    commands += "info 1\nquit\n";
    let second = run_on(tiny(), &ws, "high", MatchFormat::Jgf, &commands);
    assert_eq!(second.out, first.out);
    assert_eq!(second.stderr, "");
    let expected_file = if replayed[0] { "r1.json" } else { "j.yaml" };
    assert!(
        second
            .stdout
            .starts_with(&format!("INFO: 1, ALLOCATED, 0, {expected_file}, ")),
        "{}",
        second.stdout
    );
}

#[test]
fn replaying_each_jobs_r_prints_what_matching_printed() {
    replay_equals_match(
        "upd-all",
        &socket_cores(1),
        &["allocate"; 4],
        &[true, true, true, true],
    );
}

#[test]
fn replayed_and_matched_jobs_mix_and_ids_continue_after_a_replay() {
    replay_equals_match(
        "upd-mixed",
        &socket_cores(1),
        &["allocate"; 4],
        &[true, false, true, false],
    );
}

#[test]
fn reservations_replay_at_their_start_time() {
    // Four whole sockets now, two more an hour later.
    replay_equals_match(
        "upd-reserve",
        &socket_cores(18),
        &["allocate_orelse_reserve"; 6],
        &[true, true, true, true, true, true],
    );
}

#[test]
fn rv1exec_claims_the_named_children_and_their_node() {
    let ws = Workspace::new(
        "upd-rv1",
        &[
            ("part.json", &rv1("1", &[("core", "0-1")], "node1")),
            ("three.yaml", &cores_on_nodes(2, 3)),
        ],
    );
    let p = run_on(
        ranked(),
        &ws,
        "low",
        MatchFormat::Simple,
        "update allocate rv1exec part.json 5 0 3600\nmatch allocate three.yaml\ncancel 5\nmatch allocate three.yaml\ninfo 5\nquit\n",
    );
    let replayed = [
        line(3, "core0", 1, true),
        line(3, "core1", 1, true),
        // The rv1exec reader marks the node's edge exclusive.
        line(2, "node1", 1, true),
        line(1, "cluster0", 1, false),
    ]
    .concat();
    let three = |node: u32| {
        [
            line(3, "core0", 1, true),
            line(3, "core1", 1, true),
            line(3, "core2", 1, true),
            line(2, &format!("node{node}"), 1, false),
        ]
        .concat()
    };
    let expected = [
        replayed,
        scheduled(5, "ALLOCATED", "Now"),
        // node1 has two cores left, and the counter went on from 5.
        no_match(6),
        three(0),
        three(1),
        line(1, "cluster0", 1, false),
        scheduled(7, "ALLOCATED", "Now"),
    ]
    .concat();
    assert_eq!(p.out, expected);
    assert_eq!(p.stderr, "");
    assert!(p.stdout.starts_with("INFO: 5, CANCELED, 0, part.json, "));
}

#[test]
fn rv1exec_r_written_by_a_match_replays_to_the_same_r() {
    let ws = Workspace::new("upd-rv1-round", &[("j.yaml", &cores_on_nodes(2, 3))]);
    let first = run_on(
        ranked(),
        &ws,
        "low",
        MatchFormat::Rv1Nosched,
        "match allocate j.yaml\nquit\n",
    );
    let r = first.out.lines().next().unwrap();
    ws.write("r.json", r);
    let second = run_on(
        ranked(),
        &ws,
        "low",
        MatchFormat::Rv1Nosched,
        "update allocate rv1exec r.json 1 0 3600\nquit\n",
    );
    assert_eq!(second.out, first.out);
}

#[test]
fn refusals_use_resource_querys_messages() {
    let ws = Workspace::new("upd-errors", &[("j.yaml", &socket_cores(1))]);
    let first = run_on(
        tiny(),
        &ws,
        "high",
        MatchFormat::Jgf,
        "match allocate j.yaml\n",
    );
    let r = &rs_of(&first.out)[0].0;
    ws.write("r.json", r);
    ws.write("elsewhere.json", &r.replace("rack0", "rack9"));
    ws.write("bad.json", "{\"graph\":");
    ws.write("nograph.json", "{}");
    ws.write("rv1bad.json", "[");
    let doc: Value = serde_json::from_str(r).unwrap();
    let first_node = &doc["graph"]["nodes"][0];
    // The writer leaves out a name that is basename + id.
    let first_name = format!(
        "{}{}",
        first_node["metadata"]["type"].as_str().unwrap(),
        first_node["metadata"]["id"]
    );
    let first_id = first_node["id"].as_str().unwrap();
    let first_path = first_node["metadata"]["paths"]["containment"]
        .as_str()
        .unwrap()
        .replace("rack0", "rack9");
    assert_eq!(first_node["metadata"]["exclusive"], Value::Bool(true));
    let p = run_on(
        tiny(),
        &ws,
        "high",
        MatchFormat::Simple,
        "update allocate jgf r.json 1 0\n\
         update grab jgf r.json 1 0 3600\n\
         update allocate hwloc r.json 1 0 3600\n\
         update allocate jgf nope.json 1 0 3600\n\
         update allocate jgf r.json 1 -1 3600\n\
         update allocate jgf r.json 1 0 0\n\
         update allocate jgf r.json 1 0 3600\n\
         update allocate jgf r.json 1 0 3600\n\
         update allocate jgf r.json 2 0 3600\n\
         update allocate jgf elsewhere.json 3 0 3600\n\
         update allocate jgf nograph.json 4 0 3600\n\
         update allocate rv1exec rv1bad.json 5 0 3600\n\
         match allocate j.yaml\n\
         quit\n",
    );
    let run_failed = "ERROR: traverser run () returned error \n";
    let expected_err = [
        "ERROR: malformed command\n".to_owned(),
        "ERROR: unknown subcmd grab\n".into(),
        "ERROR: unsupported reader hwloc\n".into(),
        "ERROR: can't open nope.json\n".into(),
        "ERROR: invalid time (-1, 3600)\n".into(),
        "ERROR: invalid time (0, 0)\n".into(),
        "ERROR: existing Jobid \n".into(),
        // The same vertices again: the first one cannot be planned twice.
        format!("{run_failed}ERROR: update_vtx_plan: can't add span into {first_name}.\n"),
        format!(
            "{run_failed}ERROR: exist: inconsistent input vertex: nonexistent path ({first_path}) {first_id}.\n"
        ),
        format!("{run_failed}ERROR: fetch_jgf: JGF does not contain a required key (graph).\n"),
        // The rv1exec reader only sets errno.
        run_failed.to_owned(),
    ]
    .concat();
    assert_eq!(p.stderr, expected_err);
    // Each failed replay prints a failed block for its id and moves the counter past it.
    assert!(p.out.contains(&no_match(2)));
    assert!(p.out.contains(&no_match(3)));
    assert!(p.out.contains(&no_match(4)));
    assert!(
        p.out.ends_with(&scheduled(6, "ALLOCATED", "Now")),
        "{}",
        p.out
    );
}

#[test]
fn rv1exec_refusals_name_the_host_or_child_that_failed() {
    let ws = Workspace::new(
        "upd-rv1-errors",
        &[
            ("ghost.json", &rv1("0", &[("core", "0")], "node7")),
            ("nochild.json", &rv1("0", &[("core", "9")], "node0")),
            ("cores.json", &rv1("0", &[("core", "0-1")], "node0")),
            ("nosuffix.json", &rv1("0", &[("core", "0")], "login")),
        ],
    );
    let p = run_on(
        ranked(),
        &ws,
        "low",
        MatchFormat::Simple,
        "update allocate rv1exec ghost.json 1 0 3600\n\
         update allocate rv1exec nochild.json 2 0 3600\n\
         update allocate rv1exec cores.json 3 0 3600\n\
         update allocate rv1exec cores.json 4 0 3600\n\
         update allocate rv1exec nosuffix.json 5 0 3600\n\
         quit\n",
    );
    let failed = "ERROR: traverser run () returned error \nERROR: ";
    assert_eq!(
        p.stderr,
        [
            failed,
            "add_or_update: couldn't find vertex in graph for node7.\nunpack_rank: failed unpacking rank for node7.\n",
            failed,
            "add_or_update: couldn't find vertex in graph for core9.\nunpack_child: failed unpacking child for core9.\n",
            // Job 3 holds core0 now.
            failed,
            "update_vertex: core0 is unavailable.\nunpack_child: failed unpacking child for core0.\n",
            failed,
            // Fluxion's message has no line end here.
            "unpack_rank: error splitting hostname=login; ",
        ]
        .concat()
    );
    let expected = [
        no_match(1),
        no_match(2),
        line(3, "core0", 1, true),
        line(3, "core1", 1, true),
        line(2, "node0", 1, true),
        line(1, "cluster0", 1, false),
        scheduled(3, "ALLOCATED", "Now"),
        no_match(4),
        no_match(5),
    ]
    .concat();
    assert_eq!(p.out, expected);
}
