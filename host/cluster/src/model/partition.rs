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
    /// Who may use the partition, its state, sharing and memory defaults.
    pub access: PartitionAccess,
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

/// Who may submit to a partition and on what terms (slurm.conf partition keys).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PartitionAccess {
    /// `AllowAccounts`: only these accounts; `None` is `ALL`.
    pub allow_accounts: Option<Vec<String>>,
    /// `DenyAccounts`: never these accounts.
    pub deny_accounts: Vec<String>,
    /// `AllowGroups`: only users in one of these Unix groups; `None` is `ALL`.
    pub allow_groups: Option<Vec<String>>,
    /// `AllowQos`: only these QOS; `None` is `ALL`.
    pub allow_qos: Option<Vec<String>>,
    /// `DenyQos`: never these QOS.
    pub deny_qos: Vec<String>,
    /// `State`.
    pub state: PartitionState,
    /// `OverSubscribe`.
    pub oversubscribe: OverSubscribe,
    /// `DefMemPerCPU` in MB: the memory of a job that asks none, per CPU it uses.
    pub def_mem_per_cpu: Option<u64>,
    /// `MaxMemPerCPU` in MB: a job asking more memory per CPU gets more CPUs per task.
    pub max_mem_per_cpu: Option<u64>,
}

/// `State=` of a partition.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub enum PartitionState {
    /// Jobs are accepted and run.
    #[default]
    Up,
    /// Jobs are accepted but do not start (`PartitionDown`).
    Down,
    /// No new jobs are accepted; queued ones still run.
    Drain,
    /// No new jobs are accepted and queued ones do not start (`PartitionInactive`).
    Inactive,
}

impl PartitionState {
    /// Reads Slurm's spelling, any case.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text.to_ascii_uppercase().as_str() {
            "UP" => Self::Up,
            "DOWN" => Self::Down,
            "DRAIN" => Self::Drain,
            "INACTIVE" => Self::Inactive,
            _ => return None,
        })
    }

    /// Slurm's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Up => "UP",
            Self::Down => "DOWN",
            Self::Drain => "DRAIN",
            Self::Inactive => "INACTIVE",
        }
    }
    /// Whether its jobs may start.
    pub fn starts_jobs(self) -> bool {
        matches!(self, Self::Up | Self::Drain)
    }

    /// Whether it takes new jobs.
    pub fn takes_jobs(self) -> bool {
        matches!(self, Self::Up | Self::Down)
    }
}

/// `OverSubscribe=` of a partition, the values sluice enforces.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub enum OverSubscribe {
    /// Jobs share nodes but not CPUs (`NO`, the default).
    #[default]
    No,
    /// Every job gets whole nodes, as if it asked `--exclusive` (`EXCLUSIVE`).
    Exclusive,
    /// Jobs that ask `--oversubscribe` may share each CPU with up to this many jobs in all
    /// (`YES[:count]`, count 4 unless given).
    Yes(u32),
    /// Every job may share each CPU with up to this many jobs in all (`FORCE[:count]`).
    Force(u32),
}

impl OverSubscribe {
    /// The count `YES` and `FORCE` mean without one, as Slurm's.
    pub const DEFAULT_COUNT: u32 = 4;
    /// The largest count accepted: every node keeps a free-CPU count per sharing row.
    pub const MAX_COUNT: u32 = 64;

    /// Reads `NO`, `EXCLUSIVE`, `YES[:count]` or `FORCE[:count]` (count 1 to
    /// [`OverSubscribe::MAX_COUNT`]), in any case.
    pub fn parse(text: &str) -> Option<Self> {
        let (mode, count) = match text.split_once(':') {
            Some((mode, count)) => (mode, Some(count)),
            None => (text, None),
        };
        let count = match count {
            None => Self::DEFAULT_COUNT,
            Some(c) => c
                .trim()
                .parse()
                .ok()
                .filter(|c| (1..=Self::MAX_COUNT).contains(c))?,
        };
        match mode.trim().to_ascii_uppercase().as_str() {
            "NO" if text == mode => Some(Self::No),
            "EXCLUSIVE" if text == mode => Some(Self::Exclusive),
            "YES" => Some(Self::Yes(count)),
            "FORCE" => Some(Self::Force(count)),
            _ => None,
        }
    }

    /// Sharing rows a job gets in the partition: the count under `FORCE`, and under `YES`
    /// when the job asked `--oversubscribe`; 0 (its CPUs alone) otherwise.
    pub fn share_rows(self, job_asked: bool) -> u32 {
        match self {
            Self::Force(n) => n,
            Self::Yes(n) if job_asked => n,
            _ => 0,
        }
    }

    /// The sharing rows a node of the partition may need: the count under `YES` or `FORCE`.
    pub fn rows(self) -> u32 {
        match self {
            Self::Yes(n) | Self::Force(n) => n,
            Self::No | Self::Exclusive => 0,
        }
    }
}

impl std::fmt::Display for OverSubscribe {
    /// Slurm's spelling, as `scontrol show partition` prints it (`FORCE:4`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::No => f.write_str("NO"),
            Self::Exclusive => f.write_str("EXCLUSIVE"),
            Self::Yes(n) => write!(f, "YES:{n}"),
            Self::Force(n) => write!(f, "FORCE:{n}"),
        }
    }
}
