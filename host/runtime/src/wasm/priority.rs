//! The priority world over a component instance: columns lent to the guest, answers brought back.

use sluice_policy::{Factor, JobTable, Priorities, PriorityContext, Share};
use wasmtime::Store;
use wasmtime::component::{Component, HasSelf, Linker};

use super::bindings::priority::{
    PriorityPolicy, PriorityPolicyPre, exports::sluice::policy::priority as w,
};
use super::instance::{HostState, WasmInstance, World};
use crate::backend::PriorityBackend;
use crate::error::Fault;

impl World for PriorityPolicy {
    type Pre = PriorityPolicyPre<HostState>;
    fn pre(linker: &mut Linker<HostState>, component: &Component) -> wasmtime::Result<Self::Pre> {
        PriorityPolicy::add_to_linker::<_, HasSelf<_>>(linker, |s| s)?;
        linker.define_unknown_imports_as_traps(component)?;
        PriorityPolicyPre::new(linker.instantiate_pre(component)?)
    }
    fn instantiate(pre: &Self::Pre, store: &mut Store<HostState>) -> wasmtime::Result<Self> {
        pre.instantiate(store)
    }
}

fn with_context<R>(ctx: &PriorityContext, f: impl FnOnce(w::Context<'_>) -> R) -> R {
    let partitions: Vec<w::Partition<'_>> = ctx
        .partitions
        .iter()
        .map(|p| w::Partition {
            name: &p.name,
            priority_job_factor: p.priority_job_factor,
            priority_tier: p.priority_tier,
        })
        .collect();
    let qos: Vec<w::Qos<'_>> = ctx
        .qos
        .iter()
        .map(|q| w::Qos {
            name: &q.name,
            priority: q.priority,
            usage_factor: q.usage_factor,
        })
        .collect();
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
        partitions: &partitions,
        qos: &qos,
        associations: &associations,
    })
}

impl PriorityBackend for WasmInstance<PriorityPolicy> {
    fn compute(&mut self, ctx: &PriorityContext, jobs: &JobTable) -> Result<Priorities, Fault> {
        let table = w::JobTable {
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
        };
        let out = with_context(ctx, |c| {
            self.call(|b, s| b.sluice_policy_priority().call_compute(s, c, table))
        })?;
        Ok(Priorities {
            priority: out.priority,
            factors: out
                .factors
                .into_iter()
                .map(|f| Factor {
                    name: f.name,
                    values: f.values,
                })
                .collect(),
        })
    }

    fn shares(&mut self, ctx: &PriorityContext) -> Result<Vec<Share>, Fault> {
        let out = with_context(ctx, |c| {
            self.call(|b, s| b.sluice_policy_priority().call_shares(s, c))
        })?;
        Ok(out
            .into_iter()
            .map(|x| Share {
                association: x.association,
                norm_shares: x.norm_shares,
                effective_usage: x.effective_usage,
                fair_share: x.fair_share,
                level_fs: x.level_fs,
            })
            .collect())
    }
}
