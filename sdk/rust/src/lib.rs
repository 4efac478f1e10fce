//! Everything a site admin needs to write, test and build a sluice policy plugin.
//!
//! Write a type, implement [`FromSettings`] and the trait of its kind ([`PriorityPolicy`],
//! [`SelectionPolicy`], [`GresPolicy`] or [`HresPolicy`]; [`VertexScoring`] for a graph-matching
//! policy), then invoke the export macro of that kind once at the crate root:
//!
//! ```ignore
//! use sluice_sdk::*;
//! struct Fifo;
//! impl FromSettings for Fifo { fn from_settings(_: &Settings) -> Self { Fifo } }
//! impl PriorityPolicy for Fifo {
//!     fn compute(&mut self, _ctx: &PriorityContext, jobs: &JobTable) -> Priorities {
//!         Priorities { priority: vec![1; jobs.len()], factors: vec![] }
//!     }
//! }
//! sluice_sdk::export_priority!(Fifo);
//! ```
//!
//! The same source builds three ways: for `wasm32-wasip2` it becomes a component of the
//! kind's world; natively with the crate feature `native` it becomes a library the host loads
//! through `libloading`; and as a plain dependency it is an ordinary Rust type, which is how
//! [`testing`] runs it under `cargo test`.

// The generated bindings name this crate by path, also from inside it.
extern crate self as sluice_sdk;

pub use sluice_policy::*;

pub mod allocator;
pub mod log;
pub mod testing;

/// Components allocate through [`allocator::SizeClasses`]; a plugin that brings its own global
/// allocator turns the crate feature `size-class-allocator` off.
#[cfg(all(
    target_arch = "wasm32",
    not(target_feature = "atomics"),
    feature = "size-class-allocator"
))]
#[global_allocator]
static ALLOCATOR: allocator::SizeClasses = allocator::SizeClasses::new();

#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod wasm;

#[doc(hidden)]
pub mod __private {
    pub use sluice_policy::native;
    #[cfg(target_arch = "wasm32")]
    pub use wit_bindgen;
}

#[macro_use]
mod export;
