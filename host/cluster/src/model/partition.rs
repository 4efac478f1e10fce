//! Partitions: named node sets with queue ordering tier, priority factor and limits.

use serde::Serialize;

use super::{NodeId, TimeLimit};

/// Index of a partition in [`super::Cluster::partitions`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct PartitionId(pub u32);

impl PartitionId {
    /// The index as `usize`.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One partition.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Partition {
    /// `PartitionName`.
    pub name: String,
    /// Member nodes in the order the `Nodes=` expression names them.
    pub nodes: Vec<NodeId>,
    /// Queue ordering tier; higher tiers are scheduled first (`PriorityTier`, default 1).
    pub priority_tier: u16,
    /// Partition priority factor numerator (`PriorityJobFactor`, default 1).
    pub priority_job_factor: u16,
    /// Longest time limit a job may have (`MaxTime`, default UNLIMITED).
    pub max_time: TimeLimit,
    /// Time limit of jobs that give none (`DefaultTime`, default = MaxTime).
    pub default_time: Option<TimeLimit>,
    /// The partition jobs go to when they name none (`Default`).
    pub default: bool,
    /// Most nodes one job may use (`MaxNodes`, default UNLIMITED).
    pub max_nodes: Option<u32>,
    /// Per-partition idle time before power down (`SuspendTime`); `None` leaves it to the
    /// node's other partitions, then the global value (INFINITE never suspends and wins).
    pub suspend_time: Option<TimeLimit>,
    /// QOS applied to every job in the partition (`QOS`), if any.
    pub qos: Option<super::QosId>,
    /// Power timers and PowerDownOnIdle of the partition's nodes.
    pub power: PartitionPower,
}

/// A partition's power keys: timers its nodes take the highest of, and `PowerDownOnIdle`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PartitionPower {
    /// `ResumeTimeout` in seconds (None: not set here; INFINITE: never time out).
    pub resume_timeout: Option<TimeLimit>,
    /// `SuspendTimeout` in seconds (None: not set here).
    pub suspend_timeout: Option<u64>,
    /// `PowerDownOnIdle`: nodes allocated from here power down as soon as they are idle.
    pub power_down_on_idle: bool,
}
