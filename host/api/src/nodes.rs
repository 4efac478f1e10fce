//! Nodes, partitions, licenses and reservations: what sinfo and `scontrol show` print, and the
//! admin actions on them.

use serde::{Deserialize, Serialize};

/// An admin action on a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeAction {
    /// State=DOWN: its jobs end with NODE_FAIL.
    Down,
    /// State=DRAIN: running jobs go on, nothing new starts.
    Drain,
    /// State=RESUME.
    Resume,
}

impl NodeAction {
    /// The action named in a path (`drain`, `resume`, `down`).
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "drain" => Some(Self::Drain),
            "resume" => Some(Self::Resume),
            "down" => Some(Self::Down),
            _ => None,
        }
    }

    /// Its name in a path.
    pub fn name(self) -> &'static str {
        match self {
            Self::Drain => "drain",
            Self::Resume => "resume",
            Self::Down => "down",
        }
    }
}

/// `POST /v1/nodes/{hostlist}/{action}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NodeActionRequest {
    /// Why (required to drain or down).
    pub reason: String,
}

/// The answer to a node action.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeActionDone {
    /// The nodes acted on.
    pub nodes: Vec<String>,
    /// The action.
    pub action: NodeAction,
}

/// `POST /v1/nodes/{hostlist}/state` (scontrol update NodeName=… State=… [Reason=…]): the
/// states that reach the engine's node update, power ones included.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NodeStateRequest {
    /// `POWER_UP`, `POWER_DOWN`, `POWER_DOWN_ASAP`, `POWER_DOWN_FORCE`, `RESUME`, `IDLE`,
    /// `UNDRAIN`, `DOWN`, `DRAIN`, `FAIL`, `FUTURE`, `NORESP`, `POWER_UP_FORCE`.
    pub state: String,
    /// Why (required for DOWN, DRAIN and FAIL; kept with a power down).
    pub reason: String,
}

/// The answer to a node state update.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeStateDone {
    /// The nodes updated.
    pub nodes: Vec<String>,
    /// The state asked for, as scontrol spells it.
    pub state: String,
}

/// `POST /v1/nodes/{name}/register` (`sluice register NODE`): the node's agent, or a site's
/// ResumeProgram, says the node booted, as slurmd registers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RegisterRequest {
    /// `NodeAddr=`: where the node is reached (a cloud node's address is known only once it
    /// booted); unchanged when absent.
    pub node_addr: Option<String>,
    /// `NodeHostname=`; unchanged when absent.
    pub node_hostname: Option<String>,
}

/// The answer to a registration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeRegistered {
    /// The node.
    pub node: String,
    /// Its state after registering, as scontrol prints it.
    pub state: String,
}

/// One node as sinfo sees it (`GET /v1/nodes`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeRow {
    /// Node name.
    pub name: String,
    /// State as scontrol prints it (`IDLE`, `MIXED+DRAIN`).
    pub state: String,
    /// sinfo's one suffix symbol by Slurm's precedence: `#` powering up, `%` powering down,
    /// `~` powered down, `!` power down requested, `*` not responding, or empty.
    pub power_symbol: String,
    /// CPUs.
    pub cpus: u32,
    /// Memory, MB.
    pub memory_mb: u64,
    /// Features.
    pub features: Vec<String>,
    /// Partitions it belongs to.
    pub partitions: Vec<String>,
    /// Public ids of the jobs on it.
    pub jobs: Vec<u64>,
    /// Why it is down or drained.
    pub reason: Option<String>,
}

