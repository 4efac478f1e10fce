//! Quality of service records: priority, usage factor and limits.

use serde::Serialize;

use super::TimeLimit;

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
}

/// QOS limits (sacctmgr names); every field `None` means no limit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct QosLimits {
    /// `MaxWall`: longest time limit per job.
    pub max_wall: Option<TimeLimit>,
    /// `MaxJobsPerUser`: running jobs per user.
    pub max_jobs_per_user: Option<u32>,
    /// `MaxSubmitJobsPerUser`: pending plus running jobs per user.
    pub max_submit_jobs_per_user: Option<u32>,
    /// `MaxTRESPerUser=cpu=`: CPUs in use per user.
    pub max_cpus_per_user: Option<u32>,
    /// `MaxTRESPerJob=node=`: nodes per job.
    pub max_nodes_per_job: Option<u32>,
    /// `GrpTRES=cpu=`: CPUs in use by all jobs of the QOS.
    pub grp_cpus: Option<u32>,
    /// `GrpJobs`: running jobs of the QOS.
    pub grp_jobs: Option<u32>,
}
