//! The demo's generated workload: a deterministic mix of CPU, GPU, short test and licensed
//! (HRES) jobs from the demo cluster's users, arriving over a working day.

use sluice_engine::JobSpec;
use sluice_engine::request::{parse_gres, parse_licenses};
use sluice_policy::fixtures::Rng;

/// One generated job: when it is submitted, what it asks, and how long it really runs.
pub struct DemoJob {
    /// Submit time.
    pub submit: i64,
    /// What the user asks for.
    pub spec: JobSpec,
    /// Seconds it runs once started (may exceed the limit: then it times out).
    pub run_seconds: i64,
}

const USERS: &[(&str, &str)] = &[
    ("alice", "physics"),
    ("bob", "physics"),
    ("frank", "astro"),
    ("carol", "chemistry"),
    ("dave", "chemistry"),
    ("erin", "biology"),
];

/// `n` jobs from `start` on, the same for the same seed.
pub fn generate(n: usize, seed: u64, start: i64) -> Vec<DemoJob> {
    let mut rng = Rng::new(seed);
    let mut submit = start;
    (0..n)
        .map(|i| {
            submit += rng.below(240) as i64;
            let (user, account) = USERS[rng.below(USERS.len() as u64) as usize];
            let mut spec = JobSpec::new(user);
            spec.account = Some(account.to_string());
            let limit_minutes = 10 + rng.below(170);
            let kind = rng.below(10);
            let nodes = 1 + rng.below(4) as u32;
            match kind {
                0..=4 => {
                    spec.name = format!("sim{i}");
                    spec.partitions = vec!["compute".into()];
                    spec.min_nodes = nodes;
                    spec.tasks = nodes * 32;
                }
                5 | 6 => {
                    spec.name = format!("train{i}");
                    spec.partitions = vec!["gpu".into()];
                    spec.min_nodes = 1 + rng.below(2) as u32;
                    spec.tasks = spec.min_nodes * 8;
                    spec.gres =
                        parse_gres(&format!("gpu:{}", 1 + rng.below(4))).expect("valid gres");
                }
                7 => {
                    spec.name = format!("test{i}");
                    spec.partitions = vec!["test".into()];
                    spec.tasks = 4;
                }
                _ => {
                    spec.name = format!("lic{i}");
                    spec.partitions = vec!["compute".into()];
                    spec.min_nodes = nodes;
                    spec.tasks = nodes * 16;
                    let license = ["natural:20", "flat:4", "matlab:2"][rng.below(3) as usize];
                    spec.licenses = parse_licenses(license).expect("valid licenses");
                }
            }
            spec.time_limit = Some(if spec.partitions[0] == "test" {
                600
            } else {
                limit_minutes * 60
            });
            spec.memory_per_node_mb = 1024 * (1 + rng.below(32));
            let limit = spec.time_limit.unwrap() as i64;
            // Most jobs end before their limit, as real ones do; one in twenty runs into it.
            let run_seconds = if rng.below(20) == 0 {
                limit + 60
            } else {
                limit * (30 + rng.below(70) as i64) / 100
            };
            DemoJob {
                submit,
                spec,
                run_seconds,
            }
        })
        .collect()
}
