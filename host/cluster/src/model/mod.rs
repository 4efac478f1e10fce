//! The host's picture of a cluster: plain data with index cross references, in configuration order.

mod account;
mod gres;
mod hres;
mod limits;
mod node;
mod partition;
pub mod plugins;
mod power;
mod priority;
mod qos;
mod scheduler;

pub use account::{AssocId, AssocKind, Association, Shares};
pub use gres::{Gres, GresDevice, GresFlag};
pub use hres::{HresCount, HresLayer, HresMode, HresResource, License, NamedValue};
pub use limits::{AccountingEnforce, AssocLimits, TresError, TresLimits};
pub use node::{Node, NodeId, NodeState};
pub use partition::{
    OverSubscribe, Partition, PartitionAccess, PartitionId, PartitionPower, PartitionState,
};
pub use plugins::{PluginConfig, PluginKind, PluginSource, Plugins};
pub use power::{PowerSaveParams, PowerWatts};
pub use priority::{PriorityFlag, PriorityParams, UsageResetPeriod};
pub use qos::{Qos, QosId, QosLimits};
pub use scheduler::SchedulerParams;

use serde::Serialize;

/// A time limit that may be infinite (Slurm's `INFINITE` / `UNLIMITED`), in seconds otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum TimeLimit {
    /// No limit.
    Infinite,
    /// A limit of this many seconds.
    Seconds(u64),
}

impl TimeLimit {
    /// The limit in seconds, or `None` when infinite.
    pub fn seconds(self) -> Option<u64> {
        match self {
            Self::Infinite => None,
            Self::Seconds(s) => Some(s),
        }
    }
}

/// A whole cluster: every table the scheduler and the plugins read, loaded by one pure function.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cluster {
    /// Cluster name (`ClusterName`).
    pub name: String,
    /// Nodes in configuration order; `NodeId(i)` is `nodes[i]`.
    pub nodes: Vec<Node>,
    /// Partitions in configuration order; `PartitionId(i)` is `partitions[i]`.
    pub partitions: Vec<Partition>,
    /// QOS records; `QosId(i)` is `qos[i]`.
    pub qos: Vec<Qos>,
    /// The association tree; index 0 is the `root` account and parents precede their children.
    pub associations: Vec<Association>,
    /// Cluster-wide licenses (`Licenses=`).
    pub licenses: Vec<License>,
    /// Hierarchical resources from resources.yaml.
    pub hres: Vec<HresResource>,
    /// Main and backfill scheduler parameters (`SchedulerParameters`).
    pub scheduler: SchedulerParams,
    /// Multifactor priority parameters (`Priority*`).
    pub priority: PriorityParams,
    /// Power saving parameters (`Suspend*` / `Resume*`).
    pub power: PowerSaveParams,
    /// Which plugin of each kind to load, with its settings.
    pub plugins: Plugins,
    /// `AccountingStorageEnforce`: whether associations, limits and QOS are enforced.
    pub enforce: AccountingEnforce,
}

impl Cluster {
    /// The node with this name, if any.
    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.nodes
            .iter()
            .position(|node| node.name == name)
            .map(|index| NodeId(index as u32))
    }

    /// The node behind an id.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }

    /// The partition with this name, if any.
    pub fn partition_id(&self, name: &str) -> Option<PartitionId> {
        self.partitions
            .iter()
            .position(|p| p.name == name)
            .map(|index| PartitionId(index as u32))
    }

    /// The partition marked `Default=YES`, else the first one (Slurm's choice when none is marked).
    pub fn default_partition(&self) -> Option<PartitionId> {
        let marked = self.partitions.iter().position(|p| p.default);
        marked
            .or((!self.partitions.is_empty()).then_some(0))
            .map(|index| PartitionId(index as u32))
    }

    /// The QOS with this name, if any.
    pub fn qos_id(&self, name: &str) -> Option<QosId> {
        self.qos
            .iter()
            .position(|q| q.name == name)
            .map(|index| QosId(index as u32))
    }

    /// The user association of `user` under `account`, if any.
    pub fn user_assoc(&self, user: &str, account: &str) -> Option<AssocId> {
        let account_id = self.account_id(account)?;
        self.associations[account_id.index()]
            .children
            .iter()
            .copied()
            .find(|child| matches!(&self.associations[child.index()].kind, AssocKind::User(u) if u == user))
    }

    /// The account association with this name, if any.
    pub fn account_id(&self, account: &str) -> Option<AssocId> {
        self.associations
            .iter()
            .position(|a| matches!(&a.kind, AssocKind::Account(name) if name == account))
            .map(|index| AssocId(index as u32))
    }

    /// Total CPUs over all nodes (the job size factor's `cluster_cpus`).
    pub fn total_cpus(&self) -> u64 {
        self.nodes.iter().map(|n| u64::from(n.cpus)).sum()
    }
}
