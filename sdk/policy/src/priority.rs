//! Job priority: the pending queue as columns in, one priority per job out.

use serde::{Deserialize, Serialize};

use crate::contract::ContractError;

/// A node of the association tree with its share and decayed usage (host-owned).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Association {
    /// Account name, or user name for a user leaf.
    pub name: String,
    /// Parent association; `None` only for root.
    pub parent: Option<u32>,
    /// True for a user leaf.
    pub is_user: bool,
    /// RawShares as configured.
    pub raw_shares: u32,
    /// Association priority, inherited from the nearest ancestor that sets one (0: none).
    pub priority: u32,
    /// Decayed usage in CPU-seconds, including every descendant.
    pub raw_usage: f64,
}

/// A partition as the priority factors see it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Partition {
    /// Partition name.
    pub name: String,
    /// PriorityJobFactor.
    pub priority_job_factor: u32,
    /// PriorityTier.
    pub priority_tier: u32,
}

/// A QOS as the priority factors see it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Qos {
    /// QOS name.
    pub name: String,
    /// QOS priority.
    pub priority: u32,
    /// UsageFactor.
    pub usage_factor: f64,
}

/// What one priority pass shares between jobs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PriorityContext {
    /// Current time on the engine's clock, Unix seconds.
    pub now: i64,
    /// Nodes in the cluster.
    pub cluster_nodes: u32,
    /// CPUs in the cluster.
    pub cluster_cpus: u32,
    /// Partitions jobs point into.
    pub partitions: Vec<Partition>,
    /// QOS jobs point into.
    pub qos: Vec<Qos>,
    /// The association tree jobs point into.
    pub associations: Vec<Association>,
    /// Names the cluster this context describes (everything but `now` and usage): two contexts
    /// with the same nonzero value have the same sizes, partitions, QOS and associations, so a
    /// host that keeps a sandboxed policy's copy of them, or a policy that keeps something built
    /// from them (multifactor's Fair Tree), need not compare them again. 0 promises nothing. In
    /// a component the SDK numbers each `set-cluster` it receives.
    #[serde(default)]
    pub cluster_version: u64,
    /// True when nobody will look at the per-factor breakdown (a replay): a policy may then
    /// answer [`Priorities::factors`] empty and spare building it, but must give the same
    /// priorities. False by default, so a context built without thinking of it is explained.
    #[serde(default)]
    pub skip_factors: bool,
}

impl PriorityContext {
    /// For each association, whether it is the one called `name` (an account only, with
    /// `accounts_only`) or lies below it: what a policy favouring a project asks. A cyclic or
    /// dangling parent chain counts as not below, so a malformed tree cannot hang the pass.
    pub fn below(&self, name: &str, accounts_only: bool) -> Vec<bool> {
        let assocs = &self.associations;
        (0..assocs.len())
            .map(|i| {
                let mut at = Some(i);
                for _ in 0..=assocs.len() {
                    let Some(j) = at.filter(|&j| j < assocs.len()) else {
                        return false;
                    };
                    if assocs[j].name == name && !(accounts_only && assocs[j].is_user) {
                        return true;
                    }
                    at = assocs[j].parent.map(|p| p as usize);
                }
                false
            })
            .collect()
    }

    /// Whether this context names the cluster that cluster version `known` was found to name:
    /// the same version, and not 0 (which promises nothing). Whoever keeps something built from
    /// a context asks this before comparing the context with what it kept.
    pub fn names_cluster(&self, known: u64) -> bool {
        self.cluster_version != 0 && self.cluster_version == known
    }
}

/// The pending jobs as columns; row `i` of every column is the same job.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobTable {
    /// Job ids.
    pub job_id: Vec<u32>,
    /// Submit times, Unix seconds.
    pub submit_time: Vec<i64>,
    /// Times the jobs became eligible; age counts from here.
    pub eligible_time: Vec<i64>,
    /// User association index of each job.
    pub association: Vec<u32>,
    /// Partition index of each row.
    pub partition: Vec<u32>,
    /// QOS index of each job.
    pub qos: Vec<u32>,
    /// Requested nodes (minimum).
    pub nodes: Vec<u32>,
    /// Requested CPUs in total.
    pub cpus: Vec<u32>,
    /// Requested memory in MB in total.
    pub memory_mb: Vec<u64>,
    /// Requested GPUs in total.
    pub gpus: Vec<u32>,
    /// Time limits in seconds.
    pub time_limit: Vec<u32>,
    /// Nice values.
    pub nice: Vec<i32>,
    /// Admin-set site factors.
    pub site_factor: Vec<i64>,
}

