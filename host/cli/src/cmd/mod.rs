//! One module per subcommand; each has an `Args` and a `run`.

pub mod cancel;
pub mod config;
pub mod daemon_client;
pub mod demo;
pub mod hold;
pub mod hostlist;
pub mod info;
pub mod plugin;
pub mod prio;
pub mod queue;
pub mod reconfigure;
pub mod reservation;
pub mod run;
pub mod serve;
pub mod share;
pub mod show;
pub mod sim;
pub mod submit;
pub mod update;
