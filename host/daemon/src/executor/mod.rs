//! Where jobs run: the [`Executor`] trait, the shape a node agent on other machines will take,
//! and [`local::LocalExecutor`], which runs every virtual node's work on this machine, each job
//! under its own supervisor process ([`crate::supervisor`]).

mod launcher;
pub mod local;
mod spawner;
mod watch;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Everything needed to start a batch job's script on its allocation.
#[derive(Clone, Debug)]
pub struct Launch {
    /// Public job id.
    pub job: u64,
    /// Which run of the job this is (its restart count), so a requeued job's new run never
    /// mixes with what is left of its last one.
    pub run: u32,
    /// Owner uid (the script runs as this user, with this user's groups only, when the daemon
    /// runs as root).
    pub uid: u32,
    /// The script's text; without a `#!` line it runs under `/bin/sh`.
    pub script: String,
    /// Where the script and the submitter's environment are when the daemon keeps them in
    /// files (then `script` is empty and `env` holds only the computed variables): read on
    /// the launch thread, never on the driver's.
    pub files: Option<crate::job_files::JobFiles>,
    /// Working directory.
    pub workdir: PathBuf,
    /// File for stdout (and stderr unless `error` is set), truncated at launch, opened as the user.
    pub output: PathBuf,
    /// File for stderr, if separate.
    pub error: Option<PathBuf>,
    /// The whole environment of the script (the submitter's plus Slurm's variables).
    pub env: BTreeMap<String, String>,
    /// Allocated nodes, by name (the first runs the batch script, as Slurm's batch host).
    pub nodes: Vec<String>,
    /// The job's time limit; the executor ends the job past it should nobody else.
    pub time_limit: Option<Duration>,
    /// Between SIGTERM and SIGKILL when the job is ended (Slurm's KillWait).
    pub kill_wait: Duration,
    /// `--signal`: sent this long before the time limit.
    pub warn_signal: Option<sluice_api::WarnSignal>,
    /// `--open-mode=append`: output files are appended to, not truncated.
    pub append: bool,
    /// `--input`: the script's standard input (else /dev/null), opened as the user.
    pub input: Option<PathBuf>,
    /// The script's arguments.
    pub args: Vec<String>,
    /// The submitter's soft resource limits by Slurm's names (`None`: unlimited); empty: the
    /// daemon's own.
    pub rlimits: BTreeMap<String, Option<u64>>,
    /// The CPU ids the job was given on its first node, where the batch script runs.
    pub cpu_ids: Vec<u32>,
    /// The memory it was given there, MB (0: none).
    pub memory_mb: u64,
    /// That node's GRES device files it was not given.
    pub other_devices: Vec<PathBuf>,
}

/// How a job's processes ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExitReport {
    /// Public job id.
    pub job: u64,
    /// Which run of the job ended (the [`Launch::run`] it was started as).
    pub run: u32,
    /// Exit code, when the script exited.
    pub code: Option<i32>,
    /// Signal, when one killed it.
    pub signal: Option<i32>,
    /// The executor ended it for running past its time limit.
    pub timed_out: bool,
    /// Why it could not run, or why its end is unknown.
    pub reason: Option<String>,
    /// When it ended (Unix seconds), when known.
    pub end_time: Option<i64>,
    /// The kernel killed some of its processes for exceeding its cgroup's memory.
    pub out_of_memory: bool,
}

impl ExitReport {
    /// A job that never ran or whose end is unknown, for `reason`.
    pub fn failed(job: u64, run: u32, reason: String) -> Self {
        Self {
            job,
            run,
            code: None,
            signal: None,
            timed_out: false,
            reason: Some(reason),
            end_time: None,
            out_of_memory: false,
        }
    }
}

/// What became of a job that was running when the daemon stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attached {
    /// Still running: the executor watches it again and reports its end as for any launch.
    Running,
    /// It ended while the daemon was away.
    Ended(ExitReport),
    /// It never started: the daemon stopped before its processes were made. Starting it now
    /// is its first run, not a second.
    NotStarted,
    /// Nothing is left of it and nothing recorded its end (its node rebooted).
    Gone,
}

/// Runs batch jobs and reports their ends through the callback it was built with.
///
/// Nothing here may wait on a user's path or process: the driver calls it from the thread that
/// schedules.
pub trait Executor: Send {
    /// Starts the job's batch script. An error means nothing runs (the job is then failed); a
    /// failure found later (a file the user may not open) is reported as the job's end.
    fn launch(&mut self, launch: Launch) -> Result<(), String>;

    /// Sends `signal` to every process of the job (scancel --signal).
    fn signal(&mut self, job: u64, signal: i32) -> Result<(), String>;

    /// Ends the job's processes: SIGTERM now, SIGKILL after its KillWait if any remain.
    fn terminate(&mut self, job: u64);

    /// Changes the time limit the executor holds a running job to (an admin's extension, or a
    /// reduction), counted from the job's start.
    fn set_time_limit(&mut self, job: u64, limit: Option<Duration>) -> Result<(), String>;

    /// After a restart: finds what became of run `run` of a job the journal says was running.
    fn attach(&mut self, job: u64, run: u32) -> Attached;

    /// Drops what the executor keeps of a job whose end is journaled and that has left the
    /// engine (its spool).
    fn forget(&mut self, job: u64);

    /// Jobs whose processes are still running.
    fn running(&self) -> Vec<u64>;
}
