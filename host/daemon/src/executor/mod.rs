//! Where jobs run: the [`Executor`] trait, so a node agent on other machines can implement it
//! later, and [`local::LocalExecutor`], which runs every virtual node's work on this machine.

pub mod local;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Everything needed to start a batch job's script on its allocation.
#[derive(Clone, Debug)]
pub struct Launch {
    /// Public job id.
    pub job: u64,
    /// Owner uid (the script runs as this user when the daemon runs as root).
    pub uid: u32,
    /// The script's text; without a `#!` line it runs under `/bin/sh`.
    pub script: String,
    /// Working directory.
    pub workdir: PathBuf,
    /// File for stdout (and stderr unless `error` is set), truncated at launch.
    pub output: PathBuf,
    /// File for stderr, if separate.
    pub error: Option<PathBuf>,
    /// The whole environment of the script (the submitter's plus Slurm's variables).
    pub env: BTreeMap<String, String>,
    /// Allocated nodes, by name (the first runs the batch script, as Slurm's batch host).
    pub nodes: Vec<String>,
}

/// How a job's processes ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExitReport {
    /// Public job id.
    pub job: u64,
    /// Exit code, when the script exited.
    pub code: Option<i32>,
    /// Signal, when one killed it.
    pub signal: Option<i32>,
}

/// Runs batch jobs and reports their ends through the callback it was built with.
pub trait Executor: Send {
    /// Starts the job's batch script; an error means nothing runs (the job is then failed).
    fn launch(&mut self, launch: Launch) -> Result<(), String>;

    /// Sends `signal` to every process of the job (scancel --signal).
    fn signal(&mut self, job: u64, signal: i32) -> Result<(), String>;

    /// Ends the job's processes: SIGTERM now, SIGKILL after `grace` (Slurm's KillWait) if any remain.
    fn terminate(&mut self, job: u64, grace: Duration);

    /// Jobs whose processes are still running.
    fn running(&self) -> Vec<u64>;
}
