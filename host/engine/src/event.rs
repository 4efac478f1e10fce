//! Owns no state: the events the engine decides and an executor carries out.
//!
//! The executor (slurmd, a remote agent, the simulator) carries out what the engine decided.

use serde::Serialize;
use sluice_cluster::{NodeId, PartitionId};

use crate::job::JobState;
use crate::job_id::JobId;
use crate::power::event::PowerEvent;

/// Which loop started a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Loop {
    /// The main scheduling loop.
    Main,
    /// The backfill scheduler.
    Backfill,
}

impl std::fmt::Display for Loop {
    /// The scheduler in the words of slurmctld's log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(match self {
            Self::Main => "main scheduler",
            Self::Backfill => "backfill",
        })
    }
}

/// What the engine decided: the executor (slurmd, a remote agent, the simulator) carries it out.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Event {
    /// A job was allocated nodes and should be launched.
    Started {
        /// Job.
        job: JobId,
        /// Partition it runs in.
        partition: PartitionId,
        /// Its nodes.
        nodes: Vec<NodeId>,
        /// Start time.
        time: i64,
        /// The loop that started it.
        by: Loop,
    },
    /// A job ended (finished, cancelled, timed out, node failure); its processes must be gone.
    Ended {
        /// Job.
        job: JobId,
        /// Final state.
        state: JobState,
        /// Exit code, when it finished by itself.
        exit_code: Option<i32>,
        /// End time.
        time: i64,
    },
    /// The power pass decided a program call, or a job's nodes all booted.
    Power(PowerEvent),
}
