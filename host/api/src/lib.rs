//! The daemon API's request and answer types: the daemon serializes them and the CLI reads them
//! back, so a renamed field is a compile error on both sides. `host/daemon/API.md` documents the
//! endpoints that carry them. Beside them, [`job_env`] builds the `SLURM_*` environment both
//! sides give a job's processes (the daemon its batch scripts and steps, srun its tasks), and
//! what both sides must read alike: [`filename`] patterns (`%j`, `%t`…), the task [`layout`] of
//! a step and Slurm's run-length [`node_counts`].

pub mod accounting;
pub mod daemon;
pub mod error;
pub mod filename;
pub mod job_env;
pub mod jobs;
pub mod layout;
pub mod node_counts;
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

/// Time the daemon gives a client to send a request's head, counted from the previous answer:
/// a keep-alive connection idle for longer is closed, so a client replaces one idle for half of
/// it rather than risk a request crossing the close.
pub const HEADER_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
