//! The demo's words for what a rollback did, as a Slurm admin reads them.

/// What a rollback did.
pub fn rollback(result: Result<u64, &str>) -> String {
    match result {
        Ok(generation) => format!("generation {generation} is active again"),
        Err(why) => format!("not done: {why}"),
    }
}
