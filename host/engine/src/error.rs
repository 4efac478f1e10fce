//! Owns no state: the errors of the engine's event API.
//!
//! Errors of the engine's event API.

use crate::job::{JobId, JobState};
use crate::licenses::LicenseError;
use crate::limits::reason::LimitReason;
use crate::request::ParseError;

/// Why a submission was refused (sbatch's error), leaving no job behind.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SubmitError {
    /// No association for this user (and account).
    #[error("invalid account or account/partition combination specified for user {user}")]
    UnknownAssociation {
        /// User.
        user: String,
        /// Account asked for, if any.
        account: Option<String>,
    },
    /// A partition that does not exist, or none configured.
    #[error("invalid partition name specified: {0}")]
    UnknownPartition(String),
    /// A QOS that does not exist.
    #[error("invalid qos specification: {0}")]
    UnknownQos(String),
    /// A QOS outside the association's QOS list (with `AccountingStorageEnforce=qos`).
    #[error("invalid qos specification: qos {qos} is not in the QOS list of account {account}")]
    QosNotInAssociation {
        /// The QOS asked for (or the default the job would take).
        qos: String,
        /// The job's account.
        account: String,
    },
    /// A GRES no node has.
    #[error("invalid generic resource (gres) specification: {0}")]
    UnknownGres(String),
    /// A GRES type no node configures under that name.
    #[error(
        "invalid generic resource (gres) specification: no node has {name} of type {gres_type}"
    )]
    UnknownGresType {
        /// GRES name.
        name: String,
        /// Type asked for.
        gres_type: String,
    },
    /// A per-node GRES count above what any node has.
    #[error(
        "invalid generic resource (gres) specification: {request} per node, at most {max} on any node"
    )]
    GresCount {
        /// The request, `name[:type]:count`.
        request: String,
        /// The most any node configures.
        max: u64,
    },
    /// GPU counts given in two ways that Slurm treats as mutually exclusive.
    #[error("invalid generic resource (gres) specification: {0} are mutually exclusive")]
    GresConflict(String),
    /// A bad `-L` request.
    #[error(transparent)]
    Licenses(#[from] LicenseError),
    /// A bad request string.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// The time limit is over the partition's MaxTime.
    #[error("requested time limit is invalid (missing or exceeds some limit)")]
    TimeLimit,
    /// More nodes than the partition allows or has.
    #[error("node count specification invalid")]
    NodeCount,
    /// A CPU, memory or GRES request no node of the partitions could ever satisfy.
    #[error("requested node configuration is not available")]
    NodeConfig,
    /// A reservation that does not exist or does not admit the job.
    #[error("access denied to reservation {0}")]
    Reservation(String),
    /// A partition's AllowAccounts or DenyAccounts refuses the account.
    #[error(
        "invalid account or account/partition combination specified: account {account} may not use partition {partition}"
    )]
    AccountNotAllowed {
        /// Account.
        account: String,
        /// Partition.
        partition: String,
    },
    /// A partition's AllowGroups names none of the user's groups.
    #[error("user's group not permitted to use this partition: {0}")]
    GroupNotAllowed(String),
    /// A partition's AllowQos or DenyQos refuses the QOS.
    #[error("invalid qos specification: qos {qos} may not use partition {partition}")]
    QosNotAllowed {
        /// QOS.
        qos: String,
        /// Partition.
        partition: String,
    },
    /// The partition is DRAIN or INACTIVE.
    #[error("required partition not available (inactive or drain): {0}")]
    PartitionNotAvailable(String),
    /// An association or QOS limit refuses the job (a submit count, or a per-job limit with
    /// DenyOnLimit).
    #[error(
        "job violates accounting/qos policy (job submit limit, user's size and/or time limits): {}",
        .0.as_str()
    )]
    AccountingPolicy(LimitReason),
    /// A dependency on a job that was never submitted.
    #[error("job dependency problem: unknown job {0}")]
    Dependency(JobId),
    /// A task of an array the engine does not know.
    #[error("job array {0} is unknown")]
    UnknownArray(JobId),
}

/// Why `--test-only` found no start for a job ([`crate::Engine::will_run`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WillRunError {
    /// Submission would refuse the job.
    #[error(transparent)]
    Submit(#[from] SubmitError),
    /// Nothing planned lets it start within the backfill window.
    #[error("job would not start within the backfill window (bf_window={window_minutes} minutes)")]
    NoStart {
        /// The window, in minutes.
        window_minutes: u64,
    },
}

/// Why an event about an existing job was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    /// No such job.
    #[error("invalid job id specified: {0}")]
    UnknownJob(JobId),
    /// The job is not in a state the event applies to.
    #[error("job {job} is {state:?}, which this operation does not apply to")]
    WrongState {
        /// Job.
        job: JobId,
        /// Its state.
        state: JobState,
    },
    /// No such step.
    #[error("invalid step id {step} for job {job}")]
    UnknownStep {
        /// Job.
        job: JobId,
        /// Step.
        step: u32,
    },
    /// The step asks for more than the allocation has left.
    #[error("step of job {0} does not fit in its allocation")]
    StepTooBig(JobId),
}
