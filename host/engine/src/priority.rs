//! Owns priority calculation's state, and the pass that changes it: one policy call per pass.
//!
//! The state: the last answer (for `sprio`), whether a recalculation is due, the lone job's owed
//! call, the context and job table kept between calls. The pass sends the pending queue as
//! columns and gets one validated priority per row back.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use sluice_cluster::{Cluster, Shares};
use sluice_policy::{
    Association, Factor, JobTable, Partition, Priorities, PriorityContext, PriorityPolicy, Qos,
};

use crate::clock::Clock;
use crate::config::EngineConfig;
use crate::job_id::JobId;
use crate::job_map::JobMap;
use crate::node_state::NodeState;
use crate::queue::{self, QueueRecord};
use crate::stats::Faults;
use crate::usage::Usage;

/// RawShares that stand for `Fairshare=parent` in the contract (Slurm's `SLURMDB_FS_USE_PARENT`).
pub const FS_USE_PARENT: u32 = 0x7FFF_FFFF;

/// Cluster versions handed out in this process: one per context built from scratch, never
/// reused, so no two engines name different clusters alike.
static CLUSTER_VERSIONS: AtomicU64 = AtomicU64::new(0);

/// The cluster's QOS as the contract shows them: `normal` alone when none are configured.
pub(crate) fn contract_qos(cluster: &Cluster) -> Vec<Qos> {
    let mut qos: Vec<Qos> = cluster
        .qos
        .iter()
        .map(|q| Qos {
            name: q.name.clone(),
            priority: q.priority,
            usage_factor: q.usage_factor,
        })
        .collect();
    if qos.is_empty() {
        qos.push(Qos {
            name: "normal".into(),
            priority: 0,
            usage_factor: 1.0,
        });
    }
    qos
}

/// The last accepted priority answer, kept for `sprio`-like reports.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PriorityReport {
    /// (job, partition index) of each row.
    pub rows: Vec<(JobId, u32)>,
    /// Priority of each row.
    pub priority: Vec<u32>,
    /// Per-factor breakdown, as the policy gave it.
    pub factors: Vec<Factor>,
}

impl PriorityReport {
    /// Takes in the rows of a calculation of some jobs only, replacing those jobs' earlier
    /// rows; a factor one side lacks counts 0 on the rows of the other.
    fn merge(&mut self, newer: PriorityReport) {
        let jobs: std::collections::HashSet<JobId> = newer.rows.iter().map(|r| r.0).collect();
        let keep: Vec<bool> = self.rows.iter().map(|r| !jobs.contains(&r.0)).collect();
        retain_marked(&mut self.rows, &keep);
        retain_marked(&mut self.priority, &keep);
        for f in &mut self.factors {
            retain_marked(&mut f.values, &keep);
        }
        let old_len = self.rows.len();
        let added = newer.rows.len();
        self.rows.extend(newer.rows);
        self.priority.extend(newer.priority);
        for f in &mut self.factors {
            match newer.factors.iter().find(|n| n.name == f.name) {
                Some(n) => f.values.extend_from_slice(&n.values),
                None => f.values.resize(old_len + added, 0.0),
            }
        }
        for n in newer.factors {
            if !self.factors.iter().any(|f| f.name == n.name) {
                let mut values = vec![0.0; old_len];
                values.extend(n.values);
                self.factors.push(Factor {
                    name: n.name,
                    values,
                });
            }
        }
    }
}

/// Keeps the values whose mark is set (marks and values in the same order).
fn retain_marked<T>(values: &mut Vec<T>, keep: &[bool]) {
    let mut marks = keep.iter();
    values.retain(|_| marks.next().copied().unwrap_or(true));
}

