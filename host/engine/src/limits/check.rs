//! Owns no state: whether association and QOS limits let a job start now (its pending reason
//! if not) and whether they refuse a submission, with Slurm's precedence: the partition QOS
//! before the job's QOS (unless the job's has `OverPartQOS`), a limit a QOS sets shadowing the
//! same association limit, `Max*` association limits inherited from the nearest association
//! that sets one, and `Grp*` limits checked on every association up to root.

use sluice_cluster::{AssocId, AssocLimits, PartitionId, PartitionState, Qos, QosId, TresLimits};

use super::reason::{Limit, LimitReason, Scope};
use super::start::INFINITE_MINUTES;
use super::tres::TresLayout;
use crate::engine::Engine;
use crate::error::SubmitError;
use crate::job::{Job, Reason};
use crate::queue::QueueRecord;

/// One job in one partition, as the limits see it.
pub(super) struct Subject<'a> {
    user: &'a str,
    /// QOS whose limits apply, in precedence order.
    qos: Vec<QosId>,
    /// The job's association, then each above it.
    path: Vec<AssocId>,
    time_limit: Option<u64>,
    /// The TRES the job asks for, in the layout.
    pub(super) tres: Vec<u64>,
}

impl Engine {
    /// Why `job` may not start in `part` now: the partition's state, its array's throttle, then (with
    /// `AccountingStorageEnforce=limits`) the first limit it is over. `None` if it may start.
    pub(crate) fn limit_reason(&self, job: &Job, part: PartitionId) -> Option<Reason> {
        match self.cluster.partitions[part.index()].access.state {
            PartitionState::Down => return Some(Reason::PartitionDown),
            PartitionState::Inactive => return Some(Reason::PartitionInactive),
            PartitionState::Up | PartitionState::Drain => {}
        }
        if let Some(reason) = self.array_throttle_reason(job) {
            return Some(reason);
        }
        if !self.limits.enforce.limits || !self.limits.any {
            return None;
        }
        let s = self.subject(job, part);
        self.per_job_limit(&s)
            .or_else(|| self.running_limit(&s))
            .map(Reason::Limit)
    }

    /// Whether the record's job is held by its limits or partition state this pass, setting
    /// its reason if so (the main loop goes on to the next job, as Slurm's does).
    pub(crate) fn held_by_limits(&mut self, rec: &QueueRecord) -> bool {
        let Some(reason) = self.limit_reason(&self.jobs[&rec.job], rec.partition) else {
            return false;
        };
        self.jobs.get_mut(&rec.job).expect("queued job").reason = reason;
        true
    }

    /// Refuses a submission over a submit count (`MaxSubmitJobsPerUser`, `GrpSubmitJobs`,
    /// association `MaxSubmitJobs`, `GrpSubmitJobs`), or over a per-job limit when a QOS that
    /// applies has `DenyOnLimit`; without it such a job is accepted and pends with the reason.
    pub(crate) fn check_submit_limits(&self, job: &Job) -> Result<(), SubmitError> {
        if !self.limits.enforce.limits || !self.limits.any {
            return Ok(());
        }
        let s = self.subject(job, job.partitions[0]);
        if let Some(reason) = self.submit_limit(&s) {
            return Err(SubmitError::AccountingPolicy(reason));
        }
        let deny = s.qos.iter().any(|q| {
            self.cluster
                .qos
                .get(q.index())
                .is_some_and(|r| r.deny_on_limit)
        });
        match self.per_job_limit(&s) {
            Some(reason) if deny => Err(SubmitError::AccountingPolicy(reason)),
            _ => Ok(()),
        }
    }

    /// A job that gives no time limit gets its partition's default, cut to the `MaxWall` that
    /// applies (Slurm sets the limit to `MaxWall` when the partition allows more).
    pub(crate) fn time_limit_within_wall(
        &self,
        (assoc, qos, part): (AssocId, QosId, PartitionId),
        limit: Option<u64>,
    ) -> Option<u64> {
        if !self.limits.enforce.limits || !self.limits.any {
            return limit;
        }
        let qos = self.qos_order(qos, part);
        let path = self.assoc_path(assoc);
        let wall = Self::first_qos_in(&self.cluster.qos, &qos, |q| {
            q.limits.max_wall.and_then(|w| w.seconds())
        })
        .map(|(_, w)| w)
        .or_else(|| self.nearest_assoc(&path, |l| l.max_wall.and_then(|w| w.seconds())));
        match (limit, wall) {
            (Some(l), Some(w)) => Some(l.min(w)),
            (None, w) => w,
            (l, None) => l,
        }
    }

