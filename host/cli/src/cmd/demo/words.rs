//! The demo's words for engine values, as a Slurm admin reads them.

use sluice_engine::Loop;

/// Which scheduler started a job, in the words of slurmctld's log.
pub fn scheduler(by: Loop) -> &'static str {
    match by {
        Loop::Main => "main scheduler",
        Loop::Backfill => "backfill",
    }
}

/// What a rollback did.
pub fn rollback(result: Result<u64, &str>) -> String {
    match result {
        Ok(generation) => format!("generation {generation} is active again"),
        Err(why) => format!("not done: {why}"),
    }
}
