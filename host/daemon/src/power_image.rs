//! What the journal keeps of power saving: each node's power record and health as last
//! changed, the power program calls not yet finished, and where registered nodes are reached.

use serde::{Deserialize, Serialize};
use sluice_cluster::NodeId;
use sluice_engine::node_state::Health;
use sluice_engine::{Engine, PowerFlags, SavedPower};

/// One node's power record and health, as the engine last had them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodePowerImage {
    /// Power flags, as scontrol names them (`POWERED_DOWN`, `POWERING_UP`…).
    pub flags: Vec<String>,
    /// `LastBusyTime`.
    pub last_busy: Option<i64>,
    /// When ResumeProgram was asked for the node.
    pub boot_requested: Option<i64>,
    /// When SuspendProgram was asked for the node.
    pub suspend_requested: Option<i64>,
    /// Why power saving last acted on it.
    pub why: Option<String>,
    /// Who asked for the pending power down.
    pub down_request: Option<String>,
    /// Health: `UP`, `DOWN`, `DRAIN`, `FAIL` or `FUTURE`.
    pub health: String,
    /// The node's reason.
    pub reason: Option<String>,
}

/// Every power flag with the name the image keeps it under.
const FLAGS: [(PowerFlags, &str); 6] = [
    (PowerFlags::POWER_DOWN, "POWER_DOWN"),
    (PowerFlags::POWER_UP, "POWER_UP"),
    (PowerFlags::POWERED_DOWN, "POWERED_DOWN"),
    (PowerFlags::NOT_RESPONDING, "NOT_RESPONDING"),
    (PowerFlags::POWERING_UP, "POWERING_UP"),
    (PowerFlags::POWERING_DOWN, "POWERING_DOWN"),
];

/// Health with the name the image keeps it under.
const HEALTH: [(Health, &str); 5] = [
    (Health::Up, "UP"),
    (Health::Down, "DOWN"),
    (Health::Drain, "DRAIN"),
    (Health::Fail, "FAIL"),
    (Health::Future, "FUTURE"),
];

impl NodePowerImage {
    /// Node `node` of `engine` as the image keeps it.
    pub fn of(engine: &Engine, node: NodeId) -> Self {
        let saved = engine.saved_power(node);
        let rt = engine.nodes().node(node);
        Self {
            flags: FLAGS
                .iter()
                .filter(|(f, _)| saved.flags.has(*f))
                .map(|(_, n)| n.to_string())
                .collect(),
            last_busy: saved.last_busy,
            boot_requested: saved.boot_requested,
            suspend_requested: saved.suspend_requested,
            why: saved.why,
            down_request: saved.down_request,
            health: health_name(rt.health).to_string(),
            reason: rt.reason.clone(),
        }
    }

    /// Whether node `node` of `engine` is as this image says, compared without copying it (the
    /// driver asks this of every node after every change).
    pub fn matches(&self, engine: &Engine, node: NodeId) -> bool {
        let np = engine.power().node(node.index());
        let rt = engine.nodes().node(node);
        self.flags() == np.flags
            && self.last_busy == np.last_busy
            && self.boot_requested == np.boot_requested
            && self.suspend_requested == np.suspend_requested
            && self.why == np.why
            && self.down_request.as_deref() == np.down_request
            && self.health == health_name(rt.health)
            && self.reason == rt.reason
    }

    /// The flags named in the image; names it does not know are dropped.
    pub fn flags(&self) -> PowerFlags {
        let mut flags = PowerFlags::NONE;
        for name in &self.flags {
            if let Some((f, _)) = FLAGS.iter().find(|(_, n)| n == name) {
                flags.set(*f);
            }
        }
        flags
    }

    /// The engine's power record of the node.
    pub fn saved(&self) -> SavedPower {
        SavedPower {
            flags: self.flags(),
            last_busy: self.last_busy,
            boot_requested: self.boot_requested,
            suspend_requested: self.suspend_requested,
            why: self.why.clone(),
            down_request: self.down_request.clone(),
        }
    }

    /// The node's health, `None` for a name the image does not know.
    pub fn health(&self) -> Option<Health> {
        HEALTH
            .iter()
            .find(|(_, n)| *n == self.health)
            .map(|(h, _)| *h)
    }
}

fn health_name(h: Health) -> &'static str {
    HEALTH
        .iter()
        .find(|(x, _)| *x == h)
        .map_or("UP", |(_, n)| n)
}

/// A power program call journaled before the program runs, until its end is journaled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PowerCallImage {
    /// `suspend`, `resume` or `resume_fail`.
    pub program: String,
    /// The program's path.
    pub path: Option<String>,
    /// Its arguments after `argv[0]` (the hostlist).
    pub args: Vec<String>,
    /// When the power pass decided it.
    pub time: i64,
}

/// Where a registered node is reached (`NodeAddr=`, `NodeHostname=`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeAddress {
    /// `NodeAddr`.
    pub addr: Option<String>,
    /// `NodeHostname`.
    pub hostname: Option<String>,
    /// When it last registered.
    pub time: i64,
}
