//! Every validation `sluice serve` runs on a configuration before it schedules, for `sluice
//! config check` and for start-up: the cluster file, its plugins loaded, and each GRES plugin's
//! check of the node configuration, whose refusal is reported at the file and line that
//! configures the refused node.

use std::path::Path;
use std::sync::{Arc, Mutex};

use sluice_cluster::{Cluster, Source};
use sluice_engine::{Engine, EngineConfig, GresConfigError, ManualClock};
use sluice_runtime::shared::engine_policies;
use sluice_runtime::{Loader, PolicySet};

/// Loads `cluster_file` (the embedded demo when `None`) and its plugins, and builds an engine
/// over them as `serve` does; `Err` is the message `serve` would stop with.
pub fn check_cluster(cluster_file: Option<&Path>, loader: &Loader) -> Result<Cluster, String> {
    let cluster = match cluster_file {
        Some(p) => Cluster::load(p),
        None => Cluster::try_demo(),
    }
    .map_err(|e| e.to_string())?;
    let set = PolicySet::load_for_cluster(loader, &cluster).map_err(|e| e.to_string())?;
    let set = Arc::new(Mutex::new(set));
    let config = EngineConfig::for_cluster(&cluster);
    Engine::try_with_config(
        cluster.clone(),
        engine_policies(&set),
        Arc::new(ManualClock::new(0)),
        config,
    )
    .map_err(|e| gres_refusal(cluster_file, &e))?;
    Ok(cluster)
}

/// A GRES plugin's refusal, prefixed with where the cluster file configures the first node it
/// refused (`file:line:column: `) when that can be found.
pub fn gres_refusal(cluster_file: Option<&Path>, e: &GresConfigError) -> String {
    let at = cluster_file.zip(e.nodes.first()).and_then(|(path, node)| {
        let text = std::fs::read_to_string(path).ok()?;
        let name = path.display().to_string();
        sluice_cluster::config::node_gres_location(Source::new(&name, &text), node)
    });
    match at {
        Some(at) => format!("{at}: {e}"),
        None => e.to_string(),
    }
}
