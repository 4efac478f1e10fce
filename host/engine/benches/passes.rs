//! One main-loop pass and one backfill pass over 100k pending jobs on 10k nodes, with the native
//! builds of the default bundle's multifactor and cons_tres policies.
//!
//! `cargo bench -p sluice-engine --bench passes [-- JOBS NODES BF_MAX_JOB_TEST]`. Prints JSON.

use sluice_engine::Policies;
use sluice_engine::bench::{BenchConfig, run};
use sluice_plugin_priority_multifactor::Multifactor;
use sluice_plugin_select_cons_tres::ConsTres;
use sluice_policy::{FromSettings, SettingValue, Settings};

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let mut config = BenchConfig::default();
    if let Some(jobs) = args.first() {
        config.jobs = *jobs as usize;
    }
    if let Some(nodes) = args.get(1) {
        config.nodes = *nodes as usize;
    }
    if let Some(test) = args.get(2) {
        config.bf_max_job_test = *test as u32;
    }
    let settings = Settings::default()
        .with("weight.age", SettingValue::Integer(10_000))
        .with("weight.fairshare", SettingValue::Integer(100_000))
        .with("weight.jobsize", SettingValue::Integer(1_000))
        .with("weight.qos", SettingValue::Integer(10_000));
    let policies = Policies {
        priority: Box::new(Multifactor::from_settings(&settings)),
        selection: Box::new(ConsTres::default()),
        hres: None,
        gres: Vec::new(),
    };
    let report = run(policies, config);
    println!(
        "{}",
        serde_json::to_string_pretty(&report).expect("report serializes")
    );
}
