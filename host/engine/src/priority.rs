//! One priority call per pass: the pending queue as columns out, one validated priority per row back.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use sluice_cluster::Shares;
use sluice_policy::{Association, Factor, JobTable, Partition, PriorityContext};

use crate::engine::Engine;
use crate::job::JobId;
use crate::queue::QueueRecord;

/// RawShares that stand for `Fairshare=parent` in the contract (Slurm's `SLURMDB_FS_USE_PARENT`).
pub const FS_USE_PARENT: u32 = 0x7FFF_FFFF;

/// Cluster versions handed out in this process: one per context built from scratch, never
/// reused, so no two engines name different clusters alike.
static CLUSTER_VERSIONS: AtomicU64 = AtomicU64::new(0);

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

impl Engine {
    /// The context a priority pass shares between jobs, with usage as the engine keeps it.
    pub fn priority_context(&self) -> PriorityContext {
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
            qos: self.qos_view.clone(),
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

    /// [`Engine::priority_context`] from the last calculation with the clock and usage brought up
    /// to date; built afresh (with a new cluster version) when associations were added.
    /// Partitions, QOS and the association tree are configuration, fixed for the engine's life,
    /// so only their usage is copied again and the cluster version stays.
    fn refreshed_context(&mut self) -> PriorityContext {
        match self.context_cache.take() {
            Some(mut ctx) if ctx.associations.len() == self.cluster.associations.len() => {
                ctx.now = self.clock.now();
                for (a, &usage) in ctx.associations.iter_mut().zip(self.usage.all()) {
                    a.raw_usage = usage;
                }
                ctx
            }
            _ => self.priority_context(),
        }
    }

    /// The job table a priority call gets for `jobs` (one row per job and partition), with each
    /// row's (job, position in its partition list).
    pub fn job_table(&self, eligible: &[JobId]) -> (JobTable, Vec<(JobId, u16)>) {
        // A job has a row per partition it was submitted to; most name one.
        let mut t = JobTable::with_capacity(eligible.len());
        let mut rows = Vec::with_capacity(eligible.len());
        self.fill_job_table(eligible, &mut t, &mut rows);
        (t, rows)
    }

    /// [`Engine::job_table`] into `t` and `rows`, which are cleared first.
    fn fill_job_table(&self, eligible: &[JobId], t: &mut JobTable, rows: &mut Vec<(JobId, u16)>) {
        t.clear();
        rows.clear();
        let gpu = self.nodes.gres_kind("gpu");
        for &id in eligible {
            let job = &self.jobs[&id];
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
                t.qos.push(job.qos.0.min(self.qos_view.len() as u32 - 1));
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

    /// Asks the priority policy for every eligible job and stores the answers on the jobs.
    /// `None` when the answer was refused, which leaves every job pending this pass.
    pub(crate) fn prioritize(&mut self, eligible: &[JobId], now: i64) -> Option<()> {
        let ctx = self.refreshed_context();
        let (mut table, mut rows) = std::mem::take(&mut self.job_table_buffers);
        self.fill_job_table(eligible, &mut table, &mut rows);
        let answer = self.policies.priority.compute(&ctx, &table);
        self.context_cache = Some(ctx);
        let stored = self.store_priorities(answer, &rows, now);
        self.job_table_buffers = (table, rows);
        stored
    }

    /// Whether a pass may order `eligible` without the priority call it is due: one job in one
    /// partition, no priority threshold to check it against, and a replay that asked for it.
    pub(crate) fn orders_without_priority(&self, eligible: &[JobId]) -> bool {
        self.config.defer_lone_priority
            && self.config.params.bf_min_prio_reserve == 0
            && matches!(eligible, [id] if self.jobs[id].partitions.len() == 1)
    }

    /// Makes the call a pass put off for its lone job, if that job is still pending. The tick's
    /// clock and usage have not moved since, so the job stores the priority an immediate call
    /// would have given it; a job that started needs none, and the decay that was due is
    /// settled either way, as the immediate call would have settled it.
    pub(crate) fn settle_deferred_priority(&mut self) {
        let Some(id) = self.priority_owed.take() else {
            return;
        };
        let now = self.clock.now();
        let settled = !self.jobs.get(&id).is_some_and(|job| job.is_pending())
            || self.prioritize(&[id], now).is_some();
        if settled {
            self.priorities_due = false;
        }
    }

    /// Stores a priority answer on the jobs of `rows`, or gives `None` (counted as a fault)
    /// when the answer breaks the contract.
    fn store_priorities(
        &mut self,
        answer: sluice_policy::Priorities,
        rows: &[(JobId, u16)],
        now: i64,
    ) -> Option<()> {
        if answer.priority.len() != rows.len() || answer.check(rows.len()).is_err() {
            self.faults.priority += 1;
            return None;
        }
        for (i, &(id, pos)) in rows.iter().enumerate() {
            let job = self.jobs.get_mut(&id).expect("eligible job exists");
            job.priority[pos as usize] = answer.priority[i];
            job.priority_time = Some(now);
        }
        self.last_priorities = PriorityReport {
            rows: rows
                .iter()
                .map(|&(id, pos)| (id, self.jobs[&id].partitions[pos as usize].0))
                .collect(),
            priority: answer.priority,
            factors: answer.factors,
        };
        Some(())
    }

    /// Queue records from the priorities the jobs already hold (one per job and partition).
    pub(crate) fn stored_priorities(&self, eligible: &[JobId]) -> Vec<QueueRecord> {
        let mut records = Vec::with_capacity(eligible.len());
        for &id in eligible {
            for pos in 0..self.jobs[&id].partitions.len() {
                records.push(self.queue_record(id, pos as u16));
            }
        }
        records
    }

    fn queue_record(&self, id: JobId, pos: u16) -> QueueRecord {
        let job = &self.jobs[&id];
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
}
