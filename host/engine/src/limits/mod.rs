//! Owns the counts association and QOS limits are held to: running and submitted jobs and the
//! TRES running jobs hold, per QOS, per QOS and user, and per association (a job counts in its
//! own association and every one above it, as Slurm's `acct_policy_add_job_submit` and
//! `acct_policy_job_begin` count them).
//!
//! `used` keeps the decayed TRES-minutes and wall time `GrpTRESMins` and `GrpWall` are held
//! to, charged by `accrue` as usage is.
//!
//! `check` decides with these counts whether a job may start (its pending reason if not) and
//! whether a submission is refused (`time_check` for the limits on time used and left);
//! `access` applies a partition's access rules at submission. Both loops ask [`crate::Engine`]'s `limit_reason` before `try_start`, so the main loop,
//! backfill and a replay hold jobs identically.

mod access;
mod accrue;
mod check;
pub mod reason;
mod start;
mod time_check;
mod tres;
mod used;

use std::collections::HashMap;

use sluice_cluster::{AccountingEnforce, AssocId, AssocLimits, Cluster, QosId};

use crate::job::JobId;
use tres::TresLayout;
pub use used::SpentUse;
use used::{Run, Used};

/// Jobs and TRES counted against one QOS, QOS and user, or association.
#[derive(Clone, Debug, Default)]
pub(crate) struct Count {
    /// Running jobs (CONFIGURING and RUNNING; a job stops counting when it ends).
    pub jobs: u32,
    /// Pending plus running jobs.
    pub submitted: u32,
    /// TRES the running jobs hold, in the [`TresLayout`]; empty until a job starts.
    pub tres: Vec<u64>,
    /// Σ TRES × end of time limit (seconds since the epoch) over the running jobs, from which
    /// the TRES-seconds left on their time limits follow at any time (`GrpTRESRunMins`).
    tres_end: Vec<u128>,
}

impl Count {
    /// The running jobs' amount of TRES entry `i`.
    pub fn tres(&self, i: usize) -> u64 {
        self.tres.get(i).copied().unwrap_or(0)
    }

    /// TRES-minutes of entry `i` left on the running jobs' time limits at `now` (Slurm's
    /// `grp_used_tres_run_secs / 60`).
    pub fn run_mins(&self, i: usize, now: i64) -> u64 {
        let end = self.tres_end.get(i).copied().unwrap_or(0);
        let spent = u128::from(self.tres(i)) * u128::from(now.max(0) as u64);
        u64::try_from(end.saturating_sub(spent) / 60).unwrap_or(u64::MAX)
    }
}

/// What a running job holds and is counted in.
#[derive(Clone, Debug)]
struct Running {
    /// The QOS counted (the job's and its partition's).
    qos: Vec<QosId>,
    /// The TRES it holds, in the layout.
    tres: Vec<u64>,
    /// When its time limit ends.
    end: u64,
}

/// What one job is counted in, so that its end takes back exactly what it added.
#[derive(Clone, Debug)]
struct Charged {
    user: String,
    /// The QOS counted for its submission: the job's and its first partition's.
    qos: Vec<QosId>,
    /// Its association and those above it.
    assocs: Vec<AssocId>,
    /// While it runs: what it holds.
    running: Option<Running>,
}

/// The limit counts of every QOS, user and association.
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    /// `AccountingStorageEnforce` of the cluster.
    pub enforce: AccountingEnforce,
    /// Whether any QOS or association sets a limit: without one no check can hold a job, and
    /// passes skip them.
    pub any: bool,
    layout: TresLayout,
    /// Whether some QOS or association sets `MaxTRESPerNode`, `GrpTRESRunMins`: checks of a
    /// kind no one sets are skipped.
    per_node: bool,
    run_mins: bool,
    /// Decayed TRES-minutes and wall time, for `GrpTRESMins` and `GrpWall`.
    used: Used,
    counts: Counts,
    jobs: HashMap<JobId, Charged>,
}

