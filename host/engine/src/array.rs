//! Owns the engine's job arrays: which job each task is, each array's throttle, and how the
//! tasks no longer in the engine ended.
//!
//! Each task of an array is a job of its own; an array is known by an id of its own (an id the
//! engine hands out beside its jobs', so a dependency on the array is never taken for one on
//! its first task). A task's outcome outlives its purge here, so `afterok` on the whole array
//! and `aftercorr` still see it.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::job_id::JobId;

/// What a job is of an array: the array's id and the task's index (`SLURM_ARRAY_TASK_ID`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ArrayTask {
    /// The array's id in the engine ([`crate::Engine::create_array`]).
    pub array: JobId,
    /// The task's index in the array.
    pub task_id: u32,
}

/// Where one task of an array is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum TaskSlot {
    /// A job the engine holds.
    Job(JobId),
    /// A task that ended and is no longer held: whether it completed with exit code 0.
    Ended {
        /// Ended COMPLETED.
        ok: bool,
    },
}

/// One array: its throttle and its tasks by index.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ArrayRecord {
    /// Most tasks that may run at once (`%N`); 0 is no limit.
    pub throttle: u32,
    /// Tasks by index.
    pub tasks: BTreeMap<u32, TaskSlot>,
}

/// Every array the engine knows, by id.
#[derive(Clone, Debug, Default)]
pub(crate) struct Arrays {
    by_id: HashMap<JobId, ArrayRecord>,
}

impl Arrays {
    /// A new array `id` with `throttle`.
    pub fn create(&mut self, id: JobId, throttle: u32) {
        self.by_id.insert(
            id,
            ArrayRecord {
                throttle,
                tasks: BTreeMap::new(),
            },
        );
    }

    /// Array `id`, if known.
    pub fn get(&self, id: JobId) -> Option<&ArrayRecord> {
        self.by_id.get(&id)
    }

    /// Array `id`, to change.
    pub fn get_mut(&mut self, id: JobId) -> Option<&mut ArrayRecord> {
        self.by_id.get_mut(&id)
    }

    /// Forgets array `id` (a submission that failed part-way).
    pub fn remove(&mut self, id: JobId) {
        self.by_id.remove(&id);
    }

    /// Task `task` of array `id` ended and left the engine.
    pub fn forget_job(&mut self, task: ArrayTask, ok: bool) {
        if let Some(a) = self.by_id.get_mut(&task.array) {
            a.tasks.insert(task.task_id, TaskSlot::Ended { ok });
        }
    }
}
