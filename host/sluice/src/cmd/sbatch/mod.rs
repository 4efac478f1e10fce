//! sbatch as Slurm users type it: the option table and getopt-style scanning, `#SBATCH`
//! lines, `SBATCH_*` variables, option values with Slurm's messages, dates, and the submission
//! they make.

// Slurm's date forms are shared with the other commands (`acct`, `update`, reservations).
pub use super::clock;
pub mod environment;
pub mod getopt;
pub mod options;
pub mod request;
pub mod script;
pub mod values;
