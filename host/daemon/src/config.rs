//! The daemon's own settings (`DIR/daemon.toml`), which slurm.conf-like cluster files do not carry.

use std::path::Path;

use serde::{Deserialize, Serialize};

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

/// `daemon.toml`. Every key is optional; unknown keys are errors.
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
    /// Seconds an ended job stays in the engine before it is purged (Slurm's MinJobAge, 300);
    /// the daemon's own record of it is kept.
    pub min_job_age: u64,
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
        }
    }
}

impl DaemonConfig {
    /// Reads `path`; a missing file gives the defaults.
    pub fn load(path: &Path) -> Result<Self, String> {
        match std::fs::read_to_string(path) {
            Ok(text) => toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }
}
