//! One module per subcommand; each has an `Args` and a `run`.

pub mod config;
pub mod demo;
pub mod hostlist;
pub mod plugin;
pub mod sim;
