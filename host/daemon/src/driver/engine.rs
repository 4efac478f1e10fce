//! The cluster and the engine built over it: loading the cluster file, naming associations as
//! usage is kept, and the engine with the plugin set and the selection recorder. The driver
//! builds its engine here at start-up and reads usage back for snapshots.

use std::collections::BTreeMap;
use std::sync::Arc;

use sluice_cluster::{AssocId, Cluster, QosId};
use sluice_engine::limits::SpentUse;
use sluice_engine::{Engine, EngineConfig};
use sluice_runtime::shared::{SharedSet, engine_policies};

use super::DriverOptions;
use super::recording::{Recorder, RecordingSelection};
use crate::clock::DaemonClock;
use crate::error::DaemonError;
use crate::image::LimitUseImage;

/// Loads the cluster file, or the embedded demo cluster.
pub(super) fn load_cluster(opts: &DriverOptions) -> Result<Cluster, DaemonError> {
    match &opts.cluster_file {
        Some(p) => Cluster::load(p).map_err(|e| DaemonError::Config(e.to_string())),
        None => Cluster::try_demo().map_err(|e| DaemonError::Config(e.to_string())),
    }
}

/// The name usage is kept under: `account` or `account/user`.
pub(super) fn assoc_key(cluster: &Cluster, a: AssocId) -> String {
    let assoc = &cluster.associations[a.index()];
    if assoc.is_user() {
        let account = assoc
            .parent
            .map(|p| cluster.associations[p.index()].name().to_string())
            .unwrap_or_default();
        format!("{account}/{}", assoc.name())
    } else {
        assoc.name().to_string()
    }
}

/// Each association's own usage (the engine keeps sums over descendants).
pub(super) fn own_usage(engine: &Engine) -> BTreeMap<String, f64> {
    let cluster = engine.cluster();
    let raw = engine.usage().all_with_ended();
    let mut own: Vec<f64> = raw.clone();
    for (i, a) in cluster.associations.iter().enumerate() {
        if let Some(p) = a.parent
            && i < raw.len()
        {
            own[p.index()] -= raw[i];
        }
    }
    (0..raw.len().min(cluster.associations.len()))
        .filter(|i| own[*i].abs() > 1e-9)
        .map(|i| (assoc_key(cluster, AssocId(i as u32)), own[i]))
        .collect()
}

/// The decayed use limits are held to, by QOS name and association key, for the snapshot.
pub(super) fn limit_use(engine: &Engine) -> LimitUseImage {
    let cluster = engine.cluster();
    let (qos, assocs) = engine.limit_use();
    let used = |u: &SpentUse| u.wall_secs != 0.0 || !u.tres_secs.is_empty();
    LimitUseImage {
        qos: qos
            .into_iter()
            .zip(&cluster.qos)
            .filter(|(u, _)| used(u))
            .map(|(u, q)| (q.name.clone(), u))
            .collect(),
        assocs: assocs
            .into_iter()
            .enumerate()
            .filter(|(i, u)| used(u) && *i < cluster.associations.len())
            .map(|(i, u)| (assoc_key(cluster, AssocId(i as u32)), u))
            .collect(),
    }
}

/// Gives the engine back the use limits were held to at the last snapshot, matched by QOS
/// name and association key (those no longer configured are dropped).
pub(super) fn restore_limit_use(engine: &mut Engine, image: &LimitUseImage) {
    let cluster = engine.cluster();
    let qos: Vec<(QosId, SpentUse)> = (cluster.qos.iter().enumerate())
        .filter_map(|(i, q)| Some((QosId(i as u32), image.qos.get(&q.name)?.clone())))
        .collect();
    let assocs: Vec<(AssocId, SpentUse)> = (0..cluster.associations.len())
        .filter_map(|i| {
            let id = AssocId(i as u32);
            Some((id, image.assocs.get(&assoc_key(cluster, id))?.clone()))
        })
        .collect();
    engine.restore_limit_use(&qos, &assocs);
}

/// Builds the engine over `cluster` with the plugin set; a GRES plugin refusing the node
/// configuration is a configuration error at the line of `cluster_file` that configures it.
pub(super) fn build_engine(
    cluster_file: Option<&std::path::Path>,
    mut cluster: Cluster,
    set: &SharedSet,
    clock: Arc<DaemonClock>,
    usage: &BTreeMap<String, f64>,
    recorder: &Arc<Recorder>,
) -> Result<Engine, DaemonError> {
    for i in 0..cluster.associations.len() {
        let key = assoc_key(&cluster, AssocId(i as u32));
        if let Some(u) = usage.get(&key) {
            cluster.associations[i].raw_usage = *u;
        }
    }
    let mut policies = engine_policies(set);
    // A selection shadow is asked what the active policy was asked, so record those calls.
    policies.selection = Box::new(RecordingSelection {
        inner: policies.selection,
        recorder: recorder.clone(),
    });
    // The cluster's AccountingStorageEnforce and CreateMissingAssociations decide whether a
    // user or account without an association is accepted.
    let mut config = EngineConfig::for_cluster(&cluster);
    // As slurmctld: a new job's priority is set when it arrives, the queue's every
    // PriorityCalcPeriod; a pass after each batch of submissions stays cheap.
    config.priority_new_jobs_alone = true;
    Engine::try_with_config(cluster, policies, clock, config)
        .map_err(|e| DaemonError::Config(crate::check::gres_refusal(cluster_file, &e)))
}
