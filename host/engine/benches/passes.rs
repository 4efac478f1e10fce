//! One main-loop pass and one backfill pass over 100k pending jobs on 10k nodes, native policies.
//!
//! `cargo bench -p sluice-engine --bench passes [-- JOBS NODES BF_MAX_JOB_TEST]`. Prints JSON.

#[path = "../tests/common/mod.rs"]
mod common;

use sluice_engine::Policies;
use sluice_engine::bench::{BenchConfig, run};
use sluice_plugin_priority_basic::Basic;

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
    // First-fit selection stands in until the cons_tres plugin lands as a native crate.
    let policies = Policies {
        priority: Box::new(Basic),
        selection: Box::new(common::FirstFit::default()),
        hres: None,
    };
    let report = run(policies, config);
    println!(
        "{}",
        serde_json::to_string_pretty(&report).expect("report serializes")
    );
}
