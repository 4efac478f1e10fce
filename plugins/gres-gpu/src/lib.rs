//! gres/gpu: GPU configuration checks, device picking and CUDA environment, as Slurm's gres/gpu.
//!
//! Settings: `constrain_devices` (bool, default false) says cgroup ConstrainDevices=yes is in
//! force, so CUDA_VISIBLE_DEVICES and GPU_DEVICE_ORDINAL use local indices. `Cores=` indices are
//! checked against the node's cores, which the host sends with its configuration.

pub mod env;
pub mod pick;
pub mod validate;

use sluice_sdk::*;

/// The gres/gpu policy.
#[derive(Debug, Default)]
pub struct Gpu {
    /// Vendor variables use local indices (cgroup ConstrainDevices=yes).
    pub constrain_devices: bool,
}

impl FromSettings for Gpu {
    fn from_settings(settings: &Settings) -> Self {
        Gpu {
            constrain_devices: settings.bool_or("constrain_devices", false),
        }
    }
}

impl GresPolicy for Gpu {
    fn validate(&mut self, nodes: &[GresNodeConfig]) -> Vec<Result<(), String>> {
        nodes.iter().map(validate::node).collect()
    }

    fn pick(&mut self, requests: &[PickRequest]) -> Vec<Vec<u32>> {
        requests.iter().map(pick::devices).collect()
    }

    fn env(&mut self, alloc: &NodeDevices, step: bool) -> Vec<(String, String)> {
        env::variables(alloc, step, self.constrain_devices)
    }
}

#[cfg(feature = "export")]
export_gres!(Gpu);
