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
    /// Seconds a node may take to come back before it is marked DOWN (60; INFINITE: never).
    #[serde(with = "crate::time::limit_seconds")]
    pub resume_timeout: TimeLimit,
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
    /// Least seconds between two power passes (`SlurmctldParameters=power_save_min_interval`, 0).
    #[serde(rename = "power_save_min_interval")]
    pub power_save_min_interval: u64,
    /// Most nodes powered up or booting at once (`SlurmctldParameters=max_powered_nodes`, none).
    #[serde(rename = "max_powered_nodes", skip_serializing_if = "Option::is_none")]
    pub max_powered_nodes: Option<u32>,
    /// Requeue batch jobs whose nodes failed to resume even when they ask not to be requeued
    /// (`SchedulerParameters=requeue_on_resume_failure`).
    #[serde(rename = "requeue_on_resume_failure")]
    pub requeue_on_resume_failure: bool,
    /// Batch jobs are requeued after a node failure unless they say otherwise (`JobRequeue`, 1).
    pub job_requeue: bool,
    /// Watts a node draws in each power state, for energy accounting in replays (none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watts: Option<PowerWatts>,
}

/// Watts one node draws per power state (`[power.Watts]`); sluice's own, for replay accounting.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "PascalCase")]
pub struct PowerWatts {
    /// Running at least one job.
    pub busy: f64,
    /// Powered up with nothing to run.
    pub idle: f64,
    /// Between ResumeProgram and registration.
    pub booting: f64,
    /// Between SuspendProgram and SuspendTimeout.
    pub powering_down: f64,
    /// Powered down (often a few watts for the BMC, 0 for a cloud node).
    pub off: f64,
}

impl Eq for PowerWatts {}

impl PowerSaveParams {
    /// `SuspendExcNodes` split at the commas outside brackets (`nid[10-20]:4,nid[80-90]:2`):
    /// sluice's reading, where Slurm splits at every comma once a `:` appears (Q4).
    pub fn suspend_exc_node_parts(&self) -> Vec<&str> {
        let text = self.suspend_exc_nodes.as_str();
        let mut parts = Vec::new();
        let (mut depth, mut start) = (0usize, 0);
        for (i, c) in text.char_indices() {
            match c {
                '[' => depth += 1,
                ']' => depth = depth.saturating_sub(1),
                ',' if depth == 0 => {
                    parts.push(&text[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push(&text[start..]);
        parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
    }

    /// Each part of `SuspendExcNodes` as (hostlist, count text after `:` if any).
    pub fn suspend_exc_node_groups(&self) -> Vec<(&str, Option<&str>)> {
        self.suspend_exc_node_parts()
            .into_iter()
            .map(|part| match part.rsplit_once(':') {
                Some((expr, count)) if !count.contains(']') => (expr, Some(count)),
                _ => (part, None),
            })
            .collect()
    }
}

impl Default for PowerSaveParams {
    fn default() -> Self {
        Self {
            suspend_time: TimeLimit::Infinite,
            suspend_timeout: 30,
            resume_timeout: TimeLimit::Seconds(60),
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
            power_save_min_interval: 0,
            max_powered_nodes: None,
            requeue_on_resume_failure: false,
            job_requeue: true,
            watts: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_counted_hostlists_outside_brackets() {
        let p = PowerSaveParams {
            suspend_exc_nodes: "nid[10-20]:4,nid[80,90]:2,x".into(),
            ..PowerSaveParams::default()
        };
        assert_eq!(
            p.suspend_exc_node_parts(),
            ["nid[10-20]:4", "nid[80,90]:2", "x"]
        );
        assert_eq!(
            p.suspend_exc_node_groups(),
            [
                ("nid[10-20]", Some("4")),
                ("nid[80,90]", Some("2")),
                ("x", None)
            ]
        );
        assert!(
            PowerSaveParams::default()
                .suspend_exc_node_parts()
                .is_empty()
        );
    }
}
