//! Count-only GRES: configuration reasons, exact picks and exact environment strings.

use sluice_plugin_gres_count::CountOnly;
use sluice_sdk::testing::{self, conformance};
use sluice_sdk::*;

fn units(n: u32) -> Vec<Device> {
    (0..n)
        .map(|index| Device {
            index,
            ..Default::default()
        })
        .collect()
}

fn request(count: u32, free: Vec<u32>) -> PickRequest {
    PickRequest {
        node_position: 0,
        count,
        type_name: String::new(),
        free,
        cores: vec![],
        devices: units(4),
    }
}

#[test]
fn counts_must_agree_with_units() {
    let config = |count, devices| GresNodeConfig {
        node: "n1".into(),
        count,
        cores: 16,
        devices,
    };
    let mut policy = CountOnly::default();
    let mut shuffled = units(2);
    shuffled[0].index = 1;
    let mut twice = units(2);
    twice.iter_mut().for_each(|u| u.file = "/dev/hfi1_0".into());
    let out = policy.validate(&[
        config(8, vec![]),
        config(4, units(4)),
        config(3, units(4)),
        config(2, shuffled),
        config(2, twice),
        config(1 << 40, vec![]),
    ]);
    assert_eq!(out[..2], [Ok(()), Ok(())]);
    assert_eq!(out[2], Err("n1: Count=3 but 4 units listed".into()));
    assert_eq!(out[3], Err("n1: unit 0 has index 1".into()));
    assert_eq!(out[4], Err("n1: File /dev/hfi1_0 is given twice".into()));
    assert!(
        out[5]
            .as_ref()
            .is_err_and(|e| e.contains("more units than can be indexed"))
    );
}

#[test]
fn picks_the_lowest_free_units_of_the_type() {
    let mut policy = CountOnly::default();
    assert_eq!(
        policy.pick(&[request(2, vec![3, 1, 2]), request(0, vec![0])]),
        vec![vec![1, 2], vec![]]
    );
    let mut typed = request(1, vec![0, 1, 2, 3]);
    typed.devices[3].type_name = "ib".into();
    typed.type_name = "ib".into();
    assert_eq!(policy.pick(&[typed]), vec![vec![3]]);
}

#[test]
fn environment_uses_the_configured_names() {
    let alloc = NodeDevices {
        node_position: 0,
        devices: vec![2, 0],
        configured: units(4),
    };
    let pairs = |v: &[(&str, &str)]| {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect::<Vec<_>>()
    };
    let mut policy = CountOnly::default();
    assert_eq!(
        policy.env(&alloc, false),
        pairs(&[("SLURM_JOB_NICS", "0,2"), ("SLURM_NICS_ON_NODE", "2")])
    );
    let settings = Settings::default()
        .with("env_prefix", SettingValue::Text("SITE".into()))
        .with("env_name", SettingValue::Text("LICS".into()));
    let mut site = CountOnly::from_settings(&settings);
    assert_eq!(
        site.env(&alloc, true),
        pairs(&[("SITE_STEP_LICS", "0,2"), ("SITE_LICS_ON_NODE", "2")])
    );
    let none = NodeDevices {
        devices: vec![],
        ..alloc
    };
    assert!(site.env(&none, true).is_empty());
}

#[test]
fn conformance() {
    testing::assert_conformant(&conformance::gres(&mut CountOnly::default()));
}
