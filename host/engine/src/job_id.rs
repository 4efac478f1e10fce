//! Owns no state: the job id type, in a module that imports nothing so every module may name it.

/// A job id (Slurm's `JobId`), unique and increasing in submit order.
pub type JobId = u32;
