//! Policies as WebAssembly components: bindings, the sandboxed instance, one adapter per world.

pub mod bindings;
mod gres;
mod hres;
pub mod instance;
pub(crate) mod priority;
pub(crate) mod selection;
pub mod vertex_scoring;
mod wasi;
