//! A count-only GRES (nic, license-like counts): the GRES interface is not GPU-shaped.
//!
//! Units are interchangeable, so picking takes the lowest free indices of the requested type
//! and there is no core affinity. Settings: `env_prefix` (default "SLURM") and `env_name`
//! (default "NICS") name the variables `<prefix>_JOB_<name>` / `<prefix>_STEP_<name>` (the unit
//! indices) and `<prefix>_<name>_ON_NODE` (their count).

use sluice_sdk::*;

/// The count-only GRES policy.
#[derive(Debug)]
pub struct CountOnly {
    /// First part of every variable name.
    pub env_prefix: String,
    /// The resource's part of every variable name.
    pub env_name: String,
}

impl Default for CountOnly {
    fn default() -> Self {
        CountOnly {
            env_prefix: "SLURM".into(),
            env_name: "NICS".into(),
        }
    }
}

impl FromSettings for CountOnly {
    fn from_settings(settings: &Settings) -> Self {
        let d = CountOnly::default();
        CountOnly {
            env_prefix: settings
                .text("env_prefix")
                .map_or(d.env_prefix, str::to_string),
            env_name: settings.text("env_name").map_or(d.env_name, str::to_string),
        }
    }
}

impl GresPolicy for CountOnly {
    fn validate(&mut self, nodes: &[GresNodeConfig]) -> Vec<Result<(), String>> {
        nodes.iter().map(validate_node).collect()
    }

    fn pick(&mut self, requests: &[PickRequest]) -> Vec<Vec<u32>> {
        requests.iter().map(pick_units).collect()
    }

    fn env(&mut self, alloc: &NodeDevices, step: bool) -> Vec<(String, String)> {
        let mut units = alloc.devices.clone();
        units.sort_unstable();
        units.dedup();
        if units.is_empty() {
            return Vec::new();
        }
        let (prefix, name) = (&self.env_prefix, &self.env_name);
        let scope = if step { "STEP" } else { "JOB" };
        let list = units
            .iter()
            .map(|u| u.to_string())
            .collect::<Vec<_>>()
            .join(",");
        vec![
            (format!("{prefix}_{scope}_{name}"), list),
            (format!("{prefix}_{name}_ON_NODE"), units.len().to_string()),
        ]
    }
}

/// A count fits the unit indices; listed units must match it, in index order, files unique.
fn validate_node(config: &GresNodeConfig) -> Result<(), String> {
    let node = &config.node;
    if config.count > u32::MAX as u64 {
        return Err(format!(
            "{node}: Count={} is more units than can be indexed",
            config.count
        ));
    }
    let units = &config.devices;
    if units.is_empty() {
        return Ok(());
    }
    if config.count != units.len() as u64 {
        return Err(format!(
            "{node}: Count={} but {} units listed",
            config.count,
            units.len()
        ));
    }
    for (position, unit) in units.iter().enumerate() {
        if unit.index as usize != position {
            return Err(format!("{node}: unit {position} has index {}", unit.index));
        }
        if !unit.file.is_empty() && units[..position].iter().any(|u| u.file == unit.file) {
            return Err(format!("{node}: File {} is given twice", unit.file));
        }
    }
    Ok(())
}

/// The lowest free units of the requested type; a typed request on untyped units gets none.
fn pick_units(req: &PickRequest) -> Vec<u32> {
    let mut free = req.free.clone();
    free.sort_unstable();
    free.dedup();
    let type_ok = |i: u32| {
        req.type_name.is_empty()
            || req
                .devices
                .iter()
                .any(|d| d.index == i && d.type_name == req.type_name)
    };
    free.into_iter()
        .filter(|&i| type_ok(i))
        .take(req.count as usize)
        .collect()
}

#[cfg(feature = "export")]
export_gres!(CountOnly);
