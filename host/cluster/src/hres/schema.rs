//! The resources.yaml schema of Slurm's v0.0.44 data parser (`H_RESOURCE`, `H_LAYER`, `H_VARIABLE`).

use serde::Deserialize;

/// One `- resource:` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceYaml {
    /// Resource name.
    pub resource: String,
    /// `MODE_1`, `MODE_2` or `MODE_3`.
    pub mode: String,
    /// Block topology name (MODE_3).
    #[serde(default)]
    pub topology: Option<String>,
    /// Variables usable as request counts.
    #[serde(default)]
    pub variables: Vec<NamedValueYaml>,
    /// Layers.
    #[serde(default)]
    pub layers: Vec<LayerYaml>,
}

/// One layer.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayerYaml {
    /// Hostlist expressions.
    #[serde(default)]
    pub nodes: Vec<String>,
    /// Count; -1 means infinite.
    pub count: i64,
    /// Static consumption.
    #[serde(default)]
    pub base: Vec<NamedValueYaml>,
}

/// A `{name, value}` pair.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamedValueYaml {
    /// Name.
    pub name: String,
    /// Value.
    pub value: u64,
}
