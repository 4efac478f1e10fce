//! Owns no state: the input events besides submission (cancel, hold, job end, nodes, reservations).
//!
//! Each event changes the state it names and asks for a pass.

use sluice_cluster::NodeId;

use crate::engine::Engine;
use crate::error::JobError;
use crate::event::Event;
use crate::job::{Hold, Job, JobId, JobState, Reason};
use crate::node_state::Health;
use crate::reservation::{Reservation, ReservationError, ReservationSpec};

impl Engine {
    /// Changes a running job's time limit (scontrol update TimeLimit=, an admin's extension
    /// or anyone's reduction): it now ends `limit` seconds after its start, and backfill plans
    /// with that end. `None` is UNLIMITED.
    pub fn set_time_limit(&mut self, id: JobId, limit: Option<u64>) -> Result<(), JobError> {
        let job = self.jobs.get_mut(&id).ok_or(JobError::UnknownJob(id))?;
        if !matches!(job.state, JobState::Running | JobState::Configuring) {
            return Err(JobError::WrongState {
                job: id,
                state: job.state,
            });
        }
        job.time_limit = limit;
        let start = job.start_time.unwrap_or_else(|| self.clock.now());
        job.end_time = limit.map(|l| start.saturating_add(i64::try_from(l).unwrap_or(i64::MAX)));
        self.count_time_limit(id);
        self.pacing.requested = true;
        Ok(())
    }

    /// Cancels a job (scancel): a pending job ends at once, a running one releases its nodes.
    pub fn cancel(&mut self, id: JobId) -> Result<(), JobError> {
        let now = self.clock.now();
        let job = self.jobs.get_mut(&id).ok_or(JobError::UnknownJob(id))?;
        match job.state {
            JobState::Pending => {
                job.state = JobState::Cancelled;
                job.end_time = Some(now);
                job.start_time = None;
                self.pending.remove(id);
                self.limits.leave(id);
                self.outbox.push(Event::Ended {
                    job: id,
                    state: JobState::Cancelled,
                    exit_code: None,
                    time: now,
                });
                Ok(())
            }
            JobState::Configuring | JobState::Running => {
                self.end_job(id, JobState::Cancelled, None, Reason::None);
                Ok(())
            }
            state => Err(JobError::WrongState { job: id, state }),
        }
    }

    /// Pending job `id`, or why an action on pending jobs cannot apply to it.
    fn pending_job(&mut self, id: JobId) -> Result<&mut Job, JobError> {
        let job = self.jobs.get_mut(&id).ok_or(JobError::UnknownJob(id))?;
        if job.state != JobState::Pending {
            return Err(JobError::WrongState {
                job: id,
                state: job.state,
            });
        }
        Ok(job)
    }

    /// Holds a pending job (scontrol hold / uhold); its priority becomes 0.
    pub fn hold(&mut self, id: JobId, who: Hold) -> Result<(), JobError> {
        let now = self.clock.now();
        self.pending_job(id)?.hold = Some(who);
        self.pending.ready.unsettle(id);
        self.refresh_job(id, now);
        Ok(())
    }

    /// Releases a held job (scontrol release); holding cleared its priority, so the next pass
    /// calculates one.
    pub fn release(&mut self, id: JobId) -> Result<(), JobError> {
        let now = self.clock.now();
        self.pending_job(id)?.hold = None;
        self.pending.ready.unsettle(id);
        self.refresh_job(id, now);
        self.pacing.requested = true;
        Ok(())
    }

    /// The executor reports that a job's batch script ended with `exit_code`.
    pub fn job_finished(&mut self, id: JobId, exit_code: i32) -> Result<(), JobError> {
        let job = self.jobs.get(&id).ok_or(JobError::UnknownJob(id))?;
        if !matches!(job.state, JobState::Running | JobState::Configuring) {
            return Err(JobError::WrongState {
                job: id,
                state: job.state,
            });
        }
        let (state, reason) = if exit_code == 0 {
            (JobState::Completed, Reason::None)
        } else {
            (JobState::Failed, Reason::NonZeroExitCode)
        };
        self.end_job(id, state, Some(exit_code), reason);
        Ok(())
    }

