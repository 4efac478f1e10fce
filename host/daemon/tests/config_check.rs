//! The configuration check start-up runs, shared with `sluice config check`: a GRES plugin
//! refusing the nodes' devices is an error at the cluster file's line, not a panic.

use sluice_daemon::check::check_cluster;
use sluice_runtime::Loader;
use sluice_runtime::compile::WasmEngine;

const NODES: &str = r#"ClusterName = "check"

[plugins.gres]
plugin = "gpu"

[[nodes]]
NodeName = "c[1-2]"
CPUs = 8

[[nodes]]
NodeName = "g[1-2]"
CPUs = 16
RealMemory = 64000
GRES_LINE

[[partitions]]
PartitionName = "p"
Nodes = "ALL"
"#;

fn check(gres: &str) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cluster.toml");
    std::fs::write(&path, NODES.replace("GRES_LINE", gres)).unwrap();
    let loader = Loader::new(WasmEngine::new(None));
    check_cluster(Some(&path), &loader)
        .map(|_| ())
        .map_err(|e| e.replace(&path.display().to_string(), "cluster.toml"))
}

#[test]
fn a_gres_the_plugin_refuses_is_an_error_at_its_line() {
    let err = check(r#"Gres = "gpu:h100:8,gpu:mig:0""#).unwrap_err();
    assert!(
        err.starts_with("cluster.toml:14:9: gres/gpu refused the node configuration: g1:"),
        "{err}"
    );
    check(r#"Gres = "nic:2""#).unwrap();
}
