//! Main and backfill scheduler parameters under Slurm's `SchedulerParameters` names and code defaults.

use serde::{Deserialize, Serialize};

/// `SchedulerParameters`, in Slurm's units (seconds unless noted); defaults are Slurm's code defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SchedulerParams {
    /// Jobs tested per event-triggered main loop run (100).
    pub default_queue_depth: u32,
    /// Jobs tested per partition per main loop run; 0 means no limit (0).
    pub partition_job_depth: u32,
    /// Seconds between periodic main loop runs; -1 disables the main loop (60).
    pub sched_interval: i64,
    /// Microseconds between main loop runs at the least (2).
    pub sched_min_interval: u64,
    /// Longest a main loop run may take, in seconds (2).
    pub max_sched_time: u64,
    /// Jobs started per main loop run; 0 means no limit (0).
    pub sched_max_job_start: u32,
    /// Seconds a batch job launch may be delayed (3).
    pub batch_sched_delay: u64,
    /// Do not try to schedule each job at submit time (off).
    pub defer: bool,
    /// Defer only batch jobs (off).
    pub defer_batch: bool,
    /// Defer scheduling while this many RPCs are pending; 0 is off (0).
    pub max_rpc_cnt: u32,
    /// Seconds between backfill runs; -1 disables backfill (30).
    pub bf_interval: i64,
    /// Longest a backfill run may take, in seconds; `None` means `bf_interval`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bf_max_time: Option<u64>,
    /// Time resolution of backfill reservations, in seconds (60).
    pub bf_resolution: u64,
    /// How far ahead backfill plans, in minutes (1440).
    pub bf_window: u64,
    /// Jobs backfill tests per run (500; Slurm's sched_config page wrongly says 100).
    pub bf_max_job_test: u32,
    /// Jobs backfill tests per user; 0 means no limit (0).
    pub bf_max_job_user: u32,
    /// Jobs backfill tests per partition; 0 means no limit (0).
    pub bf_max_job_part: u32,
    /// Jobs backfill tests per user and partition; 0 means no limit (0).
    pub bf_max_job_user_part: u32,
    /// Jobs backfill tests per association; 0 means no limit (0).
    pub bf_max_job_assoc: u32,
    /// Jobs backfill starts per run; 0 means no limit (0).
    pub bf_max_job_start: u32,
    /// Array tasks backfill reserves resources for (20).
    pub bf_max_job_array_resv: u32,
    /// Node-space map records; `None` means `bf_max_job_test`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bf_node_space_size: Option<u32>,
    /// Microseconds between backfill lock yields (2,000,000).
    pub bf_yield_interval: u64,
    /// Microseconds backfill sleeps at each yield (500,000).
    pub bf_yield_sleep: u64,
    /// Continue after a yield even if jobs or nodes changed (off).
    pub bf_continue: bool,
    /// Jobs pending fewer seconds than this get no reservation (0).
    pub bf_min_age_reserve: u64,
    /// Jobs below this priority get no reservation (0).
    pub bf_min_prio_reserve: u64,
    /// Track licenses (and HRES) in the backfill map (off).
    pub bf_licenses: bool,
    /// Prefer busy nodes in backfill's will-run (off).
    pub bf_busy_nodes: bool,
    /// Reserve for only the first partition of a multi-partition job (off).
    pub bf_one_resv_per_job: bool,
    /// Insert running jobs into the map as reservations (off).
    pub bf_running_job_reserve: bool,
    /// Will-run time step in seconds; 0 means start at 30 s and double (0).
    pub bf_window_linear: u64,
    /// Node allocation options (`SelectTypeParameters`, default `CR_Core_Memory`).
    pub select_type_parameters: Vec<String>,
    /// `MaxArraySize` (slurm.conf): job array task ids must be below it, so an array has at
    /// most this many tasks (1001; 0 refuses arrays; at most 4,000,001).
    #[serde(rename = "MaxArraySize")]
    pub max_array_size: u32,
}

impl Default for SchedulerParams {
    fn default() -> Self {
        Self {
            default_queue_depth: 100,
            partition_job_depth: 0,
            sched_interval: 60,
            sched_min_interval: 2,
            max_sched_time: 2,
            sched_max_job_start: 0,
            batch_sched_delay: 3,
            defer: false,
            defer_batch: false,
            max_rpc_cnt: 0,
            bf_interval: 30,
            bf_max_time: None,
            bf_resolution: 60,
            bf_window: 1440,
            bf_max_job_test: 500,
            bf_max_job_user: 0,
            bf_max_job_part: 0,
            bf_max_job_user_part: 0,
            bf_max_job_assoc: 0,
            bf_max_job_start: 0,
            bf_max_job_array_resv: 20,
            bf_node_space_size: None,
            bf_yield_interval: 2_000_000,
            bf_yield_sleep: 500_000,
            bf_continue: false,
            bf_min_age_reserve: 0,
            bf_min_prio_reserve: 0,
            bf_licenses: false,
            bf_busy_nodes: false,
            bf_one_resv_per_job: false,
            bf_running_job_reserve: false,
            bf_window_linear: 0,
            select_type_parameters: vec!["CR_Core_Memory".into()],
            max_array_size: 1001,
        }
    }
}

impl SchedulerParams {
    /// Effective `bf_max_time`: defaults to `bf_interval` (at least 1 s).
    pub fn effective_bf_max_time(&self) -> u64 {
        self.bf_max_time
            .unwrap_or_else(|| u64::try_from(self.bf_interval).unwrap_or(1).max(1))
    }

    /// Effective `bf_node_space_size`: defaults to `bf_max_job_test`.
    pub fn effective_bf_node_space_size(&self) -> u32 {
        self.bf_node_space_size.unwrap_or(self.bf_max_job_test)
    }
}
