//! The cluster model and the readers of sluice and Slurm configuration files.
//!
//! Loading is a pure function from text to `Result<Cluster, ConfigError>`, so a running host can keep
//! its previous configuration when a new one fails.

mod error;
pub mod model;
pub mod time;

pub use error::{ConfigError, Location};
pub use model::*;