/// What priority calculation keeps from pass to pass.
pub(crate) struct PriorityState {
    /// The last accepted answer, for `sprio`-like reports.
    pub last: PriorityReport,
    /// Whether the next pass recalculates every eligible job's priority: set at start-up, when
    /// usage decays (every PriorityCalcPeriod) and when the policies change.
    pub due: bool,
    /// The lone job whose priority call a pass put off ([`EngineConfig::defer_lone_priority`]).
    owed: Option<JobId>,
    /// The context of the last priority calculation, refreshed for the next one.
    context_cache: Option<PriorityContext>,
    /// The job table and its rows' (job, partition position) of the last priority call, kept
    /// so the next call refills them instead of allocating thirteen columns again.
    table: (JobTable, Vec<(JobId, u16)>),
}

impl PriorityState {
    /// Whether a pass put off a lone job's priority call
    /// ([`PriorityPass::settle_deferred`] makes it).
    pub fn owes_call(&self) -> bool {
        self.owed.is_some()
    }

    /// A state whose first pass calculates every eligible job's priority.
    pub fn new() -> Self {
        Self {
            last: PriorityReport::default(),
            due: true,
            owed: None,
            context_cache: None,
            table: Default::default(),
        }
    }
}

/// What a priority context, a job table and queue records are built from, read only: the
/// configuration, usage, the nodes' GRES kinds and the jobs.
#[derive(Clone, Copy)]
pub(crate) struct PriorityInputs<'a> {
    pub cluster: &'a Cluster,
    pub config: &'a EngineConfig,
    pub usage: &'a Usage,
    pub nodes: &'a NodeState,
    /// The QOS as the contract shows them (never empty).
    pub qos: &'a [Qos],
    /// The engine's clock: the context carries its time when a calculation is made.
    pub clock: &'a dyn Clock,
}

/// One priority calculation: the inputs it reads, and the state, jobs, policy and fault
/// counters it changes.
pub(crate) struct PriorityPass<'a> {
    pub inputs: PriorityInputs<'a>,
    pub state: &'a mut PriorityState,
    pub jobs: &'a mut JobMap,
    pub policy: &'a mut (dyn PriorityPolicy + Send),
    pub faults: &'a mut Faults,
}

