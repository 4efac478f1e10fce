//! Owns no state: the limits on time used and time left, `GrpWall`, `GrpTRESMins` and
//! `GrpTRESRunMins`, checked for a job as `check` asks.

use sluice_cluster::{AssocLimits, PartitionId, Qos};

use super::check::Subject;
use super::reason::{Limit, Scope};
use crate::engine::Engine;
use crate::job::Job;

impl Engine {
    /// Whether a running job's QOS or associations have used up `GrpWall`, or `GrpTRESMins` of
    /// a TRES the job holds: Slurm's `acct_policy_job_time_out` then ends the job with TIMEOUT.
    pub(crate) fn used_up_limits(&self, job: &Job, part: PartitionId) -> bool {
        let l = &self.limits;
        if !l.used.on || !l.enforce.limits {
            return false;
        }
        let s = self.subject(job, part);
        if self.grp_wall(&s).is_some() {
            return true;
        }
        let layout = &l.layout;
        (0..s.tres.len()).filter(|&i| s.tres[i] > 0).any(|i| {
            self.grp_over(
                &s,
                (
                    |q: &Qos| layout.limit(&q.limits.grp_tres_mins, i),
                    |a: &AssocLimits| layout.limit(&a.grp_tres_mins, i),
                ),
                (
                    |q| l.used.qos(q).map_or(0, |u| u.tres_mins(i)),
                    |a| l.used.assoc(a).map_or(0, |u| u.tres_mins(i)),
                ),
                |used, max| used >= max,
            )
            .is_some()
        })
    }

    /// Whether the decayed wall time of the job's QOS or associations has reached `GrpWall`.
    pub(super) fn grp_wall(&self, s: &Subject<'_>) -> Option<Scope> {
        let used = &self.limits.used;
        if !used.on {
            return None;
        }
        self.grp_over(
            s,
            (
                |q: &Qos| q.limits.grp_wall.and_then(|w| w.seconds()).map(|w| w / 60),
                |a: &AssocLimits| a.grp_wall.and_then(|w| w.seconds()).map(|w| w / 60),
            ),
            (
                |q| used.qos(q).map_or(0, |u| u.wall_mins()),
                |a| used.assoc(a).map_or(0, |u| u.wall_mins()),
            ),
            |used, max| used >= max,
        )
    }

    /// `GrpTRESMins` and `GrpTRESRunMins` for entry `i` of a job asking `job_mins`
    /// TRES-minutes: the decayed use reaching the limit holds the job (with
    /// `AccountingStorageEnforce=safe`, so does use plus what running jobs may still use plus
    /// the job's own minutes going over it); running jobs' remaining minutes plus the job's
    /// going over `GrpTRESRunMins` holds it until some end.
    pub(super) fn tres_minutes_limit(
        &self,
        s: &Subject<'_>,
        i: usize,
        job_mins: u64,
        now: i64,
    ) -> Option<(Scope, Limit)> {
        let l = &self.limits;
        if !l.used.on && !l.run_mins {
            return None;
        }
        let layout = &l.layout;
        let qos_run = |q| l.qos(q).map_or(0, |c| c.run_mins(i, now));
        let assoc_run = |a| l.assoc(a).map_or(0, |c| c.run_mins(i, now));
        let mins_limit = (
            |q: &Qos| layout.limit(&q.limits.grp_tres_mins, i),
            |a: &AssocLimits| layout.limit(&a.grp_tres_mins, i),
        );
        let qos_used = |q| l.used.qos(q).map_or(0, |u| u.tres_mins(i));
        let assoc_used = |a| l.used.assoc(a).map_or(0, |u| u.tres_mins(i));
        if l.used.on {
            if let Some(scope) =
                self.grp_over(s, mins_limit, (qos_used, assoc_used), |used, max| {
                    used >= max
                })
            {
                return Some((scope, Limit::GrpTresMins));
            }
            let safe = self.grp_over(
                s,
                mins_limit,
                (
                    |q| qos_used(q).saturating_add(qos_run(q)),
                    |a| assoc_used(a).saturating_add(assoc_run(a)),
                ),
                |used, max| l.enforce.safe && used.saturating_add(job_mins) > max,
            );
            if let Some(scope) = safe {
                return Some((scope, Limit::GrpTresMins));
            }
        }
        if !l.run_mins {
            return None;
        }
        self.grp_over(
            s,
            (
                |q: &Qos| layout.limit(&q.limits.grp_tres_run_mins, i),
                |a: &AssocLimits| layout.limit(&a.grp_tres_run_mins, i),
            ),
            (qos_run, assoc_run),
            |run, max| run.saturating_add(job_mins) > max,
        )
        .map(|scope| (scope, Limit::GrpTresRunMins))
    }
}
