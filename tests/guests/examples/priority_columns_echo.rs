//! A priority plugin built with the SDK that answers every job-table column back, for tests only.
//!
//! Each column becomes a factor named as in the WIT `job-table` (`job-id`, `submit-time`, ...)
//! whose values are the column as the policy received it, converted to `f64`; every priority is
//! 1. Built as a component it shows what crossed the boundary (the contract concatenates the
//! columns by type and the SDK splits them again), so a column sent or read at the wrong place
//! fails the test that compares them with the host's table.

use sluice_sdk::*;

/// The echoing policy.
pub struct ColumnEcho;

impl FromSettings for ColumnEcho {
    fn from_settings(_: &Settings) -> Self {
        ColumnEcho
    }
}

/// One column as a factor.
fn echo<T: Copy>(name: &str, column: &[T], to_f64: impl Fn(T) -> f64) -> Factor {
    Factor {
        name: name.to_string(),
        values: column.iter().map(|&v| to_f64(v)).collect(),
    }
}

impl PriorityPolicy for ColumnEcho {
    fn compute(&mut self, _ctx: &PriorityContext, jobs: &JobTable) -> Priorities {
        let (u, s, m) = (f64::from, |v: i64| v as f64, |v: u64| v as f64);
        Priorities {
            priority: vec![1; jobs.len()],
            factors: vec![
                echo("job-id", &jobs.job_id, u),
                echo("submit-time", &jobs.submit_time, s),
                echo("eligible-time", &jobs.eligible_time, s),
                echo("association", &jobs.association, u),
                echo("partition", &jobs.partition, u),
                echo("qos", &jobs.qos, u),
                echo("nodes", &jobs.nodes, u),
                echo("cpus", &jobs.cpus, u),
                echo("memory-mb", &jobs.memory_mb, m),
                echo("gpus", &jobs.gpus, u),
                echo("time-limit", &jobs.time_limit, u),
                echo("nice", &jobs.nice, f64::from),
                echo("site-factor", &jobs.site_factor, s),
            ],
        }
    }
}

export_priority!(ColumnEcho);
