//! Checks one node's GPU configuration, the role of gres/gpu's `node_config_load`.

use sluice_sdk::{Device, GresNodeConfig};

/// Slurm's limit on the count of a GRES configured with files, per node.
const MAX_DEVICES: usize = 1024;

/// `Ok` or every reason the node's configuration is invalid, joined by "; ".
/// `Cores=` indices must be below the node's cores (unchecked when the host sends 0).
pub fn node(config: &GresNodeConfig) -> Result<(), String> {
    let max_core = (config.cores > 0).then_some(config.cores);
    let devices = &config.devices;
    if devices.is_empty() {
        // A GPU count without File= lines is valid: Slurm then tracks a count only.
        return Ok(());
    }
    let mut reasons = Vec::new();
    if config.count != devices.len() as u64 {
        reasons.push(format!(
            "Count={} but {} device files",
            config.count,
            devices.len()
        ));
    }
    if devices.len() > MAX_DEVICES {
        reasons.push(format!(
            "{} devices, more than {MAX_DEVICES} per node",
            devices.len()
        ));
    }
    let typed = devices.iter().filter(|d| !d.type_name.is_empty()).count();
    if typed != 0 && typed != devices.len() {
        reasons.push(format!(
            "{typed} of {} devices have a Type, the others none",
            devices.len()
        ));
    }
    for (position, d) in devices.iter().enumerate() {
        device(d, position, devices, max_core, &mut reasons);
    }
    if reasons.is_empty() {
        Ok(())
    } else {
        Err(format!("{}: {}", config.node, reasons.join("; ")))
    }
}

fn device(
    d: &Device,
    position: usize,
    all: &[Device],
    max_core: Option<u32>,
    reasons: &mut Vec<String>,
) {
    if d.index as usize != position {
        reasons.push(format!("device {position} has index {}", d.index));
    }
    if d.file.is_empty() {
        reasons.push(format!("device {position} has no File"));
    } else if all[..position].iter().any(|o| o.file == d.file) {
        reasons.push(format!("File {} is given twice", d.file));
    }
    if let Some(max) = max_core
        && let Some(c) = d.cores.iter().find(|&&c| c >= max)
    {
        reasons.push(format!(
            "device {position} has core {c}, the node has cores 0-{}",
            max.saturating_sub(1)
        ));
    }
    if (1..d.cores.len()).any(|i| d.cores[..i].contains(&d.cores[i])) {
        reasons.push(format!("device {position} lists a core twice"));
    }
    if !d.links.is_empty() {
        if d.links.len() != all.len() {
            reasons.push(format!(
                "device {position} has {} Links for {} devices",
                d.links.len(),
                all.len()
            ));
        } else if d.links[position] != -1
            || d.links
                .iter()
                .enumerate()
                .any(|(i, &l)| i != position && l < 0)
        {
            reasons.push(format!(
                "device {position} Links must be -1 for itself and >= 0 for others"
            ));
        }
    }
}
