//! Hierarchical resources: layers with counts; the mode logic decides eligibility and charges.

use serde::{Deserialize, Serialize};

use crate::contract::ContractError;

/// Planning mode of a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HresMode {
    /// MODE_1: enough on any one overlapping layer.
    Mode1,
    /// MODE_2: enough on every overlapping layer.
    Mode2,
    /// MODE_3: per-node counts charged up a tree.
    Mode3,
}

/// One layer of one resource, with current use.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HresLayer {
    /// Index into the resource list.
    pub resource: u32,
    /// Configured count; -1 is infinite.
    pub count: i64,
    /// Base consumption including children's.
    pub base: i64,
    /// Used and reserved now.
    pub used: i64,
    /// Nodes of the layer, bitmap words.
    pub nodes: Vec<u64>,
    /// Parent layer in a MODE_3 tree.
    pub parent: Option<u32>,
}

impl HresLayer {
    /// Whether the count is infinite.
    pub fn is_infinite(&self) -> bool {
        self.count < 0
    }

    /// What is left to allocate: count - base - used (infinite stays infinite as `i64::MAX`).
    pub fn available(&self) -> i64 {
        if self.is_infinite() {
            i64::MAX
        } else {
            self.count - self.base - self.used
        }
    }
}

/// One resource.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HresResource {
    /// Name, as used in `-L name:count`.
    pub name: String,
    /// Mode.
    pub mode: HresMode,
    /// Named counts usable in requests.
    pub variables: Vec<(String, i64)>,
}

/// A job's demand for one resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Demand {
    /// Resource index.
    pub resource: u32,
    /// Count (total for modes 1 and 2, per node for MODE_3).
    pub count: i64,
}

/// An amount charged to a layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Charge {
    /// Layer index.
    pub layer: u32,
    /// Amount.
    pub amount: i64,
}

/// Checks charges: known layers, non-negative amounts, and no finite layer over its count.
pub fn check_charges(layers: &[HresLayer], charges: &[Charge]) -> Result<(), ContractError> {
    let mut added = vec![0i64; layers.len()];
    for c in charges {
        let Some(slot) = added.get_mut(c.layer as usize) else {
            return Err(ContractError::Invalid(format!(
                "charge on unknown layer {}",
                c.layer
            )));
        };
        if c.amount < 0 {
            return Err(ContractError::Invalid(format!(
                "negative charge {} on layer {}",
                c.amount, c.layer
            )));
        }
        *slot += c.amount;
    }
    for (i, (layer, add)) in layers.iter().zip(&added).enumerate() {
        if *add > 0 && !layer.is_infinite() && *add > layer.available() {
            return Err(ContractError::Overcommit {
                what: "hres layer",
                node: i as u32,
                asked: *add as u64,
                free: layer.available().max(0) as u64,
            });
        }
    }
    Ok(())
}

/// Mode logic for hierarchical resources.
pub trait HresPolicy {
    /// Takes every resource and layer with current use.
    fn begin_pass(&mut self, resources: &[HresResource], layers: &[HresLayer]);

    /// Narrows candidates (bitmap words) to nodes the demands allow.
    fn eligible(&mut self, demands: &[Demand], candidates: &[u64]) -> Vec<u64>;

    /// Charges for an allocation on `nodes`, or the reason it does not fit.
    fn charge(&mut self, demands: &[Demand], nodes: &[u32]) -> Result<Vec<Charge>, String>;
}

impl<T: HresPolicy + ?Sized> HresPolicy for Box<T> {
    fn begin_pass(&mut self, resources: &[HresResource], layers: &[HresLayer]) {
        (**self).begin_pass(resources, layers)
    }
    fn eligible(&mut self, demands: &[Demand], candidates: &[u64]) -> Vec<u64> {
        (**self).eligible(demands, candidates)
    }
    fn charge(&mut self, demands: &[Demand], nodes: &[u32]) -> Result<Vec<Charge>, String> {
        (**self).charge(demands, nodes)
    }
}
