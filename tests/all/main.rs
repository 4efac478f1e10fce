//! One test binary for every cross-crate test, so the workspace links wasmtime into a single
//! test executable instead of one per file.

mod support;

mod bundle_conformance;
mod example_policy;
mod gres_by_name;
mod native_trust;
mod priority_cluster;
mod runtime_cache;
mod runtime_capabilities;
mod runtime_containment;
mod runtime_hot_swap;
mod runtime_loading;
mod runtime_native;
mod selection_copy;
