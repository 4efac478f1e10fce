//! Owns no state: whether a node is due to be suspended and why, or which exclusion keeps it
//! up (`_node_state_suspendable`, `_pick_exc_nodes`, power-save.md §1.6).

use sluice_cluster::NodeId;
use sluice_policy::NodeBitmap;

use super::flags::PowerFlags as F;
use crate::engine::Engine;
use crate::job::JobState;
use crate::node_state::Health;

/// Whether and when a node is due to be suspended.
pub(crate) enum Suspend {
    /// Nothing asks for it, or it cannot be suspended now.
    Never,
    /// Due at this time (i64::MIN: at once), for this reason.
    Due(i64, &'static str),
    /// Would be due at this time, but an exclusion keeps it up.
    Excluded(i64, Exclusion),
}

/// Which exclusion keeps a node up.
pub(crate) enum Exclusion {
    /// `SuspendExcStates`, by its index.
    State(usize),
    /// `SuspendExcParts`.
    Parts,
    /// `SuspendExcNodes`, listed or kept by a count.
    Nodes,
}

impl Exclusion {
    /// The node's PowerReason while it is kept up.
    pub(crate) fn describe(&self, states: &[String]) -> String {
        match self {
            Exclusion::State(i) => format!("excluded by SuspendExcStates={}", states[*i]),
            Exclusion::Parts => "excluded by SuspendExcParts".into(),
            Exclusion::Nodes => "excluded by SuspendExcNodes".into(),
        }
    }
}

impl Engine {
    /// Whether node `n` may be suspended at all (`_node_state_suspendable`): IDLE or DOWN, no
    /// completing job, not booting nor powering down.
    pub(crate) fn power_suspendable(&self, n: usize) -> bool {
        let node = self.nodes.node(NodeId(n as u32));
        let f = self.power.nodes[n].flags;
        let base_ok = match node.health {
            Health::Future => false,
            Health::Down => true,
            _ => node.jobs.is_empty(),
        };
        let completing = node.jobs.iter().any(|id| {
            self.jobs
                .get(id)
                .is_some_and(|j| j.state == JobState::Completing)
        });
        base_ok && !completing && !f.any(F::POWERING_UP.with(F::POWERING_DOWN))
    }

    /// When node `n` is due to be suspended, ignoring the rate; `None` when it never is as
    /// things stand (an exclusion keeps it up, or nothing asks for it).
    pub(crate) fn suspend_due(&self, n: usize, kept: &NodeBitmap) -> Option<i64> {
        match self.suspend_decision(n, kept) {
            Suspend::Due(t, _) => Some(t),
            _ => None,
        }
    }

    /// Whether and when node `n` is due to be suspended, and why: at once with a power-down
    /// request; SuspendTime after it became idle under automatic power saving, unless an
    /// exclusion keeps it up. No allocation: a pass asks this of every node.
    pub(crate) fn suspend_decision(&self, n: usize, kept: &NodeBitmap) -> Suspend {
        let np = &self.power.nodes[n];
        let wanted = np.flags.has(F::POWER_DOWN);
        let timed =
            self.power.automatic && np.last_busy.is_some() && np.timers.suspend_time.is_some();
        if !(wanted || timed) || !self.power_suspendable(n) {
            return Suspend::Never;
        }
        if wanted {
            return Suspend::Due(i64::MIN, np.down_request.unwrap_or("POWER_DOWN requested"));
        }
        let (Some(busy), Some(st)) = (np.last_busy, np.timers.suspend_time) else {
            return Suspend::Never;
        };
        let due = busy.saturating_add(st as i64 + 1);
        match self.excluded_by(n, kept) {
            Some(exclusion) => Suspend::Excluded(due, exclusion),
            None => Suspend::Due(due, "SuspendTime reached"),
        }
    }

    /// The exclusion that keeps node `n` up, if any.
    fn excluded_by(&self, n: usize, kept: &NodeBitmap) -> Option<Exclusion> {
        let ex = &self.power.exclusions;
        if ex.is_empty() {
            return None;
        }
        let i = n as u32;
        if let Some(state) = self.excluded_state(n) {
            return Some(Exclusion::State(state));
        }
        if ex.parts.contains(i) {
            return Some(Exclusion::Parts);
        }
        if ex.nodes.contains(i) || kept.contains(i) {
            return Some(Exclusion::Nodes);
        }
        None
    }

    /// The index of the first `SuspendExcStates` entry node `n` is in
    /// (`_node_state_should_suspend`).
    fn excluded_state(&self, n: usize) -> Option<usize> {
        let node = self.nodes.node(NodeId(n as u32));
        let np = &self.power.nodes[n];
        self.power
            .exclusions
            .states
            .iter()
            .map(String::as_str)
            .position(|s| match s {
                "DOWN" => node.health == Health::Down,
                "DRAIN" => node.health == Health::Drain,
                "FAIL" => node.health == Health::Fail,
                "CLOUD" => np.cloud,
                "NOT_RESPONDING" => np.flags.has(F::NOT_RESPONDING),
                // sluice never sets DYNAMIC_*, EXTERNAL, INVALID_REG, MAINTENANCE, PLANNED, RESERVED.
                _ => false,
            })
    }

    /// The nodes the `SuspendExcNodes` count groups keep up this pass.
    pub(crate) fn power_kept(&self) -> NodeBitmap {
        let ex = &self.power.exclusions;
        if ex.groups.is_empty() {
            return NodeBitmap::default();
        }
        let suspendable = |n: u32| {
            self.power_suspendable(n as usize)
                && !self.power.nodes[n as usize].flags.has(F::POWERED_DOWN)
        };
        let active = |n: u32| {
            let node = self.nodes.node(NodeId(n));
            let f = self.power.nodes[n as usize].flags;
            !suspendable(n)
                && node.health == Health::Up
                && !f.any(F::POWERING_UP.with(F::POWERING_DOWN).with(F::POWERED_DOWN))
        };
        ex.kept_by_groups(self.nodes.len(), suspendable, active)
    }
}
