//! Policies as WebAssembly components: bindings, the sandboxed instance, one adapter per world.

pub mod bindings;
pub mod instance;
mod gres;
mod hres;
mod priority;
mod selection;