/// The counts themselves, apart from the jobs charged to them, so that a job's record is read
/// in place while its counts change (no copy of its user and associations per start or end).
#[derive(Clone, Debug, Default)]
struct Counts {
    qos: Vec<Count>,
    /// Per QOS (by index), per user: looked up by `&str`, so a count that exists costs no
    /// allocation.
    qos_user: Vec<HashMap<String, Count>>,
    assoc: Vec<Count>,
}

impl Counts {
    /// Applies `f` to every count a job of `user` under `qos` and `assocs` adds to, created as
    /// needed (associations made after the engine started included).
    fn each(
        &mut self,
        user: &str,
        qos: &[QosId],
        assocs: &[AssocId],
        mut f: impl FnMut(&mut Count),
    ) {
        for q in qos {
            let i = q.index();
            if self.qos.len() <= i {
                self.qos.resize(i + 1, Count::default());
            }
            if self.qos_user.len() <= i {
                self.qos_user.resize(i + 1, HashMap::new());
            }
            f(&mut self.qos[i]);
            let users = &mut self.qos_user[i];
            match users.get_mut(user) {
                Some(count) => f(count),
                None => f(users.entry(user.to_owned()).or_default()),
            }
        }
        for a in assocs {
            if self.assoc.len() <= a.index() {
                self.assoc.resize(a.index() + 1, Count::default());
            }
            f(&mut self.assoc[a.index()]);
        }
    }
}

impl Limits {
    /// No job counted yet, on `cluster`'s QOS and associations.
    pub fn new(cluster: &Cluster) -> Self {
        // A QOS list is access, checked at submission, and holds no job.
        let any = cluster.qos.iter().any(|q| q.limits != Default::default())
            || cluster.associations.iter().any(|a| {
                let limits = AssocLimits {
                    qos: None,
                    ..a.limits.clone()
                };
                limits != Default::default()
            });
        let qos_sets =
            |f: fn(&sluice_cluster::QosLimits) -> bool| cluster.qos.iter().any(|q| f(&q.limits));
        let assoc_sets =
            |f: fn(&AssocLimits) -> bool| cluster.associations.iter().any(|a| f(&a.limits));
        Self {
            enforce: cluster.enforce,
            any,
            per_node: qos_sets(|l| !l.max_tres_per_node.is_empty())
                || assoc_sets(|l| !l.max_tres_per_node.is_empty()),
            run_mins: qos_sets(|l| !l.grp_tres_run_mins.is_empty())
                || assoc_sets(|l| !l.grp_tres_run_mins.is_empty()),
            layout: TresLayout::of(cluster),
            used: Used::of_cluster(cluster),
            counts: Counts {
                qos: vec![Count::default(); cluster.qos.len()],
                qos_user: vec![HashMap::new(); cluster.qos.len()],
                assoc: vec![Count::default(); cluster.associations.len()],
            },
            jobs: HashMap::new(),
        }
    }

    /// The decayed use `GrpTRESMins` and `GrpWall` are held to, per QOS and per association
    /// (by index; an association's over its subtree), as a restart keeps it.
    pub fn used_export(&self) -> (Vec<SpentUse>, Vec<SpentUse>) {
        self.used.export(|i| self.layout.name(i))
    }

    /// Gives back use a [`Limits::used_export`] took, for the QOS and associations named.
    pub fn used_restore(&mut self, qos: &[(QosId, SpentUse)], assocs: &[(AssocId, SpentUse)]) {
        let layout = &self.layout;
        self.used
            .restore(qos, assocs, layout.len(), |i| layout.name(i));
    }

    /// What QOS `q` counts.
    pub fn qos(&self, q: QosId) -> Option<&Count> {
        self.counts.qos.get(q.index())
    }

    /// What QOS `q` counts for `user`.
    pub fn qos_user(&self, q: QosId, user: &str) -> Option<&Count> {
        self.counts.qos_user.get(q.index())?.get(user)
    }

    /// What association `a` (and the subtree below it) counts.
    pub fn assoc(&self, a: AssocId) -> Option<&Count> {
        self.counts.assoc.get(a.index())
    }

