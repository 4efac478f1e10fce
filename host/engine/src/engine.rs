//! The engine: cluster state, jobs and policies, and what happens when the clock moves.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use serde::Serialize;
use sluice_cluster::{AssocId, AssocKind, Cluster, NodeId, PartitionId, SchedulerParams};
use sluice_policy::NodeBitmap;

use crate::backfill::PlanningBuffers;
use crate::clock::Clock;
use crate::gres::cores::CpuMap;
use crate::gres::{GresConfigError, GresState};
use crate::job::{Job, JobId, JobState};
use crate::job_map::JobMap;
use crate::licenses::LicenseState;
use crate::main_loop::MainPassBuffers;
use crate::node_state::NodeState;
use crate::pending::PendingJobs;
use crate::priority::PriorityReport;
use crate::reservation::Reservations;
use crate::usage::Usage;

pub use sluice_policy::Policies;

/// Which scheduler runs besides the main loop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum SchedulerKind {
    /// Slurm's sched/backfill: a reservation for every job tested, within bf_* limits.
    #[default]
    Backfill,
    /// Classic EASY backfilling: only the first blocked job gets a reservation.
    Easy,
    /// Conservative backfilling: every pending job gets a reservation, no test limits.
    Conservative,
    /// Plain first come, first served: the main loop stops at the first job that cannot start.
    Fcfs,
}

impl SchedulerKind {
    /// Parses `backfill`, `easy`, `conservative` or `fcfs` (also Slurm's `sched/backfill`, `sched/builtin`).
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text.trim().to_ascii_lowercase().as_str() {
            "backfill" | "sched/backfill" => Self::Backfill,
            "easy" => Self::Easy,
            "conservative" => Self::Conservative,
            "fcfs" | "builtin" | "sched/builtin" => Self::Fcfs,
            _ => return None,
        })
    }
}

/// Engine settings that slurm.conf does not carry.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EngineConfig {
    /// Scheduler besides the main loop.
    pub scheduler: SchedulerKind,
    /// Scheduler parameters; taken from the cluster by [`Engine::new`].
    pub params: SchedulerParams,
    /// First job id handed out (Slurm's FirstJobId, 1).
    pub first_job_id: JobId,
    /// Create a user association under the account (or root) for unknown users, as a
    /// cluster without AccountingStorageEnforce accepts them; useful for trace replay.
    pub create_missing_associations: bool,
    /// Hold ended jobs in COMPLETING until [`Engine::epilog_complete`] is called for them.
    pub track_completing: bool,
    /// Log every GRES allocation and release at debug level on target `sluice::gres`
    /// (Slurm's `DebugFlags=GRES`).
    pub debug_gres: bool,
    /// End running jobs with TIMEOUT when their time limit passes (on). A trace replay that owns
    /// the run times turns it off, so a job runs until [`Engine::job_finished`]; planning still
    /// believes a job past its limit ends at the next instant.
    pub enforce_time_limits: bool,
    /// Skip a backfill pass when no pending job needs as few CPUs as the usable nodes have free,
    /// and end a pass at the first queue position from which no job does: what is skipped could
    /// start nothing and would only refresh expected start times and reasons, which a replay
    /// never shows. Off in the live host, so `squeue --start` stays current.
    pub skip_backfill_without_fit: bool,
    /// When a pass's queue is a single job in a single partition, no priority orders it: the
    /// priority call that job is due is put off until the tick's passes end and made only if
    /// it is still pending, with the clock and usage the passes ran under, so it stores what
    /// an immediate call would have. A job that starts at once then costs no call. Ignored
    /// while `bf_min_prio_reserve` reads priorities. Off in the live host, where sprio and
    /// squeue show a job's priority from its first pass.
    pub defer_lone_priority: bool,
    /// Ask the priority policy for its answer without the per-factor breakdown
    /// ([`sluice_policy::PriorityContext::skip_factors`]), which only `sprio` shows. The
    /// priorities are the same. Off in the live host, which keeps the last breakdown for
    /// `sluice prio`; a replay never shows it.
    pub skip_priority_factors: bool,
    /// Within a backfill pass, a plain job found to have no start in the window rules out the
    /// later jobs of its shape that need as many nodes for as long, without planning them: a
    /// pass only takes resources away, so they cannot have one either. On by default; it
    /// changes no decision, only the cost, and can be turned off to show exactly that.
    pub remember_unplannable: bool,
}

