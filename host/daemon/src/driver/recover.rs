//! Start-up: the store's image, a fresh engine and plugin set from the configuration, and the
//! image re-applied to the engine. Jobs that were running lost their processes with the daemon
//! (they die with it), so they are requeued or end NODE_FAIL, as Slurm does when a node's
//! processes vanish.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use sluice_cluster::{AssocId, Cluster};
use sluice_engine::{Engine, EngineConfig, Hold, JobState};
use sluice_runtime::shared::engine_policies;
use sluice_runtime::{PolicySet, specs};

use super::recording::{Recorder, RecordingSelection};
use super::{Driver, DriverOptions, Msg, plugins};
use crate::clock::DaemonClock;
use crate::config::OnCrash;
use crate::error::DaemonError;
use crate::executor::Executor;
use crate::image::{HoldBy, NodeAction, Record, State};
use crate::store::Store;

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

/// Builds the engine over `cluster` with the plugin set.
pub(super) fn build_engine(
    mut cluster: Cluster,
    set: &plugins::Set,
    clock: Arc<DaemonClock>,
    usage: &BTreeMap<String, f64>,
    recorder: &Arc<Recorder>,
) -> Engine {
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
    let mut config = EngineConfig::for_cluster(&cluster);
    // Slurm without AccountingStorageEnforce accepts users it has no association for.
    config.create_missing_associations = true;
    Engine::with_config(cluster, policies, clock, config)
}

pub(super) fn start(
    opts: DriverOptions,
    make_exec: impl FnOnce(Sender<Msg>) -> Box<dyn Executor>,
    tx: Sender<Msg>,
) -> Result<Driver, DaemonError> {
    let cfg = crate::config::load(&opts.daemon_file).map_err(DaemonError::Config)?;
    let store = Store::open(&opts.state_dir)?;
    let cluster = load_cluster(&opts)?;
    let specs = specs::from_cluster(&cluster);
    let set = PolicySet::load_for_cluster(&opts.loader, &cluster)
        .map_err(|e| DaemonError::Plugins(e.to_string()))?;
    let set = Arc::new(Mutex::new(set));
    let clock = Arc::new(DaemonClock::new());
    let recorder = Arc::new(Recorder::default());
    let engine = build_engine(
        cluster.clone(),
        &set,
        clock.clone(),
        &store.image().usage,
        &recorder,
    );
    let exec = make_exec(tx);
    let mut d = Driver {
        plugins: plugins::PluginState::new(&specs, &opts.loader, recorder),
        opts,
        cfg,
        cluster,
        engine,
        set,
        clock,
        store,
        exec,
        eid: BTreeMap::new(),
        pid: HashMap::new(),
        purge: VecDeque::new(),
        accepted_at: HashMap::new(),
        admin_uid: unsafe { libc::geteuid() },
        metrics: sluice_api::Counters::default(),
        started_at: Instant::now(),
        last_tick: Instant::now(),
        shutdown: false,
    };
    d.reapply()?;
    Ok(d)
}

impl Driver {
    /// Re-applies the image to a fresh engine: node states, reservations, then jobs in id order.
    pub(super) fn reapply(&mut self) -> Result<(), DaemonError> {
        let image = self.store.image().clone();
        for (name, admin) in &image.nodes {
            let Some(n) = self.cluster.nodes.iter().position(|x| &x.name == name) else {
                tracing::warn!("node {name} is no longer configured; its state is dropped");
                continue;
            };
            let n = sluice_cluster::NodeId(n as u32);
            match admin.action {
                NodeAction::Down => self.engine.node_down(n, &admin.reason),
                NodeAction::Drain => self.engine.node_drain(n, &admin.reason),
                NodeAction::Resume => self.engine.node_resume(n),
            }
        }
        for r in image.reservations.values() {
            if let Err(e) = self.engine.create_reservation(r) {
                tracing::warn!("reservation {}: no longer valid: {e}", r.name);
            }
        }
        let now = self.engine.now();
        for job in image.jobs.values() {
            match job.state {
                State::Pending => {}
                s if s.is_active() => {
                    let requeue = job.request.requeue.unwrap_or(self.cfg.job_requeue)
                        && self.cfg.on_crash == OnCrash::Requeue;
                    if job.cancel_requested {
                        self.commit(Record::Ended {
                            id: job.id,
                            time: now,
                            state: State::Cancelled,
                            exit_code: None,
                            reason: None,
                        });
                        continue;
                    } else if requeue {
                        self.commit(Record::Requeued {
                            id: job.id,
                            time: now,
                            reason: "its processes vanished with a daemon restart".into(),
                        });
                    } else {
                        self.commit(Record::Ended {
                            id: job.id,
                            time: now,
                            state: State::NodeFail,
                            exit_code: None,
                            reason: Some("NodeDown".into()),
                        });
                        continue;
                    }
                }
                _ => continue,
            }
            // Its original submit time, so its age and place in the queue survive.
            self.clock.pin(job.submit_time);
            let result = self.enqueue(job.id, &job.user, &job.request);
            self.clock.unpin();
            match result {
                Ok(eid) => {
                    if let Some(by) = job.hold {
                        let who = match by {
                            HoldBy::User => Hold::User,
                            HoldBy::Admin => Hold::Admin,
                        };
                        let _ = self.engine.hold(eid, who);
                    }
                }
                Err(e) => {
                    tracing::warn!("job {}: the configuration refuses it now: {e}", job.id);
                    self.commit(Record::Ended {
                        id: job.id,
                        time: now,
                        state: State::Cancelled,
                        exit_code: None,
                        reason: Some(format!("refused after restart: {e}")),
                    });
                }
            }
        }
        self.store.sync()?;
        // Compacts the journal so the next start replays only what follows.
        self.snapshot()?;
        let _ = JobState::Pending;
        Ok(())
    }
}
