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

use crate::contained::GresSlot;
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
/// The GRES slot of a shared set for one GRES name (`gpu` is the configured slot).
pub struct GresHandle(pub SharedSet, pub String);
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

impl GresHandle {
    fn with<R>(&self, f: impl FnOnce(&mut GresSlot) -> R) -> R {
        let mut set = lock(&self.0);
        let set = &mut *set;
        f(set.gres_by_name.get_mut(&self.1).unwrap_or(&mut set.gres))
    }
}

impl GresPolicy for GresHandle {
    fn validate(&mut self, nodes: &[GresNodeConfig]) -> Vec<Result<(), String>> {
        self.with(|slot| slot.validate(nodes))
    }
    fn pick(&mut self, requests: &[PickRequest]) -> Vec<Vec<u32>> {
        self.with(|slot| slot.pick(requests))
    }
    fn env(&mut self, alloc: &NodeDevices, step: bool) -> Vec<(String, String)> {
        self.with(|slot| slot.env(alloc, step))
    }
}

/// The engine's policies, all answered by `set`: one GRES policy per GRES name it holds.
pub fn engine_policies(set: &SharedSet) -> sluice_policy::Policies {
    let mut gres: Vec<(String, Box<dyn GresPolicy + Send>)> = vec![(
        "gpu".into(),
        Box::new(GresHandle(set.clone(), "gpu".into())),
    )];
    for name in lock(set).gres_by_name.keys() {
        gres.push((
            name.clone(),
            Box::new(GresHandle(set.clone(), name.clone())),
        ));
    }
    sluice_policy::Policies {
        priority: Box::new(PriorityHandle(set.clone())),
        selection: Box::new(SelectionHandle(set.clone())),
        hres: Some(Box::new(HresHandle(set.clone()))),
        gres,
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
