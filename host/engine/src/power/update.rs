//! Owns no state: the node operations of `scontrol update NodeName=… State=…` that touch power
//! (POWER_UP, POWER_DOWN, POWER_DOWN_ASAP, POWER_DOWN_FORCE, RESUME, DOWN, DRAIN…) and a node's
//! registration, refused as scontrol refuses them (power-save.md §1.8, §1.13).

use std::fmt;
use std::str::FromStr;

use sluice_cluster::NodeId;

use super::flags::PowerFlags as F;
use super::state::program_set;
use crate::engine::Engine;
use crate::node_state::Health;

/// A `State=` value of `scontrol update NodeName=…`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeUpdate {
    /// `DOWN`: jobs killed or requeued; needs a reason.
    Down,
    /// `DRAIN`: nothing new starts; needs a reason. A booting allocated node's jobs are killed
    /// or requeued at once.
    Drain,
    /// `FAIL`: like DRAIN, shown as failing; needs a reason.
    Fail,
    /// `RESUME` (or `IDLE`): DRAIN and FAIL cleared, a DOWN node back, a powering-down node
    /// powered down at once.
    Resume,
    /// `UNDRAIN`: DRAIN cleared only.
    Undrain,
    /// `POWER_UP`.
    PowerUp,
    /// `POWER_UP` forced (`scontrol power up force`): jobs killed or requeued, resumed again.
    PowerUpForce,
    /// `POWER_DOWN`: power down once idle; more jobs may still land on it.
    PowerDown,
    /// `POWER_DOWN_ASAP`: drain, then power down once idle.
    PowerDownAsap,
    /// `POWER_DOWN_FORCE`: kill or requeue its jobs and power down now.
    PowerDownForce,
    /// `NoResp`: NOT_RESPONDING until the node registers again.
    NoResp,
    /// `FUTURE`: an idle node leaves scheduling until it is resumed.
    Future,
}

impl NodeUpdate {
    /// Every name accepted, for messages.
    pub const NAMES: &'static str = "DOWN, DRAIN, FAIL, FUTURE, NORESP, RESUME, IDLE, UNDRAIN, POWER_UP, POWER_UP_FORCE, POWER_DOWN, POWER_DOWN_ASAP, POWER_DOWN_FORCE";

    /// Whether scontrol asks for a `Reason=` with it.
    pub fn needs_reason(self) -> bool {
        matches!(self, Self::Down | Self::Drain | Self::Fail)
    }

    fn is_power_down(self) -> bool {
        matches!(
            self,
            Self::PowerDown | Self::PowerDownAsap | Self::PowerDownForce
        )
    }
}

impl FromStr for NodeUpdate {
    type Err = NodeUpdateError;

    /// Reads a `State=` value, case-insensitively (`power_down_asap`, `POWER_DOWN_ASAP`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(match text.to_ascii_uppercase().as_str() {
            "DOWN" => Self::Down,
            "DRAIN" => Self::Drain,
            "FAIL" => Self::Fail,
            "RESUME" | "IDLE" => Self::Resume,
            "UNDRAIN" => Self::Undrain,
            "POWER_UP" => Self::PowerUp,
            "POWER_UP_FORCE" => Self::PowerUpForce,
            "POWER_DOWN" => Self::PowerDown,
            "POWER_DOWN_ASAP" => Self::PowerDownAsap,
            "POWER_DOWN_FORCE" => Self::PowerDownForce,
            "NORESP" => Self::NoResp,
            "FUTURE" => Self::Future,
            _ => return Err(NodeUpdateError::UnknownState(text.to_string())),
        })
    }
}

impl fmt::Display for NodeUpdate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Down => "DOWN",
            Self::Drain => "DRAIN",
            Self::Fail => "FAIL",
            Self::Resume => "RESUME",
            Self::Undrain => "UNDRAIN",
            Self::PowerUp => "POWER_UP",
            Self::PowerUpForce => "POWER_UP_FORCE",
            Self::PowerDown => "POWER_DOWN",
            Self::PowerDownAsap => "POWER_DOWN_ASAP",
            Self::PowerDownForce => "POWER_DOWN_FORCE",
            Self::NoResp => "NORESP",
            Self::Future => "FUTURE",
        })
    }
}

