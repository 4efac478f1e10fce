//! The daemon itself: health, metrics, settings and reconfiguration.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// `GET /v1/health`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Health {
    /// Always `ok`: a daemon that answers is up.
    pub status: String,
    /// The daemon's process id.
    pub pid: u32,
    /// Seconds since it started.
    pub uptime_s: u64,
    /// Jobs it keeps, in any state.
    pub jobs: usize,
    /// Of those, pending.
    pub pending: usize,
    /// Of those, running.
    pub running: usize,
    /// The id the next submission gets.
    pub next_job_id: u64,
    /// The last journal record's sequence number.
    pub journal_seq: u64,
    /// The journal's size.
    pub journal_bytes: u64,
    /// What the last start-up recovered.
    pub recovery: RecoveryReport,
    /// Ended jobs the accounting store does not have yet (they wait in the journal).
    #[serde(default)]
    pub accounting_unstored: usize,
}

/// What recovery found at start-up, for the log and `/v1/health`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RecoveryReport {
    /// Whether a snapshot was read.
    pub snapshot: bool,
    /// Journal records replayed on top of it.
    pub replayed: usize,
    /// Journal records skipped because the snapshot already held them.
    pub skipped: usize,
    /// Bytes of a torn tail cut off.
    pub truncated_bytes: u64,
    /// Time to read and apply snapshot and journal, ms.
    pub millis: f64,
    /// What `serve --recover-damaged-journal` set aside, when the journal was damaged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damaged: Option<DamagedJournal>,
    /// Plugin swaps and shadows the journal held, made active again (`priority: FILE`, `shadow
    /// selection: FILE`), and those that no longer load (with why).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plugins: Vec<String>,
}

/// A damaged journal recovered at start-up: where its bytes were kept and what was lost.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DamagedJournal {
    /// The untouched copy of the damaged file, next to the journal.
    pub copy: String,
    /// Byte ranges `[start, end)` that were not intact records.
    pub ranges: Vec<(u64, u64)>,
    /// Bytes in those ranges.
    pub bad_bytes: u64,
    /// Intact records kept.
    pub kept_records: usize,
    /// Jobs that readable records mention but whose submission was in the damaged bytes; their
    /// ids are never handed out again.
    pub lost_jobs: Vec<u64>,
}

/// The daemon's counters since it started.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Counters {
    /// Jobs accepted.
    pub submitted: u64,
    /// Submissions refused.
    pub refused: u64,
    /// Jobs started.
    pub started: u64,
    /// Jobs ended.
    pub ended: u64,
    /// Engine ticks run.
    pub ticks: u64,
    /// Time spent in ticks, ms.
    pub tick_ms_total: f64,
    /// Longest tick, ms.
    pub tick_ms_max: f64,
    /// Journal syncs (group commits).
    pub syncs: u64,
    /// Snapshots written.
    pub snapshots: u64,
    /// Plugin generations published.
    pub swaps_published: u64,
    /// Plugin swaps refused.
    pub swaps_refused: u64,
    /// Sum of submit→start seconds (wall clock, ms resolution) over started jobs.
    pub start_latency_ms_total: f64,
    /// Largest submit→start, ms.
    pub start_latency_ms_max: f64,
    /// Jobs that ended COMPLETED.
    #[serde(default)]
    pub completed: u64,
    /// Jobs that ended CANCELLED.
    #[serde(default)]
    pub cancelled: u64,
    /// Jobs that ended in any other final state (FAILED, TIMEOUT, NODE_FAIL, …).
    #[serde(default)]
    pub failed: u64,
    /// Jobs requeued.
    #[serde(default)]
    pub requeued: u64,
}