    /// The QOS counted for a job in `part`: the job's and the partition's, in precedence order.
    pub(crate) fn qos_order(&self, qos: QosId, part: PartitionId) -> Vec<QosId> {
        match self.cluster.partitions[part.index()].qos {
            Some(pq) if pq != qos => {
                let over = self
                    .cluster
                    .qos
                    .get(qos.index())
                    .is_some_and(|q| q.over_part_qos);
                if over { vec![qos, pq] } else { vec![pq, qos] }
            }
            _ => vec![qos],
        }
    }

    /// The job's association and every one above it, up to root.
    pub(crate) fn assoc_path(&self, assoc: AssocId) -> Vec<AssocId> {
        let mut path = Vec::new();
        let mut cur = Some(assoc);
        while let Some(a) = cur {
            path.push(a);
            cur = self
                .cluster
                .associations
                .get(a.index())
                .and_then(|r| r.parent);
        }
        path
    }

    /// The TRES a job asks for: CPUs, memory over its minimum nodes, nodes, GRES per node
    /// times nodes, cluster licenses.
    pub(crate) fn requested_tres(&self, job: &Job) -> Vec<u64> {
        let nodes = u64::from(job.spec.min_nodes.max(1));
        let names = self.lic.names();
        self.limits.layout.amounts(
            (job.cpus(), job.spec.memory_per_node_mb * nodes, nodes),
            job.gres
                .records
                .iter()
                .map(|r| (r.name.as_str(), u64::from(r.per_node) * nodes)),
            job.demand
                .licenses
                .iter()
                .filter_map(|(i, n)| Some((names.get(*i)?.as_str(), u64::from(*n)))),
        )
    }

