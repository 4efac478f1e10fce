//! The priority world over a component instance: columns lent to the guest, answers brought back.
//!
//! WIT 0.1.0 sends the whole context with every `compute`. WIT 0.2.0 and later send the cluster's
//! static part with `set-cluster` only when it differs from what this instance last got, and then
//! just the clock and the usage column per call; [`PriorityV0_2`], [`PriorityV0_3`] (the same
//! interface in another package version), [`PriorityV0_4`] (whose job table crosses as two
//! lists instead of thirteen), [`PriorityV0_5`] (whose `compute` is told whether the factors
//! will be shown) and [`PriorityV0_6`] (sent only the associations a grown cluster appended)
//! keep that bookkeeping.

use sluice_policy::{Association, Partition, PriorityContext, Qos};

/// Conversions every version shares (the same record shapes in different generated modules):
/// partitions, QOS and the answers brought back.
macro_rules! shared {
    ($version:ident) => {
        use sluice_policy::{Factor, JobTable, Priorities, PriorityContext, Share};

        use crate::wasm::bindings::$version::priority::{
            PriorityPolicy, PriorityPolicyPre, exports::sluice::policy::priority as w,
        };
        use crate::wasm::instance::impl_world;

        impl_world!(PriorityPolicy, PriorityPolicyPre);

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
    };
}

/// A version's `compute` call, `call_compute`: `$ctx =>` alone for the versions before 0.5.0,
/// whose `compute` is not told and always answers with its factors; `$ctx => explain` for the
/// ones that pass `explain` after the job table.
macro_rules! call_compute {
    ($ctx:ident => $($explain:expr)?) => {
        fn call_compute(
            guest: &w::Guest,
            store: &mut wasmtime::Store<crate::wasm::instance::HostState>,
            $ctx: &PriorityContext,
            usage: &[f64],
            jobs: w::JobTable<'_>,
        ) -> wasmtime::Result<w::Priorities> {
            guest.call_compute(store, $ctx.now, usage, jobs $(, $explain)?)
        }
    };
}

