//! Owns the engine's state: the struct holding every piece, its construction and read access.
//!
//! The pieces: cluster, jobs, nodes, licenses, GRES, reservations, usage, priorities, pass storage
//! and policies. Passes borrow views of it (`fit`, `priority_pass`) rather than the whole engine.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use sluice_cluster::{AssocId, AssocKind, Cluster, SchedulerParams};
use sluice_policy::{HresPolicy, JobTable, PriorityContext};

use crate::clock::Clock;
use crate::config::{EngineConfig, Policies, SchedulerKind};
use crate::event::Event;
use crate::fit::Fit;
use crate::gres::cores::CpuMap;
use crate::gres::{GresConfigError, GresState};
use crate::job::{Job, JobId};
use crate::job_map::JobMap;
use crate::licenses::LicenseState;
use crate::node_state::{NodeState, PartView};
use crate::pacing::Pacing;
use crate::pass_buffers::PassBuffers;
use crate::pending::PendingJobs;
use crate::power::state::PowerState;
use crate::priority::{PriorityInputs, PriorityPass, PriorityState};
use crate::reservation::Reservations;
use crate::stats::{Faults, PassStats, PassTotals};
use crate::usage::Usage;

/// The [`Fit`] view of an engine's fields: a macro, so that it borrows those fields alone and
/// other fields stay free to borrow beside it.
macro_rules! fit_of {
    ($engine:expr) => {
        Fit {
            jobs: &$engine.jobs,
            running: &$engine.running,
            nodes: &$engine.nodes,
            parts: &$engine.parts,
            gres: &$engine.gres,
            lic: &$engine.lic,
            resv: &$engine.resv,
        }
    };
}

/// The [`PriorityInputs`] of an engine's fields, borrowing those fields alone (see `fit_of`).
macro_rules! priority_inputs_of {
    ($engine:expr) => {
        PriorityInputs {
            cluster: &$engine.cluster,
            config: &$engine.config,
            usage: &$engine.usage,
            nodes: &$engine.nodes,
            qos: &$engine.qos_view,
            clock: $engine.clock.as_ref(),
        }
    };
}

/// The scheduling engine. See the crate documentation for how to drive it.
pub struct Engine {
    /// The cluster as configured; associations grow with `create_missing_associations`
    /// (submit.rs).
    pub(crate) cluster: Cluster,
    /// Each user's first user association in cluster order: where a job that names no account
    /// is charged. Kept with `cluster.associations`, which only grows.
    pub(crate) user_assocs: HashMap<String, AssocId>,
    /// Settings (config.rs).
    pub(crate) config: EngineConfig,
    /// The time the engine runs on (clock.rs).
    pub(crate) clock: Arc<dyn Clock>,
    /// The policies consulted (config.rs).
    pub(crate) policies: Policies,
    /// Node health, power and free resources (node_state.rs).
    pub(crate) nodes: NodeState,
    /// Licenses and HRES layers with their use (licenses.rs).
    pub(crate) lic: LicenseState,
    /// GRES devices and their holders (gres/node.rs).
    pub(crate) gres: GresState,
    /// Which CPUs of each node each job holds (gres/cores.rs).
    pub(crate) cpus: CpuMap,
    /// Advance reservations (reservation.rs).
    pub(crate) resv: Reservations,
    /// Fair-share usage per association (usage.rs).
    pub(crate) usage: Usage,
    /// Each partition's nodes (node_state.rs).
    pub(crate) parts: Vec<PartView>,
    /// Every job by id (job_map.rs).
    pub(crate) jobs: JobMap,
    /// The pending jobs (pending.rs).
    pub(crate) pending: PendingJobs,
    /// Jobs holding resources (CONFIGURING, RUNNING, COMPLETING).
    pub(crate) running: BTreeSet<JobId>,
    /// The id the next submission gets.
    pub(crate) next_id: JobId,
    /// Events decided since the last tick handed them out (event.rs).
    pub(crate) outbox: Vec<Event>,
    /// When passes last ran, and what the next owes (pacing.rs).
    pub(crate) pacing: Pacing,
    /// Counters of the last main-loop and backfill passes (stats.rs).
    pub(crate) last_main_stats: PassStats,
    pub(crate) last_backfill_stats: PassStats,
    /// Every main-loop and backfill pass, counted and timed (stats.rs).
    pub(crate) main_totals: PassTotals,
    pub(crate) backfill_totals: PassTotals,
    /// Plugin answers refused (stats.rs).
    pub(crate) faults: Faults,
    /// Priority calculation's state between passes (priority.rs).
    pub(crate) priorities: PriorityState,
    /// Whether the selection policy has this pass's node table (`begin_pass` was called).
    pub(crate) selection_begun: bool,
    /// Storage the passes reuse, lent to each pass (pass_buffers.rs).
    pub(crate) pass_buffers: PassBuffers,
    /// The cluster's QOS as the contract shows them (priority.rs's `contract_qos`).
    pub(crate) qos_view: Vec<sluice_policy::Qos>,
    /// Power flags, timers, resume list and rate buckets (power/state.rs).
    pub(crate) power: PowerState,
    /// What association and QOS limits count (limits/).
    pub(crate) limits: crate::limits::Limits,
    /// Job arrays (array.rs).
    pub(crate) arrays: crate::array::Arrays,
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
        let cpus = CpuMap::of_cluster(&cluster);
        let parts = PartView::of_cluster(&cluster);
        let usage = Usage::of_cluster(&cluster, now);
        let qos_view = crate::priority::contract_qos(&cluster);
        let user_assocs = first_user_assocs(&cluster);
        let power = PowerState::new(&cluster, now);
        let limits = crate::limits::Limits::new(&cluster);
        Ok(Self {
            next_id: config.first_job_id.max(1),
            arrays: Default::default(),
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
            pacing: Pacing::new(now),
            last_main_stats: PassStats::default(),
            last_backfill_stats: PassStats::default(),
            main_totals: PassTotals::default(),
            backfill_totals: PassTotals::default(),
            faults: Faults::default(),
            priorities: PriorityState::new(),
            selection_begun: false,
            pass_buffers: PassBuffers::default(),
            qos_view,
            power,
            limits,
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

    /// The state whether a job fits is judged from, borrowed.
    pub(crate) fn fit(&self) -> Fit<'_> {
        fit_of!(self)
    }

    /// [`Engine::fit`] beside the HRES policy, which planning asks while it reads that state.
    pub(crate) fn fit_and_hres(&mut self) -> (Fit<'_>, &mut Option<Box<dyn HresPolicy + Send>>) {
        (fit_of!(self), &mut self.policies.hres)
    }

    /// What priority calculation reads, as the engine holds it now.
    pub(crate) fn priority_inputs(&self) -> PriorityInputs<'_> {
        priority_inputs_of!(self)
    }

