//! Jobs: submissions, updates, actions on one job, steps, and the job object squeue and
//! `scontrol show job` print.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One `sbatch` submission (`POST /v1/jobs`). Relative values (`--begin=now+60`, `--time=1:00`)
/// are resolved by the client, so replaying the journal later gives the same job.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SubmitRequest {
    /// `-J/--job-name`; default the script's file name, or `wrap`.
    pub name: Option<String>,
    /// `-p/--partition`, comma-separated.
    pub partition: Option<String>,
    /// `-A/--account`.
    pub account: Option<String>,
    /// `-q/--qos`.
    pub qos: Option<String>,
    /// `-N/--nodes` minimum.
    pub min_nodes: Option<u32>,
    /// `-N/--nodes` maximum (`-N 2-4`).
    pub max_nodes: Option<u32>,
    /// `-n/--ntasks`.
    pub ntasks: Option<u32>,
    /// `-c/--cpus-per-task`.
    pub cpus_per_task: Option<u32>,
    /// `--mem` per node, MB.
    pub mem_mb: Option<u64>,
    /// `-t/--time`, seconds.
    pub time_limit: Option<u64>,
    /// `--gres` as written (`gpu:a100:2,nic:1`).
    pub gres: Option<String>,
    /// `--gpus` as written (`2` or `a100:2`).
    pub gpus: Option<String>,
    /// `-L/--licenses` as written.
    pub licenses: Option<String>,
    /// `--constraint` as written.
    pub constraint: Option<String>,
    /// `--exclusive`.
    pub exclusive: bool,
    /// `-s/--oversubscribe`: the job's CPUs may be shared with other jobs in a partition that
    /// is `OverSubscribe=YES`.
    pub oversubscribe: bool,
    /// `--nice`.
    pub nice: i32,
    /// `--priority`: a fixed priority, which replaces what the priority policy computes (an
    /// admin's; its owner may only lower it by an update).
    pub priority: Option<u32>,
    /// `--begin`, Unix seconds.
    pub begin: Option<i64>,
    /// `-d/--dependency` as written (`afterok:12:13`).
    pub dependency: Option<String>,
    /// `-H/--hold`.
    pub hold: bool,
    /// `--reservation`.
    pub reservation: Option<String>,
    /// `--requeue` / `--no-requeue`; `None` follows the daemon's `job_requeue` (on, as Slurm's JobRequeue=1).
    pub requeue: Option<bool>,
    /// The batch script's text (with its `#!` line); empty for an allocation without a script.
    pub script: String,
    /// Working and submit directory (`SLURM_SUBMIT_DIR`).
    pub workdir: String,
    /// `-o/--output` pattern (`%j` is the job id); default `slurm-%j.out` in `workdir`.
    pub output: Option<String>,
    /// `-e/--error` pattern; default: with the output.
    pub error: Option<String>,
    /// Environment exported to the job (sbatch's `--export=ALL` sends the client's).
    pub env: BTreeMap<String, String>,
    /// `--ntasks-per-node`.
    pub ntasks_per_node: Option<u32>,
    /// `--ntasks-per-socket` (stored; sluice places by node, not by socket).
    pub ntasks_per_socket: Option<u32>,
    /// `--mem-per-cpu`, MB.
    pub mem_per_cpu_mb: Option<u64>,
    /// `--mem=0`: all the memory of each node (given as whole nodes).
    pub mem_whole_node: bool,
    /// `--gpus-per-node` as written (`2` or `a100:2`).
    pub gpus_per_node: Option<String>,
    /// `--gpus-per-task` as written.
    pub gpus_per_task: Option<String>,
    /// `--cpus-per-gpu`.
    pub cpus_per_gpu: Option<u32>,
    /// `--mem-per-gpu`, MB.
    pub mem_per_gpu_mb: Option<u64>,
    /// `-w/--nodelist`: nodes the job must include, as a hostlist.
    pub nodelist: Option<String>,
    /// `-x/--exclude`: nodes the job must not use, as a hostlist.
    pub exclude: Option<String>,
    /// `--contiguous` (stored; every node of this machine counts as adjacent).
    pub contiguous: bool,
    /// `--hint` as written (stored).
    pub hint: Option<String>,
    /// `-m/--distribution` as written (stored; batch steps are placed block-wise).
    pub distribution: Option<String>,
    /// `--time-min`, seconds.
    pub time_min: Option<u64>,
    /// `--deadline`, Unix seconds.
    pub deadline: Option<i64>,
    /// `--signal=[R:][B:]SIG[@TIME]`.
    pub signal: Option<WarnSignal>,
    /// `-i/--input` pattern.
    pub input: Option<String>,
    /// `--open-mode`: `append` or `truncate` (Slurm's default).
    pub open_mode: Option<String>,
    /// `--mail-type` as written (`BEGIN,END,FAIL`).
    pub mail_type: Option<String>,
    /// `--mail-user`.
    pub mail_user: Option<String>,
    /// `--comment`.
    pub comment: Option<String>,
    /// `--wckey`.
    pub wckey: Option<String>,
    /// The batch script's path as submitted (scontrol's `Command=`); none for `--wrap` or stdin.
    pub command: Option<String>,
    /// Arguments after the script on sbatch's command line (`$1`…).
    pub script_args: Vec<String>,
    /// `-a/--array` as written (`1-6%2`): one job per task id, checked against the cluster's
    /// `MaxArraySize` by the daemon.
    pub array: Option<String>,
    /// The submitting process's soft resource limits by Slurm's names (`NOFILE`, `STACK`…;
    /// `null`: unlimited), which the job gets as `PropagateResourceLimits=ALL` gives them, never
    /// above the node's hard limits. Empty (an API client's job): the job keeps the daemon's.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub rlimits: BTreeMap<String, Option<u64>>,
}

