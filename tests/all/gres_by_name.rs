//! Every GRES name of a cluster gets its own plugin slot: `gpu` the configured GPU plugin, `nic`
//! the bundle's count-only plugin, both as components answering the engine through one set.

use std::sync::{Arc, Mutex};

use sluice_cluster::{Cluster, Source};
use sluice_engine::{Engine, Event, JobSpec, ManualClock};
use sluice_runtime::PolicySet;
use sluice_runtime::shared::engine_policies;

use crate::support::*;

const CLUSTER: &str = r#"
ClusterName = "nics"

[[nodes]]
NodeName = "n[1-2]"
CoresPerSocket = 8
RealMemory = 16000
Gres = "gpu:2,nic:2"

[[gres]]
NodeName = "n[1-2]"
Name = "gpu"
File = "/dev/nvidia[0-1]"

[[partitions]]
PartitionName = "all"
Nodes = "n[1-2]"
Default = true

[[accounts]]
Account = "lab"

[[users]]
User = "alice"
Account = "lab"
"#;

#[test]
fn a_nic_request_is_served_by_the_count_plugin_component() {
    let cluster = Cluster::from_toml(Source::new("nics.toml", CLUSTER), None).unwrap();
    let set = PolicySet::load_for_cluster(&loader(), &cluster).unwrap();
    assert_eq!(set.gres_by_name.keys().collect::<Vec<_>>(), ["nic"]);
    let set = Arc::new(Mutex::new(set));
    let clock = ManualClock::new(1_700_000_000);
    let mut engine = Engine::new(cluster, engine_policies(&set), Arc::new(clock.clone()));
    let mut spec = JobSpec::new("alice");
    spec.gres = sluice_engine::request::parse_gres("nic:1,gpu:1").unwrap();
    spec.time_limit = Some(600);
    let id = engine.submit(spec).unwrap();
    let started = engine
        .tick()
        .into_iter()
        .any(|e| matches!(e, Event::Started { job, .. } if job == id));
    assert!(started, "the job starts");
    let env = engine.job_env(id, 0).unwrap();
    let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    assert_eq!(
        get("SLURM_JOB_NICS").as_deref(),
        Some("0"),
        "count plugin's variable: {env:?}"
    );
    assert_eq!(
        get("CUDA_VISIBLE_DEVICES").as_deref(),
        Some("0"),
        "gpu plugin's variable: {env:?}"
    );
    let status = set.lock().unwrap().status();
    let answered: Vec<(String, u64)> = status
        .iter()
        .flat_map(|(_, gens)| gens.iter().map(|g| (g.origin.clone(), g.health.answered)))
        .collect();
    assert!(
        answered
            .iter()
            .any(|(o, n)| o.starts_with("count") && *n > 0),
        "{answered:?}"
    );
    assert!(
        answered.iter().any(|(o, n)| o.starts_with("gpu") && *n > 0),
        "{answered:?}"
    );
}
