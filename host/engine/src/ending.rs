//! Owns no state: ending jobs (time limits, a job's end) and accruing the usage they ran.
//!
//! A job's end gives back what it holds (or keeps it until its epilog completes); usage accrues
//! every PriorityCalcPeriod. It changes job, node, license and GRES state, and usage.

use crate::engine::Engine;
use crate::event::Event;
use crate::job::{Job, JobId, JobState, Reason};

impl Engine {
    /// Ends a job that holds resources, leaving its last usage to be charged at the next decay
    /// and releasing (or, with `track_completing`, keeping until the epilog completes) what it
    /// holds.
    pub(crate) fn end_job(
        &mut self,
        id: JobId,
        state: JobState,
        exit_code: Option<i32>,
        reason: Reason,
    ) {
        let now = self.clock.now();
        let (assoc, start, cpus) = {
            let job = &self.jobs[&id];
            (
                job.assoc,
                job.start_time.unwrap_or(now),
                job.alloc.as_ref().map_or(0, |a| a.cpus()),
            )
        };
        if self.jobs[&id].state == JobState::Running {
            let from = start.max(self.usage.last_ran());
            let factor = self.usage_factor(id);
            let amount = self.usage.job_delta(now - from, cpus, factor);
            self.usage.add_at_next_decay(assoc, amount);
            self.charge_limits_at_end(id, from, now);
        }
        self.limits.leave(id);
        let job = self.jobs.get_mut(&id).expect("ending a known job");
        job.end_time = Some(now);
        job.exit_code = exit_code;
        job.reason = reason;
        for step in job
            .steps
            .iter_mut()
            .filter(|s| s.state == JobState::Running)
        {
            step.state = if state == JobState::Completed {
                JobState::Completed
            } else {
                JobState::Cancelled
            };
        }
        if self.config.track_completing {
            job.state = JobState::Completing;
            job.final_state = Some(state);
        } else {
            job.state = state;
            self.release_resources(id);
        }
        self.outbox.push(Event::Ended {
            job: id,
            state,
            exit_code,
            time: now,
        });
        self.pacing.requested = true;
    }

    /// Gives back what a job holds: its GRES devices and CPUs, node resources, licenses and
    /// HRES; it no longer counts as running.
    pub(crate) fn release_resources(&mut self, id: JobId) {
        let positions = self.jobs[&id]
            .alloc
            .as_ref()
            .map_or(0, |a| a.placement.nodes.len());
        self.release_gres(id, 0..positions);
        let job = self.jobs.get_mut(&id).expect("releasing a known job");
        for r in &mut job.gres.records {
            r.bit_step_alloc.iter_mut().for_each(Vec::clear);
        }
        if let Some(alloc) = &job.alloc {
            self.nodes.release(id, &alloc.placement);
            self.lic.give_back(&alloc.licenses);
            self.lic.refund_hres(&alloc.hres);
        }
        self.power_released(id, self.clock.now());
        self.running.remove(&id);
    }

    /// Ends running jobs whose time limit has passed, with TIMEOUT.
    pub(crate) fn enforce_time_limits(&mut self, now: i64) {
        if !self.config.enforce_time_limits {
            return;
        }
        self.time_out_running(|_, job| job.end_time.is_some_and(|end| end <= now));
    }

    /// Ends with TIMEOUT every running job `over` picks (its time limit passed, or a limit on
    /// time used was reached).
    pub(crate) fn time_out_running(&mut self, over: impl Fn(&Self, &Job) -> bool) {
        let expired: Vec<JobId> = self
            .running
            .iter()
            .copied()
            .filter(|id| {
                let job = &self.jobs[id];
                job.state == JobState::Running && over(self, job)
            })
            .collect();
        for id in expired {
            self.end_job(id, JobState::Timeout, None, Reason::TimeLimit);
        }
    }

    /// Decays usage every PriorityCalcPeriod and accrues running jobs' CPU time since the last run.
    pub(crate) fn accrue_usage(&mut self, now: i64) {
        let Some(decayed) = self.usage.decay_if_due(now) else {
            return;
        };
        // Slurm's decay thread recalculates every pending job's priority after decaying usage.
        self.priorities.due = true;
        self.charge_limits_running(&decayed);
        self.end_jobs_over_used_limits();
        for id in self.running.iter() {
            let job = &self.jobs[id];
            if job.state != JobState::Running {
                continue;
            }
            let from = job.start_time.unwrap_or(now).max(decayed.since);
            let cpus = job.alloc.as_ref().map_or(0, |a| a.cpus());
            let factor = self.usage_factor(*id);
            let amount = decayed.job_delta(&self.usage, from, cpus, factor);
            self.usage.add(job.assoc, amount);
        }
    }
}
