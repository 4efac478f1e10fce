//! Power saving parameters under Slurm's `Suspend*` / `Resume*` names and defaults.

use serde::{Deserialize, Serialize};

use super::TimeLimit;

/// Power saving (slurm-semantics §8); times in seconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "PascalCase")]
pub struct PowerSaveParams {
    /// Idle time before a node is powered down (INFINITE: power saving off).
    #[serde(with = "crate::time::limit_seconds")]
    pub suspend_time: TimeLimit,
    /// Seconds a power down takes; the node is unusable meanwhile (30).
    pub suspend_timeout: u64,
    /// Seconds a node may take to come back before it is marked DOWN (60).
    pub resume_timeout: u64,
    /// Nodes resumed per minute; 0 means no limit (300).
    pub resume_rate: u32,
    /// Nodes suspended per minute; 0 means no limit (60).
    pub suspend_rate: u32,
    /// Program run with the hostlist to power nodes down.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suspend_program: Option<String>,
    /// Program run with the hostlist to power nodes up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume_program: Option<String>,
    /// Program run with the hostlist of nodes that missed ResumeTimeout.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume_fail_program: Option<String>,
    /// Nodes never suspended: a hostlist, each part optionally `:count` ("").
    pub suspend_exc_nodes: String,
    /// Partitions whose nodes are never suspended (none).
    pub suspend_exc_parts: Vec<String>,
    /// Node states never suspended, e.g. `DOWN`, `DRAIN` (none).
    pub suspend_exc_states: Vec<String>,
    /// Seconds between power save passes (`SlurmctldParameters=power_save_interval`, 10).
    #[serde(rename = "power_save_interval")]
    pub power_save_interval: u64,
    /// Force suspended nodes to IDLE, clearing DRAIN/FAIL (`SlurmctldParameters=idle_on_node_suspend`).
    #[serde(rename = "idle_on_node_suspend")]
    pub idle_on_node_suspend: bool,
}

impl Default for PowerSaveParams {
    fn default() -> Self {
        Self {
            suspend_time: TimeLimit::Infinite,
            suspend_timeout: 30,
            resume_timeout: 60,
            resume_rate: 300,
            suspend_rate: 60,
            suspend_program: None,
            resume_program: None,
            resume_fail_program: None,
            suspend_exc_nodes: String::new(),
            suspend_exc_parts: Vec::new(),
            suspend_exc_states: Vec::new(),
            power_save_interval: 10,
            idle_on_node_suspend: false,
        }
    }
}
