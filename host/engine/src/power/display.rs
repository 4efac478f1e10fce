//! Owns no state: a node's state as scontrol (`IDLE+CLOUD+POWERED_DOWN`) and sinfo (`idle~`)
//! print it, and its power fields for `sluice show node` (power-save.md §1.18).

use serde::Serialize;
use sluice_cluster::NodeId;

use crate::engine::Engine;
use crate::job::JobState;
use crate::node_state::Health;

/// A node's power as `sluice show node` reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NodePowerReport {
    /// `State=`: base state and flags, scontrol's `node_state_string_complete`.
    pub state: String,
    /// sinfo's compact state (`%t`), e.g. `idle~`, `alloc#`, `drng!`.
    pub sinfo: String,
    /// `LastBusyTime=`, seconds on the engine's clock; `None` prints `Unknown`.
    pub last_busy: Option<i64>,
    /// `SuspendTime=` in effect for the node; `None` is INFINITE.
    pub suspend_time: Option<u64>,
    /// `PowerReason=`: why power saving last acted on, or held back, the node.
    pub why: Option<String>,
}

impl Engine {
    /// Node `n`'s state in scontrol's form (`ALLOCATED+CLOUD+NOT_RESPONDING+POWERING_UP`).
    pub fn node_state_string(&self, node: NodeId) -> String {
        let (base, lead) = self.base_and_lead(node);
        let flags = self.power.node(node.index()).flags;
        let mut parts = vec![base];
        parts.extend(flags.scontrol_names(&lead));
        parts.join("+")
    }

    /// Node `n`'s state as sinfo's `%t` prints it: base name and one symbol by precedence.
    pub fn node_sinfo_state(&self, node: NodeId) -> String {
        let rt = self.nodes.node(node);
        let (busy, completing) = self.busy_and_completing(node);
        let mixed = busy && self.nodes.table().free_cpus[node.index()] > 0;
        let base = match rt.health {
            Health::Down => "down",
            Health::Future => "futr",
            Health::Fail if busy => "failg",
            Health::Fail => "fail",
            Health::Drain if busy || completing => "drng",
            Health::Drain => "drain",
            Health::Up if completing && !busy => "comp",
            Health::Up if mixed => "mix",
            Health::Up if busy => "alloc",
            Health::Up => "idle",
        };
        let symbol = self.power.node(node.index()).flags.sinfo_symbol();
        format!("{base}{symbol}")
    }

    /// Node `n`'s power report.
    pub fn node_power_report(&self, node: NodeId) -> NodePowerReport {
        let np = self.power.node(node.index());
        NodePowerReport {
            state: self.node_state_string(node),
            sinfo: self.node_sinfo_state(node),
            last_busy: np.last_busy,
            suspend_time: np.timers.suspend_time,
            why: np.why.clone(),
        }
    }

    /// Whether a job besides completing ones holds the node, and whether a completing one does.
    fn busy_and_completing(&self, node: NodeId) -> (bool, bool) {
        let jobs = &self.nodes.node(node).jobs;
        let completing = jobs.iter().any(|id| {
            self.jobs
                .get(id)
                .is_some_and(|j| j.state == JobState::Completing)
        });
        let busy = jobs.iter().any(|id| {
            self.jobs
                .get(id)
                .is_some_and(|j| j.state != JobState::Completing)
        });
        (busy, completing)
    }

    /// The base name and the flags scontrol prints before the power flags (CLOUD, COMPLETING,
    /// DRAIN, FAIL, in its table order).
    fn base_and_lead(&self, node: NodeId) -> (&'static str, Vec<&'static str>) {
        let rt = self.nodes.node(node);
        let (busy, completing) = self.busy_and_completing(node);
        let mixed = busy && self.nodes.table().free_cpus[node.index()] > 0;
        let base = match rt.health {
            Health::Down => "DOWN",
            Health::Future => "FUTURE",
            _ if mixed => "MIXED",
            _ if busy => "ALLOCATED",
            _ => "IDLE",
        };
        let mut lead = Vec::new();
        if self.power.node(node.index()).cloud {
            lead.push("CLOUD");
        }
        if completing {
            lead.push("COMPLETING");
        }
        match rt.health {
            Health::Drain => lead.push("DRAIN"),
            Health::Fail => lead.push("FAIL"),
            _ => {}
        }
        (base, lead)
    }
}
