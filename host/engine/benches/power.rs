//! The power pass on 100,000 idle nodes when nothing is due (goal: under a millisecond).
//!
//! `cargo bench -p sluice-engine --bench power [-- NODES ROUNDS]`. Prints JSON.

use sluice_engine::Policies;
use sluice_engine::power::bench::run;
use sluice_plugin_priority_basic::Basic;
use sluice_plugin_select_cons_tres::ConsTres;
use sluice_policy::{FromSettings, Settings};

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let nodes = args.first().copied().unwrap_or(100_000);
    let rounds = args.get(1).copied().unwrap_or(50);
    let policies = Policies {
        priority: Box::new(Basic::from_settings(&Settings::default())),
        selection: Box::new(ConsTres::default()),
        hres: None,
        gres: Vec::new(),
    };
    let report = run(policies, nodes, rounds);
    println!(
        "{}",
        serde_json::to_string_pretty(&report).expect("report serializes")
    );
}
