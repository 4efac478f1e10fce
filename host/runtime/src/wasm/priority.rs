//! The priority world over a component instance: columns lent to the guest, answers brought back.
//!
//! The cluster's static part crosses with `set-cluster` only when it differs from what this
//! instance last got (or with `add-associations` when it only grew), then each call carries
//! just the clock, the usage column and the job table; [`PriorityComponent`] keeps that
//! bookkeeping.

use sluice_policy::{
    Association, Factor, JobTable, Partition, Priorities, PriorityContext, Qos, Share,
};

use crate::backend::PriorityBackend;
use crate::error::Fault;
use crate::wasm::bindings::priority::{
    PriorityPolicy, PriorityPolicyPre, exports::sluice::policy::priority as w,
};
use crate::wasm::instance::{WasmInstance, impl_world};

impl_world!(PriorityPolicy, PriorityPolicyPre);

/// A priority component and what it was last told about the cluster.
pub struct PriorityComponent {
    instance: WasmInstance<PriorityPolicy>,
    /// The static part the live instance holds; `None` when it holds none for sure.
    sent: Option<SentCluster>,
    /// The usage column, kept so that a call does not allocate it afresh.
    usage: Vec<f64>,
    /// The concatenated job columns, kept for the same reason.
    columns: TypedColumns,
}

impl PriorityComponent {
    /// Wraps a freshly created instance, which has not been sent a cluster yet.
    pub fn new(instance: WasmInstance<PriorityPolicy>) -> Self {
        Self {
            instance,
            sent: None,
            usage: Vec::new(),
            columns: TypedColumns::default(),
        }
    }

    /// Sends `set-cluster` unless the live instance already holds `ctx`'s static part (or
    /// `add-associations` when the part grew only by appended associations), and fills the
    /// usage column for the call that follows.
    fn prepare(&mut self, ctx: &PriorityContext) -> Result<(), Fault> {
        let incarnation = self.instance.live_incarnation()?;
        // Forgotten first: if a call faults, the instance is discarded with it.
        let mut held = self.sent.take().filter(|s| s.incarnation == incarnation);
        let current = held
            .as_mut()
            .is_some_and(|s| s.is_current(incarnation, ctx));
        let appended = held
            .as_ref()
            .filter(|_| !current)
            .and_then(|s| s.appended_in(ctx));
        self.sent = match (held, appended) {
            (Some(sent), _) if current => Some(sent),
            (Some(mut sent), Some(old)) => {
                let new: Vec<w::Association<'_>> =
                    ctx.associations[old..].iter().map(association).collect();
                self.instance
                    .call(|b, s| b.sluice_policy_priority().call_add_associations(s, &new))?;
                sent.append(ctx);
                Some(sent)
            }
            _ => {
                let associations: Vec<w::Association<'_>> =
                    ctx.associations.iter().map(association).collect();
                let cluster = w::Cluster {
                    cluster_nodes: ctx.cluster_nodes,
                    cluster_cpus: ctx.cluster_cpus,
                    partitions: &partitions(ctx),
                    qos: &qos(ctx),
                    associations: &associations,
                };
                self.instance
                    .call(|b, s| b.sluice_policy_priority().call_set_cluster(s, cluster))?;
                Some(SentCluster::of(incarnation, ctx))
            }
        };
        self.usage.clear();
        self.usage
            .extend(ctx.associations.iter().map(|a| a.raw_usage));
        Ok(())
    }
}

impl PriorityBackend for PriorityComponent {
    fn compute(&mut self, ctx: &PriorityContext, jobs: &JobTable) -> Result<Priorities, Fault> {
        self.prepare(ctx)?;
        jobs.concat_columns(&mut self.columns.u32s, &mut self.columns.s64s);
        let table = w::JobTable {
            rows: jobs.len() as u32,
            u32_columns: &self.columns.u32s,
            s64_columns: &self.columns.s64s,
        };
        let usage = &self.usage;
        let explain = !ctx.skip_factors;
        let out = self.instance.call(|b, s| {
            b.sluice_policy_priority()
                .call_compute(s, ctx.now, usage, table, explain)
        })?;
        Ok(priorities(out))
    }

    fn shares(&mut self, ctx: &PriorityContext) -> Result<Vec<Share>, Fault> {
        self.prepare(ctx)?;
        let usage = &self.usage;
        let out = self
            .instance
            .call(|b, s| b.sluice_policy_priority().call_shares(s, ctx.now, usage))?;
        Ok(shares(out))
    }
}

fn association(a: &Association) -> w::Association<'_> {
    w::Association {
        name: &a.name,
        parent: a.parent,
        is_user: a.is_user,
        raw_shares: a.raw_shares,
        priority: a.priority,
    }
}