/// Why a node update was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NodeUpdateError {
    /// A state scontrol does not accept here.
    #[error("invalid node state `{0}` (expected one of {names})", names = NodeUpdate::NAMES)]
    UnknownState(String),
    /// DOWN, DRAIN and FAIL need a reason.
    #[error("you must specify a reason when setting a node {0}")]
    ReasonRequired(NodeUpdate),
    /// No program to carry the power action out (`ESLURM_INVALID_POWER_ACTION`).
    #[error("invalid power action: no {0} is configured")]
    InvalidPowerAction(&'static str),
    /// Powering up would exceed `max_powered_nodes` (`ESLURM_MAX_POWERED_NODES`).
    #[error("powering up would exceed max_powered_nodes={0}")]
    MaxPoweredNodes(u32),
    /// RESUME on a node that is not drained, failed, down or powering down, or FUTURE on a
    /// node with jobs.
    #[error("invalid node state transition from {from} to {to}")]
    InvalidTransition {
        /// The node's state, as scontrol prints it.
        from: String,
        /// The update asked for.
        to: NodeUpdate,
    },
}

impl Engine {
    /// `scontrol update NodeName=… State=… [Reason=…]` on one node.
    pub fn update_node(
        &mut self,
        node: NodeId,
        update: NodeUpdate,
        reason: Option<&str>,
    ) -> Result<(), NodeUpdateError> {
        let now = self.clock.now();
        let reason = reason.filter(|r| !r.trim().is_empty());
        if update.needs_reason() && reason.is_none() {
            return Err(NodeUpdateError::ReasonRequired(update));
        }
        let power = &self.cluster.power;
        if matches!(update, NodeUpdate::PowerUp | NodeUpdate::PowerUpForce) {
            if !program_set(&power.resume_program) {
                return Err(NodeUpdateError::InvalidPowerAction("ResumeProgram"));
            }
            if let Some(max) = power.max_powered_nodes {
                let mut up = self.power.powered_up.clone();
                up.insert(node.0);
                if up.len() > max as usize {
                    return Err(NodeUpdateError::MaxPoweredNodes(max));
                }
            }
        }
        if update.is_power_down() && !program_set(&power.suspend_program) {
            return Err(NodeUpdateError::InvalidPowerAction("SuspendProgram"));
        }
        let n = node.index();
        let health = self.nodes.node(node).health;
        let refused = match update {
            NodeUpdate::Resume => {
                health == Health::Up && !self.power.nodes[n].flags.has(F::POWERING_DOWN)
            }
            NodeUpdate::Future => !self.nodes.is_idle(n),
            _ => false,
        };
        if refused {
            return Err(NodeUpdateError::InvalidTransition {
                from: self.node_state_string(node),
                to: update,
            });
        }
        match update {
            NodeUpdate::Down => {
                self.nodes
                    .set_health(node, Health::Down, reason.map(str::to_owned));
                let booting = self.power.nodes[n]
                    .flags
                    .any(F::POWERED_DOWN.with(F::POWERING_UP));
                self.fail_node_jobs(n, booting);
            }
            NodeUpdate::Drain | NodeUpdate::Fail => {
                let health = if update == NodeUpdate::Drain {
                    Health::Drain
                } else {
                    Health::Fail
                };
                self.nodes
                    .set_health(node, health, reason.map(str::to_owned));
                if self.power.nodes[n]
                    .flags
                    .any(F::POWERED_DOWN.with(F::POWERING_UP))
                {
                    // A node being booted for its jobs cannot run them: "Requeuing jobs".
                    self.fail_node_jobs(n, true);
                }
            }
            NodeUpdate::Resume => self.resume_node_state(n, now),
            NodeUpdate::NoResp => self.power.nodes[n].flags.set(F::NOT_RESPONDING),
            NodeUpdate::Future => {
                self.nodes
                    .set_health(node, Health::Future, reason.map(str::to_owned));
                self.power.powered_up.remove(node.0);
            }
            NodeUpdate::Undrain => {
                if self.nodes.node(node).health == Health::Drain {
                    self.nodes.set_health(node, Health::Up, None);
                }
            }
            NodeUpdate::PowerUp => self.request_power_up(n),
            NodeUpdate::PowerUpForce => {
                self.fail_node_jobs(n, true);
                let np = &mut self.power.nodes[n];
                np.flags.set(F::POWERED_DOWN.with(F::POWER_UP));
                np.flags.clear(F::POWERING_DOWN.with(F::POWERING_UP));
                np.why = Some("POWER_UP_FORCE requested".into());
                self.power.powered_up.insert(node.0);
            }
            NodeUpdate::PowerDown | NodeUpdate::PowerDownAsap | NodeUpdate::PowerDownForce => {
                self.request_power_down(n, update, reason)
            }
        }
        self.sync_power(n);
        self.power.touch(now);
        self.pacing.requested = true;
        Ok(())
    }

