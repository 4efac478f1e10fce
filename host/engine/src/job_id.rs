//! The job id type: owns no state, and imports nothing, so that every module may name a job.

/// A job id (Slurm's `JobId`), unique and increasing in submit order.
pub type JobId = u32;
