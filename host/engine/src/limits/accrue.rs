//! Owns no state: running and ending jobs charged to the decayed use `GrpTRESMins` and
//! `GrpWall` are held to, at the times fair-share usage is charged.

use crate::engine::Engine;
use crate::job::{JobId, JobState};
use crate::usage::Decayed;

use super::Run;

impl Engine {
    /// Charges a job that is ending for its run since `from` (the later of its start and the
    /// last decay), after the next decay as its usage is.
    pub(crate) fn charge_limits_at_end(&mut self, id: JobId, from: i64, now: i64) {
        if !self.limits.used.on {
            return;
        }
        let factor = self.usage_factor(id);
        let run = Run {
            decayed: self.usage.job_delta(now - from, 1, factor),
            undecayed: (now - from).max(0) as f64 * factor,
        };
        self.limits.charge_use(id, run, true);
    }

    /// Decays the use limits count, then charges each running job its run over the decay's
    /// span (Slurm's decay thread does both).
    pub(crate) fn charge_limits_running(&mut self, decayed: &Decayed) {
        if !self.limits.used.on {
            return;
        }
        self.limits.used.decay(decayed.decay);
        let runs: Vec<(JobId, Run)> = self
            .running
            .iter()
            .filter(|id| self.jobs[*id].state == JobState::Running)
            .map(|id| {
                let from = self.jobs[id]
                    .start_time
                    .unwrap_or(decayed.until)
                    .max(decayed.since);
                let factor = self.usage_factor(*id);
                let run = Run {
                    decayed: decayed.job_delta(&self.usage, from, 1, factor),
                    undecayed: (decayed.until - from).max(0) as f64 * factor,
                };
                (*id, run)
            })
            .collect();
        for (id, run) in runs {
            self.limits.charge_use(id, run, false);
        }
    }

    /// Ends with TIMEOUT the running jobs whose QOS or associations have used up `GrpTRESMins`
    /// or `GrpWall`, as slurmctld's `acct_policy_job_time_out` does once usage is charged.
    pub(crate) fn end_jobs_over_used_limits(&mut self) {
        if !self.limits.used.on {
            return;
        }
        self.time_out_running(|e, job| {
            (job.alloc.as_ref()).is_some_and(|a| e.used_up_limits(job, a.partition))
        });
    }

    /// The UsageFactor of a job's QOS (1 without one).
    pub(crate) fn usage_factor(&self, id: JobId) -> f64 {
        self.qos_view
            .get(self.jobs[&id].qos.index())
            .map_or(1.0, |q| q.usage_factor)
    }
}
