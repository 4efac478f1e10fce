//! The Slurm-like engine as a replay scheduler: main loop, backfill and the policies it is given.

mod machine;
mod spec;

pub use machine::FlatMachine;
pub use spec::{SpecError, job_spec};

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use sluice_cluster::Cluster;
use sluice_engine::{
    Engine, EngineConfig, Event, JobId, ManualClock, Policies, PowerEvent, Program, SchedulerKind,
};

use crate::job::Time;
use crate::scheduler::{JobKey, ReplayScheduler, Submission};

/// Skipped ticks after which one runs anyway to collect the engine's events.
const SKIPS_BETWEEN_DRAINS: u64 = 1024;

/// When the engine's scheduling passes run on the virtual clock (`--passes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Passes {
    /// Only when something happened: at every event time (a job arrives or ends) with jobs
    /// waiting, the event-triggered main loop, the periodic one if `sched_interval` is up and
    /// a backfill pass if `bf_interval` is; a backfill pass the interval held back runs the
    /// moment it is up. That is Slurm's backfill agent, which runs a cycle every `bf_interval`
    /// only if jobs or nodes changed since the last one.
    #[default]
    Event,
    /// Also when nothing happened: the periodic main loop every `sched_interval` and backfill
    /// every `bf_interval` seconds of virtual time while jobs wait. Much slower (a pass every
    /// 30 s of a year-long trace); passes without news change only what time alone moves.
    Periodic,
}

impl Passes {
    /// The name on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Passes::Event => "event",
            Passes::Periodic => "periodic",
        }
    }
}

impl fmt::Display for Passes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `--passes` value other than `event` or `periodic`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown pass mode `{0}` (expected event or periodic)")]
pub struct UnknownPasses(pub String);

impl FromStr for Passes {
    type Err = UnknownPasses;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "event" => Ok(Passes::Event),
            "periodic" => Ok(Passes::Periodic),
            other => Err(UnknownPasses(other.to_string())),
        }
    }
}

/// How the engine-backed scheduler is set up, besides its cluster and policies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineOptions {
    /// Name in reports, e.g. `slurm` or the bundle's file name.
    pub name: String,
    /// The engine's scheduler besides the main loop (Slurm's backfill by default).
    pub kind: SchedulerKind,
    /// When passes run.
    pub passes: Passes,
    /// CPUs per node assumed when turning SWF processors into nodes (the largest node's CPU
    /// count of the cluster is a good choice; 1 on a flat machine of one-CPU nodes).
    pub cpus_per_node: u32,
}

impl EngineOptions {
    /// Slurm's backfill, event passes, `cpus_per_node` from the cluster's largest node.
    pub fn for_cluster(name: &str, cluster: &Cluster) -> Self {
        EngineOptions {
            name: name.to_string(),
            kind: SchedulerKind::Backfill,
            passes: Passes::Event,
            cpus_per_node: largest_node_cpus(cluster),
        }
    }
}

/// The largest CPU count of any node (1 for a cluster without nodes).
pub fn largest_node_cpus(cluster: &Cluster) -> u32 {
    cluster
        .nodes
        .iter()
        .map(|n| n.cpus)
        .max()
        .unwrap_or(1)
        .max(1)
}

/// The engine before the first submission fixes its clock, then the running engine.
enum State {
    Idle(Box<(Cluster, Policies)>),
    Running(Box<Engine>),
    /// Only while moving from `Idle` to `Running`.
    Moving,
}

/// [`ReplayScheduler`] backed by `sluice-engine`: the same code and policies a live host runs.
///
/// The replay driver owns run times: the engine's time-limit enforcement is off, so under
/// `run-to-completion` a job runs until the driver ends it, and the engine's backfill planning
/// believes a job past its limit ends at the next second (as the fast schedulers do). Under
/// `kill-at-limit` the driver ends a job at its limit, so nothing changes. Ended jobs are purged
/// from the engine at once, so memory follows the jobs in flight. A job the engine refuses at
/// submission (unknown partition or QOS, over MaxTime, too large for any node) is reported
/// through [`ReplayScheduler::take_refused`] and counted by the driver.
pub struct EngineScheduler {
    state: State,
    clock: ManualClock,
    options: EngineOptions,
    key_of: HashMap<JobId, JobKey>,
    id_of_key: Vec<Option<JobId>>,
    /// Trace id → engine id of the jobs in flight, for dependencies (JSON lines only).
    by_trace_id: HashMap<u64, JobId>,
    trace_id_of_key: Vec<u64>,
    refused: Vec<(JobKey, String)>,
    queued: usize,
    skipped: u64,
}

impl EngineScheduler {
    /// A scheduler over `cluster` consulting `policies`; the engine starts at the first submission.
    pub fn new(cluster: Cluster, policies: Policies, options: EngineOptions) -> Self {
        EngineScheduler {
            state: State::Idle(Box::new((cluster, policies))),
            clock: ManualClock::new(0),
            options,
            key_of: HashMap::new(),
            id_of_key: Vec::new(),
            by_trace_id: HashMap::new(),
            trace_id_of_key: Vec::new(),
            refused: Vec::new(),
            queued: 0,
            skipped: 0,
        }
    }

    /// The engine, once the first job has been submitted.
    pub fn engine(&self) -> Option<&Engine> {
        match &self.state {
            State::Running(engine) => Some(engine),
            _ => None,
        }
    }