/// One kind of scheduling pass since the daemon started, as sdiag reports it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CycleStats {
    /// Passes run.
    pub cycles: u64,
    /// Length of the last pass, µs.
    pub last_cycle_us: u64,
    /// Longest pass, µs.
    pub max_cycle_us: u64,
    /// Mean pass length, µs.
    pub mean_cycle_us: u64,
    /// Records tried by the last pass.
    pub last_depth: u64,
    /// Mean records tried per pass.
    pub mean_depth: u64,
    /// Records in the last pass's queue.
    pub last_queue_length: u64,
    /// Jobs the passes started.
    pub started: u64,
    /// When the last pass ran (Unix seconds), if one did.
    pub last_cycle_when: Option<i64>,
}

/// One API endpoint's requests since the daemon started.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EndpointStats {
    /// `METHOD /path/{pattern}`.
    pub endpoint: String,
    /// Requests answered.
    pub count: u64,
    /// Their total time to answer, µs.
    pub total_time_us: u64,
}

/// `GET /v1/diag`: the scheduler's statistics, as `sdiag` shows them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Diag {
    /// When these figures were taken (Unix seconds).
    pub server_time: i64,
    /// When the daemon started (Unix seconds): the counts are since then.
    pub data_since: i64,
    /// The daemon's job counters.
    pub counters: Counters,
    /// Jobs pending and running now.
    pub jobs_pending: u64,
    /// Jobs running now.
    pub jobs_running: u64,
    /// The main scheduling loop.
    pub main: CycleStats,
    /// The backfill loop.
    pub backfill: CycleStats,
    /// API requests by endpoint.
    pub endpoints: Vec<EndpointStats>,
}

/// `GET /v1/metrics`: the daemon's counters and the engine's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// The daemon's counters, at the top level of the object.
    #[serde(flatten)]
    pub counters: Counters,
    /// Plugin answers the engine refused, per kind.
    pub engine_faults: Faults,
    /// The last main scheduling pass.
    pub last_main_pass: PassStats,
    /// The last backfill pass.
    pub last_backfill_pass: PassStats,
    /// Jobs pending in the engine.
    pub engine_pending: usize,
    /// Jobs running in the engine.
    pub engine_running: usize,
}

/// Plugin answers that broke the contract, counted per kind.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Faults {
    /// Priority answers refused.
    pub priority: u64,
    /// Placements refused.
    pub selection: u64,
    /// HRES answers refused.
    pub hres: u64,
    /// GRES device picks refused.
    pub gres: u64,
}

/// Counters of one scheduling pass.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassStats {
    /// Records (job × partition) in the sorted queue.
    pub queued: usize,
    /// Records tried.
    pub tested: usize,
    /// Jobs started.
    pub started: usize,
    /// Backfill reservations made.
    pub reserved: usize,
    /// Why the pass stopped early, if it did (`max_sched_time`, `bf_max_job_test`, …).
    pub stopped_by: Option<String>,
}

/// What happens to a job that was running when the daemon died (its processes died with it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnCrash {
    /// Requeue it if it is requeueable (Slurm's JobRequeue=1 default), else NODE_FAIL.
    #[default]
    Requeue,
    /// End it with NODE_FAIL whatever its requeue flag.
    NodeFail,
}

