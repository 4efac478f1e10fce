//! Handles that let an engine own "the priority policy" etc. while the host keeps the
//! [`PolicySet`] to swap generations: each handle locks the set for one call.
//!
//! Only the thread that drives the engine calls [`PolicySet::apply_staged`], between passes;
//! loads run elsewhere and only *stage*. That protocol, not the lock, is what guarantees a pass
//! never sees two generations; the lock only makes the sharing sound.

use std::sync::{Arc, Mutex, MutexGuard};

use sluice_policy::{
    Charge, Demand, GresNodeConfig, GresPolicy, HresLayer, HresPolicy, HresResource, JobRequest,
    JobTable, NodeDevices, NodeTable, PickRequest, PlaceMode, Placement, Priorities,
    PriorityContext, PriorityPolicy, SelectionPolicy, Share,
};

use crate::policy_set::PolicySet;

/// A policy set shared between the engine's handles and the host.
pub type SharedSet = Arc<Mutex<PolicySet>>;

fn lock(set: &SharedSet) -> MutexGuard<'_, PolicySet> {
    // A panic while holding the lock cannot leave a slot half-updated (publication is one
    // assignment), so a poisoned lock is still usable.
    set.lock().unwrap_or_else(|p| p.into_inner())
}

/// The priority slot of a shared set.
pub struct PriorityHandle(pub SharedSet);
/// The selection slot of a shared set.
pub struct SelectionHandle(pub SharedSet);
/// The GRES slot of a shared set.
pub struct GresHandle(pub SharedSet);
/// The HRES slot of a shared set.
pub struct HresHandle(pub SharedSet);

impl PriorityPolicy for PriorityHandle {
    fn compute(&mut self, ctx: &PriorityContext, jobs: &JobTable) -> Priorities {
        lock(&self.0).priority.compute(ctx, jobs)
    }
    fn shares(&mut self, ctx: &PriorityContext) -> Vec<Share> {
        lock(&self.0).priority.shares(ctx)
    }
}

impl SelectionPolicy for SelectionHandle {
    fn begin_pass(&mut self, nodes: &NodeTable) {
        lock(&self.0).selection.begin_pass(nodes)
    }
    fn place(&mut self, req: &JobRequest, mode: PlaceMode) -> Option<Placement> {
        lock(&self.0).selection.place(req, mode)
    }
    fn release(&mut self, job_id: u32, placement: &Placement) {
        lock(&self.0).selection.release(job_id, placement)
    }
}

impl GresPolicy for GresHandle {
    fn validate(&mut self, nodes: &[GresNodeConfig]) -> Vec<Result<(), String>> {
        lock(&self.0).gres.validate(nodes)
    }
    fn pick(&mut self, requests: &[PickRequest]) -> Vec<Vec<u32>> {
        lock(&self.0).gres.pick(requests)
    }
    fn env(&mut self, alloc: &NodeDevices, step: bool) -> Vec<(String, String)> {
        lock(&self.0).gres.env(alloc, step)
    }
}

impl HresPolicy for HresHandle {
    fn begin_pass(&mut self, resources: &[HresResource], layers: &[HresLayer]) {
        lock(&self.0).hres.begin_pass(resources, layers)
    }
    fn eligible(&mut self, demands: &[Demand], candidates: &[u64]) -> Vec<u64> {
        lock(&self.0).hres.eligible(demands, candidates)
    }
    fn charge(&mut self, demands: &[Demand], nodes: &[u32]) -> Result<Vec<Charge>, String> {
        lock(&self.0).hres.charge(demands, nodes)
    }
}
