//! `sluice resource-query -S`: predefined matchers by name (and in lower case), auxiliary
//! subsystems changing a match, and the refusals (an unknown name, a subsystem without root).

use std::path::Path;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_sluice");
const KEYS: &str = include_str!("../../graph/tests/data/keys.graphml.part");
const RULE: &str = "INFO: =============================\n";

/// `pw0 → rack0 → pdu0, node0 → core0`, and power: `panel0 → pdu0 → node0` (same rack).
fn power_grug() -> String {
    let body = r#"<node id="cluster"><data key="root">1</data><data key="type">cluster</data><data key="basename">pw</data></node>
<node id="rack"><data key="type">rack</data><data key="basename">rack</data></node>
<node id="pdu"><data key="type">pdu</data><data key="basename">pdu</data></node>
<node id="node"><data key="type">node</data><data key="basename">node</data></node>
<node id="core"><data key="type">core</data><data key="basename">core</data></node>
<node id="panel"><data key="root">1</data><data key="type">panel</data><data key="basename">panel</data><data key="subsystem">power</data></node>
<node id="ppdu"><data key="type">pdu</data><data key="basename">pdu</data><data key="subsystem">power</data></node>
<node id="pnode"><data key="type">node</data><data key="basename">node</data><data key="subsystem">power</data></node>
<edge id="c2r" source="cluster" target="rack"/>
<edge id="r2p" source="rack" target="pdu"/>
<edge id="r2n" source="rack" target="node"/>
<edge id="n2c" source="node" target="core"/>
<edge id="panel2pdu" source="panel" target="ppdu"><data key="e_subsystem">power</data><data key="gen_method">ASSOCIATE_IN</data></edge>
<edge id="pdu2node" source="ppdu" target="pnode"><data key="e_subsystem">power</data><data key="gen_method">ASSOCIATE_BY_PATH_IN</data></edge>
"#;
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n{KEYS}<graph id=\"g\" edgedefault=\"directed\">\n{body}</graph>\n</graphml>\n"
    )
}

const NODE_CORE: &str = "version: 9999\nresources:\n  - type: node\n    count: 1\n    with:\n      - type: slot\n        count: 1\n        label: default\n        with:\n          - type: core\n            count: 1\nattributes:\n  system:\n    duration: 3600\ntasks:\n  - command: [ \"app\" ]\n    slot: default\n    count:\n      per_slot: 1\n";

/// Runs resource-query on `grug` (written to a scratch folder with the jobspec) with `-S
/// subsystems`; the `-t` output, or the exit failure's stderr.
fn resource_query(grug: &str, subsystems: &str) -> Result<String, String> {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    std::fs::write(dir.join("g.graphml"), grug).unwrap();
    std::fs::write(dir.join("node.yaml"), NODE_CORE).unwrap();
    let commands = dir.join("cmds");
    std::fs::write(&commands, "match allocate node.yaml\nquit\n").unwrap();
    let out = dir.join("out");
    let run = Command::new(BIN)
        .current_dir(dir)
        .env("SLUICE_CACHE_DIR", dir.join("cache"))
        .args(["resource-query", "-L", "g.graphml", "-P", "high", "-d"])
        .args(["-S", subsystems, "-t"])
        .arg(&out)
        .stdin(std::fs::File::open(&commands).unwrap())
        .stdout(Stdio::null())
        .output()
        .unwrap();
    if !run.status.success() {
        return Err(String::from_utf8_lossy(&run.stderr).into_owned());
    }
    Ok(std::fs::read_to_string(out).unwrap())
}

#[test]
fn auxiliary_power_fails_a_walk_that_visits_the_pdu() {
    let grug = power_grug();
    let allocated = format!(
        "      ------------core0[1:x]\n      ---------node0[1:s]\n      ------rack0[1:s]\n      ---pw0[1:s]\n{RULE}INFO: JOBID=1\nINFO: RESOURCES=ALLOCATED\nINFO: SCHEDULED AT=Now\n{RULE}"
    );
    assert_eq!(resource_query(&grug, "CA").unwrap(), allocated);
    assert_eq!(resource_query(&grug, "ca").unwrap(), allocated);
    // pdu0 comes before node0, is visited with nothing chosen, and its power edge reaches the
    // free node0: an unqualified `node` candidate at the root.
    let none = format!("{RULE}INFO: No matching resources found\nINFO: JOBID=1\n{RULE}");
    assert_eq!(resource_query(&grug, "C+PA").unwrap(), none);
    assert_eq!(resource_query(&grug, "c+pa").unwrap(), none);
}

#[test]
fn unknown_matchers_and_missing_roots_are_refused() {
    let grug = power_grug();
    let err = resource_query(&grug, "C+XA").unwrap_err();
    assert!(
        err.contains("unknown match subsystems `C+XA`: expected one of CA,"),
        "{err}"
    );
    let err = resource_query(&grug, "C+IBA").unwrap_err();
    assert!(
        err.contains(
            "initialize_matchers_and_traversers: ERROR: can't initialize traverser: subsystem ibnet has no root in the graph"
        ),
        "{err}"
    );
    let tiny = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../graph/tests/data/flux/ex1-tiny-high-allocate/tiny.graphml");
    let err = resource_query(&std::fs::read_to_string(tiny).unwrap(), "PA").unwrap_err();
    assert!(
        err.contains("subsystem power has no root in the graph"),
        "{err}"
    );
}
