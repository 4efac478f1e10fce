//! What the matcher refuses rather than get wrong or crash on: graphs deeper than it walks,
//! and jobspecs with RFC 31 constraints, which it does not evaluate.

use std::path::Path;

use sluice_graph::{
    Flow, GraphBuilder, IdPolicy, Jobspec, MAX_DEPTH, MatchFailure, MatchFormat, MatchOp, Matcher,
    MatcherError, Outputs, Session, SimpleWriter, VertexSpec, read_grug,
};

fn chain(levels: usize) -> sluice_graph::ResourceGraph {
    let mut b = GraphBuilder::new();
    let s = b.subsystem("containment");
    let mut parent = None;
    for i in 0..levels {
        let v = b.add_vertex(VertexSpec {
            kind: if i == 0 { "cluster" } else { "rack" },
            basename: if i == 0 { "cluster" } else { "rack" },
            id: i as i64,
            rank: -1,
            size: 1,
            unit: "",
        });
        b.set_path(s, v, parent);
        if let Some(p) = parent {
            b.add_edge(s, p, v, "contains");
        }
        parent = Some(v);
    }
    b.finish()
}

#[test]
fn a_graph_deeper_than_the_walk_is_refused_and_one_level_less_is_taken() {
    let policy = || Box::new(IdPolicy::from_name("high").unwrap());
    let deep = Matcher::new(chain(MAX_DEPTH + 1), "containment", policy(), "ALL:core");
    assert!(matches!(
        deep,
        Err(MatcherError::TooDeep { depth, .. }) if depth == MAX_DEPTH + 1
    ));
    let mut m = Matcher::new(chain(MAX_DEPTH), "containment", policy(), "ALL:core").unwrap();
    // A request for a type the chain lacks walks every level (pristine) and fails cleanly.
    let spec = "version: 9999\nresources:\n  - type: node\n    count: 1\n    with:\n      - type: slot\n        count: 1\n        label: default\n        with:\n          - type: core\n            count: 1\ntasks:\n  - command: [ \"app\" ]\n    slot: default\n    count:\n      per_slot: 1\nattributes:\n";
    let jobspec = Jobspec::parse(spec, Path::new("j.yaml"), m.graph().types()).unwrap();
    let mut writer = SimpleWriter::default();
    let result = m.run(&jobspec, MatchOp::AllocateOrElseReserve, 1, &mut writer);
    assert_eq!(result, Err(MatchFailure::Unsatisfiable));
    assert_eq!(m.visit_counts().0 as usize, MAX_DEPTH);
}

#[test]
fn constrained_jobspecs_are_refused_without_consuming_a_job_id() {
    let dir = std::env::temp_dir().join(format!("sluice-graph-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let spec = "version: 9999\nresources:\n  - type: node\n    count: 1\n    with:\n      - type: slot\n        count: 1\n        label: default\n        with:\n          - type: core\n            count: 1\nattributes:\n  system:\n    duration: 60\n    constraints:\n      properties: [\"foo\"]\ntasks:\n  - command: [ \"app\" ]\n    slot: default\n    count:\n      per_slot: 1\n";
    std::fs::write(dir.join("c.yaml"), spec).unwrap();
    let grug = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/flux/ex1-tiny-high-allocate/tiny.graphml");
    let matcher = Matcher::new(
        read_grug(&grug).unwrap(),
        "containment",
        Box::new(IdPolicy::from_name("high").unwrap()),
        "ALL:core,ALL:node",
    )
    .unwrap();
    let mut session = Session::new(matcher, MatchFormat::Simple, false);
    session.set_base_dir(&dir);
    let (mut out, mut stdout, mut stderr) = (Vec::new(), Vec::new(), Vec::new());
    for line in ["match allocate c.yaml", "match allocate c.yaml"] {
        let mut io = Outputs {
            out: &mut out,
            stdout: &mut stdout,
            stderr: &mut stderr,
        };
        assert_eq!(session.execute(line, &mut io).unwrap(), Flow::Continue);
    }
    std::fs::remove_dir_all(&dir).ok();
    let block = "INFO: =============================\nINFO: No matching resources found\nINFO: JOBID=1\nINFO: =============================\n";
    assert_eq!(String::from_utf8(out).unwrap(), block.repeat(2));
    assert!(
        String::from_utf8(stderr)
            .unwrap()
            .contains("RFC 31 constraints are not supported")
    );
}
