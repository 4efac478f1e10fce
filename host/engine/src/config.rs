//! Owns the engine's settings: its policies, scheduler kind, and what slurm.conf does not carry.

use serde::Serialize;
use sluice_cluster::{Cluster, SchedulerParams};

use crate::job_id::JobId;

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
    /// Scheduler parameters; taken from the cluster by [`crate::Engine::new`].
    pub params: SchedulerParams,
    /// First job id handed out (Slurm's FirstJobId, 1).
    pub first_job_id: JobId,
    /// Create a user association under the account (or root) for unknown users, as a
    /// cluster without AccountingStorageEnforce accepts them; useful for trace replay.
    pub create_missing_associations: bool,
    /// Create a user association for a user the tree lacks under the account it names (or
    /// root), but refuse an account the tree lacks (the cluster's `CreateMissingAssociations`).
    pub create_missing_users: bool,
    /// Hold ended jobs in COMPLETING until [`crate::Engine::epilog_complete`] is called for them.
    pub track_completing: bool,
    /// Log every GRES allocation and release at debug level on target `sluice::gres`
    /// (Slurm's `DebugFlags=GRES`).
    pub debug_gres: bool,
    /// End running jobs with TIMEOUT when their time limit passes (on). A trace replay that owns
    /// the run times turns it off, so a job runs until [`crate::Engine::job_finished`]; planning still
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
    /// Between recalculations of every eligible job (each PriorityCalcPeriod, and when the
    /// policies change), ask only the jobs that have no priority yet (new, released,
    /// requeued), as slurmctld's `set_job_prio` does at submission; the others keep theirs
    /// until the next recalculation. On in the live host, where a pass after every few
    /// submissions would otherwise recalculate the whole queue; off in a replay, whose
    /// results are defined by recalculating every job whenever one is new.
    pub priority_new_jobs_alone: bool,
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
    /// While new jobs' priorities are calculated alone, keep the queue sorted between passes,
    /// so that an event-triggered pass checks only the jobs that changed and sorts nothing.
    /// On by default; it changes no decision, only the cost, and can be turned off to show
    /// exactly that.
    pub keep_ready_queue: bool,
}

impl EngineConfig {
    /// Defaults with the cluster's scheduler parameters.
    pub fn for_cluster(cluster: &Cluster) -> Self {
        Self {
            scheduler: SchedulerKind::Backfill,
            params: cluster.scheduler.clone(),
            first_job_id: 1,
            create_missing_associations: !cluster.enforce.associations,
            create_missing_users: cluster.enforce.create_missing_users,
            track_completing: false,
            debug_gres: false,
            enforce_time_limits: true,
            skip_backfill_without_fit: false,
            defer_lone_priority: false,
            priority_new_jobs_alone: false,
            skip_priority_factors: false,
            remember_unplannable: true,
            keep_ready_queue: true,
        }
    }
}