    pub(super) fn subject<'j>(&self, job: &'j Job, part: PartitionId) -> Subject<'j> {
        Subject {
            user: &job.spec.user,
            qos: self.qos_order(job.qos, part),
            path: self.assoc_path(job.assoc),
            time_limit: job.time_limit,
            tres: self.requested_tres(job),
        }
    }

    /// The first limit on the job alone it is over: `MaxWall`, `MaxTRESPerJob`,
    /// `MaxTRESMinsPerJob`, `MaxTRESPerNode`, and `MaxTRESPerUser` (a job bigger than a user
    /// may ever run).
    fn per_job_limit(&self, s: &Subject<'_>) -> Option<LimitReason> {
        let wall = self.qos_or_assoc(
            s,
            |q| q.limits.max_wall.and_then(|w| w.seconds()),
            |a| a.max_wall.and_then(|w| w.seconds()),
        );
        if let Some((scope, max)) = wall
            && s.time_limit.is_none_or(|t| t > max)
        {
            return Some(LimitReason::of(scope, Limit::MaxWall));
        }
        let minutes = s.time_limit.map(|t| t.div_ceil(60));
        let layout = &self.limits.layout;
        let nodes = TresLayout::nodes(&s.tres);
        for (i, &asked) in s.tres.iter().enumerate() {
            let tres = layout.kind(i);
            let reason = |scope, limit| LimitReason { scope, limit, tres };
            let per_job = self.tres_qos_or_assoc(
                s,
                i,
                |q| &q.limits.max_tres_per_job,
                |a| &a.max_tres_per_job,
            );
            if let Some((scope, max)) = per_job
                && asked > max
            {
                return Some(reason(scope, Limit::TresPerJob));
            }
            let mins = self.tres_qos_or_assoc(
                s,
                i,
                |q| &q.limits.max_tres_mins_per_job,
                |a| &a.max_tres_mins_per_job,
            );
            let used_mins = minutes.map_or(if asked > 0 { u64::MAX } else { 0 }, |m| {
                asked.saturating_mul(m)
            });
            if let Some((scope, max)) = mins
                && used_mins > max
            {
                return Some(reason(scope, Limit::TresMinsPerJob));
            }
            let per_node = self.limits.per_node.then(|| {
                self.tres_qos_or_assoc(
                    s,
                    i,
                    |q| &q.limits.max_tres_per_node,
                    |a| &a.max_tres_per_node,
                )
            });
            if let Some(Some((scope, max))) = per_node
                && layout.per_node(i, asked, nodes).is_some_and(|n| n > max)
            {
                return Some(reason(scope, Limit::TresPerNode));
            }
            if let Some((_, max)) = self.tres_qos(s, i, |q| &q.limits.max_tres_per_user)
                && asked > max
            {
                return Some(reason(Scope::Qos, Limit::TresPerUser));
            }
        }
        None
    }

    /// The first limit on what is running (or has run) that the job's start would go over:
    /// running jobs per user (or association), `GrpJobs`, `GrpWall`, then per TRES
    /// `MaxTRESPerUser`, `GrpTRES`, `GrpTRESMins`, `GrpTRESRunMins`.
    fn running_limit(&self, s: &Subject<'_>) -> Option<LimitReason> {
        let l = &self.limits;
        let own = s.path[0];
        match Self::first_qos_in(&self.cluster.qos, &s.qos, |q| q.limits.max_jobs_per_user) {
            Some((q, max)) => {
                if l.qos_user(q, s.user).map_or(0, |c| c.jobs) >= max {
                    return Some(LimitReason::of(Scope::Qos, Limit::Jobs));
                }
            }
            None => {
                if let Some(max) = self.nearest_assoc(&s.path, |a| a.max_jobs)
                    && l.assoc(own).map_or(0, |c| c.jobs) >= max
                {
                    return Some(LimitReason::of(Scope::Assoc, Limit::Jobs));
                }
            }
        }
        let grp_jobs = self.grp_over(
            s,
            (
                |q: &Qos| q.limits.grp_jobs.map(u64::from),
                |a: &AssocLimits| a.grp_jobs.map(u64::from),
            ),
            (
                |q| l.qos(q).map_or(0, |c| u64::from(c.jobs)),
                |a| l.assoc(a).map_or(0, |c| u64::from(c.jobs)),
            ),
            |used, max| used >= max,
        );
        if let Some(scope) = grp_jobs {
            return Some(LimitReason::of(scope, Limit::GrpJobs));
        }
        if let Some(scope) = self.grp_wall(s) {
            return Some(LimitReason::of(scope, Limit::GrpWall));
        }
        let now = self.clock.now();
        let minutes = s.time_limit.map_or(INFINITE_MINUTES, |t| t.div_ceil(60));
        for (i, &asked) in s.tres.iter().enumerate() {
            let tres = l.layout.kind(i);
            if let Some((q, max)) = self.tres_qos(s, i, |q| &q.limits.max_tres_per_user)
                && l.qos_user(q, s.user).map_or(0, |c| c.tres(i)) + asked > max
            {
                return Some(LimitReason {
                    scope: Scope::Qos,
                    limit: Limit::TresPerUser,
                    tres,
                });
            }
            let layout = &l.layout;
            let grp = self.grp_over(
                s,
                (
                    |q: &Qos| layout.limit(&q.limits.grp_tres, i),
                    |a: &AssocLimits| layout.limit(&a.grp_tres, i),
                ),
                (
                    |q| l.qos(q).map_or(0, |c| c.tres(i)),
                    |a| l.assoc(a).map_or(0, |c| c.tres(i)),
                ),
                |used, max| used + asked > max,
            );
            if let Some(scope) = grp {
                return Some(LimitReason {
                    scope,
                    limit: Limit::GrpTres,
                    tres,
                });
            }
            let job_mins = asked.saturating_mul(minutes);
            if let Some(limit) = self.tres_minutes_limit(s, i, job_mins, now) {
                return Some(LimitReason {
                    scope: limit.0,
                    limit: limit.1,
                    tres,
                });
            }
        }
        None
    }

    /// The first submit count the job would go over.
    fn submit_limit(&self, s: &Subject<'_>) -> Option<LimitReason> {
        let l = &self.limits;
        match Self::first_qos_in(&self.cluster.qos, &s.qos, |q| {
            q.limits.max_submit_jobs_per_user
        }) {
            Some((q, max)) => {
                if l.qos_user(q, s.user).map_or(0, |c| c.submitted) >= max {
                    return Some(LimitReason::of(Scope::Qos, Limit::SubmitJobs));
                }
            }
            None => {
                if let Some(max) = self.nearest_assoc(&s.path, |a| a.max_submit_jobs)
                    && l.assoc(s.path[0]).map_or(0, |c| c.submitted) >= max
                {
                    return Some(LimitReason::of(Scope::Assoc, Limit::SubmitJobs));
                }
            }
        }
        self.grp_over(
            s,
            (
                |q: &Qos| q.limits.grp_submit_jobs.map(u64::from),
                |a: &AssocLimits| a.grp_submit_jobs.map(u64::from),
            ),
            (
                |q| l.qos(q).map_or(0, |c| u64::from(c.submitted)),
                |a| l.assoc(a).map_or(0, |c| u64::from(c.submitted)),
            ),
            |used, max| used >= max,
        )
        .map(|scope| LimitReason::of(scope, Limit::GrpSubmitJobs))
    }

    /// Whether a group limit holds the job: the first QOS that sets it decides alone, else
    /// every association on the path that sets it; `over(used, max)` compares.
    pub(super) fn grp_over(
        &self,
        s: &Subject<'_>,
        (qos_limit, assoc_limit): (
            impl Fn(&Qos) -> Option<u64>,
            impl Fn(&AssocLimits) -> Option<u64>,
        ),
        (qos_used, assoc_used): (impl Fn(QosId) -> u64, impl Fn(AssocId) -> u64),
        over: impl Fn(u64, u64) -> bool,
    ) -> Option<Scope> {
        if let Some((q, max)) = Self::first_qos_in(&self.cluster.qos, &s.qos, &qos_limit) {
            return over(qos_used(q), max).then_some(Scope::Qos);
        }
        s.path
            .iter()
            .filter_map(|a| {
                let limits = &self.cluster.associations.get(a.index())?.limits;
                assoc_limit(limits).map(|max| (*a, max))
            })
            .any(|(a, max)| over(assoc_used(a), max))
            .then_some(Scope::Assoc)
    }

    /// A limit from the first QOS that sets it, else the nearest association that does.
    fn qos_or_assoc<T>(
        &self,
        s: &Subject<'_>,
        qos: impl Fn(&Qos) -> Option<T>,
        assoc: impl Fn(&AssocLimits) -> Option<T>,
    ) -> Option<(Scope, T)> {
        Self::first_qos_in(&self.cluster.qos, &s.qos, qos)
            .map(|(_, v)| (Scope::Qos, v))
            .or_else(|| {
                self.nearest_assoc(&s.path, assoc)
                    .map(|v| (Scope::Assoc, v))
            })
    }

    /// [`Engine::qos_or_assoc`] for entry `i` of a TRES limit.
    fn tres_qos_or_assoc(
        &self,
        s: &Subject<'_>,
        i: usize,
        qos: impl Fn(&Qos) -> &TresLimits,
        assoc: impl Fn(&AssocLimits) -> &TresLimits,
    ) -> Option<(Scope, u64)> {
        let layout = &self.limits.layout;
        self.qos_or_assoc(
            s,
            |q| layout.limit(qos(q), i),
            |a| layout.limit(assoc(a), i),
        )
    }

    /// Entry `i` of a QOS-only TRES limit, with the QOS that sets it.
    fn tres_qos(
        &self,
        s: &Subject<'_>,
        i: usize,
        qos: impl Fn(&Qos) -> &TresLimits,
    ) -> Option<(QosId, u64)> {
        let layout = &self.limits.layout;
        Self::first_qos_in(&self.cluster.qos, &s.qos, |q| layout.limit(qos(q), i))
    }

    fn first_qos_in<T>(
        all: &[Qos],
        order: &[QosId],
        get: impl Fn(&Qos) -> Option<T>,
    ) -> Option<(QosId, T)> {
        order
            .iter()
            .find_map(|q| all.get(q.index()).and_then(&get).map(|v| (*q, v)))
    }

    /// The limit the nearest association on `path` sets (`Max*` limits are inherited).
    fn nearest_assoc<T>(
        &self,
        path: &[AssocId],
        get: impl Fn(&AssocLimits) -> Option<T>,
    ) -> Option<T> {
        path.iter().find_map(|a| {
            self.cluster
                .associations
                .get(a.index())
                .and_then(|r| get(&r.limits))
        })
    }
}