/// `--signal`: a signal sent some time before the job's time limit.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WarnSignal {
    /// Signal number.
    pub signal: i32,
    /// Seconds before the end of the time limit (Slurm's default 60).
    pub seconds_before: u32,
    /// `B:`: only the batch shell is signalled, not its steps.
    pub batch_only: bool,
    /// `R:`: also sent when a reservation the job runs in ends (stored).
    pub reservation: bool,
}

impl SubmitRequest {
    /// The job name Slurm would show.
    pub fn job_name(&self) -> String {
        self.name.clone().unwrap_or_else(|| "wrap".into())
    }
}

/// `scontrol update JobId=…` fields (`POST /v1/jobs/{id}/update`); only pending jobs change.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UpdateRequest {
    /// `JobName=`.
    pub name: Option<String>,
    /// `TimeLimit=`, seconds.
    pub time_limit: Option<u64>,
    /// `Nice=`.
    pub nice: Option<i32>,
    /// `Priority=`: fixes the job's priority (0 holds it).
    pub priority: Option<u32>,
    /// `TimeLimit=UNLIMITED`: a pending job takes its partition's limit again, as sbatch's
    /// `-t UNLIMITED` does; a running one (an admin's change) has no limit.
    pub unlimited_time: bool,
    /// `Partition=`.
    pub partition: Option<String>,
    /// `QOS=`.
    pub qos: Option<String>,
    /// `NumNodes=` minimum.
    pub min_nodes: Option<u32>,
    /// `BeginTime=`, Unix seconds.
    pub begin: Option<i64>,
    /// `Dependency=` as written; empty removes the dependencies.
    pub dependency: Option<String>,
    /// `Comment=`.
    pub comment: Option<String>,
    /// `Account=`.
    pub account: Option<String>,
    /// `ArrayTaskThrottle=`: most tasks of the job's array that run at once (0: no limit).
    pub array_task_throttle: Option<u32>,
}

impl UpdateRequest {
    /// Applies the fields given to a submission.
    pub fn apply(&self, req: &mut SubmitRequest) {
        if let Some(v) = &self.name {
            req.name = Some(v.clone());
        }
        if let Some(v) = self.time_limit {
            req.time_limit = Some(v);
        }
        if let Some(v) = self.nice {
            req.nice = v;
        }
        if let Some(v) = self.priority {
            req.priority = Some(v);
        }
        if self.unlimited_time {
            req.time_limit = None;
        }
        if let Some(v) = &self.partition {
            req.partition = Some(v.clone());
        }
        if let Some(v) = &self.qos {
            req.qos = Some(v.clone());
        }
        if let Some(v) = self.min_nodes {
            req.min_nodes = Some(v);
        }
        if let Some(v) = self.begin {
            req.begin = Some(v);
        }
        if let Some(v) = &self.dependency {
            req.dependency = (!v.is_empty()).then(|| v.clone());
        }
        if let Some(v) = &self.comment {
            req.comment = Some(v.clone());
        }
        if let Some(v) = &self.account {
            req.account = Some(v.clone());
        }
    }

