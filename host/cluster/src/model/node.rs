//! Compute nodes: hardware shape, features, weight, GRES and the state they start in.

use serde::{Deserialize, Serialize};

use super::{Gres, TimeLimit};

/// Index of a node in [`super::Cluster::nodes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The index as `usize`, for table lookups.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The state a node is configured with (slurm.conf `State=`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum NodeState {
    /// Slurm's default: unknown until slurmd registers; a simulator treats it as idle.
    #[default]
    Unknown,
    /// Available for work.
    Idle,
    /// Unavailable.
    Down,
    /// Runs nothing new until resumed.
    Drain,
    /// Failed; like DOWN but expected to be looked at.
    Fail,
    /// Defined for the future; not usable and not shown.
    Future,
    /// A cloud node: powered down until a job needs it (ResumeProgram brings it up).
    Cloud,
}

impl NodeState {
    /// Parses Slurm's spelling, case-insensitively.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text.to_ascii_uppercase().as_str() {
            "UNKNOWN" => Self::Unknown,
            "IDLE" => Self::Idle,
            "DOWN" => Self::Down,
            "DRAIN" => Self::Drain,
            "FAIL" => Self::Fail,
            "FUTURE" => Self::Future,
            "CLOUD" => Self::Cloud,
            _ => return None,
        })
    }

    /// Slurm's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unknown => "UNKNOWN",
            Self::Idle => "IDLE",
            Self::Down => "DOWN",
            Self::Drain => "DRAIN",
            Self::Fail => "FAIL",
            Self::Future => "FUTURE",
            Self::Cloud => "CLOUD",
        }
    }
}

/// One compute node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Node {
    /// Host name (`NodeName`).
    pub name: String,
    /// Sockets per node (`Sockets`, default 1).
    pub sockets: u16,
    /// Cores per socket (`CoresPerSocket`, default 1).
    pub cores_per_socket: u16,
    /// Hardware threads per core (`ThreadsPerCore`, default 1).
    pub threads_per_core: u16,
    /// Schedulable CPUs (`CPUs`, default sockets × cores × threads).
    pub cpus: u32,
    /// Memory in MB (`RealMemory`, default 1).
    pub real_memory_mb: u64,
    /// Features usable in `--constraint` (`Features`).
    pub features: Vec<String>,
    /// Scheduling weight; lower weights are allocated first (`Weight`, default 1).
    pub weight: u32,
    /// Generic resources (`Gres=` merged with gres.conf device detail).
    pub gres: Vec<Gres>,
    /// Configured state (`State`, default UNKNOWN).
    pub state: NodeState,
    /// Per-node idle time before power down (`SuspendTime`); overrides partitions and the global value.
    pub suspend_time: Option<TimeLimit>,
}

impl Node {
    /// Physical cores (sockets × cores per socket).
    pub fn cores(&self) -> u32 {
        u32::from(self.sockets) * u32::from(self.cores_per_socket)
    }

    /// Configured count of a GRES by name, summed over its types.
    pub fn gres_count(&self, name: &str) -> u64 {
        self.gres
            .iter()
            .filter(|g| g.name == name)
            .map(|g| g.count)
            .sum()
    }
}
