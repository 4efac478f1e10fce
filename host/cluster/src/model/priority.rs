//! Multifactor priority parameters under Slurm's `Priority*` names and defaults.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// `Priority*` parameters; times are seconds in the model and Slurm times (bare numbers = minutes) in files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "PascalCase")]
pub struct PriorityParams {
    /// Weight of the age factor (0).
    pub priority_weight_age: u32,
    /// Weight of the association factor (0).
    pub priority_weight_assoc: u32,
    /// Weight of the fairshare factor (0).
    pub priority_weight_fairshare: u32,
    /// Weight of the job size factor (0).
    pub priority_weight_job_size: u32,
    /// Weight of the partition factor (0).
    pub priority_weight_partition: u32,
    /// Weight of the QOS factor (0).
    #[serde(rename = "PriorityWeightQOS")]
    pub priority_weight_qos: u32,
    /// Per-TRES weights (`cpu`, `mem`, `gres/gpu` …); may be negative (empty).
    #[serde(rename = "PriorityWeightTRES")]
    pub priority_weight_tres: BTreeMap<String, f64>,
    /// Queue wait after which the age factor is 1.0, in seconds (7 days).
    #[serde(with = "crate::time::minutes")]
    pub priority_max_age: u64,
    /// Usage half-life, in seconds; 0 disables decay (7 days).
    #[serde(with = "crate::time::minutes")]
    pub priority_decay_half_life: u64,
    /// Seconds between decay and fairshare recalculations (5 minutes).
    #[serde(with = "crate::time::minutes")]
    pub priority_calc_period: u64,
    /// Favor small jobs in the job size factor (NO).
    pub priority_favor_small: bool,
    /// `PriorityFlags` (none).
    pub priority_flags: Vec<PriorityFlag>,
    /// When raw usage is zeroed (NONE).
    pub priority_usage_reset_period: UsageResetPeriod,
    /// Divides the fairshare exponent in classic fairshare (1).
    pub fair_share_dampening_factor: u32,
}

impl Default for PriorityParams {
    fn default() -> Self {
        Self {
            priority_weight_age: 0,
            priority_weight_assoc: 0,
            priority_weight_fairshare: 0,
            priority_weight_job_size: 0,
            priority_weight_partition: 0,
            priority_weight_qos: 0,
            priority_weight_tres: BTreeMap::new(),
            priority_max_age: 7 * 86_400,
            priority_decay_half_life: 7 * 86_400,
            priority_calc_period: 300,
            priority_favor_small: false,
            priority_flags: Vec::new(),
            priority_usage_reset_period: UsageResetPeriod::None,
            fair_share_dampening_factor: 1,
        }
    }
}

impl PriorityParams {
    /// True if the flag is set (`NO_NORMAL_ALL` implies every `NO_NORMAL_*`).
    pub fn has_flag(&self, flag: PriorityFlag) -> bool {
        let implied_by_all = matches!(
            flag,
            PriorityFlag::NoNormalAssoc
                | PriorityFlag::NoNormalPart
                | PriorityFlag::NoNormalQos
                | PriorityFlag::NoNormalTres
        ) && self.priority_flags.contains(&PriorityFlag::NoNormalAll);
        let implied_by_depth = flag == PriorityFlag::NoFairTree
            && self.priority_flags.contains(&PriorityFlag::DepthOblivious);
        self.priority_flags.contains(&flag) || implied_by_all || implied_by_depth
    }
}

/// A `PriorityFlags` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PriorityFlag {
    /// Accrue age from submit time, ignoring holds and begin times.
    AccrueAlways,
    /// Recalculate running jobs' priority too.
    CalculateRunning,
    /// Classic fairshare with depth-oblivious effective usage (implies NO_FAIR_TREE).
    DepthOblivious,
    /// Classic fairshare instead of Fair Tree.
    NoFairTree,
    /// Only ever raise a job's priority.
    IncrOnly,
    /// Billing uses the MAX of node TRES.
    MaxTres,
    /// Like MAX_TRES, adding GRES.
    MaxTresGres,
    /// All NO_NORMAL_* flags.
    NoNormalAll,
    /// Raw association priority.
    NoNormalAssoc,
    /// Raw partition factor.
    NoNormalPart,
    /// Raw QOS priority.
    NoNormalQos,
    /// Raw TRES counts.
    NoNormalTres,
    /// Job size relative to time limit.
    SmallRelativeToTime,
}

/// `PriorityUsageResetPeriod`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum UsageResetPeriod {
    /// Never reset.
    None,
    /// Reset once, now.
    Now,
    /// Every day at midnight.
    Daily,
    /// Every Sunday at midnight.
    Weekly,
    /// First day of the month.
    Monthly,
    /// First day of each quarter.
    Quarterly,
    /// First day of the year.
    Yearly,
}