    /// A job entered the queue (submitted, or taken back after a restart).
    pub fn enter(&mut self, job: JobId, user: &str, qos: Vec<QosId>, assocs: Vec<AssocId>) {
        if self.jobs.contains_key(&job) {
            return;
        }
        self.counts.each(user, &qos, &assocs, |c| c.submitted += 1);
        self.jobs.insert(
            job,
            Charged {
                user: user.to_owned(),
                qos,
                assocs,
                running: None,
            },
        );
    }

    /// A queued job started holding `tres` until `end` (its time limit's end), counted against
    /// the QOS in `qos`.
    pub fn start(&mut self, job: JobId, qos: Vec<QosId>, tres: Vec<u64>, end: u64) {
        let Some(charged) = self.jobs.get_mut(&job) else {
            return;
        };
        if charged.running.is_some() {
            return;
        }
        let width = self.layout.len();
        self.counts.each(&charged.user, &qos, &charged.assocs, |c| {
            c.jobs += 1;
            c.tres.resize(width, 0);
            c.tres_end.resize(width, 0);
            for (i, add) in tres.iter().enumerate() {
                c.tres[i] += add;
                c.tres_end[i] += u128::from(*add) * u128::from(end);
            }
        });
        charged.running = Some(Running { qos, tres, end });
    }

    /// A running job's time limit now ends at `end`: what it holds counts until then.
    pub fn move_end(&mut self, job: JobId, end: u64) {
        let Some(charged) = self.jobs.get_mut(&job) else {
            return;
        };
        let Some(Running {
            qos,
            tres,
            end: old,
        }) = charged.running.as_mut()
        else {
            return;
        };
        let old = std::mem::replace(old, end);
        self.counts.each(&charged.user, qos, &charged.assocs, |c| {
            if c.tres_end.len() < tres.len() {
                c.tres_end.resize(tres.len(), 0);
            }
            for (i, held) in tres.iter().enumerate() {
                let held = u128::from(*held);
                c.tres_end[i] =
                    c.tres_end[i].saturating_sub(held * u128::from(old)) + held * u128::from(end);
            }
        });
    }

    /// A running job stopped holding what it held (it ended or was requeued).
    pub fn stop(&mut self, job: JobId) {
        let Some(charged) = self.jobs.get_mut(&job) else {
            return;
        };
        let Some(Running { qos, tres, end }) = charged.running.take() else {
            return;
        };
        let width = tres.len();
        self.counts.each(&charged.user, &qos, &charged.assocs, |c| {
            c.jobs = c.jobs.saturating_sub(1);
            // A count made after the job started (a grown tree) holds nothing of it yet.
            if c.tres.len() < width {
                c.tres.resize(width, 0);
                c.tres_end.resize(width, 0);
            }
            for (i, sub) in tres.iter().enumerate() {
                c.tres[i] = c.tres[i].saturating_sub(*sub);
                c.tres_end[i] = c.tres_end[i].saturating_sub(u128::from(*sub) * u128::from(end));
            }
        });
    }

    /// Charges a running job's `run` to the decayed use of its QOS and associations now, or
    /// (for a job that is ending) at the next decay, as fair-share usage is charged.
    pub fn charge_use(&mut self, job: JobId, run: Run, ending: bool) {
        let Some(Charged {
            assocs,
            running: Some(r),
            ..
        }) = self.jobs.get(&job)
        else {
            return;
        };
        if ending {
            self.used
                .charge_at_next_decay(r.qos.clone(), assocs.clone(), r.tres.clone(), run);
        } else {
            self.used.charge(&r.qos, assocs, &r.tres, run);
        }
    }

    /// A job left the queue for good (it ended or was cancelled).
    pub fn leave(&mut self, job: JobId) {
        self.stop(job);
        let Some(charged) = self.jobs.remove(&job) else {
            return;
        };
        self.counts
            .each(&charged.user, &charged.qos, &charged.assocs, |c| {
                c.submitted = c.submitted.saturating_sub(1)
            });
    }
}