impl EngineConfig {
    /// Defaults with the cluster's scheduler parameters.
    pub fn for_cluster(cluster: &Cluster) -> Self {
        Self {
            scheduler: SchedulerKind::Backfill,
            params: cluster.scheduler.clone(),
            first_job_id: 1,
            create_missing_associations: false,
            track_completing: false,
            debug_gres: false,
            enforce_time_limits: true,
            skip_backfill_without_fit: false,
            defer_lone_priority: false,
            skip_priority_factors: false,
            remember_unplannable: true,
        }
    }
}

/// Which loop started a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Loop {
    /// The main scheduling loop.
    Main,
    /// The backfill scheduler.
    Backfill,
}

/// What the engine decided: the executor (slurmd, a remote agent, the simulator) carries it out.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Event {
    /// A job was allocated nodes and should be launched.
    Started {
        /// Job.
        job: JobId,
        /// Partition it runs in.
        partition: PartitionId,
        /// Its nodes.
        nodes: Vec<NodeId>,
        /// Start time.
        time: i64,
        /// The loop that started it.
        by: Loop,
    },
    /// A job ended (finished, cancelled, timed out, node failure); its processes must be gone.
    Ended {
        /// Job.
        job: JobId,
        /// Final state.
        state: JobState,
        /// Exit code, when it finished by itself.
        exit_code: Option<i32>,
        /// End time.
        time: i64,
    },
    /// Powered-down nodes a starting job needs: run ResumeProgram on them.
    PowerUp {
        /// Nodes to resume.
        nodes: Vec<NodeId>,
    },
}

/// Counters of the last passes, for logs and benchmarks.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PassStats {
    /// Records (job × partition) in the sorted queue.
    pub queued: usize,
    /// Records tried.
    pub tested: usize,
    /// Jobs started.
    pub started: usize,
    /// Backfill reservations made.
    pub reserved: usize,
    /// Why the pass stopped early, if it did (`max_sched_time`, `default_queue_depth`, `bf_max_job_test`, …).
    pub stopped_by: Option<&'static str>,
}

/// Answers a plugin gave that broke the contract, counted per kind.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Faults {
    /// Priority answers refused.
    pub priority: u64,
    /// Placements refused.
    pub selection: u64,
    /// HRES answers refused.
    pub hres: u64,
    /// GRES device picks refused.
    pub gres: u64,
}

/// Precomputed per-partition data.
#[derive(Clone, Debug)]
pub(crate) struct PartView {
    pub nodes: NodeBitmap,
}

/// The scheduling engine. See the crate documentation for how to drive it.
pub struct Engine {
    pub(crate) cluster: Cluster,
    /// Each user's first user association in cluster order: where a job that names no account
    /// is charged. Kept with `cluster.associations`, which only grows.
    pub(crate) user_assocs: HashMap<String, AssocId>,
    pub(crate) config: EngineConfig,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) policies: Policies,
    pub(crate) nodes: NodeState,
    pub(crate) lic: LicenseState,
    pub(crate) gres: GresState,
    pub(crate) cpus: CpuMap,
    pub(crate) resv: Reservations,
    pub(crate) usage: Usage,
    pub(crate) parts: Vec<PartView>,
    pub(crate) jobs: JobMap,
    pub(crate) pending: PendingJobs,
    pub(crate) running: BTreeSet<JobId>,
    pub(crate) next_id: JobId,
    pub(crate) outbox: Vec<Event>,
    pub(crate) sched_requested: bool,
    pub(crate) last_sched: i64,
    pub(crate) last_backfill: i64,
    /// Whether a tick ran without the backfill pass `bf_interval` did not yet allow, so that
    /// the pass is owed once it does ([`Engine::backfill_owed_at`]).
    pub(crate) backfill_owed: bool,
    pub(crate) last_main_stats: PassStats,
    pub(crate) last_backfill_stats: PassStats,
    pub(crate) faults: Faults,
    pub(crate) last_priorities: PriorityReport,
    /// Whether the next pass recalculates every eligible job's priority: set at start-up, when
    /// usage decays (every PriorityCalcPeriod) and when the policies change.
    pub(crate) priorities_due: bool,
    /// The lone job whose priority call a pass put off ([`EngineConfig::defer_lone_priority`]).
    pub(crate) priority_owed: Option<JobId>,
    /// The context of the last priority calculation, refreshed for the next one.
    pub(crate) context_cache: Option<sluice_policy::PriorityContext>,
    /// The job table and its rows' (job, partition position) of the last priority call, kept
    /// so the next call refills them instead of allocating thirteen columns again.
    pub(crate) job_table_buffers: (sluice_policy::JobTable, Vec<(JobId, u16)>),
    /// Whether the selection policy has this pass's node table (`begin_pass` was called).
    pub(crate) selection_begun: bool,
    /// Backfill's planning buffers, lent to each pass.
    pub(crate) planning_buffers: PlanningBuffers,
    /// Storage the main loop's passes reuse.
    pub(crate) main_pass_buffers: MainPassBuffers,
    pub(crate) qos_view: Vec<sluice_policy::Qos>,
}

