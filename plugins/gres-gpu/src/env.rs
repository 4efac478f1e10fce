//! The environment of a job or step on one node, as gres/gpu's job_set_env and step_set_env.

use sluice_sdk::NodeDevices;

/// Variables for the allocated devices; none when nothing is allocated (Slurm unsets them).
///
/// SLURM_JOB_GPUS / SLURM_STEP_GPUS always carry global indices (gres.conf order); the vendor
/// variables CUDA_VISIBLE_DEVICES and GPU_DEVICE_ORDINAL carry local indices 0..n-1 when
/// devices are constrained by cgroup (what the job then sees), else the global ones.
pub fn variables(
    alloc: &NodeDevices,
    step: bool,
    constrain_devices: bool,
) -> Vec<(String, String)> {
    let mut global = alloc.devices.clone();
    global.sort_unstable();
    global.dedup();
    if global.is_empty() {
        return Vec::new();
    }
    let global_list = join(global.iter().copied());
    let vendor = if constrain_devices {
        join(0..global.len() as u32)
    } else {
        global_list.clone()
    };
    let slurm = if step {
        "SLURM_STEP_GPUS"
    } else {
        "SLURM_JOB_GPUS"
    };
    vec![
        ("CUDA_VISIBLE_DEVICES".into(), vendor.clone()),
        ("GPU_DEVICE_ORDINAL".into(), vendor),
        (slurm.into(), global_list),
        ("SLURM_GPUS_ON_NODE".into(), global.len().to_string()),
    ]
}

fn join(indices: impl Iterator<Item = u32>) -> String {
    indices.map(|i| i.to_string()).collect::<Vec<_>>().join(",")
}