    /// Whether nothing is to change.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// `POST /v1/jobs/{id}/cancel` (scancel).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CancelRequest {
    /// `--signal`: signal the job's processes instead of cancelling it.
    pub signal: Option<i32>,
}

/// A step request (`sluice run` inside an allocation, `POST /v1/jobs/{id}/steps`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StepRequest {
    /// Step name (the command).
    pub name: String,
    /// Nodes (`-N`, 1).
    pub nodes: u32,
    /// CPUs per node (`-c` × tasks per node, 1).
    pub cpus_per_node: u32,
}

/// `POST /v1/jobs/{id}/steps/{step}/end`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StepEndRequest {
    /// The command's exit code.
    pub exit_code: i32,
}

/// Who holds a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HoldBy {
    /// The owner (`--hold`, `scontrol hold` by the owner).
    User,
    /// An admin.
    Admin,
}

/// A step of a job (`sluice run` inside the allocation).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepRecord {
    /// Step id.
    pub id: u32,
    /// Name (the command).
    pub name: String,
    /// Start time.
    pub start: i64,
    /// End time, once ended.
    pub end: Option<i64>,
    /// Exit code, once ended.
    pub exit_code: Option<i32>,
}

/// One job as `scontrol show job` and squeue see it (`GET /v1/jobs`, `GET /v1/jobs/{id}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// Public job id.
    pub job_id: u64,
    /// Job name.
    pub name: String,
    /// Owner.
    pub user: String,
    /// Owner's uid.
    pub uid: u32,
    /// Account, when known.
    pub account: Option<String>,
    /// Partition (the one it runs in, or those it may run in, comma-separated).
    pub partition: String,
    /// Slurm state name (`PENDING`).
    pub state: String,
    /// Slurm state code (`PD`).
    pub st: String,
    /// Why it waits or how it ended (`Priority`, `None`).
    pub reason: String,
    /// Hold, if any.
    pub hold: Option<HoldBy>,
    /// Highest priority over its partitions (0 once ended).
    pub priority: u32,
    /// Seconds run so far, or in all.
    pub time: i64,
    /// Time limit, seconds; `None` is UNLIMITED.
    pub time_limit: Option<u64>,
    /// Node count (asked for while pending).
    pub nodes: usize,
    /// Nodes as a hostlist.
    pub nodelist: String,
    /// CPUs allocated.
    pub cpus: u64,
    /// Submit time, Unix seconds.
    pub submit_time: i64,
    /// Start time, Unix seconds (expected start while pending, when planned).
    pub start_time: Option<i64>,
    /// End time, Unix seconds.
    pub end_time: Option<i64>,
    /// Exit code, once ended.
    pub exit_code: Option<i32>,
    /// Signal that ended it, if any.
    pub signal: Option<i32>,
    /// Times requeued.
    pub restarts: u32,
    /// Whether it is requeued when its node fails.
    pub requeue: bool,
    /// Working directory.
    pub workdir: String,
    /// Its steps.
    pub steps: Vec<StepRecord>,
    /// What was asked beyond the columns above.
    pub request: JobRequestSummary,
    /// The array this job is a task of, if any.
    #[serde(default)]
    pub array: Option<ArrayMember>,
}

/// What a job is of a job array: its `ArrayJobId` (the first task's job id), `ArrayTaskId`
/// and the array's `ArrayTaskThrottle`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArrayMember {
    /// `ArrayJobId`: the job id of the array's first task.
    pub job_id: u64,
    /// `ArrayTaskId`.
    pub task_id: u32,
    /// `ArrayTaskThrottle`: most tasks running at once; 0 is no limit.
    pub throttle: u32,
}

