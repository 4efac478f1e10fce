//! Owns a scenario replay: the engine on a virtual clock driven by jobs and timed actions, nodes
//! booting after `--boot-time`, and the scenario log (`sluice sim --log`).
//!
//! At each instant, in order: jobs whose run time is up end, booted nodes register, actions
//! run (file order), jobs are submitted (file order), then the engine ticks (scheduling passes,
//! then the power pass) until nothing more is due at that instant; state changes are logged.
//! The replay runs until no job is left and no power timer is pending, or until nothing has
//! happened for [`IDLE_LIMIT`] seconds with jobs still left (a `stopped` record lists them).

mod accounting;
mod input;

pub use accounting::PowerMetrics;
pub use input::{Action, ActionKind, Scenario};
pub use sluice_engine::state_log::{JobSeen, StateLog};

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::str::FromStr;
use std::sync::Arc;

use serde_json::json;
use sluice_cluster::{Cluster, NodeId};
use sluice_engine::{
    Engine, EngineConfig, Event, JobId, ManualClock, NodeUpdate, Policies, PowerEvent, Program,
};

use crate::job::{Time, WorkloadJob};
use crate::scheduler::engine::{job_spec, largest_node_cpus};
use crate::scheduler::{JobKey, Submission};
use accounting::PowerAccounting;

/// The engine clock at the replay's start: a real epoch, so that no time is Slurm's "0 = never".
pub const START: i64 = 1_700_000_000;

/// Seconds without any logged change, with jobs left, after which the replay gives up.
pub const IDLE_LIMIT: i64 = 7 * 86_400;

/// Ticks at one instant after which the clock moves on anyway (a pass asking for another).
const TICKS_PER_INSTANT: usize = 16;

/// How resumed nodes come up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Boot {
    /// A resumed node registers this many seconds after ResumeProgram was called.
    After(i64),
    /// Only `register` actions bring nodes up.
    Manual,
}

impl FromStr for Boot {
    type Err = String;

    /// `60` or `manual`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text == "manual" {
            return Ok(Boot::Manual);
        }
        text.parse::<i64>()
            .ok()
            .filter(|s| *s >= 0)
            .map(Boot::After)
            .ok_or_else(|| format!("boot time `{text}`: expected seconds ≥ 0 or `manual`"))
    }
}

/// What a scenario replay ended with.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ScenarioOutcome {
    /// Seconds from the start to the last instant processed.
    pub end: Time,
    /// Jobs that reached a final state.
    pub jobs_ended: u64,
    /// Trace ids of jobs still pending or running when the replay stopped.
    pub jobs_left: Vec<u64>,
    /// Jobs the engine refused at submission.
    pub refused: u64,
    /// Program calls made: (suspend, resume, resume-fail).
    pub calls: (u64, u64, u64),
    /// Log lines written.
    pub log_lines: u64,
    /// Node-hours per power state, boots, the wait boots added, energy.
    pub power: PowerMetrics,
}

/// Something that happens at a known instant.
#[derive(Debug)]
enum Item {
    /// A job's run time is up, if it is still running since `since`.
    End { job: JobId, since: i64 },
    /// A node's boot requested at `asked` completes.
    Boot { node: NodeId, asked: i64 },
    /// A timed action.
    Act(Action),
    /// A job's submission.
    Submit(WorkloadJob),
}

impl Item {
    /// Order among items of one instant: ends, boots, actions, submissions.
    fn class(&self) -> u8 {
        match self {
            Item::End { .. } => 0,
            Item::Boot { .. } => 1,
            Item::Act(_) => 2,
            Item::Submit(_) => 3,
        }
    }
}

/// A job in flight: its trace id and run time.
struct Flight {
    trace_id: u64,
    run_time: Time,
    /// The start its end was scheduled for.
    scheduled_for: Option<i64>,
    /// Engine time of its submission.
    submitted: i64,
    /// Since when it has been CONFIGURING, if it is.
    configuring_since: Option<i64>,
    /// Whether it has run yet.
    started: bool,
    /// Requeues seen so far.
    restarts: u32,
}

/// Replays `scenario` on `cluster` with `policies`, writing the log to `out`.
pub fn run_scenario<W: Write>(
    cluster: Cluster,
    policies: Policies,
    scenario: Scenario,
    boot: Boot,
    out: W,
) -> std::io::Result<(ScenarioOutcome, W)> {
    let cpus_per_node = largest_node_cpus(&cluster);
    let clock = ManualClock::new(START);
    let mut config = EngineConfig::for_cluster(&cluster);
    config.create_missing_associations = true;
    let engine = Engine::with_config(cluster, policies, Arc::new(clock.clone()), config);
    let accounting = PowerAccounting::new(&engine, START);
    let mut run = Run {
        accounting,
        engine,
        clock,
        boot,
        log: StateLog::new(out, START),
        queue: BTreeMap::new(),
        seq: 0,
        flights: HashMap::new(),
        by_trace: HashMap::new(),
        cpus_per_node,
        outcome: ScenarioOutcome {
            end: 0,
            jobs_ended: 0,
            jobs_left: Vec::new(),
            refused: 0,
            calls: (0, 0, 0),
            log_lines: 0,
            power: PowerMetrics::default(),
        },
    };
    for job in scenario.jobs {
        run.push(START + job.submit, Item::Submit(job));
    }
    for action in scenario.actions {
        run.push(START + action.at, Item::Act(action));
    }
    run.run()?;
    let Run {
        log,
        mut outcome,
        accounting,
        engine,
        ..
    } = run;
    outcome.log_lines = log.lines;
    outcome.power = accounting.finish(START + outcome.end, engine.cluster().power.watts.as_ref());
    Ok((outcome, log.finish()?))
}

