//! Licenses and hierarchical resources (HRES): resources made of layers of node sets with counts.

use serde::Serialize;

use super::NodeId;

/// A cluster-wide license (`Licenses=name:count`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct License {
    /// License name.
    pub name: String,
    /// How many exist.
    pub count: u32,
}

/// How an HRES resource's layers are charged (resources.yaml `mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum HresMode {
    /// Enough must be free on one overlapping layer; that layer alone is charged.
    #[serde(rename = "MODE_1")]
    Mode1,
    /// Enough must be free on every overlapping layer; all are charged.
    #[serde(rename = "MODE_2")]
    Mode2,
    /// Per-node amounts summed up a rooted uniform-depth tree of layers (Slurm 25.11+).
    #[serde(rename = "MODE_3")]
    Mode3,
}

impl HresMode {
    /// resources.yaml spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mode1 => "MODE_1",
            Self::Mode2 => "MODE_2",
            Self::Mode3 => "MODE_3",
        }
    }
}

/// A layer count: a number, or infinite (`count: -1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum HresCount {
    /// Never runs out.
    Infinite,
    /// This many (0 allowed: the layer never satisfies a request).
    Count(u32),
}

/// A `{name, value}` pair: a variable usable as a request count, or a static `base` consumption.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NamedValue {
    /// Name.
    pub name: String,
    /// Value.
    pub value: u64,
}

/// One layer of an HRES resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HresLayer {
    /// The hostlist expressions as written.
    pub node_exprs: Vec<String>,
    /// Nodes the layer covers, in cluster order, without duplicates.
    pub nodes: Vec<NodeId>,
    /// Configured count.
    pub count: HresCount,
    /// Static consumption on this layer itself.
    pub base: Vec<NamedValue>,
    /// Base of this layer plus, in MODE_3, the base usage of all its children.
    pub base_usage: u64,
    /// Smallest enclosing layer (MODE_3 only); `None` for the root and in other modes.
    pub parent: Option<usize>,
    /// Depth below the root (MODE_3 only; the root is 0).
    pub depth: u16,
}

impl HresLayer {
    /// What jobs may use: the count minus the base usage (`None` when infinite).
    pub fn available(&self) -> Option<u64> {
        match self.count {
            HresCount::Infinite => None,
            HresCount::Count(count) => Some(u64::from(count).saturating_sub(self.base_usage)),
        }
    }
}

/// One hierarchical resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HresResource {
    /// Resource name; requested like a license.
    pub name: String,
    /// Planning mode.
    pub mode: HresMode,
    /// Block topology name the layers follow (MODE_3 only), if given.
    pub topology: Option<String>,
    /// Variables usable as the count of a request.
    pub variables: Vec<NamedValue>,
    /// Layers in file order.
    pub layers: Vec<HresLayer>,
}

impl HresResource {
    /// The value of a variable, if defined.
    pub fn variable(&self, name: &str) -> Option<u64> {
        self.variables
            .iter()
            .find(|v| v.name == name)
            .map(|v| v.value)
    }
}
