//! Start-up: the store's image, a fresh engine and plugin set from the configuration, and the
//! image re-applied to the engine. Jobs that were running keep running under their supervisors
//! and are taken back (`reattach`); only those with nothing left of them are requeued or end
//! NODE_FAIL, as Slurm does when a node's processes vanish.

use std::collections::{HashMap, HashSet};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use sluice_engine::{Hold, JobState};
use sluice_runtime::{PolicySet, specs};

use super::engine::{build_engine, load_cluster};
use super::job_ids::JobIds;
use super::reattach::Found;
use super::recording::Recorder;
use super::{Driver, DriverOptions, Msg, plugins};
use crate::clock::DaemonClock;
use crate::config::OnCrash;
use crate::error::DaemonError;
use crate::executor::Executor;
use crate::image::{HoldBy, JobRecord, NodeAction, Record, State};
use crate::store::Store;

pub(super) fn start(
    opts: DriverOptions,
    make_exec: impl FnOnce(Sender<Msg>, &crate::config::DaemonConfig) -> Box<dyn Executor>,
    tx: Sender<Msg>,
) -> Result<Driver, DaemonError> {
    let cfg = crate::config::load(&opts.daemon_file).map_err(DaemonError::Config)?;
    opts.quotas.apply(&cfg);
    let store = Store::open(&opts.state_dir, opts.on_damage)?;
    let cluster = load_cluster(&opts)?;
    let specs = specs::from_cluster(&cluster);
    let set = PolicySet::load_for_cluster(&opts.loader, &cluster)
        .map_err(|e| DaemonError::Plugins(e.to_string()))?;
    let set = Arc::new(Mutex::new(set));
    let clock = Arc::new(DaemonClock::new());
    let recorder = Arc::new(Recorder::default());
    let mut engine = build_engine(
        opts.cluster_file.as_deref(),
        cluster.clone(),
        &set,
        clock.clone(),
        &store.image().usage,
        &recorder,
    )?;
    super::engine::restore_limit_use(&mut engine, &store.image().limit_use);
    let exec = make_exec(tx.clone(), &cfg);
    let power_journaled = (0..cluster.nodes.len())
        .map(|n| crate::power_image::NodePowerImage::of(&engine, sluice_cluster::NodeId(n as u32)))
        .collect();
    let target = sluice_accounting::Target::parse(cfg.accounting.as_deref(), &opts.state_dir)
        .map_err(|e| DaemonError::Config(format!("{}: {e}", opts.daemon_file.display())))?;
    super::accounting::check_private_data(&cfg.private_data)
        .map_err(|e| DaemonError::Config(format!("{}: {e}", opts.daemon_file.display())))?;
    let purge = sluice_accounting::Purge::parse(
        cfg.purge_job_after.as_deref(),
        cfg.purge_step_after.as_deref(),
    )
    .map_err(|e| DaemonError::Config(format!("{}: {e}", opts.daemon_file.display())))?;
    let link = crate::accounting::AcctLink::start(target, purge)
        .map_err(|e| DaemonError::Other(format!("starting the accounting threads: {e}")))?;
    let acct = super::accounting::AcctState::new(link, store.image());
    let mut d = Driver {
        plugins: plugins::PluginState::new(&specs, &opts.loader, recorder),
        acct,
        opts,
        bounds: crate::admission::Bounds::new(&cfg, &cluster.nodes),
        cfg,
        cluster_cpus: cluster.total_cpus(),
        cluster,
        engine,
        set,
        clock,
        store,
        exec,
        ids: JobIds::default(),
        accepted_at: HashMap::new(),
        exit_reasons: HashMap::new(),
        resumed: HashSet::new(),
        deadlines: Default::default(),
        admin_uid: unsafe { libc::geteuid() },
        metrics: sluice_api::Counters::default(),
        started_at: Instant::now(),
        last_tick: Instant::now(),
        shutdown: false,
        tx,
        power_journaled,
        power_log: None,
    };
    d.power_log = d.open_power_log()?;
    d.reapply()?;
    d.restore_plugins();
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
        // Power and health as last journaled, before any job is taken back onto the nodes.
        self.restore_power();
        for r in image.reservations.values() {
            if let Err(e) = self.engine.create_reservation(r) {
                tracing::warn!("reservation {}: no longer valid: {e}", r.name);
            }
        }
        for (name, state) in &image.partitions {
            let p = self.cluster.partitions.iter().position(|p| &p.name == name);
            match (p, sluice_engine::PartitionState::parse(state)) {
                (Some(p), Some(s)) => self
                    .engine
                    .set_partition_state(sluice_cluster::PartitionId(p as u32), s),
                _ => tracing::warn!("partition {name}: state {state} dropped (no such partition)"),
            }
        }
        let now = self.engine.now();
        let mut not_started = Vec::new();
        let mut ended_tasks = Vec::new();
        for job in image.jobs.values() {
            let mut running = false;
            let mut launch = false;
            match job.state {
                State::Pending => {}
                s if s.is_active() => match self.find_run(job) {
                    Found::Running => running = true,
                    Found::NotStarted => (running, launch) = (true, true),
                    Found::Ended => continue,
                    Found::Gone => {
                        if !self.vanished(job, now) {
                            continue;
                        }
                    }
                },
                s => {
                    if let Some(member) = job.array {
                        ended_tasks.push((member, s));
                    }
                    continue;
                }
            }
            // Its original submit time, so its age and place in the queue survive.
            self.clock.pin(job.submit_time);
            let result = self.enqueue(job.id, &job.user, &job.request, job.array);
            self.clock.unpin();
            match result {
                Ok(eid) if running => {
                    if let Err(e) = self.resume(job, eid) {
                        tracing::warn!("job {}: cannot be taken back as running: {e}", job.id);
                        // Its processes must not run beside a new run or a failed record.
                        self.exec.terminate(job.id);
                        if self.vanished(job, now) {
                            // Back in the queue it is already (just enqueued).
                            continue;
                        }
                        // Its end is journaled; the engine's copy leaves the queue too.
                        let _ = self.engine.cancel(eid);
                    } else if launch && !job.cancel_requested {
                        not_started.push(eid);
                    }
                }
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
        self.note_ended_tasks(&ended_tasks);
        // A job whose nodes still boot is journaled CONFIGURING and launched when they register.
        let launches: Vec<_> = not_started
            .into_iter()
            .filter_map(|eid| self.record_start(eid))
            .collect();
        self.journal_power();
        self.store.sync()?;
        // Compacts the journal so the next start replays only what follows; without room for
        // a snapshot the journal keeps everything and the daemon starts all the same.
        if let Err(e) = self.snapshot() {
            tracing::warn!("start-up snapshot skipped (the journal keeps everything): {e}");
        }
        // Journaled: now they may run.
        self.launch_all(launches);
        let _ = JobState::Pending;
        Ok(())
    }
}

impl Driver {
    /// Journals what becomes of an active job with nothing left of it: cancelled if a cancel
    /// was acknowledged, else requeued if it may be (then `true`: enqueue it), else NODE_FAIL.
    fn vanished(&mut self, job: &JobRecord, now: i64) -> bool {
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
            false
        } else if requeue {
            self.commit(Record::Requeued {
                id: job.id,
                time: now,
                reason: "its processes vanished with its node".into(),
                begin: None,
            });
            true
        } else {
            self.commit(Record::Ended {
                id: job.id,
                time: now,
                state: State::NodeFail,
                exit_code: None,
                reason: Some("NodeDown".into()),
            });
            false
        }
    }
}