    fn engine_at(&mut self, now: Time) -> &mut Engine {
        self.clock.set(now);
        if let State::Idle(_) = self.state {
            let State::Idle(parts) = std::mem::replace(&mut self.state, State::Moving) else {
                unreachable!("matched above");
            };
            let (cluster, policies) = *parts;
            self.clock = ManualClock::new(now);
            let mut config = EngineConfig::for_cluster(&cluster);
            config.scheduler = self.options.kind;
            config.create_missing_associations = true;
            config.enforce_time_limits = false;
            config.skip_backfill_without_fit = true;
            config.defer_lone_priority = true;
            config.skip_priority_factors = true;
            let engine =
                Engine::with_config(cluster, policies, Arc::new(self.clock.clone()), config);
            self.state = State::Running(Box::new(engine));
        }
        match &mut self.state {
            State::Running(engine) => engine,
            _ => unreachable!("the engine was started above"),
        }
    }

    fn set_key(&mut self, key: JobKey, id: Option<JobId>, trace_id: u64) {
        let i = key.index();
        if self.id_of_key.len() <= i {
            self.id_of_key.resize(i + 1, None);
            self.trace_id_of_key.resize(i + 1, 0);
        }
        self.id_of_key[i] = id;
        self.trace_id_of_key[i] = trace_id;
    }
}

impl ReplayScheduler for EngineScheduler {
    fn name(&self) -> &str {
        &self.options.name
    }

    fn submit(&mut self, job: &Submission<'_>, now: Time) {
        let cpus_per_node = self.options.cpus_per_node;
        let spec = {
            let by_trace_id = &self.by_trace_id;
            spec::job_spec(job, cpus_per_node, |id| by_trace_id.get(&id).copied())
        };
        let spec = match spec {
            Ok(spec) => spec,
            Err(error) => {
                self.refused.push((job.key, error.to_string()));
                return;
            }
        };
        match self.engine_at(now).submit(spec) {
            Ok(id) => {
                self.key_of.insert(id, job.key);
                self.set_key(job.key, Some(id), job.id);
                if job.slurm.is_some() {
                    self.by_trace_id.insert(job.id, id);
                }
                self.queued += 1;
            }
            Err(error) => self
                .refused
                .push((job.key, format!("job {}: {error}", job.id))),
        }
    }

    fn complete(&mut self, key: JobKey, now: Time) {
        let Some(id) = self.id_of_key.get_mut(key.index()).and_then(Option::take) else {
            return;
        };
        self.key_of.remove(&id);
        let trace_id = self.trace_id_of_key[key.index()];
        if self.by_trace_id.get(&trace_id) == Some(&id) {
            self.by_trace_id.remove(&trace_id);
        }
        let engine = self.engine_at(now);
        // The driver only completes jobs this scheduler started, so the engine knows them running.
        let _ = engine.job_finished(id, 0);
        engine.purge(id);
    }

    fn schedule(&mut self, now: Time, start: &mut Vec<JobKey>) {
        if matches!(self.state, State::Idle(_)) {
            return;
        }
        let power_due = self
            .engine()
            .and_then(Engine::power_work_at)
            .is_some_and(|t| t <= now);
        if self.options.passes == Passes::Event
            && !power_due
            && !self.engine().is_some_and(Engine::some_pending_job_fits)
        {
            // Neither loop can start a job that needs more CPUs than are free, and a pass keeps
            // nothing but its starts, so skipping it starts nothing differently. It does move
            // where usage is next accrued (Slurm's per-interval approximation does not compose),
            // which can nudge fair-share priorities. Every so often the tick runs anyway, so the
            // events of jobs ended meanwhile do not pile up in the engine.
            self.skipped += 1;
            if !self.skipped.is_multiple_of(SKIPS_BETWEEN_DRAINS) {
                return;
            }
        }
        let events = self.engine_at(now).tick();
        for event in events {
            match event {
                Event::Started { job, .. } => {
                    if let Some(&key) = self.key_of.get(&job) {
                        start.push(key);
                        self.queued -= 1;
                    }
                }
                // Trace replays boot nodes at once, so run times count from the allocation;
                // the scenario replay (`scenario`) models boot time.
                Event::Power(PowerEvent::Call(call)) if call.program == Program::Resume => {
                    let engine = self.engine_at(now);
                    for node in call.nodes {
                        engine.register_node(node);
                    }
                }
                _ => {}
            }
        }
    }

    fn queued(&self) -> usize {
        self.queued
    }

    fn next_wakeup(&self, now: Time) -> Option<Time> {
        // Power timers (SuspendTime, SuspendTimeout…) are due whether or not jobs wait; a
        // cluster without power saving has none.
        let power = self
            .engine()
            .and_then(Engine::power_work_at)
            .filter(|&t| t > now);
        let passes = match (&self.state, self.options.passes) {
            (State::Running(engine), Passes::Periodic) if self.queued > 0 => {
                engine.next_wakeup().filter(|&t| t > now)
            }
            (State::Running(engine), Passes::Event) if self.queued > 0 => {
                engine.backfill_owed_at().filter(|&t| t > now)
            }
            _ => None,
        };
        [passes, power].into_iter().flatten().min()
    }

    fn take_refused(&mut self, out: &mut Vec<(JobKey, String)>) {
        out.append(&mut self.refused);
    }
}
