//! Owns no state: the pending reasons and submit refusals of association and QOS limits, with
//! the names `squeue` prints (Slurm's `job_state_reason_string`).

use serde::Serialize;

/// Whose limit holds the job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Scope {
    /// The job's QOS or its partition's QOS.
    Qos,
    /// The job's association or one above it.
    Assoc,
}

/// Which limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Limit {
    /// Running jobs: QOS `MaxJobsPerUser`, association `MaxJobs`.
    Jobs,
    /// Pending plus running jobs: QOS `MaxSubmitJobsPerUser`, association `MaxSubmitJobs`.
    SubmitJobs,
    /// `GrpJobs`.
    GrpJobs,
    /// `GrpSubmitJobs`.
    GrpSubmitJobs,
    /// `MaxWall`.
    MaxWall,
    /// `MaxTRESPerJob` (association `MaxTRES`).
    TresPerJob,
    /// `MaxTRESPerUser` (QOS only).
    TresPerUser,
    /// `MaxTRESMinsPerJob` (association `MaxTRESMins`).
    TresMinsPerJob,
    /// `GrpTRES`.
    GrpTres,
}

/// Which TRES a TRES limit is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Tres {
    /// `cpu`.
    Cpu,
    /// `mem`.
    Mem,
    /// `node`.
    Node,
    /// `gres/<name>`.
    Gres,
}

/// One limit that holds (or refuses) a job: whose, which, and for TRES limits which TRES.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct LimitReason {
    /// QOS or association.
    pub scope: Scope,
    /// The limit.
    pub limit: Limit,
    /// The TRES, for the TRES limits (`Cpu` otherwise, unused).
    pub tres: Tres,
}

impl LimitReason {
    /// A limit that is not about a TRES.
    pub const fn of(scope: Scope, limit: Limit) -> Self {
        Self {
            scope,
            limit,
            tres: Tres::Cpu,
        }
    }

    /// Whether the limit refuses a job at submission whatever the QOS flags say (the submit
    /// counts), rather than only with `DenyOnLimit`.
    pub fn refuses_at_submit(self) -> bool {
        matches!(self.limit, Limit::SubmitJobs | Limit::GrpSubmitJobs)
    }

    /// Slurm's spelling.
    pub fn as_str(self) -> &'static str {
        use Limit::*;
        use Scope::*;
        use Tres::*;
        match (self.scope, self.limit, self.tres) {
            (Qos, Jobs, _) => "QOSMaxJobsPerUserLimit",
            (Assoc, Jobs, _) => "AssocMaxJobsLimit",
            (Qos, SubmitJobs, _) => "QOSMaxSubmitJobPerUserLimit",
            (Assoc, SubmitJobs, _) => "AssocMaxSubmitJobLimit",
            (Qos, GrpJobs, _) => "QOSGrpJobsLimit",
            (Assoc, GrpJobs, _) => "AssocGrpJobsLimit",
            (Qos, GrpSubmitJobs, _) => "QOSGrpSubmitJobsLimit",
            (Assoc, GrpSubmitJobs, _) => "AssocGrpSubmitJobsLimit",
            (Qos, MaxWall, _) => "QOSMaxWallDurationPerJobLimit",
            (Assoc, MaxWall, _) => "AssocMaxWallDurationPerJobLimit",
            (Qos, GrpTres, Cpu) => "QOSGrpCpuLimit",
            (Qos, GrpTres, Mem) => "QOSGrpMemLimit",
            (Qos, GrpTres, Node) => "QOSGrpNodeLimit",
            (Qos, GrpTres, Gres) => "QOSGrpGRES",
            (Assoc, GrpTres, Cpu) => "AssocGrpCpuLimit",
            (Assoc, GrpTres, Mem) => "AssocGrpMemLimit",
            (Assoc, GrpTres, Node) => "AssocGrpNodeLimit",
            (Assoc, GrpTres, Gres) => "AssocGrpGRES",
            (Qos, TresPerJob, Cpu) => "QOSMaxCpuPerJobLimit",
            (Qos, TresPerJob, Mem) => "QOSMaxMemoryPerJob",
            (Qos, TresPerJob, Node) => "QOSMaxNodePerJobLimit",
            (Qos, TresPerJob, Gres) => "QOSMaxGRESPerJob",
            (Assoc, TresPerJob, Cpu) => "AssocMaxCpuPerJobLimit",
            (Assoc, TresPerJob, Mem) => "AssocMaxMemPerJob",
            (Assoc, TresPerJob, Node) => "AssocMaxNodePerJobLimit",
            (Assoc, TresPerJob, Gres) => "AssocMaxGRESPerJob",
            (_, TresPerUser, Cpu) => "QOSMaxCpuPerUserLimit",
            (_, TresPerUser, Mem) => "QOSMaxMemoryPerUser",
            (_, TresPerUser, Node) => "QOSMaxNodePerUserLimit",
            (_, TresPerUser, Gres) => "QOSMaxGRESPerUser",
            (Qos, TresMinsPerJob, Cpu) => "QOSMaxCpuMinutesPerJobLimit",
            (Qos, TresMinsPerJob, Mem) => "QOSMaxMemoryMinutesPerJob",
            (Qos, TresMinsPerJob, Node) => "QOSMaxNodeMinutesPerJob",
            (Qos, TresMinsPerJob, Gres) => "QOSMaxGRESMinutesPerJob",
            (Assoc, TresMinsPerJob, Cpu) => "AssocMaxCpuMinutesPerJobLimit",
            (Assoc, TresMinsPerJob, Mem) => "AssocMaxMemMinutesPerJob",
            (Assoc, TresMinsPerJob, Node) => "AssocMaxNodeMinutesPerJob",
            (Assoc, TresMinsPerJob, Gres) => "AssocMaxGRESMinutesPerJob",
        }
    }
}
