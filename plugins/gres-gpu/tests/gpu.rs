//! gres/gpu: configuration reasons, exact picks and exact environment strings.

use sluice_plugin_gres_gpu::Gpu;
use sluice_sdk::testing::{self, conformance, fixtures};
use sluice_sdk::*;

fn gpu(settings: Settings) -> Gpu {
    Gpu::from_settings(&settings)
}

fn env_of(policy: &mut Gpu, devices: Vec<u32>, step: bool) -> Vec<(String, String)> {
    let alloc = NodeDevices {
        node_position: 0,
        devices,
        configured: fixtures::gpu_nodes(1).remove(0).devices,
    };
    policy.env(&alloc, step)
}

fn vars(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn the_fixture_configuration_is_valid() {
    let nodes = fixtures::gpu_nodes(4);
    let out = gpu(Settings::default()).validate(&nodes);
    assert_eq!(out, vec![Ok(()); 4]);
}

/// A change that makes a configuration invalid.
type Breaks = Box<dyn Fn(&mut GresNodeConfig)>;

#[test]
fn each_broken_rule_is_reported() {
    let good = fixtures::gpu_nodes(1).remove(0);
    let broken: Vec<(&str, Breaks)> = vec![
        ("Count=5 but 4 device files", Box::new(|c| c.count = 5)),
        (
            "File /dev/nvidia0 is given twice",
            Box::new(|c| c.devices[1].file = "/dev/nvidia0".into()),
        ),
        (
            "device 2 has no File",
            Box::new(|c| c.devices[2].file.clear()),
        ),
        (
            "1 of 4 devices have a Type",
            Box::new(|c| {
                c.devices
                    .iter_mut()
                    .skip(1)
                    .for_each(|d| d.type_name.clear())
            }),
        ),
        (
            "device 3 has core 64",
            Box::new(|c| c.devices[3].cores.push(64)),
        ),
        (
            "device 0 has 2 Links for 4 devices",
            Box::new(|c| c.devices[0].links = vec![-1, 2]),
        ),
        (
            "device 1 Links must be -1",
            Box::new(|c| c.devices[1].links = vec![2, 2, 2, 2]),
        ),
        ("device 1 has index 3", Box::new(|c| c.devices[1].index = 3)),
    ];
    let mut policy = gpu(Settings::default());
    for (reason, breaks) in broken {
        let mut config = good.clone();
        breaks(&mut config);
        let out = policy.validate(&[config]).remove(0);
        let err = out.expect_err(reason);
        assert!(
            err.starts_with("node01: ") && err.contains(reason),
            "{err:?} should say {reason:?}"
        );
    }
    let count_only = GresNodeConfig {
        node: "n".into(),
        count: 2,
        cores: 8,
        devices: vec![],
    };
    assert_eq!(policy.validate(&[count_only]), vec![Ok(())]);
}

#[test]
fn close_devices_first_then_lowest_index() {
    let requests = vec![
        fixtures::gpu_pick(0, 1, vec![0, 1, 2, 3], (32..40).collect()),
        fixtures::gpu_pick(1, 2, vec![3, 1], (0..8).collect()),
        fixtures::gpu_pick(2, 3, vec![3, 2, 1], (0..8).collect()),
        fixtures::gpu_pick(3, 2, vec![0, 1, 2, 3], vec![]),
    ];
    let picks = gpu(Settings::default()).pick(&requests);
    assert_eq!(picks, vec![vec![2], vec![1, 3], vec![1, 2, 3], vec![0, 1]]);
}

#[test]
fn the_requested_type_is_honoured() {
    let mut req = fixtures::gpu_pick(0, 1, vec![0, 1, 2, 3], (0..8).collect());
    req.devices[2].type_name = "h100".into();
    req.devices[3].type_name = "h100".into();
    req.type_name = "h100".into();
    assert_eq!(
        gpu(Settings::default()).pick(std::slice::from_ref(&req)),
        vec![vec![2]]
    );
    req.count = 3;
    assert_eq!(
        gpu(Settings::default()).pick(&[req]),
        vec![vec![2, 3]],
        "never another type"
    );
}

#[test]
fn global_indices_without_constrained_devices() {
    let mut policy = gpu(Settings::default());
    let expected = [
        ("CUDA_VISIBLE_DEVICES", "1,3"),
        ("GPU_DEVICE_ORDINAL", "1,3"),
        ("SLURM_JOB_GPUS", "1,3"),
        ("SLURM_GPUS_ON_NODE", "2"),
    ];
    assert_eq!(env_of(&mut policy, vec![3, 1], false), vars(&expected));
}

#[test]
fn local_indices_with_constrained_devices() {
    let mut policy =
        gpu(Settings::default().with("constrain_devices", SettingValue::Boolean(true)));
    // The doc's example: /dev/nvidia1 is 0 inside the job, 1 in SLURM_*_GPUS.
    let job = [
        ("CUDA_VISIBLE_DEVICES", "0"),
        ("GPU_DEVICE_ORDINAL", "0"),
        ("SLURM_JOB_GPUS", "1"),
        ("SLURM_GPUS_ON_NODE", "1"),
    ];
    assert_eq!(env_of(&mut policy, vec![1], false), vars(&job));
    let step = [
        ("CUDA_VISIBLE_DEVICES", "0,1"),
        ("GPU_DEVICE_ORDINAL", "0,1"),
        ("SLURM_STEP_GPUS", "2,3"),
        ("SLURM_GPUS_ON_NODE", "2"),
    ];
    assert_eq!(env_of(&mut policy, vec![2, 3], true), vars(&step));
}

#[test]
fn nothing_allocated_sets_nothing() {
    assert!(env_of(&mut gpu(Settings::default()), vec![], false).is_empty());
}

#[test]
fn conformance() {
    testing::assert_conformant(&conformance::gres(&mut Gpu::default()));
}
