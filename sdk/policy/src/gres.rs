//! GRES device logic: validate node config, pick devices in a node, write environment.

use serde::{Deserialize, Serialize};

use crate::contract::ContractError;

/// One configured device of a GRES name on a node.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Device {
    /// Index among the node's devices of this name.
    pub index: u32,
    /// Type, e.g. "a100"; empty when untyped.
    pub type_name: String,
    /// Device file; empty for count-only GRES.
    pub file: String,
    /// Cores the device is close to; empty means any.
    pub cores: Vec<u32>,
    /// Link counts to the node's other devices.
    pub links: Vec<i32>,
}

/// One node's configuration of a GRES name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GresNodeConfig {
    /// Node name.
    pub node: String,
    /// Configured count.
    pub count: u64,
    /// The node's cores, which `Cores=` indices must stay below.
    pub cores: u32,
    /// Devices; empty when count-only.
    pub devices: Vec<Device>,
}

/// A request for devices on one node of a job's allocation.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PickRequest {
    /// Position of the node in the job's allocation.
    pub node_position: u32,
    /// Devices wanted.
    pub count: u32,
    /// Type wanted; empty for any.
    pub type_name: String,
    /// Free device indices.
    pub free: Vec<u32>,
    /// Cores allocated to the job on the node.
    pub cores: Vec<u32>,
    /// The node's configured devices.
    pub devices: Vec<Device>,
}

/// A job's devices on one node.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeDevices {
    /// Position of the node in the job's allocation.
    pub node_position: u32,
    /// Allocated device indices.
    pub devices: Vec<u32>,
    /// The node's configured devices.
    pub configured: Vec<Device>,
}

/// Checks a pick answer: one list per request, each exactly `count` distinct free devices.
pub fn check_picks(requests: &[PickRequest], picks: &[Vec<u32>]) -> Result<(), ContractError> {
    ContractError::check_length("device picks", requests.len(), picks.len())?;
    for (req, pick) in requests.iter().zip(picks) {
        ContractError::check_length("devices picked", req.count as usize, pick.len())?;
        for (i, d) in pick.iter().enumerate() {
            if !req.free.contains(d) || pick[..i].contains(d) {
                return Err(ContractError::Invalid(format!(
                    "device {d} on allocation node {} is not free or picked twice",
                    req.node_position
                )));
            }
        }
    }
    Ok(())
}

/// Device logic for one GRES name.
pub trait GresPolicy {
    /// Validates every node's configuration; one result per node.
    fn validate(&mut self, nodes: &[GresNodeConfig]) -> Vec<Result<(), String>>;

    /// Picks devices for each request.
    fn pick(&mut self, requests: &[PickRequest]) -> Vec<Vec<u32>>;

    /// Environment for a job (or step) on one node.
    fn env(&mut self, alloc: &NodeDevices, step: bool) -> Vec<(String, String)>;
}

impl<T: GresPolicy + ?Sized> GresPolicy for Box<T> {
    fn validate(&mut self, nodes: &[GresNodeConfig]) -> Vec<Result<(), String>> {
        (**self).validate(nodes)
    }
    fn pick(&mut self, requests: &[PickRequest]) -> Vec<Vec<u32>> {
        (**self).pick(requests)
    }
    fn env(&mut self, alloc: &NodeDevices, step: bool) -> Vec<(String, String)> {
        (**self).env(alloc, step)
    }
}
