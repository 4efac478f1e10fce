//! The files a job's supervisor and the daemon share in the job's spool directory
//! (`DIR/jobs/<id>/<run>/`, the daemon's, never the user's): what to run, who holds the job,
//! and how it ended. The directory itself is the run's lock: its supervisor holds it for its
//! whole life, so whoever can lock it knows the supervisor is gone. Each file is written whole
//! and renamed into place, so a reader never sees half of one.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// What to run, written by the daemon before the supervisor starts.
pub const JOB: &str = "job.json";
/// The batch script (read by the supervisor as root, executed by descriptor as the user).
pub const SCRIPT: &str = "script";
/// The lock file of a supervisor started before the run's directory itself was its lock: a
/// daemon upgraded while such a supervisor runs still sees it alive.
pub const LEGACY_LOCK: &str = "lock";
/// The supervisor's pid and the job's process group, once the job's process exists.
pub const PIDS: &str = "pids";
/// How the job ended, written before the supervisor lets go of the lock.
pub const STATUS: &str = "status";

/// Everything the supervisor needs to run one batch job.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobFile {
    /// Public job id.
    pub job: u64,
    /// The job's owner: the job runs as this user, with this user's groups only.
    pub uid: u32,
    /// Working directory (the user must be able to enter it, else `/tmp`, as slurmd does).
    pub workdir: PathBuf,
    /// Standard output (and error unless `error` is set), opened as the user.
    pub output: PathBuf,
    /// Standard error, if separate, opened as the user.
    pub error: Option<PathBuf>,
    /// The script's whole environment.
    pub env: BTreeMap<String, String>,
    /// Seconds the job may run; the supervisor ends it a little after, should nobody else.
    pub time_limit: Option<u64>,
    /// Seconds between SIGTERM and SIGKILL when the job is ended (Slurm's KillWait).
    pub kill_wait: u64,
    /// `--signal`: sent this long before the time limit (absent in older spools).
    #[serde(default)]
    pub warn_signal: Option<sluice_api::WarnSignal>,
    /// `--open-mode=append`: output files are appended to, not truncated.
    #[serde(default)]
    pub append: bool,
    /// `--input`: the script's standard input (else /dev/null), opened as the user.
    #[serde(default)]
    pub input: Option<PathBuf>,
    /// The script's arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// The submitter's soft resource limits by Slurm's names (`None`: unlimited); empty: the
    /// supervisor's own.
    #[serde(default)]
    pub rlimits: BTreeMap<String, Option<u64>>,
    /// The job's cgroup, which the supervisor creates and the job runs in; absent when no
    /// cgroup is usable (its processes are then tracked as the supervisor's descendants).
    #[serde(default)]
    pub cgroup: Option<crate::cgroup::JobCgroup>,
}

/// How a job's run ended, as the supervisor saw it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Status {
    /// Exit code, when the script exited.
    pub code: Option<i32>,
    /// Signal, when one killed it.
    pub signal: Option<i32>,
    /// The supervisor ended it for running past its time limit.
    pub timed_out: bool,
    /// Why the job could not run (a file the user may not open, an unknown uid…).
    pub reason: Option<String>,
    /// When it ended, Unix seconds.
    pub end_time: i64,
    /// Processes of the job the kernel killed for exceeding its cgroup's memory.
    #[serde(default)]
    pub oom_kills: u64,
}

/// The processes of a running job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pids {
    /// The supervisor.
    pub supervisor: u32,
    /// The job's process group (its batch script's pid).
    pub job: u32,
}

/// How a file is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Persist {
    /// Whole or not at all (renamed into place): what only matters while the machine is up.
    Atomic,
    /// Atomic, and on disk before the call returns (fsync of the file and the directory): a
    /// job's end, which must survive a crash of the machine.
    Durable,
}

/// Writes `name` in `dir` through a temporary file renamed over it, as `how` says.
pub fn write_file(dir: &Path, name: &str, bytes: &[u8], how: Persist) -> io::Result<()> {
    let tmp = dir.join(format!(".{name}.tmp"));
    let mut f = File::create(&tmp)?;
    f.write_all(bytes)?;
    if how == Persist::Durable {
        f.sync_all()?;
    }
    fs::rename(&tmp, dir.join(name))?;
    if how == Persist::Durable {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// Writes `value` as JSON into `name` in `dir`, as `how` says.
pub fn write_json<T: Serialize>(dir: &Path, name: &str, value: &T, how: Persist) -> io::Result<()> {
    let bytes = serde_json::to_vec(value).map_err(io::Error::other)?;
    write_file(dir, name, &bytes, how)
}

/// Reads the JSON in `name` in `dir`; `None` when there is no such file.
pub fn read_json<T: DeserializeOwned>(dir: &Path, name: &str) -> io::Result<Option<T>> {
    match fs::read(dir.join(name)) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Unix seconds now.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}
