//! The cluster model and the readers of sluice and Slurm configuration files.
//!
//! Loading is a pure function from text to `Result<Cluster, ConfigError>`, so a running host can keep
//! its previous configuration when a new one fails.

pub mod config;
mod demo;
mod error;
pub mod gres;
mod hres;
mod keyvalue;
pub mod model;
pub mod slurm_conf;
mod source;
pub mod time;

pub use config::{ConfigFile, parse_config_file};
pub use demo::{DEMO_RESOURCES_NAME, DEMO_TOML_NAME};
pub use error::{ConfigError, Location};
pub use hres::parse_resources;
pub use model::*;
pub use source::Source;
