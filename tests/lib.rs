//! Cross-crate tests of sluice live in `all/`, one test binary as wasmtime does it.
