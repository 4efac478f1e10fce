//! The options of sbatch, srun and salloc: one table (`table`), one getopt-style scanner
//! (`scan`), and one value they fill (`given`); each command adds only its own layering
//! (`#SBATCH` lines, `SBATCH_*` or `SLURM_*` variables) and what it does with the value.

pub mod given;
pub mod scan;
pub mod table;

pub use given::{Context, Options};
pub use scan::Found;
pub use table::{Command, Takes};
