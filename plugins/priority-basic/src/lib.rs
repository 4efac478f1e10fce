//! priority/basic: first in, first out, as Slurm's priority/basic plugin.
//!
//! Slurm gives the first job a high priority and every later submission one less, so the queue
//! runs in submit order. Here the priority is the distance from the end of time: a job submitted
//! earlier always gets the higher value, and ties fall back to the host's own order (submit time,
//! then job id).

use sluice_sdk::*;

/// FIFO priority.
pub struct Basic;

impl FromSettings for Basic {
    fn from_settings(_: &Settings) -> Self {
        Basic
    }
}

/// Priorities are 32-bit; submit times past this base still order correctly until 2106.
const BASE: i64 = u32::MAX as i64;

impl PriorityPolicy for Basic {
    fn compute(&mut self, _ctx: &PriorityContext, jobs: &JobTable) -> Priorities {
        let priority = jobs
            .submit_time
            .iter()
            .map(|&t| (BASE - t.clamp(0, BASE)).max(1) as u32)
            .collect();
        Priorities {
            priority,
            factors: Vec::new(),
        }
    }
}

#[cfg(feature = "export")]
export_priority!(Basic);

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_sdk::testing::{self, fixtures};

    #[test]
    fn earlier_submission_ranks_higher() {
        let ctx = fixtures::priority_context(1_700_000_000, 32, 2, 2);
        let jobs = fixtures::job_table(&ctx, 200, 9);
        let out = testing::priorities(&mut Basic, &ctx, &jobs);
        for i in 0..jobs.len() {
            for j in 0..jobs.len() {
                if jobs.submit_time[i] < jobs.submit_time[j] {
                    assert!(out.priority[i] > out.priority[j]);
                }
            }
        }
    }

    #[test]
    fn conformance() {
        testing::assert_conformant(&testing::conformance::priority(&mut Basic));
    }
}
