//! Quality of service records: priority, usage factor and limits.

use serde::Serialize;

use super::{TimeLimit, TresLimits};

/// Index of a QOS in [`super::Cluster::qos`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct QosId(pub u32);

impl QosId {
    /// The index as `usize`.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One QOS.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Qos {
    /// `Name`.
    pub name: String,
    /// QOS priority, normalized by the largest over all QOS (`Priority`, default 0).
    pub priority: u32,
    /// Multiplier on charged usage (`UsageFactor`, default 1.0).
    pub usage_factor: f64,
    /// Usage is not decayed (`Flags=NoDecay`).
    pub no_decay: bool,
    /// Limits; `None` everywhere means unlimited.
    pub limits: QosLimits,
    /// `Flags=DenyOnLimit`: a job over a `Max*` limit on its own is refused at submission
    /// instead of pending.
    pub deny_on_limit: bool,
    /// `Flags=OverPartQOS`: this QOS's limits take precedence over the partition QOS's.
    pub over_part_qos: bool,
}

/// QOS limits (sacctmgr names); every field `None` (or an empty [`TresLimits`]) means no limit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct QosLimits {
    /// `MaxWall`: longest time limit per job.
    pub max_wall: Option<TimeLimit>,
    /// `MaxJobsPerUser`: running jobs per user.
    pub max_jobs_per_user: Option<u32>,
    /// `MaxSubmitJobsPerUser`: pending plus running jobs per user.
    pub max_submit_jobs_per_user: Option<u32>,
    /// `MaxTRESPerJob`.
    pub max_tres_per_job: TresLimits,
    /// `MaxTRESPerUser`: TRES in use by one user's running jobs.
    pub max_tres_per_user: TresLimits,
    /// `MaxTRESMinsPerJob`: TRES × time limit in minutes, per job.
    pub max_tres_mins_per_job: TresLimits,
    /// `GrpTRES`: TRES in use by all running jobs of the QOS.
    pub grp_tres: TresLimits,
    /// `GrpJobs`: running jobs of the QOS.
    pub grp_jobs: Option<u32>,
    /// `GrpSubmitJobs`: pending plus running jobs of the QOS.
    pub grp_submit_jobs: Option<u32>,
    /// `MaxTRESPerNode`: TRES a job may ask on any one node.
    pub max_tres_per_node: TresLimits,
    /// `GrpTRESMins`: TRES-minutes the QOS's jobs used (decayed with PriorityDecayHalfLife
    /// unless `NoDecay`, running jobs' accrued time included).
    pub grp_tres_mins: TresLimits,
    /// `GrpTRESRunMins`: TRES × remaining time limit of the QOS's running jobs.
    pub grp_tres_run_mins: TresLimits,
    /// `GrpWall`: wall-clock time the QOS's jobs ran (decayed like usage).
    pub grp_wall: Option<TimeLimit>,
}