/// The daemon's own settings (`DIR/daemon.toml`). Every key is optional; unknown keys are errors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DaemonConfig {
    /// Users who may act on every job, nodes, reservations and plugins (besides root and the
    /// user running the daemon).
    pub admins: Vec<String>,
    /// Jobs whose processes vanished with a crash: `requeue` (default) or `node_fail`.
    pub on_crash: OnCrash,
    /// Whether batch jobs are requeueable unless submitted with `--no-requeue` (Slurm's JobRequeue, 1).
    pub job_requeue: bool,
    /// Seconds between SIGTERM and SIGKILL when a job is ended (Slurm's KillWait, 30).
    pub kill_wait: u64,
    /// Journal records between snapshots.
    pub snapshot_every: usize,
    /// Seconds between checks of the configured plugin files' modification times.
    pub watch_interval: u64,
    /// Shortest gap between two event-triggered passes, ms (Slurm's sched_min_interval, in ms).
    pub sched_min_interval_ms: u64,
    /// Seconds an ended job is kept before it is purged (Slurm's MinJobAge, 300): it leaves
    /// the engine then, and its record (script and environment files too) once the
    /// accounting store has it.
    pub min_job_age: u64,
    /// The program `--mail-type` mail is sent with, as `PROG -s SUBJECT USER` (Slurm's
    /// MailProg, `/bin/mail`); empty sends none.
    pub mail_prog: String,
    /// A file the power side's JSON-lines log is appended to, in `sluice sim --log`'s format
    /// (node state changes and program calls, `t` in Unix seconds); empty writes none.
    pub power_log: String,
    /// Where ended jobs are recorded: absent or `"sqlite"` is `accounting.db` in the state
    /// directory, `"sqlite:/abs/path"` another file, `"postgres://user@host/db"` (or
    /// `"postgres: host=… dbname=…"`) a PostgreSQL server. Never shown by `/v1/config`: it may
    /// hold a password.
    #[serde(skip_serializing)]
    pub accounting: Option<String>,
    /// Slurm's PrivateData words in effect; `jobs` (the default here, where Slurm's is none)
    /// lets a user who is not an admin read only their own jobs' accounting records, whatever
    /// `-a`, `-u` or `-j` they give. Without it `sluice acct -a` shows everyone's, as sacct.
    /// The other words (`accounts`, `events`, `nodes`, `partitions`, `reservations`, `usage`,
    /// `users`, `cloud`) are accepted and have no effect yet.
    pub private_data: Vec<String>,
    /// Job runs (with their steps) that ended longer ago than this are deleted from the
    /// accounting store (slurmdbd's PurgeJobAfter: `12months`, `30days`, `720hours`, a bare
    /// number being months); absent keeps them for ever.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub purge_job_after: Option<String>,
    /// Steps that ended longer ago than this are deleted, their jobs kept (PurgeStepAfter; same
    /// forms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub purge_step_after: Option<String>,
    /// Largest batch script a submission may carry, bytes (Slurm's `max_script_size`, 4 MiB).
    pub max_script_size: usize,
    /// Largest job environment a submission may carry, bytes summed over its `NAME=value`
    /// entries with their NULs, as `execve` counts them, so it bounds their number too (Slurm's
    /// `max_env_size` idea; 1 MiB here). The script's arguments are held to it alike.
    pub max_env_size: usize,
    /// Longest path a job may name, bytes (Linux's PATH_MAX, 4096): `--chdir`, the script's path,
    /// and what an `-o`/`-e`/`-i` pattern may expand to beneath `--chdir`. Checked at submission
    /// with the longest values the patterns could take, and the launch expands within it too.
    pub max_path_size: usize,
    /// Longest free-text field of a job (name, comment, account, `--mail-user`, `--array`,
    /// `--nodelist`, …), bytes (4096), at submission and at update.
    pub max_text_size: usize,
    /// Most jobs named by one `--dependency` list (1,000), counted before it is parsed; the
    /// list may take 48 bytes per allowed job.
    pub max_dependencies: usize,
    /// Connections one user (not an admin) may hold open at once through the socket (32 of the
    /// 256 users share; admins have 256 of their own, whatever users hold).
    pub max_connections_per_user: usize,
    /// Requests of one user (not an admin) being answered at once; more wait their turn (8).
    pub max_requests_per_user: usize,
    /// Most jobs the daemon keeps records of, pending, running and ended but not yet purged
    /// (Slurm's MaxJobCount, 10,000); a submission beyond it is refused until some are purged.
    pub max_job_count: usize,
    /// How jobs are contained in cgroups: Slurm's cgroup.conf as a `[cgroup]` table.
    pub cgroup: CgroupConfig,
}