/// The replay's state.
struct Run<W: Write> {
    accounting: PowerAccounting,
    engine: Engine,
    clock: ManualClock,
    boot: Boot,
    log: StateLog<W>,
    queue: BTreeMap<(i64, u8, u64), Item>,
    seq: u64,
    flights: HashMap<JobId, Flight>,
    by_trace: HashMap<u64, JobId>,
    cpus_per_node: u32,
    outcome: ScenarioOutcome,
}

impl<W: Write> Run<W> {
    fn push(&mut self, at: i64, item: Item) {
        self.seq += 1;
        self.queue.insert((at, item.class(), self.seq), item);
    }

    fn run(&mut self) -> std::io::Result<()> {
        self.log.nodes(&self.engine)?;
        let mut now = START;
        let mut last_news = START;
        loop {
            self.clock.set(now);
            let before = self.log.lines;
            while let Some(entry) = self.queue.first_entry() {
                if entry.key().0 > now {
                    break;
                }
                let item = entry.remove();
                self.handle(item, now)?;
            }
            // What the inputs changed before any pass, e.g. a POWER_DOWN request (`idle!`).
            self.observe(now)?;
            for _ in 0..TICKS_PER_INSTANT {
                let events = self.engine.tick();
                self.events(events, now)?;
                self.observe(now)?;
                if self.engine.next_wakeup().is_none_or(|t| t > now) {
                    break;
                }
            }
            if self.log.lines != before {
                last_news = now;
            }
            self.outcome.end = now - START;
            let left = !self.flights.is_empty();
            if self.queue.is_empty() && !left && !self.engine.power_pending() {
                return Ok(());
            }
            if self.queue.is_empty() && now - last_news > IDLE_LIMIT {
                let mut jobs: Vec<u64> = self.flights.values().map(|f| f.trace_id).collect();
                jobs.sort_unstable();
                self.log
                    .stopped(now, "nothing happened for 7 days", &jobs)?;
                self.outcome.jobs_left = jobs;
                return Ok(());
            }
            let next = [
                self.queue.first_key_value().map(|(k, _)| k.0),
                self.engine.next_wakeup(),
            ]
            .into_iter()
            .flatten()
            .min();
            now = match next {
                Some(t) if t > now => t,
                Some(_) => now + 1,
                None if left => now + IDLE_LIMIT + 1,
                None => return Ok(()),
            };
        }
    }

    /// Carries out one item at `now`.
    fn handle(&mut self, item: Item, now: i64) -> std::io::Result<()> {
        match item {
            Item::End { job, since } => {
                let running = self.engine.job(job).is_some_and(|j| {
                    j.state == sluice_engine::JobState::Running && j.start_time == Some(since)
                });
                if running {
                    let _ = self.engine.job_finished(job, 0);
                }
            }
            Item::Boot { node, asked } => {
                let np = self.engine.power().node(node.index());
                if np.flags.has(sluice_engine::power::PowerFlags::POWERING_UP)
                    && np.boot_requested == Some(asked)
                {
                    self.engine.register_node(node);
                }
            }
            Item::Act(action) => self.act(action, now)?,
            Item::Submit(job) => self.submit(job, now)?,
        }
        Ok(())
    }

    fn submit(&mut self, job: WorkloadJob, now: i64) -> std::io::Result<()> {
        let submission = Submission {
            key: JobKey(0),
            seq: self.seq,
            id: job.id,
            submit: job.submit,
            procs: job.procs,
            estimate: job.requested_time,
            swf: &job.swf,
            slurm: job.slurm.as_deref(),
        };
        let by_trace = &self.by_trace;
        let spec = job_spec(&submission, self.cpus_per_node, |id| {
            by_trace.get(&id).copied()
        })
        .map_err(|e| e.to_string());
        match spec.and_then(|spec| self.engine.submit(spec).map_err(|e| e.to_string())) {
            Ok(id) => {
                self.by_trace.insert(job.id, id);
                self.flights.insert(
                    id,
                    Flight {
                        trace_id: job.id,
                        run_time: job.run_time,
                        scheduled_for: None,
                        submitted: now,
                        configuring_since: None,
                        started: false,
                        restarts: 0,
                    },
                );
            }
            Err(error) => {
                self.outcome.refused += 1;
                self.log
                    .refused(now, json!({"job": job.id, "state": "REFUSED"}), &error)?;
            }
        }
        Ok(())
    }