impl Engine {
    /// Builds an engine over `cluster` with its scheduler parameters and Slurm's backfill scheduler.
    pub fn new(cluster: Cluster, policies: Policies, clock: Arc<dyn Clock>) -> Self {
        let config = EngineConfig::for_cluster(&cluster);
        Self::with_config(cluster, policies, clock, config)
    }

    /// Builds an engine with explicit settings.
    ///
    /// # Panics
    /// If a GRES policy refuses the node configuration; [`Engine::try_with_config`] returns that
    /// as an error instead.
    pub fn with_config(
        cluster: Cluster,
        policies: Policies,
        clock: Arc<dyn Clock>,
        config: EngineConfig,
    ) -> Self {
        Self::try_with_config(cluster, policies, clock, config).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Builds an engine, first asking each GRES policy to validate every node's configuration of
    /// its name (the role of `node_config_load`); a configuration a policy refuses is an error.
    pub fn try_with_config(
        cluster: Cluster,
        mut policies: Policies,
        clock: Arc<dyn Clock>,
        config: EngineConfig,
    ) -> Result<Self, GresConfigError> {
        let now = clock.now();
        let nodes = NodeState::from_cluster(&cluster);
        let lic = LicenseState::from_cluster(&cluster);
        let gres = GresState::from_cluster(&cluster, &nodes.table().gres_kinds, |k| {
            policies.gres.iter().any(|(n, _)| n == k)
        });
        crate::gres::validate(&gres, &cluster.nodes, &mut policies.gres)?;
        let cpus = CpuMap::new(
            cluster.nodes.iter().map(|n| n.cpus).collect(),
            cluster
                .nodes
                .iter()
                .map(|n| u32::from(n.threads_per_core.max(1)))
                .collect(),
        );
        let parts = cluster
            .partitions
            .iter()
            .map(|p| PartView {
                nodes: p.nodes.iter().map(|n| n.0).collect(),
            })
            .collect();
        // The configured starting usage is each association's own; the tree sum is what the contract shows.
        let mut usage = Usage::new(
            &cluster
                .associations
                .iter()
                .map(|a| sluice_cluster::Association {
                    raw_usage: 0.0,
                    ..a.clone()
                })
                .collect::<Vec<_>>(),
            cluster.priority.priority_decay_half_life,
            cluster.priority.priority_calc_period,
            now,
        );
        for (i, a) in cluster.associations.iter().enumerate() {
            if a.raw_usage != 0.0 {
                usage.add(AssocId(i as u32), a.raw_usage);
            }
        }
        let mut qos_view: Vec<sluice_policy::Qos> = cluster
            .qos
            .iter()
            .map(|q| sluice_policy::Qos {
                name: q.name.clone(),
                priority: q.priority,
                usage_factor: q.usage_factor,
            })
            .collect();
        if qos_view.is_empty() {
            qos_view.push(sluice_policy::Qos {
                name: "normal".into(),
                priority: 0,
                usage_factor: 1.0,
            });
        }
        let mut user_assocs = HashMap::new();
        for (i, a) in cluster.associations.iter().enumerate() {
            if let AssocKind::User(name) = &a.kind {
                user_assocs.entry(name.clone()).or_insert(AssocId(i as u32));
            }
        }
        Ok(Self {
            next_id: config.first_job_id.max(1),
            user_assocs,
            cluster,
            config,
            clock,
            policies,
            nodes,
            lic,
            gres,
            cpus,
            resv: Reservations::default(),
            usage,
            parts,
            jobs: JobMap::default(),
            pending: PendingJobs::default(),
            running: BTreeSet::new(),
            outbox: Vec::new(),
            sched_requested: false,
            last_sched: now,
            last_backfill: now,
            backfill_owed: false,
            last_main_stats: PassStats::default(),
            last_backfill_stats: PassStats::default(),
            faults: Faults::default(),
            last_priorities: PriorityReport::default(),
            priorities_due: true,
            priority_owed: None,
            context_cache: None,
            job_table_buffers: Default::default(),
            selection_begun: false,
            planning_buffers: PlanningBuffers::default(),
            main_pass_buffers: MainPassBuffers::default(),
            qos_view,
        })
    }

    /// The cluster as configured (associations may have grown with `create_missing_associations`).
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// The engine's settings.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Changes the scheduler (FCFS, EASY, conservative or Slurm's backfill) from the next pass on.
    pub fn set_scheduler(&mut self, kind: SchedulerKind) {
        self.config.scheduler = kind;
    }

    /// Mutable scheduler parameters, for `scontrol reconfigure`-like changes and tests.
    pub fn params_mut(&mut self) -> &mut SchedulerParams {
        &mut self.config.params
    }

    /// The scheduler parameters for a pass to hold while it changes the engine: every one a
    /// number or a flag, copied, except SelectTypeParameters, which no pass reads and which
    /// would cost a pass an allocation.
    pub(crate) fn pass_params(&self) -> SchedulerParams {
        SchedulerParams {
            select_type_parameters: Vec::new(),
            ..self.config.params
        }
    }

    /// Current time on the engine's clock.
    pub fn now(&self) -> i64 {
        self.clock.now()
    }

    /// One job, in any state.
    pub fn job(&self, id: JobId) -> Option<&Job> {
        self.jobs.get(&id)
    }

    /// Every job in id order.
    pub fn jobs(&self) -> impl Iterator<Item = &Job> {
        self.jobs.values()
    }

    /// Ids of pending jobs.
    pub fn pending_ids(&self) -> impl Iterator<Item = JobId> + '_ {
        self.pending.iter().copied()
    }