impl JobTable {
    /// An empty table with room for `rows` rows in every column.
    pub fn with_capacity(rows: usize) -> Self {
        Self {
            job_id: Vec::with_capacity(rows),
            submit_time: Vec::with_capacity(rows),
            eligible_time: Vec::with_capacity(rows),
            association: Vec::with_capacity(rows),
            partition: Vec::with_capacity(rows),
            qos: Vec::with_capacity(rows),
            nodes: Vec::with_capacity(rows),
            cpus: Vec::with_capacity(rows),
            memory_mb: Vec::with_capacity(rows),
            gpus: Vec::with_capacity(rows),
            time_limit: Vec::with_capacity(rows),
            nice: Vec::with_capacity(rows),
            site_factor: Vec::with_capacity(rows),
        }
    }

    /// Removes every row, keeping each column's room (a host refills one table per call).
    pub fn clear(&mut self) {
        self.job_id.clear();
        self.submit_time.clear();
        self.eligible_time.clear();
        self.association.clear();
        self.partition.clear();
        self.qos.clear();
        self.nodes.clear();
        self.cpus.clear();
        self.memory_mb.clear();
        self.gpus.clear();
        self.time_limit.clear();
        self.nice.clear();
        self.site_factor.clear();
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.job_id.len()
    }

    /// Whether the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.job_id.is_empty()
    }

    /// Checks that every column has the same length and every index points into `ctx`.
    pub fn check(&self, ctx: &PriorityContext) -> Result<(), ContractError> {
        let n = self.len();
        let lens = [
            self.submit_time.len(),
            self.eligible_time.len(),
            self.association.len(),
            self.partition.len(),
            self.qos.len(),
            self.nodes.len(),
            self.cpus.len(),
            self.memory_mb.len(),
            self.gpus.len(),
            self.time_limit.len(),
            self.nice.len(),
            self.site_factor.len(),
        ];
        for len in lens {
            ContractError::check_length("job table column", n, len)?;
        }
        let in_range = |col: &[u32], len: usize| col.iter().all(|i| (*i as usize) < len);
        if !in_range(&self.association, ctx.associations.len())
            || !in_range(&self.partition, ctx.partitions.len())
            || !in_range(&self.qos, ctx.qos.len())
        {
            return Err(ContractError::Invalid(
                "job table index out of range of the context".into(),
            ));
        }
        Ok(())
    }
}

/// One factor's weighted contribution for every job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Factor {
    /// Factor name, as `sprio` heads its column (AGE, FAIRSHARE, JOBSIZE, …).
    pub name: String,
    /// Weighted value per job, in job-table order.
    pub values: Vec<f64>,
}

/// A priority pass's answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Priorities {
    /// One priority per job, in job-table order.
    pub priority: Vec<u32>,
    /// Optional per-factor breakdown.
    pub factors: Vec<Factor>,
}

impl Priorities {
    /// Checks the answer against the contract for a table of `jobs` rows.
    pub fn check(&self, jobs: usize) -> Result<(), ContractError> {
        ContractError::check_length("priority list", jobs, self.priority.len())?;
        for f in &self.factors {
            ContractError::check_length("priority factor", jobs, f.values.len())?;
        }
        Ok(())
    }
}

/// One association's fair-share standing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Share {
    /// Index into the context's associations.
    pub association: u32,
    /// Shares normalised among siblings and down the tree.
    pub norm_shares: f64,
    /// Usage normalised the same way.
    pub effective_usage: f64,
    /// FairShare factor in [0, 1].
    pub fair_share: f64,
    /// Level FS = S / U.
    pub level_fs: f64,
}

/// A job priority policy.
pub trait PriorityPolicy {
    /// Computes one priority per pending job (see `priority.compute` in the WIT).
    fn compute(&mut self, ctx: &PriorityContext, jobs: &JobTable) -> Priorities;

    /// Reports fair-share standing per association; empty when the policy has none.
    fn shares(&mut self, _ctx: &PriorityContext) -> Vec<Share> {
        Vec::new()
    }
}

impl<T: PriorityPolicy + ?Sized> PriorityPolicy for Box<T> {
    fn compute(&mut self, ctx: &PriorityContext, jobs: &JobTable) -> Priorities {
        (**self).compute(ctx, jobs)
    }
    fn shares(&mut self, ctx: &PriorityContext) -> Vec<Share> {
        (**self).shares(ctx)
    }
}
