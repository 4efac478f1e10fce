//! One test binary for every cross-crate test, so the workspace links wasmtime into a single
//! test executable instead of one per file.

mod support;
// The policy the WIT-version fixtures answer with, to check their answers against.
#[path = "../fixtures/usage_priority.rs"]
mod usage_priority;

mod bundle_conformance;
mod example_policy;
mod gres_by_name;
mod runtime_cache;
mod runtime_containment;
mod runtime_hot_swap;
mod runtime_loading;
mod runtime_native;
mod selection_changes_with_place;
mod selection_copy;
mod wit_versions;