/// A version's `add-associations`, `add_associations`, and whether it has one (`APPENDS`): `()`
/// for the versions before 0.6.0, which are sent the whole cluster when it grew; `(call)` for
/// the ones that are sent only the appended associations.
macro_rules! add_associations {
    () => {
        const APPENDS: bool = false;
        fn add_associations(
            _: &w::Guest,
            _: &mut wasmtime::Store<crate::wasm::instance::HostState>,
            _: &[w::Association<'_>],
        ) -> wasmtime::Result<()> {
            unreachable!("only called where APPENDS")
        }
    };
    (call) => {
        const APPENDS: bool = true;
        fn add_associations(
            guest: &w::Guest,
            store: &mut wasmtime::Store<crate::wasm::instance::HostState>,
            new: &[w::Association<'_>],
        ) -> wasmtime::Result<()> {
            guest.call_add_associations(store, new)
        }
    };
}

/// The job table lent to the guest as thirteen named columns (WIT 0.1.0 to 0.3.0). The buffers
/// of the concatenated layout are not needed: the host's own columns cross as they are.
macro_rules! named_columns {
    () => {
        fn job_table<'a>(jobs: &'a JobTable, _: &'a mut super::TypedColumns) -> w::JobTable<'a> {
            w::JobTable {
                job_id: &jobs.job_id,
                submit_time: &jobs.submit_time,
                eligible_time: &jobs.eligible_time,
                association: &jobs.association,
                partition: &jobs.partition,
                qos: &jobs.qos,
                nodes: &jobs.nodes,
                cpus: &jobs.cpus,
                memory_mb: &jobs.memory_mb,
                gpus: &jobs.gpus,
                time_limit: &jobs.time_limit,
                nice: &jobs.nice,
                site_factor: &jobs.site_factor,
            }
        }
    };
}

/// WIT 0.1.0: the whole context, usage included, crosses with every call.
mod v0_1 {
    shared!(v0_1);
    named_columns!();

    use crate::backend::PriorityBackend;
    use crate::error::Fault;
    use crate::wasm::instance::WasmInstance;

    fn with_context<R>(ctx: &PriorityContext, f: impl FnOnce(w::Context<'_>) -> R) -> R {
        let associations: Vec<w::Association<'_>> = ctx
            .associations
            .iter()
            .map(|a| w::Association {
                name: &a.name,
                parent: a.parent,
                is_user: a.is_user,
                raw_shares: a.raw_shares,
                raw_usage: a.raw_usage,
            })
            .collect();
        f(w::Context {
            now: ctx.now,
            cluster_nodes: ctx.cluster_nodes,
            cluster_cpus: ctx.cluster_cpus,
            partitions: &partitions(ctx),
            qos: &qos(ctx),
            associations: &associations,
        })
    }

    impl PriorityBackend for WasmInstance<PriorityPolicy> {
        fn compute(&mut self, ctx: &PriorityContext, jobs: &JobTable) -> Result<Priorities, Fault> {
            let mut not_needed = super::TypedColumns::default();
            let table = job_table(jobs, &mut not_needed);
            let out = with_context(ctx, |c| {
                self.call(|b, s| b.sluice_policy_priority().call_compute(s, c, table))
            })?;
            Ok(priorities(out))
        }

        fn shares(&mut self, ctx: &PriorityContext) -> Result<Vec<Share>, Fault> {
            let out = with_context(ctx, |c| {
                self.call(|b, s| b.sluice_policy_priority().call_shares(s, c))
            })?;
            Ok(shares(out))
        }
    }
}

/// A priority adapter that sends the cluster's static part once per change (WIT 0.2.0 and
/// later, whose priority interfaces differ only in how the job table crosses and what `compute`
/// is told): `$name` over the bindings of `$version`, with a `job_table` function in scope for
/// that version's table and a `call_compute` function for that version's `compute`.
macro_rules! cluster_sent {
    ($version:ident, $name:ident) => {
        shared!($version);

        use super::SentCluster;
        use crate::backend::PriorityBackend;
        use crate::error::Fault;
        use crate::wasm::instance::WasmInstance;

        /// A priority component of this WIT version and what it was last told about the
        /// cluster.
        pub struct $name {
            instance: WasmInstance<PriorityPolicy>,
            /// The static part the live instance holds; `None` when it holds none for sure.
            sent: Option<SentCluster>,
            /// The usage column, kept so that a call does not allocate it afresh.
            usage: Vec<f64>,
            /// The concatenated job columns (WIT 0.4.0 and later), kept for the same reason.
            columns: super::TypedColumns,
        }

        impl $name {
            /// Wraps a freshly created instance, which has not been sent a cluster yet.
            pub fn new(instance: WasmInstance<PriorityPolicy>) -> Self {
                Self {
                    instance,
                    sent: None,
                    usage: Vec::new(),
                    columns: super::TypedColumns::default(),
                }
            }

            /// Sends `set-cluster` unless the live instance already holds `ctx`'s static part (or,
            /// where the version has it, `add-associations` when the part grew only by appended
            /// associations), and fills the usage column for the call that follows.
            fn prepare(&mut self, ctx: &PriorityContext) -> Result<(), Fault> {
                let incarnation = self.instance.live_incarnation()?;
                // Forgotten first: if a call faults, the instance is discarded with it.
                let mut held = self.sent.take().filter(|s| s.incarnation == incarnation);
                let current = held
                    .as_mut()
                    .is_some_and(|s| s.is_current(incarnation, ctx));
                let appended = held.as_ref().filter(|_| APPENDS && !current);
                let appended = appended.and_then(|s| s.appended_in(ctx));
                self.sent = match (held, appended) {
                    (Some(sent), _) if current => Some(sent),
                    (Some(mut sent), Some(old)) => {
                        let new: Vec<w::Association<'_>> =
                            ctx.associations[old..].iter().map(association).collect();
                        self.instance
                            .call(|b, s| add_associations(b.sluice_policy_priority(), s, &new))?;
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

        fn association(a: &sluice_policy::Association) -> w::Association<'_> {
            w::Association {
                name: &a.name,
                parent: a.parent,
                is_user: a.is_user,
                raw_shares: a.raw_shares,
            }
        }

        impl PriorityBackend for $name {
            fn compute(
                &mut self,
                ctx: &PriorityContext,
                jobs: &JobTable,
            ) -> Result<Priorities, Fault> {
                self.prepare(ctx)?;
                let (usage, jobs) = (&self.usage, job_table(jobs, &mut self.columns));
                let out = self
                    .instance
                    .call(|b, s| call_compute(b.sluice_policy_priority(), s, ctx, usage, jobs))?;
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
    };
}

/// WIT 0.2.0: the static part once per change, the clock and the usage column per call.
mod v0_2 {
    cluster_sent!(v0_2, PriorityV0_2);
    named_columns!();
    call_compute!(ctx =>);
    add_associations!();
}

/// WIT 0.3.0: as 0.2.0 (only the selection interface changed).
mod v0_3 {
    cluster_sent!(v0_3, PriorityV0_3);
    named_columns!();
    call_compute!(ctx =>);
    add_associations!();
}

/// The job table's columns concatenated by type into two lists (WIT 0.4.0 and later).
macro_rules! typed_columns {
    () => {
        fn job_table<'a>(
            jobs: &'a JobTable,
            columns: &'a mut super::TypedColumns,
        ) -> w::JobTable<'a> {
            jobs.concat_columns(&mut columns.u32s, &mut columns.s64s);
            w::JobTable {
                rows: jobs.len() as u32,
                u32_columns: &columns.u32s,
                s64_columns: &columns.s64s,
            }
        }
    };
}

/// WIT 0.4.0: as 0.3.0, with the job table's columns concatenated by type into two lists.
mod v0_4 {
    cluster_sent!(v0_4, PriorityV0_4);
    typed_columns!();
    call_compute!(ctx =>);
    add_associations!();
}

/// WIT 0.5.0: as 0.4.0, with `compute` told whether the factors will be shown.
mod v0_5 {
    cluster_sent!(v0_5, PriorityV0_5);
    typed_columns!();
    call_compute!(ctx => !ctx.skip_factors);
    add_associations!();
}

/// WIT 0.6.0: as 0.5.0, with associations appended to the cluster the instance holds
/// (`add-associations`) instead of the whole cluster sent again.
mod v0_6 {
    cluster_sent!(v0_6, PriorityV0_6);
    typed_columns!();
    call_compute!(ctx => !ctx.skip_factors);
    add_associations!(call);
}

pub use v0_2::PriorityV0_2;
pub use v0_3::PriorityV0_3;
pub use v0_4::PriorityV0_4;
pub use v0_5::PriorityV0_5;
pub use v0_6::PriorityV0_6;

/// The job table's columns concatenated by element type, as WIT 0.4.0 and later send them
/// ([`sluice_policy::job_columns`]); unused by the versions that send named columns.
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
                        && a.is_user == b.is_user
                        && a.name == b.name
                })
    }
}
