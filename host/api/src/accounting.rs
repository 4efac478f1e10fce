//! Job accounting (`GET /v1/accounting`): what the accounting store keeps of an ended job, and
//! the filters `sluice acct` sends, as sacct's.

use serde::{Deserialize, Serialize};

/// One ended job as the accounting store keeps it (sacct's fields).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcctJob {
    /// Public job id.
    pub job_id: u64,
    /// The array's job id, when the job is an array task.
    #[serde(default)]
    pub array_job_id: Option<u64>,
    /// The array task id, when the job is an array task.
    #[serde(default)]
    pub array_task_id: Option<u32>,
    /// Job name.
    pub name: String,
    /// Owner's user name.
    pub user: String,
    /// Owner's uid.
    pub uid: u32,
    /// Account charged (empty if it never ran and named none).
    pub account: String,
    /// Partition it ran in (or asked for, if it never ran).
    pub partition: String,
    /// QOS.
    pub qos: String,
    /// Final state, Slurm's long name (`COMPLETED`, `TIMEOUT`, …).
    pub state: String,
    /// The batch script's exit code (0 when a signal ended it).
    pub exit_code: i32,
    /// The signal that ended the batch script, 0 if none.
    pub signal: i32,
    /// Submit time, Unix seconds.
    pub submit: i64,
    /// When it became eligible to start (submit, or `--begin` if later).
    pub eligible: i64,
    /// Start of its last run, if it ran.
    pub start: Option<i64>,
    /// End time.
    pub end: i64,
    /// Seconds from start to end (0 if it never ran).
    pub elapsed: i64,
    /// Time limit, seconds; `None` is the partition's.
    pub time_limit: Option<u64>,
    /// Requested TRES, Slurm's form (`cpu=4,mem=4000M,node=1,gres/gpu=1`).
    pub req_tres: String,
    /// Allocated TRES, same form; empty if it never ran.
    pub alloc_tres: String,
    /// Nodes as a hostlist (`n[1-3]`), empty if it never ran.
    pub nodes: String,
    /// Nodes allocated.
    pub nnodes: u32,
    /// CPUs allocated (requested, if it never ran).
    pub ncpus: u64,
    /// CPU-seconds: elapsed × CPUs allocated.
    pub cpu_time: i64,
    /// Working directory.
    pub work_dir: String,
    /// Times requeued before this end.
    pub restarts: u32,
    /// Why it ended as it did (`TimeLimit`, `NodeDown`, …), if the daemon said.
    #[serde(default)]
    pub reason: Option<String>,
    /// Its steps, in id order.
    #[serde(default)]
    pub steps: Vec<AcctStep>,
}

/// One step of an ended job.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcctStep {
    /// Step id within the job.
    pub step_id: u32,
    /// Step name.
    pub name: String,
    /// Final state, Slurm's long name.
    pub state: String,
    /// Exit code.
    pub exit_code: i32,
    /// Start time.
    pub start: i64,
    /// End time.
    pub end: i64,
}

/// The filters of `GET /v1/accounting`, each list comma-separated; absent means no filter.
/// Times are Unix seconds, resolved by the client from sacct's forms.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AcctQuery {
    /// `-j`: job ids.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs: Option<String>,
    /// `-u`: user names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub users: Option<String>,
    /// `-A`: accounts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accounts: Option<String>,
    /// `-s`: states, long names or short forms (`CD,F,TO`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub states: Option<String>,
    /// `-S`: only jobs that ended at or after this time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<i64>,
    /// `-E`: only jobs that were eligible at or before this time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<i64>,
    /// `--name`: job names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub names: Option<String>,
    /// `-r`: partitions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partitions: Option<String>,
    /// `-q`: QOS names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qos: Option<String>,
    /// `-N`: only jobs that ran on any of these nodes (a hostlist, `n[1-4],gpu7`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<String>,
    /// `-D`: every run of a requeued job, not only its newest.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub duplicates: bool,
}

/// The answer of `GET /v1/accounting`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcctAnswer {
    /// The jobs found, by job id.
    pub jobs: Vec<AcctJob>,
    /// More jobs matched than one answer carries ([`AcctAnswer::MAX_JOBS`]); narrow the query.
    pub truncated: bool,
}

impl AcctAnswer {
    /// The most jobs one answer carries.
    pub const MAX_JOBS: usize = 50_000;
}