/// The parts of a job's submission `scontrol show job` prints besides the columns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobRequestSummary {
    /// `--ntasks`.
    pub ntasks: Option<u32>,
    /// `--cpus-per-task`.
    pub cpus_per_task: Option<u32>,
    /// `--mem`, MB per node.
    pub mem_mb: Option<u64>,
    /// `--gres` as written.
    pub gres: Option<String>,
    /// `--gpus` as written.
    pub gpus: Option<String>,
    /// `--licenses` as written.
    pub licenses: Option<String>,
    /// `--constraint` as written.
    pub constraint: Option<String>,
    /// `--dependency` as written.
    pub dependency: Option<String>,
    /// `--nice`.
    pub nice: i32,
    /// `--begin`, Unix seconds.
    pub begin: Option<i64>,
    /// `--qos`.
    pub qos: Option<String>,
    /// `--output` pattern.
    pub output: Option<String>,
    /// `--error` pattern.
    #[serde(default)]
    pub error: Option<String>,
    /// `--input` pattern.
    #[serde(default)]
    pub input: Option<String>,
    /// The script's path as submitted.
    #[serde(default)]
    pub command: Option<String>,
    /// `--comment`.
    #[serde(default)]
    pub comment: Option<String>,
    /// `--time-min`, seconds.
    #[serde(default)]
    pub time_min: Option<u64>,
    /// `--deadline`, Unix seconds.
    #[serde(default)]
    pub deadline: Option<i64>,
    /// `--nodelist` as written.
    #[serde(default)]
    pub nodelist: Option<String>,
    /// `--exclude` as written.
    #[serde(default)]
    pub exclude: Option<String>,
    /// `--ntasks-per-node`.
    #[serde(default)]
    pub ntasks_per_node: Option<u32>,
    /// `--mem-per-cpu`, MB.
    #[serde(default)]
    pub mem_per_cpu_mb: Option<u64>,
    /// `--mail-type`.
    #[serde(default)]
    pub mail_type: Option<String>,
    /// `--mail-user`.
    #[serde(default)]
    pub mail_user: Option<String>,
    /// `--exclusive`.
    #[serde(default)]
    pub exclusive: bool,
    /// Whether the job's CPUs may be shared with other jobs: it asked `--oversubscribe`, or
    /// its partition is `OverSubscribe=FORCE` (squeue's `%h` then says `YES`).
    #[serde(default)]
    pub oversubscribe: bool,
    /// `--contiguous`.
    #[serde(default)]
    pub contiguous: bool,
}

impl JobRequestSummary {
    /// Whether the job's CPUs may be shared, as squeue's `%h` and `scontrol show job`'s
    /// `OverSubscribe=` say it: `NO` for whole nodes, `YES` for CPUs that may be shared, `OK`.
    pub fn oversubscribe_word(&self) -> &'static str {
        match (self.exclusive, self.oversubscribe) {
            (true, _) => "NO",
            (false, true) => "YES",
            (false, false) => "OK",
        }
    }
}

/// The answer to a submission.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobSubmitted {
    /// The new job's id.
    pub job_id: u64,
}

/// The answer to `POST /v1/jobs/will-run` (sbatch `--test-only`): when and where the job would
/// start if it were submitted now, from the backfill plan. Nothing is queued.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobWillRun {
    /// The id a submission now would get.
    pub job_id: u64,
    /// The expected start, Unix seconds.
    pub start_time: i64,
    /// The CPUs it would be given.
    pub processors: u32,
    /// Its nodes as a hostlist expression.
    pub nodes: String,
    /// The partition it would run in.
    pub partition: String,
}

/// The answer to a cancel: either cancelled, or signalled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobCancelled {
    /// The job.
    pub job_id: u64,
    /// Whether it was cancelled (false when only signalled).
    pub cancelled: bool,
    /// The signal sent instead of cancelling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
}

/// The answer to a hold.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobHeld {
    /// The job.
    pub job_id: u64,
    /// Whose hold it is.
    pub hold: HoldBy,
}

/// The answer to a release.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobReleased {
    /// The job.
    pub job_id: u64,
    /// Always true: a refusal is an error answer.
    pub released: bool,
}

/// The answer to an update.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobUpdated {
    /// The job.
    pub job_id: u64,
    /// Always true: a refusal is an error answer.
    pub updated: bool,
}

/// The answer to a step start: the variables the client runs the step's command with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepStarted {
    /// The job.
    pub job_id: u64,
    /// The new step's id.
    pub step_id: u32,
    /// `SLURM_*` variables of the step.
    pub env: BTreeMap<String, String>,
}

/// The answer to a step end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepEnded {
    /// The job.
    pub job_id: u64,
    /// The step.
    pub step_id: u32,
    /// Its exit code.
    pub exit_code: i32,
}
