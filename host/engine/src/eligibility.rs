//! Owns no state: whether a pending job may be tried this pass, and the reason it shows if not.
//!
//! Hold, begin time and dependencies decide; it sets the job's reason and eligible time.

use crate::engine::Engine;
use crate::job::{Hold, Job, JobId, Reason};

impl Engine {
    /// Recomputes one pending job's eligibility (hold, begin time, dependencies) and reason.
    /// Returns whether the job may be tried this pass.
    pub(crate) fn refresh_job(&mut self, id: JobId, now: i64) -> bool {
        let blocked = self.blocked_reason(&self.jobs[&id], now);
        let job = self.jobs.get_mut(&id).expect("refreshing a known job");
        match blocked {
            Some(reason) => {
                job.reason = reason;
                if job.hold.is_some() {
                    job.priority.iter_mut().for_each(|p| *p = 0);
                    job.priority_time = None;
                }
                false
            }
            None => {
                if job.eligible_time.is_none() {
                    job.eligible_time = Some(now);
                }
                if matches!(
                    job.reason,
                    Reason::JobHeldUser
                        | Reason::JobHeldAdmin
                        | Reason::BeginTime
                        | Reason::Dependency
                ) {
                    job.reason = Reason::None;
                }
                true
            }
        }
    }

    /// Why pending `job` may not be tried at `now` (a hold, its begin time, a dependency), or
    /// `None` when it may.
    pub(crate) fn blocked_reason(&self, job: &Job, now: i64) -> Option<Reason> {
        if let Some(hold) = job.hold {
            Some(if hold == Hold::User {
                Reason::JobHeldUser
            } else {
                Reason::JobHeldAdmin
            })
        } else if job.spec.begin_time.is_some_and(|b| b > now) {
            Some(Reason::BeginTime)
        } else {
            self.dependency_reason(job)
        }
    }

    /// `Some(Dependency)` while a dependency is unresolved, `Some(DependencyNeverSatisfied)` if one
    /// can never be, `None` once all are satisfied.
    fn dependency_reason(&self, job: &Job) -> Option<Reason> {
        use crate::array_events::Outcome;
        use crate::request::DependencyKind::*;
        let mut waiting = false;
        for dep in &job.spec.dependencies {
            match (dep.kind, self.dependency_outcome(job, dep)) {
                (_, Outcome::Gone) => {}
                (_, Outcome::Waiting) => waiting = true,
                (AfterOk | AfterCorr, Outcome::Ended { ok: false }) => {
                    return Some(Reason::DependencyNeverSatisfied);
                }
                (AfterNotOk, Outcome::Ended { ok: true }) => {
                    return Some(Reason::DependencyNeverSatisfied);
                }
                _ => {}
            }
        }
        waiting.then_some(Reason::Dependency)
    }
}
