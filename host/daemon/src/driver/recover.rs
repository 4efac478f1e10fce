//! Start-up: the store's image, a fresh engine and plugin set from the configuration, and the
//! image re-applied to the engine. Jobs that were running lost their processes with the daemon
//! (they die with it), so they are requeued or end NODE_FAIL, as Slurm does when a node's
//! processes vanish.

use std::collections::HashMap;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use sluice_engine::{Hold, JobState};
use sluice_runtime::{PolicySet, specs};

use super::engine::{build_engine, load_cluster};
use super::job_ids::JobIds;
use super::recording::Recorder;
use super::{Driver, DriverOptions, Msg, plugins};
use crate::clock::DaemonClock;
use crate::config::OnCrash;
use crate::error::DaemonError;
use crate::executor::Executor;
use crate::image::{HoldBy, NodeAction, Record, State};
use crate::store::Store;

pub(super) fn start(
    opts: DriverOptions,
    make_exec: impl FnOnce(Sender<Msg>) -> Box<dyn Executor>,
    tx: Sender<Msg>,
) -> Result<Driver, DaemonError> {
    let cfg = crate::config::load(&opts.daemon_file).map_err(DaemonError::Config)?;
    let store = Store::open(&opts.state_dir, opts.on_damage)?;
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
        ids: JobIds::default(),
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
        // Compacts the journal so the next start replays only what follows; without room for
        // a snapshot the journal keeps everything and the daemon starts all the same.
        if let Err(e) = self.snapshot() {
            tracing::warn!("start-up snapshot skipped (the journal keeps everything): {e}");
        }
        let _ = JobState::Pending;
        Ok(())
    }
}
