//! The driver: one thread owns the engine, the plugin set, the store and the executor. API
//! handlers and process reapers talk to it over one channel, so a pass never races an API change
//! and plugin swaps are published only between passes.
//!
//! This file holds the loop (messages, ticks, journal syncs, purges, snapshots). The rest, by
//! what each owns or reads: `engine` builds the cluster's engine; `recover` rebuilds the driver
//! from the store at start-up, `reattach` takes back the jobs still running; `dispatch` routes
//! messages to handlers and checks admins; `job_ids` maps public to engine job ids; `jobs` takes requests on jobs; `runs` journals the
//! engine's starts and ends and talks to the executor; `job_views` and `views` answer reads;
//! `mail` sends `--mail-type` mail off the driver thread; `deadlines` cancels
//! pending jobs that can no longer meet their `--deadline`; `power` journals power state and
//! program calls, registers nodes and takes scontrol's node updates, and `power_programs` runs
//! the power programs off the driver thread; `arrays` makes job arrays into jobs; `records`
//! purges ended jobs' records from the image after MinJobAge; `room` admits changes the disk
//! and MaxJobCount have room for;
//! `accounting` sends ended jobs to the accounting store and forwards `acct` queries;
//! `plugins` owns swaps and the plugin files watched; `shadow` the candidates run beside the
//! active policies, fed by `recording`. `gauges` refreshes the Prometheus series only the driver can read;
//! `plugin_restore` makes journaled swaps and shadows active again at start-up. Siblings import each other
//! one way only.

mod accounting;
mod arrays;
mod deadlines;
mod dispatch;
mod engine;
mod gauges;
mod job_ids;
mod job_views;
mod jobs;
mod mail;
mod plugin_restore;
mod plugins;
mod power;
mod power_programs;
mod privacy;
mod reattach;
mod recording;
mod records;
mod recover;
mod room;
mod runs;
mod shadow;
mod views;
mod will_run;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use sluice_client::identity::Identity;
use sluice_cluster::Cluster;
use sluice_engine::{Engine, Event};
use sluice_runtime::Loader;
use sluice_runtime::shared::SharedSet;
use tokio::sync::oneshot;

use crate::api::{ApiError, ApiRequest, ApiResult};
use crate::clock::DaemonClock;
use crate::config::DaemonConfig;
use crate::executor::{Executor, ExitReport};
use crate::store::Store;

/// A message to the driver.
pub enum Msg {
    /// An API request and where to answer it.
    Api {
        /// The caller.
        who: Identity,
        /// The request.
        req: ApiRequest,
        /// The answer goes here once the change is durable.
        reply: oneshot::Sender<ApiResult>,
    },
    /// A job's processes ended.
    Exited(ExitReport),
    /// A power program ended (or could not run).
    PowerProgramEnded {
        /// The call's number in the journal.
        seq: u64,
        /// How it ended.
        outcome: String,
    },
    /// SIGHUP: reload the configuration.
    Reconfigure,
    /// Stop the loop (SIGTERM/SIGINT).
    Shutdown,
}

/// What the driver is started with.
pub struct DriverOptions {
    /// The state directory.
    pub state_dir: PathBuf,
    /// The cluster file; `None` is the embedded demo cluster.
    pub cluster_file: Option<PathBuf>,
    /// The daemon's settings file (`DIR/daemon.toml` unless given).
    pub daemon_file: PathBuf,
    /// The plugin loader.
    pub loader: Loader,
    /// What to do with a damaged journal.
    pub on_damage: crate::journal::OnDamage,
    /// The Prometheus metrics the driver updates.
    pub metrics: crate::metrics::SiteMetrics,
    /// The listeners' per-user quotas, set from daemon.toml whenever it is loaded.
    pub quotas: crate::server::Quotas,
}

/// The state the driver thread owns.
pub struct Driver {
    opts: DriverOptions,
    cfg: DaemonConfig,
    cluster: Cluster,
    /// The cluster's CPUs, which every submission is held to; the cluster is fixed for the
    /// driver's life (a topology change waits for a restart), so it is summed once.
    cluster_cpus: u64,
    /// The sizes every request is held to: daemon.toml's and the cluster's (its longest node
    /// name among them), worked out when either is loaded rather than per submission.
    bounds: crate::admission::Bounds,
    engine: Engine,
    set: SharedSet,
    clock: Arc<DaemonClock>,
    store: Store,
    exec: Box<dyn Executor>,
    /// Public and engine job ids, and the ended jobs due to leave the engine.
    ids: job_ids::JobIds,
    /// When each pending job was accepted, for submit→start latency.
    accepted_at: HashMap<u64, Instant>,
    /// Why a job's run could not start, until its end is journaled.
    exit_reasons: HashMap<u64, String>,
    /// Jobs taken back as running at start-up, whose `Started` event is not acted on.
    resumed: HashSet<u64>,
    /// Pending jobs with a `--deadline`, by the last moment they could start (`deadlines`).
    deadlines: std::collections::BTreeSet<(i64, u64)>,
    admin_uid: u32,
    plugins: plugins::PluginState,
    /// Ended jobs on their way to the accounting store.
    acct: accounting::AcctState,
    metrics: sluice_api::Counters,
    started_at: Instant,
    last_tick: Instant,
    shutdown: bool,
    /// The driver's own channel, for what runs off its thread to report back on.
    tx: Sender<Msg>,
    /// Each node's power record as the journal last has it (`power`).
    power_journaled: Vec<crate::power_image::NodePowerImage>,
    /// daemon.toml's `power_log`, `sluice sim --log`'s JSON lines, when one is configured.
    power_log: Option<power::PowerLog>,
}

