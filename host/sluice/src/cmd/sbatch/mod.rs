//! sbatch as Slurm users type it: `#SBATCH` lines, `SBATCH_*` variables, option values with
//! Slurm's messages, and the submission they make (the option table and its scanner are
//! `cmd/options`, shared with srun and salloc).

pub mod environment;
pub mod options;
pub mod request;
pub mod script;
pub mod values;
