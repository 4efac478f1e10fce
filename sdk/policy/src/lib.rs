//! The policy contract as plain Rust: data tables, answers and one trait per plugin kind.
//!
//! This crate is the Rust face of the WIT contract (`wit/`: a [`PriorityContext`]'s static
//! part crosses only when it changed, so does the [`NodeTable`]; the job table's columns are
//! concatenated by type, see [`job_columns`]; a pass's node changes are packed into its first
//! `place`, [`NodeTable::pack_changes`]). The engine schedules against these traits; the
//! runtime implements them with WebAssembly components, native libraries or built-in
//! policies; plugin authors implement them through `sluice-sdk`. It
//! depends on neither wasmtime nor wit-bindgen, so everything that only needs the contract
//! builds in seconds.

pub mod bitmap;
pub mod conformance;
pub mod contract;
pub mod fixtures;
pub mod gres;
pub mod hres;
pub mod job_columns;
pub mod native;
mod node_copy;
pub mod policies;
pub mod priority;
pub mod selection;
pub mod settings;
pub mod vertex_scoring;

pub use bitmap::NodeBitmap;
pub use contract::ContractError;
pub use gres::{Device, GresNodeConfig, GresPolicy, NodeDevices, PickRequest};
pub use hres::{Charge, Demand, HresLayer, HresMode, HresPolicy, HresResource};
pub use policies::Policies;
pub use priority::{
    Association, Factor, JobTable, Partition, Priorities, PriorityContext, PriorityPolicy, Qos,
    Share,
};
pub use selection::{JobRequest, NodeTable, PlaceMode, Placement, Power, SelectionPolicy};
pub use settings::{Setting, SettingValue, Settings};
pub use vertex_scoring::{MatchTraits, VertexProperty, VertexScores, VertexScoring, VertexTable};

/// The four kinds of plugin, one WIT world each.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum PluginKind {
    /// Job priority (`priority-policy` world).
    Priority,
    /// Node selection (`selection-policy` world).
    Selection,
    /// Device logic for one GRES name (`gres-policy` world).
    Gres,
    /// Hierarchical resource modes (`hres-policy` world).
    Hres,
}

impl PluginKind {
    /// Every kind, in a fixed order.
    pub const ALL: [PluginKind; 4] = [Self::Priority, Self::Selection, Self::Gres, Self::Hres];

    /// The kind's name as used in config and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Priority => "priority",
            Self::Selection => "selection",
            Self::Gres => "gres",
            Self::Hres => "hres",
        }
    }

    /// The WIT world a component of this kind must target.
    pub fn world(self) -> &'static str {
        match self {
            Self::Priority => "priority-policy",
            Self::Selection => "selection-policy",
            Self::Gres => "gres-policy",
            Self::Hres => "hres-policy",
        }
    }

    /// Parses a kind name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl std::fmt::Display for PluginKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The WIT package version `sluice-sdk` builds components against, and the only one the host
/// loads: a component built against another is refused with a message to rebuild it.
pub const WIT_VERSION: &str = "0.9.0";

/// The WIT package name, including version, that `sluice-sdk` components import and export.
pub const WIT_PACKAGE: &str = "sluice:policy@0.9.0";

/// How a plugin is built from its settings, once per plugin generation.
pub trait FromSettings: Sized {
    /// Builds the policy; called before its first answer.
    fn from_settings(settings: &Settings) -> Self;
}
