//! Owns no state: the queue (squeue), priority factors (sprio) and shares (sshare -l) reports.
//!
//! Reports the CLI shows: the queue (squeue), priority factors (sprio) and shares (sshare -l).

use std::collections::BTreeMap;

use serde::Serialize;
use sluice_cluster::time::format_duration;
use sluice_cluster::{NodeId, Shares};

use crate::engine::Engine;
use crate::job::{JobId, JobState};

/// One `squeue` row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueueRow {
    /// JOBID.
    pub job_id: JobId,
    /// PARTITION (the one it runs in, else the requested list joined by `,`).
    pub partition: String,
    /// NAME.
    pub name: String,
    /// USER.
    pub user: String,
    /// ACCOUNT.
    pub account: String,
    /// ST (compact state code).
    pub st: &'static str,
    /// STATE (long name).
    pub state: &'static str,
    /// TIME: seconds run so far.
    pub time: u64,
    /// TIME_LIMIT in seconds; `None` is UNLIMITED.
    pub time_limit: Option<u64>,
    /// NODES: allocated, or requested minimum while pending.
    pub nodes: u32,
    /// Priority (highest over its partitions).
    pub priority: u32,
    /// START_TIME: actual, or backfill's estimate while pending.
    pub start_time: Option<i64>,
    /// Reason (pending) — `squeue` prints it in place of the node list.
    pub reason: &'static str,
    /// NODELIST of a running job.
    pub nodelist: String,
    /// The array and index, for a task of a job array.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub array: Option<crate::array::ArrayTask>,
}

impl QueueRow {
    /// The `NODELIST(REASON)` column as squeue prints it.
    pub fn nodelist_reason(&self) -> String {
        if self.st == "PD" {
            format!("({})", self.reason)
        } else {
            self.nodelist.clone()
        }
    }
}

/// One `sprio` row: a pending job in one partition with its weighted factors.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PriorityRow {
    /// JOBID.
    pub job_id: JobId,
    /// PARTITION.
    pub partition: String,
    /// USER.
    pub user: String,
    /// ACCOUNT.
    pub account: String,
    /// PRIORITY.
    pub priority: u32,
    /// Weighted factors by sprio column name (AGE, FAIRSHARE, JOBSIZE, PARTITION, QOS, …).
    pub factors: BTreeMap<String, f64>,
}

/// One `sshare -l` row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShareRow {
    /// Account (for a user row, the account it sits under).
    pub account: String,
    /// User, for a user row.
    pub user: Option<String>,
    /// Depth below root (sshare indents by it).
    pub depth: u32,
    /// RawShares; `None` for `parent`.
    pub raw_shares: Option<u32>,
    /// NormShares.
    pub norm_shares: f64,
    /// RawUsage (decayed CPU-seconds).
    pub raw_usage: f64,
    /// EffectvUsage.
    pub effective_usage: f64,
    /// FairShare.
    pub fair_share: f64,
    /// LevelFS.
    pub level_fs: f64,
}

impl Engine {
    /// Pending and running jobs as `squeue` lists them: running first by id, then pending in
    /// scheduling order (reservation, tier, priority, submit time, id).
    pub fn queue_rows(&self) -> Vec<QueueRow> {
        let now = self.clock.now();
        let mut running: Vec<JobId> = self.running.iter().copied().collect();
        running.sort_unstable();
        let mut pending: Vec<JobId> = self.pending.iter().copied().collect();
        let key = |id: &JobId| {
            let job = &self.jobs[id];
            let tier = job
                .partitions
                .iter()
                .map(|p| self.cluster.partitions[p.index()].priority_tier)
                .max();
            let prio = job.priority.iter().copied().max().unwrap_or(0);
            (
                std::cmp::Reverse(job.reservation.is_some()),
                std::cmp::Reverse(tier),
                std::cmp::Reverse(prio),
                job.submit_time,
                *id,
            )
        };
        pending.sort_by_key(key);
        running
            .into_iter()
            .chain(pending)
            .map(|id| {
                let job = &self.jobs[&id];
                let partition = match &job.alloc {
                    Some(a) => self.cluster.partitions[a.partition.index()].name.clone(),
                    None => job
                        .partitions
                        .iter()
                        .map(|p| self.cluster.partitions[p.index()].name.as_str())
                        .collect::<Vec<_>>()
                        .join(","),
                };
                let names: Vec<&str> = job.alloc.as_ref().map_or(Vec::new(), |a| {
                    a.placement
                        .nodes
                        .iter()
                        .map(|n| self.nodes.node(NodeId(*n)).name.as_str())
                        .collect()
                });
                let running = matches!(job.state, JobState::Running | JobState::Completing);
                QueueRow {
                    job_id: id,
                    partition,
                    name: job.spec.name.clone(),
                    user: job.spec.user.clone(),
                    account: self.account_of(job.assoc),
                    st: job.state.short(),
                    state: job.state.as_str(),
                    time: if running {
                        (now - job.start_time.unwrap_or(now)).max(0) as u64
                    } else {
                        0
                    },
                    time_limit: job.time_limit,
                    nodes: job
                        .alloc
                        .as_ref()
                        .map_or(job.spec.min_nodes, |a| a.placement.nodes.len() as u32),
                    priority: job.priority.iter().copied().max().unwrap_or(0),
                    start_time: job.start_time,
                    reason: job.reason.as_str(),
                    nodelist: sluice_hostlist::compress(&names),
                    array: job.spec.array,
                }
            })
            .collect()
    }

