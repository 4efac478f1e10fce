//! The daemon API's request and answer types: the daemon serializes them and the CLI reads them
//! back, so a renamed field is a compile error on both sides. `host/daemon/API.md` documents the
//! endpoints that carry them. Beside them, [`job_env`] builds the `SLURM_*` environment both
//! sides give a job's processes (the daemon its batch scripts and steps, srun its tasks).

pub mod accounting;
pub mod daemon;
pub mod error;
pub mod job_env;
pub mod jobs;
pub mod nodes;
pub mod plugins;
pub mod query;
pub mod reports;

pub use accounting::*;
pub use daemon::*;
pub use error::ErrorBody;
pub use jobs::*;
pub use nodes::*;
pub use plugins::*;
pub use query::JobQuery;
pub use reports::*;
