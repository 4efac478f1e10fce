//! Accounting views: sshare's association rows and sprio's priority rows.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One `sshare -l` row (`GET /v1/share`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShareRow {
    /// Account.
    pub account: String,
    /// User, for a user association.
    pub user: Option<String>,
    /// Depth in the association tree (indents the account).
    pub depth: u32,
    /// RawShares; `None` is `parent`.
    pub raw_shares: Option<u32>,
    /// NormShares; `None` when undefined (no shares at its level).
    pub norm_shares: Option<f64>,
    /// RawUsage.
    pub raw_usage: f64,
    /// EffectvUsage; `None` when undefined.
    pub effective_usage: Option<f64>,
    /// FairShare; `None` when undefined.
    pub fair_share: Option<f64>,
    /// LevelFS; `None` when undefined (no usage at its level).
    pub level_fs: Option<f64>,
}

/// One `sprio` row (`GET /v1/prio`): a pending job in one partition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PriorityRow {
    /// Public job id.
    pub job_id: u64,
    /// Partition.
    pub partition: String,
    /// Owner.
    pub user: String,
    /// Account.
    pub account: String,
    /// Priority.
    pub priority: u32,
    /// Weighted factors by name (`age`, `fairshare`…).
    pub factors: BTreeMap<String, f64>,
}
