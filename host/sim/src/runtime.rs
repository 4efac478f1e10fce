//! What happens to a job that runs longer than its requested time.

use std::fmt;
use std::str::FromStr;

use crate::job::{Time, WorkloadJob};

/// The runtime semantics switch (`--runtime`).
///
/// Either way the scheduler plans with the requested time (SWF field 9, or the run time where the
/// trace has none) and never sees the real run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RuntimeMode {
    /// The job ends at min(run time, requested time), as real batch systems and Alea do: a job is
    /// killed when its time limit expires, so estimates are never exceeded.
    #[default]
    KillAtLimit,
    /// The job runs its full recorded run time, as AccaSim does. A job that outlives its estimate
    /// is, for the built-in schedulers, believed to end one second from now until it really ends.
    RunToCompletion,
}

impl RuntimeMode {
    /// How long `job` occupies its processors in the replay.
    pub fn duration(self, job: &WorkloadJob) -> Time {
        match self {
            RuntimeMode::KillAtLimit => job.run_time.min(job.requested_time),
            RuntimeMode::RunToCompletion => job.run_time,
        }
    }

    /// The name used on the command line and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            RuntimeMode::KillAtLimit => "kill-at-limit",
            RuntimeMode::RunToCompletion => "run-to-completion",
        }
    }
}

impl fmt::Display for RuntimeMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A runtime mode name that is neither `kill-at-limit` nor `run-to-completion`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown runtime mode `{0}` (expected kill-at-limit or run-to-completion)")]
pub struct UnknownRuntimeMode(pub String);

impl FromStr for RuntimeMode {
    type Err = UnknownRuntimeMode;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "kill-at-limit" => Ok(RuntimeMode::KillAtLimit),
            "run-to-completion" => Ok(RuntimeMode::RunToCompletion),
            other => Err(UnknownRuntimeMode(other.to_string())),
        }
    }
}
