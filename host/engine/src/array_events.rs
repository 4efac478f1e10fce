//! Owns no state: job arrays' events (creation, submission of tasks, throttle changes, outcomes
//! of tasks a host restart left behind) and what arrays decide for a pending task: its throttle
//! (`JobArrayTaskLimit`) and dependencies on an array or one of its tasks.

use crate::array::{ArrayRecord, ArrayTask, TaskSlot};
use crate::engine::Engine;
use crate::error::{JobError, SubmitError};
use crate::job::{Job, JobId, JobSpec, JobState, Reason};
use crate::request::{Dependency, DependencyKind};

/// Where a dependency's target stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Not ended yet.
    Waiting,
    /// Ended; whether COMPLETED.
    Ended {
        /// Completed with exit code 0.
        ok: bool,
    },
    /// Nothing to wait for (gone, or no corresponding task).
    Gone,
}

impl Engine {
    /// Creates an empty array whose tasks may run `throttle` at a time (0: no limit) and
    /// returns its id, taken from the job ids so that it names no job.
    pub fn create_array(&mut self, throttle: u32) -> JobId {
        let id = self.next_id;
        self.next_id += 1;
        self.arrays.create(id, throttle);
        id
    }

    /// Submits a job array: one job per index in `task_ids` (each `spec` with its
    /// [`ArrayTask`]), run at most `throttle` at a time (0: no limit). Returns the array's id
    /// and the tasks' job ids in order. Nothing is queued if any task is refused.
    pub fn submit_array(
        &mut self,
        spec: JobSpec,
        task_ids: &[u32],
        throttle: u32,
    ) -> Result<(JobId, Vec<JobId>), SubmitError> {
        let array = self.create_array(throttle);
        let mut jobs = Vec::with_capacity(task_ids.len());
        for &task_id in task_ids {
            let mut task = spec.clone();
            task.array = Some(ArrayTask { array, task_id });
            match self.submit(task) {
                Ok(id) => jobs.push(id),
                Err(e) => {
                    // Unqueued quietly: no task was acknowledged, so none ends.
                    for id in jobs {
                        self.pending.remove(id);
                        self.limits.leave(id);
                        self.jobs.remove(&id);
                    }
                    self.arrays.remove(array);
                    return Err(e);
                }
            }
        }
        Ok((array, jobs))
    }

    /// Array `id`: its throttle and where each task is.
    pub fn array(&self, id: JobId) -> Option<&ArrayRecord> {
        self.arrays.get(id)
    }

    /// Sets how many of array `id`'s tasks may run at once (`ArrayTaskThrottle=`; 0: no
    /// limit). Tasks already running go on; a pass follows.
    pub fn set_array_throttle(&mut self, id: JobId, throttle: u32) -> Result<(), JobError> {
        let a = self.arrays.get_mut(id).ok_or(JobError::UnknownJob(id))?;
        a.throttle = throttle;
        self.pacing.requested = true;
        Ok(())
    }

    /// Records that task `task_id` of array `id` ended before the engine held it (a host
    /// restart leaves ended tasks out), so dependencies on the array still see it.
    pub fn array_task_ended(&mut self, id: JobId, task_id: u32, ok: bool) {
        self.arrays.forget_job(ArrayTask { array: id, task_id }, ok);
    }

    /// Registers a task just queued in its array.
    pub(crate) fn join_array(&mut self, task: ArrayTask, job: JobId) {
        if let Some(a) = self.arrays.get_mut(task.array) {
            a.tasks.insert(task.task_id, TaskSlot::Job(job));
        }
    }

    /// `Some(JobArrayTaskLimit)` while as many of the job's array as its throttle allows run.
    pub(crate) fn array_throttle_reason(&self, job: &Job) -> Option<Reason> {
        let a = self.arrays.get(job.spec.array?.array)?;
        if a.throttle == 0 {
            return None;
        }
        let running = a
            .tasks
            .values()
            .filter(|slot| match slot {
                TaskSlot::Job(id) => self.jobs.get(id).is_some_and(|j| j.state.holds_resources()),
                TaskSlot::Ended { .. } => false,
            })
            .count();
        (running >= a.throttle as usize).then_some(Reason::JobArrayTaskLimit)
    }

    /// Whether a dependency names something the engine knows (a job or an array).
    pub(crate) fn dependency_known(&self, dep: &Dependency) -> bool {
        match (dep.kind, dep.task) {
            (DependencyKind::AfterCorr, _) | (_, Some(_)) => self.arrays.get(dep.job).is_some(),
            (_, None) => self.jobs.contains_key(&dep.job) || self.arrays.get(dep.job).is_some(),
        }
    }

    /// Where the target of `dep`, held by `job`, stands. A whole array has ended once every
    /// task has; it ended ok if every task did (so `afternotok` holds if one failed, as
    /// Slurm's). `aftercorr` waits for the task of the same index, and for nothing when the
    /// array has none.
    pub(crate) fn dependency_outcome(&self, job: &Job, dep: &Dependency) -> Outcome {
        let array = self.arrays.get(dep.job);
        let task = match (dep.kind, dep.task) {
            (DependencyKind::AfterCorr, _) => job.spec.array.map(|t| t.task_id),
            (_, task) => task,
        };
        match (array, task) {
            (Some(a), Some(t)) => a.tasks.get(&t).map_or(Outcome::Gone, |s| self.slot(*s)),
            (Some(a), None) if !matches!(dep.kind, DependencyKind::AfterCorr) => {
                let mut all_ok = true;
                for slot in a.tasks.values() {
                    match self.slot(*slot) {
                        Outcome::Waiting => return Outcome::Waiting,
                        Outcome::Ended { ok } => all_ok &= ok,
                        Outcome::Gone => {}
                    }
                }
                Outcome::Ended { ok: all_ok }
            }
            (Some(_), None) => Outcome::Gone,
            (None, _) => match self.jobs.get(&dep.job) {
                Some(other) => state_outcome(other.state),
                None => Outcome::Gone,
            },
        }
    }

    fn slot(&self, slot: TaskSlot) -> Outcome {
        match slot {
            TaskSlot::Job(id) => self
                .jobs
                .get(&id)
                .map_or(Outcome::Gone, |j| state_outcome(j.state)),
            TaskSlot::Ended { ok } => Outcome::Ended { ok },
        }
    }
}

fn state_outcome(state: JobState) -> Outcome {
    if state.is_final() {
        Outcome::Ended {
            ok: state == JobState::Completed,
        }
    } else {
        Outcome::Waiting
    }
}