    /// Pending jobs' priority factors from the last accepted priority answer, as `sprio -l` lists
    /// them (one row per job and partition).
    pub fn priority_rows(&self) -> Vec<PriorityRow> {
        let report = &self.priorities.last;
        report
            .rows
            .iter()
            .enumerate()
            // Held, released or requeued since the calculation: not shown until recalculated.
            .filter(|(_, (id, _))| {
                self.jobs
                    .get(id)
                    .is_some_and(|j| j.is_pending() && j.priority_time.is_some())
            })
            .map(|(i, &(id, part))| {
                let job = &self.jobs[&id];
                PriorityRow {
                    job_id: id,
                    partition: self.cluster.partitions[part as usize].name.clone(),
                    user: job.spec.user.clone(),
                    account: self.account_of(job.assoc),
                    priority: report.priority[i],
                    factors: report
                        .factors
                        .iter()
                        .map(|f| (f.name.clone(), f.values[i]))
                        .collect(),
                }
            })
            .collect()
    }

    /// The association tree with fair-share standing, as `sshare -l` lists it (depth first).
    pub fn share_rows(&mut self) -> Vec<ShareRow> {
        let ctx = self.priority_context();
        let shares = self.policies.priority.shares(&ctx);
        let by_assoc: BTreeMap<u32, &sluice_policy::Share> = shares
            .iter()
            .filter(|s| (s.association as usize) < ctx.associations.len())
            .map(|s| (s.association, s))
            .collect();
        let assocs = &self.cluster.associations;
        let mut out = Vec::new();
        let mut stack = vec![(sluice_cluster::AssocId::ROOT, 0u32)];
        while let Some((id, depth)) = stack.pop() {
            let Some(a) = assocs.get(id.index()) else {
                continue;
            };
            let share = by_assoc.get(&id.0);
            let (account, user) = if a.is_user() {
                (
                    a.parent
                        .map_or(String::new(), |p| assocs[p.index()].name().to_string()),
                    Some(a.name().to_string()),
                )
            } else {
                (a.name().to_string(), None)
            };
            out.push(ShareRow {
                account,
                user,
                depth,
                raw_shares: match a.shares {
                    Shares::Raw(s) => Some(s),
                    Shares::Parent => None,
                },
                norm_shares: share.map_or(0.0, |s| s.norm_shares),
                raw_usage: self.usage.all()[id.index()],
                effective_usage: share.map_or(0.0, |s| s.effective_usage),
                fair_share: share.map_or(0.0, |s| s.fair_share),
                level_fs: share.map_or(0.0, |s| s.level_fs),
            });
            for child in a.children.iter().rev() {
                stack.push((*child, depth + 1));
            }
        }
        out
    }
}

/// Formats queue rows like `squeue`'s default output.
pub fn format_queue(rows: &[QueueRow]) -> String {
    let mut out = format!(
        "{:>8} {:>9} {:>8} {:>8} {:>2} {:>10} {:>6} {}\n",
        "JOBID", "PARTITION", "NAME", "USER", "ST", "TIME", "NODES", "NODELIST(REASON)"
    );
    for r in rows {
        out.push_str(&format!(
            "{:>8} {:>9.9} {:>8.8} {:>8.8} {:>2} {:>10} {:>6} {}\n",
            r.job_id,
            r.partition,
            r.name,
            r.user,
            r.st,
            format_duration(r.time),
            r.nodes,
            r.nodelist_reason()
        ));
    }
    out
}
