//! The sluice plugin runtime: loads, sandboxes, caches and hot-swaps policy components.

pub mod backend;
pub mod error;
pub mod limits;
pub mod settings;
pub mod shared;
pub mod wasm;

pub use error::{Fault, LoadError};
pub use limits::Limits;
pub mod cases;
pub mod compile;
pub mod contained;
pub mod loader;
pub mod native;
pub mod plugin_file;
pub mod policy_set;
pub mod probe;
pub mod slot;
pub mod specs;

pub use loader::{Loaded, Loader, PluginSpec};
pub use plugin_file::{PluginFile, PluginFormat};
pub use policy_set::PolicySet;
