//! Where a step's tasks run: the [`Launcher`] boundary, what it is given (each task with its
//! command line, environment and streams; how output is written; srun's orders) and what it
//! answers (how each task ended). [`super::local::Local`] runs them here; a node agent would
//! implement [`Launcher`] to run each node's tasks there and stream their lines back.

use std::collections::BTreeMap;
use std::sync::mpsc::Receiver;
use std::time::Duration;

use super::task_io::TaskStreams;

/// One task of a step: where it runs, what it runs, its own environment and streams.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    /// Its rank in the step (`SLURM_PROCID`).
    pub rank: u32,
    /// The node it runs on (`SLURMD_NODENAME`).
    pub node: String,
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// Its whole environment.
    pub env: BTreeMap<String, String>,
    /// The directory it starts in (`-D/--chdir`; srun's own when `None`).
    pub workdir: Option<std::path::PathBuf>,
    /// Where its standard input comes from and its output and errors go.
    pub streams: TaskStreams,
}

/// How the step's output is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Writing {
    /// `--label`: each line starts with `RANK: `.
    pub label: bool,
    /// `--open-mode=append`: output files are appended to rather than truncated.
    pub append: bool,
}

/// What srun asks of a step's running tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// End them as slurmstepd does: SIGCONT and SIGTERM now, SIGKILL to those left after
    /// `kill_wait` (the cluster's KillWait).
    Terminate {
        /// Between SIGTERM and SIGKILL.
        kill_wait: Duration,
    },
}

/// How a task ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It exited with this code.
    Exited(i32),
    /// A signal killed it.
    Signaled(i32),
    /// It could not be started (the program is missing or not executable, or a file of its
    /// streams could not be opened).
    NotStarted,
}

impl Outcome {
    /// The exit code srun reports for it: the code, 128 + the signal, or 127 (as a shell
    /// does for a command it cannot run).
    pub fn code(self) -> i32 {
        match self {
            Self::Exited(c) => c,
            Self::Signaled(s) => 128 + s,
            Self::NotStarted => 127,
        }
    }
}

/// Runs a step's tasks to their end, routing their streams, carrying out srun's orders as
/// they come, and says how each ended (in the order given). `Sync`: srun watches the job
/// while the launcher runs on another thread.
pub trait Launcher: Sync {
    /// Runs `tasks`, writing their output as `writing` says, until every one has ended.
    fn run(&self, tasks: &[Task], writing: Writing, orders: Receiver<Order>) -> Vec<Outcome>;
}

/// The step's exit code: the highest of its tasks'.
pub fn step_code(outcomes: &[Outcome]) -> i32 {
    outcomes.iter().map(|o| o.code()).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_step_code_is_the_highest_of_the_tasks() {
        let o = [
            Outcome::Exited(0),
            Outcome::Exited(3),
            Outcome::Signaled(9),
            Outcome::NotStarted,
        ];
        assert_eq!(step_code(&o[..3]), 137);
        assert_eq!(step_code(&o[..2]), 3);
        assert_eq!(step_code(&o), 137);
        assert_eq!(step_code(&[]), 0);
    }
}