impl PriorityInputs<'_> {
    /// The context a priority pass shares between jobs, with usage as the engine keeps it.
    pub fn context(&self) -> PriorityContext {
        let assocs = &self.cluster.associations;
        // An association without a priority of its own takes its nearest ancestor's, as
        // sacctmgr's Priority is inherited; parents come before their children.
        let mut inherited: Vec<u32> = Vec::with_capacity(assocs.len());
        for a in assocs {
            let parent = a.parent.and_then(|p| inherited.get(p.0 as usize).copied());
            inherited.push(if a.priority != 0 {
                a.priority
            } else {
                parent.unwrap_or(0)
            });
        }
        PriorityContext {
            now: self.clock.now(),
            cluster_version: CLUSTER_VERSIONS.fetch_add(1, Relaxed) + 1,
            cluster_nodes: self.cluster.nodes.len() as u32,
            cluster_cpus: self.cluster.total_cpus().min(u64::from(u32::MAX)) as u32,
            partitions: self
                .cluster
                .partitions
                .iter()
                .map(|p| Partition {
                    name: p.name.clone(),
                    priority_job_factor: u32::from(p.priority_job_factor),
                    priority_tier: u32::from(p.priority_tier),
                })
                .collect(),
            qos: self.qos.to_vec(),
            associations: assocs
                .iter()
                .enumerate()
                .map(|(i, a)| Association {
                    name: a.name().to_string(),
                    parent: a.parent.map(|p| p.0),
                    is_user: a.is_user(),
                    raw_shares: match a.shares {
                        Shares::Raw(s) => s,
                        Shares::Parent => FS_USE_PARENT,
                    },
                    priority: inherited[i],
                    raw_usage: self.usage.all()[i],
                })
                .collect(),
            skip_factors: self.config.skip_priority_factors,
        }
    }

    /// The job table a priority call gets for `eligible` (one row per job and partition), with
    /// each row's (job, position in its partition list).
    pub fn job_table(&self, jobs: &JobMap, eligible: &[JobId]) -> (JobTable, Vec<(JobId, u16)>) {
        // A job has a row per partition it was submitted to; most name one.
        let mut t = JobTable::with_capacity(eligible.len());
        let mut rows = Vec::with_capacity(eligible.len());
        self.fill_job_table(jobs, eligible, &mut t, &mut rows);
        (t, rows)
    }

    /// [`PriorityInputs::job_table`] into `t` and `rows`, which are cleared first.
    fn fill_job_table(
        &self,
        jobs: &JobMap,
        eligible: &[JobId],
        t: &mut JobTable,
        rows: &mut Vec<(JobId, u16)>,
    ) {
        t.clear();
        rows.clear();
        let gpu = self.nodes.gres_kind("gpu");
        for &id in eligible {
            let job = &jobs[&id];
            let gpus_per_node: u32 = job
                .gres_per_node
                .iter()
                .filter(|(k, _)| Some(*k) == gpu)
                .map(|(_, c)| *c)
                .sum();
            for (pos, p) in job.partitions.iter().enumerate() {
                rows.push((id, pos as u16));
                t.job_id.push(id);
                t.submit_time.push(job.submit_time);
                t.eligible_time
                    .push(job.eligible_time.unwrap_or(job.submit_time));
                t.association.push(job.assoc.0);
                t.partition.push(p.0);
                t.qos.push(job.qos.0.min(self.qos.len() as u32 - 1));
                t.nodes.push(job.spec.min_nodes.max(1));
                t.cpus.push(job.cpus().min(u64::from(u32::MAX)) as u32);
                t.memory_mb.push(
                    job.spec
                        .memory_per_node_mb
                        .saturating_mul(u64::from(job.spec.min_nodes.max(1))),
                );
                t.gpus
                    .push(gpus_per_node.saturating_mul(job.spec.min_nodes.max(1)));
                t.time_limit.push(
                    job.time_limit
                        .unwrap_or(u64::from(u32::MAX))
                        .min(u64::from(u32::MAX)) as u32,
                );
                t.nice.push(job.spec.nice);
                t.site_factor.push(job.spec.site_factor);
            }
        }
    }

    /// Queue records from the priorities the jobs already hold (one per job and partition).
    pub fn stored_priorities(&self, jobs: &JobMap, eligible: &[JobId]) -> Vec<QueueRecord> {
        let mut records = Vec::with_capacity(eligible.len());
        for &id in eligible {
            for pos in 0..jobs[&id].partitions.len() {
                records.push(self.queue_record(jobs, id, pos as u16));
            }
        }
        records
    }

    fn queue_record(&self, jobs: &JobMap, id: JobId, pos: u16) -> QueueRecord {
        let job = &jobs[&id];
        let partition = job.partitions[pos as usize];
        QueueRecord {
            job: id,
            partition,
            part_pos: pos,
            has_reservation: job.reservation.is_some(),
            tier: self.cluster.partitions[partition.index()].priority_tier,
            priority: job.priority[pos as usize],
            submit_time: job.submit_time,
        }
    }

    /// Whether a pass may order `eligible` without the priority call it is due: one job in one
    /// partition, no priority threshold to check it against, and a replay that asked for it.
    fn orders_without_priority(&self, jobs: &JobMap, eligible: &[JobId]) -> bool {
        self.config.defer_lone_priority
            && self.config.params.bf_min_prio_reserve == 0
            && matches!(eligible, [id] if jobs[id].partitions.len() == 1)
    }
}

