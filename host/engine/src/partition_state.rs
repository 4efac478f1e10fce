//! Owns no state: the values of a partition's state (`scontrol update PartitionName=… State=`).
//!
//! UP runs and takes jobs; DOWN takes jobs but starts none; DRAIN starts the jobs it has but
//! takes no new ones (the host refuses them); INACTIVE does neither. The engine keeps each
//! partition's (engine.rs); `partition_gate.rs` applies them to passes.

use serde::Serialize;

/// A partition's state, as scontrol spells it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum PartitionState {
    /// Takes and starts jobs.
    #[default]
    Up,
    /// Takes jobs, starts none.
    Down,
    /// Starts the jobs it has, takes no new ones.
    Drain,
    /// Neither takes nor starts jobs.
    Inactive,
}

impl PartitionState {
    /// Reads scontrol's `State=` value (any case).
    pub fn parse(text: &str) -> Option<Self> {
        match text.to_ascii_uppercase().as_str() {
            "UP" => Some(Self::Up),
            "DOWN" => Some(Self::Down),
            "DRAIN" => Some(Self::Drain),
            "INACTIVE" => Some(Self::Inactive),
            _ => None,
        }
    }

    /// scontrol's spelling.
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