/// Slurm's cgroup.conf keys, snake_case, in daemon.toml's `[cgroup]` table, with Slurm's
/// defaults: every job gets a cgroup of its own when one is usable (proctrack/cgroup), and is
/// held to what it was given only where a `constrain_*` key says so.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CgroupConfig {
    /// Which cgroup version (Slurm's CgroupPlugin). Read at start-up only.
    pub plugin: CgroupPlugin,
    /// Holds a job to the CPUs it was given (cpuset; ConstrainCores, `false`).
    pub constrain_cores: bool,
    /// Holds a job to its memory; exceeding it ends the job OUT_OF_MEMORY (ConstrainRAMSpace,
    /// `false`).
    pub constrain_ram_space: bool,
    /// The hard memory limit as a percentage of the memory given (AllowedRAMSpace, 100).
    pub allowed_ram_space: f64,
    /// The lowest memory limit, MB (MinRAMSpace, 30).
    pub min_ram_space: u64,
    /// Holds RAM plus swap to the memory given × (allowed_ram_space + allowed_swap_space) %
    /// (ConstrainSwapSpace, `false`).
    pub constrain_swap_space: bool,
    /// Swap allowed on top, as a percentage of the memory given (AllowedSwapSpace, 0).
    pub allowed_swap_space: f64,
    /// Denies a job the GRES device files of its node it was not given (ConstrainDevices,
    /// `false`).
    pub constrain_devices: bool,
}

/// Slurm's CgroupPlugin values, spelled as in cgroup.conf.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum CgroupPlugin {
    /// v2 when its controllers are there, else v1 (`autodetect`, the default).
    #[default]
    #[serde(rename = "autodetect")]
    Autodetect,
    /// The v1 hierarchies, one per controller (`cgroup/v1`).
    #[serde(rename = "cgroup/v1")]
    V1,
    /// The unified hierarchy (`cgroup/v2`).
    #[serde(rename = "cgroup/v2")]
    V2,
    /// No cgroups: a job's processes are tracked as its supervisor's descendants alone
    /// (`disabled`).
    #[serde(rename = "disabled")]
    Disabled,
}

impl Default for CgroupConfig {
    fn default() -> Self {
        Self {
            plugin: CgroupPlugin::Autodetect,
            constrain_cores: false,
            constrain_ram_space: false,
            allowed_ram_space: 100.0,
            min_ram_space: 30,
            constrain_swap_space: false,
            allowed_swap_space: 0.0,
            constrain_devices: false,
        }
    }
}

impl Default for DaemonConfig {
    fn default() -> Self {
        Self {
            admins: Vec::new(),
            on_crash: OnCrash::Requeue,
            job_requeue: true,
            kill_wait: 30,
            snapshot_every: 20_000,
            watch_interval: 3,
            sched_min_interval_ms: 20,
            min_job_age: 300,
            mail_prog: "/bin/mail".into(),
            power_log: String::new(),
            accounting: None,
            private_data: vec!["jobs".into()],
            purge_job_after: None,
            purge_step_after: None,
            max_script_size: 4 << 20,
            max_env_size: 1 << 20,
            max_path_size: 4096,
            max_text_size: 4096,
            max_dependencies: 1000,
            max_connections_per_user: 32,
            max_requests_per_user: 8,
            max_job_count: 10_000,
            cgroup: CgroupConfig::default(),
        }
    }
}

/// `GET /v1/config`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Cluster name.
    pub cluster: String,
    /// The cluster file; `None` is the embedded demo cluster.
    pub cluster_file: Option<PathBuf>,
    /// The daemon settings file.
    pub daemon_file: PathBuf,
    /// The state directory.
    pub state_dir: PathBuf,
    /// The daemon's settings in effect.
    pub daemon: DaemonConfig,
    /// The engine's settings as the engine reports them (scheduler and its parameters).
    pub engine: serde_json::Value,
    /// Node count.
    pub nodes: usize,
    /// Partition names.
    pub partitions: Vec<String>,
}

/// `POST /v1/reconfigure`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reconfigured {
    /// Always true: a file that did not load is an error answer.
    pub reloaded: bool,
    /// Plugin swaps staged because their choice or settings changed (`kind file`).
    pub plugins_staged: Vec<String>,
    /// What takes effect only at the next restart; empty when nothing.
    pub note: String,
}