impl PriorityPass<'_> {
    /// The sorted queue of `eligible` jobs, or `None` when the priority answer was refused.
    ///
    /// As in Slurm, passes order jobs by stored priorities: every eligible job's priority is
    /// recalculated when usage decays (each PriorityCalcPeriod) or when some eligible job has
    /// none yet (new, released, requeued); otherwise no priority call is made. A replay puts
    /// the call off while the queue is one job ([`EngineConfig::defer_lone_priority`]).
    pub fn order(&mut self, eligible: &[JobId], now: i64) -> Option<Vec<QueueRecord>> {
        let due = self.state.due
            || eligible
                .iter()
                .any(|id| self.jobs[id].priority_time.is_none());
        if due {
            if self.inputs.orders_without_priority(self.jobs, eligible) {
                self.state.owed = Some(eligible[0]);
            } else if !self.state.due && self.inputs.config.priority_new_jobs_alone {
                let fresh: Vec<JobId> = eligible
                    .iter()
                    .copied()
                    .filter(|id| self.jobs[id].priority_time.is_none())
                    .collect();
                self.prioritize(&fresh, now)?;
            } else {
                self.prioritize(eligible, now)?;
                self.state.due = false;
            }
        }
        let mut records = self.inputs.stored_priorities(self.jobs, eligible);
        queue::sort(&mut records);
        Some(records)
    }

    /// [`PriorityInputs::context`] from the last calculation with the clock and usage brought
    /// up to date; built afresh (with a new cluster version) when associations were added.
    /// Partitions, QOS and the association tree are configuration, fixed for the engine's life,
    /// so only their usage is copied again and the cluster version stays.
    fn refreshed_context(&mut self) -> PriorityContext {
        match self.state.context_cache.take() {
            Some(mut ctx) if ctx.associations.len() == self.inputs.cluster.associations.len() => {
                ctx.now = self.inputs.clock.now();
                for (a, &usage) in ctx.associations.iter_mut().zip(self.inputs.usage.all()) {
                    a.raw_usage = usage;
                }
                ctx
            }
            _ => self.inputs.context(),
        }
    }

    /// Asks the priority policy for every eligible job and stores the answers on the jobs.
    /// `None` when the answer was refused, which leaves every job pending this pass.
    pub(crate) fn prioritize(&mut self, eligible: &[JobId], now: i64) -> Option<()> {
        let ctx = self.refreshed_context();
        let (mut table, mut rows) = std::mem::take(&mut self.state.table);
        self.inputs
            .fill_job_table(self.jobs, eligible, &mut table, &mut rows);
        let answer = self.policy.compute(&ctx, &table);
        self.state.context_cache = Some(ctx);
        let stored = self.store_priorities(answer, &rows, now);
        self.state.table = (table, rows);
        stored
    }

    /// Makes the call a pass put off for its lone job, if that job is still pending. The tick's
    /// clock and usage have not moved since, so the job stores the priority an immediate call
    /// would have given it; a job that started needs none, and the decay that was due is
    /// settled either way, as the immediate call would have settled it.
    pub fn settle_deferred(&mut self) {
        let Some(id) = self.state.owed.take() else {
            return;
        };
        let now = self.inputs.clock.now();
        let settled = !self.jobs.get(&id).is_some_and(|job| job.is_pending())
            || self.prioritize(&[id], now).is_some();
        if settled {
            self.state.due = false;
        }
    }

    /// Stores a priority answer on the jobs of `rows`, or gives `None` (counted as a fault)
    /// when the answer breaks the contract.
    fn store_priorities(
        &mut self,
        answer: Priorities,
        rows: &[(JobId, u16)],
        now: i64,
    ) -> Option<()> {
        if answer.priority.len() != rows.len() || answer.check(rows.len()).is_err() {
            self.faults.priority += 1;
            return None;
        }
        for (i, &(id, pos)) in rows.iter().enumerate() {
            let job = self.jobs.get_mut(&id).expect("eligible job exists");
            job.priority[pos as usize] = job.spec.priority.unwrap_or(answer.priority[i]);
            job.priority_time = Some(now);
        }
        let report = PriorityReport {
            rows: rows
                .iter()
                .map(|&(id, pos)| (id, self.jobs[&id].partitions[pos as usize].0))
                .collect(),
            priority: answer.priority,
            factors: answer.factors,
        };
        if self.state.due || !self.inputs.config.priority_new_jobs_alone {
            self.state.last = report;
        } else {
            self.state.last.merge(report);
        }
        Some(())
    }
}