    /// RESUME (`update_node:1996-2037`): DRAIN and FAIL cleared; a POWERING_DOWN node is
    /// powered down at once and available; a DOWN node returns IDLE (a powered-down one
    /// NOT_RESPONDING until it registers, with no LastBusyTime).
    fn resume_node_state(&mut self, n: usize, now: i64) {
        let node = NodeId(n as u32);
        let health = self.nodes.node(node).health;
        if matches!(
            health,
            Health::Drain | Health::Fail | Health::Down | Health::Future
        ) {
            self.nodes.set_health(node, Health::Up, None);
            if !self.power.nodes[n].flags.in_power_down() {
                self.power.powered_up.insert(node.0);
            }
        }
        let flags = self.power.nodes[n].flags;
        if flags.has(F::POWERING_DOWN) {
            self.powered_down(n, now);
            return;
        }
        let np = &mut self.power.nodes[n];
        if health == Health::Down && flags.has(F::POWERED_DOWN) {
            np.flags.set(F::NOT_RESPONDING);
            np.last_busy = None;
        } else if health == Health::Down {
            np.last_busy = Some(now);
        }
    }

    /// POWER_UP: a powered-down node gets the request and the next pass resumes it; a booting
    /// one is resumed again (ResumeProgram once more, the ResumeTimeout clock restarted: Slurm's
    /// Q6); any other node, a powering-down one included (Q7), is "already powered up".
    fn request_power_up(&mut self, n: usize) {
        let np = &mut self.power.nodes[n];
        if np.flags.has(F::POWERED_DOWN) || np.flags.has(F::POWERING_UP) {
            np.flags.set(F::POWER_UP.with(F::POWERED_DOWN));
            np.why = Some("POWER_UP requested".into());
            self.power.powered_up.insert(n as u32);
        } else {
            np.why = Some("POWER_UP ignored: already powered up".into());
        }
    }

    /// POWER_DOWN, _ASAP and _FORCE (`update_node:2172-2312`), in Slurm's order.
    fn request_power_down(&mut self, n: usize, update: NodeUpdate, reason: Option<&str>) {
        let node = NodeId(n as u32);
        if self.power.nodes[n].flags.has(F::POWERING_DOWN) {
            self.power.nodes[n].why = Some(format!("{update} ignored: already powering down"));
            return;
        }
        if update == NodeUpdate::PowerDownForce {
            let booting = self.power.nodes[n]
                .flags
                .any(F::POWERED_DOWN.with(F::POWERING_UP));
            self.fail_node_jobs(n, booting);
            self.power.nodes[n]
                .flags
                .clear(F::POWER_UP.with(F::POWERING_UP));
        }
        if update == NodeUpdate::PowerDownAsap {
            let old = self.nodes.node(node).reason.clone();
            let keep = old.filter(|r| !r.is_empty() && r != "Not responding");
            let why = reason
                .map(str::to_owned)
                .or(keep)
                .unwrap_or_else(|| "POWER_DOWN_ASAP".into());
            if self.nodes.node(node).health == Health::Up {
                self.nodes.set_health(node, Health::Drain, Some(why));
            }
        } else if let Some(r) = reason {
            let health = self.nodes.node(node).health;
            self.nodes.set_health(node, health, Some(r.to_owned()));
        }
        let np = &mut self.power.nodes[n];
        if self.nodes.node(node).health == Health::Down {
            np.flags.clear(F::POWERING_UP);
        }
        np.flags.set(F::POWER_DOWN);
        np.down_request = Some(match update {
            NodeUpdate::PowerDownAsap => "POWER_DOWN_ASAP requested",
            NodeUpdate::PowerDownForce => "POWER_DOWN_FORCE requested",
            _ => "POWER_DOWN requested",
        });
        np.why = np.down_request.map(str::to_owned);
    }

    /// The node's agent registered (slurmd at boot, `sluice register`): a booting or powered
    /// down node is up now, its LastBusyTime now (so SuspendTime counts from its boot), and
    /// CONFIGURING jobs whose nodes are all up start RUNNING. A DOWN node stays DOWN (no
    /// ReturnToService), its reason kept (Slurm's Q9).
    pub fn register_node(&mut self, node: NodeId) {
        let now = self.clock.now();
        let n = node.index();
        let np = &mut self.power.nodes[n];
        if np.flags.any(F::POWERING_UP.with(F::POWERED_DOWN)) {
            np.last_busy = Some(now);
        }
        np.flags.clear(
            F::NOT_RESPONDING
                .with(F::POWERING_UP)
                .with(F::POWERED_DOWN)
                .with(F::POWERING_DOWN),
        );
        np.boot_requested = None;
        np.suspend_requested = None;
        np.why = Some("registered".into());
        if self.nodes.node(node).health != Health::Future {
            self.power.powered_up.insert(node.0);
        }
        self.sync_power(n);
        self.power_jobs_ready(n, now);
        self.power.touch(now);
        self.pacing.requested = true;
    }
}