    /// Ids of jobs holding resources (CONFIGURING, RUNNING, COMPLETING).
    pub fn running_ids(&self) -> impl Iterator<Item = JobId> + '_ {
        self.running.iter().copied()
    }

    /// Node state (health, power, free resources).
    pub fn nodes(&self) -> &NodeState {
        &self.nodes
    }

    /// License and HRES counts.
    pub fn licenses(&self) -> &LicenseState {
        &self.lic
    }

    /// Advance reservations.
    pub fn reservations(&self) -> &Reservations {
        &self.resv
    }

    /// Decayed usage per association.
    pub fn usage(&self) -> &Usage {
        &self.usage
    }

    /// Counters of the last main-loop pass.
    pub fn last_main_stats(&self) -> &PassStats {
        &self.last_main_stats
    }

    /// Counters of the last backfill pass.
    pub fn last_backfill_stats(&self) -> &PassStats {
        &self.last_backfill_stats
    }

    /// Contract violations seen so far.
    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    /// Replaces the policies (a new plugin generation); takes effect at the next pass. GRES
    /// policies are validated against the node configuration first; on refusal nothing changes.
    pub fn set_policies(&mut self, mut policies: Policies) -> Result<(), GresConfigError> {
        crate::gres::validate(&self.gres, &self.cluster.nodes, &mut policies.gres)?;
        self.policies = policies;
        self.priorities_due = true;
        Ok(())
    }

    /// Recalculates every pending job's priority at the next pass instead of at the next
    /// PriorityCalcPeriod, e.g. after a new priority policy was swapped in behind the engine.
    pub fn recalculate_priorities(&mut self) {
        self.priorities_due = true;
    }

    /// Every node's GRES devices and counts with their holders.
    pub fn gres(&self) -> &GresState {
        &self.gres
    }

    /// Processes everything due at the clock's current time and returns what the engine decided:
    /// time limits, usage decay, an event-triggered main loop if something changed, the periodic
    /// main loop every `sched_interval`, and backfill every `bf_interval`.
    pub fn tick(&mut self) -> Vec<Event> {
        let now = self.clock.now();
        self.enforce_time_limits(now);
        self.accrue_usage(now);
        let params = &self.config.params;
        let periodic = params.sched_interval >= 0 && now >= self.main_loop_due_at();
        let backfill = self.backfills() && now >= self.backfill_due_at();
        let event = self.sched_requested && !params.defer;
        if self.pending.is_empty() {
            // A pass over an empty queue decides nothing but would still call the policies.
            self.sched_requested = false;
            if periodic {
                self.last_sched = now;
            }
            if backfill {
                self.last_backfill = now;
            }
            self.backfill_owed = false;
            return std::mem::take(&mut self.outbox);
        }
        let queue = if periodic {
            self.last_sched = now;
            self.run_main_pass(true)
        } else if event {
            self.run_main_pass(false)
        } else {
            None
        };
        if backfill {
            if !self.config.skip_backfill_without_fit || self.some_pending_job_fits() {
                self.run_backfill_pass(queue);
            }
            self.last_backfill = now;
        }
        self.backfill_owed = !backfill && self.backfills();
        self.end_passes()
    }

    /// Whether backfill passes run at all: not under FCFS, nor with `bf_interval` = −1.
    fn backfills(&self) -> bool {
        self.config.scheduler != SchedulerKind::Fcfs && self.config.params.bf_interval >= 0
    }

    /// When the periodic main loop is next due: `sched_interval` after the last one.
    fn main_loop_due_at(&self) -> i64 {
        self.last_sched + self.config.params.sched_interval.max(1)
    }

    /// When a backfill pass is next due: `bf_interval` after the last one.
    fn backfill_due_at(&self) -> i64 {
        self.last_backfill + self.config.params.bf_interval.max(1)
    }

    /// When the backfill pass a tick went without is due: `bf_interval` after the last pass,
    /// if a tick since then ran without one while jobs still wait. Slurm's backfill agent runs
    /// once the interval is up and only if something changed since its last cycle; a replay
    /// that ticks only at events wakes at this time for the same effect.
    pub fn backfill_owed_at(&self) -> Option<i64> {
        (self.backfill_owed && !self.pending.is_empty() && self.backfills())
            .then(|| self.backfill_due_at())
    }

    /// Whether the pending job needing the fewest CPUs needs no more than the usable nodes have
    /// free: a necessary condition for any start, cheap enough to ask before every pass (a
    /// replay skips the passes that could start nothing).
    pub fn some_pending_job_fits(&self) -> bool {
        self.pending
            .fewest_cpus()
            .is_some_and(|fewest| fewest <= self.nodes.free_cpus_on(self.nodes.usable_nodes()))
    }

    /// What every way of running passes ends with: the priority call a pass put off is made
    /// (or found needless), then the passes' events are handed out.
    fn end_passes(&mut self) -> Vec<Event> {
        self.settle_deferred_priority();
        std::mem::take(&mut self.outbox)
    }

    /// Runs a full (periodic) main-loop pass now, whatever the intervals say.
    pub fn schedule(&mut self) -> Vec<Event> {
        let now = self.clock.now();
        self.enforce_time_limits(now);
        self.run_main_pass(true);
        self.last_sched = now;
        self.end_passes()
    }

    /// Runs a backfill pass now (or nothing under FCFS), whatever the intervals say.
    pub fn backfill(&mut self) -> Vec<Event> {
        let now = self.clock.now();
        self.enforce_time_limits(now);
        if self.config.scheduler != SchedulerKind::Fcfs {
            self.run_backfill_pass(None);
        }
        self.last_backfill = now;
        self.backfill_owed = false;
        self.end_passes()
    }

    /// The next time [`Engine::tick`] has work to do, for a discrete-event simulator.
    pub fn next_wakeup(&self) -> Option<i64> {
        let params = &self.config.params;
        let mut times = Vec::new();
        if self.sched_requested && !params.defer {
            times.push(self.clock.now());
        }
        if !self.pending.is_empty() {
            if params.sched_interval >= 0 {
                times.push(self.main_loop_due_at());
            }
            if self.backfills() {
                times.push(self.backfill_due_at());
            }
            let begins = self
                .pending
                .iter()
                .filter_map(|id| self.jobs[id].spec.begin_time);
            times.extend(begins.filter(|t| *t > self.clock.now()));
        }
        if self.config.enforce_time_limits {
            times.extend(self.running.iter().filter_map(|id| {
                let job = &self.jobs[id];
                (job.state == JobState::Running)
                    .then_some(job.end_time)
                    .flatten()
            }));
        }
        if !self.running.is_empty() {
            times.push(self.usage.next_due());
        }
        times.into_iter().min()
    }
}
