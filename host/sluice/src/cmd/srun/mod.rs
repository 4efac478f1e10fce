//! srun and salloc as Slurm users type them: srun's option table read with sbatch's scanner,
//! the step's shape, what each task runs (`--multi-prog`) and where its streams go, its tasks
//! launched and their output forwarded, the job watched while they run, and the interactive
//! allocation srun (outside a job) and salloc run in.

pub mod allocation;
pub mod job_end;
pub mod launch;
pub mod local;
pub mod multi_prog;
pub mod options;
pub mod program;
pub mod step;
pub mod streams;
pub mod task_io;