fn partitions(ctx: &PriorityContext) -> Vec<w::Partition<'_>> {
    ctx.partitions
        .iter()
        .map(|p| w::Partition {
            name: &p.name,
            priority_job_factor: p.priority_job_factor,
            priority_tier: p.priority_tier,
        })
        .collect()
}

fn qos(ctx: &PriorityContext) -> Vec<w::Qos<'_>> {
    ctx.qos
        .iter()
        .map(|q| w::Qos {
            name: &q.name,
            priority: q.priority,
            usage_factor: q.usage_factor,
        })
        .collect()
}

fn priorities(out: w::Priorities) -> Priorities {
    Priorities {
        priority: out.priority,
        factors: out
            .factors
            .into_iter()
            .map(|f| Factor {
                name: f.name,
                values: f.values,
            })
            .collect(),
    }
}

fn shares(out: Vec<w::Share>) -> Vec<Share> {
    out.into_iter()
        .map(|x| Share {
            association: x.association,
            norm_shares: x.norm_shares,
            effective_usage: x.effective_usage,
            fair_share: x.fair_share,
            level_fs: x.level_fs,
        })
        .collect()
}

/// The job table's columns concatenated by element type, as the contract sends them
/// ([`sluice_policy::job_columns`]).
#[derive(Default)]
struct TypedColumns {
    u32s: Vec<u32>,
    s64s: Vec<i64>,
}

/// The static part of a priority context as it was last sent to one instance: everything but
/// the clock and the usage.
struct SentCluster {
    /// Which instance got it ([`super::instance::WasmInstance::live_incarnation`]).
    incarnation: u64,
    /// The last nonzero cluster version found to name what was sent (0: none yet).
    cluster_version: u64,
    cluster_nodes: u32,
    cluster_cpus: u32,
    partitions: Vec<Partition>,
    qos: Vec<Qos>,
    /// The associations as sent; their `raw_usage` is not part of the static part and is zero.
    associations: Vec<Association>,
}

impl SentCluster {
    fn of(incarnation: u64, ctx: &PriorityContext) -> Self {
        Self {
            incarnation,
            cluster_version: ctx.cluster_version,
            cluster_nodes: ctx.cluster_nodes,
            cluster_cpus: ctx.cluster_cpus,
            partitions: ctx.partitions.clone(),
            qos: ctx.qos.clone(),
            associations: ctx
                .associations
                .iter()
                .map(|a| Association {
                    raw_usage: 0.0,
                    ..a.clone()
                })
                .collect(),
        }
    }

    /// Whether instance `incarnation` holds `ctx`'s static part: at once when the context names
    /// the cluster version last found current, else compared by value (and the version then
    /// remembered). Usage factors are compared by bit pattern so that a NaN does not make every
    /// pass resend the cluster.
    fn is_current(&mut self, incarnation: u64, ctx: &PriorityContext) -> bool {
        if self.incarnation != incarnation {
            return false;
        }
        if ctx.names_cluster(self.cluster_version) {
            return true;
        }
        let same = self.same_static_part(ctx);
        if same {
            self.cluster_version = ctx.cluster_version;
        }
        same
    }

    /// Whether `ctx`'s static part is the one sent, compared field by field.
    fn same_static_part(&self, ctx: &PriorityContext) -> bool {
        self.associations.len() == ctx.associations.len() && self.same_but_appended(ctx)
    }

    /// Where `ctx`'s new associations begin, when its static part is the one sent with
    /// associations appended (at least one) and nothing else changed.
    fn appended_in(&self, ctx: &PriorityContext) -> Option<usize> {
        let old = self.associations.len();
        (ctx.associations.len() > old && self.same_but_appended(ctx)).then_some(old)
    }

    /// Counts the associations `ctx` appended to the sent static part as sent too.
    fn append(&mut self, ctx: &PriorityContext) {
        let old = self.associations.len();
        self.associations
            .extend(ctx.associations[old..].iter().map(|a| Association {
                raw_usage: 0.0,
                ..a.clone()
            }));
        self.cluster_version = ctx.cluster_version;
    }

    /// Whether `ctx`'s static part is the one sent, but for associations after the sent ones.
    fn same_but_appended(&self, ctx: &PriorityContext) -> bool {
        self.cluster_nodes == ctx.cluster_nodes
            && self.cluster_cpus == ctx.cluster_cpus
            && self.partitions == ctx.partitions
            && self.qos.len() == ctx.qos.len()
            && self.qos.iter().zip(&ctx.qos).all(|(a, b)| {
                a.name == b.name
                    && a.priority == b.priority
                    && a.usage_factor.to_bits() == b.usage_factor.to_bits()
            })
            && self.associations.len() <= ctx.associations.len()
            && self
                .associations
                .iter()
                .zip(&ctx.associations)
                .all(|(a, b)| {
                    a.parent == b.parent
                        && a.raw_shares == b.raw_shares
                        && a.priority == b.priority
                        && a.is_user == b.is_user
                        && a.name == b.name
                })
    }
}