/// `scontrol show node NAME` (`GET /v1/nodes/{name}`); `state` is scontrol's whole
/// `BASE+FLAGS` (`IDLE+CLOUD+POWERED_DOWN`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeReport {
    /// Node name.
    pub node_name: String,
    /// State as scontrol prints it.
    pub state: String,
    /// CPUs configured.
    pub cpu_tot: u32,
    /// CPUs allocated.
    pub cpu_alloc: u32,
    /// Memory configured, MB.
    pub real_memory: u64,
    /// Memory allocated, MB.
    pub alloc_mem: u64,
    /// Features.
    pub features: Vec<String>,
    /// GRES configured (`gpu:a100:4`).
    pub gres: String,
    /// GRES in use, with device indexes.
    pub gres_used: String,
    /// One row per device.
    pub devices: Vec<DeviceRow>,
    /// Public ids of the jobs on it.
    pub jobs: Vec<u64>,
    /// Why it is down or drained.
    pub reason: Option<String>,
    /// `NodeAddr=`, as last registered (absent: the node's name).
    #[serde(default)]
    pub node_addr: Option<String>,
    /// `NodeHostName=`, as last registered (absent: the node's name).
    #[serde(default)]
    pub node_hostname: Option<String>,
    /// `LastBusyTime=`, Unix seconds; `None` prints `Unknown`.
    #[serde(default)]
    pub last_busy_time: Option<i64>,
    /// `SuspendTime=` in effect for the node, seconds; `None` is INFINITE.
    #[serde(default)]
    pub suspend_time: Option<u64>,
    /// Why power saving last acted on, or held back, the node ("SuspendTime reached",
    /// "POWER_DOWN requested", "ResumeTimeout reached"…).
    #[serde(default)]
    pub power_reason: Option<String>,
}

/// One GRES device of a node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceRow {
    /// GRES name.
    pub name: String,
    /// Type, if any.
    pub gres_type: Option<String>,
    /// Global index on the node.
    pub index: u32,
    /// Device file (empty for a count-only unit).
    pub file: String,
    /// `Cores=` as a range list, empty when not given.
    pub cores: String,
    /// Public id of the job holding it.
    pub job: Option<u64>,
}

/// One partition (`GET /v1/partitions`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionRow {
    /// Partition name.
    pub name: String,
    /// Whether jobs that name none go here.
    pub default: bool,
    /// Its nodes as a hostlist.
    pub nodes: String,
    /// Node count.
    pub total_nodes: usize,
    /// MaxTime, seconds; `None` is infinite.
    pub max_time: Option<u64>,
    /// DefaultTime, seconds.
    pub default_time: Option<u64>,
    /// MaxNodes.
    pub max_nodes: Option<u32>,
    /// PriorityTier.
    pub priority_tier: u16,
    /// PriorityJobFactor.
    pub priority_job_factor: u16,
    /// State: `UP`, `DOWN`, `DRAIN` or `INACTIVE` (empty from a daemon that predates states).
    #[serde(default)]
    pub state: String,
    /// `OverSubscribe`: `NO`, `EXCLUSIVE`, `YES:N` or `FORCE:N` (empty from an older daemon).
    #[serde(default)]
    pub oversubscribe: String,
}

/// `POST /v1/partitions/{name}/state` (scontrol update PartitionName=… State=…).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PartitionStateRequest {
    /// `UP`, `DOWN`, `DRAIN` or `INACTIVE`.
    pub state: String,
}

/// The answer to a partition state change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionUpdated {
    /// The partition.
    pub partition: String,
    /// Its state now.
    pub state: String,
}

/// One license or HRES layer (`GET /v1/licenses`, `scontrol show license`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LicenseRow {
    /// Name (`resource(hostlist)` for an HRES layer).
    pub license_name: String,
    /// Total, when bounded.
    pub total: Option<u64>,
    /// In use.
    pub used: u64,
    /// Held by reservations.
    pub reserved: u64,
    /// Free, when bounded.
    pub free: Option<u64>,
    /// Base count before modes.
    pub base: u64,
    /// The layer's nodes.
    pub nodes: Option<String>,
    /// The layer's mode.
    pub mode: Option<String>,
}

/// A reservation as created (`POST /v1/reservations`, `GET /v1/reservations`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Reservation {
    /// ReservationName.
    pub name: String,
    /// StartTime, Unix seconds.
    pub start: i64,
    /// EndTime, Unix seconds.
    pub end: i64,
    /// Node names.
    pub nodes: Vec<String>,
    /// Licenses (`lic:n`) and HRES layers (`resource(hostlist):n`).
    pub licenses: Vec<String>,
    /// Users allowed.
    pub users: Vec<String>,
    /// Accounts allowed.
    pub accounts: Vec<String>,
}

/// The answer to creating a reservation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReservationCreated {
    /// Its name.
    pub reservation: String,
}

/// The answer to deleting a reservation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReservationDeleted {
    /// Its name.
    pub deleted: String,
}
