//! Owns no state: a node's power record put back as a host saved it, after the host driving the
//! engine restarted (the live daemon journals power state; a fresh engine starts from the
//! configuration's, so the host puts each saved node back before its jobs).

use sluice_cluster::NodeId;

use super::flags::PowerFlags as F;
use crate::engine::Engine;
use crate::node_state::Health;

/// What a host keeps of one node's power record to put it back later.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SavedPower {
    /// Power flags.
    pub flags: F,
    /// `LastBusyTime`.
    pub last_busy: Option<i64>,
    /// When ResumeProgram was asked for it (ResumeTimeout counts from it).
    pub boot_requested: Option<i64>,
    /// When SuspendProgram was asked for it (SuspendTimeout counts from it).
    pub suspend_requested: Option<i64>,
    /// Why power saving last acted on it.
    pub why: Option<String>,
    /// Who asked for the pending power down.
    pub down_request: Option<String>,
}

/// The requests a pending power down can come from, as [`crate::power::NodePower`] names them.
const DOWN_REQUESTS: [&str; 4] = [
    "POWER_DOWN requested",
    "POWER_DOWN_ASAP requested",
    "POWER_DOWN_FORCE requested",
    "PowerDownOnIdle",
];

impl Engine {
    /// What a host saves of node `node`'s power record.
    pub fn saved_power(&self, node: NodeId) -> SavedPower {
        let np = self.power.node(node.index());
        SavedPower {
            flags: np.flags,
            last_busy: np.last_busy,
            boot_requested: np.boot_requested,
            suspend_requested: np.suspend_requested,
            why: np.why.clone(),
            down_request: np.down_request.map(str::to_owned),
        }
    }

    /// Puts node `node`'s saved power record back: its flags and timers as they were, so a node
    /// that was booting still times out at ResumeTimeout from its original request, or comes up
    /// when it registers. Call it before the node's jobs are taken back, which then configure
    /// again if the node is not up.
    pub fn restore_node_power(&mut self, node: NodeId, saved: SavedPower) {
        let n = node.index();
        let np = &mut self.power.nodes[n];
        np.flags = saved.flags;
        np.last_busy = saved.last_busy;
        np.boot_requested = saved.boot_requested;
        np.suspend_requested = saved.suspend_requested;
        np.why = saved.why;
        np.down_request = saved.down_request.as_deref().map(|d| {
            DOWN_REQUESTS
                .into_iter()
                .find(|r| *r == d)
                .unwrap_or(DOWN_REQUESTS[0])
        });
        // What `max_powered_nodes` counts: up or booting, or asked to come up.
        let up = (!saved.flags.in_power_down() || saved.flags.has(F::POWER_UP))
            && self.nodes.node(node).health != Health::Future;
        if up {
            self.power.powered_up.insert(node.0);
        } else {
            self.power.powered_up.remove(node.0);
        }
        self.sync_power(n);
        let now = self.clock.now();
        self.power.touch(now);
        self.pacing.requested = true;
    }
}