    /// The executor reports that the kernel killed processes of a job for exceeding its
    /// memory, and that its batch script then ended with `exit_code`: it ends OUT_OF_MEMORY,
    /// as Slurm's job does when its step reports an OOM kill.
    pub fn job_out_of_memory(&mut self, id: JobId, exit_code: i32) -> Result<(), JobError> {
        let job = self.jobs.get(&id).ok_or(JobError::UnknownJob(id))?;
        if !matches!(job.state, JobState::Running | JobState::Configuring) {
            return Err(JobError::WrongState {
                job: id,
                state: job.state,
            });
        }
        self.end_job(
            id,
            JobState::OutOfMemory,
            Some(exit_code),
            Reason::OutOfMemory,
        );
        Ok(())
    }

    /// The epilog finished on every node of a COMPLETING job: its resources are free.
    pub fn epilog_complete(&mut self, id: JobId) -> Result<(), JobError> {
        let job = self.jobs.get_mut(&id).ok_or(JobError::UnknownJob(id))?;
        if job.state != JobState::Completing {
            return Err(JobError::WrongState {
                job: id,
                state: job.state,
            });
        }
        job.state = job.final_state.take().unwrap_or(JobState::Completed);
        self.release_resources(id);
        self.pacing.requested = true;
        Ok(())
    }

    /// A node stopped responding or was set DOWN: its jobs are requeued when their requeue
    /// setting allows it (Slurm requeues a requeueable batch job on node failure), else they
    /// end with NODE_FAIL — the power thread's rule ([`Engine::fail_node_jobs`]).
    pub fn node_down(&mut self, node: NodeId, reason: &str) {
        self.nodes
            .set_health(node, Health::Down, Some(reason.into()));
        self.fail_node_jobs(node.0 as usize, false);
    }

    /// A node is drained: running jobs continue, nothing new starts there.
    pub fn node_drain(&mut self, node: NodeId, reason: &str) {
        self.nodes
            .set_health(node, Health::Drain, Some(reason.into()));
    }

    /// A node is back (scontrol update State=RESUME, or slurmd registered again).
    pub fn node_resume(&mut self, node: NodeId) {
        self.nodes.set_health(node, Health::Up, None);
        self.pacing.requested = true;
    }

    /// A node finished booting: its registration ([`Engine::register_node`]), kept for callers
    /// that knew it by this name.
    pub fn node_powered_up(&mut self, node: NodeId) {
        self.register_node(node);
    }

    /// Creates an advance reservation (scontrol create reservation).
    pub fn create_reservation(&mut self, spec: &ReservationSpec) -> Result<(), ReservationError> {
        let resv = Reservation::resolve(spec, &self.cluster, &self.lic)?;
        self.resv.add(resv)?;
        self.pacing.requested = true;
        Ok(())
    }

    /// Forgets a job that has ended (Slurm's purge after MinJobAge), so a long replay keeps only
    /// the jobs in flight. Returns whether the job was in a final state and is now gone. A pending
    /// job's dependency on it then counts as satisfied; a new submission naming it is refused.
    pub fn purge(&mut self, id: JobId) -> bool {
        let done = self.jobs.get(&id).is_some_and(|job| job.state.is_final());
        if done && let Some(job) = self.jobs.remove(&id) {
            if let Some(task) = job.spec.array {
                self.arrays
                    .forget_job(task, job.state == crate::job::JobState::Completed);
            }
        }
        done
    }

    /// Deletes an advance reservation; jobs waiting for it stay pending.
    pub fn delete_reservation(&mut self, name: &str) -> bool {
        self.resv.remove(name)
    }
}
