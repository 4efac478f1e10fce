//! Plugins: the generations of every kind, swaps, rollbacks and shadows with their reports.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A plugin file to swap in or shadow (`POST /v1/plugins/{kind}/swap|shadow`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PluginFile {
    /// Path of a `.wasm` component or native library, or a bundled name.
    pub file: String,
    /// Settings to set on top of the configured ones (as text values).
    pub settings: BTreeMap<String, String>,
}

/// A generation's place in its kind's slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The published generation.
    Active,
    /// The one before it (what a rollback returns to).
    Previous,
    /// The built-in default.
    Fallback,
}

impl Role {
    /// Its name as `plugin list` prints it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Previous => "previous",
            Self::Fallback => "fallback",
        }
    }
}

/// One generation of one kind (`GET /v1/plugins`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GenerationRow {
    /// Kind name (`priority`, `selection`, `gres`, `hres`).
    pub kind: String,
    /// Its role.
    pub role: Role,
    /// Generation id.
    pub generation: u64,
    /// Where it came from.
    pub origin: String,
    /// Calls answered.
    pub answered: u64,
    /// Calls that faulted.
    pub faults: u64,
    /// Given up on until swapped or rolled back in.
    pub quarantined: bool,
    /// The most recent fault.
    pub last_fault: Option<String>,
}

/// A plugin being loaded or shadowed: its kind and file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginOrigin {
    /// Kind name.
    pub kind: String,
    /// File or bundled name.
    pub origin: String,
}

/// `GET /v1/plugins`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plugins {
    /// Every generation of every kind.
    pub generations: Vec<GenerationRow>,
    /// The swap being loaded, if any.
    pub staging: Option<PluginOrigin>,
    /// Swaps waiting behind it.
    pub queued: usize,
    /// The first running shadow.
    pub shadow: Option<PluginOrigin>,
    /// Every running shadow.
    pub shadows: Vec<PluginOrigin>,
}

/// The answer to a swap, once published.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Swapped {
    /// Kind name.
    pub kind: String,
    /// The new active generation.
    pub generation: u64,
    /// Its file.
    pub origin: String,
}

/// The answer to a rollback.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RolledBack {
    /// Kind name.
    pub kind: String,
    /// The generation active again.
    pub generation: u64,
}

/// The answer to starting a shadow, once it runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShadowStarted {
    /// Kind name.
    pub shadow: String,
    /// The candidate's file.
    pub origin: String,
}

/// `GET /v1/shadow` and `DELETE /v1/shadow`: the report of each running shadow.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShadowReports {
    /// The priority shadow's, if one runs.
    pub priority: Option<PriorityShadowReport>,
    /// The selection shadow's, if one runs.
    pub selection: Option<SelectionShadowReport>,
}

/// How often and where a priority candidate would have ranked jobs differently.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PriorityShadowReport {
    /// Kind.
    pub kind: String,
    /// Candidate.
    pub origin: String,
    /// Passes evaluated.
    pub passes: u64,
    /// Passes where at least one job's rank differed.
    pub passes_differing: u64,
    /// Job rows compared, summed over passes.
    pub rows_compared: u64,
    /// Rows whose rank differed, summed over passes.
    pub rows_differing: u64,
    /// Calls where the candidate faulted (it never acts, so nothing else happens).
    pub faults: u64,
    /// Last fault.
    pub last_fault: Option<String>,
    /// The largest rank moves seen: (job, partition, active rank, candidate rank), largest first.
    pub largest_moves: Vec<(u64, String, usize, usize)>,
}

/// How often and where a selection candidate would have placed jobs differently.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelectionShadowReport {
    /// Kind.
    pub kind: String,
    /// Candidate.
    pub origin: String,
    /// Passes in which the active policy placed at least one job.
    pub passes: u64,
    /// Passes with at least one differing decision.
    pub passes_differing: u64,
    /// Placements of the active policy the candidate was asked about.
    pub placements_compared: u64,
    /// Of those, where the candidate chose other nodes.
    pub different_nodes: u64,
    /// Of those, where the candidate would not have placed the job at all.
    pub not_placed: u64,
    /// Placements not compared because a pass exceeded the per-pass sample.
    pub skipped: u64,
    /// Calls where the candidate faulted or broke the placement contract.
    pub faults: u64,
    /// Last fault.
    pub last_fault: Option<String>,
    /// The latest differences: job, the active policy's nodes, the candidate's (`None`: no placement).
    pub recent: Vec<(u64, String, Option<String>)>,
}