    /// A priority calculation over the engine's jobs with its priority policy.
    pub(crate) fn priority_pass(&mut self) -> PriorityPass<'_> {
        PriorityPass {
            inputs: priority_inputs_of!(self),
            state: &mut self.priorities,
            jobs: &mut self.jobs,
            policy: self.policies.priority.as_mut(),
            faults: &mut self.faults,
        }
    }

    /// The context a priority pass shares between jobs, with usage as the engine keeps it.
    pub fn priority_context(&self) -> PriorityContext {
        self.priority_inputs().context()
    }

    /// The job table a priority call gets for `eligible` (one row per job and partition), with
    /// each row's (job, position in its partition list).
    pub fn job_table(&self, eligible: &[JobId]) -> (JobTable, Vec<(JobId, u16)>) {
        self.priority_inputs().job_table(&self.jobs, eligible)
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

    /// How many jobs are pending.
    pub fn pending_count(&self) -> usize {
        self.pending.len()
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

    /// The decayed use `GrpTRESMins` and `GrpWall` are held to: per QOS and per association
    /// (by index; an association's over its subtree), for a restart to keep.
    pub fn limit_use(&self) -> (Vec<crate::limits::SpentUse>, Vec<crate::limits::SpentUse>) {
        self.limits.used_export()
    }

    /// Gives back the use an earlier engine's [`Engine::limit_use`] took (after a restart).
    pub fn restore_limit_use(
        &mut self,
        qos: &[(sluice_cluster::QosId, crate::limits::SpentUse)],
        assocs: &[(sluice_cluster::AssocId, crate::limits::SpentUse)],
    ) {
        self.limits.used_restore(qos, assocs);
    }

    /// Counters of the last main-loop pass.
    pub fn last_main_stats(&self) -> &PassStats {
        &self.last_main_stats
    }

    /// Counters of the last backfill pass.
    pub fn last_backfill_stats(&self) -> &PassStats {
        &self.last_backfill_stats
    }

    /// Every main-loop pass so far, counted and timed on the engine's clock.
    pub fn main_totals(&self) -> &PassTotals {
        &self.main_totals
    }

    /// Every backfill pass so far, counted and timed on the engine's clock.
    pub fn backfill_totals(&self) -> &PassTotals {
        &self.backfill_totals
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
        self.priorities.due = true;
        Ok(())
    }

    /// Recalculates every pending job's priority at the next pass instead of at the next
    /// PriorityCalcPeriod, e.g. after a new priority policy was swapped in behind the engine.
    pub fn recalculate_priorities(&mut self) {
        self.priorities.due = true;
    }

    /// Power flags, timers and the power pass's state.
    pub fn power(&self) -> &PowerState {
        &self.power
    }

    /// Every node's GRES devices and counts with their holders.
    pub fn gres(&self) -> &GresState {
        &self.gres
    }
}

/// Each user's first user association in cluster order.
fn first_user_assocs(cluster: &Cluster) -> HashMap<String, AssocId> {
    let mut user_assocs = HashMap::new();
    for (i, a) in cluster.associations.iter().enumerate() {
        if let AssocKind::User(name) = &a.kind {
            user_assocs.entry(name.clone()).or_insert(AssocId(i as u32));
        }
    }
    user_assocs
}
