//! A harness to unit-test a policy in-process with plain `cargo test`: fixtures, contract
//! checks and the conformance cases the default plugins pass.

pub use sluice_policy::conformance::{self, CaseResult};
pub use sluice_policy::fixtures;

use sluice_policy::{
    JobRequest, JobTable, NodeTable, PlaceMode, Placement, Priorities, PriorityContext,
    PriorityPolicy, SelectionPolicy,
};

/// Computes priorities and panics, with the contract rule broken, if the answer is invalid.
pub fn priorities(
    policy: &mut dyn PriorityPolicy,
    ctx: &PriorityContext,
    jobs: &JobTable,
) -> Priorities {
    let out = policy.compute(ctx, jobs);
    if let Err(e) = out.check(jobs.len()) {
        panic!("priority answer breaks the contract: {e}");
    }
    out
}

/// Runs a pass of allocations as the host would: checks each placement against the host's own
/// table, commits it, and returns what each request got.
pub fn allocate_all(
    policy: &mut dyn SelectionPolicy,
    table: &NodeTable,
    requests: &[JobRequest],
) -> Vec<Option<Placement>> {
    let mut host = table.clone();
    policy.begin_pass(table);
    requests
        .iter()
        .map(|req| {
            let p = policy.place(req, PlaceMode::Allocate)?;
            if let Err(e) = host.check_placement(req, &p) {
                panic!("placement of job {} breaks the contract: {e}", req.job_id);
            }
            host.commit(&p);
            Some(p)
        })
        .collect()
}

/// Panics with every failed case if any conformance case failed.
pub fn assert_conformant(results: &[CaseResult]) {
    let failed: Vec<String> = results
        .iter()
        .filter_map(|r| r.outcome.as_ref().err().map(|e| format!("{}: {e}", r.name)))
        .collect();
    assert!(!results.is_empty(), "no conformance case ran");
    assert!(
        failed.is_empty(),
        "conformance failures:\n{}",
        failed.join("\n")
    );
}