/// What a tick decided, journaled and carried out once the journal is synced.
#[derive(Default)]
struct Decided {
    /// Jobs to start.
    launches: Vec<crate::executor::Launch>,
    /// Jobs whose processes are to be ended.
    kills: Vec<u64>,
    /// Power programs to run.
    runs: Vec<power_programs::ProgramRun>,
}

/// Answers waiting for the next sync.
pub(super) type Replies = Vec<(oneshot::Sender<ApiResult>, ApiResult)>;

impl Driver {
    /// Recovers state from `opts.state_dir` and builds the engine; `exec` runs the jobs.
    pub fn start(
        opts: DriverOptions,
        make_exec: impl FnOnce(Sender<Msg>, &crate::config::DaemonConfig) -> Box<dyn Executor>,
        tx: Sender<Msg>,
    ) -> Result<Self, crate::error::DaemonError> {
        recover::start(opts, make_exec, tx)
    }

    /// What recovery found, as JSON for the log.
    pub fn recovery(&self) -> sluice_api::RecoveryReport {
        self.store.recovery.clone()
    }

    /// Runs until a `Shutdown` message.
    pub fn run(mut self, rx: Receiver<Msg>) {
        let watch_every = Duration::from_secs(self.cfg.watch_interval.max(1));
        let mut last_watch = Instant::now();
        let mut last_gauges = Instant::now() - gauges::REFRESH_EVERY;
        while !self.shutdown {
            let timeout = self.next_timeout();
            let mut replies: Replies = Vec::new();
            match rx.recv_timeout(timeout) {
                Ok(msg) => {
                    self.handle(msg, &mut replies);
                    // Group commit: take whatever else is queued, then one fsync for all of it.
                    for _ in 0..4096 {
                        match rx.try_recv() {
                            Ok(msg) => self.handle(msg, &mut replies),
                            Err(_) => break,
                        }
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            self.journal_power();
            // Between passes: publish finished loads, then run what is due. What the tick
            // decided is journaled with the batch's records and synced with them, in one
            // fsync, before anything is answered or any process started or signalled.
            self.apply_staged(&mut replies);
            self.shadow_loaded(&mut replies);
            let decided = if self.tick_due() {
                self.tick()
            } else {
                Decided::default()
            };
            self.sync_and_answer(replies);
            self.carry_out(decided);
            self.accounting_flush();
            if last_watch.elapsed() >= watch_every {
                last_watch = Instant::now();
                self.watch_plugin_files();
            }
            self.refresh_gauges(&mut last_gauges);
            self.purge_old();
            self.purge_records();
            self.maybe_snapshot();
        }
        if let Err(e) = self.store.sync() {
            tracing::error!("final journal sync: {e}");
        }
        // A snapshot on its way is completed, so the next start replays less.
        if let Err(e) = self.store.finish_snapshot(true) {
            tracing::error!("snapshot failed (the journal keeps everything): {e}");
        }
    }

    fn sync_and_answer(&mut self, replies: Replies) {
        let t0 = self.store.has_unsynced().then(Instant::now);
        if let Err(e) = self.store.sync() {
            // Nothing acknowledged may be lost: stop rather than answer without durability.
            tracing::error!("journal sync failed, stopping: {e}");
            for (tx, _) in replies {
                let _ = tx.send(Err(ApiError::internal(format!("journal sync failed: {e}"))));
            }
            std::process::exit(70);
        }
        self.metrics.syncs += 1;
        if let Some(t0) = t0 {
            self.opts.metrics.journal_synced(t0.elapsed().as_secs_f64());
        }
        for (tx, r) in replies {
            let _ = tx.send(r);
        }
    }

    fn next_timeout(&self) -> Duration {
        let now = self.engine.now();
        let mut t = Duration::from_millis(1000);
        if self.plugins.staging() || self.plugins.shadows.loading() || self.accounting_busy() {
            t = t.min(Duration::from_millis(20));
        }
        if let Some(w) = self.engine.next_wakeup()
            && w <= now
        {
            let min = Duration::from_millis(self.cfg.sched_min_interval_ms);
            t = t.min(min.saturating_sub(self.last_tick.elapsed()));
        }
        t
    }

    fn tick_due(&self) -> bool {
        let now = self.engine.now();
        let waited = self.last_tick.elapsed();
        waited >= Duration::from_secs(1)
            || (self.engine.next_wakeup().is_some_and(|w| w <= now)
                && waited >= Duration::from_millis(self.cfg.sched_min_interval_ms))
    }

    /// Runs one engine tick and journals its decisions; the caller carries them out once the
    /// journal is synced ([`Driver::carry_out`]).
    fn tick(&mut self) -> Decided {
        let t0 = Instant::now();
        self.plugins.before_pass();
        self.expire_deadlines();
        let events = self.engine.tick();
        self.last_tick = Instant::now();
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        self.metrics.ticks += 1;
        self.metrics.tick_ms_total += ms;
        self.metrics.tick_ms_max = self.metrics.tick_ms_max.max(ms);
        self.observe_passes();
        if !events.is_empty() || self.plugins.shadow_active() {
            self.shadow_pass();
        }
        self.record_events(events)
    }

    /// Journals the engine's events and gathers what they ask of the executor and the power
    /// programs.
    fn record_events(&mut self, events: Vec<Event>) -> Decided {
        let mut decided = Decided::default();
        let mut calls = Vec::new();
        for event in events {
            match event {
                Event::Started { job, .. } => {
                    // Taken back after a restart: journaled and running already.
                    if self
                        .ids
                        .public(job)
                        .is_some_and(|id| self.resumed.remove(&id))
                    {
                        continue;
                    }
                    if let Some(l) = self.record_start(job) {
                        decided.launches.push(l);
                    }
                }
                Event::Ended {
                    job,
                    state,
                    exit_code,
                    time,
                } => {
                    if let Some(p) = self.record_end(job, state, exit_code, time) {
                        decided.kills.push(p);
                    }
                }
                Event::Power(sluice_engine::PowerEvent::Call(call)) => calls.push(call),
                // Its nodes registered: it runs now.
                Event::Power(sluice_engine::PowerEvent::JobReady { job, time }) => {
                    if let Some(l) = self.record_ready(job, time) {
                        decided.launches.push(l);
                    }
                }
            }
        }
        self.journal_power();
        self.log_power(&calls);
        decided.runs = self.journal_power_calls(calls);
        decided
    }

    /// Carries out what a tick decided. Its records are synced already, so no process runs
    /// that a restart would not know about.
    fn carry_out(&mut self, decided: Decided) {
        for p in decided.kills {
            self.exec.terminate(p);
        }
        self.launch_all(decided.launches);
        self.start_power_programs(decided.runs);
    }

    fn commit(&mut self, rec: crate::image::Record) {
        let job = rec.job_id();
        if let Err(e) = self.store.commit(rec) {
            tracing::error!("journal append failed, stopping: {e}");
            std::process::exit(70);
        }
        if let Some(id) = job {
            self.accounting_note(id);
        }
    }

    fn purge_old(&mut self) {
        let horizon = self.engine.now() - self.cfg.min_job_age as i64;
        while let Some(eid) = self.ids.next_due(horizon) {
            let id = self.ids.public(eid);
            if self.engine.purge(eid) {
                self.ids.purged(eid);
                // Its end is journaled: what the executor kept of it may go.
                if let Some(id) = id {
                    self.exec.forget(id);
                }
            }
        }
    }

    /// The engine's usage and limits' use now, which a snapshot records.
    fn snapshot_basis(&self) -> crate::store::SnapshotBasis {
        crate::store::SnapshotBasis {
            usage: engine::own_usage(&self.engine),
            limit_use: engine::limit_use(&self.engine),
            time: self.engine.now(),
        }
    }

    /// Completes a snapshot being written, or starts one when due; both off the driver's
    /// thread but for copying the image and the journal's tail.
    fn maybe_snapshot(&mut self) {
        match self.store.finish_snapshot(false) {
            Ok(true) => self.metrics.snapshots += 1,
            Ok(false) => {}
            Err(e) => tracing::error!("snapshot failed (the journal keeps everything): {e}"),
        }
        if !self.store.snapshot_due(self.cfg.snapshot_every) {
            return;
        }
        if let Err(e) = self.store.begin_snapshot(self.snapshot_basis()) {
            tracing::error!("snapshot failed (the journal keeps everything): {e}");
        }
    }

    fn snapshot(&mut self) -> Result<(), crate::error::StoreError> {
        self.store.snapshot(self.snapshot_basis())?;
        self.metrics.snapshots += 1;
        Ok(())
    }
}
