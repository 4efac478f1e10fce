//! srun and salloc as Slurm users type them: srun's option table read with sbatch's scanner,
//! the step's shape, its tasks launched and their output forwarded, and the interactive
//! allocation srun (outside a job) and salloc run in.

pub mod allocation;
pub mod launch;
pub mod options;
pub mod step;
