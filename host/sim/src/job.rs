//! The workload job: what a trace says about one job, independent of the trace format.

/// Seconds on the virtual clock; SWF time 0 is the trace's `UnixStartTime`.
pub type Time = i64;

/// One job as read from a workload, before any scheduling decision.
///
/// The flat-machine schedulers only look at `submit`, `procs` and `requested_time`; the rest is
/// carried for the Slurm-like engine and for reports.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadJob {
    /// The job number from the trace. Not necessarily unique or consecutive (cleaned SWF logs skip numbers).
    pub id: u64,
    /// Submission time in seconds.
    pub submit: Time,
    /// How long the job really ran, in seconds (never negative: such jobs are dropped by the readers).
    pub run_time: Time,
    /// The user's runtime estimate (time limit) in seconds; the run time when the trace has none.
    pub requested_time: Time,
    /// Processors the job occupies on a flat machine (always at least 1).
    pub procs: u32,
    /// The SWF bookkeeping fields, `-1` where unknown.
    pub swf: SwfFields,
    /// Slurm-like request fields, present for JSON-lines workloads.
    pub slurm: Option<Box<SlurmRequest>>,
}

/// SWF fields 12–18 that the flat schedulers ignore but a policy may use (`-1` = unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwfFields {
    /// Field 12, user ID.
    pub user: i64,
    /// Field 13, group ID.
    pub group: i64,
    /// Field 14, executable (application) number.
    pub executable: i64,
    /// Field 15, queue number (0 = interactive by convention).
    pub queue: i64,
    /// Field 16, partition number.
    pub partition: i64,
    /// Field 17, the job that must finish before this one.
    pub preceding_job: i64,
    /// Field 18, think time after the preceding job, in seconds.
    pub think_time: i64,
}

impl SwfFields {
    /// All fields unknown, as for workloads that are not SWF.
    pub const UNKNOWN: SwfFields = SwfFields {
        user: -1,
        group: -1,
        executable: -1,
        queue: -1,
        partition: -1,
        preceding_job: -1,
        think_time: -1,
    };
}

/// The Slurm-like request of a job, for what SWF cannot express.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SlurmRequest {
    /// Submitting user name.
    pub user: Option<String>,
    /// Account charged.
    pub account: Option<String>,
    /// Requested partition.
    pub partition: Option<String>,
    /// Requested QOS.
    pub qos: Option<String>,
    /// Requested node count (`--nodes`), if given.
    pub nodes: Option<u32>,
    /// Number of tasks (`--ntasks`).
    pub tasks: u32,
    /// CPUs per task (`--cpus-per-task`).
    pub cpus_per_task: u32,
    /// Generic resources, e.g. `gpu:a100:2`, one entry per comma-separated item.
    pub gres: Vec<String>,
    /// Licenses as (name, count).
    pub licenses: Vec<(String, u32)>,
    /// An administrator-set priority, if the workload pins one.
    pub priority: Option<u32>,
    /// The `--nice` adjustment.
    pub nice: i32,
    /// Dependencies on earlier jobs.
    pub dependencies: Vec<Dependency>,
    /// An interactive allocation (`"batch": false`, salloc/srun) rather than a batch script;
    /// a node failure kills it rather than requeueing it.
    pub interactive: bool,
    /// `--requeue` / `--no-requeue` (`"requeue": true|false`); `None` follows JobRequeue.
    pub requeue: Option<bool>,
}

/// One Slurm dependency clause, e.g. `afterok:12`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dependency {
    /// `after:ID`: starts after the job has started.
    After(u64),
    /// `afterany:ID`: starts after the job has ended, however it ended.
    AfterAny(u64),
    /// `afterok:ID`: starts after the job completed successfully.
    AfterOk(u64),
    /// `afternotok:ID`: starts after the job failed.
    AfterNotOk(u64),
    /// `singleton`: one job of this name and user at a time.
    Singleton,
}