    fn act(&mut self, action: Action, now: i64) -> std::io::Result<()> {
        let record = match &action.kind {
            ActionKind::Register { nodes } => json!({"action": "register", "nodes": nodes}),
            ActionKind::Update {
                nodes,
                state,
                reason,
            } => json!({"action": "update", "nodes": nodes, "state": state, "reason": reason}),
            ActionKind::Cancel { job } => json!({"action": "cancel", "job": job}),
        };
        if let Err(error) = self.try_act(&action.kind) {
            self.log.refused(now, record, &error)?;
        }
        Ok(())
    }

    /// Runs an action, or says why the scheduler refused it (as scontrol would).
    fn try_act(&mut self, kind: &ActionKind) -> Result<(), String> {
        match kind {
            ActionKind::Register { nodes } => {
                for node in self.nodes_of(nodes)? {
                    self.engine.register_node(node);
                }
            }
            ActionKind::Update {
                nodes,
                state,
                reason,
            } => {
                let update = NodeUpdate::from_str(state).map_err(|e| e.to_string())?;
                let mut errors = Vec::new();
                for node in self.nodes_of(nodes)? {
                    if let Err(e) = self.engine.update_node(node, update, reason.as_deref()) {
                        let name = &self.engine.nodes().node(node).name;
                        errors.push(format!("{name}: {e}"));
                    }
                }
                if !errors.is_empty() {
                    return Err(errors.join("; "));
                }
            }
            ActionKind::Cancel { job } => {
                let id = self
                    .by_trace
                    .get(job)
                    .ok_or_else(|| format!("invalid job id {job}"))?;
                self.engine.cancel(*id).map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    }

    /// The nodes of a hostlist, each a configured node.
    fn nodes_of(&self, expr: &str) -> Result<Vec<NodeId>, String> {
        let names = sluice_hostlist::expand_at_most(expr, 1 << 20).map_err(|e| e.to_string())?;
        names
            .iter()
            .map(|name| {
                self.engine
                    .cluster()
                    .node_id(name)
                    .ok_or_else(|| format!("invalid node name {name}"))
            })
            .collect()
    }

    /// Logs program calls and schedules the boots of resumed nodes.
    fn events(&mut self, events: Vec<Event>, now: i64) -> std::io::Result<()> {
        for event in events {
            let Event::Power(PowerEvent::Call(call)) = event else {
                continue;
            };
            self.log.program(&call)?;
            self.accounting
                .program(call.program == Program::Resume, &call.nodes);
            match call.program {
                Program::Suspend => self.outcome.calls.0 += 1,
                Program::Resume => {
                    self.outcome.calls.1 += 1;
                    if let Boot::After(seconds) = self.boot {
                        for &node in &call.nodes {
                            self.push(now + seconds, Item::Boot { node, asked: now });
                        }
                    }
                }
                Program::ResumeFail => self.outcome.calls.2 += 1,
            }
        }
        Ok(())
    }

    /// Logs node and job changes; schedules the ends of jobs that started running; forgets
    /// ended jobs.
    fn observe(&mut self, now: i64) -> std::io::Result<()> {
        self.log.nodes(&self.engine)?;
        self.accounting.observe(&self.engine, now);
        let mut ids: Vec<JobId> = self.flights.keys().copied().collect();
        ids.sort_unstable();
        let mut ended = Vec::new();
        for id in ids {
            let Some(job) = self.engine.job(id) else {
                continue;
            };
            let flight = self.flights.get_mut(&id).expect("listed above");
            let seen = JobSeen::of(job);
            let start = job.start_time;
            let (running, final_state) = (
                job.state == sluice_engine::JobState::Running,
                job.state.is_final(),
            );
            let trace_id = flight.trace_id;
            if job.restarts > flight.restarts {
                self.accounting.requeued();
                flight.restarts = job.restarts;
            }
            let configuring = job.state == sluice_engine::JobState::Configuring;
            match (configuring, flight.configuring_since) {
                (true, None) => flight.configuring_since = Some(now),
                (false, Some(since)) => {
                    self.accounting.configured(now - since);
                    flight.configuring_since = None;
                }
                _ => {}
            }
            if running && !flight.started {
                flight.started = true;
                self.accounting.started(now - flight.submitted);
            }
            let mut end_at = None;
            if running && flight.scheduled_for != start {
                flight.scheduled_for = start;
                end_at = start.map(|s| (s + flight.run_time, s));
            }
            self.log.job(now, trace_id, seen)?;
            if let Some((at, since)) = end_at {
                self.push(at, Item::End { job: id, since });
            }
            if final_state {
                ended.push((id, trace_id));
            }
        }
        for (id, trace_id) in ended {
            self.flights.remove(&id);
            self.log.forget_job(trace_id);
            self.engine.purge(id);
            self.outcome.jobs_ended += 1;
        }
        Ok(())
    }
}
