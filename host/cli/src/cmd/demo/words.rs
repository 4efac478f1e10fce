//! The demo's words for engine and runtime values, as a Slurm admin reads them (the types have
//! no `Display` of their own).

use sluice_engine::Loop;
use sluice_runtime::policy_set::SwapOutcome;
use sluice_runtime::slot::Role;

/// Which scheduler started a job, in the words of slurmctld's log.
pub fn scheduler(by: Loop) -> &'static str {
    match by {
        Loop::Main => "main scheduler",
        Loop::Backfill => "backfill",
    }
}

/// What became of a staged plugin.
pub fn swap(outcome: &SwapOutcome) -> String {
    match outcome {
        SwapOutcome::Published { generation, .. } => {
            format!("generation {generation} is active")
        }
        SwapOutcome::Refused(e) => format!("refused, the previous generation keeps answering: {e}"),
    }
}

/// What a rollback did.
pub fn rollback(result: Result<u64, &str>) -> String {
    match result {
        Ok(generation) => format!("generation {generation} is active again"),
        Err(why) => format!("not done: {why}"),
    }
}

/// A generation's place in its slot.
pub fn role(role: Role) -> &'static str {
    match role {
        Role::Active => "active",
        Role::Previous => "previous",
        Role::Fallback => "fallback",
    }
}
