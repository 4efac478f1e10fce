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
    /// `MaxTRESPerNode`.
    TresPerNode,
    /// `GrpTRESMins`: decayed TRES-minutes used.
    GrpTresMins,
    /// `GrpTRESRunMins`: TRES × remaining time limit of running jobs.
    GrpTresRunMins,
    /// `GrpWall`: decayed wall-clock time used.
    GrpWall,
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
    /// `license/<name>`.
    License,
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
            (Qos, GrpTres, License) => "QOSGrpLicense",
            (Assoc, GrpTres, Cpu) => "AssocGrpCpuLimit",
            (Assoc, GrpTres, Mem) => "AssocGrpMemLimit",
            (Assoc, GrpTres, Node) => "AssocGrpNodeLimit",
            (Assoc, GrpTres, Gres) => "AssocGrpGRES",
            (Assoc, GrpTres, License) => "AssocGrpLicense",
            (Qos, TresPerJob, Cpu) => "QOSMaxCpuPerJobLimit",
            (Qos, TresPerJob, Mem) => "QOSMaxMemoryPerJob",
            (Qos, TresPerJob, Node) => "QOSMaxNodePerJobLimit",
            (Qos, TresPerJob, Gres) => "QOSMaxGRESPerJob",
            (Qos, TresPerJob, License) => "QOSMaxLicensePerJob",
            (Assoc, TresPerJob, Cpu) => "AssocMaxCpuPerJobLimit",
            (Assoc, TresPerJob, Mem) => "AssocMaxMemPerJob",
            (Assoc, TresPerJob, Node) => "AssocMaxNodePerJobLimit",
            (Assoc, TresPerJob, Gres) => "AssocMaxGRESPerJob",
            (Assoc, TresPerJob, License) => "AssocMaxLicensePerJob",
            (_, TresPerUser, Cpu) => "QOSMaxCpuPerUserLimit",
            (_, TresPerUser, Mem) => "QOSMaxMemoryPerUser",
            (_, TresPerUser, Node) => "QOSMaxNodePerUserLimit",
            (_, TresPerUser, Gres) => "QOSMaxGRESPerUser",
            (_, TresPerUser, License) => "QOSMaxLicensePerUser",
            (Qos, TresMinsPerJob, Cpu) => "QOSMaxCpuMinutesPerJobLimit",
            (Qos, TresMinsPerJob, Mem) => "QOSMaxMemoryMinutesPerJob",
            (Qos, TresMinsPerJob, Node) => "QOSMaxNodeMinutesPerJob",
            (Qos, TresMinsPerJob, Gres) => "QOSMaxGRESMinutesPerJob",
            (Qos, TresMinsPerJob, License) => "QOSMaxLicenseMinutesPerJob",
            (Assoc, TresMinsPerJob, Cpu) => "AssocMaxCpuMinutesPerJobLimit",
            (Assoc, TresMinsPerJob, Mem) => "AssocMaxMemMinutesPerJob",
            (Assoc, TresMinsPerJob, Node) => "AssocMaxNodeMinutesPerJob",
            (Assoc, TresMinsPerJob, Gres) => "AssocMaxGRESMinutesPerJob",
            (Assoc, TresMinsPerJob, License) => "AssocMaxLicenseMinutesPerJob",
            (Qos, TresPerNode, Cpu) => "QOSMaxCpuPerNode",
            (Qos, TresPerNode, Mem) => "QOSMaxMemoryPerNode",
            (Qos, TresPerNode, Gres) => "QOSMaxGRESPerNode",
            // Slurm has no per-node reason of its own for nodes and licenses.
            (Qos, TresPerNode, Node | License) => "QOSMaxUnknownPerNode",
            (Assoc, TresPerNode, Cpu) => "AssocMaxCpuPerNode",
            (Assoc, TresPerNode, Mem) => "AssocMaxMemPerNode",
            (Assoc, TresPerNode, Gres) => "AssocMaxGRESPerNode",
            (Assoc, TresPerNode, Node | License) => "AssocMaxUnknownPerNode",
            (Qos, GrpTresMins, Cpu) => "QOSGrpCPUMinutesLimit",
            (Qos, GrpTresMins, Mem) => "QOSGrpMemoryMinutes",
            (Qos, GrpTresMins, Node) => "QOSGrpNodeMinutes",
            (Qos, GrpTresMins, Gres) => "QOSGrpGRESMinutes",
            (Qos, GrpTresMins, License) => "QOSGrpLicenseMinutes",
            (Assoc, GrpTresMins, Cpu) => "AssocGrpCPUMinutesLimit",
            (Assoc, GrpTresMins, Mem) => "AssocGrpMemMinutes",
            (Assoc, GrpTresMins, Node) => "AssocGrpNodeMinutes",
            (Assoc, GrpTresMins, Gres) => "AssocGrpGRESMinutes",
            (Assoc, GrpTresMins, License) => "AssocGrpLicenseMinutes",
            (Qos, GrpTresRunMins, Cpu) => "QOSGrpCPURunMinutesLimit",
            (Qos, GrpTresRunMins, Mem) => "QOSGrpMemoryRunMinutes",
            (Qos, GrpTresRunMins, Node) => "QOSGrpNodeRunMinutes",
            (Qos, GrpTresRunMins, Gres) => "QOSGrpGRESRunMinutes",
            (Qos, GrpTresRunMins, License) => "QOSGrpLicenseRunMinutes",
            (Assoc, GrpTresRunMins, Cpu) => "AssocGrpCPURunMinutesLimit",
            (Assoc, GrpTresRunMins, Mem) => "AssocGrpMemRunMinutes",
            (Assoc, GrpTresRunMins, Node) => "AssocGrpNodeRunMinutes",
            (Assoc, GrpTresRunMins, Gres) => "AssocGrpGRESRunMinutes",
            (Assoc, GrpTresRunMins, License) => "AssocGrpLicenseRunMinutes",
            (Qos, GrpWall, _) => "QOSGrpWallLimit",
            (Assoc, GrpWall, _) => "AssocGrpWallLimit",
        }
    }
}
