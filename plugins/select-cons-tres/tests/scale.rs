//! A pass of 100k jobs over 10k nodes, the benchmark's shape; run with `--release --ignored`.

use sluice_plugin_select_cons_tres::ConsTres;
use sluice_sdk::testing::fixtures;
use sluice_sdk::*;

#[test]
#[ignore = "timing; run with --release -- --ignored"]
fn hundred_thousand_jobs_on_ten_thousand_nodes() {
    let table = fixtures::node_table(10_000);
    let jobs = fixtures::job_requests(10_000, 100_000, 5);
    let mut policy = ConsTres::default();
    let start = std::time::Instant::now();
    policy.begin_pass(&table);
    let placed = jobs
        .iter()
        .filter(|j| policy.place(j, PlaceMode::Allocate).is_some())
        .count();
    let elapsed = start.elapsed();
    eprintln!("placed {placed} of {} in {elapsed:?}", jobs.len());
    assert!(placed > 0);
}
